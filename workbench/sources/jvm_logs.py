"""Kafka's log4j files parsed in Spark's JVM (jvm/src/workbench/jvm, built by `make` into a jar).

Python workers cost about 1.6 µs a line before any work (issue 29), so files in Kafka's own layout are
read and parsed by a data source of our own in the JVM: the same rules as log4j.py and catalog.py, given
to it as options from the one place they are written (their regexes, made Java's), so that the two parsers
cannot drift apart. Files behind a prefix or in JSON (layouts.py) stay with log4j.py. Where the jar is
missing (a bare `pip install`), every file stays with log4j.py.
"""

from __future__ import annotations

import json
import warnings
from functools import cache

from pyspark.sql import DataFrame, SparkSession

from workbench import schemas
from workbench.kafka.templates import Template
from workbench.sources import catalog, log4j, log4j_lines
from workbench.spark import workbench_jar

SOURCE = "workbench.jvm.LogSource"


def available(spark: SparkSession) -> bool:
    """Whether this session was started with our jar (`spark.jars`, set by spark.spark_session)."""
    return str(workbench_jar()) in (spark.conf.get("spark.jars", "") or "").split(",")


def warn_missing() -> None:
    """Say once that the logs fall back to the Python workers: a bare `pip install` has no jar, and the
    only sign would otherwise be a parse about three times slower (bench/README.md)."""
    warnings.warn(
        f"the Spark session has no {workbench_jar()} (`make` builds it, spark_session adds it): "
        "Kafka's logs are parsed in Python workers, about 3 times slower",
        RuntimeWarning,
        stacklevel=1,  # shown once per place it is raised from: here, so once a process
    )


def java_regex(pattern: str, names: bool = True) -> str:
    """A regex of ours (written for RE2, which types the events in log4j.py) in Java's syntax and with RE2's
    meaning: `(?P<name>` is `(?<name>` (or a plain group without `names`: Java's names cannot hold '_');
    `$` is the end of the text (`\\z`: Java's `$` also matches before a last line end); `\\s` is RE2's
    four white spaces (Java's also has \\x0B); `.` stops only at '\\n' (UNIX_LINES, `(?d)`)."""
    out, i, klass = ["(?d)"], 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\":
            pair = pattern[i : i + 2]
            out.append(
                {"\\s": "\\t\\n\\f\\r " if klass else "[\\t\\n\\f\\r ]"}.get(pair)
                or ("[^\\t\\n\\f\\r ]" if pair == "\\S" and not klass else pair)
            )
            i += 2
            continue
        if klass:
            klass = c != "]"
        elif c == "[":
            klass = True
        elif c == "$":
            c = "\\z"
        elif c == "(" and pattern.startswith("(?P<", i):
            end = pattern.index(">", i)
            c, i = ("(?<" + pattern[i + 4 : end] + ">" if names else "("), end
        out.append(c)
        i += 1
    return "".join(out)


def plain(info: log4j.FileInfo) -> bool:
    """Kafka's layout with nothing around its lines: what the JVM parser reads."""
    return info.reopen == "[" and not info.wrap


# The rules by the name the JVM knows them by, in Python's syntax (made Java's on the way).
RULES = {
    "head": log4j_lines.HEAD,
    "broken_header": log4j_lines.BROKEN_HEADER,
    "logger_at_end": log4j_lines.LOGGER_AT_END,
    "exception_line": log4j_lines.EXCEPTION_LINE,
    "trace_line": log4j_lines.TRACE_LINE,
    "control_chars": log4j_lines.CONTROL_CHARS,
    "context": log4j_lines.CONTEXT,
    "own_id": log4j_lines.OWN_ID,
    "logger": log4j_lines.LOGGER,
    "context_tp": catalog.CONTEXT_TP,
    "replica_topic": catalog.REPLICA_TOPIC,
    "one_topic": catalog.ONE_TOPIC,
    "one_tp": catalog.ONE_TP,
    "int": catalog.INT,
}


_META = set("\\.^$*+?()[]{}|")


def needs(pattern: str) -> str:
    """The text every match of `pattern` holds: its leading literal characters (after a `^`; an escaped
    punctuation mark is one), '' where it opens otherwise or has a `|` outside groups. The JVM looks for
    it (a vectorised indexOf) before it runs the regex."""
    depth, klass, i = 0, False, 0
    while i < len(pattern):  # an alternation at the top: no text is common to every match
        c = pattern[i]
        i += 2 if c == "\\" else 1
        if klass:
            klass = c != "]"
        elif c in "([|)":
            klass = c == "["
            depth += {"(": 1, ")": -1}.get(c, 0)
            if c == "|" and depth == 0:
                return ""
    out, i = [], 1 if pattern.startswith("^") else 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern) and not pattern[i + 1].isalnum():
            c, width = pattern[i + 1], 2
        elif c in _META:
            break
        else:
            width = 1
        if pattern[i + width : i + width + 1] in ("*", "?", "{"):  # that character may be absent
            break
        out.append(c)
        i += width
    return "".join(out)


@cache
def rules() -> str:
    return json.dumps(
        {
            **{name: java_regex(pattern) for name, pattern in RULES.items()},
            "needs": {name: needs(pattern) for name, pattern in RULES.items()},
            "reasons": [*log4j_lines.REASONS, log4j_lines.NO_EVENT, log4j_lines.SPLIT_ORPHAN],
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
        "pattern": java_regex(t.re2_pattern, names=False),
        "fields": fields,
        "consts": sorted(t.consts.items()),
        "loose": t.loose,
        "plan": None if t.plan is None else {"head": t.plan[0], "steps": [list(step) for step in t.plan[1]]},
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
