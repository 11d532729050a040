"""Partition reassignment as the controller runs it (KafkaController.onPartitionReassignment, KIP-455,
2.5.1 / 2.8.2 / 3.6.2; the steps are the ones its comment names).

U: the topic znode gets RS = TRS + ORS, AR and RR. A1: the leader epoch is bumped and every replica of
RS is sent LeaderAndIsr; A2: the adding replicas start copying the leader's log (at the operator's
replication throttle). When every target replica is in the ISR: B2 RS = TRS in memory; B3 the leader
stays (epoch bump) or moves; B4/B5 the removed replicas go offline and are deleted; B6 the topic znode
gets RS = TRS with no AR/RR; B8 UpdateMetadata. The state lives in the topic znode, so a new controller
picks a reassignment up where the old one left it (initializePartitionReassignments), as does the
controller when a target broker returns (onBrokerStartup). While it runs, a topic queued for deletion is
ineligible; its completion resumes the deletion. A topic already queued is not reassigned.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from workbench.kafka.zkdata import ReassignPartitionsZNode, TopicPartition, encode
from workbench.kafka.znodes import REASSIGN_PARTITIONS
from workbench.simulate import deletion, wording
from workbench.simulate import requests as req
from workbench.simulate import state_machines as sm
from workbench.simulate.cluster import Cluster, Partition
from workbench.simulate.datadirs import AVG_RECORD_BYTES
from workbench.simulate.zookeeper import set_data

THROTTLE_BYTES_PER_S = 100_000  # kafka-reassign-partitions.sh --throttle, as operators often set it


def reassign(c: Cluster, moves: list[tuple[Partition, list[int]]]) -> None:
    """AlterPartitionReassignments (kafka-reassign-partitions.sh --execute --bootstrap-server; before 2.4
    the tool writes /admin/reassign_partitions); a topic queued for deletion is refused with
    UNKNOWN_TOPIC_OR_PARTITION (maybeTriggerPartitionReassignment)."""
    assert c.controller is not None
    old = not c.version_at_least(2, 4)
    if old:  # the tool writes /admin/reassign_partitions, one reassignment at a time; the controller reads it
        if c.zk.exists(REASSIGN_PARTITIONS):
            raise ValueError(f"Kafka {c.version} runs one reassignment at a time: one is in progress")
        session = c.admin_session()
        c.zk.create(c.now, session, REASSIGN_PARTITIONS, _znode(c, [(p, t) for p, t in moves]))
        c.zk.close_session(c.now + 5, session)
    for p, target in moves:
        if p.topic in c.deleting:  # an ERROR before 2.2 (KafkaController @2.1.1 l.579), then INFO
            level = "INFO" if c.version_at_least(2, 2) else "ERROR"
            c.say(c.controller, "reassignment.skipped_for_deletion", level, tp=p.tp)
            if old:
                remove_from_zk(c, p)
            continue
        c.say(c.controller, "reassignment.handling", tp=p.tp, replicas=",".join(map(str, target)))
        c.truth["reassignments"].append(
            {
                "topic": p.topic,
                "partition": p.partition,
                "from": list(p.replicas),
                "to": list(target),
                "started_ms": c.now,
                "started_by": c.controller,
                "completed_ms": None,
                "completed_by": None,
                "abandoned_ms": None,  # its topic was deleted first
            }
        )
        on_partition_reassignment(c, p, target)


def on_partition_reassignment(c: Cluster, p: Partition, target: list[int], resumed: bool = False) -> None:
    """`resumed`: by a controller that found it under way (its adding replicas are no longer
    NonExistentReplica, so their NewReplica transition fails and is logged)."""
    assert c.controller is not None
    deletion.mark_ineligible(c, [p.topic], "topic reassignment in progress")
    wanted = ",".join(map(str, target))
    if not set(target) <= set(p.isr):  # before 2.4, ahead of AR = OAR + RAR
        c.say(c.controller, "reassignment.not_caught_up", replicas=wanted, tp=p.tp)
    origin = [r for r in p.replicas if r not in p.adding]
    replicas = [*target, *(r for r in origin if r not in target)]
    adding = [r for r in target if r not in origin]
    removing = [r for r in origin if r not in target]
    if (replicas, adding, removing) != (p.replicas, p.adding, p.removing):  # updateCurrentReassignment
        before = p.assignment
        p.replicas, p.adding, p.removing = replicas, adding, removing
        c.say(
            c.controller,
            "reassignment.updating",
            "DEBUG",
            tp=p.tp,
            from_assignment=before,
            to_assignment=p.assignment,
        )
        write_assignment(c, p)
    if set(target) <= set(p.isr):
        complete(c, p)
        return
    bump_leader_epoch(c, p)  # A1
    for r in adding:  # A2: NewReplica; the broker creates the log and copies it from the leader
        if resumed:
            sm.replica_state_failed(c, p, r, "OnlineReplica" if c.brokers[r].alive else "OfflineReplica")
        else:
            sm.replica_states(c, [(p, r)], "NonExistentReplica", "NewReplica")
        leader = c.brokers.get(p.leader)  # none (-1): nothing to copy from until one is elected
        copied = c.replica(leader, p).log_end_offset * AVG_RECORD_BYTES if leader else 0
        c.brokers[r].catching_up.setdefault(p.tp, c.now + 1_000 * copied // THROTTLE_BYTES_PER_S + 5_000)
    c.say(c.controller, "reassignment.waiting", replicas=wanted, tp=p.tp)  # before 2.4


def maybe_complete(c: Cluster, p: Partition) -> None:
    """processPartitionReassignmentIsrChange (2.8+: after an AlterIsr): every target replica is in sync."""
    target = [r for r in p.replicas if r not in p.removing]
    if (p.adding or p.removing) and set(target) <= set(p.isr) and c.controller is not None:
        shown = f"List({', '.join(map(str, target))})"  # Seq.toString (a List under Scala 2.13)
        n = len(target)
        c.say(c.controller, "reassignment.caught_up", replicas=shown, tp=p.tp, caught_up=n, count=n)
        complete(c, p)


def complete(c: Cluster, p: Partition) -> None:
    """Phase B of onPartitionReassignment."""
    assert c.controller is not None
    removing = list(p.removing)
    sm.replica_states(c, [(p, r) for r in p.adding], "NewReplica", "OnlineReplica")  # B1
    p.replicas, p.adding, p.removing = [r for r in p.replicas if r not in removing], [], []  # B2
    shown = ",".join(map(str, p.replicas))
    alive = p.leader in c.brokers and c.brokers[p.leader].alive
    if p.leader not in p.replicas:  # B3 (moveReassignedPartitionLeaderIfRequired)
        detail = f"is not in the new list of replicas {shown}. Re-electing leader"
    else:
        detail = f"is already in the new list of replicas {shown} " + (
            "and is alive" if alive else "but is dead"
        )
    c.say(c.controller, "reassignment.leader", leader=p.leader, tp=p.tp, detail=detail)
    if p.leader in p.replicas and alive:
        bump_leader_epoch(c, p)
    else:
        sm.elect(c, p, next(r for r in p.replicas if r in p.isr and c.brokers[r].alive), "OnlinePartition")
        req.send_leader_and_isr(c, [p])
    for r in removing:  # B4, B5
        sm.offline_replica(c, r, [p])
        for before, after in (
            ("OfflineReplica", "ReplicaDeletionStarted"),
            ("ReplicaDeletionStarted", "ReplicaDeletionSuccessful"),
            ("ReplicaDeletionSuccessful", "NonExistentReplica"),
        ):
            sm.replica_states(c, [(p, r)], before, after)
        if c.brokers[r].alive:
            req.send_stop_replica(c, r, [p], delete=False)
            req.send_stop_replica(c, r, [p], delete=True)
    write_assignment(c, p)  # B6
    req.update_metadata(c, c.live())  # B8
    if not c.version_at_least(2, 4):
        remove_from_zk(c, p)
    for move in c.truth["reassignments"]:
        if (move["topic"], move["partition"], move["completed_ms"]) == (p.topic, p.partition, None):
            move.update(completed_ms=c.now, completed_by=c.controller)
    deletion.resume_deletion_for_topics(c, [p.topic])  # even while its other partitions still move


def write_assignment(c: Cluster, p: Partition) -> None:
    """updateReplicaAssignmentForPartition: the whole topic's assignment, fenced."""
    assert c.controller is not None
    t = c.topics[p.topic]
    req.fenced(c, [set_data(f"/brokers/topics/{p.topic}", req.topic_json(c, t, reassigned=True))])
    shown = ",".join(map(str, p.replicas))
    c.say(c.controller, "reassignment.assignment_updated", tp=p.tp, assignment=p.assignment, replicas=shown)


def bump_leader_epoch(c: Cluster, p: Partition) -> None:
    """updateLeaderEpochAndSendRequest: a new leader epoch, and LeaderAndIsr to every replica."""
    assert c.controller is not None
    p.leader_epoch += 1
    req.write_state(c, p)
    req.send_leader_and_isr(c, [p])
    c.say(
        c.controller,
        "reassignment.leader_and_isr_sent",
        c.promoted,
        role="controller",
        leader_and_isr=sm.leader_isr_and_controller_epoch(c, p),
        assignment=p.assignment,
        replicas=",".join(map(str, p.replicas)),
        leader=p.leader,
        tp=p.tp,
    )


def remove_from_zk(c: Cluster, p: Partition) -> None:
    """removePartitionFromReassignedPartitions (before 2.4): the rest of /admin/reassign_partitions written
    back, or the znode deleted with the last (@1.1.1 l.866-882; 2.0-2.3 name a Set of partitions)."""
    assert c.controller is not None
    session = c.brokers[c.controller].session
    assert session is not None
    c.say(
        c.controller, "reassignment.removed_from_zk", tp=p.tp, partitions=wording.scala_set([p.tp], c.version)
    )
    data, _ = c.zk.get(REASSIGN_PARTITIONS) if c.zk.exists(REASSIGN_PARTITIONS) else (None, None)
    rest = [
        m
        for m in json.loads(data or b"{}").get("partitions", [])
        if (m["topic"], m["partition"]) != (p.topic, p.partition)
    ]
    if rest:
        moves = [(c.topics[m["topic"]].partitions[m["partition"]], m["replicas"]) for m in rest]
        c.zk.set_data(c.now, session, REASSIGN_PARTITIONS, _znode(c, moves))
    elif data is not None:
        c.say(c.controller, "reassignment.zk_path_deleted", path=REASSIGN_PARTITIONS)
        c.zk.delete(c.now, session, REASSIGN_PARTITIONS)


def _znode(c: Cluster, moves: list[tuple[Partition, list[int]]]) -> bytes:
    znode = ReassignPartitionsZNode(
        1, tuple((TopicPartition(p.topic, p.partition), tuple(t)) for p, t in moves)
    )
    return encode(znode, c.version)


def resume(c: Cluster, targeting: Callable[[list[int]], bool] = lambda target: True) -> None:
    """maybeResumeReassignments: on failover (initializePartitionReassignments) every partition whose
    topic znode holds AR/RR carries on towards its target; on a broker's return, those whose target
    holds it (`targeting`)."""
    for p in [p for p in c.partitions() if p.adding or p.removing]:
        target = [r for r in p.replicas if r not in p.removing]
        if targeting(target):
            on_partition_reassignment(c, p, target, resumed=True)
