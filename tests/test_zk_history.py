"""ZooKeeper's files in Spark (znode_history, znodes, state at a zxid), the `zk history` command, and
`capture zk-files` with its redaction, against files a real server wrote."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient
from pyspark.sql import SparkSession

from workbench.capture.zk_files import capture_zk_files
from workbench.cli import main
from workbench.frames import open_bundle
from workbench.model.secrets import in_clear
from workbench.testing.zookeeper import snapshot_formatter, txn_log_toolkit
from workbench.together import answer
from workbench.zookeeper.datatree import DataTree, replay
from workbench.zookeeper.files import Problem, read_snapshot, read_txn_log, zxid_of
from workbench.zookeeper.txns import Txn


@pytest.fixture(scope="module")
def bundle_dir(kafka_zk_data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("bundle")
    (root / "manifest.json").write_text('{"format": "kafka-evidence/1"}')
    (root / "zk").mkdir()
    (root / "zk" / "txnlog").symlink_to(kafka_zk_data_dir)
    return root


def _all_txns(d: Path) -> list[Txn]:
    logs = sorted(d.glob("log.*"), key=lambda p: zxid_of(p.name) or 0)
    return [t for log in logs for t in read_txn_log(log) if isinstance(t, Txn)]


def test_znode_history_has_a_row_per_txn_and_per_multi_op(spark: SparkSession, bundle_dir: Path) -> None:
    bundle = open_bundle(bundle_dir, spark)
    txns = _all_txns(bundle_dir / "zk" / "txnlog")
    expected = {(t.zxid, None, t.op, t.path) for t in txns if not t.ops}
    expected |= {(t.zxid, s.multi_index, s.op, s.path) for t in txns for s in t.ops}
    rows = bundle.znode_history.select("zxid", "multi_index", "op", "path").collect()
    assert len(rows) == len(expected) and set(map(tuple, rows)) == expected
    failed = bundle.znode_history.where("not applied").select("zxid", "op", "err").collect()
    errors = [t.err for t in txns if t.type == -1]  # failed requests outside a multi
    assert sorted(r.err for r in failed) == sorted([-103, -2, *errors])
    assert {r.op for r in failed} == {"error"}
    topic = bundle.znode_history.where("path = '/brokers/topics/topic-1' and op = 'setData'").first()
    assert topic is not None and json.loads(topic.data) == {
        "version": 1,
        "partitions": {"0": [1, 2], "1": [2, 1], "2": [1, 2]},
    }  # the pre-2.8 write: topic_id gone
    binary = bundle.znode_history.where("path = '/binary' and op = 'create'").first()
    assert binary is not None and binary.data_encoding == "base64"
    assert bundle.bad_records.count() == 0


def test_znodes_without_a_dump_are_snapshot_plus_replay(spark: SparkSession, bundle_dir: Path) -> None:
    bundle = open_bundle(bundle_dir, spark)
    d = bundle_dir / "zk" / "txnlog"
    newest = max(d.glob("snapshot.*"), key=lambda p: zxid_of(p.name) or 0)
    oracle = snapshot_formatter(newest)
    znodes = {r.path: r for r in bundle.znodes.collect()}
    paths = set(re.findall(r"^(/[^\n]*)\n  cZxid", oracle, re.M))
    assert set(znodes) == paths
    assert znodes["/brokers/topics/topic-1"].version == 1
    assert znodes["/cluster/id"].data == "caf\u00e9 \u65e5\u672c \U0001f600"
    assert znodes["/brokers/topics"].num_children == 3 and znodes["/brokers/topics"].parent == "/brokers"
    assert "/controller" not in znodes  # its session closed
    # at an earlier zxid: the same tree as our replay from the first snapshot
    target = next(t.zxid for t in _all_txns(d) if t.path == "/admin/delete_topics/orders-é日本")
    at, bad = bundle.znodes_at(target)
    first = read_snapshot(min(d.glob("snapshot.*"), key=lambda p: zxid_of(p.name) or 0))
    tree = replay(DataTree.from_snapshot(first), _all_txns(d), upto=target)
    expected = {(n.path or "/", n.stat.version, n.stat.mzxid) for n in tree.walk()}
    assert {(r.path, r.version, r.mzxid) for r in at.collect()} == expected
    assert "/admin/delete_topics/orders-é日本" in {p for p, _, _ in expected}
    assert bad.count() == 0
    # each tree is replayed once and kept: a later query reads what that replay left, not the files again
    for tree in (bundle.znodes, at):
        assert "MapInArrow" not in tree._jdf.queryExecution().optimizedPlan().toString()


def _tree_at(spark: SparkSession, root: Path, zxid: int) -> tuple[set[tuple[str, int, int]], set[str]]:
    at, bad = open_bundle(root, spark).znodes_at(zxid)
    assert bad.count() == 0
    rows = at.select("path", "version", "mzxid", "source").collect()
    return {(r.path, r.version, r.mzxid) for r in rows}, {r.source for r in rows}


@pytest.mark.slow
def test_a_fuzzy_snapshot_is_not_used_for_an_earlier_zxid(spark: SparkSession, tmp_path: Path,
                                                          kafka_zk_data_dir: Path) -> None:  # fmt: skip
    """A snapshot is named after the zxid it began at but holds changes made while it was written. The
    newest snapshot renamed to an earlier zxid is such a snapshot: the state at that zxid must come from
    an older snapshot (or the whole history), not from it; with nothing older, it is used and said so."""
    txns = _all_txns(kafka_zk_data_dir)
    target = next(t.zxid for t in txns if t.path == "/admin/delete_topics/orders-é日本")
    first = read_snapshot(min(kafka_zk_data_dir.glob("snapshot.*"), key=lambda p: zxid_of(p.name) or 0))
    tree = replay(DataTree.from_snapshot(first), txns, upto=target)
    expected = {(n.path or "/", n.stat.version, n.stat.mzxid) for n in tree.walk()}
    newest = max(kafka_zk_data_dir.glob("snapshot.*"), key=lambda p: zxid_of(p.name) or 0)
    assert DataTree.from_snapshot(read_snapshot(newest)).newest_change() > target  # it is fuzzy for target
    (tmp_path / "manifest.json").write_text('{"format": "kafka-evidence/1"}')
    txnlog = tmp_path / "zk" / "txnlog"
    shutil.copytree(kafka_zk_data_dir, txnlog)
    for snap in txnlog.glob("snapshot.*"):
        if (zxid_of(snap.name) or 0) >= target:
            snap.unlink()
    fuzzy = txnlog / f"snapshot.{target:x}"
    shutil.copyfile(newest, fuzzy)
    tree, sources = _tree_at(spark, tmp_path, target)
    assert tree == expected and not any(fuzzy.name in s for s in sources)
    # with no older snapshot and no log from zxid 1, the fuzzy one is the best there is, and flagged
    for f in txnlog.iterdir():
        if f != fuzzy and (f.name.startswith("snapshot.") or (zxid_of(f.name) or 0) <= 1):
            f.unlink()
    tree, sources = _tree_at(spark, tmp_path, target)
    assert tree != expected and len(sources) == 1 and "fuzzy" in sources.pop()


def test_damaged_log_is_a_bad_record_with_its_byte_offset(
    spark: SparkSession, tmp_path: Path, kafka_zk_data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "manifest.json").write_text('{"format": "kafka-evidence/1"}')
    txnlog = tmp_path / "zk" / "txnlog"
    txnlog.mkdir(parents=True)
    log = min(kafka_zk_data_dir.glob("log.*"), key=lambda p: zxid_of(p.name) or 0)
    txns = [t for t in read_txn_log(log) if isinstance(t, Txn)]
    data = bytearray(log.read_bytes()[: txns[5].offset + 40])
    data[txns[3].offset + 20] ^= 0x55
    (txnlog / log.name).write_bytes(bytes(data))
    bundle = open_bundle(tmp_path, spark)
    # the damaged txn is lost, the intact one after it kept, the one cut short lost
    assert sorted(r.zxid for r in bundle.znode_history.select("zxid").distinct().collect()) == [
        t.zxid for t in (*txns[:3], txns[4])
    ]
    bad = bundle.bad_records.orderBy("position").collect()
    where = [(b.source, b.file, b.position) for b in bad]
    assert where == [("zk-txnlog", f"zk/txnlog/{log.name}", txns[i].offset) for i in (3, 5)]
    assert bad[0].reason.startswith("bad checksum") and bad[1].reason.startswith("partial txn")
    # `zk history` prints the txn read past the damage, and says ZooKeeper's restore does not replay it
    assert main(["zk", "history", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    (stop,) = [i for i, line in enumerate(lines) if line.startswith("-- ")]
    assert lines[stop].startswith(f"-- zk/txnlog/{log.name} is damaged at byte {txns[3].offset}: ZooKeeper")
    before = list(dict.fromkeys(int(line.split()[0], 16) for line in lines[:stop]))
    after = list(dict.fromkeys(int(line.split()[0], 16) for line in lines[stop + 1 :]))
    assert (before, after) == ([t.zxid for t in txns[:3]], [txns[4].zxid])
    assert main(["zk", "history", str(tmp_path), "--format", "jsonl"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {r["zxid"]: r["replayed"] for r in rows} == {t.zxid: t != txns[4] for t in (*txns[:3], txns[4])}


def test_zk_history_command(bundle_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = "/brokers/topics/topic-0/partitions/0/state"
    assert main(["zk", "history", str(bundle_dir), "--path", state]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 4  # create, then three ISR changes
    assert "multi[1] create" in lines[0] and '"isr": [1, 2]' in lines[0]
    assert all("multi[1] setData" in line for line in lines[1:]) and "version=3" in lines[-1]
    since = int(lines[1].split()[0], 16)
    txnlog = str(bundle_dir / "zk" / "txnlog")
    assert main(["zk", "history", txnlog, "--since", hex(since), "--format", "jsonl"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert rows[0]["zxid"] == since and all(r["zxid"] >= since for r in rows)
    assert any(r["op"] == "error" and r["applied"] is False for r in rows)
    assert main(["zk", "history", str(bundle_dir / "nothing")]) == 2


SECRETS = ("salt=c2FsdA==,stored_key=U1RPUkVE", "server_key=U0VSVkVS", "s3cr3t-keystore")


@pytest.mark.slow
def test_capture_zk_files_redacts_and_keeps_the_files_readable(
    own_zookeeper: Any, tmp_path: Path, spark: SparkSession
) -> None:
    """Secrets written through a real server end in its txn log and snapshot; the copies hold none of
    them, every checksum holds, and ZooKeeper's own tools and a ZooKeeper server read them. Triage names
    the files of a bundle made by hand that hold them, and none of the captured bundle's."""
    zk = KazooClient(hosts=own_zookeeper.hosts)
    zk.start(timeout=15)
    scram = f'{{"version":1,"config":{{"SCRAM-SHA-256":"{SECRETS[0]},{SECRETS[1]},iterations=4096"}}}}'
    zk.create("/config/users/alice", scram.encode(), makepath=True)
    zk.create("/config/users/bob", b'{"version":1,"config":{"producer_byte_rate":"1024"}}')
    zk.ensure_path("/config/brokers")
    tx = zk.transaction()
    broker = f'{{"version":1,"config":{{"ssl.keystore.password":"{SECRETS[2]}"}}}}'
    tx.create("/config/brokers/1", broker.encode())
    assert tx.commit() == ["/config/brokers/1"]
    zk.set("/config/users/bob", scram.encode())
    zk.stop()
    own_zookeeper.restart()  # writes a snapshot holding the secrets too
    own_zookeeper.stop()
    src = own_zookeeper.txn_dir
    assert any(SECRETS[0].encode() in p.read_bytes() for p in src.glob("snapshot.*"))
    out = tmp_path / "bundle"
    part = capture_zk_files(own_zookeeper.data_dir, out)
    assert part["redacted"] >= 4 and not any("damage" in f for f in part["files"])
    copied = sorted((out / "zk" / "txnlog").iterdir())
    assert {p.name for p in copied} == {p.name for p in src.iterdir() if zxid_of(p.name) is not None}
    for p in out.rglob("*"):
        if p.is_file():
            assert not any(s.encode() in p.read_bytes() for s in SECRETS), p
    for p in copied:
        if p.name.startswith("log."):
            dump = txn_log_toolkit(p)
            assert "CRC ERROR" not in dump and "[redacted:" in dump
            assert not [x for x in read_txn_log(p) if isinstance(x, Problem)]
        else:
            assert not read_snapshot(p).problems
            snapshot_formatter(p)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["redacted"] is True and manifest["parts"][0]["part"] == "zk-files"
    by_hand = tmp_path / "by-hand"
    (by_hand / "brokers" / "1").mkdir(parents=True)
    (by_hand / "manifest.json").write_text('{"format": "kafka-evidence/1", "brokers": [1]}')
    shutil.copytree(src, by_hand / "zk" / "txnlog")
    props = "broker.id=1\nlistener.name.sasl_ssl.ssl.keystore.password=%s\n"
    props += "ssl.key.password=[redacted:0123456789ab]\n"
    (by_hand / "brokers" / "1" / "server.properties").write_text(props % SECRETS[2])
    (out / "brokers" / "1").mkdir(parents=True)
    (out / "brokers" / "1" / "server.properties").write_text(props % "[redacted:0123456789ab]")
    found = {c.file: c.holds for c in answer(in_clear(open_bundle(by_hand, spark)))}
    logs = {f"zk/txnlog/{p.name}" for p in src.glob("log.*")}
    assert found.pop("brokers/1/server.properties") == ("listener.name.sasl_ssl.ssl.keystore.password",)
    assert set(found) - logs and set(found) <= logs | {f"zk/txnlog/{p.name}" for p in src.glob("snapshot.*")}
    assert set().union(*found.values()) == {"/config/users/alice", "/config/users/bob", "/config/brokers/1"}
    assert answer(in_clear(open_bundle(out, spark))) == []
    # a server started on the copies serves the redacted values, equal secrets with equal fingerprints
    shutil.rmtree(src)
    shutil.copytree(out / "zk" / "txnlog", src)
    own_zookeeper.start()
    zk = KazooClient(hosts=own_zookeeper.hosts)
    zk.start(timeout=15)
    alice = json.loads(zk.get("/config/users/alice")[0])["config"]["SCRAM-SHA-256"]
    bob = json.loads(zk.get("/config/users/bob")[0])["config"]["SCRAM-SHA-256"]
    zk.stop()
    assert alice == bob and alice.startswith("[redacted:")
