"""ZooKeeper's txn logs and snapshots read by our pure-Python parser, held against ZooKeeper's own tools
(TxnLogToolkit, SnapshotFormatter) on files a real server wrote and on the real snapshots in shared/."""

from __future__ import annotations

import re
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from zk_oracles import parse_snapshot_formatter, snapshot_nodes, toolkit_dump, tree_diff

from workbench.testing.zookeeper import snapshot_formatter, txn_log_toolkit
from workbench.zookeeper import txns as op
from workbench.zookeeper.datatree import DataTree, replay
from workbench.zookeeper.files import (
    Problem,
    read_snapshot,
    read_txn_log,
    write_snapshot,
    write_txn_entry,
    zxid_of,
)
from workbench.zookeeper.txns import Txn, read_txn, write_txn


@pytest.fixture(scope="module")
def data_dir(kafka_zk_data_dir: Path) -> Path:
    return kafka_zk_data_dir


def _logs(d: Path) -> list[Path]:
    return sorted(d.glob("log.*"), key=lambda p: zxid_of(p.name) or 0)


def _snapshots(d: Path) -> list[Path]:
    return sorted(d.glob("snapshot.*"), key=lambda p: zxid_of(p.name) or 0)


def _txns(path: Path) -> list[Txn]:
    out = list(read_txn_log(path))
    assert not [p for p in out if isinstance(p, Problem)]
    return [t for t in out if isinstance(t, Txn)]


@pytest.mark.slow
def test_every_txn_log_matches_txn_log_toolkit(data_dir: Path) -> None:
    logs = _logs(data_dir)
    assert len(logs) >= 3, "snapCount 20 should have rolled several txn logs"
    for log in logs:
        assert toolkit_dump(_txns(log)) == txn_log_toolkit(log), log.name


def test_the_logs_hold_what_kafka_writes(data_dir: Path) -> None:
    txns = [t for log in _logs(data_dir) for t in _txns(log)]
    assert [t.zxid for t in txns] == list(range(1, len(txns) + 1))
    multis = [t for t in txns if t.type == op.MULTI]
    fenced = [t for t in multis if t.ops[0].type == op.CHECK and t.ops[0].path == "/controller_epoch"]
    assert len(fenced) >= 20
    failed = [t for t in multis if t.failed]
    assert [[s.err for s in t.ops] for t in failed] == [[-103, -2]]  # BADVERSION, then RUNTIMEINCONSISTENCY
    election = [t for t in multis if [s.path for s in t.ops] == ["/controller", "/controller_epoch"]]
    assert [s.data for t in election for s in t.ops if s.type == op.SET_DATA] == [b"1", b"2"]
    registration = next(t for t in multis if t.ops[0].path == "/brokers/ids/1")
    assert registration.ops[0].data is None and registration.ops[0].ephemeral is True
    assert any(t.type == op.CREATE and t.data is None for t in txns)  # createRecursive's null data
    assert any(t.type == op.CREATE and t.data == b"" for t in txns)
    assert any(t.type == op.CREATE and t.data is not None and len(t.data) == 900_000 for t in txns)
    closes = [t for t in txns if t.type == op.CLOSE_SESSION and t.paths]
    assert ["/controller", "/brokers/ids/1"] in [sorted(t.paths or [], reverse=True) for t in closes]
    assert all(t.digest is not None for t in txns if t.type != op.ERROR)


def test_every_snapshot_matches_snapshot_formatter(data_dir: Path) -> None:
    snaps = _snapshots(data_dir)
    assert len(snaps) >= 4
    for path in snaps:
        snap = read_snapshot(path)
        oracle = parse_snapshot_formatter(snapshot_formatter(path))
        assert not snap.problems
        assert tree_diff(oracle["nodes"], snapshot_nodes(snap)) == [], path.name
        assert oracle["count"] == len(snap.nodes) + 1  # DataTree counts the root under "" and "/"


def test_real_snapshots_match_zookeepers_own_dump(real_evidence: Path) -> None:
    snaps = sorted((real_evidence / "zk-snapshots-3.6.3").glob("snapshot.*[0-9a-f]"))
    assert len(snaps) == 5
    for path in snaps:
        snap = read_snapshot(path)
        oracle = parse_snapshot_formatter(Path(f"{path}.SnapshotFormatter-d.txt").read_text())
        assert not snap.problems
        assert tree_diff(oracle["nodes"], snapshot_nodes(snap)) == [], path.name
        assert oracle["count"] == len(snap.nodes) + 1
        sessions = [f"{sid:#016x}" for sid in snap.sessions]
        assert [s.split(",")[0] for s in oracle["sessions"]] == sessions
        assert write_snapshot(snap) == path.read_bytes()  # every byte accounted for, seals included
        if snap.digest and snap.digest[2]:  # snapshot.0 was written before any digest was computed
            assert DataTree.from_snapshot(snap).digest() == snap.digest[2], path.name


def test_files_write_back_byte_for_byte(data_dir: Path) -> None:
    for log in _logs(data_dir):
        raw = log.read_bytes()
        for t in _txns(log):
            length = int.from_bytes(raw[t.offset + 8 : t.offset + 12], "big")
            payload = raw[t.offset + 12 : t.offset + 12 + length]
            assert write_txn(read_txn(payload)) == payload
            assert write_txn_entry(payload) == raw[t.offset : t.offset + 12 + length + 1]
    for path in _snapshots(data_dir):
        assert write_snapshot(read_snapshot(path)) == path.read_bytes()


def test_replay_agrees_with_the_digest_zookeeper_logged_at_every_txn(data_dir: Path) -> None:
    snaps = _snapshots(data_dir)
    txns = [t for log in _logs(data_dir) for t in _txns(log)]
    tree = DataTree.from_snapshot(read_snapshot(snaps[0]))
    checked = 0
    for t in txns:
        tree.apply(t)
        if t.digest is not None:
            assert tree.digest() == t.digest[1], f"zxid {t.zxid:#x} {t.op}"
            checked += 1
    assert checked >= 70
    last = read_snapshot(snaps[-1])
    replayed = {n.path: (n.data, n.stat) for n in tree.walk()}
    assert tree_diff(replayed, {n.path: (n.data, n.stat) for n in last.nodes}) == [], last.file
    assert tree.sessions == last.sessions


def test_state_at_a_zxid_from_any_earlier_snapshot_is_the_same(data_dir: Path) -> None:
    txns = [t for log in _logs(data_dir) for t in _txns(log)]
    snaps = [read_snapshot(p) for p in _snapshots(data_dir)]
    target = txns[len(txns) * 2 // 3].zxid
    states = []
    # a snapshot is fuzzy: one written while a txn after target was applied cannot give the state at target
    for snap in (s for s in snaps if max(s.zxid, DataTree.from_snapshot(s).newest_change()) <= target):
        tree = replay(DataTree.from_snapshot(snap), txns, upto=target)
        states.append({n.path: (n.data, n.stat) for n in tree.walk()})
    assert len(states) >= 3
    assert [tree_diff(s, states[0]) for s in states] == [[]] * len(states)
    assert "/controller" in states[0]


def _copy(src: Path, dst: Path, cut: int | None = None, flip: int | None = None) -> Path:
    data = bytearray(src.read_bytes()[:cut])
    if flip is not None:
        data[flip] ^= 0xFF
    dst.write_bytes(bytes(data))
    return dst


def test_damaged_txn_logs_keep_what_came_before_and_after(data_dir: Path, tmp_path: Path) -> None:
    """Damage inside a txn loses that txn only: reading goes on from the next intact entry (ZooKeeper
    itself would stop there); a file cut short loses its tail."""
    log = _logs(data_dir)[0]
    good = _txns(log)
    third = good[2].offset
    after = [t.zxid for t in good[3:]]
    for name, cut, flip, reason, kept in (
        ("log.flip", None, third + 30, "bad checksum", after),
        ("log.length", None, third + 9, "impossible txn length", after),
        ("log.cut", third + 20, None, "partial txn", []),
        ("log.eor", None, good[3].offset - 1, "partial txn: no end-of-record", after),
    ):
        out = list(read_txn_log(_copy(log, tmp_path / name, cut, flip)))
        assert [t.zxid for t in out if isinstance(t, Txn)] == [t.zxid for t in good[:2]] + kept, name
        problems = [p for p in out if isinstance(p, Problem)]
        assert len(problems) == 1 and problems[0].reason.startswith(reason), problems
        assert problems[0].offset == third and problems[0].file.endswith(name)
        resumed = f"the next intact txn is at byte {good[3].offset}" if kept else ""
        assert resumed in problems[0].reason
    wrong = list(read_txn_log(_copy(log, tmp_path / "log.magic", flip=1)))
    assert len(wrong) == 1 and isinstance(wrong[0], Problem) and wrong[0].offset == 0
    empty = list(read_txn_log(_copy(log, tmp_path / "log.empty", cut=0)))
    assert len(empty) == 1 and isinstance(empty[0], Problem) and "header" in empty[0].reason


def test_damaged_snapshots_keep_what_came_before(data_dir: Path, tmp_path: Path) -> None:
    path = _snapshots(data_dir)[-1]
    whole = read_snapshot(path)
    size = path.stat().st_size
    cut = read_snapshot(_copy(path, tmp_path / "snapshot.cut", cut=size // 2))
    assert 0 < len(cut.nodes) < len(whole.nodes)
    assert [(n.path, n.stat) for n in cut.nodes] == [(n.path, n.stat) for n in whole.nodes[: len(cut.nodes)]]
    assert all(a.data == b.data for a, b in zip(cut.nodes, whole.nodes, strict=False))
    assert len(cut.problems) == 1 and cut.problems[0].offset > 0 and "truncated" in cut.problems[0].reason
    flipped = read_snapshot(_copy(path, tmp_path / "snapshot.flip", flip=size // 2))
    assert any("bad checksum" in p.reason for p in flipped.problems)
    magic = read_snapshot(_copy(path, tmp_path / "snapshot.magic", flip=0))
    assert magic.nodes == [] and magic.problems[0].offset == 0


def test_35_format_without_digests_is_read_like_zookeeper_reads_it(data_dir: Path, tmp_path: Path) -> None:
    """3.5 wrote no TxnDigest, no CloseSessionTxn record and no snapshot digest section. Files in that
    form (rewritten from the real ones) are read by ZooKeeper 3.8's tools and by us alike."""
    log = _logs(data_dir)[-1]
    old = [replace(t, digest=None, paths=None) for t in _txns(log)]
    raw = log.read_bytes()[:16] + b"".join(write_txn_entry(write_txn(t)) for t in old) + bytes(4096)
    (tmp_path / log.name).write_bytes(raw)
    ours = _txns(tmp_path / log.name)
    assert [(t.zxid, t.digest, t.paths) for t in ours] == [(t.zxid, None, None) for t in old]
    assert toolkit_dump(ours) == txn_log_toolkit(tmp_path / log.name)
    snap = replace(read_snapshot(_snapshots(data_dir)[-1]), digest=None)
    (tmp_path / "snapshot.4f").write_bytes(write_snapshot(snap))
    again = read_snapshot(tmp_path / "snapshot.4f")
    assert not again.problems and again.digest is None
    oracle = parse_snapshot_formatter(snapshot_formatter(tmp_path / "snapshot.4f"))
    assert tree_diff(oracle["nodes"], snapshot_nodes(again)) == []


@pytest.mark.slow
def test_a_damaged_snapshot_is_skipped_as_a_real_server_skips_it(
    real_evidence: Path, tmp_path: Path, zk_tools: None
) -> None:
    """ZooKeeper's own test data (invalidsnap): its newest snapshot is cut short and an old log fails its
    checksum. A real server started on a copy restores from the previous snapshot plus the logs from it
    on (its InvalidSnapshotTest expects /9/9/8); our reading of the same dir must give that very tree."""
    from kazoo.client import KazooClient

    from workbench.bundle import zk_data_files
    from workbench.sources.zk_files import state_rows
    from workbench.testing.zookeeper import ZooKeeperServer

    source = real_evidence / "zk-testdata-invalidsnap"
    files = zk_data_files([source])
    rows = list(
        state_rows([f for f in files if f.kind == "snapshot"], [f for f in files if f.kind == "log"], None)
    )
    bad = [r for r in rows if r[-2] is not None]
    assert [(Path(r[-4]).name, r[-3]) for r in bad] == [("snapshot.83f", 4815)]
    assert "977468229" in bad[0][-2]  # SnapshotFormatter: "Unreasonable length = 977468229"
    ours = {r[0]: (r[1], r[4], r[5], r[9]) for r in rows if r[-2] is None}  # data, czxid, mzxid, version
    assert "/9/9/8" in ours
    sources = {r[15] for r in rows if r[-2] is None}
    assert len(sources) == 1 and re.search(
        r"snapshot\.639 \+ txns to 0x83f \(.*snapshot\.83f skipped", sources.pop()
    )

    server = ZooKeeperServer(tmp_path)
    shutil.copytree(source / "version-2", server.txn_dir)
    server.start()
    zk = KazooClient(hosts=server.hosts)
    zk.start()
    try:
        theirs = {}
        todo = ["/"]
        while todo:
            path = todo.pop()
            data, stat = zk.get(path)
            theirs[path] = (
                data.decode() if data else ("" if data == b"" else None),
                stat.czxid,
                stat.mzxid,
                stat.version,
            )
            todo += [f"{path.rstrip('/')}/{c}" for c in zk.get_children(path)]
    finally:
        zk.stop()
        server.stop()
    assert len(ours) == len(theirs) == 2113
    assert sorted(p for p in ours if ours[p] != theirs.get(p)) == []
