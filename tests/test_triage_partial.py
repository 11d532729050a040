"""Triage on partial and real evidence: parts of sample bundles removed, a later capture, a version without
topic ids, and a real cluster's data dir beside its real ZooKeeper snapshots. Coverage says what is missing,
and nothing is concluded from evidence that is absent."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import SAMPLE_DATA
from pyspark.sql import SparkSession

from workbench.analysis.findings import STATUSES, Coverage, Finding, Severity
from workbench.analysis.triage import Triage, triage
from workbench.cli import main, render
from workbench.frames import open_bundle


def copy(sample: str, tmp_path: Path) -> Path:
    out = tmp_path / sample
    shutil.copytree(SAMPLE_DATA / sample, out)
    return out


def run(spark: SparkSession, path: Path, *only: str) -> Triage:
    """The triage of the bundle at `path` by the analyses a test asserts on (every one when it names none)."""
    return triage(open_bundle(path, spark), only=only)


def kinds(result: Triage) -> set[str]:
    return {f.kind for f in result.findings}


@pytest.mark.slow
def test_without_zookeeper_history_the_root_cause_is_only_likely(spark: SparkSession, tmp_path: Path) -> None:
    path = copy("topicid-mismatch-2.8", tmp_path)
    shutil.rmtree(path / "zk" / "txnlog")
    result = run(spark, path, "topic_ids", "controller")
    (cause,) = result.of_kind("topic_id.root_cause")
    assert cause.subject["certainty"] == "likely" and cause.subject["cause"] == 1
    assert "txn logs" in cause.summary
    assert result.coverage["topic_ids"].status == "partial"
    assert any("txn logs" in m for m in result.coverage["topic_ids"].missing)
    assert {f.subject["broker"] for f in result.of_kind("topic_id.mismatch")} == {1, 2, 3}
    # elections from the controllers' logs, without ZooKeeper's gap
    (failover,) = result.of_kind("controller.failover")
    assert failover.subject["epoch"] == 2 and "gap_ms" not in failover.subject


@pytest.mark.slow
def test_without_zookeeper_no_comparison_is_made(spark: SparkSession, tmp_path: Path) -> None:
    path = copy("topicid-mismatch-2.8", tmp_path)
    shutil.rmtree(path / "zk")
    result = run(spark, path, "topic_ids", "deletion")
    assert not result.of_kind("topic_id.mismatch") and not result.of_kind("topic_id.missing")
    assert not result.of_kind("deletion.stray_dir"), "no ZooKeeper state is not 'the topic is gone'"
    assert {f.subject["broker"] for f in result.of_kind("topic_id.refused")} == {
        1,
        2,
        3,
    }  # the brokers' own lines
    assert any("ZooKeeper state" in m for m in result.coverage["topic_ids"].missing)
    assert result.coverage["deletion"].status == "partial"


@pytest.mark.slow
def test_a_broker_without_logs_or_data_dir_is_reported_not_judged(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = copy("topicid-mismatch-2.8", tmp_path)
    shutil.rmtree(path / "brokers" / "3")
    result = run(spark, path, "topic_ids")
    assert 3 not in {f.subject["broker"] for f in result.of_kind("topic_id.mismatch")}
    assert 3 not in {f.subject["broker"] for f in result.of_kind("topic_id.refused")}
    missing = " ".join(result.coverage["topic_ids"].missing)
    assert "data dirs of broker 3" in missing and "logs of broker 3" in missing


def test_kafka_before_2_8_has_no_topic_id_checks(triaged: Callable[[str], Triage]) -> None:
    result = triaged("controller-failover-2.5")
    assert result.coverage["topic_ids"].status == "not_applicable"
    assert not [f for f in result.findings if f.kind.startswith("topic_id.")]


@pytest.mark.slow
def test_delete_dirs_past_the_delay_linger_only_by_a_later_capture(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = copy("deletion-complete-3.6", tmp_path)
    assert not run(spark, path, "deletion").of_kind(
        "deletion.lingering_dir"
    )  # renamed seconds before the capture
    manifest = json.loads((path / "manifest.json").read_text())
    manifest["captured_at"] = "2024-03-12T11:00:00.000Z"  # the same dirs, an hour later
    (path / "manifest.json").write_text(json.dumps(manifest))
    lingering = run(spark, path, "deletion").of_kind("deletion.lingering_dir")
    assert {f.subject["topic"] for f in lingering} == {"topic-2"}
    assert {f.subject["broker"] for f in lingering} == {1, 2, 3}
    assert all("logs/server.log" in f.evidence[0] for f in lingering)


@pytest.mark.slow
def test_a_live_dir_of_a_topic_zookeeper_lacks_is_a_stray(spark: SparkSession, tmp_path: Path) -> None:
    path = copy("healthy-3.6", tmp_path)
    listing = path / "brokers" / "2" / "datadirs" / "0" / "listing.tsv"
    with listing.open("a") as f:
        f.write("ghost-0/00000000000000000000.log\t0\t1710230400.0\n")
    (stray,) = run(spark, path, "deletion").of_kind("deletion.stray_dir")
    assert (stray.subject["topic"], stray.subject["broker"]) == ("ghost", 2)


@pytest.mark.slow
def test_real_data_dir_against_its_real_snapshots(
    spark: SparkSession, real_evidence: Path, tmp_path: Path
) -> None:
    """A Kafka 3.1 broker's log dir and five ZooKeeper snapshots of the same cluster, nobody here wrote them:
    the newest snapshot and the disk disagree on design1's id, and no txn log explains it. Its one broker
    is not registered in the newest snapshot, so every partition it leads there has no live leader; the
    bundle holds no capture time, so how long is bounded from the tree's newest write, from below."""
    bundle = tmp_path / "real"
    shutil.copytree(
        real_evidence / "datadir-kafka-3.1" / "data" / "kafka-logs", bundle / "brokers/0/datadirs/0"
    )
    (bundle / "zk" / "txnlog").mkdir(parents=True)
    for snap in (real_evidence / "zk-snapshots-3.6.3").glob("snapshot.*"):
        if not snap.name.endswith(".txt"):
            shutil.copy(snap, bundle / "zk" / "txnlog" / snap.name)
    (bundle / "manifest.json").write_text(
        json.dumps({"format": "kafka-evidence/1", "kafka_version": "3.1.0"})
    )
    result = run(spark, bundle, "topic_ids", "leaderless", "brokers_down")
    (offline,) = result.of_kind("partition.offline")
    assert (offline.subject["broker"], offline.subject["still"]) == (0, offline.subject["partitions"])
    assert offline.subject["partitions"] >= 50  # __consumer_offsets' 50, and the topics beside them
    assert "the bundle holds no capture time, so each time below is a lower bound" in offline.summary
    assert all(e.startswith("zk:/brokers/topics/") for e in offline.evidence)
    (gone,) = [f for f in result.of_kind("broker.down") if f.subject["broker"] == 0]
    # the broker down says it still leads them (those of topics queued for deletion too)
    assert gone.severity.value == "critical" and gone.subject["leads"] >= offline.subject["partitions"]
    mismatched = {f.subject["topic"]: f for f in result.of_kind("topic_id.mismatch")}
    assert "design1" in mismatched and "design" not in mismatched
    assert "RJI454yPScCX7IO2JuPZvQ" in mismatched["design1"].summary
    assert "m2GaXl4TSyaBZB5R8-wtaA" in mismatched["design1"].summary
    assert any(
        r.startswith("broker-0:datadirs/0/design1-0/partition.metadata")
        for r in mismatched["design1"].evidence
    )
    causes = {f.subject["topic"]: f for f in result.of_kind("topic_id.root_cause")}
    assert causes["design1"].subject["certainty"] == "likely"
    assert result.coverage["topic_ids"].status == "partial"


@pytest.mark.slow
def test_triage_formats(triaged: Callable[[str], Triage]) -> None:
    """What `workbench triage` prints in each --format, rendered from the session's triages."""
    doc = json.loads(triaged("topicid-mismatch-2.8").json())
    assert set(doc) == {
        "findings",
        "coverage",
        "bad_records",
        "secrets_in_clear",
        "files_not_read",
        "causes",
        "unserved_now",
        "unserved_when_lines_end",
    }
    assert doc["unserved_now"] == 2  # orders 3 offline then refused, and one broker 1 refuses
    said = "Now (at the capture): nobody serves 2 partition(s)"
    full = triaged("topicid-mismatch-2.8")
    assert said in render.triage_text(full).split("\n")[2]
    # where the leaderless check is partial (logs alone), the count is a floor, and said to be one
    partial = Coverage({**full.coverage})
    partial.add("leaderless", ["ZooKeeper's history"])
    floor = render.triage_text(Triage(full.findings, partial, 0, full.bundle)).split("\n")[2]
    assert "nobody serves at least 2 partition(s)" in floor and "see coverage, leaderless" in floor
    assert doc["unserved_when_lines_end"] == {"partitions": 0, "at": None}
    # from the brokers' lines alone, a partition still without a leader is of when they end, not now
    ended = Finding(
        "partition.offline",
        Severity.CRITICAL,
        {"partitions": 3, "still": 2, "lines_end": "2024-03-12T09:59:52Z"},
        "3 partition(s) ...",
        ("broker-1:logs/state-change.log:9",),
    )
    lines = Triage([ended], partial, 0, full.bundle)
    said = render.triage_text(lines).split("\n")[2]
    assert "Now (at the capture)" not in said and lines.as_dict()["unserved_now"] == 0
    assert said.startswith("When the brokers' lines end (2024-03-12T09:59:52Z): nobody served at least 2 ")
    assert "whether anyone serves them now the lines do not tell" in said
    assert lines.as_dict()["unserved_when_lines_end"] == {"partitions": 2, "at": "2024-03-12T09:59:52Z"}
    # where the bundle holds ZooKeeper's tree, it tells (the findings say what it shows), no capture to make
    assert full.held is not None and full.held.zk_state
    tree = render.triage_text(Triage([ended], partial, 0, full.bundle, held=full.held)).split("\n")[2]
    assert "ZooKeeper's tree at the capture tells" in tree and "capture zk" not in tree
    assert doc["bad_records"] == 0
    assert doc["secrets_in_clear"] == []  # the simulator writes its bundles redacted
    assert doc["files_not_read"] == []  # its truth.json is the simulator's, named by `load` alone
    kinds = [f["kind"] for f in doc["findings"]]  # what led to what, by the findings' places
    assert ("topic_id.mismatch", "topic_id.root_cause") in {
        (kinds[c["effect"]], kinds[c["cause"]]) for c in doc["causes"]
    }
    assert {f["kind"] for f in doc["findings"]} >= {"topic_id.mismatch", "topic_id.root_cause"}
    healthy = triaged("healthy-3.6")
    out = render.triage_markdown(healthy)
    assert out.startswith("# Triage of") and "| topic_ids | done |" in out
    assert not healthy.critical  # the command's exit 0
    assert "Now (at the capture)" not in out  # nothing said where no outage is found
    table = render.triage_text(healthy).split("\nCoverage\n", 1)[1].split("\n\n", 1)[0].splitlines()
    # every row a name, spaces, a status: the longest name does not run into its status
    row = re.compile(rf"  \S+ +({'|'.join(STATUSES)})(: .*)?")
    assert len(table) > 10 and all(row.fullmatch(line) for line in table), table
    # "missing" only before evidence lacking: a check not applicable says why
    text = render.triage_text(triaged("controller-failover-2.5"))
    assert re.search(r"\n  topic_ids +not_applicable: Kafka 2\.5\.1 has no topic ids \(", text), text
    assert "missing Kafka" not in text


@pytest.mark.slow
def test_cli_triage_end_to_end_and_exit_codes(
    triaged: Callable[[str], Triage], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The command itself, once: it opens the bundle, triages it and prints what the session's triage of
    it renders to (exit 1: something is critical); exit 2 when there is no bundle."""
    mismatch = SAMPLE_DATA / "topicid-mismatch-2.8"
    assert main(["triage", str(mismatch), "--quiet"]) == 1
    printed = capsys.readouterr().out
    assert printed.strip() == render.triage_text(triaged(mismatch.name)).strip()
    assert main(["triage", str(tmp_path / "nothing-here")]) == 2
