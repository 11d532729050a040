"""Every sample, its ZooKeeper evidence replaced by what an on-call would have pasted at the capture: a
`kafka-topics --describe` in the layout of the sample's Kafka version and a zookeeper-shell session in the
wording of the ZooKeeper client that version bundled, both generated from the sample's tree. Where the
pastes hold the facts, triage finds what it finds from the collected bundle."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import SAMPLE_DATA, with_pastes
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from test_kafka_topics import describe
from test_zk_shell import _nodes, zkcli

from workbench.analysis.triage import triage
from workbench.frames import Bundle, open_bundle
from workbench.model import topic_ids
from workbench.model.views import views

SAMPLES = [
    "controller-failover-2.5",
    "deletion-complete-3.6",
    "deletion-stuck-2.8",
    "healthy-3.6",
    "topicid-mismatch-2.8",
]


def _zookeeper_client(kafka: str) -> str:
    """The ZooKeeper client a Kafka release bundled (gradle/dependencies.gradle): 3.4 to 2.3, 3.5 for
    2.4-2.8, 3.6 for 3.0-3.5 and 3.8 from 3.6; 3.6 prints these commands as 3.8 does."""
    major = tuple(int(x) for x in kafka.split(".")[:2])
    return "3.4" if major < (2, 4) else "3.5" if major < (3, 0) else "3.8"


def _pasted(sample: Path, tmp: Path) -> Path:
    manifest = json.loads((sample / "manifest.json").read_text())
    version = manifest["kafka_version"]
    nodes = _nodes(sample / "zk" / "znodes.jsonl")
    topics = sorted(p for p in nodes if p.count("/") == 3 and p.startswith("/brokers/topics/"))
    commands = ["ls /brokers/ids", "ls /admin/delete_topics", *(f"get {t}" for t in topics)]
    pastes = {"zk.txt": zkcli(nodes, commands, _zookeeper_client(version), False, "UTC")}
    if topics:  # describe prints nothing of a cluster without topics
        pastes["describe.txt"] = describe(sample / "zk" / "znodes.jsonl", version)
    return with_pastes(tmp, sample.name, pastes, {"taken_at": manifest["captured_at"]}, zk=False)


def _subjects(result: Any, kind: str, *keys: str) -> set[tuple[Any, ...]]:
    return {
        tuple(tuple(v) if isinstance(v, list) else v for v in (f.subject[k] for k in keys))
        for f in result.findings
        if f.kind == kind
    }


# The analyses that read what was pasted where ZooKeeper's evidence is missing (model/described.py).
READ_PASTES = ("topic_ids", "deletion", "health", "leaderless")


@pytest.mark.slow
@pytest.mark.parametrize("name", SAMPLES)
def test_the_pastes_of_a_sample_give_its_findings(
    spark: SparkSession, sample: Callable[[str], Bundle], tmp_path: Path, name: str
) -> None:
    """What the collected bundle's ZooKeeper tree says (read by the same views triage reads) is what triage
    finds from the pastes alone."""
    collected = sample(name)
    pasted_bundle = open_bundle(_pasted(SAMPLE_DATA / name, tmp_path), spark)
    pasted = triage(pasted_bundle, only=READ_PASTES)
    assert (
        pasted_bundle.bad_records.where("source in ('kafka-topics', 'zookeeper-shell', 'pasted')").count()
        == 0
    )

    stale = {
        (r.topic, r.broker_id, tuple(r.partitions), r.zk_topic_id)
        for r in topic_ids.mismatches(collected).collect()
    }
    assert _subjects(pasted, "topic_id.mismatch", "topic", "broker", "partitions", "topic_id") == stale
    v = views(collected)
    if v.topic_ids_expected:
        without = {(r.topic,) for r in v.topics.where(F.col("topic_id").isNull()).collect()}
        assert _subjects(pasted, "topic_id.missing", "topic") == without
    markers = {(r.topic,) for r in v.delete_markers.collect()}
    assert _subjects(pasted, "deletion.marked", "topic") == markers
    assert stale or markers or name.startswith(("controller", "deletion-complete", "healthy")), (
        "a sample with nothing to find"
    )

    # The partitions ZooKeeper's tree shows without a leader, and under-replicated by the rule of the
    # version's describe (over ZooKeeper before 3.0 a replica being added counts; over a broker it does not)
    parts = v.partitions
    over_zk = not name.endswith("3.6")
    rf = F.size("replicas") - (F.lit(0) if over_zk else F.size(F.coalesce("adding", F.array())))
    leaderless = parts.where(F.col("leader") == -1).count()
    under = parts.where((F.col("leader") != -1) & (F.size("isr") < rf)).count()
    # (the brokers' logs add the stretches the controller's lines left without a leader: not a moment's)
    at_paste = [f for f in pasted.findings if f.kind == "partition.offline" and "taken_at" in f.subject]
    assert sum(f.subject["partitions"] for f in at_paste) == leaderless
    shown = sum(f.subject["partitions"] for f in pasted.findings if f.kind == "partition.under_replicated")
    assert shown == under
    taken = json.loads((SAMPLE_DATA / name / "manifest.json").read_text())["captured_at"][:19].replace(
        "T", " "
    )
    for f in pasted.findings:
        if f.kind in ("partition.under_replicated", "deletion.marked") or f in at_paste:
            assert taken in f.summary and f.evidence[0].startswith("pasted/")
