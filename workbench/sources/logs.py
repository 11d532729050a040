"""Broker log4j logs -> `log_events`, with every line that is not part of an event in `bad_records`.

Files in Kafka's own layout are read and parsed in Spark's JVM (`jvm_logs.py`) when the session has our
jar; the rest, and all without it, as follows. Spark reads each file in chunks that open where a log4j
header opens (`\\n[`; see `log4j.py`), so a chunk is normally one whole event and a split of a large file
never cuts one. Parsing runs on Arrow batches in the Python workers (`mapInArrow`, vectorised: numpy and
Arrow's RE2 kernels, never a Python call per line); Spark only reads, distributes and converts the time
stamps. Line numbers are counted in each split and offset by the lines of the file's earlier splits,
counted beforehand in one cheap pass (only when Spark splits a file at all).

Gzip cannot be split, so Spark reads a rotated `.gz` in one task. One larger than a task's most
(spark.sql.files.maxPartitionBytes) is unpacked to a scratch dir while it is checked (`_unpack_dir`), and
Spark reads the plain copy in splits; events and bad lines still name the `.gz` and number its lines.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import struct
import sys
import tempfile
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import BinaryIO

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from workbench import schemas
from workbench.bundle import LogFile
from workbench.sources import jvm_logs, layouts, log4j
from workbench.sources.common import bad_records_frame
from workbench.spark import conf_bytes, leaf_parallelism


@dataclass(frozen=True)
class FileProblem:
    """A whole-file problem found before Spark reads it (unreadable, corrupt gzip)."""

    file: str
    position: int | None
    reason: str


def read_logs(spark: SparkSession, files: list[LogFile]) -> tuple[DataFrame, DataFrame]:
    """Return (log_events, bad_records) for the given log files."""
    parsed, bad_files = parse_logs(spark, files)
    return events_of(parsed), bad_files.unionByName(bad_lines_of(parsed))


def parse_logs(spark: SparkSession, files: list[LogFile]) -> tuple[DataFrame, DataFrame]:
    """(events and bad lines from one parse, in log4j.PARSED with `ts`; bad records of whole files).
    A caller that asks many questions caches the part it reuses (frames.Bundle)."""
    names: dict[int | None, list[str]] = {}
    for f in files:
        names.setdefault(f.broker_id, []).append(f.file)
    unread = {f.file: why for f in files if (why := layouts.not_read(names, f.file, f.broker_id))}
    files = [f for f in files if f.file not in unread]
    unpack = _worth_unpacking(spark, files)
    problems, unpacked = check_files(files, unpack, _unpack_dir(spark) if unpack else None)
    sound = {f.file: str(f.path) for f in files if f.file not in {p.file for p in problems}}
    unread |= {
        file: f"the same bytes as {first} (a logs folder several brokers share, captured for each): read "
        "once, there; each line is given to the broker its own context names"
        for file, first in layouts.copies(sound).items()
    }
    problems += [FileProblem(file, None, why) for file, why in unread.items()]
    unreadable = {p.file for p in problems if p.position is None}
    readable = [f for f in files if f.file not in unreadable]
    bad_files = bad_records_frame(spark, [("log", p.file, p.position, p.reason, "") for p in problems])
    if readable:
        paths = {f.file: unpacked.get(f.file) or os.path.abspath(f.path) for f in readable}
        infos = {paths[f.file]: _info(f, paths[f.file]) for f in readable}
        in_jvm = {p: i for p, i in infos.items() if jvm_logs.plain(i)}
        if in_jvm and not jvm_logs.available(spark):
            jvm_logs.warn_missing()
            in_jvm = {}
        parts = []
        if in_jvm:
            sizes = [i.size for i in in_jvm.values()]
            open_cost = conf_bytes(spark, "spark.sql.files.openCostInBytes", "4m")
            parts.append(jvm_logs.read(spark, in_jvm, max_split_bytes(spark, sizes), open_cost))
        rest = {p: i for p, i in infos.items() if p not in in_jvm}
        if rest:
            chunks, offsets = _chunks(spark, rest)
            parts.append(chunks.mapInArrow(partial(log4j.parse, files=rest, offsets=offsets), log4j.PARSED))
        parsed = parts[0] if len(parts) == 1 else parts[0].unionByName(parts[1])
    else:
        parsed = spark.createDataFrame([], log4j.PARSED)
    return parsed.withColumn("ts", _timestamp(F.col("ts_raw"))), bad_files


def events_of(parsed: DataFrame) -> DataFrame:
    return parsed.where(F.col("reason").isNull()).select(*schemas.LOG_EVENTS.fieldNames())


def bad_lines_of(parsed: DataFrame) -> DataFrame:
    return parsed.where(F.col("reason").isNotNull()).select(
        F.lit("log").alias("source"), "file", F.col("line_no").alias("position"), "reason", "raw"
    )


def _info(f: LogFile, path: str) -> log4j.FileInfo:
    """`path` is what Spark reads: the file, or its unpacked copy."""
    layout = layouts.sniff(path)
    return log4j.FileInfo(f.file, f.broker_id, f.log, os.path.getsize(path), layout.reopen, layout.wrap or "")


def _chunks(
    spark: SparkSession, infos: dict[str, log4j.FileInfo]
) -> tuple[DataFrame, dict[tuple[str, int], int]]:
    """The files read in chunks (one read per separator), and the line offsets of their splits."""
    by_reopen: dict[str, list[str]] = {}
    for path, info in infos.items():
        by_reopen.setdefault(info.reopen, []).append(path)
    frames: list[DataFrame] = []
    offsets: dict[tuple[str, int], int] = {}
    for reopen, paths in sorted(by_reopen.items()):
        frame = (
            spark.read.option("lineSep", "\n" + reopen)
            .option("ignoreCorruptFiles", "true")  # corrupt gzip: reported by check_files
            .text(sorted(paths))
            .select(
                F.make_valid_utf8("value").alias("value"),
                F.col("_metadata.file_path").alias("path"),  # decoded by log4j.parse, once per file
                F.col("_metadata.file_block_start").alias("block"),
                F.col("_metadata.file_block_length").alias("block_length"),
            )
        )
        split = max_split_bytes(spark, [infos[p].size for p in paths])
        if any(infos[p].size > split and not p.endswith(".gz") for p in paths):
            offsets.update(split_offsets(frame))
        frames.append(frame)
    chunks = frames[0]
    for frame in frames[1:]:
        chunks = chunks.unionByName(frame)
    return chunks, offsets


def max_split_bytes(spark: SparkSession, sizes: list[int]) -> int:
    """The size Spark cuts files into when it reads these (FilePartition.maxSplitBytes, Spark 3.x-4.x):
    spark.sql.files.maxPartitionBytes, lowered to spread the bytes over the default parallelism."""
    open_cost = conf_bytes(spark, "spark.sql.files.openCostInBytes", "4m")
    wanted = spark.conf.get("spark.sql.files.minPartitionNum", None)
    cores = int(wanted) if wanted else leaf_parallelism(spark)
    per_core = sum(size + open_cost for size in sizes) // max(1, cores)
    return int(min(_max_partition_bytes(spark), max(open_cost, per_core)))


def _max_partition_bytes(spark: SparkSession) -> int:
    return conf_bytes(spark, "spark.sql.files.maxPartitionBytes", "128m")


def split_offsets(chunks: DataFrame) -> dict[tuple[str, int], int]:
    """(path, split start) -> lines of the file before that split: the line separators in each split's
    chunks (a chunk's last '\\r' is the CR of the '\\r\\n' that opened the next chunk), summed in order;
    and (path, log4j.LAST_SPLIT) -> the start of the file's last split that has chunks: Spark's reader
    finishes a split's last record in the splits after it, which then have none, so the file may end there.
    Only one row per split reaches the driver."""
    v = F.col("value")

    def count(s: str) -> Column:
        return (F.length(v) - F.length(F.replace(v, F.lit(s), F.lit("")))) / len(s)

    lines = 1 + count("\n") + count("\r") - count("\r\n") - v.endswith("\r").cast("int")
    per_split = chunks.groupBy("path", "block").agg(F.sum(lines).cast("long").alias("n")).collect()
    offsets: dict[tuple[str, int], int] = {}
    seen: dict[str, int] = {}
    for row in sorted(per_split, key=lambda r: (r.path, r.block)):
        offsets[row.path, row.block] = seen.get(row.path, 0)
        offsets[row.path, log4j.LAST_SPLIT] = row.block
        seen[row.path] = seen.get(row.path, 0) + row.n
    return offsets


def check_files(
    files: list[LogFile], unpack: frozenset[str] = frozenset(), into: str | None = None
) -> tuple[list[FileProblem], dict[str, str]]:
    """Find unreadable files and corrupt gzip, which Spark would otherwise skip without a word, and
    unpack the gzip files named in `unpack` into the dir `into` on the way: (problems, plain copy by
    `LogFile.file`). Gzip is checked to its end on a few threads (zlib releases the GIL)."""
    problems: list[FileProblem] = []
    gz: list[tuple[LogFile, str | None]] = []
    for f in files:
        if not os.access(f.path, os.R_OK):
            problems.append(FileProblem(f.file, None, "file cannot be read"))
        elif f.compressed:
            copy = os.path.join(into, f"{len(gz)}-{f.path.name[:-3]}") if into and f.file in unpack else None
            gz.append((f, copy))
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        checked = list(pool.map(lambda fc: _check_gzip(*fc), gz))
    problems += [p for p, _ in checked if p is not None]
    unpacked = {f.file: copy for (f, _), (_, copy) in zip(gz, checked, strict=True) if copy is not None}
    return problems, unpacked


class _Copy:
    """The unpacked copy being written. Failing to write it (a full or missing scratch dir) is no
    fault of the log: it is said on stderr, the copy is dropped and Spark reads the .gz as it is."""

    def __init__(self, f: LogFile, path: str | None) -> None:
        self.f, self.path = f, path
        self.out: BinaryIO | None = None
        if path is not None:
            try:
                self.out = open(path, "wb")  # noqa: SIM115 closed by close()
            except OSError as e:
                self._give_up(e)

    def write(self, data: bytes) -> None:
        if self.out is not None:
            try:
                self.out.write(data)
            except OSError as e:
                self._give_up(e)

    def close(self, keep: bool) -> str | None:
        """The copy's path if it is kept."""
        if self.out is not None:
            try:
                self.out.close()
            except OSError as e:
                self._give_up(e)
        if self.out is not None and keep:
            return self.path
        if self.path is not None and os.path.exists(self.path):
            os.remove(self.path)
        return None

    def _give_up(self, e: OSError) -> None:
        print(f"workbench: {self.f.file}: cannot unpack it ({e}); it is read as it is", file=sys.stderr)
        out, self.out = self.out, None
        if out is not None:
            with contextlib.suppress(OSError):  # its buffer cannot be written either
                out.close()


def _check_gzip(f: LogFile, copy: str | None = None) -> tuple[FileProblem | None, str | None]:
    """Decompress to the end, member after member, counting lines, so that a cut file says how much
    of it survives; write what it holds to `copy` if given: (the problem, the copy if kept, which it
    is only when the whole file is sound; Spark reads a corrupt one as it is, up to where it breaks)."""
    lines, d, pending = 0, zlib.decompressobj(wbits=31), False
    out = _Copy(f, copy)
    try:
        with open(f.path, "rb") as raw:
            while chunk := raw.read(1 << 16):
                while chunk:
                    data = d.decompress(chunk)
                    lines += data.count(b"\n")
                    out.write(data)
                    pending, chunk = not d.eof, d.unused_data if d.eof else b""
                    if d.eof:
                        d = zlib.decompressobj(wbits=31)
        if pending:
            raise EOFError("compressed file ended before the end-of-stream marker")
    except (OSError, EOFError, zlib.error) as e:
        out.close(keep=False)
        if lines == 0 and isinstance(e, zlib.error) and "header" in str(e):
            return FileProblem(f.file, None, f"not gzip ({e})"), None
        reason = f"truncated or corrupt gzip ({e}): lines after line {lines} are lost"
        return FileProblem(f.file, lines + 1, reason), None
    return None, out.close(keep=True)


def _worth_unpacking(spark: SparkSession, files: list[LogFile]) -> frozenset[str]:
    """The gzip files that unpacked are larger than what Spark reads in one task at most
    (spark.sql.files.maxPartitionBytes), by the size gzip's trailer gives (ISIZE, modulo 4 GiB; never
    less than the packed size). Smaller ones are cheaper read as they are (bench/RESULTS.md)."""
    limit = _max_partition_bytes(spark)
    return frozenset(f.file for f in files if f.compressed and _unpacked_size(f) > limit)


def _unpacked_size(f: LogFile) -> int:
    """Past 4 GiB ISIZE wraps, but such a log is hundreds of MB packed."""
    try:
        packed = os.path.getsize(f.path)
        if packed < 18:  # no room for a trailer
            return packed
        with open(f.path, "rb") as raw:
            raw.seek(-4, os.SEEK_END)
            return max(packed, struct.unpack("<I", raw.read(4))[0])
    except OSError:
        return 0


def _unpack_dir(spark: SparkSession) -> str | None:
    """A fresh dir for this process's unpacked gzip, removed when it exits: under `WORKBENCH_SCRATCH`,
    which on a cluster must be shared with the executors (like the bundle), else under the temp dir
    when Spark runs locally; None (no unpacking) on a cluster without it."""
    root = os.environ.get("WORKBENCH_SCRATCH")
    if root is None and not str(spark.sparkContext.master).startswith("local"):
        return None
    try:
        if root:
            os.makedirs(root, exist_ok=True)
        path = tempfile.mkdtemp(prefix="workbench-unpacked-", dir=root)
    except OSError as e:
        print(
            f"workbench: no scratch dir to unpack large .gz logs into ({e}); read as they are",
            file=sys.stderr,
        )
        return None
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


def _timestamp(raw: Column) -> Column:
    """'2021-05-04 14:08:05,300' and its variants -> timestamp; null if it is no real date."""
    common = F.try_to_timestamp(raw, F.lit("yyyy-MM-dd HH:mm:ss,SSS"))  # log4j's default, cheaper
    iso = F.regexp_replace(F.regexp_replace(raw, ",", "."), r"([+-]\d{2})(\d{2})$", "$1:$2")
    return F.coalesce(common, iso.try_cast("timestamp"))
