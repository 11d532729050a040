"""The analysis contract (analysis/contract.py, registry.py): one registry that triage, the report and
the truth tests read; every kind an analysis emits declared with its subject's types, so each is checked
against the simulator's truth; coverage derived from the evidence an analysis needs."""

from __future__ import annotations

import ast
import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import REPO, SAMPLE_DATA
from pyspark.sql import SparkSession
from truth_facts import KINDS, observed

from workbench.analysis import balance, controller, reassignment
from workbench.analysis.contract import WARNING, Analysis, Kind, Need
from workbench.analysis.findings import Coverage, Finding, Status
from workbench.analysis.registry import ANALYSES, kinds
from workbench.analysis.topic_id_cause import CAUSES
from workbench.analysis.triage import Triage
from workbench.frames import Bundle, open_bundle
from workbench.model import isr, reads
from workbench.model.views import views
from workbench.simulate import findings as truth


def _kind_literals() -> dict[str, Path]:
    """Every dotted string an analysis module passes as a Finding's kind (first argument, or assigned to
    a `kind` name), read from the source: kinds no sample happens to produce are found too."""
    out: dict[str, Path] = {}
    for path in sorted((REPO / "workbench" / "analysis").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            values: list[ast.expr] = []
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Finding" and node.args:
                values.append(node.args[0])
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Tuple):
                for target in node.targets:
                    if isinstance(target, ast.Tuple):
                        names = [getattr(t, "id", "") for t in target.elts]
                        if "kind" in names:
                            values.append(node.value.elts[names.index("kind")])
            for v in values:
                if isinstance(v, ast.Constant) and isinstance(v.value, str):
                    out[v.value] = path
    return out


def test_every_kind_an_analysis_builds_is_declared_and_checked_against_truth() -> None:
    built = _kind_literals()
    assert len(built) >= 30
    undeclared = {k: p.name for k, p in built.items() if k not in kinds()}
    assert undeclared == {}
    assert set(KINDS) == set(kinds()), "truth_facts.KINDS is the registry's"
    # A declared kind nothing builds is a stale declaration.
    assert set(kinds()) - set(built) == set()


def test_each_kind_is_declared_once_and_each_check_named_once() -> None:
    names = [a.name for a in ANALYSES]
    assert len(names) == len(set(names))
    assert sum(len(a.kinds) for a in ANALYSES) == len(kinds())


def test_every_figure_an_analysis_names_can_be_drawn() -> None:
    named = [a for a in ANALYSES if a.plots]
    assert {a.name for a in named} >= {"health", "controller", "topic_ids", "deletion"}
    for a in named:
        assert callable(a.figures()), a.plots


def test_each_analysis_declares_views_that_exist_and_a_read_off_its_declaration_is_caught(
    sample: Callable[[str], Bundle],
) -> None:
    """`Analysis.reads` names views (`model.reads.view_names`): the runner builds them before the threads
    start, and an analysis reading one it did not name is recorded (every test fails on it: conftest)."""
    known = reads.view_names()
    assert {"partitions", "watched_history", "elections", "health", "skew", "session_ends"} <= known
    for a in ANALYSES:
        assert a.reads and set(a.reads) <= known, (a.name, set(a.reads) - known)
    with pytest.raises(ValueError, match="no view named 'nope'"):
        reads.build(sample("handmade-2.8"), ["topics", "nope"])
    with reads.reading("typos", ["topics"]):
        views(sample("handmade-2.8")).partitions  # noqa: B018 - the read is the point
    caught = list(reads.UNDECLARED)
    reads.UNDECLARED.clear()
    assert caught == [("typos", "partitions")]


def test_a_truth_key_is_made_for_every_kind() -> None:
    """truth_facts.observed turns each kind's finding into a comparable key: none is dropped; a kind's
    `key` names keys its subject declares, and every kind the simulator's truth proves has one."""
    for name, kind in kinds().items():
        subject = {k: _sample(t) for k, t in kind.always.items()}
        f = Finding(name, kind.severities[0], subject, "")
        assert observed([f]), name
        assert set(kind.key) <= {*kind.always, *kind.sometimes}, (name, kind.key)
    truths = [json.loads(p.read_text()) for p in sorted(SAMPLE_DATA.glob("*/truth.json"))]
    proved = {k for t in truths for k in t["findings"]}
    assert proved and all(kinds()[k].key for k in proved), proved
    for t in truths:  # each fact holds its kind's key, nothing else
        assert all(set(f) == set(kinds()[k].key) for k, facts in t["findings"].items() for f in facts)


def test_the_truths_thresholds_are_the_analyses() -> None:
    """simulate/findings.py states the findings' own thresholds where the truth needs them: the same."""
    assert truth.REASSIGNMENT_STUCK_MS == reassignment.STUCK_AFTER_MS
    assert (truth.FLAPPING_WINDOW_MS, truth.FLAPPING_ELECTIONS) == (
        controller.FLAPPING_WINDOW_MS,
        controller.FLAPPING_ELECTIONS,
    )
    assert (truth.ISR_FLAPPING_WINDOW_MS, truth.ISR_FLAPPING_DEPARTURES) == (
        isr.FLAPPING_WINDOW_S * 1000,
        isr.FLAPPING_DEPARTURES,
    )
    assert float(balance.IMBALANCE_PERCENTAGE) / 100 == truth.IMBALANCE_THRESHOLD
    assert int(balance.CHECK_INTERVAL_SECONDS) * 1000 == truth.CHECK_INTERVAL_MS
    assert "pre-2.8 tool" in CAUSES[truth.CAUSE_BY_TOOL] and "created again" in CAUSES[truth.CAUSE_RECREATED]
    assert {truth._cause(r) for r in ("stood still", "shut down")} <= set(controller.CAUSE_TEXT)


def _sample(t: type | tuple[type, ...]) -> object:
    first = t[0] if isinstance(t, tuple) else t
    return {int: 1, str: "0x1", float: 0.5, bool: True, list: [1]}[first]


def test_an_analysis_without_its_evidence_is_skipped_saying_what_it_lacked(
    sample: Callable[[str], Bundle],
) -> None:
    """handmade-2.8 has no ZooKeeper txn logs: the health check does not run, and says so in one wording."""
    bundle = sample("handmade-2.8")
    ran: list[str] = []
    probe = Analysis(
        "probe",
        needs={Need.ZK_HISTORY: "what the probe reads"},
        kinds=(),
        facts=lambda b: ran.append("ran"),
        judge=lambda f, c: [],
    )
    coverage = Coverage()
    assert probe.findings(bundle, coverage) == [] and ran == []
    check = coverage["probe"]
    assert check.status is Status.SKIPPED
    assert check.missing == ["ZooKeeper txn logs (zk/txnlog/): what the probe reads"]


def test_a_finding_off_its_declaration_is_the_analysis_s_bug(
    sample: Callable[[str], Bundle], tmp_path: Path
) -> None:
    """A kind not declared, a subject key missing or of another type: triage stops, naming the analysis."""
    bundle = sample("handmade-2.8")
    declared = (Kind("probe.found", (WARNING,), {"broker": int}),)

    def analysis(*found: Finding) -> Analysis:
        return Analysis("probe", {Need.LOGS: "x"}, declared, facts=lambda b: found, judge=lambda f, _: [*f])

    good = Finding("probe.found", "warning", {"broker": 1}, "")
    assert analysis(good).findings(bundle, Coverage()) == [good]
    for bad, said in (
        (Finding("probe.other", "warning", {"broker": 1}, ""), "does not declare"),
        (Finding("probe.found", "warning", {}, ""), "no 'broker'"),
        (Finding("probe.found", "warning", {"broker": "1"}, ""), "'broker' is str"),
        (Finding("probe.found", "warning", {"broker": True}, ""), "'broker' is bool"),
        (Finding("probe.found", "critical", {"broker": 1}, ""), "severity critical"),
        (Finding("probe.found", "warning", {"broker": 1, "extra": 2}, ""), "undeclared subject key 'extra'"),
    ):
        with pytest.raises(TypeError, match=f"analysis probe: finding {bad.kind} has .*{said}"):
            analysis(bad).findings(bundle, Coverage())


def test_lacking_brokers_are_named_and_a_run_can_add_what_it_found_missing(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = tmp_path / "b"
    shutil.copytree(SAMPLE_DATA / "topicid-mismatch-2.8", path)
    shutil.rmtree(path / "brokers" / "2" / "logs")
    bundle = open_bundle(path, spark)

    def judge(facts: object, c: Coverage) -> list[Finding]:
        c.add("probe", ["something only the run knew"])
        return []

    probe = Analysis("probe", {Need.ZK_STATE: "a", Need.LOGS: "their lines"}, (), facts=id, judge=judge)
    coverage = Coverage()
    probe.findings(bundle, coverage)
    check = coverage["probe"]
    assert check.status is Status.PARTIAL and check.used == ["ZooKeeper state", "broker logs"]
    assert check.missing == ["logs of broker 2: their lines", "something only the run knew"]


@pytest.mark.slow
def test_triage_records_a_check_for_every_analysis(triaged: Callable[[str], Triage]) -> None:
    result = triaged("healthy-3.6")
    assert {a.name for a in ANALYSES} <= set(result.coverage)
    assert all(isinstance(f.severity, type(WARNING)) for f in result.findings)
