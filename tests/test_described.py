"""What a paste shows at its moment, for a bundle without ZooKeeper's evidence (model/described.py, worded
by health, leaderless and deletion): partitions without a leader and under-replicated by TopicCommand's own
rules, topics marked for deletion; and nothing of it where the paste shows a healthy cluster, or where
ZooKeeper's history tells it over time."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import with_pastes
from pyspark.sql import SparkSession

from workbench.analysis import deletion, health, leaderless
from workbench.analysis.triage import Triage, triage
from workbench.cli.render import triage_text
from workbench.frames import open_bundle

T = "\t"
INCIDENT = f"""\
$ kafka-topics.sh --zookeeper zk1:2181 --describe
Topic: orders{T}TopicId: qV3nX8cTQ2mB1d0pL9xZkw{T}PartitionCount: 4{T}ReplicationFactor: 3{T}Configs:
{T}Topic: orders{T}Partition: 0{T}Leader: 1{T}Replicas: 1,2,3{T}Isr: 1
{T}Topic: orders{T}Partition: 1{T}Leader: none{T}Replicas: 2,3,1{T}Isr: 2
{T}Topic: orders{T}Partition: 2{T}Leader: 3{T}Replicas: 3,1,2{T}Isr: 3,1
{T}Topic: orders{T}Partition: 3{T}Leader: 2{T}Replicas: 4,2,3,1{T}Isr: 2,3,1{T}Adding Replicas: 4{T}\
Removing Replicas: 1
Topic: payments-old{T}PartitionCount: 1{T}ReplicationFactor: 2{T}Configs: {T}MarkedForDeletion: true
{T}Topic: payments-old{T}Partition: 0{T}Leader: 1{T}Replicas: 1,2{T}Isr: 1,2{T}MarkedForDeletion: true
"""
HEALTHY = f"""\
Topic:clicks{T}PartitionCount:2{T}ReplicationFactor:2{T}Configs:
{T}Topic: clicks{T}Partition: 0{T}Leader: 1{T}Replicas: 1,2{T}Isr: 2,1
{T}Topic: clicks{T}Partition: 1{T}Leader: 2{T}Replicas: 2,1{T}Isr: 2,1
"""
TRANSCRIPT = """\
[zk: zk1:2181(CONNECTED) 0] ls /admin/delete_topics
[clicks-old]
"""


def _bundle(tmp: Path, sample: str, pastes: dict[str, str], taken_at: str | None) -> Path:
    return with_pastes(tmp, sample, pastes, {"taken_at": taken_at} if taken_at else None)


class _Found:
    """The findings and coverage of the analyses that read what a paste shows (not all of triage's)."""

    def __init__(self, bundle: Any) -> None:
        found = triage(bundle, only=[a.ANALYSIS.name for a in (health, leaderless, deletion)])
        self.findings, self.coverage = found.findings, found.coverage


def _of(result: Any, prefix: str) -> list[Any]:
    return [f for f in result.findings if f.kind.startswith(prefix)]


@pytest.mark.slow
def test_a_pasted_describe_and_transcript_at_their_moment(spark: SparkSession, tmp_path: Path) -> None:
    pastes = {"describe.txt": INCIDENT, "zk.txt": TRANSCRIPT}
    result = _Found(
        open_bundle(_bundle(tmp_path, "handmade-2.8", pastes, "2024-03-12T10:41:00+01:00"), spark)
    )
    (offline,) = _of(result, "partition.offline")
    assert offline.subject == {"partitions": 1, "taken_at": "2024-03-12T09:41:00Z"}
    assert "orders 1" in offline.summary and "2024-03-12 09:41:00 UTC" in offline.summary
    assert offline.evidence == ("pasted/describe.txt:4",)
    # orders 3 is being reassigned: 4 is added, so its replication factor is 3 and its ISR of 3 is full
    under = sorted(_of(result, "partition.under_replicated"), key=lambda f: f.subject["brokers"])
    assert [(f.subject["brokers"], f.subject["partitions"]) for f in under] == [([2], 1), ([2, 3], 1)]
    assert {f.evidence for f in under} == {("pasted/describe.txt:3",), ("pasted/describe.txt:5",)}
    marked = {f.subject["topic"]: f for f in _of(result, "deletion.marked")}
    assert set(marked) == {"payments-old", "clicks-old"}
    assert marked["clicks-old"].evidence == ("pasted/zk.txt:1",)
    assert "MarkedForDeletion" in marked["payments-old"].summary
    for check in ("health", "leaderless", "deletion"):
        assert "pasted output" in result.coverage[check].used, check
    said = triage_text(Triage(result.findings, result.coverage, 0)).splitlines()
    (health_line,) = [line for line in said if line.startswith("  health")]
    assert health_line.endswith("read from pastes instead: kafka-topics --describe (pasted)")


@pytest.mark.slow
def test_nothing_where_the_paste_shows_health_or_zookeeper_tells_it(
    triaged: Callable[[str], Triage], spark: SparkSession, tmp_path: Path
) -> None:
    healthy = _Found(open_bundle(_bundle(tmp_path / "1", "handmade-2.8", {"d.txt": HEALTHY}, None), spark))
    assert not _of(healthy, "partition.") and not _of(healthy, "deletion.marked")
    # With ZooKeeper's tree and history, they tell the partitions and markers over time: a paste adds none
    theirs = {k.name for a in (health, leaderless, deletion) for k in a.ANALYSIS.kinds}
    collected = [f.kind for f in triaged("deletion-stuck-2.8").findings if f.kind in theirs]
    both = _Found(
        open_bundle(_bundle(tmp_path / "2", "deletion-stuck-2.8", {"d.txt": INCIDENT}, None), spark)
    )
    assert collected and sorted(f.kind for f in both.findings) == sorted(collected)


# kafka-log-dirs --describe as LogDirsCommand prints it: keys in insertion order to 3.5 (Json.encodeAsString
# of Scala Maps, 2.8.2 l.58-80), in HashMap order from 3.6 (ObjectMapper, 3.6.2 LogDirsCommand l.104-144)
ORDERS_0 = '{"partition":"orders-0","size":52428800,"offsetLag":0,"isFuture":false}'
FUTURE = '{"partition":"orders-0","size":1048576,"offsetLag":48,"isFuture":true}'
FAILED = "org.apache.kafka.common.errors.KafkaStorageException"
LOG_DIRS_2_8 = f"""\
Querying brokers for log directories information
Received log directory information from brokers 1,2
{{"version":1,"brokers":[{{"broker":1,"logDirs":[{{"logDir":"/data/kafka-1","error":null,"partitions":[{ORDERS_0}]}},\
{{"logDir":"/data/kafka-2","error":"{FAILED}","partitions":[]}}]}},{{"broker":2,"logDirs":[{{"logDir":"/data/kafka-1",\
"error":null,"partitions":[{FUTURE}]}}]}}]}}
"""
LOG_DIRS_3_6 = f"""\
Querying brokers for log directories information
Received log directory information from brokers 1,2
{{"brokers":[{{"broker":1,"logDirs":[{{"partitions":[{ORDERS_0}],"error":null,"logDir":"/data/kafka-1"}},{{"partitions":[],\
"error":"{FAILED}","logDir":"/data/kafka-2"}}]}},{{"broker":2,"logDirs":[{{"partitions":[{FUTURE}],"error":null,\
"logDir":"/data/kafka-1"}}]}}],"version":1}}
"""


@pytest.mark.slow
def test_kafka_log_dirs_in_both_key_orders(spark: SparkSession, tmp_path: Path) -> None:
    cut = LOG_DIRS_3_6[: LOG_DIRS_3_6.index('"version"')] + "\n"  # the paste ends inside the JSON
    pastes = {"a.txt": LOG_DIRS_2_8, "b.txt": LOG_DIRS_3_6, "c.txt": cut}
    b = open_bundle(_bundle(tmp_path, "handmade-2.8", pastes, "2024-03-12T09:41:00Z"), spark)
    rows = {}
    for r in b.log_dir_descriptions.collect():
        rows.setdefault(r.file, set()).add(
            (
                r.broker_id,
                r.log_dir,
                r.error,
                r.topic,
                r.partition,
                r.size,
                r.offset_lag,
                r.is_future,
                r.line_no,
            )
        )
    assert (
        rows["pasted/a.txt"]
        == rows["pasted/b.txt"]
        == {
            (1, "/data/kafka-1", None, "orders", 0, 52428800, 0, False, 3),
            (1, "/data/kafka-2", FAILED, None, None, None, None, None, 3),
            (2, "/data/kafka-1", None, "orders", 0, 1048576, 48, True, 3),
        }
    )
    (bad,) = b.bad_records.where("source = 'kafka-log-dirs'").collect()
    assert (bad.file, bad.position) == ("pasted/c.txt", 3) and "cut or wrapped" in bad.reason
    result = _Found(b)
    failed = [f for f in result.findings if f.kind == "log_dir.offline"]
    assert [(f.subject["broker"], f.subject["log_dir"], f.evidence) for f in failed] == [
        (1, "/data/kafka-2", ("pasted/a.txt:3",)),
        (1, "/data/kafka-2", ("pasted/b.txt:3",)),
    ]
    assert "2024-03-12 09:41:00 UTC" in failed[0].summary


@pytest.mark.slow
def test_a_deletion_held_by_a_broker_a_transcript_shows_unregistered(
    spark: SparkSession, tmp_path: Path
) -> None:
    """A transcript made without Kafka's chroot marks orders for deletion and lists broker 1 alone as
    registered; broker 2 still holds orders' replicas: the deletion waits for broker 2."""
    paste = (
        "[zk: zk1:2181(CONNECTED) 0] ls /kafka/admin/delete_topics\n[orders]\n"
        "[zk: zk1:2181(CONNECTED) 1] ls /kafka/brokers/ids\n[1]\n"
    )
    bundle = open_bundle(_bundle(tmp_path, "handmade-2.8", {"zk.txt": paste}, "2024-03-12T10:41:00Z"), spark)
    (marked,) = _of(_Found(bundle), "deletion.marked")
    assert marked.subject["topic"] == "orders" and marked.subject["brokers_down"] == [2]
    assert marked.evidence == ("pasted/zk.txt:1", "pasted/zk.txt:3")
    assert "Broker(s) 2 hold replicas of it and were not registered when `ls /brokers/ids`" in marked.summary
