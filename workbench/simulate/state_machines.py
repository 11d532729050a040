"""The controller's partition and replica state machines, for the transitions a failure or a deletion
drives (ZkPartitionStateMachine and ZkReplicaStateMachine, 2.5.1 / 2.8.2 / 3.6.2).

Every partition-state write is fenced (controller.fenced). What is logged follows the version: 2.8 and
later print the ISR removals and elections at INFO; 2.5.1 prints the same transitions at TRACE, which its
log4j config keeps (KAFKA-8470).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from workbench.simulate import requests as req
from workbench.simulate import wording
from workbench.simulate.cluster import Cluster, Partition

OFFLINE_STRATEGY = "OfflinePartitionLeaderElectionStrategy(false)"  # unclean.leader.election.enable=false


def elect_offline_leaders(c: Cluster, parts: list[Partition]) -> list[Partition]:
    """OfflinePartition -> OnlinePartition (PartitionLeaderElectionAlgorithms.offlinePartitionLeaderElection):
    the first assigned replica that is alive and in the ISR leads, and the ISR keeps only live members.
    With no live ISR member the partition stays offline, unless unclean.leader.election.enable: then the
    first live assigned replica leads with an ISR of itself alone (Election.leaderForOffline, 2.5.1 l.41,
    2.8.2 l.40). Returns the elected."""
    assert c.controller is not None
    elected = []
    for p in parts:
        live_isr = [r for r in p.isr if c.brokers[r].alive]
        leader = next((r for r in p.replicas if r in live_isr), None)
        unclean = leader is None and c.unclean_leader_election
        if unclean:
            leader = next((r for r in p.replicas if c.brokers[r].alive), None)
            live_isr = [leader] if leader is not None else []
        if leader is None:
            election_failed(c, p, "OfflinePartition", OFFLINE_STRATEGY)
            continue
        before = list(p.isr)
        p.isr = live_isr
        elect(c, p, leader, "OfflinePartition")
        if unclean:
            state_path = f"/brokers/topics/{p.topic}/partitions/{p.partition}/state"
            c.truth["unclean_elections"].append(
                dict(
                    topic=p.topic,
                    partition=p.partition,
                    leader=leader,
                    isr_before=before,
                    leader_epoch=p.leader_epoch,
                    zxid=c.zk.get(state_path)[1].mzxid,
                    at_ms=c.now,
                )
            )
        elected.append(p)
    if elected:
        req.send_leader_and_isr(c, elected)
    return elected


def election_failed(c: Cluster, p: Partition, before: str, strategy: str) -> None:
    """PartitionStateMachine.logFailedStateChange after electLeaderForPartitions found no leader."""
    assert c.controller is not None
    c.say(
        c.controller,
        "partition.state_change_failed",
        "ERROR",
        role="controller",
        controller=c.controller,
        controller_epoch=c.controller_epoch,
        tp=p.tp,
        from_state=before,
        to_state="OnlinePartition",
        thrown=f"kafka.common.StateChangeFailedException: Failed to elect leader for partition "
        f"{p.tp} under strategy {strategy}",
    )


def elect(c: Cluster, p: Partition, leader: int, before: str) -> None:
    """A new leader and leader epoch for a partition, written fenced, and the -> OnlinePartition line."""
    assert c.controller is not None
    p.leader, p.leader_epoch = leader, p.leader_epoch + 1
    req.write_state(c, p)
    partition_state(c, p, before, "OnlinePartition", leader_and_isr=p.leader_and_isr(c.version))


def partition_state(c: Cluster, p: Partition, before: str, after: str, **fields: Any) -> None:
    """PartitionStateMachine's "Changed partition" line: INFO from 2.6 on (KAFKA-8470), TRACE at 2.5.1."""
    assert c.controller is not None
    c.say(
        c.controller,
        "partition.state_change",
        c.promoted,
        role="controller",
        tp=p.tp,
        from_state=before,
        to_state=after,
        **fields,
    )


def replica_states(c: Cluster, pairs: Iterable[tuple[Partition, int]], before: str, after: str) -> None:
    """ReplicaStateMachine.logSuccessfulTransition, a TRACE line at every version: only 2.5.1's log4j
    config keeps state.change.logger at TRACE, so only its state-change.log has them."""
    if c.promoted != "TRACE":
        return
    assert c.controller is not None
    for p, r in pairs:
        c.say(
            c.controller,
            "replica.state_change",
            "TRACE",
            role="controller",
            replica=r,
            tp=p.tp,
            from_state=before,
            to_state=after,
        )


def replica_state_failed(c: Cluster, p: Partition, replica: int, before: str) -> None:
    """ReplicaStateMachine.logInvalidTransition for -> NewReplica (valid only from NonExistentReplica):
    an ERROR at every version, as when a new controller resumes a reassignment."""
    assert c.controller is not None
    c.say(
        c.controller,
        "replica.state_change_failed",
        "ERROR",
        role="controller",
        controller=c.controller,
        controller_epoch=c.controller_epoch,
        replica=replica,
        tp=p.tp,
        from_state=before,
        to_state="NewReplica",
        thrown=f"java.lang.IllegalStateException: Replica {req.replica_text(p, replica)} should be in the "
        f"NonExistentReplica states before moving to NewReplica state. Instead it is in {before} state",
    )


def offline_replica(
    c: Cluster, replica: int, parts: list[Partition], deleting: bool = False, before: str = "OnlineReplica"
) -> None:
    """-> OfflineReplica (ReplicaStateMachine.doHandleStateChanges): the replica leaves each ISR it is in;
    a leaving leader leaves the partition without one (-1), and a last ISR member stays in the ISR. The
    other replicas get the state, changed or not (doRemoveReplicasFromIsr returns both), unless the topic
    is being deleted. (The StopReplica without delete to a live replica's broker is the caller's.)"""
    assert c.controller is not None
    for p in parts:
        if replica in p.isr:
            p.leader = -1 if p.leader == replica else p.leader
            p.isr = p.isr if len(p.isr) == 1 else [r for r in p.isr if r != replica]
            p.leader_epoch += 1
            req.write_state(c, p)
        if c.promoted == "TRACE":
            replica_states(c, [(p, replica)], before, "OfflineReplica")
        else:
            c.say(
                c.controller,
                "replica.removed_from_isr",
                role="controller",
                tp=p.tp,
                leader_and_isr=leader_isr_and_controller_epoch(c, p),
                replica=replica,
                to_state="OfflineReplica",
            )
    if parts and not deleting:
        others = {r for p in parts for r in p.replicas if r != replica}
        req.send_leader_and_isr(c, parts, only=others)


def leader_isr_and_controller_epoch(c: Cluster, p: Partition) -> str:
    """LeaderIsrAndControllerEpoch.toString (KafkaController.scala 2.8.2 l.2580, 3.6.2 l.2766)."""
    recovery = ",LeaderRecoveryState:RECOVERED" if wording.tag(c.version) == "3.6.2" else ""
    isr = ",".join(map(str, p.isr))
    head = f"(Leader:{p.leader},ISR:{isr}{recovery},LeaderEpoch:{p.leader_epoch}"
    return f"{head},ZkVersion:{p.zk_version},ControllerEpoch:{c.controller_epoch})"
