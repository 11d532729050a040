"""ZooKeeper's history around its gaps. The analyses read the history from the newest gap on (nothing
inside or across a gap is inferred: `model.history_gaps`); what precedes each gap is read on its own, as
the evidence stood at the gap (`frames.Until`), and what happened and was over there is kept. Coverage
says, per gap, what it hid."""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TYPE_CHECKING

from pyspark.sql import functions as F

from workbench.analysis.findings import Coverage, Finding, Status
from workbench.analysis.registry import kinds
from workbench.kafka.znodes import STATE_PATH
from workbench.model.history_gaps import Gap, written_inside
from workbench.model.views import ClusterViews, views
from workbench.zookeeper.txns import hex_zxid

if TYPE_CHECKING:
    from workbench.frames import Bundle


# The gaps whose history before them is read on its own, newest first: each is a pass of every analysis.
SEGMENTS_READ = 4


def before_gaps(
    bundle: Bundle, found_in: Callable[[Bundle], list[Finding]], found: list[Finding], coverage: Coverage
) -> list[Finding]:
    """The findings of what happened before each gap (`found_in` the evidence as it stood there) that
    `found` (the history after the newest gap) does not already make; what was still going on when the
    history stops at a gap is added to coverage's `zk_history` (`history_gaps`), never carried across it."""
    from workbench.frames import Until

    out: list[Finding] = []
    seen = {named(f) for f in found}
    said: list[str] = []
    inner = [g for g in views(bundle).history_gaps if g.after is not None and g.before is not None]
    if len(inner) > SEGMENTS_READ:
        skipped = inner[: len(inner) - SEGMENTS_READ]
        said.append(
            f"the history before {len(skipped)} older gap(s) (up to {hex_zxid(skipped[-1].after or 0)}) is "
            f"not read on its own: each costs a pass of every analysis, and only the {SEGMENTS_READ} "
            "newest are read"
        )
        inner = inner[len(skipped) :]
    for gap in inner:
        assert gap.after is not None
        part = Until(bundle, gap.after)
        try:
            before = found_in(part)
        finally:
            part.release()
        kept, lasting = kept_before(before, seen)
        out += kept
        lasting = [x for x in (untold(f, found) for f in lasting) if x is not None]
        said += [lasting_at(gap, lasting)] if lasting else []
    if said:
        coverage.add("zk_history", said)
    return out


def named(f: Finding) -> tuple[str, Hashable]:
    """What names one finding: its kind and its kind's key (`Kind.key`), else its whole subject."""
    keys = kinds()[f.kind].key or tuple(sorted(f.subject))
    return f.kind, tuple((k, str(f.subject.get(k))) for k in keys)


def kept_before(
    before: list[Finding], seen: set[tuple[str, Hashable]]
) -> tuple[list[Finding], list[Finding]]:
    """Of the findings made from the history before a gap: those kept (of a kind that tells of what was
    over there, `Kind.event`, and not already made: `seen` grows), and those of something still going on
    when the history stops (`still` above 0), which the gap cuts."""
    every = kinds()
    kept, lasting = [], []
    for f in before:
        if not every[f.kind].event:
            continue
        if f.subject.get("still"):
            lasting.append(f)
        elif named(f) not in seen:
            seen.add(named(f))
            kept.append(f)
    return kept, lasting


def untold(f: Finding, found: list[Finding]) -> Finding | None:
    """What of `f` (going on when the history stops at a gap) no finding after the gap tells as one
    outage across it (`across`: the same start): None where one tells all of it, else `f` with how many
    of its partitions it tells."""
    told = sum(
        x.subject.get("partitions", 0)
        for x in found
        if "across" in x.subject
        and x.kind == f.kind
        and (x.subject.get("zxid"), x.subject.get("broker"))
        == (f.subject.get("zxid"), f.subject.get("broker"))
    )
    if not told:
        return f
    if told >= f.subject.get("partitions", 0):
        return None
    return Finding(f.kind, f.severity, {**f.subject, "told": told}, f.summary, f.evidence)


def lasting_at(gap: Gap, lasting: list[Finding]) -> str:
    """Coverage's words for what the history before `gap` shows still going on when it stops."""
    what = "; ".join(
        f"{f.kind} ({', '.join(f'{k} {v}' for k, v in f.subject.items() if k not in ('still', 'told'))})"
        + (f", {f.subject['told']} of them told as one outage across the gap" if "told" in f.subject else "")
        for f in lasting
    )
    return (
        f"when the history stops at {hex_zxid(gap.after or 0)}, before txns {gap.missing}, it shows "
        f"still going on (how it went on is not known): {what}"
    )


def carried(v: ClusterViews) -> str:
    """What of the tree before the newest gap is carried across it (`views.znodes_carried`), said."""
    states = 0
    if v.znodes_carried is not None:
        states = v.znodes_carried.where(F.col("path").rlike(STATE_PATH)).count()
    said = (
        "the brokers registered then are known (ZooKeeper's counts of /brokers/ids's children show the "
        "gap made and ended no registration); "
        if v.registrations_carried is not None
        else "a registration from before the gap is known again only once written, so a session's end is "
        "not found; "
    )
    if states:
        said += (
            f"the states of {states} partition(s) are carried across it (the capture holds each znode "
            "made before the gap, and its first write after it is one version on: the gap did not write "
            "it), so an outage of theirs going on at the gap is found where the history resumes, counted "
            "from its start before the gap where the history up to it shows one; any other partition's "
            "state is known again only once written"
        )
    else:
        said += "a partition's state from before the gap is known again only once written, so an outage "
        said += "that began before it is not found"
    return said


def history_gaps(bundle: Bundle, coverage: Coverage) -> None:
    """Gaps in ZooKeeper's history make every check that read it partial, and get a row of their own
    saying what each hides, what it keeps from being found, and from where the analyses read on."""
    v = views(bundle)
    gaps = v.history_gaps
    if not gaps:
        return
    said = []
    for g in gaps:
        hidden = written_inside(bundle, g)
        said.append(
            g.describe()
            + (f"; ZooKeeper's state shows written inside it: {', '.join(hidden)}" if hidden else "")
            + "; inside it no election, registration, session's end, leader or ISR change, topic or "
            "deletion change can be found"
        )
    resumed = v.resumed_after
    if resumed is not None and resumed.before is not None:
        unknown = ", over a tree not known then (no snapshot after the gap): " + carried(v)
        said.append(
            f"the analyses read the history from {hex_zxid(resumed.before)} on"
            + (" over the snapshot that covers the gap" if v.history_base[1] else unknown)
            + "; what happened before each gap is read from the history up to it"
        )
    for name, check in coverage.items():
        if check.status is Status.DONE and any("history" in u for u in check.used):
            coverage.record(name, check.used, [*check.missing, "ZooKeeper's history has gaps (zk_history)"])
    coverage.record("zk_history", ["txn logs"], said)
