"""ZooKeeper's txn logs and snapshots -> `znode_history` and `znodes`.

A binary format has no line to split on, so each file is parsed by workbench.zookeeper in one Spark task
(mapInArrow over one row per file): many files parse in parallel, and rows leave as Arrow batches. The
state at a zxid is one task too: the newest snapshot holding no later change, plus the txns after it.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StringType, StructField, StructType

from workbench import schemas
from workbench.bundle import ZkFile
from workbench.sources.common import empty
from workbench.spark import kept
from workbench.zookeeper import txns as op
from workbench.zookeeper.datatree import DataTree, replay
from workbench.zookeeper.files import Problem, read_snapshot, read_txn_log
from workbench.zookeeper.txns import ACL, Txn

BATCH = 8192
_BAD = [
    StructField("bad_file", StringType()),
    StructField("bad_position", LongType()),
    StructField("bad_reason", StringType()),
    StructField("bad_raw", StringType()),
]
_GOOD = (None,) * len(_BAD)


def _raw_schema(schema: StructType, times: tuple[str, ...]) -> StructType:
    """The schema rows leave Python in: times as epoch ms, plus the columns of a bad record."""
    fields = [StructField(f.name, LongType()) if f.name in times else f for f in schema.fields]
    return StructType([*fields, *_BAD])


HISTORY_RAW = _raw_schema(schemas.ZNODE_HISTORY, ("time",))
ZNODES_RAW = _raw_schema(
    StructType([f for f in schemas.ZNODES.fields if f.name not in ("parent", "name")]), ("ctime", "mtime")
)


def text_or_base64(data: bytes | None) -> tuple[str | None, str | None]:
    if data is None:
        return None, None
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        return base64.b64encode(data).decode("ascii"), "base64"


def _acl(acls: list[ACL] | None) -> str | None:
    return None if acls is None else ",".join(f"{a.scheme}:{a.id}={a.perms}" for a in acls)


def _history_row(t: Txn, file: str, offset: int, applied: bool) -> tuple[Any, ...]:
    data, encoding = text_or_base64(t.data)
    timeout = t.timeout if t.type == op.CREATE_SESSION else None
    return (t.zxid, t.time, t.session_id, t.cxid, t.op, t.path, data, encoding, t.version, t.ephemeral,
            _acl(t.acl), timeout, t.paths, t.err, applied, t.multi_index, file, offset, *_GOOD)  # fmt: skip


def _bad_row(width: int, p: Problem) -> tuple[Any, ...]:
    return (*((None,) * width), p.file, p.offset, p.reason, p.raw)


def history_rows(path: str, file: str) -> Iterator[tuple[Any, ...]]:
    """Rows of one txn log: one per txn, one per op of a multi, and one per problem."""
    width = len(schemas.ZNODE_HISTORY.fields)
    for item in read_txn_log(path, file):
        if isinstance(item, Problem):
            yield _bad_row(width, item)
        elif item.type == op.MULTI and item.ops:
            for sub in item.ops:
                yield _history_row(sub, file, item.offset, not item.failed)
        else:
            yield _history_row(item, file, item.offset, not item.failed)


def znode_rows(tree: DataTree, source: str) -> Iterator[tuple[Any, ...]]:
    """The tree's znodes with their stats as a client reads them, like a live capture's."""
    for n in tree.walk():
        s = n.stat
        data, encoding = text_or_base64(n.data)
        length = 0 if n.data is None else len(n.data)
        kids = len(tree.children.get(n.path, ()))
        cversion = 2 * s.cversion - kids  # DataNode.copyStat: the persisted count of creates -> of changes
        yield (n.path or "/", data, encoding, length, s.czxid, s.mzxid, s.pzxid, s.ctime, s.mtime, s.version,
               cversion, s.aversion, s.ephemeralOwner, kids, False, source, *_GOOD)  # fmt: skip


def state_rows(snapshots: list[ZkFile], logs: list[ZkFile], upto: int | None) -> Iterator[tuple[Any, ...]]:
    """The tree at zxid `upto` (None: the newest state), restored as ZooKeeper restores itself: the
    newest snapshot it can read (FileSnap.deserialize skips a damaged one for the next older), plus the
    txns of the logs from that snapshot on (FileTxnLog.getLogFiles) replayed. Every problem of a snapshot
    read on the way comes out as a bad row.

    A snapshot is fuzzy: it is named after the last zxid applied when it began, but the tree goes on
    changing while it is written. Replayed to the end that is harmless, but for a past zxid the snapshot
    must hold no change after it, so older snapshots are tried in turn."""
    width = len(ZNODES_RAW.fields) - len(_BAD)
    tree, source, notes = DataTree.empty(), "(empty tree)", []
    fuzzy: tuple[DataTree, str] | None = None  # the oldest readable snapshot, were none early enough
    for candidate in sorted(snapshots, key=lambda s: s.zxid, reverse=True):
        snap = read_snapshot(candidate.path, candidate.file)
        for p in snap.problems:
            yield _bad_row(width, p)
        if not snap.restorable:
            first = next(p for p in snap.problems if p.fatal)
            notes.append(f"{candidate.file} skipped: damaged at byte {first.offset}")
            continue
        restored = DataTree.from_snapshot(snap)
        changed = restored.newest_change()
        if upto is None or changed <= upto:
            tree, source, fuzzy = restored, candidate.file, None
            break
        fuzzy = (restored, f"{candidate.file} (fuzzy: changes to {changed:#x}, past {upto:#x})")
    if fuzzy is not None and not _logs_from_the_start(logs):
        tree, source = fuzzy  # the oldest snapshot, and no history before it: the best there is, said so
    # damage in the logs is reported once, by znode_history; replay uses what came before it
    chosen = logs_from(logs, tree.last_zxid)
    txns = [t for log in chosen for t in read_txn_log(log.path, log.file) if isinstance(t, Txn)]
    before = tree.last_zxid
    replay(tree, txns, upto)
    if tree.last_zxid > before:
        source += f" + txns to {tree.last_zxid:#x}"
    if notes:
        source += f" ({'; '.join(notes)})"
    yield from znode_rows(tree, source)


def logs_from(logs: list[ZkFile], zxid: int) -> list[ZkFile]:
    """The txn logs ZooKeeper reads to go on from a snapshot at `zxid` (FileTxnLog.getLogFiles): the
    newest log named at or before it and every later one. An older log is never read, whatever zxids
    it holds."""
    start = max((log.zxid for log in logs if log.zxid <= zxid), default=0)
    return [log for log in logs if log.zxid >= start]


def _logs_from_the_start(logs: list[ZkFile]) -> bool:
    """A txn log is named after its first zxid: one named 1 (or 0) holds the server's whole history."""
    return any(log.zxid <= 1 for log in logs)


def _arrow_batches(rows: Iterable[tuple[Any, ...]], schema: StructType) -> Iterator[Any]:
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_schema

    arrow = to_arrow_schema(schema)
    chunk: list[tuple[Any, ...]] = []

    def batch() -> Any:
        columns = list(zip(*chunk, strict=True))
        arrays = [pa.array(c, type=f.type) for c, f in zip(columns, arrow, strict=True)]
        return pa.RecordBatch.from_arrays(arrays, schema=arrow)

    for row in rows:
        chunk.append(row)
        if len(chunk) >= BATCH:
            yield batch()
            chunk = []
    if chunk:
        yield batch()


def _per_file(spark: SparkSession, files: list[ZkFile], fn: Callable[[str, str], Iterable[tuple[Any, ...]]],
              schema: StructType) -> DataFrame:  # fmt: skip
    """One task per file (at least one): mapInArrow over a frame of one (path, file) row a partition, the
    row picked from the list by `spark.range`'s id (each of its partitions holds one id)."""
    listed = F.array(
        *(F.struct(F.lit(str(f.path)).alias("path"), F.lit(f.file).alias("file")) for f in files)
    )
    one_each = spark.range(0, len(files), 1, max(len(files), 1))
    paths = one_each.select(F.element_at(listed, F.col("id").cast("int") + 1).alias("f")).select("f.*")

    def parse(batches: Iterator[Any]) -> Iterator[Any]:
        for b in batches:
            for path, file in zip(b.column(0).to_pylist(), b.column(1).to_pylist(), strict=True):
                yield from _arrow_batches(fn(path, file), schema)

    return paths.mapInArrow(parse, schema)


def _split(raw: DataFrame, source: str) -> tuple[DataFrame, DataFrame]:
    good = raw.where(F.col("bad_reason").isNull()).drop(*(f.name for f in _BAD))
    bad = raw.where(F.col("bad_reason").isNotNull()).select(
        F.lit(source).alias("source"),
        F.col("bad_file").alias("file"),
        F.col("bad_position").alias("position"),
        F.col("bad_reason").alias("reason"),
        F.col("bad_raw").alias("raw"),
    )
    return good, bad


def read_znode_history(spark: SparkSession, logs: list[ZkFile]) -> tuple[DataFrame, DataFrame]:
    """`znode_history` and its bad records from txn log files."""
    if not logs:
        return empty(spark, schemas.ZNODE_HISTORY), empty(spark, schemas.BAD_RECORDS)
    # Kept: a dozen views and analyses read the history, and each reading would decode the logs again.
    raw = kept(_per_file(spark, logs, history_rows, HISTORY_RAW))
    good, bad = _split(raw, "zk-txnlog")
    history = good.withColumn("time", F.timestamp_millis("time")).select(*schemas.ZNODE_HISTORY.names)
    return history, bad


def read_zk_state(
    spark: SparkSession, snapshots: list[ZkFile], logs: list[ZkFile], upto: int | None = None
) -> tuple[DataFrame, DataFrame]:
    """`znodes` as of zxid `upto` (None: the newest), and the bad records met on the way."""
    usable = [s for s in snapshots if upto is None or s.zxid <= upto]
    if not usable and not logs:
        return empty(spark, schemas.ZNODES), empty(spark, schemas.BAD_RECORDS)
    # One task replays the tree: one partition, or every (empty) partition would replay it again. Kept, as
    # the history is: every query that reads the tree would replay it again in a Python worker.
    raw = kept(
        spark.range(1, numPartitions=1).mapInArrow(
            lambda _: _arrow_batches(state_rows(usable, logs, upto), ZNODES_RAW), ZNODES_RAW
        )
    )
    good, bad = _split(raw, "zk-files")
    znodes = (
        good.withColumn("ctime", F.timestamp_millis("ctime"))
        .withColumn("mtime", F.timestamp_millis("mtime"))
        .withColumn("parent", F.when(F.col("path") != "/", F.regexp_replace("path", "/[^/]*$", "")))
        .withColumn("parent", F.when(F.col("parent") == "", F.lit("/")).otherwise(F.col("parent")))
        .withColumn("name", F.regexp_extract("path", "([^/]*)$", 1))
        .select(*schemas.ZNODES.names)
    )
    return znodes, bad
