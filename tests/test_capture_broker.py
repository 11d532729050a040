"""The broker-side collector: real log dirs and log files in, a bundle Spark can open out."""

from __future__ import annotations

import base64
import gzip
import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from conftest import REPO
from pyspark.sql import SparkSession

from workbench.bundle import LISTING, write_listing
from workbench.capture.broker import VANISHED, capture_broker, copy_logs, copy_metadata, main
from workbench.frames import open_bundle
from workbench.manifest import BundleError

CLUSTER_ID = "Xk3mP0aLQ2i4v9YtQ8bW1g"
DELETE_DIR = "orders-1.9c2d1e0f3a4b5c6d7e8f9a0b1c2d3e4f-delete"  # in every log dir made below
FUTURE_DIR = "payments-0.0f1e2d3c4b5a69788796a5b4c3d2e1f0-future"  # kafka-reassign-partitions between dirs
SEGMENT = "00000000000000000000"
INDEX_BYTES = 10 * 1024 * 1024  # Kafka preallocates index files (segment.index.bytes); sparse here
LOG_LINE = "[2024-03-12 10:00:00,0{:02d}] INFO [KafkaServer id={}] started (kafka.server.KafkaServer)\n"


def topic_id() -> str:
    """A topic id as Kafka's Uuid.toString prints it: url-safe base64 without padding, 22 chars."""
    return base64.urlsafe_b64encode(uuid.uuid4().bytes).rstrip(b"=").decode()


def _write(path: Path, data: str | bytes, mtime_ns: int = 1_710_237_600_123_456_789) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    os.utime(path, ns=(mtime_ns, mtime_ns))


def make_log_dir(root: Path, broker_id: int, partitions: tuple[str, ...]) -> dict[str, str]:
    """A log dir as a running ZooKeeper-mode 2.8 broker leaves it; returns {partition dir: topic id}."""
    meta = f"#\n#Tue Mar 12 09:58:01 UTC 2024\ncluster.id={CLUSTER_ID}\nversion=0\nbroker.id={broker_id}\n"
    _write(root / "meta.properties", meta)
    live = [p for p in partitions if "." not in p]
    entries = "".join(f"{p.rsplit('-', 1)[0]} {p.rsplit('-', 1)[1]} 10\n" for p in live)
    for name in ("replication-offset-checkpoint", "recovery-point-offset-checkpoint"):
        _write(root / name, f"0\n{len(live)}\n{entries}")
    _write(root / "log-start-offset-checkpoint", "0\n0\n")
    _write(root / "cleaner-offset-checkpoint", "0\n1\n__consumer_offsets 0 3\n")
    _write(root / ".lock", b"")
    ids = {}
    for i, p in enumerate((*partitions, DELETE_DIR)):
        ids[p] = topic_id()
        d = root / p
        _write(d / "partition.metadata", f"version: 0\ntopic_id: {ids[p]}", 1_710_237_000_000_000_001 + i)
        _write(d / "leader-epoch-checkpoint", "0\n1\n0 0\n")
        seg = ".log.deleted" if p == DELETE_DIR else ".log"
        _write(d / (SEGMENT + seg), os.urandom(4096))
        _write(d / f"{SEGMENT}.timeindex", b"")
        with open(d / f"{SEGMENT}.index", "wb") as f:
            f.truncate(INDEX_BYTES)
    return ids


def make_logs(logs: Path, broker_id: int) -> None:
    """Kafka's logs dir: the log4j appenders (current, rotated, gzipped) and what else lands there, each
    file's line its own (files with the same bytes are read once)."""
    for i, name in enumerate(("server.log", "server.log.2024-03-12-09", "controller.log", "state-change.log",
                 "log-cleaner.log", "kafka-request.log", "kafka-authorizer.log",
                 "kafkaServer.out", "kafkaServer-gc.log", "kafkaServer-gc.log.0.current")):  # fmt: skip
        _write(logs / name, LOG_LINE.format(i, broker_id))
    _write(logs / "controller.log.2024-03-11-09.gz", gzip.compress(LOG_LINE.format(50, broker_id).encode()))


def make_broker(base: Path, broker_id: int) -> tuple[list[Path], Path]:
    dirs = [base / f"b{broker_id}" / "data1", base / f"b{broker_id}" / "data2"]
    make_log_dir(dirs[0], broker_id, ("orders-0", "__consumer_offsets-0"))
    make_log_dir(dirs[1], broker_id, ("payments-0", FUTURE_DIR))
    logs = base / f"b{broker_id}" / "logs"
    make_logs(logs, broker_id)
    return dirs, logs


def find_listing(root: Path) -> set[str]:
    out = subprocess.run(
        ["find", str(root), "-type", "f", "-printf", "%P\\t%s\\t%T@\\n"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return set(out.splitlines())


def tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_listing_equals_find_and_only_metadata_is_copied(tmp_path: Path) -> None:
    dirs, logs = make_broker(tmp_path, 1)
    out = tmp_path / "bundle"
    part = capture_broker(1, dirs, logs, out)
    for n, root in enumerate(dirs):
        dest = out / "brokers" / "1" / "datadirs" / str(n)
        listing = (dest / LISTING).read_text().splitlines()
        assert set(listing) == find_listing(root) and len(listing) == len(set(listing))
        copied = {p.relative_to(dest).as_posix() for p in dest.rglob("*") if p.is_file()} - {LISTING}
        expected = {
            p.relative_to(root).as_posix()
            for p in root.rglob("*")
            if p.name in ("partition.metadata", "leader-epoch-checkpoint", "meta.properties")
            or p.name.endswith("-checkpoint")
        }
        assert copied == expected and f"{DELETE_DIR}/partition.metadata" in copied
        for rel in copied:
            src, dst = root / rel, dest / rel
            assert dst.read_bytes() == src.read_bytes()
            assert dst.stat().st_mtime_ns == src.stat().st_mtime_ns
    d0 = out / "brokers" / "1" / "datadirs" / "0"
    assert (d0 / "__consumer_offsets-0" / "partition.metadata").is_file()
    assert (out / "brokers" / "1" / "datadirs" / "1" / FUTURE_DIR / "leader-epoch-checkpoint").is_file()
    assert f"orders-0/{SEGMENT}.index\t{INDEX_BYTES}\t" in (d0 / LISTING).read_text()
    assert not list(out.rglob(f"{SEGMENT}.*")) and not list(out.rglob(".lock"))
    assert (part["log_dirs"], part["files_listed"], part["metadata_files"]) == (2, 42, 22)
    assert part["dirs"][1]["path"] == str(dirs[1]) and part["skipped"] == []


def test_kafka_logs_are_copied_and_other_files_named(tmp_path: Path) -> None:
    dirs, logs = make_broker(tmp_path, 1)
    out = tmp_path / "bundle"
    part = capture_broker(1, dirs, logs, out)
    copied = tree(out / "brokers" / "1" / "logs")
    assert set(copied) == {
        "server.log", "server.log.2024-03-12-09", "controller.log", "controller.log.2024-03-11-09.gz",
        "state-change.log", "log-cleaner.log", "kafka-request.log", "kafka-authorizer.log",
    }  # fmt: skip
    for name, data in copied.items():
        assert data == (logs / name).read_bytes()
    assert gzip.decompress(copied["controller.log.2024-03-11-09.gz"]).decode() == LOG_LINE.format(50, 1)
    assert part["logs_not_taken"] == ["kafkaServer-gc.log", "kafkaServer-gc.log.0.current", "kafkaServer.out"]
    assert part["log_files"] == 8
    assert part["bytes_copied"] == sum(map(len, copied.values())) + sum(
        p.stat().st_size
        for p in (out / "brokers" / "1" / "datadirs").rglob("*")
        if p.is_file() and p.name != LISTING
    )


def test_server_properties_secrets_never_reach_the_bundle(tmp_path: Path) -> None:
    dirs, logs = make_broker(tmp_path, 1)
    props = tmp_path / "server.properties"
    props.write_bytes(
        b"# Broker 1, caf\xe9 rack\nbroker.id=1\nlog.dirs=/var/lib/kafka/data1,/var/lib/kafka/data2\n"
        b"ssl.keystore.password=hunter2\n"
        b"listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram."
        b'ScramLoginModule required \\\n    username="admin" \\\n    password="s3cret";\n'
        b"zookeeper.connect=zk1:2181\n"
    )
    out = tmp_path / "bundle"
    part = capture_broker(1, dirs, logs, out, server_properties=props)
    copy = (out / "brokers" / "1" / "server.properties").read_bytes()
    assert copy.startswith(b"# Broker 1, caf\xe9 rack\nbroker.id=1\nlog.dirs=/var/lib/kafka/data1,")
    assert copy.endswith(b"\nzookeeper.connect=zk1:2181\n") and b"ssl.keystore.password=[redacted:" in copy
    assert part["secrets_redacted"] == 2
    for path in [*out.rglob("*"), out / "manifest.json"]:
        if path.is_file():
            data = path.read_bytes()
            assert b"hunter2" not in data and b"s3cret" not in data, path


def test_two_brokers_join_a_bundle_without_disturbing_it(tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    zk = {"path": "/brokers/ids/1", "data": "{}", "encoding": "utf-8"}
    _write(out / "zk" / "znodes.jsonl", json.dumps(zk) + "\n")
    zk_part = {"part": "zk", "hosts": "zk1:2181", "captured_at": "2024-03-12T10:19:00Z"}
    (out / "manifest.json").write_text(
        json.dumps({"format": "kafka-evidence/1", "cluster": "prod", "brokers": [], "parts": [zk_part]})
    )
    before = tree(out / "zk")
    for broker_id in (2, 1):
        capture_broker(broker_id, *make_broker(tmp_path, broker_id), out)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["brokers"] == [1, 2] and manifest["cluster"] == "prod" and manifest["redacted"] is True
    assert [(p["part"], p.get("broker")) for p in manifest["parts"]] == [
        ("zk", None),
        ("broker", 2),
        ("broker", 1),
    ]
    assert manifest["parts"][0] == zk_part and tree(out / "zk") == before
    assert manifest["captured_at"] == manifest["parts"][1]["captured_at"]  # the first part's
    assert sorted(p.name for p in out.iterdir()) == ["brokers", "manifest.json", "zk"]


def test_rerun_replaces_that_brokers_capture_only(tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    dirs, logs = make_broker(tmp_path, 1)
    props = tmp_path / "server.properties"
    props.write_text("broker.id=1\n")
    capture_broker(1, dirs, logs, out, server_properties=props)
    capture_broker(2, *make_broker(tmp_path, 2), out)
    broker2 = tree(out / "brokers" / "2")
    (logs / "server.log.2024-03-12-09").unlink()
    (dirs[0] / "orders-0" / "partition.metadata").unlink()
    part = capture_broker(1, dirs[:1], logs, out)
    b1 = out / "brokers" / "1"
    assert sorted(p.name for p in (b1 / "datadirs").iterdir()) == ["0"]
    assert not (b1 / "logs" / "server.log.2024-03-12-09").exists() and (b1 / "logs" / "server.log").exists()
    assert not (b1 / "datadirs" / "0" / "orders-0" / "partition.metadata").exists()
    assert not (b1 / "server.properties").exists()
    assert tree(out / "brokers" / "2") == broker2
    parts = json.loads((out / "manifest.json").read_text())["parts"]
    assert [p["broker"] for p in parts] == [2, 1] and parts[1] == part and part["log_dirs"] == 1
    assert sorted(p.name for p in out.iterdir()) == ["brokers", "manifest.json"]


def test_vanished_files_are_recorded_not_fatal(tmp_path: Path) -> None:
    root = tmp_path / "data"
    make_log_dir(root, 1, ("orders-0",))
    dest = tmp_path / "copy"
    dest.mkdir()
    write_listing(root, dest / LISTING)
    shutil.rmtree(root / DELETE_DIR)  # Kafka removes a -delete dir after file.delete.delay.ms
    (root / "orders-0" / "leader-epoch-checkpoint").unlink()
    skipped: list[dict[str, str]] = []
    assert copy_metadata(root, dest, skipped)[0] == 6
    assert {s["path"] for s in skipped} == {
        str(root / DELETE_DIR / "leader-epoch-checkpoint"),
        str(root / DELETE_DIR / "partition.metadata"),
        str(root / "orders-0" / "leader-epoch-checkpoint"),
    }
    assert {s["reason"] for s in skipped} == {VANISHED}
    assert (dest / "orders-0" / "partition.metadata").read_bytes() == (
        root / "orders-0" / "partition.metadata"
    ).read_bytes()
    logs = tmp_path / "logs"
    make_logs(logs, 1)
    (logs / "server.log.1").symlink_to(tmp_path / "rolled-away")
    skipped.clear()
    assert copy_logs(logs, tmp_path / "logs-copy", skipped)[0] == 8
    assert skipped == [
        {"path": str(logs / "server.log.1"), "reason": "not a regular file (links are not followed)"}
    ]


def test_bad_input_is_refused_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dirs, logs = make_broker(tmp_path, 1)
    out = tmp_path / "bundle"
    missing = tmp_path / "nope"
    with pytest.raises(BundleError, match=rf"^{missing}: no such directory; expected a Kafka log dir"):
        capture_broker(1, [dirs[0], missing], logs, out)
    with pytest.raises(
        BundleError, match=rf"^{missing}: no such directory; expected Kafka's log4j directory"
    ):
        capture_broker(1, dirs, missing, out)
    with pytest.raises(BundleError, match=r"has no meta.properties or \*-checkpoint file"):
        capture_broker(1, [logs], None, out)
    with pytest.raises(BundleError, match="is inside log dir"):
        capture_broker(1, dirs, logs, dirs[1] / "bundle")
    assert not (dirs[1] / "bundle").exists() and not out.exists()
    with pytest.raises(BundleError, match=r"is not empty and has no manifest\.json"):
        capture_broker(1, dirs, logs, tmp_path)
    argv = ["--broker-id", "1", "--log-dirs", f"{dirs[0]},{missing}", "--out", str(out)]
    assert main(argv) == 2
    expected = f"workbench: {missing}: no such directory; expected a Kafka log dir (an entry of log.dirs)\n"
    assert capsys.readouterr().err == expected
    assert not out.exists()


def test_cli_prints_one_progress_line_per_log_dir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dirs, logs = make_broker(tmp_path, 3)
    out = tmp_path / "bundle"
    argv = ["--broker-id", "3", "--log-dirs", f"{dirs[0]},{dirs[1]}", "--logs", str(logs), "--out", str(out)]
    assert main(argv) == 0
    err = capsys.readouterr().err.splitlines()
    assert [line.split(" -> ")[1].split(":")[0] for line in err if " -> datadirs/" in line] == [
        "datadirs/0", "datadirs/1"
    ]  # fmt: skip
    assert err[-1].startswith(f"broker 3 captured into {out}: 42 files listed, 22 metadata and 8 log files")


def test_runs_with_the_standard_library_only(tmp_path: Path) -> None:
    """As on a broker host: a copy of the package, no site-packages (-S), run as a module."""
    pkg = tmp_path / "copy"
    shutil.copytree(REPO / "workbench", pkg / "workbench", ignore=shutil.ignore_patterns("__pycache__"))
    dirs, logs = make_broker(tmp_path, 1)
    out = tmp_path / "bundle"
    probe = (
        "import runpy, sys; sys.argv[0] = 'broker'; "
        "runpy.run_module('workbench.capture.broker', run_name='__main__', alter_sys=True)"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    args = ["--broker-id", "1", "--log-dirs", f"{dirs[0]},{dirs[1]}", "--logs", str(logs), "--out", str(out)]
    for cmd in (
        [sys.executable, "-S", "-m", "workbench.capture.broker"],
        [sys.executable, "-S", "-c", probe],
    ):
        r = subprocess.run([*cmd, *args], cwd=pkg, env=env, capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        assert sum(" -> datadirs/" in line for line in r.stderr.splitlines()) == 2
    assert json.loads((out / "manifest.json").read_text())["brokers"] == [1]
    # With pyspark installed (no -S), importing the collector must still leave it unimported.
    check = (
        "import sys, workbench.capture.broker, workbench.bundle, workbench; "
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('pyspark', 'py4j', 'kazoo', 'pandas', 'pyarrow', 'numpy')); print(bad); sys.exit(bool(bad))"
    )
    r = subprocess.run([sys.executable, "-c", check], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.slow
def test_the_bundle_loads_in_spark(spark: SparkSession, tmp_path: Path) -> None:
    out = tmp_path / "bundle"
    expected = set()
    listed = 0
    for broker_id in (1, 2):
        dirs = [tmp_path / f"b{broker_id}" / "data1", tmp_path / f"b{broker_id}" / "data2"]
        for n, (root, parts) in enumerate(
            zip(dirs, [("orders-0", "__consumer_offsets-0"), ("payments-0", FUTURE_DIR)], strict=True)
        ):
            for d, tid in make_log_dir(root, broker_id, parts).items():
                topic, partition = d.split(".")[0].rsplit("-", 1)
                state = d.rsplit("-", 1)[1] if "." in d else "live"
                expected.add((broker_id, str(n), topic, int(partition), state, tid))
        make_logs(tmp_path / f"b{broker_id}" / "logs", broker_id)
        listed += capture_broker(broker_id, dirs, tmp_path / f"b{broker_id}" / "logs", out)["files_listed"]
    b = open_bundle(out, spark)
    assert b.datadir_files.count() == listed == 84
    got = {
        (r.broker_id, r.log_dir, r.topic, r.partition, r.dir_state, r.topic_id)
        for r in b.partition_metadata.collect()
    }
    assert got == expected and len(got) == 12
    assert b.log_events.where("context = 'KafkaServer id=2' and message = 'started'").count() == 8
    assert b.bad_records.count() == 0
