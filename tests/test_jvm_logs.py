"""The JVM's log parser (jvm/, sources/jvm_logs.py) against log4j.py's, event by event and line by line: on
every sample bundle, on the real logs of shared/real-evidence, on files written to hold every odd case the
layout allows, gzip (whole and cut) included, and on files Spark cuts into several splits."""

from __future__ import annotations

import gzip
import os
import warnings
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import SAMPLE_DATA
from pyspark.sql import SparkSession

from workbench.bundle import LogFile, log_files
from workbench.frames import open_bundle
from workbench.kafka.messages import CATALOG
from workbench.kafka.templates import Template
from workbench.sources import jvm_logs
from workbench.sources.logs import parse_logs
from workbench.spark import workbench_jar

HEAD = "[2024-03-12 10:00:0{s},{ms:03d}] {level} "
ODD_LINES = [
    "before any header: an orphan",
    HEAD.format(s=1, ms=1, level="INFO") + "[Controller id=1] Starting (kafka.controller.KafkaController)",
    HEAD.format(s=1, ms=2, level="WARNING") + "a warning the old way (kafka.server.KafkaServer)",
    HEAD.format(s=1, ms=3, level="ERROR") + "[ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Error "
    "(kafka.server.ReplicaFetcherThread)",
    "org.apache.kafka.common.errors.NotLeaderOrFollowerException: not the leader",
    "\tat kafka.server.ReplicaManager.fetch(ReplicaManager.scala:1)",
    "Caused by: java.io.IOException: broken pipe",
    "\t... 5 more",
    HEAD.format(s=2, ms=4, level="INFO") + "Stat of the created znode at /brokers/ids/1 is: 1,2,3",
    "(kafka.zk.KafkaZkClient)",
    HEAD.format(s=2, ms=5, level="INFO") + "a message (kafka.Logger)",
    "text after the event that is no trace",
    "2024-03-12 10:00:02,006 a cut header",
    "binary \x01\x02 data",
    "   ",
    HEAD.format(s=3, ms=6, level="INFO") + "Partition [orders,3] on broker 2: Shrinking ISR "
    "(kafka.cluster.Partition)",
    "kafka-1  | " + HEAD.format(s=3, ms=7, level="DEBUG") + "behind a compose prefix (kafka.Log)",
    HEAD.format(s=3, ms=8, level="INFO") + "no logger at all",
    "[not a header] but opens with a bracket",
    HEAD.format(s=4, ms=9, level="TRACE") + "[Log partition=orders-0, dir=/d] Rolled (kafka.log.Log)",
    HEAD.format(s=4, ms=10, level="INFO") + "multi",
    "line",
    "message (kafka.Multi:12)",
]


def _rows(spark: SparkSession, files: list[LogFile], in_jvm: bool, monkeypatch: Any) -> Counter[Any]:
    """Every row the parse gives (events and quarantined lines), attrs as sorted pairs, counted."""
    monkeypatch.setattr(jvm_logs, "available", lambda _spark: in_jvm)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the fallback's notice: wanted here
        parsed, _ = parse_logs(spark, files)
    out: Counter[Any] = Counter()
    for row in parsed.collect():
        d = row.asDict()
        d["attrs"] = tuple(sorted((d["attrs"] or {}).items()))
        out[tuple(sorted(d.items()))] += 1
    return out


def _same(spark: SparkSession, files: list[LogFile], monkeypatch: Any) -> int:
    """How many rows both parsers give, once it is checked that they are the same."""
    return sum(_both(spark, files, monkeypatch).values())


def _both(spark: SparkSession, files: list[LogFile], monkeypatch: Any) -> Counter[Any]:
    python, jvm = _rows(spark, files, False, monkeypatch), _rows(spark, files, True, monkeypatch)
    only_python, only_jvm = python - jvm, jvm - python
    assert not only_python and not only_jvm, (list(only_python)[:3], list(only_jvm)[:3])
    return python


def test_the_jar_is_built_and_in_the_session(spark: SparkSession) -> None:
    if not workbench_jar().is_file():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{workbench_jar()} is missing: `make` builds it")
        pytest.skip(f"{workbench_jar()} is not built (make)")
    assert jvm_logs.available(spark)


@pytest.fixture
def jar(spark: SparkSession) -> None:
    if not jvm_logs.available(spark):
        pytest.skip("the session has no workbench jar")  # test_the_jar_is_built_and_in_the_session fails


def test_without_the_jar_the_fallback_is_said(spark: SparkSession, jar: None, monkeypatch: Any) -> None:
    files = open_bundle(SAMPLE_DATA / "deletion-stuck-2.8", spark).evidence.log_files
    monkeypatch.setattr(jvm_logs, "available", lambda _spark: False)
    with pytest.warns(RuntimeWarning, match="session has no .*workbench-jvm.jar"):
        parse_logs(spark, files)
    monkeypatch.setattr(jvm_logs, "available", lambda _spark: True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parse_logs(spark, files)


@pytest.mark.parametrize("sample", sorted(p.name for p in SAMPLE_DATA.iterdir() if (p / "brokers").is_dir()))
def test_samples_parse_the_same(spark: SparkSession, jar: None, sample: str, monkeypatch: Any) -> None:
    files = open_bundle(SAMPLE_DATA / sample, spark).evidence.log_files
    assert _same(spark, files, monkeypatch) > 40


def test_real_logs_parse_the_same(
    spark: SparkSession, jar: None, real_evidence: Path, monkeypatch: Any
) -> None:
    assert _same(spark, log_files(sorted((real_evidence / "logs").iterdir())), monkeypatch) > 100


def test_odd_lines_parse_the_same(spark: SparkSession, jar: None, tmp_path: Path, monkeypatch: Any) -> None:
    text = "\n".join(ODD_LINES)
    (tmp_path / "server.log").write_text(text + "\n")
    (tmp_path / "controller.log").write_bytes((text.replace("\n", "\r\n")).encode())  # no last line ending
    (tmp_path / "state-change.log").write_bytes(text.replace("\n", "\r").encode() + b"\r")
    (tmp_path / "server.log.1").write_bytes(text.encode() + b"\n\xff\xfe not utf-8 \xc3\n")
    two_members = gzip.compress(text.encode()) + gzip.compress(b"\n" + text.encode())
    (tmp_path / "server.log.2.gz").write_bytes(two_members)
    cut = gzip.compress(((text + "\n") * 50).encode())
    (tmp_path / "server.log.3.gz").write_bytes(cut[: len(cut) * 2 // 3])
    (tmp_path / "log-cleaner.log").write_text("")
    (tmp_path / "server.log.4").write_text("no header yet\n" * 9000 + text)  # read a few at a time
    files = log_files(sorted(tmp_path.iterdir()), broker_id=2)
    rows = _same(spark, files, monkeypatch)
    assert rows > 6 * len(ODD_LINES) // 2


def test_files_cut_into_splits_parse_the_same(
    spark: SparkSession, jar: None, tmp_path: Path, monkeypatch: Any
) -> None:
    """Spark reads a file larger than spark.sql.files.maxPartitionBytes in splits: each split's events and
    line numbers are the file's own however the file is cut."""
    logs = sorted((SAMPLE_DATA / "controller-failover-2.5" / "brokers").glob("*/logs/server.log*"))
    biggest = max(logs, key=lambda p: p.stat().st_size)
    crlf = tmp_path / "server.log"
    crlf.write_bytes(biggest.read_bytes().replace(b"\n", b"\r\n"))
    monkeypatch.setitem(os.environ, "WORKBENCH_SMALL_EVIDENCE_MB", "0")
    spark.conf.set("spark.sql.files.maxPartitionBytes", str(biggest.stat().st_size // 7))
    try:
        assert _same(spark, log_files([biggest, crlf], broker_id=1), monkeypatch) > 200
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")


@pytest.mark.parametrize(
    ("pattern", "text"),
    [(r"^abc+d", "abc"), (r"ab?c", "a"), (r"x\.y\(z", "x.y(z"), (r"a|b", ""), (r"(a|b)c", ""), (r"[|]x", "")],
)
def test_the_text_a_regex_needs_is_in_every_match(pattern: str, text: str) -> None:
    """What the JVM looks for before it runs a rule's regex: nothing a match could lack."""
    assert jvm_logs.needs(pattern) == text


def _messages(t: Template) -> list[str]:
    """Messages for a template the JVM matches without a regex: plain values, values that hold the text
    after their field (the shortest match must be chosen as the regex chooses it), an integer that is
    none, and trailing white space."""
    assert t.plan is not None
    head, steps = t.plan

    def written(value: Callable[[str, str, str], str]) -> str:
        return head + "".join(value(name, kind, after) + after for name, kind, after in steps)

    return [
        written(lambda name, kind, after: "-12" if kind == "int" else "v"),
        written(lambda name, kind, after: "7" if kind == "int" else f"a{after}b{after}c"),
        written(lambda name, kind, after: "x" if kind == "int" else "") + " \t",
    ]


def test_templates_matched_without_a_regex_match_as_their_regex(
    spark: SparkSession, jar: None, tmp_path: Path, monkeypatch: Any
) -> None:
    planned = [t for t in CATALOG if t.plan is not None]
    assert len(planned) > 500
    lines = []
    for i, t in enumerate(planned):
        for message in _messages(t):
            logger = f" ({t.loggers[0]})" if t.loggers else ""
            stamp = HEAD.format(s=i % 10, ms=i % 1000, level="INFO")
            lines.append(stamp + message.replace("\n", " ") + logger)
    (tmp_path / "server.log").write_text("\n".join(lines) + "\n")
    rows = _both(spark, log_files([tmp_path / "server.log"], broker_id=1), monkeypatch)
    assert sum(rows.values()) == len(lines)
    typed = sum(n for row, n in rows.items() if dict(row)["event"] is not None)
    assert typed > 2 * len(planned), f"{typed} of {len(lines)} lines typed"
