"""Broker log4j logs -> `log_events`, with every line that is not part of an event in `bad_records`.

Kafka's layout is `[%d] %p %m (%c)%n` (config/log4j.properties at 2.5.1, 2.8.2, 3.6.2). An event is a
header line, then the lines that continue its message until one ends with `(logger)` (KafkaZkClient's
"Stat of the created znode ..." ends with a newline, so its logger lands on the next line), then any
throwable log4j prints after it. Anything else is quarantined with a reason. Spark reads the lines;
built-in column functions and windows do the rest (no per-line Python).
"""

from __future__ import annotations

import os
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from workbench import schemas
from workbench.bundle import LogFile
from workbench.sources.catalog import type_events
from workbench.sources.common import bad_records_frame, cut, decoded_path, empty

# [%d] %p: ISO8601 date ('T' or ' ', ',' or '.' before millis, optional zone), the level, then the rest.
# A `name | ` prefix is what `docker compose logs` adds.
HEADER = (
    r"^(?:[A-Za-z0-9_.@-]+\s*\|\s?)?"
    r"\[(\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[,.]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?)\]\s?"
    r"(TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL)\s(.*)$"
)
# What looks like a header but is not one (a cut or pasted line) is quarantined, never a continuation.
BROKEN_HEADER = r"^\s*\[?\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}"
# ` (%c)` or ` (%c:%L)` at the end of an event's last message line.
LOGGER_AT_END = r" \(([A-Za-z_$][A-Za-z0-9_$.-]*)(?::(?:\d+|\?))?\)\s*$"
# Lines log4j prints for a throwable: 'pkg.Class: message', '\tat ...', 'Caused by: ...', '... 5 more'.
EXCEPTION_LINE = r"^(?:[a-z_$][A-Za-z0-9_$]*\.)+[A-Z][A-Za-z0-9_$]*(?::\s.*|:)?\s*$"
TRACE_LINE = r"^(?:\s+at\s\S|\s*\.\.\.\s\d+\s(?:more|common frames omitted)|\s*Caused by:\s|\s*Suppressed:\s)"
CONTROL_CHARS = "[\\x00-\\x08\\x0B\\x0C\\x0E-\\x1F\\x7F]"
LAYOUT = "'[yyyy-MM-dd HH:mm:ss,SSS] LEVEL message (logger)'"


@dataclass(frozen=True)
class FileProblem:
    """A whole-file problem found before Spark reads it (unreadable, corrupt gzip)."""

    file: str
    position: int | None
    reason: str


def read_logs(spark: SparkSession, files: list[LogFile]) -> tuple[DataFrame, DataFrame]:
    """Return (log_events, bad_records) for the given log files."""
    problems = check_files(files)
    unreadable = {p.file for p in problems if p.position is None}
    readable = [f for f in files if f.file not in unreadable]
    bad_files = bad_records_frame(spark, [("log", p.file, p.position, p.reason, "") for p in problems])
    if not readable:
        return empty(spark, schemas.LOG_EVENTS), bad_files
    lines = _lines(spark, readable)
    events = type_events(_events(lines))
    bad_lines = lines.where(F.col("bad").isNotNull()).select(
        F.lit("log").alias("source"),
        "file",
        F.col("line_no").alias("position"),
        F.col("bad").alias("reason"),
        cut("value").alias("raw"),
    )
    return events.select(*schemas.LOG_EVENTS.fieldNames()), bad_files.unionByName(bad_lines)


def check_files(files: list[LogFile]) -> list[FileProblem]:
    """Find unreadable files and corrupt gzip, which Spark would otherwise skip without a word.
    Gzip is checked to its end on a few threads (zlib releases the GIL)."""
    problems: list[FileProblem] = []
    gz: list[LogFile] = []
    for f in files:
        if not os.access(f.path, os.R_OK):
            problems.append(FileProblem(f.file, None, "file cannot be read"))
        elif f.compressed:
            gz.append(f)
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        problems += [p for p in pool.map(_check_gzip, gz) if p is not None]
    return problems


def _check_gzip(f: LogFile) -> FileProblem | None:
    """Decompress to the end, member after member, counting lines, so that a cut file says how much
    of it survives."""
    lines, d, pending = 0, zlib.decompressobj(wbits=31), False
    try:
        with open(f.path, "rb") as raw:
            while chunk := raw.read(1 << 16):
                while chunk:
                    lines += d.decompress(chunk).count(b"\n")
                    pending, chunk = not d.eof, d.unused_data if d.eof else b""
                    if d.eof:
                        d = zlib.decompressobj(wbits=31)
        if pending:
            raise EOFError("compressed file ended before the end-of-stream marker")
    except (OSError, EOFError, zlib.error) as e:
        if lines == 0 and isinstance(e, zlib.error) and "header" in str(e):
            return FileProblem(f.file, None, f"not gzip ({e})")
        return FileProblem(
            f.file, lines + 1, f"truncated or corrupt gzip ({e}): lines after line {lines} are lost"
        )
    return None


def _lines(spark: SparkSession, files: list[LogFile]) -> DataFrame:
    """One row per physical line with its file, line number and place in an event."""
    origin = spark.createDataFrame(
        [(str(f.path), f.file, f.broker_id, f.log) for f in files],
        "abs_path string, file string, broker_id int, log string",
    )
    raw = (
        spark.read.option("ignoreCorruptFiles", "true")  # corrupt gzip: reported by check_files
        .text([str(f.path) for f in files])
        .select(
            "value",
            decoded_path(F.col("_metadata.file_path")).alias("abs_path"),
            F.col("_metadata.file_block_start").alias("block"),
            F.monotonically_increasing_id().alias("seq"),
        )
        .join(F.broadcast(origin), "abs_path", "left")
        .withColumn("file", F.coalesce("file", "abs_path"))
    )
    in_file = Window.partitionBy("abs_path").orderBy("block", "seq")
    v = F.col("value")
    lines = (
        raw.withColumn("line_no", F.row_number().over(in_file).cast("long"))
        .withColumn("is_header", v.rlike(HEADER))
        .withColumn("event_no", F.sum(F.col("is_header").cast("int")).over(in_file))
    )
    before = (
        Window.partitionBy("abs_path", "event_no")
        .orderBy("line_no")
        .rowsBetween(Window.unboundedPreceding, -1)
    )
    closed = F.coalesce(F.max(v.rlike(LOGGER_AT_END)).over(before), F.lit(False))
    in_trace = F.coalesce(F.max(v.rlike(EXCEPTION_LINE)).over(before), F.lit(False))
    binary = v.rlike(CONTROL_CHARS) | (
        (F.length(v) - F.length(F.regexp_replace(v, "\ufffd", ""))) * 4 > F.length(v)
    )
    trace_shaped = v.rlike(EXCEPTION_LINE) | v.rlike(TRACE_LINE)
    bad = (
        F.when(F.col("is_header"), None)
        .when(binary, "binary or non-text data")
        .when(v.rlike(BROKEN_HEADER), f"malformed log line header; expected {LAYOUT}")
        .when(F.col("event_no") == 0, f"no log event before this line; expected {LAYOUT}")
        .when(F.trim(v) == "", None)
        .when(~closed, None)
        .when(trace_shaped | in_trace, None)
        .otherwise("text after a complete log event that is not a stack trace")
    )
    part = F.when(F.col("is_header"), "header").when(~closed, "message").otherwise("trace")
    return lines.withColumn("bad", bad).withColumn("part", F.when(bad.isNull(), part))


def _events(lines: DataFrame) -> DataFrame:
    """Join each header line with the lines that continue it, and split layout fields."""
    keys = ["abs_path", "event_no"]
    headers = lines.where("is_header").select(
        *keys,
        "file",
        "broker_id",
        "log",
        "line_no",
        F.regexp_extract("value", HEADER, 1).alias("ts_raw"),
        F.regexp_extract("value", HEADER, 2).alias("level"),
        F.regexp_extract("value", HEADER, 3).alias("rest"),
    )
    continued = (
        lines.where(F.col("part").isin("message", "trace"))
        .groupBy(*keys)
        .agg(F.sort_array(F.collect_list(F.struct("line_no", "part", "value"))).alias("more"))
    )
    more = F.coalesce(F.col("more"), F.array())
    msg_lines = F.transform(F.filter(more, lambda x: x["part"] == "message"), lambda x: x["value"])
    trace_lines = F.transform(F.filter(more, lambda x: x["part"] == "trace"), lambda x: x["value"])
    full = F.concat_ws("\n", F.array(F.col("rest")), msg_lines)
    logger = F.regexp_extract(full, "(?s)" + LOGGER_AT_END, 1)
    body = F.rtrim(
        F.when(logger != "", F.regexp_extract(full, "(?s)^(.*)" + LOGGER_AT_END, 1)).otherwise(full)
    )
    context_re = r"^\[([^\[\]]*)\]:?\s"
    trace = F.concat_ws("\n", trace_lines)
    exception = F.filter(trace_lines, lambda x: x.rlike(EXCEPTION_LINE))
    return (
        headers.join(continued, keys, "left")
        .select(
            "*",
            _timestamp(F.col("ts_raw")).alias("ts"),
            F.when(F.col("level") == "WARNING", "WARN").otherwise(F.col("level")).alias("level2"),
            F.nullif(logger, F.lit("")).alias("logger"),
            body.alias("body"),
            (F.size(more) + 1).alias("lines"),
            F.nullif(trace, F.lit("")).alias("stack_trace"),
            F.get(exception, 0).alias("exception"),
        )
        .withColumn("context", F.nullif(F.regexp_extract("body", context_re, 1), F.lit("")))
        .withColumn(
            "message",
            F.when(F.col("context").isNotNull(), F.regexp_replace("body", context_re, "")).otherwise(
                F.col("body")
            ),
        )
        .drop("level")
        .withColumnRenamed("level2", "level")
    )


def _timestamp(raw: Column) -> Column:
    """'2021-05-04 14:08:05,300' and its variants -> timestamp; null if it is no real date."""
    iso = F.regexp_replace(F.regexp_replace(raw, ",", "."), r"([+-]\d{2})(\d{2})$", "$1:$2")
    return iso.try_cast("timestamp")
