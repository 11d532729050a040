"""Controller elections in the words of Kafka before 2.1, whose election line has no epoch: 0.10's
ZookeeperLeaderElector (in server.log, the epoch in controller.log) and 1.1's controller. Lines are
written as each version's log4j layout prints them (`[%d] %p %m (%c)%n`, config/log4j.properties) with the
text of the source lines the catalog cites."""

from __future__ import annotations

import json
from pathlib import Path

from pyspark.sql import SparkSession

from workbench.analysis import controller
from workbench.frames import open_bundle
from workbench.model import state
from workbench.model.history import sessions
from workbench.model.partition_log import logged_states
from workbench.together import answer

KC = "kafka.controller.KafkaController"
ELECTOR = "kafka.server.ZookeeperLeaderElector"
TDM = "kafka.controller.TopicDeletionManager"


def L(ts: str, text: str, logger: str = KC) -> str:
    """One INFO line as the log4j layout `[%d] %p %m (%c)%n` prints it."""
    return f"[{ts}] INFO {text} ({logger})"


# 0.10.2: broker 1 is elected at start-up, crashes; broker 2 takes over at epoch 2.
V0_10 = {
    (1, "server.log"): [
        L("2017-05-01 10:00:00,100", "1 successfully elected as leader", ELECTOR),
    ],
    (1, "controller.log"): [
        L("2017-05-01 10:00:00,102", "[Controller 1]: Broker 1 starting become controller state transition"),
        L("2017-05-01 10:00:00,108", "[Controller 1]: Initialized controller epoch to 0 and zk version 0"),
        L("2017-05-01 10:00:00,115", "[Controller 1]: Controller 1 incremented epoch to 1"),
        L(
            "2017-05-01 10:00:00,300",
            "[Controller 1]: Broker 1 is ready to serve as the new controller with epoch 1",
        ),
    ],
    (2, "server.log"): [
        L("2017-05-01 10:30:06,000", "2 successfully elected as leader", ELECTOR),
    ],
    (2, "controller.log"): [
        L("2017-05-01 10:30:06,003", "[Controller 2]: Broker 2 starting become controller state transition"),
        L("2017-05-01 10:30:06,010", "[Controller 2]: Initialized controller epoch to 1 and zk version 0"),
        L("2017-05-01 10:30:06,021", "[Controller 2]: Controller 2 incremented epoch to 2"),
        L(
            "2017-05-01 10:30:06,030",
            "[Topic Deletion Manager 2], Deletion of topic logs successfully completed",
            TDM,
        ),
        L(
            "2017-05-01 10:30:06,450",
            "[Controller 2]: Broker 2 is ready to serve as the new controller with epoch 2",
        ),
    ],
}

# 1.1.1: the election and its epoch both in controller.log, with the `[Controller id=N] ` ident.
V1_1 = {
    (3, "controller.log"): [
        L("2019-02-01 08:00:00,010", "[Controller id=3] 3 successfully elected as the controller"),
        L("2019-02-01 08:00:00,011", "[Controller id=3] Reading controller epoch from ZooKeeper"),
        L("2019-02-01 08:00:00,015", "[Controller id=3] Initialized controller epoch to 6 and zk version 5"),
        L("2019-02-01 08:00:00,016", "[Controller id=3] Incrementing controller epoch in ZooKeeper"),
        L("2019-02-01 08:00:00,030", "[Controller id=3] Epoch incremented to 7"),
        L("2019-02-01 08:00:00,031", "[Controller id=3] Registering handlers"),
        L("2019-02-01 08:00:00,400", "[Controller id=3] Ready to serve as the new controller with epoch 7"),
    ],
}


# 0.10.2: broker 1's session expires; zkclient says so, the health check re-registers the broker. Lines
# of ZkClient.java (zkclient-0.10:713), KafkaHealthcheck.scala (0.10.2.2:104) and ZkUtils.scala
# (0.10.2.2:397), and one Partition DEBUG line (Partition.scala 0.10.2.2:243) no curated template types.
ZKCLIENT = "org.I0Itec.zkclient.ZkClient"
V0_10_EXPIRY = {
    (1, "server.log"): [
        L("2017-05-01 10:29:50,000", "zookeeper state changed (Disconnected)", ZKCLIENT),
        L("2017-05-01 10:30:00,000", "zookeeper state changed (Expired)", ZKCLIENT),
        L(
            "2017-05-01 10:30:00,200",
            "re-registering broker info in ZK for broker 1",
            "kafka.server.KafkaHealthcheck$SessionExpireListener",
        ),
        L(
            "2017-05-01 10:30:00,300",
            "Registered broker 1 at path /brokers/ids/1 with addresses: "
            "EndPoint(b1,9092,ListenerName(PLAINTEXT),PLAINTEXT)",
            "kafka.utils.ZkUtils",
        ),
        L("2017-05-01 10:30:00,350", "zookeeper state changed (SyncConnected)", ZKCLIENT),
        "[2017-05-01 10:30:01,000] DEBUG Partition [orders,0] on broker 1: Recorded replica 2 log end "
        "offset (LEO) position 10 for partition [orders,0]. (kafka.cluster.Partition)",
    ],
}


# 0.10.2's state-change log (TRACE by default, config/log4j.properties 0.10.2.2): the controller, broker 2,
# takes broker 1's replica offline and makes itself leader; broker 1 refuses an old leader epoch and caches
# the new leader. Each message is a `("..." + "...").format(...)` or s"..." of the source the catalog cites.
SCL = "state.change.logger"


def T(ts: str, text: str, level: str = "TRACE") -> str:
    return f"[{ts}] {level} {text} ({SCL})"


V0_10_STATES = {
    (2, "state-change.log"): [
        T(
            "2017-05-01 10:30:06,100",
            "Controller 2 epoch 2 changed state of replica 1 for partition [orders,0] from OnlineReplica to "
            "OfflineReplica",
        ),
        T(
            "2017-05-01 10:30:06,120",
            "Controller 2 epoch 2 sending become-leader LeaderAndIsr request "
            "(Leader:2,ISR:2,LeaderEpoch:5,ControllerEpoch:2) to broker 2 for partition [orders,0]",
        ),
        T(
            "2017-05-01 10:30:06,121",
            "Controller 2 epoch 2 sending UpdateMetadata request "
            "(Leader:2,ISR:2,LeaderEpoch:5,ControllerEpoch:2) to brokers Set(1, 2) for partition orders-0",
        ),
        T(
            "2017-05-01 10:30:06,130",
            "Broker 2 received LeaderAndIsr request PartitionState(controllerEpoch=2, leader=2, "
            "leaderEpoch=5, isr=[2], zkVersion=9, replicas=[1, 2]) correlation id 7 from controller 2 "
            "epoch 2 for partition [orders,0]",
        ),
    ],
    (1, "state-change.log"): [
        T(
            "2017-05-01 10:30:40,000",
            "Broker 1 ignoring LeaderAndIsr request from controller 2 with correlation id 3 epoch 2 for "
            "partition [orders,0] since its associated leader epoch 5 is not higher than the current leader "
            "epoch 5",
            "WARN",
        ),
        T(
            "2017-05-01 10:30:40,010",
            "Broker 1 cached leader info (LeaderAndIsrInfo:(Leader:2,ISR:2,1,LeaderEpoch:5,"
            "ControllerEpoch:2),ReplicationFactor:2),AllReplicas:1,2) for partition orders-0 in response to "
            "UpdateMetadata request sent by controller 2 epoch 2 with correlation id 8",
        ),
    ],
}


def _bundle(tmp_path: Path, version: str, logs: dict[tuple[int, str], list[str]]) -> Path:
    root = tmp_path / version
    brokers = sorted({b for b, _ in logs})
    for (broker, name), lines in logs.items():
        folder = root / "brokers" / str(broker) / "logs"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text("\n".join(lines) + "\n")
    manifest = {"format": "kafka-evidence/1", "kafka_version": version, "brokers": brokers}
    (root / "manifest.json").write_text(json.dumps(manifest))
    return root


def test_0_10_elections_take_their_epoch_from_the_controller_log(spark: SparkSession, tmp_path: Path) -> None:
    bundle = open_bundle(_bundle(tmp_path, "0.10.2.2", V0_10), spark)
    lines = controller.elected_lines(bundle).orderBy("epoch").collect()
    assert [(r.broker_id, r.epoch) for r in lines] == [(1, 1), (2, 2)]
    assert all(r.file.endswith("server.log") and r.failover_file.endswith("controller.log") for r in lines)
    steps = controller.failover_steps(bundle).where("broker_id = 2").orderBy("ts").collect()
    assert steps[0].event == "controller.elected" and steps[-1].event == "controller.ready"
    assert "starting" in {s.step for s in steps}
    # the deletion manager's ident of those days, `[Topic Deletion Manager 2], `, is its context
    (done,) = bundle.cluster_events.where("event = 'deletion.completed'").collect()
    assert (done.topic, done.context) == ("logs", "Topic Deletion Manager 2")
    assert state.state_at(bundle).controller == 2  # from the logs: the bundle has no ZooKeeper


def test_1_1_elections_pair_the_election_with_its_epoch_line(spark: SparkSession, tmp_path: Path) -> None:
    bundle = open_bundle(_bundle(tmp_path, "1.1.1", V1_1), spark)
    (line,) = controller.elected_lines(bundle).collect()
    assert (line.broker_id, line.epoch, line.file) == (3, 7, line.failover_file)
    steps = controller.failover_steps(bundle).orderBy("ts", "line_no").collect()
    assert [s.step for s in steps if s.event == "controller.failover_step"] == [
        "reading_controller_epoch",
        "incrementing_controller_epoch",
        "registering_handlers",
    ]
    assert steps[-1].event == "controller.ready" and {s.epoch for s in steps} == {7}


def test_an_election_line_with_no_epoch_line_after_it_keeps_no_epoch(
    spark: SparkSession, tmp_path: Path
) -> None:
    """A log cut right after the election: the epoch is unknown, not guessed from another election."""
    cut = {(3, "controller.log"): V1_1[(3, "controller.log")][:1]}
    bundle = open_bundle(_bundle(tmp_path, "1.1.1", cut), spark)
    (line,) = controller.elected_lines(bundle).collect()
    assert line.broker_id == 3 and line.epoch is None


def test_0_10_session_expiry_in_zkclient_s_words(spark: SparkSession, tmp_path: Path) -> None:
    bundle = open_bundle(_bundle(tmp_path, "0.10.2.2", V0_10_EXPIRY), spark)
    rows = bundle.log_events.orderBy("line_no").collect()
    assert [r.event for r in rows[:2]] == ["zk.client_state_changed", "zk.client_session_expired"]
    assert rows[0].attrs["state"] == "Disconnected"
    reregistering, registered, connected, recorded = rows[2:]
    # no curated template: typed from Kafka's source, its value named after what the source prints
    assert (
        reregistering.event
        == "source.kafka_healthcheck_session_expire_listener.re_registering_broker_info_in_zk"
    )
    assert reregistering.attrs["broker_id"] == "1"
    assert (registered.event, registered.attrs["broker"]) == ("broker.registered", "1")
    assert connected.event == "zk.client_connected"
    assert recorded.event.startswith("source.partition.recorded_replica_log_end_offset")
    assert (recorded.topic, recorded.partition) == ("orders", 0), recorded.attrs
    (found,) = controller.expiry_findings(answer(sessions.lost(bundle)))
    assert found.subject == {"broker": 1, "cause": "session_expiry"}


def test_0_10_state_change_lines_give_the_partition_states_they_print(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Until 1.0 the state-change logger's messages begin with their controller or broker; they are
    typed as the later wordings are, and the states they print are read the same way."""
    bundle = open_bundle(_bundle(tmp_path, "0.10.2.2", V0_10_STATES), spark)
    events = bundle.log_events.orderBy("ts").collect()
    assert [e.event for e in events] == [
        "replica.state_change",
        "request.leader_and_isr.sent",
        "request.update_metadata.sent",
        "request.leader_and_isr.received",
        "request.leader_and_isr.ignored",
        "request.update_metadata.leader_cached",
    ]
    assert {(e.topic, e.partition) for e in events} == {("orders", 0)}
    assert events[4].attrs["reason"].startswith("since its associated leader epoch 5")
    states = logged_states(bundle).orderBy("ts").collect()
    assert [(s.event, s.broker_id, s.replica, s.leader, s.leader_epoch, s.isr) for s in states] == [
        ("replica.state_change", 2, 1, None, None, None),
        ("request.leader_and_isr.sent", 2, None, 2, 5, [2]),
        ("request.update_metadata.sent", 2, None, 2, 5, [2]),
        ("request.leader_and_isr.received", 2, None, 2, 5, [2]),
        ("request.update_metadata.leader_cached", 1, None, 2, 5, [2, 1]),
    ]
