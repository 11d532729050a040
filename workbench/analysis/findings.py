"""What an analysis concludes (`Finding`) and what it could check (`Coverage`); the evidence refs they
cite are `model.refs`', named here too.

A finding is one sentence an SRE can paste into a postmortem, with the refs a person can open to check it
(DESIGN.md, "Findings"). Coverage says for every check what evidence it used and what was missing, so that
the lack of evidence is never read as "healthy".
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

from workbench import schemas
from workbench.model.refs import TP as TP
from workbench.model.refs import file_ref as file_ref
from workbench.model.refs import file_ref_col as file_ref_col
from workbench.model.refs import hex_col as hex_col
from workbench.model.refs import txn_ref as txn_ref
from workbench.model.refs import zk_ref as zk_ref
from workbench.zookeeper.txns import hex_zxid as hex_zxid

if TYPE_CHECKING:
    import pandas as pd
    from pyspark.sql import DataFrame, SparkSession


class _Word(str, Enum):
    """A str, so that it compares, prints and serialises as its word (enum.StrEnum from Python 3.11)."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


class Severity(_Word):
    """How much a finding hurt: critical (unavailable or lost), warning (at risk), info (what happened)."""

    CRITICAL = "critical"
    WARNING = "warning"
    INFO = "info"


class Status(_Word):
    """A check's coverage: done, partial or skipped (what was missing says why), or not applicable."""

    DONE = "done"
    PARTIAL = "partial"
    SKIPPED = "skipped"
    NOT_APPLICABLE = "not_applicable"


SEVERITIES = tuple(s.value for s in Severity)
STATUSES = tuple(s.value for s in Status)


@dataclass(frozen=True)
class Finding:
    """kind is dotted (`topic_id.mismatch`), severity critical|warning|info, subject the topic, partition,
    broker, epoch, zxid ... it is about, evidence the refs that prove it."""

    kind: str
    severity: Severity
    subject: Mapping[str, Any]
    summary: str
    evidence: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"severity {self.severity!r}; expected one of {', '.join(SEVERITIES)}")
        object.__setattr__(self, "severity", Severity(self.severity))

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "severity": self.severity.value,
            "subject": dict(self.subject),
            "summary": self.summary,
            "evidence": list(self.evidence),
        }

    def sort_key(self) -> tuple[Any, ...]:
        return (
            SEVERITIES.index(self.severity),
            self.kind,
            sorted((k, str(v)) for k, v in self.subject.items()),
        )


@dataclass
class Check:
    """One check's coverage: `done`, `partial` or `skipped` (what was missing says why), or
    `not_applicable` (e.g. topic ids on Kafka before 2.8)."""

    status: Status
    used: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"status": self.status.value, "used": self.used, "missing": self.missing}


class Coverage(dict[str, Check]):
    """Check name -> Check, for every check triage ran."""

    def record(
        self, name: str, used: Iterable[str], missing: Iterable[str] = (), needed: bool = True
    ) -> Check:
        """A check that used `used` and lacked `missing`: done when nothing was missing, partial when
        something was, skipped when it had nothing it `needed`."""
        used, missing = [u for u in used if u], [m for m in missing if m]
        status = Status.SKIPPED if not needed else (Status.PARTIAL if missing else Status.DONE)
        self[name] = Check(status, used, missing)
        return self[name]

    def add(self, name: str, missing: Iterable[str] = (), used: Iterable[str] = ()) -> Check:
        """More a check used or lacked, found while it ran: a done check with something missing is partial."""
        c = self[name]
        return self.record(
            name, [*c.used, *used], [*c.missing, *missing], needed=c.status is not Status.SKIPPED
        )

    def not_applicable(self, name: str, why: str) -> Check:
        self[name] = Check(Status.NOT_APPLICABLE, [], [why])
        return self[name]

    def as_dict(self) -> dict[str, Any]:
        return {name: c.as_dict() for name, c in sorted(self.items())}


def first_refs(refs: Sequence[str] | None, limit: int = 5) -> list[str]:
    """A few refs, with how many more there are: evidence stays readable on a large cluster."""
    refs = sorted(set(refs or []), key=_natural)
    if len(refs) <= limit:
        return refs
    return [*refs[:limit], f"... and {len(refs) - limit} more"]


def _natural(s: str) -> list[Any]:
    return [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", s)]


def ranges(numbers: Iterable[int]) -> str:
    """[0, 1, 2, 5] -> '0-2,5': partition lists an SRE can read."""
    out: list[str] = []
    ordered = sorted(set(numbers))
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        out.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(out)


def tp_list(rows: Iterable[Any], topics: int = 6) -> str:
    """'orders 0-2,5; payments 1' from rows with topic and partition: a finding's partitions, readable."""
    by_topic: dict[str, list[int]] = {}
    for r in rows:
        by_topic.setdefault(r.topic, []).append(r.partition)
    shown = [f"{t} {ranges(ps)}" for t, ps in sorted(by_topic.items())]
    more = f"; and {len(shown) - topics} more topics" if len(shown) > topics else ""
    return "; ".join(shown[:topics]) + more


# -- as tables --------------------------------------------------------------------------------------
def _subject_text(value: Any) -> str:
    if isinstance(value, (list, tuple, set)):
        return ",".join(map(str, value))
    return str(value)


def findings_frame(spark: SparkSession, findings: Iterable[Finding]) -> DataFrame:
    """Findings as a DataFrame (schemas.FINDINGS), most severe first."""
    rows = [
        (f.kind, f.severity, {k: _subject_text(v) for k, v in f.subject.items()}, f.summary, list(f.evidence))
        for f in sorted(findings, key=Finding.sort_key)
    ]
    return spark.createDataFrame(rows, schemas.FINDINGS)


def findings_pandas(findings: Iterable[Finding]) -> pd.DataFrame:
    """Findings as pandas, for a notebook table: one row each, subject spread into columns."""
    import pandas as pd

    rows = []
    for f in sorted(findings, key=Finding.sort_key):
        row: dict[str, Any] = {"severity": f.severity, "kind": f.kind}
        row.update({k: _subject_text(v) for k, v in f.subject.items()})
        row.update(summary=f.summary, evidence="; ".join(map(readable_ref, f.evidence)))
        rows.append(row)
    return pd.DataFrame(rows)


# a line of a file: `broker-1:logs/controller.log.2024-03-12-08:82`
_LINE_REF = re.compile(r"^(.+/[^/:]+):(\d+)$")


def readable_ref(ref: str) -> str:
    """A ref as a table shows it: a file's line as `<file> line <n>`, which a rotated log's date-hour suffix
    followed by `:82` cannot be misread as a time; other refs as they are."""
    m = _LINE_REF.match(ref)
    return f"{m.group(1)} line {m.group(2)}" if m else ref


def duration(ms: int) -> str:
    """A length of time as a finding says it: ms, s, or min."""
    if ms < 1_000:
        return f"{ms} ms"
    return f"{ms / 1000:.1f} s" if ms < 120_000 else f"{ms / 60_000:.0f} min"


def bounds(lower: int, upper: int) -> str:
    """'12.0 s to 19.6 s'; minutes with a decimal once past two, so that close bounds stay apart (a lower
    bound of a few seconds in its own unit); bounds that read the same are said once."""
    if lower == upper or (upper < 120_000 and duration(lower) == duration(upper)):
        return duration(upper)
    if upper < 120_000:
        return f"{duration(lower)} to {duration(upper)}"
    if lower < 3_000:  # not '0.0 to 40.4 min'
        return f"{duration(lower)} to {upper / 60_000:.1f} min"
    low, high = f"{lower / 60_000:.1f}", f"{upper / 60_000:.1f}"
    return f"{high} min" if low == high else f"{low} to {high} min"


def taken(at: Any) -> str:
    """When a paste was taken, as a finding says it."""
    return f"taken at {at:%Y-%m-%d %H:%M:%S} UTC" if at else "taken at a time not known"


def moment(at: Any) -> str:
    """When a paste was taken, as a finding's subject holds it."""
    return f"{at:%Y-%m-%dT%H:%M:%SZ}" if at else "unknown"
