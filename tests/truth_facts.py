"""truth.json facts and triage findings as comparable keys, kind by kind: each truth fact (written by the
simulator under the kind it proves, `workbench/simulate/findings.py`) names the finding it requires, and each
finding must be required by a fact (tests/test_triage.py)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from workbench import postmortem
from workbench.analysis.findings import Coverage, Finding, bounds
from workbench.analysis.leaderless import nobody_serves, unserved_when_lines_end
from workbench.analysis.outage_told import STOPPED
from workbench.analysis.registry import kinds
from workbench.analysis.triage import Triage
from workbench.frames import Bundle
from workbench.model.health import health
from workbench.model.skew import skew

# Every finding kind an analysis may emit (analysis/registry.py): each instance must come from a truth
# fact, so a kind the simulated stories never make (topic.likely_typo, ...) must never be found.
BY_NAME = kinds()
KINDS = tuple(sorted(BY_NAME))


def _value(v: Any) -> Any:
    """A subject's or a fact's value as compared: a list as the set it stands for (empty as absent)."""
    return (frozenset(v) or None) if isinstance(v, (list, tuple, set, frozenset)) else v


def key(kind: str, subject: Mapping[str, Any]) -> tuple[Any, ...]:
    """What names one finding of `kind`: the subject keys its Kind declares (`Kind.key`), else the whole
    subject."""
    named = BY_NAME[kind].key
    if named:
        return (kind, *(_value(subject.get(k)) for k in named))
    return (kind, *sorted((k, str(v)) for k, v in subject.items()))


def expected(truth: dict[str, Any]) -> set[tuple[Any, ...]]:
    """The findings a correct triage must give: truth.json's facts, each under the kind it proves."""
    return {key(kind, fact) for kind, facts in truth["findings"].items() for fact in facts}


def observed(findings: Iterable[Finding]) -> set[tuple[Any, ...]]:
    """The same keys from triage's findings (only the kinds in KINDS)."""
    return {key(f.kind, f.subject) for f in findings if f.kind in BY_NAME}


def check(result: Triage, truth: dict[str, Any]) -> list[Finding]:
    """A bundle's triage: its findings must equal the truth fact by fact (`judged_as_true`), no bad
    record. Returns the findings."""
    judged_as_true(result.findings, result.coverage, truth)
    assert result.bad_records == 0
    return result.findings


def judged_as_true(findings: list[Finding], coverage: Coverage, truth: dict[str, Any]) -> None:
    """Findings that equal the truth fact by fact, each with evidence, every check done or not
    applicable: a triage's, or what the judges make of a story's golden facts (tests/test_judges.py)."""
    want, got = expected(truth), observed(findings)
    assert got - want == set(), f"findings without a truth fact: {sorted(got - want, key=str)}"
    assert want - got == set(), f"truth facts without their finding: {sorted(want - got, key=str)}"
    for f in findings:
        assert f.evidence, f"{f.kind} cites no evidence"
    _outages_hold(findings, truth)
    leader_outages_hold(findings, truth)
    _held_back_holds(findings, truth)
    assert all(c.status in ("done", "not_applicable") for c in coverage.values()), coverage


def _held_back_holds(findings: Iterable[Finding], truth: dict[str, Any]) -> None:
    """A follower that held high watermarks held them as often as the simulator says, and the waits its
    leaders' lines print (3.6+) are the simulator's: the shortest and the longest since it last caught up."""
    waits: dict[int, list[int]] = {}
    for h in truth["held_back"]:
        waits.setdefault(h["broker"], []).append(h["waited_ms"])
    for f in findings:
        if f.kind == "isr.high_watermark_held":
            w = waits[f.subject["broker"]]
            assert f.subject["times"] == len(w), (f.subject, w)
            told = f.subject.get("waited_ms")
            assert told is None or told == [min(w), max(w)], (f.subject, w)


def _outages_hold(findings: Iterable[Finding], truth: dict[str, Any]) -> None:
    """Each failover's outage bounds hold the model's: from the old controller's crash or stop to the new
    one's 'Ready to serve' (half a second of slack: the model's ready and the logged one differ)."""
    controllers = {c["epoch"]: c for c in truth["controllers"]}
    ended: dict[int, list[int]] = {}
    for f in truth.get("broker_failures", []):
        ended.setdefault(f["broker"], []).append(f["crashed_ms"])
    for r in truth.get("broker_restarts", []):
        ended.setdefault(r["broker"], []).append(r["stopped_ms"])
    for f in findings:
        if f.kind != "controller.failover" or "outage_ms" not in f.subject:
            continue
        new = controllers[f.subject["epoch"]]
        began = [t for t in ended.get(f.subject["previous"], []) if t <= new["elected_ms"]]
        if not began:
            continue
        lower, upper = f.subject["outage_ms"]
        real = new["ready_ms"] - max(began)
        assert lower - 500 <= real <= upper + 500, (f.summary, real)


def leader_outages_hold(findings: Iterable[Finding], truth: dict[str, Any]) -> None:
    """A crashed leader's partitions: the outage bounds hold the model's, from the crash to the session's
    expiry, then offline until a new leader (`offline_ms`, the longest; none: elected at once); a paused
    one's, from the pause to its waking, whether its session survived or was taken back; half a second of
    slack."""
    crashes: dict[int, list[dict[str, Any]]] = {}
    for failure in truth.get("broker_failures", []):
        if failure.get("session_expired_ms"):
            crashes.setdefault(failure["broker"], []).append(failure)
    pauses = {p["broker"]: p for p in truth.get("pauses", []) if not p.get("taken_back")}
    taken_back: dict[int, list[int]] = {}
    for p in truth.get("pauses", []):
        if p.get("taken_back"):
            taken_back.setdefault(p["broker"], []).append(p["woke_ms"] - p["paused_ms"])
    for f in findings:
        if f.kind == "partition.leader_paused":  # stood still and ran on: from the pause to its waking
            pause = pauses[f.subject["broker"]]
            lower, upper = f.subject["outage_ms"]
            assert lower - 500 <= pause["woke_ms"] - pause["paused_ms"] <= upper + 500, f.summary
        # a silent leader's bounds, whichever source told them, are followed by that sign of life
        # (`offline.offline_finding`: "for <bounds>: <sign>", where the others go on "from <moment>"), as a
        # controller's shutdown is (from its end, as ZooKeeper's end of its registration tells it: no
        # silent leader's). Every outage finding has bounds, the others' from the stretch alone.
        silent = (
            re.search(r" had no working leader for [^:]*: ", f.summary) is not None
            and STOPPED["shutdown"] not in f.summary
            and "refused_by" not in f.subject
        )
        if f.kind != "partition.offline" or not silent:
            continue
        # only a leader that stopped without a shutdown has one (one of its stops, where it had several)
        assert f.subject["broker"] in crashes, f.summary
        lower, upper = f.subject["outage_ms"]
        real = [
            c["session_expired_ms"] - c["crashed_ms"] + f.subject.get("offline_ms", 0)
            for c in crashes[f.subject["broker"]]
        ] + taken_back.get(f.subject["broker"], [])
        assert any(lower - 500 <= r <= upper + 500 for r in real), (f.summary, real)


def service_holds(bundle: Bundle, truth: dict[str, Any]) -> None:
    """Each partition's stretches nobody served it, from the one service timeline (`service.outages`),
    equal the truth's stretch by stretch (the health series' test checks the minutes too). A stretch may
    begin at a broker's line (a halt, the controller's failed send), read on ZooKeeper's clock through the
    broker's estimated skew: its start is known within half the skew's bounds (`model.skew`), and none
    where no skew is applied."""
    h = health(bundle)
    assert h is not None
    got = sorted(
        (
            {
                "topic": r.topic,
                "partition": r.partition,
                "began_ms": round(r.began.timestamp() * 1000),
                "ended_ms": None if r.ended is None else round(r.ended.timestamp() * 1000),
            }
            for r in h.outages.collect()
        ),
        key=lambda u: (u["topic"], u["partition"], u["began_ms"]),
    )
    want = truth["health"]["unserved"]
    applied = [s for s in skew(bundle) if s.estimate_ms is not None and s.lower_ms is not None]
    apart = max(((s.upper_ms or 0) - (s.lower_ms or 0) + 1) // 2 for s in applied) if applied else 0
    assert len(got) == len(want), (got, want)
    for g, w in zip(got, want, strict=True):
        assert {**g, "began_ms": 0} == {**w, "began_ms": 0}, (g, w)
        assert abs(g["began_ms"] - w["began_ms"]) <= apart, (g, w, apart)


def told_alone(found: list[Finding], said: str) -> None:
    """Without ZooKeeper's history the report's outage is what the findings tell from the lines: their
    partition outages and the longest's bounds, said in the summary and the impact; none: not measured."""
    told = [f for f in found if f.kind in postmortem.OUTAGE_KINDS and "taken_at" not in f.subject]
    # every outage whose start the lines hold is bounded, so the report's longest is no shorter than one
    assert all("outage_ms" in f.subject for f in told if f.subject.get("began", "unknown") != "unknown"), told
    longest = postmortem.longest_told(told)
    if longest is None:  # none bounded: the tree's partitions without a live leader, if any, said at it
        tree = nobody_serves([f for f in told if postmortem.told_by(f) == postmortem.TREE])
        assert "Not measured" in said and nobody_serves(found) == tree
        assert not tree or f"t the capture, ZooKeeper's tree shows {tree} partition(s)" in said
        return
    n = sum(f.subject["partitions"] for f in told)
    assert (
        said.count(f"{n} partition outage(s)") == 2 and said.count(f"the longest for {bounds(*longest)}") == 2
    )
    assert "Clients affected" in said and "not measured on every partition" in said
    # what the findings say is still without a leader, said as they say it: the lines' when they end, the
    # tree's at the capture
    lines, _ = unserved_when_lines_end(told)
    tree = nobody_serves(told)
    # a finding from the lines says its partitions still unserved as of when they end, never the capture
    assert nobody_serves([f for f in told if postmortem.told_by(f) == postmortem.LINES]) == 0
    assert tree == nobody_serves([f for f in told if postmortem.told_by(f) == postmortem.TREE])
    # of those the lines leave without a leader, the tree's led again at the capture: not still, said so
    again = sum(int(f.subject.get("led_at_capture", 0)) for f in told)
    if lines or again:  # the summary says where they stand where some are still unserved
        assert said.count(f"hen the lines end, {lines + again} partition(s) still had none") == (
            2 if lines else 1
        )
    if again:
        assert "led again in ZooKeeper's tree at the capture" in said
    if tree:
        assert (
            said.count(f"t the capture, ZooKeeper's tree shows {tree} partition(s) without a live leader")
            == 2
        )
    if not lines and not tree and not again:
        assert "none still when the lines end" in said
        assert (
            "whether every partition has an acting" in said
            or "a live leader for every partition of a topic not queued" in said
        )
