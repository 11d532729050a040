"""Topic deletion as the controller runs it (KafkaController.processTopicDeletion and TopicDeletionManager,
2.5.1 / 2.8.2 / 3.6.2; LOG_TEMPLATES.md, TopicDeletionManager.scala).

An admin creates /admin/delete_topics/<t>. The controller queues the topic and resumes deletions: the
partitions go offline, each live replica goes OfflineReplica (StopReplica, ISR removal) then
ReplicaDeletionStarted (StopReplica with delete, the broker renames the log to `<tp>.<uuid>-delete`). Each
broker's response marks its replicas ReplicaDeletionSuccessful; when all are, the topic's znodes go. A
replica on a broker that is down is ReplicaDeletionIneligible and halts the topic's deletion until that
broker comes back (onBrokerStartup resumes it). A reassignment of a queued topic halts it too
(onPartitionReassignment) until one of its partitions completes; a topic not yet queued when its
deletion is asked for is not halted by a reassignment (the mark comes before the enqueue).
"""

from __future__ import annotations

from functools import partial

from workbench.simulate import replica_manager, wording
from workbench.simulate import requests as req
from workbench.simulate import state_machines as sm
from workbench.simulate.cluster import Cluster, Deletion, Partition
from workbench.simulate.zookeeper import delete

STARTED, SUCCESSFUL, INELIGIBLE = (
    "ReplicaDeletionStarted",
    "ReplicaDeletionSuccessful",
    "ReplicaDeletionIneligible",
)


def request(c: Cluster, topic: str) -> None:
    """kafka-topics.sh --delete (AdminZkClient.deleteTopic): the znode that asks the controller."""
    session = c.admin_session()
    c.zk.create(c.now, session, f"/admin/delete_topics/{topic}", None)
    if c.health.queued_rule:  # queued for deletion: left out of the counts, as the controller then did
        c.not_acting_ended(topic)
    c.zk.close_session(c.now + 5, session)
    c.truth["deletions"][topic] = {"requested_ms": c.now, "completed_ms": None, "halted": []}
    c.tick(c.jitter(10, 50))
    process_topic_deletion(c)


def process_topic_deletion(c: Cluster) -> None:
    """KafkaController.processTopicDeletion: the children of /admin/delete_topics are queued, or removed
    when delete.topic.enable=false."""
    assert c.controller is not None
    topics = c.zk.children("/admin/delete_topics")
    shown = ",".join(wording.set_order(topics, c.version))  # getTopicDeletions.toSet
    c.say(c.controller, "deletion.listener_fired", "DEBUG", topics=shown)
    if not c.delete_topic_enable:
        c.say(c.controller, "deletion.disabled", topics=wording.scala_set(topics, c.version))
        for t in topics:
            req.fenced(c, [delete(f"/admin/delete_topics/{t}")])
            c.truth["deletions"][t].update(refused_ms=c.now, reason="delete.topic.enable=false")
        return
    c.say(c.controller, "deletion.started", topics=shown)
    for t in topics:
        c.deleting.setdefault(t, Deletion(t))
    resume_deletions(c)


def resume_deletions(c: Cluster) -> None:
    """TopicDeletionManager.resumeDeletions: complete, retry or (re)start each queued topic."""
    assert c.controller is not None
    queued = list(c.deleting)
    if queued:
        shown = wording.set_order(wording.set_order(queued, c.version, mutable=True), c.version)
        c.say(c.controller, "deletion.handling", topics=",".join(shown))  # Set.empty ++ topicsToBeDeleted
    retry, eligible = [], []
    for t in queued:
        d = c.deleting[t]
        states = [
            d.replicas.get((p.partition, r)) for p in c.topics[t].partitions.values() for r in p.replicas
        ]
        if all(s == SUCCESSFUL for s in states):
            complete_delete_topic(c, t)
            c.say(c.controller, "deletion.completed", topic=t)
            continue
        if STARTED not in states and INELIGIBLE in states:
            retry.append(t)
        if not d.ineligible and STARTED not in states:
            c.say(c.controller, "deletion.topic_started", topic=t)
            eligible.append(t)
    if retry:
        retry_ineligible_replicas(c, retry)
    if eligible:
        on_topic_deletion(c, eligible)


def on_topic_deletion(c: Cluster, topics: list[str]) -> None:
    """onTopicDeletion: partitions go OfflinePartition then NonExistentPartition (TRACE lines), brokers
    are told by UpdateMetadata to drop them, then onPartitionDeletion."""
    assert c.controller is not None
    parts = [p for t in topics for p in c.topics[t].partitions.values()]
    for d in (c.deleting[t] for t in topics if not c.deleting[t].begun):
        d.begun = True
        c.health.deletion_begun(d.topic, c.now)
        c.not_acting_ended(d.topic)  # begun: left out of the counts, as the controller leaves it out
        if c.promoted == "TRACE":  # TRACE at every version (2.8.2 l.258): 2.5.1's log4j keeps it
            for p in c.topics[d.topic].partitions.values():
                sm.partition_state(c, p, "OnlinePartition", "OfflinePartition")
                sm.partition_state(c, p, "OfflinePartition", "NonExistentPartition")
    for x in c.live():
        replica_manager.handle_update_metadata(
            c, x, c.controller, 0, c.next_correlation_id(), deleted=len(parts)
        )
    on_partition_deletion(c, topics)


def on_partition_deletion(c: Cluster, topics: list[str]) -> None:
    """onPartitionDeletion: dead replicas -> ReplicaDeletionIneligible (the topic halts); live ones not yet
    deleted -> OfflineReplica -> ReplicaDeletionStarted, one StopReplica with delete per broker."""
    assert c.controller is not None
    halted = []
    started: dict[int, list[Partition]] = {}
    for t in topics:
        d = c.deleting[t]
        pairs = [(p, r) for p in c.topics[t].partitions.values() for r in p.replicas]
        dead = [(p, r) for p, r in pairs if not c.brokers[r].alive]
        if dead:
            c.say(c.controller, "deletion.dead_replicas", "DEBUG", replicas=replicas_text(dead), topic=t)
            halted.append(t)
        for p, r in dead:
            d.replicas[(p.partition, r)] = INELIGIBLE
        sm.replica_states(c, dead, "OfflineReplica", INELIGIBLE)
        for p, r in pairs:
            if c.brokers[r].alive and d.replicas.get((p.partition, r)) != SUCCESSFUL:
                started.setdefault(r, []).append(p)
    for r, parts in sorted(started.items()):
        sm.offline_replica(c, r, parts, deleting=True)
    for r, parts in sorted(started.items()):
        req.send_stop_replica(c, r, parts, delete=False)
    for r, parts in sorted(started.items()):
        for p in parts:
            c.deleting[p.topic].replicas[(p.partition, r)] = STARTED
        sm.replica_states(c, [(p, r) for p in parts], "OfflineReplica", STARTED)
        req.send_stop_replica(c, r, parts, delete=True, on_response=partial(stop_replica_response, c))
    if halted:
        mark_ineligible(c, halted, "offline replicas")


def stop_replica_response(c: Cluster, broker: int, stopped: list[Partition]) -> None:
    """processTopicDeletionStopReplicaResponseReceived, then completeReplicaDeletion."""
    if c.controller is None or not c.brokers[c.controller].alive:
        return
    mine = [p for p in stopped if p.topic in c.deleting]
    if not mine:
        return
    errors = ", ".join(f"{p.tp} -> NONE" for p in mine)
    c.say(
        c.controller,
        "deletion.stop_replica_response",
        "DEBUG",
        broker=broker,
        error="NONE",
        partition_errors=f"{'HashMap' if len(mine) > 4 else 'Map'}({errors})",
    )
    c.say(
        c.controller,
        "deletion.replica_succeeded",
        "DEBUG",
        replicas=replicas_text([(p, broker) for p in mine]),
    )
    for p in mine:
        c.deleting[p.topic].replicas[(p.partition, broker)] = SUCCESSFUL
    sm.replica_states(c, [(p, broker) for p in mine], STARTED, SUCCESSFUL)
    resume_deletions(c)


def fail_replica_deletion(c: Cluster, failed: list[tuple[Partition, int]]) -> None:
    """failReplicaDeletion: a broker hosting replicas of a queued topic went away."""
    assert c.controller is not None
    topics = sorted({p.topic for p, _ in failed})
    c.say(
        c.controller,
        "deletion.replica_failed",
        "DEBUG",
        replicas=replicas_text(failed),
        topics=wording.scala_set(topics, c.version),
    )
    for p, r in failed:  # one already deleted stays so (an invalid transition, logged and skipped)
        before = c.deleting[p.topic].replicas.get((p.partition, r), "OfflineReplica")
        if before != SUCCESSFUL:
            c.deleting[p.topic].replicas[(p.partition, r)] = INELIGIBLE
            sm.replica_states(c, [(p, r)], before, INELIGIBLE)
    mark_ineligible(c, topics, "replica deletion failure")
    resume_deletions(c)


def mark_ineligible(c: Cluster, topics: list[str], reason: str) -> None:
    """markTopicIneligibleForDeletion: logged for every queued topic named, halted already or not."""
    assert c.controller is not None
    halted = [t for t in topics if t in c.deleting]
    for t in halted:
        c.deleting[t].ineligible = True
        c.truth["deletions"][t]["halted"].append({"at_ms": c.now, "reason": reason})
    if halted:
        shown = ",".join(wording.set_order(halted, c.version, mutable=True))  # topicsToBeDeleted & topics
        c.say(c.controller, "deletion.halted", topics=shown, reason=reason)


def retry_ineligible_replicas(c: Cluster, topics: list[str]) -> None:
    """retryDeletionForIneligibleReplicas: ReplicaDeletionIneligible -> OfflineReplica."""
    assert c.controller is not None
    failed = [
        (p, r)
        for t in topics
        for p in c.topics[t].partitions.values()
        for r in p.replicas
        if c.deleting[t].replicas.get((p.partition, r)) == INELIGIBLE
    ]
    if c.version_at_least(2, 3):
        c.say(
            c.controller,
            "deletion.retrying",
            "DEBUG",
            topics=",".join(topics),
            replicas=replicas_text(failed),
        )
    else:  # markTopicForDeletionRetry, a topic at a time at INFO (TopicDeletionManager @1.1.1 l.223)
        for t in topics:
            mine = [(p, r) for p, r in failed if p.topic == t]
            c.say(c.controller, "deletion.retrying", topic=t, replicas=replicas_text(mine))
    for r in sorted({r for _, r in failed}):
        parts = [p for p, x in failed if x == r]
        for p in parts:
            del c.deleting[p.topic].replicas[(p.partition, r)]
        sm.offline_replica(c, r, parts, deleting=True, before=INELIGIBLE)
        if c.brokers[r].alive:
            req.send_stop_replica(c, r, parts, delete=False)


def resume_deletion_for_topics(c: Cluster, topics: list[str]) -> None:
    """resumeDeletionForTopics: the queued ones among `topics` are eligible again, and deletions resume."""
    queued = [t for t in dict.fromkeys(topics) if t in c.deleting]
    for t in queued:
        c.deleting[t].ineligible = False
    if queued:
        resume_deletions(c)


def resume_on_broker_startup(c: Cluster, broker: int) -> None:
    """onBrokerStartup: replicas of queued topics on the returning broker (OnlineReplica again, their
    LeaderAndIsr already sent) restart their deletion."""
    assert c.controller is not None
    pairs = [(p, broker) for t in c.deleting for p in c.topics[t].partitions.values() if broker in p.replicas]
    if not pairs:
        return
    c.say(
        c.controller,
        "deletion.restarted_on_broker_startup",
        replicas=replicas_text(pairs),
        topics=",".join(wording.set_order(list(c.deleting), c.version, mutable=True)),
        brokers=broker,
    )
    for p, r in pairs:  # back to OnlineReplica
        c.deleting[p.topic].replicas.pop((p.partition, r), None)
    resume_deletion_for_topics(c, [p.topic for p, _ in pairs])


def initial_deletions(c: Cluster) -> tuple[list[str], list[str]]:
    """fetchTopicDeletionsInProgress on failover: the queue is read back from ZooKeeper. Ineligible are
    every topic with a replica on a dead broker or a partition being reassigned, queued or not (so it
    is logged), and the queued ones among them are halted. Replica states start afresh: online, or
    ReplicaDeletionIneligible on a dead broker (ReplicaStateMachine.initializeReplicaState)."""
    queued = c.zk.children("/admin/delete_topics") if c.zk.exists("/admin/delete_topics") else []
    queued = [t for t in queued if t in c.topics]
    every = wording.set_order(c.zk.children("/brokers/topics"), c.version, c.version_at_least(2, 8))
    dead = {p.topic for p in c.partitions() if any(not c.brokers[r].alive for r in p.replicas)}
    offline = [t for t in every if t in dead]
    moving = {p.topic for p in c.partitions() if p.adding or p.removing}
    ineligible = offline + sorted(moving - set(offline))  # allTopics.filter(...) | partitionsBeingReassigned
    c.deleting = {}
    c.health.deletions_held([t for t in queued if t in ineligible], c.now)
    for t in queued:
        d = c.deleting[t] = Deletion(t, ineligible=t in ineligible)
        for p in c.topics[t].partitions.values():
            for r in p.replicas:
                if not c.brokers[r].alive:
                    d.replicas[(p.partition, r)] = INELIGIBLE
    return queued, ineligible


def complete_delete_topic(c: Cluster, topic: str) -> None:
    """completeDeleteTopic (KafkaZkClient.deleteTopic): the topic, its config and its deletion request go,
    each recursively and fenced."""
    pairs = [(p, r) for p in c.topics[topic].partitions.values() for r in p.replicas]
    sm.replica_states(c, pairs, SUCCESSFUL, "NonExistentReplica")
    for path in (f"/brokers/topics/{topic}", f"/config/topics/{topic}", f"/admin/delete_topics/{topic}"):
        if c.zk.exists(path):
            req.fenced_delete_recursive(c, path)
    for b in c.brokers.values():  # a reassignment's copies of it end with it
        for p in c.topics[topic].partitions.values():
            b.catching_up.pop(p.tp, None)
    for move in c.truth["reassignments"]:
        if move["topic"] == topic and move["completed_ms"] is None:
            move["abandoned_ms"] = c.now
    del c.topics[topic], c.deleting[topic]
    c.truth["deletions"][topic]["completed_ms"] = c.now


def replicas_text(pairs: list[tuple[Partition, int]]) -> str:
    return ",".join(req.replica_text(p, r) for p, r in pairs)
