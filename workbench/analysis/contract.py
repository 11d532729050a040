"""The contract every analysis keeps, so that adding one touches its module and one line of `registry.py`.

An `Analysis` names its coverage check, the evidence it needs (the runner says what was missing, in one
wording, and skips it when none is there), the finding kinds it may emit with their subjects' types (checked
on every run, so a kind cannot drift from what the truth tests and the report expect) and the figures the
report draws for it. Like pydeequ's analyzers: objects a runner collects, results as findings and coverage.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

from workbench.analysis.findings import Coverage, Finding, Severity

if TYPE_CHECKING:
    from workbench.frames import Bundle
    from workbench.model.evidence import Held


class Need(Enum):
    """A kind of evidence a bundle may hold (bundle.py's layout), as coverage names it."""

    ZK_STATE = "ZooKeeper state"
    ZK_HISTORY = "ZooKeeper history"
    LOGS = "broker logs"
    DATA_DIRS = "broker data dirs"
    CAPTURE_TIME = "capture time"
    PASTED = "pasted output"  # what the on-call pasted: a stand-in, never said missing

    def held(self, ev: Held) -> bool:
        """Whether the bundle holds any of it (an analysis with a need held runs)."""
        return {
            Need.ZK_STATE: ev.zk_state,
            Need.ZK_HISTORY: ev.zk_history,
            Need.LOGS: bool(ev.with_logs),
            Need.DATA_DIRS: bool(ev.with_datadirs),
            Need.CAPTURE_TIME: ev.captured_ms is not None,
            Need.PASTED: ev.pasted,
        }[self]

    def lacking(self, ev: Held) -> str | None:
        """What of it the bundle lacks, as a reader would fetch it; None when nothing is."""
        if self is Need.LOGS or self is Need.DATA_DIRS:
            have = ev.with_logs if self is Need.LOGS else ev.with_datadirs
            without = sorted(ev.brokers - have)
            noun = "logs" if self is Need.LOGS else "data dirs"
            if not have:
                return f"the brokers' {noun} (brokers/<id>/)"
            return f"{noun} of broker {', '.join(map(str, without))}" if without else None
        if self.held(ev) or self is Need.PASTED:
            return None
        return {
            Need.ZK_STATE: "ZooKeeper state (zk/: a capture or snapshots)",
            Need.ZK_HISTORY: "ZooKeeper txn logs (zk/txnlog/)",
            Need.CAPTURE_TIME: "the capture time (manifest captured_at)",
        }[self]


@dataclass(frozen=True)
class Kind:
    """A finding kind: its dotted name, the severities it is given, and its subject's keys and types
    (`always` in every finding of the kind, `sometimes` only where the evidence says it). `key`: the subject
    keys that name one finding, as a simulated story's truth states it (truth.json's `findings`, made by
    `simulate/findings.py`); without one, a finding is named by its whole subject. `event`: a finding of it
    tells of something that happened and was over within the history read (an election, a session
    expired, an outage that ended: `still` 0 where the subject counts what lasted), so that what the
    history before a gap shows of it stays true whatever the gap hid (`triage.before_gaps`); a kind that
    tells of the state at the capture (a deletion stuck, an imbalance) is not one."""

    name: str
    severities: tuple[Severity, ...]
    always: Mapping[str, type | tuple[type, ...]]
    sometimes: Mapping[str, type | tuple[type, ...]] = field(default_factory=dict)
    key: tuple[str, ...] = ()
    event: bool = False

    def problems(self, f: Finding) -> list[str]:
        out = [] if f.severity in self.severities else [f"severity {f.severity}"]
        out += [f"no {k!r} in its subject" for k in self.always if k not in f.subject]
        for k, v in f.subject.items():
            t = self.always.get(k) or self.sometimes.get(k)
            if t is None:
                out.append(f"an undeclared subject key {k!r}")
            elif not isinstance(v, t) or (isinstance(v, bool) and t is int):
                out.append(f"{k!r} is {type(v).__name__}, declared {t}")
        return out


Facts = Callable[["Bundle"], Any]
Judge = Callable[[Any, Coverage], list[Finding]]


@dataclass(frozen=True)
class Analysis:
    """One analysis, in two halves. `facts(bundle)` asks Spark, in a few queries over the shared views, for
    the few rows its findings need and returns them as plain values (dataclasses: `analysis.facts_json`
    keeps them, tests/golden/facts/); `judge(facts, coverage)` makes the findings from those values in
    plain Python (wording, thresholds, grouping, what partial evidence allows), so that its tests need no
    Spark. `reassignment` is the worked example (docs/ARCHITECTURE.md).

    `needs` maps each evidence it reads to what that evidence tells it: with none held the check is
    skipped, each one lacking is said in coverage. `wants` is evidence that only sharpens it. The judge
    may add to its check's coverage, or call it not applicable; `reads` names the shared views `facts`
    reads (`model.reads.view_names`: the runner makes them first, and a read of one it does not name is
    recorded, `model.reads.UNDECLARED`); `plots` names the report's figures for it, `module:function`,
    imported only when a report is drawn. `checks`: the checks of its own it records while it runs, each
    listed as skipped with it where it does not run."""

    name: str
    needs: Mapping[Need, str]
    kinds: tuple[Kind, ...]
    facts: Facts
    judge: Judge
    reads: tuple[str, ...] = ()
    wants: Mapping[Need, str] = field(default_factory=dict)
    plots: str = ""
    checks: tuple[str, ...] = ()

    def findings(self, bundle: Bundle, coverage: Coverage) -> list[Finding]:
        """Its findings, its coverage recorded from the evidence it needs (`covered`)."""
        from workbench.model.views import views

        if not self.covered(views(bundle).evidence, coverage):
            return []
        return self.judged(self.asked(bundle), coverage)

    def covered(self, ev: Held, coverage: Coverage) -> bool:
        """Record what of the evidence it needs and wants the bundle holds and lacks; whether it runs."""
        said = {**self.needs, **self.wants}
        missing = [f"{lack}: {said[n]}" for n in said if (lack := n.lacking(ev)) is not None]
        coverage.record(self.name, [n.value for n in said if n.held(ev)], missing, needed=self.runs_on(ev))
        if not self.runs_on(ev):
            for check in self.checks:
                coverage.record(check, [], missing, needed=False)
        return self.runs_on(ev)

    def asked(self, bundle: Bundle) -> Any:
        """Its facts, asked of Spark, each read of a view checked against `reads`."""
        from workbench.model.reads import reading

        with reading(self.name, self.reads):
            return self.facts(bundle)

    def judged(self, facts: Any, coverage: Coverage) -> list[Finding]:
        """Its findings from its facts (no Spark), each checked against its declared kinds (a mismatch is
        the analysis's bug, so it raises)."""
        found = self.judge(facts, coverage)
        kinds = {k.name: k for k in self.kinds}
        for f in found:
            kind = kinds.get(f.kind)
            wrong = [f"a kind {self.name} does not declare"] if kind is None else kind.problems(f)
            if wrong:
                raise TypeError(f"analysis {self.name}: finding {f.kind} has {'; '.join(wrong)}: {f.subject}")
        return found

    def runs_on(self, ev: Held) -> bool:
        """Whether it runs on a bundle holding `ev`: with any of the evidence it needs."""
        return any(n.held(ev) for n in self.needs)

    def figures(self) -> Callable[..., list[Any]] | None:
        if not self.plots:
            return None
        module, function = self.plots.split(":")
        draw: Callable[..., list[Any]] = getattr(importlib.import_module(module), function)
        return draw


def maybe(t: type) -> tuple[type, ...]:
    """A subject value that may be None (unknown from this evidence)."""
    return (t, type(None))


CRITICAL, WARNING, INFO = Severity.CRITICAL, Severity.WARNING, Severity.INFO
NO_TXN = "ZooKeeper txn logs (zk/txnlog/): none of their txns could be read"
