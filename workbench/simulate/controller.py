"""What the controller does (KafkaController and its state machines, 2.5.1 / 2.8.2 / 3.6.2).

Election is one multi: create the ephemeral /controller and bump /controller_epoch with its expected
version (KafkaZkClient.registerControllerAndIncrementControllerEpoch). Every later write is fenced: a
multi whose first op checks /controller_epoch's version (wrapRequestWithControllerEpochCheck). The
failover sequence is onControllerFailover's (LOG_TEMPLATES.md section 5); its duration grows with the
partition count, as reading every topic and partition state from ZooKeeper does.
"""

from __future__ import annotations

from workbench.kafka import topic_id as topic_ids
from workbench.simulate import broker as brokers
from workbench.simulate import wording
from workbench.simulate.cluster import Broker, Cluster, Partition, Topic
from workbench.simulate.zookeeper import Op, check, create, set_data


def fenced(c: Cluster, ops: list[Op]) -> None:
    assert c.controller is not None
    session = c.brokers[c.controller].session
    assert session is not None
    c.zk.multi(c.now, session, [check("/controller_epoch", c.epoch_zk_version), *ops])


def topic_json(c: Cluster, t: Topic, version: int = 3) -> bytes:
    """TopicZNode.encode: 2.8+ version 3 with topic_id; 2.5.1 version 2; an old tool's version 1."""
    partitions = {str(p.partition): p.replicas for p in t.partitions.values()}
    if version == 1:
        return c.zk_json({"version": 1, "partitions": partitions})
    doc: dict[str, object] = {"removing_replicas": {}, "partitions": partitions}
    if version >= 3 and t.topic_id is not None:
        doc["topic_id"] = t.topic_id
    doc.update(adding_replicas={}, version=version)
    return c.zk_json(doc)


def state_json(c: Cluster, p: Partition) -> bytes:
    """TopicPartitionStateZNode.encode."""
    doc = {"controller_epoch": p.controller_epoch, "leader": p.leader, "version": 1}
    return c.zk_json({**doc, "leader_epoch": p.leader_epoch, "isr": p.isr})


def elect(c: Cluster, b: Broker, reason: str) -> None:
    """KafkaController.elect then onControllerFailover."""
    assert b.session is not None
    started = c.now
    if not c.zk.exists("/controller_epoch"):
        c.zk.create(c.now, b.session, "/controller_epoch", b"0")
        c.epoch_zk_version = 0
        c.say(b.id, "controller.epoch_znode_created", path="/controller_epoch", epoch=0)
    epoch = c.controller_epoch + 1
    controller = c.zk_json({"version": 1, "brokerid": b.id, "timestamp": str(c.now)})
    ops = [create("/controller", controller, ephemeral=True)]
    c.zk.multi(
        c.now, b.session, [*ops, set_data("/controller_epoch", str(epoch).encode(), c.epoch_zk_version)]
    )
    c.controller, c.controller_epoch, c.epoch_zk_version = b.id, epoch, c.epoch_zk_version + 1
    c.say(b.id, "controller.elected", broker=b.id, epoch=epoch, epoch_zk_version=c.epoch_zk_version)
    n = len(c.partitions())
    for step in (
        "Registering handlers",
        "Deleting log dir event notifications",
        "Deleting isr change notifications",
    ):
        c.say(b.id, "controller.failover_step", pick=step)
        c.tick(c.jitter(1, 5))
    c.say(b.id, "controller.failover_step", pick="Initializing controller context")
    c.tick(c.jitter(10, 30) + n * c.rng.uniform(0.3, 0.6))  # reads every topic and partition state
    live = c.live()
    epochs = ", ".join(f"{x.id} -> {x.epoch}" for x in live)
    if wording.tag(c.version) != "2.5.1":
        c.say(b.id, "controller.broker_epochs", broker_epochs=f"HashMap({epochs})")
    c.say(b.id, "controller.live_brokers", brokers=",".join(str(x.id) for x in live))
    c.say(b.id, "controller.shutting_down_brokers", brokers="HashSet()")
    c.say(b.id, "controller.topics", topics=_set(sorted(c.topics)))
    mint_missing_topic_ids(c)
    for x in live:
        c.say(b.id, "controller.broker_connected", role="controller", controller=b.id, broker_node=x.node)
    c.say(b.id, "controller.failover_step", pick="Fetching topic deletions in progress")
    c.say(b.id, "controller.topics_to_delete", topics="")
    c.say(b.id, "controller.topics_ineligible_for_deletion", topics="")
    c.say(b.id, "controller.failover_step", pick="Initializing topic deletion manager")
    c.say(b.id, "deletion.manager_initialized", topics="Set()", ineligible_topics="Set()")
    c.say(b.id, "controller.failover_step", pick="Sending update metadata request")
    update_metadata(c, live)
    c.tick(c.jitter(2, 10) + n * c.rng.uniform(0.05, 0.1))
    start_state_machines(c, b)
    c.say(b.id, "controller.ready", epoch=epoch)
    c.say(b.id, "controller.failover_step", pick="Starting the controller scheduler")
    c.truth["controllers"].append(
        {
            "broker": b.id,
            "epoch": epoch,
            "elected_ms": started,
            "ready_ms": c.now,
            "duration_ms": c.now - started,
            "reason": reason,
        }
    )


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
        fenced(c, [set_data(f"/brokers/topics/{t.name}", topic_json(c, t))])
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
    LeaderAndIsr with the controller's (possibly new) topic id."""
    for text in ("Initializing replica state", "Triggering online replica state changes"):
        c.say(b.id, "state_machine.replica", pick=text)
    send_leader_and_isr(c, c.partitions())
    c.say(b.id, "state_machine.replica", pick="Triggering offline replica state changes")
    c.say(b.id, "state_machine.partition", pick="Initializing partition state")
    c.say(b.id, "state_machine.partition", pick="Triggering online partition state changes")


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
        errors = brokers.handle_leader_and_isr(c, x, c.controller, mine, correlation)
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
        brokers.handle_update_metadata(c, x, c.controller, n, correlation)


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
    update_metadata(c, c.live())
    send_leader_and_isr(c, [p for p in c.partitions() if b.id in p.replicas], only={b.id})


def controlled_shutdown(c: Cluster, b: Broker) -> None:
    """KafkaController.doControlledShutdown: leadership moves to another ISR member, and the broker
    leaves every ISR it was in (fenced writes of the partition states)."""
    assert c.controller is not None
    c.say(b.id, "controlled_shutdown.started")
    c.say(c.controller, "controlled_shutdown.handling", broker=b.id)
    moved: list[Partition] = []
    for p in c.partitions():
        if b.id not in p.isr or len(p.isr) == 1:
            continue
        p.isr = [x for x in p.isr if x != b.id]
        if p.leader == b.id:
            p.leader = p.isr[0]
        p.leader_epoch += 1
        p.zk_version += 1
        p.controller_epoch = c.controller_epoch
        fenced(c, [set_data(f"/brokers/topics/{p.topic}/partitions/{p.partition}/state", state_json(c, p))])
        moved.append(p)
    c.tick(c.jitter(20, 60) + len(moved))
    send_leader_and_isr(c, moved)
    if wording.tag(c.version) == "3.6.2":
        c.say(b.id, "controlled_shutdown.succeeded", ms=c.jitter(100, 400))
    else:
        c.say(b.id, "controlled_shutdown.succeeded")


def create_partitions(c: Cluster, t: Topic, new: list[Partition]) -> None:
    """onNewPartitionCreation: NewPartition -> OnlinePartition with the first live replica as leader and
    every live replica in the ISR; the state znodes are fenced creates."""
    assert c.controller is not None
    c.say(c.controller, "topic.new_partitions", partitions=",".join(p.tp for p in new))
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
        fenced(c, [*ops, create(path, None), create(f"{path}/state", state_json(c, p))])
        c.say(
            c.controller,
            "partition.state_change",
            role="controller",
            tp=p.tp,
            from_state="NewPartition",
            to_state="OnlinePartition",
            leader_and_isr=p.leader_and_isr(c.version),
        )
        t.partitions[p.partition] = p
    c.tick(c.jitter(5, 20) + len(new))
    send_leader_and_isr(c, new)
    update_metadata(c, c.live())


def alter_isr(c: Cluster, p: Partition, isr: list[int]) -> None:
    """The leader's AlterIsr (2.8+: Partition.sendAlterIsrRequest -> KafkaController.processAlterIsr, a
    fenced write of the partition state) or, at 2.5.1, the leader's own conditional ZooKeeper write."""
    assert c.controller is not None
    tag = wording.tag(c.version)
    p.isr, p.zk_version = isr, p.zk_version + 1
    path = f"/brokers/topics/{p.topic}/partitions/{p.partition}/state"
    shown = ",".join(map(str, isr))
    if tag == "2.5.1":
        leader = c.brokers[p.leader]
        assert leader.session is not None
        c.zk.set_data(c.now, leader.session, path, state_json(c, p), p.zk_version - 1)
        c.say(p.leader, "isr.updated", of=p.tp, isr=shown, zk_version=p.zk_version)
        return
    c.tick(c.jitter(2, 10))
    fenced(c, [set_data(path, state_json(c, p))])
    if tag == "3.6.2":
        c.say(c.controller, "isr.updated_by_controller", tp=p.tp, leader_and_isr=p.leader_and_isr(c.version))
        c.say(p.leader, "isr.updated", of=p.tp, isr=shown, under_min_isr=" ", zk_version=p.zk_version)
    else:
        c.say(c.controller, "isr.updated_by_controller", tp=p.tp, isr=shown, zk_version=p.zk_version)
        c.say(p.leader, "isr.updated", of=p.tp, isr=shown, zk_version=p.zk_version)


def preferred_election(c: Cluster) -> list[Partition]:
    """The auto-rebalance task (every leader.imbalance.check.interval.seconds = 300): partitions whose
    preferred replica (the first) is alive and in the ISR get it back as leader."""
    assert c.controller is not None
    c.say(c.controller, "leader_election.auto_rebalance", pick="Processing automatic")
    moved = []
    for p in c.partitions():
        preferred = p.replicas[0]
        if p.leader != preferred and preferred in p.isr and c.brokers[preferred].alive:
            p.leader, p.leader_epoch, p.zk_version = preferred, p.leader_epoch + 1, p.zk_version + 1
            p.controller_epoch = c.controller_epoch
            fenced(
                c, [set_data(f"/brokers/topics/{p.topic}/partitions/{p.partition}/state", state_json(c, p))]
            )
            moved.append(p)
    if moved:
        tps = ",".join(p.tp for p in moved)
        c.say(
            c.controller,
            "leader_election.started",
            election_type="PREFERRED",
            partitions=tps,
            trigger="AutoTriggered",
        )
        c.tick(c.jitter(5, 20))
        send_leader_and_isr(c, moved)
    return moved


def _set(items: list[str]) -> str:
    return f"HashSet({', '.join(items)})" if len(items) > 4 else f"Set({', '.join(items)})"
