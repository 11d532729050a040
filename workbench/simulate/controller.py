"""What the controller does (KafkaController and its state machines, 2.5.1 / 2.8.2 / 3.6.2).

Election is one multi: create the ephemeral /controller and bump /controller_epoch with its expected
version (KafkaZkClient.registerControllerAndIncrementControllerEpoch). Every later write is fenced: a
multi whose first op checks /controller_epoch's version (wrapRequestWithControllerEpochCheck). The
failover sequence is onControllerFailover's (LOG_TEMPLATES.md section 5); its duration grows with the
partition count, as reading every topic and partition state from ZooKeeper does.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from workbench.kafka import behaviour, defaults
from workbench.kafka import topic_id as topic_ids
from workbench.kafka.defaults import LEADER_IMBALANCE_PER_BROKER_PERCENTAGE
from workbench.kafka.zkdata import ControllerZNode, encode_controller, encode_controller_epoch
from workbench.simulate import deletion, reassignment, wording
from workbench.simulate import requests as req
from workbench.simulate import state_machines as sm
from workbench.simulate.cluster import Broker, Cluster, Partition, Topic
from workbench.simulate.zookeeper import create, set_data

IMBALANCE_CHECK_INTERVAL_MS = defaults.LEADER_IMBALANCE_CHECK_INTERVAL_SECONDS * 1000


def elect(c: Cluster, b: Broker, reason: str, meanwhile: Callable[[], object] | None = None) -> None:
    """KafkaController.elect then onControllerFailover; `meanwhile`: what happens in ZooKeeper while it
    reads the cluster's state, before it reads /brokers/ids (a broker registering then is taken as it is
    found: `new_controller_takes_registrations_as_it_finds_them`)."""
    assert b.session is not None
    started = c.now
    if not c.version_at_least(2, 1):
        register_then_increment(c, b)
    else:
        if not c.zk.exists("/controller_epoch"):
            c.zk.create(c.now, b.session, "/controller_epoch", encode_controller_epoch(0))
            c.epoch_zk_version = 0
            c.say(b.id, "controller.epoch_znode_created", path="/controller_epoch", epoch=0)
        epoch = c.controller_epoch + 1
        kraft = (2, -1) if c.version_at_least(3, 4) else (1, None)  # 3.4+: kraftControllerEpoch -1
        controller = encode_controller(ControllerZNode(kraft[0], b.id, c.now, kraft[1]), c.version)
        ops = [create("/controller", controller, ephemeral=True)]
        epoch_data = encode_controller_epoch(epoch)
        c.zk.multi(c.now, b.session, [*ops, set_data("/controller_epoch", epoch_data, c.epoch_zk_version)])
        c.controller, c.controller_epoch, c.epoch_zk_version = b.id, epoch, c.epoch_zk_version + 1
        c.say(b.id, "controller.elected", broker=b.id, epoch=epoch, epoch_zk_version=c.epoch_zk_version)
    epoch = c.controller_epoch
    n = len(c.partitions())
    for step in (
        "Registering handlers",
        "Deleting log dir event notifications",
        "Deleting isr change notifications",
    ):
        c.say(b.id, "controller.failover_step", pick=step)
        c.tick(c.jitter(1, 5))
    c.say(b.id, "controller.failover_step", pick="Initializing controller context")
    if meanwhile is not None:  # before its first read, of /brokers/ids
        meanwhile()
    c.tick(c.jitter(10, 30) + n * c.rng.uniform(0.3, 0.6))  # reads every topic and partition state
    live = c.live()
    epochs = ", ".join(f"{x.id} -> {x.epoch}" for x in live)
    if wording.tag(c.version) != "2.5.1":
        c.say(b.id, "controller.broker_epochs", broker_epochs=f"HashMap({epochs})")
    c.say(b.id, "controller.live_brokers", brokers=",".join(str(x.id) for x in live))
    c.say(b.id, "controller.shutting_down_brokers", brokers=wording.scala_set([], c.version, mutable=True))
    mutable = c.version_at_least(2, 8)  # allTopics: ZooKeeper's children `.toSet`, a mutable.Set from 2.8
    topics = wording.scala_set(c.zk.children("/brokers/topics"), c.version, mutable)
    c.say(b.id, "controller.topics", topics=topics)
    mint_missing_topic_ids(c)
    for x in live:
        c.say(b.id, "controller.broker_connected", role="controller", controller=b.id, broker_node=x.node)
    c.say(b.id, "controller.failover_step", pick="Fetching topic deletions in progress")
    queued, ineligible = deletion.initial_deletions(c)
    # fetchTopicDeletionsInProgress: ZooKeeper's children `.toSet`; ineligible filters allTopics
    c.say(b.id, "controller.topics_to_delete", topics=",".join(wording.set_order(queued, c.version)))
    shown = ",".join(wording.set_order(ineligible, c.version, mutable))
    c.say(b.id, "controller.topics_ineligible_for_deletion", topics=shown)
    c.say(b.id, "controller.failover_step", pick="Initializing topic deletion manager")
    initial, halted = wording.scala_set(queued, c.version), wording.scala_set(ineligible, c.version, mutable)
    c.say(b.id, "deletion.manager_initialized", topics=initial, ineligible_topics=halted)
    c.say(b.id, "controller.failover_step", pick="Sending update metadata request")
    req.update_metadata(c, live)
    c.tick(c.jitter(2, 10) + n * c.rng.uniform(0.05, 0.1))
    start_state_machines(c, b)
    c.say(b.id, "controller.ready", epoch=epoch)
    ready = c.now
    reassignment.resume(c)
    if c.deleting:
        deletion.resume_deletions(c)  # topicDeletionManager.tryTopicDeletion
    # logged once the work it found is resumed (onControllerFailover 0.11.0.2:275-280, 2.5.1:248-254)
    c.say(b.id, "controller.failover_step", pick="Starting the controller scheduler")
    schedule_auto_rebalance(c, epoch, 5_000)
    c.truth["controllers"].append(
        {
            "broker": b.id,
            "epoch": epoch,
            "elected_ms": started,
            "ready_ms": ready,
            "duration_ms": ready - started,
            "reason": reason,
        }
    )


def register_then_increment(c: Cluster, b: Broker) -> None:
    """Before 2.1 an election is two transactions: the ephemeral /controller (checkedEphemeralCreate),
    then onControllerFailover reads /controller_epoch and bumps it, or creates it at 1 for the first
    controller (KafkaController @1.1.1 l.1203, l.217-219, l.612-641; @2.0.1 the same)."""
    assert b.session is not None
    controller = encode_controller(ControllerZNode(1, b.id, c.now), c.version)
    c.say(b.id, "zk.ephemeral_creating", path="/controller", secure="false")
    c.zk.create(c.now, b.session, "/controller", controller, ephemeral=True)
    c.say(b.id, "zk.ephemeral_created", path="/controller", result="OK")
    c.say(b.id, "controller.elected", broker=b.id)
    c.controller = b.id
    c.tick(c.jitter(1, 5))
    c.say(b.id, "controller.failover_step", pick="Reading controller epoch from ZooKeeper")
    exists = c.zk.exists("/controller_epoch")
    if exists:
        c.say(b.id, "controller.epoch_read", epoch=c.controller_epoch, epoch_zk_version=c.epoch_zk_version)
    c.say(b.id, "controller.failover_step", pick="Incrementing controller epoch in ZooKeeper")
    if exists:
        epoch = c.controller_epoch + 1
        c.zk.set_data(
            c.now, b.session, "/controller_epoch", encode_controller_epoch(epoch), c.epoch_zk_version
        )
        c.controller_epoch, c.epoch_zk_version = epoch, c.epoch_zk_version + 1
    else:  # the first controller: InitialControllerEpoch 1
        c.zk.create(c.now, b.session, "/controller_epoch", encode_controller_epoch(1))
        c.controller_epoch, c.epoch_zk_version = 1, 0
    c.say(b.id, "controller.epoch_incremented", epoch=c.controller_epoch)


def mint_missing_topic_ids(
    c: Cluster, topics: list[str] | None = None, by: str = "controller failover"
) -> None:
    """initializeControllerContext, and processTopicChange for new topics (2.8+): a topic whose znode has
    no topic_id gets a new one, written back to its znode. Brokers holding an old id in partition.metadata
    now disagree with ZooKeeper."""
    if wording.tag(c.version) == "2.5.1":
        return
    for t in [c.topics[n] for n in (topics if topics is not None else sorted(c.topics))]:
        data, _ = c.zk.get(f"/brokers/topics/{t.name}")
        if b'"topic_id"' in (data or b""):
            continue
        old = t.topic_id
        t.topic_id = topic_ids.random_uuid(c.rng, c.version)
        # setTopicIds writes the controller's assignment: a new topic's is the znode's (t has none yet)
        assigned = json.loads(data or b"{}").get("partitions", {})
        shown = (
            t
            if t.partitions
            else Topic(
                t.name, t.topic_id, {int(n): Partition(t.name, int(n), r) for n, r in assigned.items()}
            )
        )
        req.fenced(c, [set_data(f"/brokers/topics/{t.name}", req.topic_json(c, shown))])
        c.truth["topic_id_changes"].append(
            {
                "topic": t.name,
                "from": old,
                "to": t.topic_id,
                "at_ms": c.now,
                "zxid": c.zk.zxid,
                "by": f"controller {c.controller}: {by}",
            }
        )


def start_state_machines(c: Cluster, b: Broker) -> None:
    """ReplicaStateMachine.startup and PartitionStateMachine.startup: every online replica is sent a
    LeaderAndIsr with the controller's (possibly new) topic id, those of topics queued for deletion too
    (a broker recreates a log it had deleted); offline partitions of those topics are not elected."""
    for text in ("Initializing replica state", "Triggering online replica state changes"):
        c.say(b.id, "state_machine.replica", pick=text)
    online = [(p, r) for p in c.partitions() for r in p.replicas if c.brokers[r].alive]
    sm.replica_states(c, online, "OnlineReplica", "OnlineReplica")
    req.send_leader_and_isr(c, c.partitions())
    kept = [p for p in c.partitions() if p.topic not in c.deleting]
    c.say(b.id, "state_machine.replica", pick="Triggering offline replica state changes")
    for dead in sorted(x.id for x in c.brokers.values() if not x.alive):  # all ReplicaDeletionIneligible
        hosted = [p for p in kept if dead in p.replicas]
        if hosted:
            sm.offline_replica(c, dead, hosted, before=deletion.INELIGIBLE)
        doomed = [p for p in c.partitions() if p.topic in c.deleting and dead in p.replicas]
        if doomed:
            sm.offline_replica(c, dead, doomed, deleting=True, before=deletion.INELIGIBLE)
        for p in doomed:
            del c.deleting[p.topic].replicas[(p.partition, dead)]
    c.say(b.id, "state_machine.partition", pick="Initializing partition state")
    c.say(b.id, "state_machine.partition", pick="Triggering online partition state changes")
    sm.elect_offline_leaders(c, [p for p in kept if p.leader < 0 or not c.brokers[p.leader].alive])


def on_broker_startup(c: Cluster, b: Broker) -> None:
    """processBrokerChange, then onBrokerStartup: metadata to everyone, LeaderAndIsr to the new broker."""
    assert c.controller is not None
    live = ",".join(str(x.id) for x in c.live())
    c.say(
        c.controller,
        "controller.broker_change",
        added_brokers=b.id,
        deleted_brokers="",
        bounced_brokers="",
        brokers=live,
    )
    c.say(
        c.controller,
        "controller.broker_connected",
        role="controller",
        controller=c.controller,
        broker_node=b.node,
    )
    c.say(c.controller, "controller.broker_startup", brokers=b.id)
    req.update_metadata(c, c.live())
    hosted = [p for p in c.partitions() if b.id in p.replicas]  # all OnlineReplica: LeaderAndIsr
    for before in ("OfflineReplica", deletion.INELIGIBLE):
        pairs = [(p, b.id) for p in hosted if _deletion_state(c, p, b.id) == before]
        sm.replica_states(c, pairs, before, "OnlineReplica")
    req.send_leader_and_isr(c, hosted, only={b.id})
    offline = [p for p in hosted if p.leader < 0 and p.topic not in c.deleting]
    sm.elect_offline_leaders(c, offline)  # an offline partition comes back
    reassignment.resume(c, lambda target: b.id in target)
    deletion.resume_on_broker_startup(c, b.id)


def _deletion_state(c: Cluster, p: Partition, replica: int) -> str:
    d = c.deleting.get(p.topic)
    return d.replicas.get((p.partition, replica), "OfflineReplica") if d else "OfflineReplica"


def on_broker_failure(c: Cluster, dead: list[Broker]) -> None:
    """processBrokerChange for registrations that went, then onBrokerFailure -> onReplicasBecomeOffline:
    partitions they led elect a new leader from the live ISR, their replicas go OfflineReplica (out of
    every ISR), and the deletion of a topic with replicas on them fails (halts)."""
    assert c.controller is not None
    gone = {x.id for x in dead}
    ids = ",".join(str(x) for x in sorted(gone))
    live = ",".join(str(x.id) for x in c.live())
    c.say(
        c.controller,
        "controller.broker_change",
        added_brokers="",
        deleted_brokers=ids,
        bounced_brokers="",
        brokers=live,
    )
    c.say(c.controller, "controller.broker_failure", brokers=ids)
    kept = [p for p in c.partitions() if p.topic not in c.deleting]
    led = [p for p in kept if p.leader in gone]
    sm.elect_offline_leaders(c, led)
    for x in sorted(gone):
        sm.offline_replica(c, x, [p for p in kept if x in p.replicas])
    failed = [
        (p, x) for t in c.deleting for p in c.topics[t].partitions.values() for x in p.replicas if x in gone
    ]
    if failed:
        deletion.fail_replica_deletion(c, failed)
    if not led:
        req.update_metadata(c, c.live())


def controlled_shutdown(c: Cluster, b: Broker) -> None:
    """KafkaController.doControlledShutdown (2.8.2 l.1308): partitions it leads elect the first assigned
    replica left in the ISR (ControlledShutdownPartitionLeaderElectionStrategy; none: it keeps them);
    partitions it follows get StopReplica and its replica goes OfflineReplica (out of the ISR). Topics
    queued for deletion and single-replica partitions are left alone."""
    assert c.controller is not None
    c.say(b.id, "controlled_shutdown.started")
    c.say(c.controller, "controlled_shutdown.handling", broker=b.id)
    acted = [p for p in c.partitions() if b.id in p.replicas and len(p.replicas) > 1]
    acted = [p for p in acted if p.topic not in c.deleting]
    followed = [p for p in acted if p.leader != b.id]
    moved: list[Partition] = []
    for p in (p for p in acted if p.leader == b.id):
        isr = [x for x in p.isr if x != b.id]
        leader = next((r for r in p.replicas if r in isr and c.brokers[r].alive), None)
        if leader is None:
            sm.election_failed(c, p, "OnlinePartition", "ControlledShutdownPartitionLeaderElectionStrategy")
            continue
        p.isr = isr
        sm.elect(c, p, leader, "OnlinePartition")
        moved.append(p)
    c.tick(c.jitter(20, 60) + len(moved))
    req.send_leader_and_isr(c, moved)
    if followed:  # StopReplica, and again from the OfflineReplica transition's own batch
        req.send_stop_replica(c, b.id, followed, delete=False)
        sm.offline_replica(c, b.id, followed)
        req.send_stop_replica(c, b.id, followed, delete=False)
    if wording.tag(c.version) == "3.6.2":
        c.say(b.id, "controlled_shutdown.succeeded", ms=c.jitter(100, 400))
    else:
        c.say(b.id, "controlled_shutdown.succeeded")


def create_partitions(c: Cluster, t: Topic, new: list[Partition]) -> None:
    """onNewPartitionCreation: the partitions go NewPartition and their replicas NewReplica; then
    OnlinePartition with the first live replica as leader and every live replica in the ISR (the state
    znodes are fenced creates), LeaderAndIsr, and the replicas go OnlineReplica."""
    assert c.controller is not None
    c.say(c.controller, "topic.new_partitions", partitions=",".join(p.tp for p in new))
    for p in new:
        replicas = ",".join(map(str, p.replicas))
        sm.partition_state(c, p, "NonExistentPartition", "NewPartition", replicas=replicas)
    pairs = [(p, r) for p in new for r in p.replicas]
    sm.replica_states(c, pairs, "NonExistentReplica", "NewReplica")
    for p in new:
        live = [r for r in p.replicas if c.brokers[r].alive]
        p.leader, p.isr, p.leader_epoch, p.zk_version = live[0], live, 0, 0
        p.controller_epoch = c.controller_epoch
        path = f"/brokers/topics/{p.topic}/partitions/{p.partition}"
        ops = (
            []
            if c.zk.exists(f"/brokers/topics/{p.topic}/partitions")
            else [create(f"/brokers/topics/{p.topic}/partitions", None)]
        )
        req.fenced(c, [*ops, create(path, None), create(f"{path}/state", req.state_json(c, p))])
        leader_and_isr = p.leader_and_isr(c.version)
        sm.partition_state(c, p, "NewPartition", "OnlinePartition", leader_and_isr=leader_and_isr)
        t.partitions[p.partition] = p
    c.tick(c.jitter(5, 20) + len(new))
    req.send_leader_and_isr(c, new)
    sm.replica_states(c, pairs, "NewReplica", "OnlineReplica")
    req.update_metadata(c, c.live())


def alter_isr(c: Cluster, p: Partition, isr: list[int]) -> bool:
    """The leader's AlterIsr (2.8+: Partition.sendAlterIsrRequest -> KafkaController.processAlterIsr, a
    fenced write of the partition state) or, at 2.5.1, the leader's own conditional ZooKeeper write."""
    assert c.controller is not None
    tag = wording.tag(c.version)
    if tag != "2.5.1" and not c.brokers[c.controller].alive:
        return False  # AlterIsr finds no controller; the leader tries again later
    p.isr, p.zk_version = isr, p.zk_version + 1
    path = f"/brokers/topics/{p.topic}/partitions/{p.partition}/state"
    shown = ",".join(map(str, isr))
    if tag == "2.5.1":
        leader = c.brokers[p.leader]
        assert leader.session is not None
        c.zk.set_data(c.now, leader.session, path, req.state_json(c, p), p.zk_version - 1)
        c.say(p.leader, "isr.updated", of=p.tp, isr=shown, zk_version=p.zk_version)
        return True
    c.tick(c.jitter(2, 10))
    req.fenced(c, [set_data(path, req.state_json(c, p))])
    if tag == "3.6.2":
        c.say(c.controller, "isr.updated_by_controller", tp=p.tp, leader_and_isr=p.leader_and_isr(c.version))
        c.say(p.leader, "isr.updated", of=p.tp, isr=shown, under_min_isr=" ", zk_version=p.zk_version)
    else:
        c.say(c.controller, "isr.updated_by_controller", tp=p.tp, isr=shown, zk_version=p.zk_version)
        c.say(p.leader, "isr.updated", of=p.tp, isr=shown, zk_version=p.zk_version)
    return True


def preferred_election(c: Cluster) -> list[Partition]:
    """processAutoPreferredReplicaLeaderElection, checkAndTriggerAutoLeaderRebalance: per broker, the
    partitions whose preferred (first) replica it is but whose leader is not, over those it is preferred
    for (topics queued for deletion left out); above leader.imbalance.per.broker.percentage (10), those
    whose preferred replica is alive and in the ISR get it back as leader, unless (before 3.4) a
    reassignment runs."""
    assert c.controller is not None
    c.say(c.controller, "leader_election.auto_rebalance", pick="Processing automatic")
    kept = [p for p in c.partitions() if p.topic not in c.deleting]
    reassigning = any(p.adding or p.removing for p in c.partitions()) and behaviour.holds(
        "auto_rebalance_waits_for_reassignments", c.version
    )
    moved = []
    for b in sorted(c.brokers):
        preferred = [p for p in kept if p.replicas[0] == b]
        not_led = [p for p in preferred if p.leader != b]
        if (
            reassigning
            or not preferred
            or len(not_led) / len(preferred) <= LEADER_IMBALANCE_PER_BROKER_PERCENTAGE / 100
        ):
            continue
        moved += [p for p in not_led if c.brokers[b].alive and b in p.isr]
    if moved:  # onReplicaElection: the line, the elections (fenced writes), then LeaderAndIsr
        tps = ",".join(p.tp for p in moved)
        c.say(
            c.controller,
            "leader_election.started",
            election_type="PREFERRED",
            partitions=tps,
            trigger="AutoTriggered",
        )
        for p in moved:
            sm.elect(c, p, p.replicas[0], "OnlinePartition")
        c.tick(c.jitter(5, 20))
        req.send_leader_and_isr(c, moved)
    return moved


def schedule_auto_rebalance(c: Cluster, epoch: int, delay_ms: int) -> None:
    """scheduleAutoLeaderRebalanceTask: 5 s after becoming controller, then every
    leader.imbalance.check.interval.seconds (300), while this controller lasts."""

    def check() -> None:
        if c.controller_epoch != epoch or c.controller is None or not c.brokers[c.controller].alive:
            return
        preferred_election(c)
        schedule_auto_rebalance(c, epoch, IMBALANCE_CHECK_INTERVAL_MS)

    if c.auto_leader_rebalance:
        c.after(delay_ms, check)
