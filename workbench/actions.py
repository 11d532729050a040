"""What to do next about each kind of finding, root causes first: the action items the postmortem lists
and triage ends with, from one list (`next_steps`). Each key is a kind some analysis emits
(tests/test_actions.py). The metrics named are Kafka's own: ActiveControllerCount, OfflinePartitionsCount,
TopicsIneligibleToDeleteCount (KafkaController.scala 2.5.1:122-130, 2.8.2:135-143, 3.6.2:73-81),
UnderReplicatedPartitions (ReplicaManager.scala 2.8.2:286-288), IsrShrinksPerSec (ReplicaManager.scala
2.5.1:249, 2.8.2:294, 3.6.2:342), the produce requests' TotalTimeMs (kafka.network:type=RequestMetrics,
request=Produce: RequestChannel.scala 2.8.2:453-479), the producers' record-error-rate
(SenderMetricsRegistry.java 2.8.2:107, 3.6.2:106), the produce requests expired waiting for their acks
(ExpiresPerSec, kafka.server:type=DelayedProduceMetrics: DelayedProduce.scala 2.8.2:131-142, 3.6.2:139-145),
ZooKeeperExpiresPerSec
(ZooKeeperClient.scala 2.8.2:95-109, kafka.server:type=SessionExpireListener: KafkaZkClient.scala
2.8.2:1943-1944), OfflineLogDirectoryCount (LogManager.scala 2.8.2:123)."""

from __future__ import annotations

from workbench.analysis.causes import grouped, links
from workbench.analysis.findings import Finding
from workbench.hazards import hazards

REPAIR = (
    "Repair the stale replicas with the plan (`workbench remediate`), one broker at a time, the "
    "maintenance-window steps in a window."
)
ACTIONS = {
    "topic_id.root_cause": "Find and stop every pre-2.8 tool that writes topic znodes through ZooKeeper "
    "(`kafka-topics --zookeeper`, old admin clients): use `--bootstrap-server`.",
    "topic_id.mismatch": REPAIR,
    "topic_id.refused": REPAIR,  # a bundle without ZooKeeper's state: the plan is made from the refusals
    "partition.no_acting_leader": "Alert on ERROR lines of `state.change.logger` (a refused LeaderAndIsr): "
    "no broker metric counts a partition whose leader refuses to lead.",
    "partition.offline": "Alert on `OfflinePartitionsCount` > 0 on the active controller.",
    "partition.under_replicated": "Alert on `UnderReplicatedPartitions` > 0 for more than "
    "`replica.lag.time.max.ms`, per broker.",
    "isr.flapping": "Find why the follower keeps falling behind its leader (its disk, network or GC "
    "pauses; `num.replica.fetchers` and `replica.fetch.max.bytes` against the produce rate) before raising "
    "`replica.lag.time.max.ms`; alert on `IsrShrinksPerSec` (kafka.server:type=ReplicaManager) > 0 on the "
    "leaders.",
    # the wait ends at the drop, at most 1.5 times replica.lag.time.max.ms after the follower last caught up
    # (acks_all_answered_at_the_high_watermark: the ISR is checked every half of it)
    "isr.high_watermark_held": "Find why the follower stops keeping up (its disk, network or GC pauses; "
    "`num.replica.fetchers` against the produce rate): while it is in the ISR, every acks=all request to its "
    "partitions waits for it, up to 1.5 times `replica.lag.time.max.ms`, which is why raising that setting "
    "makes the waits longer; alert on the produce requests that time out waiting for acks (`ExpiresPerSec`, "
    "kafka.server:type=DelayedProduceMetrics) and on `IsrShrinksPerSec`.",
    "partition.leader_paused": "Find what stopped the broker's JVM (its GC log for long pauses, the host's "
    "CPU steal and disk stalls): a pause shorter than its ZooKeeper session timeout moves no leader, so no "
    "Kafka gauge counts the partitions it left unserved; alert on the produce requests' latency "
    "(`TotalTimeMs`, kafka.network:type=RequestMetrics,request=Produce) instead.",
    "controller.flapping": "Find what stops the controller (GC pauses, a ZooKeeper session timeout too short "
    "for them, the network to ZooKeeper); raise `zookeeper.session.timeout.ms` only once the cause is known.",
    "controller.failover": "Alert on the sum of `ActiveControllerCount` over the brokers != 1.",
    "broker.session_expired": "Find why the broker stopped answering ZooKeeper before its session timed "
    "out (its GC log and the host's for a pause, the network to ZooKeeper, its last lines for a crash); "
    "raise `zookeeper.session.timeout.ms` only once that cause is known; alert on "
    "`ZooKeeperExpiresPerSec` (kafka.server:type=SessionExpireListener) > 0 per broker.",
    "log_dir.offline": "Replace or repair the failed disk, then restart the broker; alert on "
    "`OfflineLogDirectoryCount` > 0 per broker (kafka.log:type=LogManager).",
    "deletion.marked": "Look again at `/admin/delete_topics` and the controller's log: a marker that stays "
    "is a deletion that does not finish (a replica's broker down, a reassignment, or a storage error).",
    "deletion.stuck": "Bring back (or replace under the same broker.id) the broker holding the deletion up; "
    "alert on `TopicsIneligibleToDeleteCount` > 0 on the controller.",
    "deletion.unfinished": "Check `/admin/delete_topics` in ZooKeeper for the topic: still there, bring back "
    "(or replace under the same broker.id) the broker its replica deletions failed on; alert on "
    "`TopicsIneligibleToDeleteCount` > 0 on the controller.",
    "broker.controlled_shutdown": "Before the next restart, bring the partitions it leads a second live "
    "in-sync replica: the controller leaves it every partition with none (and those with a single replica "
    "or queued for deletion; KafkaController.doControlledShutdown 2.8.2:1334-1356); more "
    "`controlled.shutdown.max.retries` do not move those.",
    "data_loss.unclean_election": "Decide whether `unclean.leader.election.enable` should stay on for these "
    "topics; tell the owners of the records lost.",
    "data_loss.truncation": "Tell the owners of the records lost; produce with acks=all and "
    "min.insync.replicas >= 2.",
    "leader.imbalance": "Run a preferred leader election (`kafka-leader-election --election-type "
    "preferred`) once the cluster is healthy, or check why `auto.leader.rebalance.enable` did not.",
    "reassignment.stuck": "Bring back the brokers the reassignment waits for, or cancel it.",
    "deletion.lingering_dir": "Remove the lingering `-delete` dirs once their topics are confirmed gone.",
}

# While replicas hold a stale topic id, a preferred election hands leadership to a replica that refuses
# it: ZooKeeper is written first and the controller ignores the broker's error (fact
# controller_acts_only_on_storage_errors; KafkaController 2.8.2:1369-1397, 3.6.2:1421-1449).
NO_ELECTION = (
    "Do not run a preferred leader election (`kafka-leader-election`) while replicas hold a stale topic "
    "id: ZooKeeper names the preferred replica leader first, the replica refuses the LeaderAndIsr, the "
    "controller ignores that error, and the tool reports success while nobody leads the partition. Repair "
    "the stale replicas first (`workbench remediate`); then a preferred election, or the controller's "
    "automatic rebalance where enabled, moves leaders back."
)

# A deletion a reassignment holds, with no broker of its replicas down: bringing a broker back is not the
# way out (reassignment_blocks_deletion, reassignment_of_deleted_topic_refused, halted_deletion_resumes)
REASSIGNMENT_HOLDS = (
    "Let the reassignment that holds the deletion complete: it cannot be cancelled while the topic is "
    "queued for deletion, and the deletion resumes once each new replica has caught up and joined the ISR, "
    "or when a broker holding one of its replicas registers again. Where a new replica does not join, find "
    "why (its broker lagging, or refusing the partition) before restarting that broker; alert on "
    "`TopicsIneligibleToDeleteCount` > 0 on the controller."
)


def action(f: Finding, stale: bool = False, cause: Finding | None = None) -> str | None:
    """What `f` asks for, from its kind and, where its cause changes the way out, its subject or the
    finding that caused it (`causes.links`); None: no step. `stale`: replicas hold a stale topic id (no
    preferred election then). A finding that holds its broker's start back says what to put right first,
    as the repair plan's scripts check it (`hazards`)."""
    for h in hazards([f]):
        said = h.said(kind=False)
        return said[0].upper() + said[1:] + ALERT.get(f.kind, "")
    if f.kind == "isr.high_watermark_held" and cause is not None:
        return HELD_BY_CAUSE
    if f.kind == "leader.imbalance" and stale:
        return NO_ELECTION
    if f.kind == "deletion.stuck" and f.subject.get("reassigning") and not f.subject.get("brokers_down"):
        return REASSIGNMENT_HOLDS
    if f.kind == "partition.offline" and f.subject.get("offline_ms") == 0:
        return UNCOUNTED
    return ACTIONS.get(f.kind)


# A follower that held producers back for a cause triage found (it refused its topic's id): that cause's
# step is the way out, not a search of its disk or its GC pauses
HELD_BY_CAUSE = (
    "Alert on the produce requests that time out waiting for their acks (`ExpiresPerSec`, "
    "kafka.server:type=DelayedProduceMetrics) and on `IsrShrinksPerSec`: the follower held acks=all "
    "producers back for the cause its finding is linked to, whose own step removes it."
)


# Offline partitions Kafka's own count never held (`offline_ms` 0: the event that learned their leader was
# gone elected their new leaders, offline_count_set_after_each_event): an alert on it would not have fired
UNCOUNTED = (
    "Alert where these partitions' outage shows, since `OfflinePartitionsCount` never counted them (their "
    "finding says why): on a broker missing from the cluster (its metrics scrape failing) and on the "
    "producers' `record-error-rate` (producer-metrics); find why their leader stopped (its finding)."
)


# What to alert on, after what a finding holding its broker's start back asks first
ALERT = {
    "log_dir.offline": " Alert on `OfflineLogDirectoryCount` > 0 per broker (kafka.log:type=LogManager)."
}


# A finding's severity as the priority of what it asks for
PRIORITY = {"critical": "P1", "warning": "P2", "info": "P3"}


def next_steps(found: list[Finding]) -> list[tuple[Finding, str]]:
    """One step per action the findings ask for, with the first finding that asks it: the root causes'
    first (`causes.grouped`), then the most severe; never a preferred election while replicas hold a
    stale topic id."""
    stale = any(f.kind in ("topic_id.mismatch", "topic_id.refused") for f in found)
    roots = {g.root.kind for g in grouped(found)[0]}
    caused = {id(x.effect): x.cause for x in links(found)}
    said: dict[str, tuple[Finding, str]] = {}  # one item per action, the first finding's
    for f in sorted(found, key=lambda f: (f.kind not in roots, Finding.sort_key(f))):
        asked = action(f, stale, caused.get(id(f)))
        if asked is not None:
            said.setdefault(asked, (f, asked))
    return list(said.values())


def action_items(found: list[Finding]) -> list[str]:
    """The next steps' actions, in order."""
    return [asked for _, asked in next_steps(found)]


def priority(f: Finding) -> str:
    """The priority of what a finding asks for, from its severity."""
    return PRIORITY.get(str(f.severity), "P3")


def action_markdown(found: list[Finding]) -> str:
    """The action items as a postmortem lists them, whole (a table of text is never cut): the root
    causes' first, a priority from the finding's severity, and an owner for the team to fill in."""
    rows = [f"| {priority(f)} | {action} | |" for f, action in next_steps(found)]
    return "\n".join(["| priority | action | owner |", "|---|---|---|", *rows]) if rows else "None."
