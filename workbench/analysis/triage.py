"""`workbench.triage(bundle)`: every analysis over one bundle, its findings, its coverage and the count of
records no source could parse (`cli/render.py` prints it for a terminal or a ticket)."""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from workbench.analysis.causes import links
from workbench.analysis.contract import Analysis
from workbench.analysis.findings import (
    Coverage,
    Finding,
    Severity,
    findings_frame,
    findings_pandas,
)
from workbench.analysis.gaps import before_gaps, history_gaps
from workbench.analysis.leaderless import nobody_serves, unserved_when_lines_end
from workbench.analysis.registry import ANALYSES
from workbench.model.reads import build
from workbench.model.secrets import InClear, in_clear
from workbench.model.views import views
from workbench.strays import NotRead
from workbench.together import Ask, together

# Threads the analyses of small evidence run in (`triage`): 8 took topicid-mismatch-2.8 from 17-24 s to
# 11-15 s on this 2-core machine (bench/README.md).
TRIAGE_THREADS = 8
T = TypeVar("T")

if TYPE_CHECKING:
    import pandas as pd
    from pyspark.sql import DataFrame, Row

    from workbench.frames import Bundle
    from workbench.model.evidence import Held


@dataclass
class Triage:
    """What triage found (most severe first), what it could check, and how many records were bad."""

    findings: list[Finding]
    coverage: Coverage
    bad_records: int
    bundle: str = ""
    in_clear: list[InClear] = field(default_factory=list)  # files holding credentials in clear
    not_read: list[NotRead] = field(default_factory=list)  # evidence no reader could take, and why
    # each analysis's facts where it ran (`Analysis.asked`), by name, and what the bundle held (its
    # coverage is recorded from it): what the judges made the findings from (`judged`)
    facts: dict[str, Any] = field(default_factory=dict)
    held: Held | None = None

    @property
    def critical(self) -> bool:
        return any(f.severity is Severity.CRITICAL for f in self.findings)

    def of_kind(self, prefix: str) -> list[Finding]:
        return [f for f in self.findings if f.kind == prefix or f.kind.startswith(prefix + ".")]

    def frame(self, bundle: Bundle) -> DataFrame:
        return findings_frame(bundle.spark, self.findings)

    def pandas(self) -> pd.DataFrame:
        return findings_pandas(self.findings)

    def as_dict(self) -> dict[str, Any]:
        ended, lines_end = unserved_when_lines_end(self.findings)
        return {
            "findings": [f.as_dict() for f in self.findings],
            "coverage": self.coverage.as_dict(),
            "bad_records": self.bad_records,
            "secrets_in_clear": [{"file": c.file, "holds": list(c.holds)} for c in self.in_clear],
            "files_not_read": [{"file": n.file, "why": n.why} for n in self.not_read],
            "unserved_now": nobody_serves(self.findings),  # partitions nobody served at the capture
            # from the brokers' lines alone: those nobody served when the lines end, and when that was
            "unserved_when_lines_end": {"partitions": ended, "at": lines_end},
            "causes": [
                {"effect": at[id(x.effect)], "cause": at[id(x.cause)], "because": x.because}
                for at in [{id(f): i for i, f in enumerate(self.findings)}]
                for x in links(self.findings)
            ],
        }

    def json(self) -> str:
        return json.dumps(self.as_dict(), indent=2, default=str)


def triage(bundle: Bundle, threads: int | None = None, only: Iterable[str] = ()) -> Triage:
    """Run every analysis on the bundle (or those named in `only`: their checks alone are in coverage).
    Lack of evidence is reported in coverage, never read as healthy.

    On small evidence the analyses run side by side in `threads` threads (`WORKBENCH_TRIAGE_THREADS`,
    else TRIAGE_THREADS): each of their queries waits mostly on Spark's planning and scheduling, not on
    its cores. Larger evidence keeps them one after another (one thread), so that their queries do not
    share the driver's memory. The views the analyses declare (`Analysis.reads`) are the pool's first
    tasks. The answer is the same in any number of threads: each analysis records its own coverage,
    merged in the registry's order, and the findings are sorted."""
    v = views(bundle)  # made once, before the threads share them
    if threads is None:
        threads = int(os.environ.get("WORKBENCH_TRIAGE_THREADS", TRIAGE_THREADS)) if v.small else 1
    analyses = chosen(only)
    # what triage checks across the analyses is asked in the pool beside them, its frames made there too
    results, across = _analysed(bundle, analyses, threads, lambda: asked_across(bundle))
    coverage = Coverage()
    found: list[Finding] = []
    for each in results:
        found += each.findings
        coverage.update(each.coverage)
    checked_across(bundle, coverage, across)
    found += before_gaps(bundle, lambda part: _found(part, analyses, threads), found, coverage)
    found.sort(key=Finding.sort_key)
    not_read = [n for n in bundle.evidence.not_read if not n.known]
    facts = {a.name: r.facts for a, r in zip(analyses, results, strict=True) if r.ran}
    bad, secrets = across.bad_records, across.in_clear
    return Triage(found, coverage, bad, bundle.evidence.origin, secrets, not_read, facts, v.evidence)


def _analysed(
    bundle: Bundle, analyses: tuple[Analysis, ...], threads: int, beside: Callable[[], T]
) -> tuple[list[Ran], T]:
    """Each analysis's findings and coverage, run in `threads` threads after the views they declare,
    and what `beside` returns (run in the pool beside them, as no analysis waits for it)."""
    v = views(bundle)
    read = list(dict.fromkeys(r for a in analyses if a.runs_on(v.evidence) for r in a.reads))
    build(bundle, read, only_check=True)  # a name that is no view fails here, before any work
    builds = [_inheriting(bundle, functools.partial(build, bundle, [name])) for name in read]
    runs = [_inheriting(bundle, functools.partial(_run, bundle, a)) for a in analyses]
    with ThreadPoolExecutor(max(1, threads), thread_name_prefix="triage") as pool:
        try:
            # The declared views are the pool's first tasks: each is made by a thread of its own while the
            # analyses start in the others (built one after another before them, triage took 10% longer).
            made = [pool.submit(b) for b in builds]
            aside = pool.submit(_inheriting(bundle, beside))
            results = list(pool.map(lambda run: run(), runs))
            for m in made:
                m.result()
            return results, aside.result()
        except BaseException:  # Ctrl-C, or an analysis failed: no other begins, running jobs are cancelled
            pool.shutdown(wait=False, cancel_futures=True)
            bundle.spark.interruptAll()
            raise


def _found(bundle: Bundle, analyses: tuple[Analysis, ...], threads: int) -> list[Finding]:
    results, _ = _analysed(bundle, analyses, threads, lambda: None)
    return [f for each in results for f in each.findings]


def judged(held: Held, facts: Mapping[str, Any]) -> tuple[list[Finding], Coverage]:
    """What every analysis finds in a bundle holding `held` from its kept facts (`Triage.facts`, by
    name), without Spark: the findings and coverage triage's analyses make, as triage makes them."""
    coverage = Coverage()
    found = [f for a in ANALYSES if a.covered(held, coverage) for f in a.judged(facts[a.name], coverage)]
    return sorted(found, key=Finding.sort_key), coverage


def chosen(only: Iterable[str] = ()) -> tuple[Analysis, ...]:
    """The analyses named in `only` (all when it names none), in the registry's order."""
    names = set(only)
    unknown = names - {a.name for a in ANALYSES}
    if unknown:
        known = ", ".join(a.name for a in ANALYSES)
        raise ValueError(f"no analysis named {', '.join(sorted(unknown))}; triage runs {known}")
    return tuple(a for a in ANALYSES if not names or a.name in names)


@dataclass(frozen=True)
class Ran:
    """One analysis's run: its findings, its coverage and, where it ran, the facts it judged."""

    findings: list[Finding]
    coverage: Coverage
    ran: bool = False
    facts: Any = None


def _run(bundle: Bundle, analysis: Analysis) -> Ran:
    coverage = Coverage()
    if not analysis.covered(views(bundle).evidence, coverage):
        return Ran([], coverage)
    facts = analysis.asked(bundle)
    return Ran(analysis.judged(facts, coverage), coverage, True, facts)


def _inheriting(bundle: Bundle, work: Callable[[], T]) -> Callable[[], T]:
    """`work` as a thread's, with the caller's Spark job group and properties (each thread its own copy,
    so that one thread's call site never names another's jobs)."""
    from pyspark.util import inheritable_thread_target

    wrapped: Callable[[], T] = inheritable_thread_target(bundle.spark)(work)
    return wrapped


@dataclass(frozen=True)
class Across:
    """What triage asks of the whole bundle beside the analyses: how many records no source could parse,
    whose lines a shared logs folder held, which lines no template types, the files holding credentials
    in clear."""

    bad_records: int
    shared: list[str]
    untyped: list[str]
    in_clear: list[InClear]


def asked_across(bundle: Bundle) -> Across:
    """`Across`, in one Spark job."""
    from pyspark.sql import functions as F

    bad = Ask(bundle.bad_records.agg(F.count("*").alias("n")), lambda rs: int(rs[0].n))
    shared, untyped, secrets = log_attribution(bundle), log_lines(bundle), in_clear(bundle)
    got = together(bad, shared, untyped, secrets)
    return Across(got[bad], got[shared], got[untyped], got[secrets])


def checked_across(bundle: Bundle, coverage: Coverage, across: Across | None = None) -> Across:
    """What triage checks after the analyses, across them: the history's gaps, whose lines a shared logs
    folder held, which lines no template types (`across`: asked already, else asked here)."""
    history_gaps(bundle, coverage)
    got = across if across is not None else asked_across(bundle)
    coverage.record("log_attribution", ["the brokers' ids in the log lines' contexts"], got.shared)
    held = bool(bundle.evidence.log_files)
    coverage.record("log_lines", ["every log line, against Kafka's own log calls"], got.untyped, needed=held)
    return got


def log_attribution(bundle: Bundle) -> Ask[list[str]]:
    """A log file holding the lines of several brokers (a logs folder they share): each line with its
    broker's id in its context is that broker's (sources/log4j_lines.OWN_ID); the events with none keep the
    folder's broker, or none, and are said here, file by file."""
    from pyspark.sql import functions as F

    from workbench.sources.log4j_lines import OWN_ID

    own = F.regexp_extract(F.coalesce(F.col("context"), F.lit("")), OWN_ID.replace("(?P<id>", "("), 1)
    rows = (
        bundle.cluster_events.groupBy("file")
        .agg(
            F.array_sort(F.collect_set(F.when(own != "", own.cast("int")))).alias("ids"),
            F.count(F.when(own == "", 1)).alias("without"),
            F.array_sort(F.collect_set(F.when(own == "", F.col("broker_id")))).alias("given"),
        )
        .where(F.size("ids") > 1)
        .orderBy("file")  # one row per shared file
    )
    return Ask(
        rows,
        lambda rs: [
            f"{r.file} holds the lines of brokers {', '.join(map(str, r.ids))}: {r.without} event(s) with no "
            "broker id of their own "
            + (f"kept the folder's broker {', '.join(map(str, r.given))}" if r.given else "have no broker")
            for r in rs
            if r.without
        ],
    )


def log_lines(bundle: Bundle) -> Ask[list[str]]:
    """The lines no template types, per broker (`Bundle.untyped_lines`: of loggers whose lines should all
    be typed): what they say no analysis read. The lines of loggers Kafka's catalog leaves aside
    (requests, consumer groups, the clients inside the broker) are counted by `workbench load`, with why."""
    from pyspark.sql import functions as F

    first = F.min_by(F.struct("file", "line_no"), F.struct("ts", "file", "line_no"))
    rows = (
        bundle.untyped_lines.groupBy("broker_id")
        .agg(
            F.count("*").alias("n"),
            F.array_sort(F.collect_set(F.coalesce("logger", F.lit("no logger")))).alias("loggers"),
            first.alias("first"),
        )
        .orderBy("broker_id")  # one row per broker
    )
    return Ask(rows, _untyped_said)


def _untyped_said(rows: list[Row]) -> list[str]:
    said = []
    for r in rows:
        who = f"broker {r.broker_id}" if r.broker_id is not None else "no broker"
        loggers = ", ".join(r.loggers[:3]) + (f" and {len(r.loggers) - 3} more" if len(r.loggers) > 3 else "")
        said.append(
            f"{who}: {r.n} line(s) no template types ({loggers}; the first at {r.first.file} line "
            f"{r.first.line_no}): what they say was not read"
        )
    return said
