"""Pasted `kafka-topics --describe` (sources/kafka_topics.py), in the layouts TopicCommand printed from
0.10.2 to 3.9 (templates and their source lines in docs/pasted-evidence.md), written here by hand."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from conftest import SAMPLE_DATA, with_pastes
from pyspark.sql import SparkSession

from workbench.analysis.triage import Triage
from workbench.frames import open_bundle

T, S = "\t", " "  # S: a trailing space, as 2.4+ prints after an empty list
ZK_2_8 = f"""\
[kafka@b1 ~]$ bin/kafka-topics.sh --zookeeper zk1:2181 --describe
Topic: orders{T}TopicId: qV3nX8cTQ2mB1d0pL9xZkw{T}PartitionCount: 2{T}ReplicationFactor: 3{T}\
Configs: min.insync.replicas=2,cleanup.policy=compact,delete
{T}Topic: orders{T}Partition: 0{T}Leader: 1{T}Replicas: 1,2,3{T}Isr: 1,2,3
{T}Topic: orders{T}Partition: 1{T}Leader: none{T}Replicas: 2,3,1{T}Isr: 2
Topic: payments-old{T}PartitionCount: 1{T}ReplicationFactor: 2{T}Configs: {T}MarkedForDeletion: true
{T}Topic: payments-old{T}Partition: 0{T}Leader: 4{T}Replicas: 4,5{T}Isr: 4,5{T}MarkedForDeletion: true
"""
# 0.10.2 over ZooKeeper, copied from a terminal: its tabs are spaces now, and no space after the colons
ZK_0_10 = """\
Topic:clicks    PartitionCount:2        ReplicationFactor:2     Configs:
        Topic: clicks   Partition: 0    Leader: -1      Replicas: 3,1   Isr: 3
        Topic: clicks   Partition: 1    Leader: 1       Replicas: 1,3   Isr: 1,3
"""
# 3.8 over a KRaft cluster, a reassignment in flight; then an under-replicated filter: no topic line
KRAFT_3_8 = f"""\
Topic: orders{T}TopicId: qV3nX8cTQ2mB1d0pL9xZkw{T}PartitionCount: 1{T}ReplicationFactor: 3{T}Configs:{S}
{T}Topic: orders{T}Partition: 0{T}Leader: 2{T}Replicas: 4,2,3,1{T}Isr: 2,3,1{T}Adding Replicas: 4{T}\
Removing Replicas: 1{T}Elr: {T}LastKnownElr:{S}
$ kafka-topics.sh --bootstrap-server b1:9092 --describe --under-replicated-partitions
[2024-03-12 10:07:01,123] WARN [AdminClient clientId=adminclient-1] The DescribeTopicPartitions API is not \
supported, using Metadata API to describe topics. (org.apache.kafka.clients.admin.KafkaAdminClient)
{T}Topic: clicks{T}Partition: 1{T}Leader: none{T}Replicas: 1,2,3{T}Isr: 1{T}Elr: N/A{T}LastKnownElr: N/A
Error while executing topic command : Topic 'gone' does not exist as expected
{T}Topic: clicks{T}Partition: 2{T}Leader: 3{T}Replicas: 3,1,2{T}Is
r: 3
"""


def _bundle(tmp: Path, pastes: dict[str, str], said: dict[str, Any]) -> Path:
    return with_pastes(tmp, "handmade-2.8", pastes, said)


def _rows(spark: SparkSession, tmp: Path, text: str) -> tuple[list[Any], set[tuple[Any, ...]]]:
    b = open_bundle(_bundle(tmp, {"describe.txt": text}, {"taken_at": "2024-03-12T10:30:00Z"}), spark)
    rows = sorted(b.partition_descriptions.collect(), key=lambda r: r.line_no)
    bad = {(r.position, r.reason) for r in b.bad_records.where("source = 'kafka-topics'").collect()}
    return rows, bad


@pytest.mark.slow
def test_over_zookeeper_at_2_8(spark: SparkSession, tmp_path: Path) -> None:
    rows, bad = _rows(spark, tmp_path, ZK_2_8)
    got = [
        (r.line_no, r.topic, r.topic_id, r.partition, r.leader, r.replicas, r.isr, r.marked_for_deletion)
        for r in rows
    ]
    assert got == [
        (3, "orders", "qV3nX8cTQ2mB1d0pL9xZkw", 0, 1, [1, 2, 3], [1, 2, 3], None),
        (4, "orders", "qV3nX8cTQ2mB1d0pL9xZkw", 1, None, [2, 3, 1], [2], None),
        (6, "payments-old", None, 0, 4, [4, 5], [4, 5], True),
    ]
    assert rows[0].configs == {"min.insync.replicas": "2", "cleanup.policy": "compact,delete"}
    assert (rows[0].partition_count, rows[0].replication_factor) == (2, 3)
    assert rows[2].configs is None and rows[0].adding_replicas is None and rows[0].elr is None
    assert all(r.file == "pasted/describe.txt" and r.taken_at == datetime(2024, 3, 12, 10, 30) for r in rows)
    assert bad == set()


def test_before_2_4_copied_from_a_terminal(spark: SparkSession, tmp_path: Path) -> None:
    rows, bad = _rows(spark, tmp_path, ZK_0_10)
    assert [(r.topic, r.partition, r.leader, r.replicas, r.isr, r.partition_count) for r in rows] == [
        ("clicks", 0, -1, [3, 1], [3], 2),
        ("clicks", 1, 1, [1, 3], [1, 3], 2),
    ]
    assert rows[0].topic_id is None and bad == set()


def test_kraft_at_3_8_with_a_filter_and_what_is_not_output(spark: SparkSession, tmp_path: Path) -> None:
    rows, bad = _rows(spark, tmp_path, KRAFT_3_8)
    first, clicks = rows
    assert (first.replicas, first.adding_replicas, first.removing_replicas) == ([4, 2, 3, 1], [4], [1])
    assert (first.elr, first.last_known_elr, first.configs) == ([], [], None)
    # printed by --under-replicated-partitions: no topic line, so nothing of the topic is known
    assert (clicks.topic, clicks.partition, clicks.leader, clicks.isr) == ("clicks", 1, None, [1])
    assert (clicks.topic_id, clicks.partition_count, clicks.elr) == (None, None, None)
    assert (first.shown_by, clicks.shown_by) == (None, "under-replicated-partitions")
    assert bad == {
        (6, "an error the command printed"),
        (7, "not a line of kafka-topics --describe (0.10-3.9)"),  # a terminal's wrap cut it
        (8, "not a line of kafka-topics --describe (0.10-3.9)"),
    }


@pytest.mark.slow
def test_unavailable_partitions_with_a_leader_not_live(spark: SparkSession, tmp_path: Path) -> None:
    """--unavailable-partitions lists a partition whose leader is not a live broker (TopicCommand
    hasUnavailablePartitions, 2.8.2 l.152-154): offline, though a leader is printed; the same line under a
    plain --describe is a partition served."""
    from workbench.analysis import leaderless
    from workbench.analysis.findings import Coverage

    line = f"{T}Topic: orders{T}Partition: 1{T}Leader: 2{T}Replicas: 2,1{T}Isr: 2\n"
    said = {"taken_at": "2024-03-12T10:30:00Z"}
    found = {}
    for flag in ("--unavailable-partitions", ""):
        paste = f"$ kafka-topics.sh --zookeeper zk1:2181 --describe {flag}\n{line}"
        b = open_bundle(_bundle(tmp_path / (flag or "plain"), {"describe.txt": paste}, said), spark)
        found[flag] = [
            f for f in leaderless.ANALYSIS.findings(b, Coverage()) if f.kind == "partition.offline"
        ]
    (offline,) = found["--unavailable-partitions"]
    assert offline.subject == {"partitions": 1, "taken_at": "2024-03-12T10:30:00Z", "broker": 2}
    assert "it printed leader 2, a broker not live then" in offline.summary
    assert offline.evidence == ("pasted/describe.txt:2",)
    assert found[""] == []


GROUPS = """\
GROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             CONSUMER-ID
billing         orders          0          1200            1250            50              -
"""  # kafka-consumer-groups --describe: a kind not read


@pytest.mark.slow
def test_topic_lines_alone_and_files_of_other_kinds(spark: SparkSession, tmp_path: Path) -> None:
    overrides = f"Topic: orders{T}PartitionCount: 3{T}ReplicationFactor: 3{T}Configs: retention.ms=1000\n"
    b = open_bundle(
        _bundle(tmp_path, {"a.txt": overrides, "b.txt": GROUPS}, {}),
        spark,
    )
    (row,) = b.partition_descriptions.collect()
    assert (row.topic, row.partition, row.replicas, row.configs) == (
        "orders",
        None,
        None,
        {"retention.ms": "1000"},
    )
    assert row.taken_at is None
    assert b.bad_records.where("source = 'kafka-topics'").count() == 0
    (unread,) = b.bad_records.where("source = 'pasted'").collect()  # a kind not read yet: said, not dropped
    assert (unread.file, unread.position, unread.raw) == (
        "pasted/b.txt",
        None,
        GROUPS.splitlines()[0],
    )


def describe(znodes_jsonl: Path, version: str = "2.8") -> str:
    """What kafka-topics --describe prints of a ZooKeeper tree at Kafka `version`, topics in name order:
    over ZooKeeper before 3.0 (TopicCommand.scala @0.10.2.2 l.206-221: no space after the topic line's
    colons, the state's leader as it is; @2.4.1 and @2.8.2 l.107-170: `Leader: none`, TopicId from 2.8,
    MarkedForDeletion on every line of a marked topic, no reassignment), over a broker from 3.0 (the
    reassignment's Adding/Removing Replicas, no MarkedForDeletion)."""
    nodes = {}
    for line in znodes_jsonl.read_text(encoding="utf-8").splitlines():
        z = json.loads(line)
        nodes[z["path"]] = z["data"]
    major = tuple(int(x) for x in version.split(".")[:2])
    over_zk = major < (3, 0)
    out = []
    for path in sorted(p for p in nodes if p.count("/") == 3 and p.startswith("/brokers/topics/")):
        topic, data = path.rsplit("/", 1)[1], json.loads(nodes[path] or "{}")
        parts = {int(p): r for p, r in data.get("partitions", {}).items()}
        marked = over_zk and major >= (0, 11) and f"/admin/delete_topics/{topic}" in nodes
        rf = len(parts[0]) if 0 in parts else 0
        if major < (2, 4):
            out.append(
                f"Topic:{topic}{T}PartitionCount:{len(parts)}{T}ReplicationFactor:{rf}{T}Configs:"
                + (f"{T}MarkedForDeletion:true" if marked else "")
            )
        else:
            tid = f"{T}TopicId: {data['topic_id']}" if major >= (2, 8) and data.get("topic_id") else ""
            out.append(
                f"Topic: {topic}{tid}{T}PartitionCount: {len(parts)}{T}ReplicationFactor: {rf}{T}Configs: "
                + (f"{T}MarkedForDeletion: true" if marked else "")
            )
        for p, replicas in sorted(parts.items()):
            state = json.loads(nodes.get(f"{path}/partitions/{p}/state") or '{"leader": -1, "isr": []}')
            leader = state["leader"] if major < (2, 4) or state["leader"] != -1 else "none"
            line = (
                f"{T}Topic: {topic}{T}Partition: {p}{T}Leader: {leader}{T}Replicas: "
                f"{','.join(map(str, replicas))}{T}Isr: {','.join(map(str, state['isr']))}"
            )
            adding = (data.get("adding_replicas") or {}).get(str(p), [])
            removing = (data.get("removing_replicas") or {}).get(str(p), [])
            if not over_zk and (adding or removing):
                line += f"{T}Adding Replicas: {','.join(map(str, adding))}{T}Removing Replicas: "
                line += ",".join(map(str, removing))
            out.append(line + (f"{T}MarkedForDeletion: true" if marked and major >= (2, 4) else ""))
    return "\n".join(out) + "\n"


def describe_2_8(znodes_jsonl: Path) -> str:
    return describe(znodes_jsonl, "2.8")


@pytest.mark.slow
def test_the_mismatch_found_from_describe_where_zookeeper_is_missing(
    spark: SparkSession, triaged: Callable[[str], Triage], tmp_path: Path
) -> None:
    """Without ZooKeeper's tree, the TopicIds describe printed stand in for it: the same mismatches."""
    from workbench.analysis.triage import triage

    sample = SAMPLE_DATA / "topicid-mismatch-2.8"
    bundle = tmp_path / "bundle"
    shutil.copytree(sample, bundle)
    shutil.rmtree(bundle / "zk")
    (bundle / "pasted").mkdir()
    (bundle / "pasted" / "describe.txt").write_text(describe_2_8(sample / "zk" / "znodes.jsonl"))

    def mismatched(result: Any) -> set[tuple[Any, ...]]:
        return {
            (f.subject["topic"], f.subject["broker"], tuple(f.subject["partitions"]), f.subject["topic_id"])
            for f in result.findings
            if f.kind == "topic_id.mismatch"
        }

    collected = mismatched(triaged(sample.name))
    pasted = triage(open_bundle(bundle, spark), only=["topic_ids"])
    assert mismatched(pasted) == collected and collected
    (finding,) = [f for f in pasted.findings if f.kind == "topic_id.mismatch"][:1]
    assert finding.evidence[0].startswith("pasted/describe.txt:") and "a time not known" in finding.summary
    assert "kafka-topics --describe" in " ".join(pasted.coverage["topic_ids"].used)
