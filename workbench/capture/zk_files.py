"""`workbench capture zk-files`: copy a ZooKeeper dataDir's txn logs and snapshots into a bundle with
every secret redacted and every checksum recomputed.

Those files hold the same secrets as the live tree, in clear: a create or setData of `/config/users/<u>`
carries SCRAM credentials. Each txn and snapshot node is parsed, its data redacted with the rules of
`capture.redact`, and the file written back in ZooKeeper's own format (Adler32 per txn, both snapshot
seals), so our parser and ZooKeeper's tools still read the copies. The tree digests ZooKeeper 3.6+ stored
are left as they were: they cover the original data, and ZooKeeper only logs a digest mismatch.
Standard library only: it runs on the ZooKeeper host.
"""

from __future__ import annotations

import argparse
import gzip
import os
import socket
import sys
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from workbench.bundle import ZkFile, zk_data_files
from workbench.capture.redact import holds_secrets, redact_znode
from workbench.manifest import record_part
from workbench.zookeeper import txns as op
from workbench.zookeeper.files import Problem, read_snapshot, read_txn_log, write_snapshot, write_txn_entry
from workbench.zookeeper.txns import Txn, write_txn

TXNLOG = Path("zk") / "txnlog"
LOG_HEADER = 16


def _redact_txn(t: Txn) -> tuple[Txn, int]:
    """The txn with secrets in its data (and in its multi's ops) replaced; how many were."""
    if t.type == op.MULTI:
        ops, count = [], 0
        for sub in t.ops:
            new, n = _redact_txn(sub)
            ops.append(new)
            count += n
        return (replace(t, ops=ops), count) if count else (t, 0)
    if t.path and t.data is not None and holds_secrets(t.path):
        data, changed = redact_znode(t.path, t.data)
        if changed:
            return replace(t, data=data), 1
    return t, 0


def copy_txn_log(src: ZkFile, dst: Path) -> dict[str, Any]:
    """Write the txns of a log with secrets redacted; the zero preallocation is not copied. A damaged
    entry ends the copy (what follows cannot be parsed, so cannot be known free of secrets)."""
    report: dict[str, Any] = {"file": src.file, "txns": 0, "redacted": 0}
    with open(src.path, "rb") as f:
        header = f.read(LOG_HEADER)
    with open(dst, "wb") as out:
        out.write(header)
        for item in read_txn_log(src.path, src.file):
            if isinstance(item, Problem):
                report["damage"] = {"offset": item.offset, "reason": item.reason}
                break
            txn, count = _redact_txn(item)
            if count:
                out.write(write_txn_entry(write_txn(txn)))
                report["redacted"] += count
            else:
                out.write(_entry_bytes(src.path, item.offset))
            report["txns"] += 1
    return report


def _entry_bytes(path: Path, offset: int) -> bytes:
    """An untouched entry, copied byte for byte: checksum, length, payload and end-of-record."""
    with open(path, "rb") as f:
        f.seek(offset + 8)
        length = int.from_bytes(f.read(4), "big")
        f.seek(offset)
        return f.read(12 + length + 1)


def copy_snapshot(src: ZkFile, dst: Path) -> dict[str, Any]:
    """Write a snapshot with secrets redacted and its seals recomputed; a damaged one is not copied."""
    snap = read_snapshot(src.path, src.file)
    report: dict[str, Any] = {"file": src.file, "znodes": len(snap.nodes), "redacted": 0}
    if snap.problems:
        p = snap.problems[0]
        report["damage"] = {"offset": p.offset, "reason": p.reason}
        return report
    for node in snap.nodes:
        data, changed = redact_znode(node.path, node.data)
        if changed:
            node.data = data
            report["redacted"] += 1
    body = write_snapshot(snap)
    dst.write_bytes(gzip.compress(body) if src.path.name.endswith(".gz") else body)
    return report


def capture_zk_files(data_dir: Path, out: Path, progress: Any = None) -> dict[str, Any]:
    """Copy every txn log and snapshot under data_dir (a dataDir, its version-2/, or a dataLogDir)."""
    data_dir = Path(data_dir)
    if not data_dir.is_dir():
        raise NotADirectoryError(f"{data_dir}: not a directory; expected a ZooKeeper dataDir")
    files = zk_data_files([data_dir])
    if not files:
        raise FileNotFoundError(f"{data_dir}: no log.* or snapshot.* files; expected a ZooKeeper dataDir")
    dest = Path(out) / TXNLOG
    dest.mkdir(parents=True, exist_ok=True)
    started = datetime.now(timezone.utc).isoformat(timespec="seconds")
    reports: list[dict[str, Any]] = []
    for f in files:
        target = dest / f.path.name
        if f.path.name.endswith(".snappy"):
            reports.append({"file": f.file, "damage": {"reason": "snappy snapshots are not supported"}})
            continue
        report = copy_txn_log(f, target) if f.kind == "log" else copy_snapshot(f, target)
        if target.exists():
            st = f.path.stat()
            os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
        reports.append(report)
        if progress:
            progress(report)
    part = {
        "part": "zk-files",
        "host": socket.gethostname(),
        "data_dir": str(data_dir),
        "captured_at": started,
        "files": reports,
        "redacted": sum(int(r.get("redacted", 0)) for r in reports),
    }
    record_part(out, part, ("part", "host", "data_dir"), redacted=True, captured_at=started)
    return part


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--data-dir", required=True, type=Path, help="ZooKeeper dataDir (or dataLogDir)")
    parser.add_argument("--out", required=True, type=Path, help="bundle directory to create or add to")


def run(args: argparse.Namespace) -> int:
    def progress(r: dict[str, Any]) -> None:
        what = f"{r.get('txns', r.get('znodes', 0))} records, {r.get('redacted', 0)} redacted"
        damage = f"; DAMAGED: {r['damage']['reason']}" if "damage" in r else ""
        print(f"{r['file']}: {what}{damage}", file=sys.stderr)

    try:
        part = capture_zk_files(args.data_dir, args.out, progress)
    except OSError as e:
        print(f"workbench: {e}", file=sys.stderr)
        return 2
    done = f"{len(part['files'])} files into {args.out / TXNLOG}, {part['redacted']} secrets redacted"
    print(done, file=sys.stderr)
    return 0
