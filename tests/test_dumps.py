"""The controller's dump lines, typed with what they list (workbench/sources/dumps.py): lines as each
version's log4j layout prints them (`[%d] %p %m (%c)%n`), their listings as the toString the source cites."""

from __future__ import annotations

import json
from pathlib import Path

from pyspark.sql import SparkSession

from workbench.frames import open_bundle
from workbench.sources import dumps

KC = "kafka.controller.KafkaController"


def _bundle(tmp_path: Path, version: str, lines: list[str]) -> Path:
    folder = tmp_path / version / "brokers" / "1" / "logs"
    folder.mkdir(parents=True)
    (folder / "controller.log").write_text("\n".join(lines) + "\n")
    manifest = {"format": "kafka-evidence/1", "kafka_version": version, "brokers": [1]}
    (tmp_path / version / "manifest.json").write_text(json.dumps(manifest))
    return tmp_path / version


def test_all_leaders_in_each_version_s_words(spark: SparkSession, tmp_path: Path) -> None:
    lines = [
        # 0.10.2: TopicAndPartition and no ZkVersion (KafkaController.scala 0.10.2.2 l.1444)
        "[2017-05-01 10:00:00,000] TRACE [Controller 1]: All leaders = ([orders,0],(Leader:1,ISR:1,2,"
        "LeaderEpoch:4,ControllerEpoch:2)),([orders,1],(Leader:-1,ISR:,LeaderEpoch:7,ControllerEpoch:2))"
        f" ({KC})",
        # 1.1-3.1: TopicPartition, ZkVersion
        f"[2019-05-01 10:00:00,000] TRACE [Controller id=1] All leaders = (my-topic-12,(Leader:3,ISR:3,"
        f"LeaderEpoch:0,ZkVersion:5,ControllerEpoch:9)) ({KC})",
        # 3.2+: LeaderRecoveryState (3.6.2 l.2771)
        f"[2024-05-01 10:00:00,000] TRACE [Controller id=1] All leaders = (t-0,(Leader:2,ISR:2,1,"
        f"LeaderRecoveryState:RECOVERED,LeaderEpoch:8,ZkVersion:11,ControllerEpoch:3)) ({KC})",
        f"[2024-05-01 10:00:01,000] TRACE [Controller id=1] All leaders =  ({KC})",  # nothing cached
    ]
    bundle = open_bundle(_bundle(tmp_path, "2.8.2", lines), spark)
    rows = dumps.leaders_listed(bundle.cluster_events).orderBy("ts", "topic", "partition").collect()
    got = [
        (r.topic, r.partition, r.leader, r.isr, r.leader_epoch, r.zk_version, r.controller_epoch)
        for r in rows
    ]
    assert got == [
        ("orders", 0, 1, [1, 2], 4, None, 2),
        ("orders", 1, -1, [], 7, None, 2),
        ("my-topic", 12, 3, [3], 0, 5, 9),
        ("t", 0, 2, [2, 1], 8, 11, 3),
    ]
    assert {r.line_no for r in rows} == {1, 2, 3} and all(r.broker_id == 1 for r in rows)


def test_preferred_replicas_by_broker(spark: SparkSession, tmp_path: Path) -> None:
    lines = [
        # Map[Int, Map[TopicPartition, Seq[Int]]] (KafkaController.scala 1.1.1 l.980)
        "[2019-05-01 10:00:00,000] DEBUG [Controller id=1] Preferred replicas by broker Map(2 -> Map("
        f"a-b-1 -> Vector(2, 3), a-b-0 -> Vector(2, 1)), 3 -> Map(c-4 -> List(3))) ({KC})",
        f"[2019-05-01 10:05:00,000] DEBUG [Controller id=1] Preferred replicas by broker Map() ({KC})",
    ]
    bundle = open_bundle(_bundle(tmp_path, "1.1.1", lines), spark)
    rows = dumps.preferred_listed(bundle.cluster_events).orderBy("topic", "partition").collect()
    assert [(r.topic, r.partition, r.replicas, r.preferred) for r in rows] == [
        ("a-b", 0, [2, 1], 2),
        ("a-b", 1, [2, 3], 2),
        ("c", 4, [3], 3),
    ]
