"""Log dirs read as Kafka reads them: the real 3.1 log dir, and Kafka's own error cases."""

from __future__ import annotations

import base64
import uuid
from pathlib import Path

from pyspark.sql import SparkSession

from workbench.frames import open_bundle


def test_real_log_dir_loads_exactly(spark: SparkSession, real_evidence: Path) -> None:
    root = real_evidence / "datadir-kafka-3.1" / "data" / "kafka-logs"
    b = open_bundle(root, spark)
    ids = {(r.dir_name, r.topic_id) for r in b.partition_metadata.collect()}
    on_disk = {
        (p.parent.name, p.read_text().split("topic_id: ")[1].strip())
        for p in root.glob("*/partition.metadata")
    }
    assert ids == on_disk and len(ids) == 6
    assert ("design1-0", "RJI454yPScCX7IO2JuPZvQ") in ids  # differs from ZooKeeper's id (FORMATS.md B)
    for r in b.partition_metadata.collect():
        raw = base64.urlsafe_b64decode(r.topic_id + "==")
        assert r.topic_uuid == str(uuid.UUID(bytes=raw))
    cp = b.checkpoints.where("kind = 'recovery-point-offset'")
    assert cp.count() == 61
    assert cp.where("topic = '__consumer_offsets' and partition = 22").first().offset == 1912
    assert b.checkpoints.where("kind in ('log-start-offset', 'cleaner-offset')").count() == 0
    le = {(r.topic, r.partition, r.epoch, r.start_offset) for r in b.leader_epochs.collect()}
    assert ("new_topic", 0, 0, 2) in le and len(le) == 6
    (meta,) = b.meta_properties.collect()
    assert (meta.version, meta.cluster_id, meta.stored_broker_id) == (0, "4fi2MkU0Ql2L0cPRncY20Q", 0)
    assert meta.written == "Tue Apr 26 09:11:39 MDT 2022"
    files = b.datadir_files.count()
    assert files == sum(1 for p in root.rglob("*") if p.is_file())
    assert b.bad_records.count() == 0


def _write(root: Path, rel: str, text: str) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text, encoding="utf-8")


def test_kafka_error_cases(spark: SparkSession, tmp_path: Path) -> None:
    root = tmp_path / "kafka-logs"
    _write(
        root,
        "meta.properties",
        "#\n#Tue Mar 12 09:58:01 UTC 2024\nnode.id=2\nversion=1\ncluster.id=abc\nnode.id : 3\nbare\n",
    )  # a key given twice keeps its last value, as java.util.Properties does
    _write(root, "replication-offset-checkpoint", "0\n3\norders 0 10\norders 1 11\n")  # count mismatch
    _write(root, "recovery-point-offset-checkpoint", "0\n1\norders 0 9\n")
    _write(root, "log-start-offset-checkpoint", "")  # 0 bytes: valid and empty
    _write(root, "cleaner-offset-checkpoint", "1\n0\n")  # unknown version
    _write(root, "orders-0/partition.metadata", "version: 1\ntopic_id: 3hQ0cH2eRw2vN1yQpLm9Dg")
    _write(root, "orders-1/partition.metadata", "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA")
    _write(root, "orders-2/partition.metadata", "version:0\ntopic_id: 3hQ0cH2eRw2vN1yQpLm9Dg")
    _write(root, "orders-3/partition.metadata", "")
    _write(
        root,
        "orders-4.5f0e8a3b2c1d4e6f8a9b0c1d2e3f4a5b-delete/partition.metadata",
        "version: 0\ntopic_id: 3hQ0cH2eRw2vN1yQpLm9Dg\n",
    )
    _write(root, "orders-4.5f0e8a3b2c1d4e6f8a9b0c1d2e3f4a5b-delete/leader-epoch-checkpoint", "0\n1\n0 0\n")
    _write(root, "orders-5.0dd3eb404c004906b58811b32ee104de-future/leader-epoch-checkpoint", "0\n1\n0 x\n")
    _write(root, "orders-6.0dd3eb404c004906b58811b32ee104de-stray/00000000000000000000.log", "")
    _write(root, "lost+found/x", "")
    b = open_bundle(root, spark)

    reasons = {(Path(r.file).parent.name, r.reason) for r in b.bad_records.collect()}
    f = str(root)
    assert reasons == {
        (
            "kafka-logs",
            f"Expected 3 entries in checkpoint file ({f}/replication-offset-checkpoint), but found only 2",
        ),
        ("kafka-logs", f"Unrecognized version of the checkpoint file ({f}/cleaner-offset-checkpoint): 1"),
        ("orders-0", f"Unrecognized version of partition metadata file ({f}/orders-0/partition.metadata): 1"),
        ("orders-1", f"Invalid topic ID in partition metadata file ({f}/orders-1/partition.metadata)"),
        ("orders-2", f"Malformed line in checkpoint file ({f}/orders-2/partition.metadata): 'version:0'"),
        ("orders-3", "empty file; Kafka cannot read it"),
        (
            "orders-5.0dd3eb404c004906b58811b32ee104de-future",
            f"Malformed line in checkpoint file ({f}/orders-5.0dd3eb404c004906b58811b32ee104de-future/"
            "leader-epoch-checkpoint): '0 x'",
        ),
    }
    states = {(r.dir_name, r.topic, r.partition, r.dir_state) for r in b.datadir_files.collect()}
    assert ("orders-4.5f0e8a3b2c1d4e6f8a9b0c1d2e3f4a5b-delete", "orders", 4, "delete") in states
    assert ("orders-5.0dd3eb404c004906b58811b32ee104de-future", "orders", 5, "future") in states
    assert ("orders-6.0dd3eb404c004906b58811b32ee104de-stray", "orders", 6, "stray") in states
    assert ("lost+found", None, None, "unrecognized") in states
    (pm,) = b.partition_metadata.collect()
    assert (pm.topic, pm.partition, pm.dir_state) == ("orders", 4, "delete")
    (meta,) = b.meta_properties.collect()
    assert (meta.version, meta.stored_broker_id, meta.cluster_id) == (1, 3, "abc")
    assert [(r.kind, r.offset) for r in b.checkpoints.collect()] == [("recovery-point-offset", 9)]
