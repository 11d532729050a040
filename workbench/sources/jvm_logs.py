"""Kafka's log4j files parsed in Spark's JVM (jvm/src/workbench/jvm, built by `make` into a jar).

Python workers cost about 1.6 µs a line before any work (issue 29), so files in Kafka's own layout are
read and parsed by a data source of our own in the JVM: the same rules as log4j.py and catalog.py, given
to it as options from the one place they are written (their regexes, made Java's), so that the two parsers
cannot drift apart. Files behind a prefix or in JSON (layouts.py) stay with log4j.py. Where the jar is
missing (a bare `pip install`), every file stays with log4j.py.
"""

from __future__ import annotations

import json
import re
from functools import cache

from pyspark.sql import DataFrame, SparkSession

from workbench import schemas
from workbench.kafka.templates import Template
from workbench.sources import catalog, log4j
from workbench.spark import workbench_jar

SOURCE = "workbench.jvm.LogSource"
_NAMED = re.compile(r"\(\?P<([A-Za-z_][A-Za-z0-9_]*)>")


def available(spark: SparkSession) -> bool:
    """Whether this session was started with our jar (`spark.jars`, set by spark.spark_session)."""
    return str(workbench_jar()) in (spark.conf.get("spark.jars", "") or "").split(",")


def java_regex(pattern: str) -> str:
    """A regex of ours in Java's syntax: `(?P<name>` is `(?<name>` (our group names have no '_' where the
    JVM reads them by name, RULES)."""
    return _NAMED.sub(r"(?<\1>", pattern)


def plain(info: log4j.FileInfo) -> bool:
    """Kafka's layout with nothing around its lines: what the JVM parser reads."""
    return info.reopen == "[" and not info.wrap


@cache
def rules() -> str:
    return json.dumps(
        {
            "head": java_regex(log4j.HEAD),
            "broken_header": log4j.BROKEN_HEADER,
            "logger_at_end": java_regex(log4j.LOGGER_AT_END),
            "exception_line": log4j.EXCEPTION_LINE,
            "trace_line": log4j.TRACE_LINE,
            "control_chars": log4j.CONTROL_CHARS,
            "context": java_regex(log4j.CONTEXT),
            "own_id": java_regex(log4j.OWN_ID),
            "logger": java_regex(log4j._LOGGER),
            "context_tp": java_regex(catalog.CONTEXT_TP),
            "replica_topic": java_regex(catalog.REPLICA_TOPIC),
            "one_topic": java_regex(catalog.ONE_TOPIC),
            "one_tp": java_regex(catalog.ONE_TP),
            "int": catalog.INT,
            "reasons": [*log4j.REASONS, log4j.NO_EVENT, log4j.SPLIT_ORPHAN],
            "raw_cut": schemas.RAW_CUT,
        }
    )


def _template(t: Template) -> dict[str, object]:
    """A template for the JVM: its groups by position (Java's names cannot hold '_'), in their order."""
    fields = sorted(t.fields, key=t.fields.__getitem__)
    assert t.regex.groups == len(fields), f"{t.kind}: a capturing group without a name"
    word = catalog.FIRST_WORD.match(t.text)
    return {
        "kind": t.kind,
        "loggers": list(t.loggers),
        "word": word.group(1) if word else None,
        "literal": t.literal,
        "pattern": _NAMED.sub("(", t.re2_pattern),
        "fields": fields,
        "consts": sorted(t.consts.items()),
        "loose": t.loose,
    }


@cache
def templates() -> str:
    return json.dumps([_template(t) for t in catalog.TEMPLATES])


def read(spark: SparkSession, infos: dict[str, log4j.FileInfo], max_split: int, open_cost: int) -> DataFrame:
    """log4j.PARSED rows of these files (by the path Spark reads), parsed in the JVM."""
    files = [
        {"path": path, "file": i.file, "broker_id": i.broker_id, "log": i.log, "size": i.size}
        for path, i in sorted(infos.items())
    ]
    return (
        spark.read.format(SOURCE)
        .option("schema", log4j.PARSED)
        .option("files", json.dumps(files))
        .option("rules", rules())
        .option("catalog", templates())
        .option("maxSplitBytes", str(max_split))
        .option("openCostInBytes", str(open_cost))
        .load()
    )
