"""Simulated incidents: each bundle loads without a bad record, and its logs, ZooKeeper state and history,
and data dirs tell the story truth.json tells (which comes from the model, not from the loaders)."""

from __future__ import annotations

import hashlib
import json
import re
from datetime import timezone
from pathlib import Path
from typing import Any

import pytest
from conftest import shared
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from workbench.frames import Bundle, open_bundle
from workbench.simulate import samples, wording
from workbench.simulate.logs import log4j_time
from workbench.simulate.run import START_MS, simulate
from workbench.simulate.scenarios import Scale
from workbench.simulate.zookeeper import SimZooKeeper

SMALL = Scale(brokers=3, topics=2, partitions=3, hours=0.5)
FOUR_BROKERS = Scale(brokers=4, topics=2, partitions=3, hours=0.5)


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, dict[str, Any]]]:
    out = {}
    for scenario, version in (
        ("healthy", "2.8.2"),
        ("topicid-mismatch", "2.8.2"),
        ("topicid-mismatch", "3.6.2"),
        ("deletion-stuck", "2.8.2"),
        ("deletion-complete", "3.6.2"),
        ("deletion-complete", "2.5.1"),
        ("controller-failover", "2.8.2"),
        ("controller-failover", "1.1.1"),
        ("deletion-stuck", "1.1.1"),
    ):
        path = tmp_path_factory.mktemp("sim") / f"{scenario}-{version}"
        scale = FOUR_BROKERS if scenario == "controller-failover" else SMALL
        out[f"{scenario}@{version}"] = (
            path,
            simulate(scenario, path, seed=7, kafka_version=version, scale=scale),
        )
    return out


def opened(spark: SparkSession, path: Path) -> Bundle:
    """The module's simulated bundle, shared by the tests that read it."""
    return shared(spark, path)


EVERY = [
    "healthy@2.8.2",
    "topicid-mismatch@2.8.2",
    "topicid-mismatch@3.6.2",
    "deletion-stuck@2.8.2",
    "deletion-complete@3.6.2",
    "deletion-complete@2.5.1",
    "controller-failover@2.8.2",
    "controller-failover@1.1.1",
    "deletion-stuck@1.1.1",
]


@pytest.mark.parametrize("name", EVERY)
def test_loads_without_bad_records_and_every_kafka_line_is_typed(
    spark: SparkSession, bundles: Any, name: str
) -> None:
    path, truth = bundles[name]
    b = opened(spark, path)
    assert b.bad_records.count() == 0
    events = b.log_events
    assert events.count() > 100
    untyped = events.where(F.col("event").isNull())
    assert untyped.count() == 0, untyped.select("message").limit(5).collect()
    # the simulator renders curated templates, so none of its lines falls to one made from the source
    made = events.where(F.col("event").startswith("source."))
    assert made.count() == 0, made.select("event", "message").limit(5).collect()
    elected = events.where("event = 'controller.elected'").orderBy("ts").select("broker_id").collect()
    assert [r.broker_id for r in elected] == [c["broker"] for c in truth["controllers"]]
    assert b.znode_history.where("op = 'createSession'").count() >= 3


def _znode(b: Bundle, path: str) -> dict[str, Any]:
    row = b.znodes.where(F.col("path") == path).select("data").first()
    assert row is not None, path
    return json.loads(row.data)


@pytest.mark.parametrize("name", ["topicid-mismatch@2.8.2", "topicid-mismatch@3.6.2"])
def test_topic_id_story_agrees_across_zookeeper_logs_and_data_dirs(
    spark: SparkSession, bundles: Any, name: str
) -> None:
    path, truth = bundles[name]
    b = opened(spark, path)
    changes = [c for c in truth["topic_id_changes"] if c["topic"] == "orders"]
    assert [c["to"] is None for c in changes] == [
        False,
        True,
        False,
    ]  # minted, dropped by the old client, minted again
    first, second = changes[0]["to"], changes[2]["to"]
    # ZooKeeper: the final znode has the second id; its history shows the id dropped at the truth's zxid.
    assert _znode(b, "/brokers/topics/orders")["topic_id"] == second
    dropped = b.znode_history.where(F.col("zxid") == changes[1]["zxid"]).select("path", "data").first()
    assert dropped.path == "/brokers/topics/orders" and "topic_id" not in dropped.data
    assert json.loads(dropped.data)["version"] == 1
    # Data dirs: at 2.8.2 a log records its id at its second LeaderAndIsr, so partitions added before the
    # failover record the new id and old and new partition.metadata disagree; 3.x records it at creation.
    ids = {
        r.topic_id
        for r in b.partition_metadata.where("topic = 'orders'").select("topic_id").distinct().collect()
    }
    assert ids == ({first, second} if name.endswith("2.8.2") else {first})
    # Every mismatch the truth lists is on disk and in that broker's state-change log, as Kafka words it.
    mismatches = truth["topic_id_mismatches"]
    assert mismatches
    on_disk = {
        (r.broker_id, r.partition): r.topic_id
        for r in b.partition_metadata.where("topic = 'orders'").collect()
    }
    logged = (
        b.log_events.where("event = 'topic_id.mismatch'").select("broker_id", "partition", "attrs").collect()
    )
    assert len(logged) == len(mismatches)
    seen = {(r.broker_id, r.partition, r.attrs["log_topic_id"], r.attrs["request_topic_id"]) for r in logged}
    for m in mismatches:
        assert on_disk[(m["broker"], m["partition"])] == m["disk_topic_id"] == first
        assert (m["broker"], m["partition"], first, m["zk_topic_id"]) in seen and m["zk_topic_id"] == second
    # The harm: a broker left an ISR (not in that partition's final ISR in ZooKeeper), or a refusing
    # broker named leader left its partition without an acting leader.
    assert truth["isr_departures"] or truth["leaders_not_acting"]
    for d in truth["isr_departures"]:
        state = _znode(b, f"/brokers/topics/{d['topic']}/partitions/{d['partition']}/state")
        assert d["broker"] not in state["isr"]


def test_controller_failover_is_in_zookeeper_and_the_logs(spark: SparkSession, bundles: Any) -> None:
    path, truth = bundles["topicid-mismatch@2.8.2"]
    b = opened(spark, path)
    last = truth["controllers"][-1]
    assert _znode(b, "/controller")["brokerid"] == last["broker"]
    epoch = b.znodes.where("path = '/controller_epoch'").select("data").first()
    assert int(epoch.data) == last["epoch"] == len(truth["controllers"])
    ready = (
        b.log_events.where("event = 'controller.ready'").orderBy("ts").select("broker_id", "attrs").collect()
    )
    assert [(r.broker_id, int(r.attrs["epoch"])) for r in ready] == [
        (c["broker"], c["epoch"]) for c in truth["controllers"]
    ]


def test_stuck_deletion_agrees_across_zookeeper_logs_and_data_dirs(spark: SparkSession, bundles: Any) -> None:
    path, truth = bundles["deletion-stuck@2.8.2"]
    b = opened(spark, path)
    (topic, story), *others = truth["deletions"].items()
    assert not others and story["completed_ms"] is None
    down = story["pending"]["brokers_down"]
    assert down == [f["broker"] for f in truth["broker_failures"]]
    # ZooKeeper still asks for the deletion and still holds the topic.
    paths = {r.path for r in b.znodes.select("path").collect()}
    assert {f"/admin/delete_topics/{topic}", f"/brokers/topics/{topic}"} <= paths
    # The controller halted it, for the reason the truth gives, and never completed it.
    halted = b.log_events.where("event = 'deletion.halted'").select("attrs").collect()
    assert [r.attrs["reason"] for r in halted] == [h["reason"] for h in story["halted"]]
    assert b.log_events.where("event = 'deletion.completed'").count() == 0
    # Only the broker that was down still has the topic's logs; the others renamed and removed theirs.
    logs = (
        b.datadir_files.where(F.col("topic") == topic).select("broker_id", "dir_state").distinct().collect()
    )
    assert {(r.broker_id, r.dir_state) for r in logs} == {(x, "live") for x in down}
    renamed = b.log_events.where("event = 'log.renamed_for_deletion'").select("broker_id").collect()
    hosts = {r for p in range(truth["topics"][topic]["partitions"]) for r in _replicas(b, topic, p)}
    assert {r.broker_id for r in renamed} == hosts - set(down)
    assert sorted(x for _, x in story["pending"]["replicas_left"]) == sorted(
        x for p in range(truth["topics"][topic]["partitions"]) for x in _replicas(b, topic, p) if x in down
    )


def _replicas(b: Bundle, topic: str, partition: int) -> list[int]:
    return list(_znode(b, f"/brokers/topics/{topic}")["partitions"][str(partition)])


@pytest.mark.parametrize("name", ["deletion-complete@3.6.2", "deletion-complete@2.5.1"])
def test_completed_deletions_leave_only_recent_delete_dirs(
    spark: SparkSession, bundles: Any, name: str
) -> None:
    path, truth = bundles[name]
    b = opened(spark, path)
    deletions = truth["deletions"]
    assert all(d["completed_ms"] for d in deletions.values())
    assert [h["reason"] for d in deletions.values() for h in d["halted"]] == ["offline replicas"]
    paths = [r.path for r in b.znodes.select("path").collect()]
    for topic, d in deletions.items():
        assert not [p for p in paths if p.endswith(f"/{topic}") or f"/{topic}/" in p]
        # the topic znode went in the history at the time the deletion completed
        gone = b.znode_history.where(
            (F.col("op") == "delete") & (F.col("path") == f"/brokers/topics/{topic}") & F.col("applied")
        )
        at = gone.select(F.unix_millis("time").alias("ms")).first()
        assert at is not None and abs(at.ms - d["completed_ms"]) < 1_000, topic
    completed = b.log_events.where("event = 'deletion.completed'").select("topic").collect()
    assert sorted(r.topic for r in completed) == sorted(deletions)
    # file.delete.delay.ms (60 s) had passed for all but the last deletion: only its dirs remain, renamed.
    last = max(deletions, key=lambda t: deletions[t]["requested_ms"])
    assert truth["captured_ms"] - deletions[last]["completed_ms"] < 60_000
    left = b.datadir_files.where(F.col("topic").isin(list(deletions))).select("topic", "dir_state").distinct()
    assert {(r.topic, r.dir_state) for r in left.collect()} == {(last, "delete")}


def test_failover_resumes_the_reassignment_and_leaves_leaders_unbalanced(
    spark: SparkSession, bundles: Any
) -> None:
    path, truth = bundles["controller-failover@2.8.2"]
    b = opened(spark, path)
    (failure,) = truth["broker_failures"]
    first, second = truth["controllers"]
    assert failure["was_controller"] and failure["broker"] == first["broker"] != second["broker"]
    assert failure["crashed_ms"] < failure["session_expired_ms"] <= second["elected_ms"]
    assert _znode(b, "/controller")["brokerid"] == second["broker"]
    moves = truth["reassignments"]
    assert moves and all(m["started_by"] == first["broker"] for m in moves)
    assert all(m["completed_by"] == second["broker"] for m in moves)
    # The reassignment was in the topic znode when the controller died, and is done in the final one.
    during = b.znode_history.where(
        (F.col("op") == "setData") & (F.col("path") == "/brokers/topics/events") & F.col("applied")
    ).where(F.unix_millis("time") < failure["crashed_ms"])
    assert during.where(F.col("data").contains('"adding_replicas":{"')).count() > 0
    final = _znode(b, "/brokers/topics/events")
    assert {int(k): v for k, v in final["partitions"].items()} == {m["partition"]: m["to"] for m in moves}
    assert final["adding_replicas"] == final["removing_replicas"] == {}
    caught_up = b.log_events.where("event = 'reassignment.caught_up'").select("broker_id", "partition")
    assert sorted((r.broker_id, r.partition) for r in caught_up.collect()) == sorted(
        (second["broker"], m["partition"]) for m in moves
    )
    # The dead controller came back to lead nothing it prefers: ZooKeeper's states say the same.
    back = truth["leader_imbalance"][str(failure["broker"])]
    assert back["ratio"] > 0.1 and back["not_leading"]  # leader.imbalance.per.broker.percentage=10
    for tp in back["not_leading"]:
        topic, _, partition = tp.rpartition("-")
        assert (
            _znode(b, f"/brokers/topics/{topic}/partitions/{partition}/state")["leader"] != failure["broker"]
        )


def _digest(root: Path) -> str:
    h = hashlib.sha256()
    for f in sorted(p for p in root.rglob("*") if p.is_file()):
        h.update(f.relative_to(root).as_posix().encode() + b"\0" + f.read_bytes())
    return h.hexdigest()


def test_same_seed_same_bundle(tmp_path: Path) -> None:
    a, b, c = (tmp_path / n for n in "abc")
    simulate("topicid-mismatch", a, seed=3, scale=SMALL)
    simulate("topicid-mismatch", b, seed=3, scale=SMALL)
    simulate("topicid-mismatch", c, seed=4, scale=SMALL)
    assert _digest(a) == _digest(b) != _digest(c)


def test_topic_ids_need_kafka_2_8(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"2\.8 or later"):
        simulate("topicid-mismatch", tmp_path / "x", kafka_version="2.5.1", scale=SMALL)


def test_chained_scenarios_keep_their_topics_apart_in_one_cluster(tmp_path: Path) -> None:
    """a+b: each scenario's topics under its own prefix, one after the other in one cluster; a part that
    is no scenario is named."""
    truth = simulate("healthy+deletion-stuck", tmp_path / "chain", seed=3, scale=SMALL)
    assert {t for t in truth["topics"] if not t.startswith("__")} == {
        *(f"s1-topic-{i}" for i in range(SMALL.topics)),
        *(f"s2-topic-{i}" for i in range(SMALL.topics)),
        "s2-clickstream-old",
    }
    assert list(truth["deletions"]) == ["s2-clickstream-old"]
    with pytest.raises(ValueError, match="unknown scenario 'nope'"):
        simulate("healthy+nope", tmp_path / "x", scale=SMALL)


def test_a_directory_it_did_not_write_is_never_wiped(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match=r"holds no truth\.json"):
        simulate("healthy", tmp_path, scale=SMALL)
    assert (tmp_path / "notes.txt").read_text() == "mine"


def test_committed_samples_are_a_fresh_regeneration(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parent.parent / "sample_data"
    for fresh in samples.write(tmp_path):
        committed = root / fresh.name
        assert committed.is_dir(), f"{committed} is missing: run make sample-data"
        assert _digest(fresh) == _digest(committed), f"{committed} is stale: run make sample-data"


def test_racks_clock_skew_and_gzipped_rolled_logs(spark: SparkSession, tmp_path: Path) -> None:
    scale = Scale(brokers=3, topics=2, partitions=3, hours=2, racks=3)
    truth = simulate("healthy", tmp_path, seed=5, scale=scale, clock_skew_ms=3_000, gzip_rolled=True)
    b = open_bundle(tmp_path, spark)
    assert b.bad_records.count() == 0
    racks = {json.loads(r.data)["rack"] for r in b.znodes.where("path like '/brokers/ids/%'").collect()}
    assert racks == {"rack-1", "rack-2", "rack-3"}
    # Rolled files are gzipped and read like the others.
    assert b.log_events.where(F.col("file").endswith(".gz")).count() > 0
    # Each broker prints its own clock: the election line is off from the truth by that broker's skew.
    skew = {int(k): v for k, v in truth["clock_skew_ms"].items()}
    assert len(set(skew.values())) == 3
    elected = b.log_events.where("event = 'controller.elected'").orderBy("ts").first()
    first = truth["controllers"][0]
    assert elected.broker_id == first["broker"]
    shown_ms = round(elected.ts.replace(tzinfo=timezone.utc).timestamp() * 1000)
    assert shown_ms - first["elected_ms"] == skew[first["broker"]]


BACKGROUND_LOGGERS = (
    "(kafka.coordinator.group.GroupCoordinator)",
    "(kafka.coordinator.group.GroupMetadataManager)",
    "(org.apache.kafka.clients.FetchSessionHandler)",
)


def _log_lines(root: Path) -> dict[str, list[str]]:
    """Every broker's log lines (rolled files included), sorted, by broker."""
    out: dict[str, list[str]] = {}
    for f in (root / "brokers").glob("*/logs/*"):
        out.setdefault(f.parts[-3], []).extend(f.read_text().splitlines())
    return {b: sorted(lines) for b, lines in out.items()}


def test_background_lines_leave_the_story_alone(tmp_path: Path) -> None:
    quiet, noisy = tmp_path / "quiet", tmp_path / "noisy"
    rate = 2.0
    truth = simulate("deletion-stuck", quiet, seed=3, scale=SMALL, noise_rate=0)
    assert simulate("deletion-stuck", noisy, seed=3, scale=SMALL, noise_rate=rate) == truth
    for same in ("zk", "brokers/1/datadirs", "brokers/2/datadirs", "brokers/3/datadirs"):
        assert _digest(quiet / same) == _digest(noisy / same), same
    story, with_noise = _log_lines(quiet), _log_lines(noisy)
    background = 0
    for broker, lines in with_noise.items():
        assert [x for x in lines if not x.endswith(BACKGROUND_LOGGERS)] == story[broker]
        background += sum(x.endswith(BACKGROUND_LOGGERS) for x in lines)
    # About `rate` lines a second from each broker while it runs; the crashed one says nothing after.
    (failure,) = truth["broker_failures"]
    start = min(c["elected_ms"] for c in truth["controllers"])
    up_seconds = (3 * (truth["captured_ms"] - start) - (truth["captured_ms"] - failure["crashed_ms"])) / 1000
    assert 0.8 < background / (rate * up_seconds) < 1.2, (background, up_seconds)
    last = max(x for x in with_noise[str(failure["broker"])] if x.startswith("["))[1:24]
    assert last <= log4j_time(failure["crashed_ms"])


def test_segment_rolls_are_in_the_logs_and_the_listing(tmp_path: Path) -> None:
    simulate("healthy", tmp_path, seed=2, scale=Scale(topics=1, partitions=2, per_second=4_000))
    rolls = 0
    for log in (tmp_path / "brokers").glob("*/logs/server.log*"):
        listing = (log.parent.parent / "datadirs" / "0" / "listing.tsv").read_text()
        for line in log.read_text().splitlines():
            if "Rolled new log segment" in line:
                tp = line.split("partition=")[1].split(",")[0]
                offset = int(line.split("at offset ")[1].split()[0])
                assert f"\n{tp}/{offset:020d}.log\t" in listing, line
                rolls += 1
    assert rolls >= 6  # each of the 6 replicas passed log.segment.bytes at least once


def test_a_long_run_reports_each_simulated_hour(tmp_path: Path) -> None:
    hours: list[float] = []
    scale = Scale(brokers=3, topics=1, partitions=2, hours=2.5)
    truth = simulate("healthy", tmp_path / "b", scale=scale, noise_rate=0, progress=hours.append)
    assert hours == [1, 2] and truth["captured_ms"] - START_MS >= 2 * 3_600_000


@pytest.mark.parametrize(
    ("log", "version"),
    [
        ("02b_controller_failover_to_broker1_controller.log", "2.8.2"),
        ("05b_zk_session_expiry_controller_reelect_controller.log", "2.5.1"),
    ],
)
def test_topic_sets_print_as_real_controllers_did(real_evidence: Path, log: str, version: str) -> None:
    """'Current list of topics in the cluster': a mutable.HashSet from 2.8 (real 2.8.0), before it
    ZooKeeper's children kept by a small immutable Set (real 2.5.0, a Scala 2.13 build: a Set of 3 prints
    alike in 2.12). Only the names are taken from the line; the order and the prefix are ours."""
    text = (real_evidence / "logs" / log).read_text()
    lines = re.findall(r"Current list of topics in the cluster: (.*) \(kafka", text)
    assert lines
    for shown in lines:
        names = shown[shown.index("(") + 1 : -1].split(", ")
        zk = SimZooKeeper(START_MS)
        session = zk.create_session(START_MS)
        for name in sorted(names):
            zk.create_recursive(START_MS, session, f"/brokers/topics/{name}")
        listed = zk.children("/brokers/topics")
        assert wording.scala_set(listed, version, mutable=version >= "2.8") == shown


@pytest.mark.parametrize("version", ["1.1.1", "2.4.1", *wording.VERSIONS])
def test_every_line_the_stories_tell_is_one_its_version_s_source_has(
    version: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each template the simulator renders at a version is one the listing of that release line's source
    holds, or one the listing cannot hold (a message built in a variable, or passed to a helper that logs
    it, whose citation names the release; the group coordinator's)."""
    used: dict[tuple[str, str], Any] = {}
    choose = wording.template

    def spy(kind: str, at: str, names: frozenset[str], pick: str = "") -> Any:
        t = choose(kind, at, names, pick)
        used[(t.kind, t.text)] = t
        return t

    monkeypatch.setattr(wording, "template", spy)
    for scenario in (
        "healthy",
        "deletion-stuck",
        "controller-failover",
        "unclean-election",
        "controller-hang",
    ):
        simulate(scenario, tmp_path / scenario, seed=3, kafka_version=version, scale=SMALL)
    line = wording.release_line(version)
    elsewhere = [
        key
        for key, t in used.items()
        if wording.written_by(t) and line not in wording.written_by(t) and not wording.cites(t, version)
    ]
    assert len(used) > 60 and elsewhere == []


def test_a_line_a_version_does_not_write_is_left_out_and_loggers_follow_the_version() -> None:
    fields = {"added": 1, "deleted": 0, "controller": 1, "controller_epoch": 2, "correlation_id": 3}
    # MetadataCache.scala @2.5.1 l.311 traces each partition; the summary line came with 2.6
    with pytest.raises(wording.NotWritten):
        wording.say("request.update_metadata.handled", "2.5.1", **fields)
    with pytest.raises(KeyError) as mistake:  # a kind no version writes is the story's mistake
        wording.say("request.update_metadata.handeld", "2.8.2", **fields)
    assert not isinstance(mistake.value, wording.NotWritten)
    assert wording.say("request.update_metadata.handled", "2.8.2", **fields).startswith("Add 1 partitions")
    # a state machine logs as its concrete class: ZkReplicaStateMachine from 2.3, ReplicaStateMachine before
    kind, pick = "state_machine.replica", "Triggering online replica state changes"
    assert wording.logger_of(kind, "2.5.1", pick=pick) == "kafka.controller.ZkReplicaStateMachine"
    assert wording.logger_of(kind, "1.1.1", pick=pick) == "kafka.controller.ReplicaStateMachine"
    # RequestSendThread.brokerReady, not the channel manager (ControllerChannelManager.scala @2.5.1 l.291)
    shown = {"controller": 1, "broker_node": "kafka-2:9092 (id: 2 rack: null)"}
    assert (
        wording.logger_of("controller.broker_connected", "2.5.1", **shown)
        == "kafka.controller.RequestSendThread"
    )
    # 1.1's election line has no epoch: the fields it lacks are left out
    elected = wording.say("controller.elected", "1.1.1", broker=1, epoch=5, epoch_zk_version=4)
    assert elected == "1 successfully elected as the controller"
