"""Topic lifecycle: on the samples, where every topic was made by Kafka's own assignment with valid
names, nothing is found; on a story where a topic is assigned by hand onto one rack, one is created
automatically and names collide or are invalid, exactly those are found, with their evidence. The findings
half (`lifecycle.judge`) also from hand-written facts: its wording and what partial evidence allows."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from conftest import SAMPLE_DATA, samples
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from workbench.analysis import lifecycle, typos
from workbench.analysis.findings import Coverage
from workbench.analysis.lifecycle import SHOWN, Assigned, Facts, Logged, OnOneRack, Written, judge
from workbench.frames import Bundle, WithoutTxnLogs, open_bundle
from workbench.kafka import printed
from workbench.kafka.znodes import TOPIC_PATH
from workbench.model.views import views
from workbench.simulate import story
from workbench.simulate.cluster import Cluster
from workbench.simulate.run import simulate
from workbench.simulate.scenarios import SCENARIOS, Scale
from workbench.zookeeper.datatree import DataTree
from workbench.zookeeper.files import read_snapshot

SAMPLES = [SAMPLE_DATA / name for name in samples("zk")]


@pytest.mark.parametrize("path", SAMPLES, ids=lambda p: p.name)
def test_every_creation_in_the_history_is_checked(sample: Callable[[str], Bundle], path: Path) -> None:
    """Each topic the story created is one creation (first_partition 0), with the brokers then
    registered; that none is found is asserted by triage's truth checks (truth_facts.KINDS)."""
    truth = json.loads((path / "truth.json").read_text())
    made = lifecycle.creations(sample(path.name))
    assert made is not None
    created = made.where("first_partition = 0").collect()
    assert sorted(r.topic for r in created) == sorted(truth["topics"])
    assert all(len(r.brokers) >= 1 for r in created)


def odd_topics(c: Cluster, s: Scale) -> None:
    """Kafka 2.5.1, 6 brokers on 3 racks: a default topic, one assigned by hand onto rack-1's brokers
    (1 and 4), one created automatically by broker 2, two names that collide and one Kafka refuses."""
    story.create_topic(c, "payments", 6, 3)
    story.create_topic(c, "by-hand", 3, 2, assignment={0: [1, 4], 1: [4, 1], 2: [1, 4]})
    story.create_topic(c, "clicks", 2, 2, auto_by=2)
    story.create_topic(c, "metrics.in", 2, 2)
    story.create_topic(c, "metrics_in", 2, 2)
    validate = story.names.validate
    story.names.validate = lambda name, version="2.8.2": None  # type: ignore[assignment]  # a tool skips it
    try:
        story.create_topic(c, "bad name!", 1, 1)
    finally:
        story.names.validate = validate  # type: ignore[assignment]
    story.produce(c, 5, s.per_second)


@pytest.mark.parametrize("version", ["2.5.1", "2.8.2"])
def test_odd_topics_are_found_with_their_evidence(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, version: str
) -> None:
    """At 2.5 the automatic creation is both logged and written by broker 2's own session; at 2.8 only
    the writer tells it (broker 1 is the controller: a CreateTopics request would be its to serve)."""
    monkeypatch.setitem(SCENARIOS, "odd-topics", odd_topics)
    simulate("odd-topics", tmp_path / "b", 1, version, Scale(brokers=6, racks=3, hours=0.2), noise_rate=0)
    bundle = open_bundle(tmp_path / "b", spark)
    coverage = Coverage()
    found = {f.kind: f for f in lifecycle.findings(bundle, coverage)}
    assert coverage["topic_auto_creation"].status == "done"
    assert set(found) == {
        "topic.manual_assignment",
        "topic.rack_concentrated",
        "topic.auto_created",
        "topic.name_collision",
        "topic.invalid_name",
    }
    manual = found["topic.manual_assignment"]
    assert manual.subject == {"topics": 1} and "by-hand (created by a tool" in manual.summary
    assert manual.evidence and manual.evidence[0].startswith("zk:txn@")
    rack = found["topic.rack_concentrated"]
    assert rack.subject == {"partitions": 3, "topics": 1} and "by-hand (3 on rack rack-1)" in rack.summary
    auto = found["topic.auto_created"]
    assert auto.subject == {"topics": 1}
    assert "clicks (written by broker 2's own ZooKeeper session" in auto.summary
    assert "while broker 1 was the controller" in auto.summary
    logged = [e for e in auto.evidence if e.startswith("broker-2:logs/server.log")]
    assert auto.evidence[0].startswith("zk:txn@") and len(logged) == (1 if version == "2.5.1" else 0)
    assert "metrics.in and metrics_in" in found["topic.name_collision"].summary
    assert "'bad name!'" in found["topic.invalid_name"].summary
    by = {r.topic: r.by for r in lifecycle.creations(bundle).collect()}
    assert by["clicks"] == 2 and by["payments"] is None  # its own session vs a tool's

    # As a capture through ZooKeeper's client holds it (no txn logs): the controller's line tells the
    # hand-made assignment, over the brokers it logged live, and does not say who wrote it
    captured = WithoutTxnLogs(bundle)
    coverage = Coverage()
    found = {f.kind: f for f in lifecycle.findings(captured, coverage)}
    manual = found["topic.manual_assignment"]
    assert (
        manual.subject == {"topics": 1} and "by-hand (created as the controller logged it" in manual.summary
    )
    assert re.fullmatch(r"broker-1:logs/controller\.log[^:]*:\d+", manual.evidence[0]), manual.evidence
    assert "New topics: [Set(by-hand)]" in _line(tmp_path / "b", manual.evidence[0])
    assert found["topic.rack_concentrated"].subject == rack.subject
    assert ("topic.auto_created" in found) == (version == "2.5.1")  # only 2.5's line tells it
    assert coverage["topic_lifecycle"].missing == ["ZooKeeper txn logs (zk/txnlog/): who created each topic"]
    said = 'the active controllers\' "New topics" lines'
    read = [u for u in coverage["topic_lifecycle"].used if u.startswith(said)]
    assert len(read) == 1 and re.search(r": \d+ assignment\(s\) no txn holds$", read[0]), read


def _line(root: Path, ref: str) -> str:
    """The line a finding cites (`broker-N:path:line`)."""
    broker, path, n = re.fullmatch(r"broker-(\d+):(.+):(\d+)", ref).groups()  # type: ignore[union-attr]
    return (root / "brokers" / broker / path).read_text().splitlines()[int(n) - 1]


def test_a_replica_assignment_is_read_as_each_release_prints_it(spark: SparkSession) -> None:
    """The controller's "New topics" line prints the assignment it read: a Seq per partition before 2.4,
    ReplicaAssignment's toString from 2.4, wrapped in a TopicIdReplicaAssignment from 2.8; a topic name
    with a dash and digits, or one Kafka refuses, is read whole."""
    texts = [
        "Map(t-2-1 -> List(1, 2), t-2-0 -> Vector(2, 1))",
        "Map(a.b-0 -> ReplicaAssignment(replicas=4,3,1, addingReplicas=, removingReplicas=))",
        "Set(TopicIdReplicaAssignment(orders,Some(rKsaa8adS9iz-nqn4fq51w),Map(orders-0 -> "
        "ReplicaAssignment(replicas=2,3, addingReplicas=, removingReplicas=))))",
        "Map(bad name!-0 -> ReplicaAssignment(replicas=1, addingReplicas=, removingReplicas=))",
        "Set()",
    ]
    df = spark.createDataFrame([(t,) for t in texts], "text string")
    read = [[tuple(p) for p in r.a] for r in df.select(printed.assignment(df.text).alias("a")).collect()]
    assert read == [
        [("t-2", "1", [1, 2]), ("t-2", "0", [2, 1])],
        [("a.b", "0", [4, 3, 1])],
        [("orders", "0", [2, 3])],
        [("bad name!", "0", [1])],
        [],
    ]


@pytest.mark.parametrize("name", ["controller-failover-2.5", "topicid-mismatch-2.8"])
def test_the_controllers_lines_tell_each_creation_as_zookeeper_does(
    sample: Callable[[str], Bundle], name: str
) -> None:
    """Without the txn logs, each creation is the controller's "New topics" line: the same topics, with the
    same assignment, over the same brokers then (and their racks) as ZooKeeper's txns give, each citing
    its line; a Kafka default assignment, so nothing is found, and every creation is checked."""
    whole = sample(name)

    def told(b: Bundle) -> dict[str, Any]:
        made = lifecycle.creations(b).where("first_partition = 0").collect()
        return {r.topic: (dict(r.added), r.brokers, r.brokers_known) for r in made}

    captured = WithoutTxnLogs(whole)
    assert told(captured) == told(whole) and told(whole)
    refs = [r.ref for r in lifecycle.creations(captured).collect()]
    assert all("New topics: [" in _line(SAMPLE_DATA / name, ref) for ref in refs)
    coverage = Coverage()
    assert lifecycle.findings(captured, coverage) == []
    assert not any("neither ZooKeeper's history" in m for m in coverage["topic_lifecycle"].missing)


@pytest.mark.slow
def test_a_history_that_begins_after_the_creations(
    spark: SparkSession, tmp_path: Path, zookeeper_factory: Any
) -> None:
    """ZooKeeper purged its older txn logs: the topics' creations are gone from its history, the tree
    before the history comes from the snapshot the kept logs follow, and partitions added later are still
    checked against it. The creations before it are the controller's lines' (its lines run on the
    simulator's clock, this server on the machine's: far apart, so none is taken for a txn's), each
    checked over the brokers it logged live."""
    # ZooKeeper rolls its log after snapCount/2 plus a random share of snapCount/2 txns: a new log every
    # 4-8 txns, so a snapshot and a log start fall between the creations and the addition whatever the draw
    zk = zookeeper_factory(jvm_properties={"zookeeper.snapCount": "8"})
    path = tmp_path / "b"
    scale = Scale(topics=2, partitions=3, hours=0.2)
    truth = simulate("topicid-mismatch", path, 3, "2.8.2", scale, zk=zk.hosts, zk_data_dir=zk.data_dir)
    (added_at,) = [c["zxid"] for c in truth["topic_id_changes"] if c["to"] is None]
    born = (
        open_bundle(path, spark)
        .znode_history.where((F.col("op") == "create") & F.col("path").rlike(TOPIC_PATH))
        .agg(F.max("zxid"))
        .collect()[0][0]
    )
    # ZooKeeper's purge (PurgeTxnLog): keep the snapshots from one on, and the logs from the newest that
    # starts at or before it; here one whose kept logs begin after the creations, before the addition.
    txnlog = path / "zk" / "txnlog"
    zxid = {f: int(f.name.split(".")[1], 16) for f in txnlog.iterdir()}
    starts = sorted(z for f, z in zxid.items() if f.name.startswith("log."))
    snapshots = sorted(z for f, z in zxid.items() if f.name.startswith("snapshot."))
    # a snapshot is fuzzy: it must not already hold the addition (its newest change is before it)
    names = {z: f for f, z in zxid.items() if f.name.startswith("snapshot.")}
    early = [
        z for z in snapshots if DataTree.from_snapshot(read_snapshot(names[z])).newest_change() < added_at
    ]
    purges = [(z, max(x for x in starts if x <= z)) for z in early if starts[0] <= z]
    kept, first = next((z, x) for z, x in reversed(purges) if x > born)  # creations at born < first
    for f, z in zxid.items():
        if z < (kept if f.name.startswith("snapshot.") else first):
            f.unlink()
    bundle = open_bundle(path, spark)
    assert views(bundle).history_span.first == first  # type: ignore[union-attr]
    assert views(bundle).watched_history.before_zxid == kept  # type: ignore[union-attr]
    rows = lifecycle.creations(bundle).orderBy("zxid", "time").collect()
    # the addition from the txns; the creations before them from the controller's lines, on its clock
    assert [(r.topic, r.first_partition, r.zxid is None) for r in rows] == [
        ("topic-0", 0, True),
        ("orders", 0, True),
        ("orders", scale.partitions, False),
    ]
    assert all(len(r.brokers) == scale.brokers and r.brokers_known for r in rows)
    assert all("New topics: [" in _line(path, r.ref) for r in rows if r.zxid is None)
    coverage = Coverage()
    assert lifecycle.findings(bundle, coverage) == []
    assert coverage["topic_lifecycle"].status == "done"


def typo_topics(c: Cluster, s: Scale) -> None:
    """A producer's slip at 2.8: `paymetns` is created by broker 2 with the defaults; a series of topics
    one digit apart, a plural made on purpose with its own shape, and `.`/`_` twins are not typos."""
    story.create_topic(c, "payments", 6, 3)
    for i in range(3):
        story.create_topic(c, f"shard-{i}", 2, 2)
    story.create_topic(c, "event", 3, 3)
    story.create_topic(c, "events", 3, 3)
    story.create_topic(c, "metrics.in", 2, 2)
    story.create_topic(c, "metrics_in", 2, 2)
    story.produce(c, 5, s.per_second)
    story.create_topic(c, "paymetns", 1, 1, auto_by=2)
    story.produce(c, 5, s.per_second)


def test_a_typo_topic_is_found_with_its_signs(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(SCENARIOS, "typo-topics", typo_topics)
    simulate("typo-topics", tmp_path / "b", 1, "2.8.2", Scale(hours=0.2), noise_rate=0)
    coverage = Coverage()
    found = typos.findings(open_bundle(tmp_path / "b", spark), coverage)
    assert coverage["topic_typos"].status == "done"
    assert "the brokers' defaults, 1 partition(s) and replication factor 1" in found[0].summary
    assert [(f.subject["topic"], f.subject["sibling"]) for f in found] == [("paymetns", "payments")]
    assert (
        "two letters swapped" in found[0].summary and "broker 2's own ZooKeeper session" in found[0].summary
    )


AT = datetime(2024, 3, 12, 8, 0, tzinfo=timezone.utc)


def lifecycle_facts(**changed: Any) -> Facts:
    """Facts of a 2.8 bundle with its history and logs, where nothing is odd; `changed` as given."""
    nothing: dict[str, Any] = dict(
        history=True,
        older=0,
        from_lines=0,
        unjudged=0,
        pre_28=False,
        with_logs=True,
        migration=False,
        manual=(0, 0, []),
        concentrated=(0, 0, []),
        written=[],
        logged=[],
        invalid=[],
        collisions=[],
    )
    return Facts(**{**nothing, **changed})


def checked() -> Coverage:
    """Coverage as the runner leaves it before `judge` (contract.Analysis.findings)."""
    coverage = Coverage()
    coverage.record("topic_lifecycle", ["ZooKeeper state", "ZooKeeper history"])
    return coverage


def test_judge_finds_nothing_where_nothing_is_odd_and_says_what_it_read() -> None:
    coverage = checked()
    assert judge(lifecycle_facts(), coverage) == []
    assert coverage["topic_lifecycle"].status == "done"
    auto = coverage["topic_auto_creation"]
    assert auto.status == "done" and auto.used == ["ZooKeeper's history (who wrote each topic znode)"]


def test_judge_words_each_odd_topic_with_its_evidence() -> None:
    facts = lifecycle_facts(
        manual=(
            2,
            1,
            [
                Assigned(0x10, "by-hand", None, 0, "not on 3 brokers", "zk:txn@0x10"),
                Assigned(0x30, "by-hand", 2, 3, "x", "zk:txn@0x30"),
            ],
        ),
        concentrated=(3, 1, [OnOneRack("by-hand", "rack-1", 3)]),
        written=[Written("clicks", 0x20, AT, 2, 1), Written("views", 0x40, AT, 3, None)],
        logged=[Logged("clicks", AT, 2, "broker-2:logs/server.log", 7)],
        invalid=[("bad name!", "/brokers/topics/bad name!")],
        collisions=[["metrics.in", "metrics_in"]],
    )
    found = {f.kind: f for f in judge(facts, checked())}
    manual = found["topic.manual_assignment"]
    assert manual.subject == {"topics": 1} and manual.evidence == ("zk:txn@0x10", "zk:txn@0x30")
    assert "2 topic creation(s) or partition addition(s) in 1 topic(s)" in manual.summary
    assert (
        "by-hand (created by a tool: not on 3 brokers); by-hand (partitions from 3 added by broker 2: x)"
        in (manual.summary)
    )
    rack = found["topic.rack_concentrated"]
    assert rack.subject == {"partitions": 3, "topics": 1} and rack.severity.value == "warning"
    assert "by-hand (3 on rack rack-1)" in rack.summary and rack.evidence == ("zk:/brokers/topics/by-hand",)
    auto = found["topic.auto_created"]
    assert auto.subject == {"topics": 2}
    assert "clicks (written by broker 2's own ZooKeeper session at zxid 0x20, 2024-03-12 08:00:00" in (
        auto.summary
    )
    assert "while broker 1 was the controller" in auto.summary
    assert (
        "views (written by broker 3's own" in auto.summary
        and "while no controller was elected" in auto.summary
    )
    # a topic both written and logged cites both, the txn first
    assert auto.evidence == ("zk:txn@0x20", "broker-2:logs/server.log:7", "zk:txn@0x40")
    assert "'bad name!'" in found["topic.invalid_name"].summary
    assert found["topic.invalid_name"].evidence == ("zk:/brokers/topics/bad name!",)
    collision = found["topic.name_collision"]
    assert collision.subject == {"groups": 1} and "metrics.in and metrics_in" in collision.summary


def test_judge_from_logs_alone_and_more_than_it_shows() -> None:
    """A 2.5 bundle without ZooKeeper's history: the brokers' lines tell the automatic creations; the
    manual assignments past SHOWN are counted, and ' ...' says more are not named."""
    many = [
        Assigned(None, f"t{i}", None, 0, "why", f"broker-1:logs/controller.log:{i}") for i in range(SHOWN)
    ]
    facts = lifecycle_facts(
        history=False,
        from_lines=SHOWN + 5,
        pre_28=True,
        manual=(SHOWN + 2, SHOWN + 2, many),
        logged=[Logged("clicks", AT, 2, "broker-2:logs/server.log", 7)],
    )
    coverage = checked()
    found = {f.kind: f for f in judge(facts, coverage)}
    manual = found["topic.manual_assignment"]
    assert manual.summary.endswith(" ...") and "t0 (created as the controller logged it, by a writer no" in (
        manual.summary
    )
    assert manual.evidence == tuple(f"broker-1:logs/controller.log:{i}" for i in range(3))
    auto = found["topic.auto_created"]
    assert "clicks (broker 2, 2024-03-12 08:00:00)" in auto.summary
    assert auto.evidence == ("broker-2:logs/server.log:7",)
    assert coverage["topic_auto_creation"].used == ["broker logs"]
    assert coverage["topic_lifecycle"].used[-1] == (
        f'the active controllers\' "New topics" lines: {SHOWN + 5} assignment(s) no txn holds'
    )


def test_judge_says_what_it_could_not_check() -> None:
    """Creations neither source holds are not checked; at 2.8 without the history whether topics
    were created automatically is not known (skipped), and with ZooKeeper migration it is partial."""
    coverage = checked()
    assert judge(lifecycle_facts(older=4), coverage) == []
    lc = coverage["topic_lifecycle"]
    assert lc.status == "partial" and lc.missing == [
        "the creation of 4 topic(s), which neither ZooKeeper's history nor the controllers' "
        "lines hold: not checked"
    ]
    coverage = checked()
    judge(lifecycle_facts(history=False), coverage)
    auto = coverage["topic_auto_creation"]
    assert auto.status == "skipped" and "zk/txnlog/" in auto.missing[0]
    coverage = checked()
    judge(lifecycle_facts(migration=True), coverage)
    auto = coverage["topic_auto_creation"]
    assert auto.status == "partial" and "migration" in auto.missing[0]
