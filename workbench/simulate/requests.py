"""What the controller writes and sends: fenced ZooKeeper writes (KafkaZkClient with the controller
epoch check) and the requests of ControllerBrokerRequestBatch, each handled by the broker (broker.py).

Every controller write is a multi whose first op checks /controller_epoch's version
(KafkaZkClient.wrapRequestWithControllerEpochCheck), so a controller that lost its epoch cannot write.
"""

from __future__ import annotations

from collections.abc import Callable

from workbench.kafka.jvm_order import controller_assignment_order, default_scala, topic_assignment_order
from workbench.kafka.zkdata import PartitionStateZNode, TopicZNode, encode_partition_state, encode_topic
from workbench.simulate import replica_manager, wording
from workbench.simulate.cluster import Broker, Cluster, Partition, Topic
from workbench.simulate.zookeeper import Op, check, delete, set_data


def fenced(c: Cluster, ops: list[Op]) -> None:
    """The controller's writes, fenced from 2.2 by a check of /controller_epoch's zkVersion in one multi
    (KafkaZkClient's expectedControllerEpochZkVersion, none @2.1.1); before, each a transaction of its own."""
    assert c.controller is not None
    session = c.brokers[c.controller].session
    assert session is not None
    if not c.version_at_least(2, 2):
        for o in ops:
            c.zk.single(c.now, session, o)
        return
    c.zk.multi(c.now, session, [check("/controller_epoch", c.epoch_zk_version), *ops])


def fenced_delete_recursive(c: Cluster, path: str) -> None:
    """KafkaZkClient.deleteRecursive with the controller's epoch check: children first, one fenced
    delete a znode."""
    for child in c.zk.children(path):
        fenced_delete_recursive(c, f"{path}/{child}")
    fenced(c, [delete(path)])


def write_state(c: Cluster, p: Partition) -> None:
    """KafkaZkClient.updateLeaderAndIsr: a fenced conditional write of the partition state; the new
    state's zkVersion is the znode's next version and its controller epoch the writer's."""
    p.zk_version += 1
    p.controller_epoch = c.controller_epoch
    path = f"/brokers/topics/{p.topic}/partitions/{p.partition}/state"
    fenced(c, [set_data(path, state_json(c, p), p.zk_version - 1)])
    for b in c.brokers:
        if b != p.leader:  # another leader, or none: the window ends (offline, if none)
            c.not_acting_ended(p.topic, p.partition, b)


def topic_version(c: Cluster) -> int:
    """The topic znode version this Kafka writes (kafka/zkdata.py encode_topic)."""
    return 3 if c.version_at_least(2, 8) else 2 if c.version_at_least(2, 4) else 1


def topic_json(c: Cluster, t: Topic, version: int | None = None, reassigned: bool = False) -> bytes:
    """TopicZNode.encode in the JVM's map orders (kafka/zkdata.py), in this Kafka's version unless given:
    2.8+ version 3 with topic_id, 2.4+ version 2, older version 1; an old tool's version 1 (on a 2.4+
    cluster) has only the partitions, in the order it wrote them. A reassignment's rewrite iterates the
    controller's maps, anything else a new assignment's."""
    version = topic_version(c) if version is None else version
    parts = sorted(t.partitions.values(), key=lambda p: p.partition)
    if version == 1 and c.version_at_least(2, 4):
        return c.zk_json({"version": 1, "partitions": {str(p.partition): p.replicas for p in parts}})
    scala = default_scala(c.version)
    numbers = [p.partition for p in parts]
    if reassigned:
        order = controller_assignment_order(t.name, numbers, c.version, scala)
    else:
        order = topic_assignment_order(t.name, numbers, scala)
    kept = version >= 2  # before 2.4 (KIP-455) a reassignment shows only as the union of old and new
    z = TopicZNode(
        version,
        {n: tuple(t.partitions[n].replicas) for n in order},
        {n: tuple(t.partitions[n].adding) for n in order if kept and t.partitions[n].adding},
        {n: tuple(t.partitions[n].removing) for n in order if kept and t.partitions[n].removing},
        t.topic_id if version >= 3 else None,
    )
    return encode_topic(z, c.version, scala)


def state_json(c: Cluster, p: Partition) -> bytes:
    """TopicPartitionStateZNode.encode (kafka/zkdata.py)."""
    z = PartitionStateZNode(1, p.leader, p.leader_epoch, p.controller_epoch, tuple(p.isr))
    return encode_partition_state(z, c.version)


def send_leader_and_isr(c: Cluster, parts: list[Partition], only: set[int] | None = None) -> None:
    """ControllerBrokerRequestBatch: one LeaderAndIsr per broker for the partitions it hosts."""
    assert c.controller is not None
    for x in c.live():
        if only is not None and x.id not in only:
            continue
        mine = [
            (p, c.topics[p.topic].topic_id if wording.tag(c.version) != "2.5.1" else None)
            for p in parts
            if x.id in p.replicas
        ]
        if not mine:
            continue
        leaders = sum(p.leader == x.id for p, _ in mine)
        c.say(
            c.controller,
            "request.leader_and_isr.sent",
            role="controller",
            broker=x.id,
            become_leader=leaders,
            become_follower=len(mine) - leaders,
        )
        correlation = c.next_correlation_id()
        c.tick(c.jitter(1, 5))
        errors = replica_manager.handle_leader_and_isr(c, x, c.controller, mine, correlation)
        for tp in sorted(errors):
            c.truth["topic_id_mismatches"].append(_mismatch(c, x, tp))


def _mismatch(c: Cluster, x: Broker, tp: str) -> dict[str, object]:
    topic, _, partition = tp.rpartition("-")
    return {
        "topic": topic,
        "partition": int(partition),
        "broker": x.id,
        "disk_topic_id": x.log_topic_ids.get(tp),
        "zk_topic_id": c.topics[topic].topic_id,
        "at_ms": c.now,
    }


def update_metadata(c: Cluster, to: list[Broker]) -> None:
    assert c.controller is not None
    n = len(c.partitions())
    for x in to:
        correlation = c.next_correlation_id()
        replica_manager.handle_update_metadata(c, x, c.controller, n, correlation)


def send_stop_replica(
    c: Cluster,
    broker: int,
    parts: list[Partition],
    delete: bool,
    on_response: Callable[[int, list[Partition]], None] | None = None,
) -> None:
    """One StopReplica request (ControllerBrokerRequestBatch.sendStopReplicaRequests). The controller's
    RequestSendThread for the broker delivers it a moment later and hands the response to the
    controller as an event; while the broker is down but still registered, the thread warns and retries
    (RequestSendThread.doWork, brokerReady) until the controller learns the broker is gone."""
    sender = c.controller
    assert sender is not None
    if wording.tag(c.version) == "2.5.1":
        infos = ",".join(
            f"StopReplicaRequestInfo({replica_text(p, broker)},{str(delete).lower()})" for p in parts
        )
        c.say(
            sender,
            "request.stop_replica.sent",
            "DEBUG",
            delete=str(delete).lower(),
            broker=broker,
            partitions=infos,
        )
    else:
        c.say(sender, "request.stop_replica.sent", role="controller", count=len(parts), broker=broker)
    target = c.brokers[broker]

    def deliver() -> None:
        if c.controller != sender or not c.brokers[sender].alive:
            return  # the sending controller is gone, and its send threads with it
        if not target.alive:
            if c.zk.exists(f"/brokers/ids/{broker}"):
                c.say(
                    sender,
                    "controller.broker_unreachable",
                    "WARN",
                    controller=sender,
                    broker_node=target.node,
                    thrown=f"java.io.IOException: Connection to {target.node} failed.",
                )
                # the analysis reads that line as proof the broker is gone (`outage.silence`)
                c.health.went_silent(broker, c.now)
                c.after(c.jitter(2_000, 4_000), deliver)
            return
        stopped = replica_manager.handle_stop_replica(
            c, target, sender, parts, delete, c.next_correlation_id()
        )
        if on_response is not None:
            c.after(c.jitter(1, 5), lambda: on_response(broker, stopped))

    # One RequestSendThread a broker: its requests arrive in the order they were sent.
    due = max(c.now + c.jitter(1, 10), c.channel_due.get(broker, 0) + 1)
    c.channel_due[broker] = due
    c.after(due - c.now, deliver)


def replica_text(p: Partition, broker: int) -> str:
    """PartitionAndReplica.toString (KafkaController.scala 2.8.2 l.2576)."""
    return f"[Topic={p.topic},Partition={p.partition},Replica={broker}]"
