"""`workbench zk history`: every change ZooKeeper logged, from a bundle, a dataDir or txn log files."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from workbench.bundle import Evidence, ZkFile, zk_data_files
from workbench.manifest import MANIFEST, BundleError
from workbench.zookeeper.txns import ERROR_NAMES


def txn_logs(inputs: list[str]) -> list[ZkFile]:
    """The txn logs of one bundle, or of the dataDirs and files given."""
    bundle = (Path(inputs[0]) / MANIFEST).is_file() or inputs[0].endswith((".tar.gz", ".tgz"))
    if len(inputs) == 1 and bundle:
        files = Evidence.open(inputs[0]).zk_files
    else:
        missing = [p for p in inputs if not Path(p).exists()]
        if missing:
            raise BundleError(missing[0], "no such file or directory", "a bundle, a dataDir or log.* files")
        files = zk_data_files([Path(p) for p in inputs])
    return [f for f in files if f.kind == "log"]


def history(frame: DataFrame, path: str | None = None, since: int | None = None) -> DataFrame:
    """History filtered by path prefix and first zxid, in the order ZooKeeper applied it."""
    if path:
        frame = frame.where(F.col("path").startswith(path))
    if since is not None:
        frame = frame.where(F.col("zxid") >= since)
    return frame.orderBy("zxid", F.coalesce("multi_index", F.lit(-1)))


def format_line(r: dict[str, Any]) -> str:
    what = r["op"]
    if r["multi_index"] is not None:
        what = f"multi[{r['multi_index']}] {what}"
    if not r["applied"]:
        why = "" if r["err"] is None else f": {ERROR_NAMES.get(r['err'], r['err'])}"
        what += f" (failed{why})"
    detail = []
    if r["version"] is not None:
        detail.append(f"version={r['version']}")
    if r["ephemeral"]:
        detail.append("ephemeral")
    if r["session_timeout"] is not None:
        detail.append(f"timeout={r['session_timeout']}ms")
    if r["deleted_paths"]:
        detail.append("deletes " + ",".join(r["deleted_paths"]))
    if r["data_encoding"] is not None:
        detail.append(("data=" if r["data_encoding"] == "utf-8" else "data(base64)=") + r["data"])
    elif r["op"] in ("create", "create2", "setData"):
        detail.append("data=null")
    time = r["time"].isoformat(sep=" ", timespec="milliseconds")
    who = f"session {r['session_id']:#x}"
    return f"{r['zxid']:#x}  {time}  {who}  {what}  {r['path'] or ''}  {' '.join(detail)}"


def run_history(args: argparse.Namespace) -> int:
    from workbench.sources.zk_files import read_znode_history
    from workbench.spark import spark_session

    try:
        logs = txn_logs(args.inputs)
    except BundleError as e:
        print(f"workbench: {e}", file=sys.stderr)
        return 2
    if not logs:
        where = " ".join(args.inputs)
        print(f"workbench: no ZooKeeper txn logs (log.<zxid>) found in {where}", file=sys.stderr)
        return 2
    frame, bad = read_znode_history(spark_session(), logs)
    damaged = bad.orderBy("file", "position").collect()
    stop = first_damage(logs, [(b.file, b.position) for b in damaged])
    told = False
    for row in history(frame, args.path, args.since).toLocalIterator():
        r = row.asDict()
        after = stop is not None and (order_of(logs, r["file"]), r["offset"]) > stop[:2]
        if after and not told and stop is not None and args.format == "text":
            print(NOT_REPLAYED.format(file=stop[2], byte=stop[1]))
        told |= after
        if args.format == "jsonl":
            r["time"] = r["time"].isoformat(timespec="milliseconds") + "Z"
            r["replayed"] = not after
            print(json.dumps(r, ensure_ascii=False))
        else:
            print(format_line(r))
    for b in damaged:
        print(f"workbench: {b.file} at byte {b.position}: {b.reason}", file=sys.stderr)
    return 0


# ZooKeeper reads its txn logs in zxid order and stops at the first entry whose checksum or framing fails
# (FileTxnLog.FileTxnIterator.next throws IOException(CRC_ERROR); reference/FORMATS.md): what the logs
# hold after it was written and served, but a server restored from these files never replays it.
NOT_REPLAYED = (
    "-- {file} is damaged at byte {byte}: ZooKeeper stops reading its logs there when it restores, so a "
    "server started on these files does not replay the txns below (unless a snapshot taken after them "
    "holds them) --"
)


def order_of(logs: list[ZkFile], file: str) -> int:
    return next((i for i, f in enumerate(logs) if f.file == file), len(logs))


def first_damage(logs: list[ZkFile], damage: list[tuple[str, int]]) -> tuple[int, int, str] | None:
    """Where ZooKeeper's reading of the logs stops: (the log's place in zxid order, byte, file)."""
    return min(((order_of(logs, file), byte, file) for file, byte in damage), default=None)
