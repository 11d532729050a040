"""Partition reassignments that cannot finish. One still under way at the capture
(`history.reassignments.under_way`: ZooKeeper's tree says which, its history since when) is stuck when a
target replica's broker is not registered (its copy cannot catch up), or when it has run for
STUCK_AFTER_MS: from its start in ZooKeeper's history, else at least since its topic znode's last write.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from workbench.analysis.contract import NO_TXN, WARNING, Analysis, Kind, Need
from workbench.analysis.findings import Coverage, Finding, txn_ref, zk_ref
from workbench.kafka.znodes import topic_path
from workbench.model.history.reassignments import under_way
from workbench.model.views import views

if TYPE_CHECKING:
    from workbench.frames import Bundle

STUCK_AFTER_MS = 30 * 60_000  # under way this long at the capture (a throttled copy can take longer)
SHOWN = 50  # reassignments under way examined one by one; coverage counts any beyond


@dataclass(frozen=True)
class UnderWay:
    """A reassignment still under way at the capture, and since when: its start in ZooKeeper's history
    (`started`; None where the history does not hold it), else its topic znode's last write (`written`),
    which it began at or before."""

    topic: str
    partition: int
    origin: list[int] | None  # None: the tree does not say (a request not taken up, or before 2.4)
    target: list[int]
    started: datetime | None
    started_zxid: int | None
    written: datetime | None
    written_zxid: int | None
    in_isr: int  # target replicas in the ISR at the capture


@dataclass(frozen=True)
class Facts:
    """What the findings need, asked of Spark in one query (two when more than SHOWN are under way)."""

    under_way: list[UnderWay]  # the first SHOWN by topic and partition
    beyond: int  # under way beyond those
    live: frozenset[int]  # brokers registered at the capture
    as_of_ms: int | None  # the capture's time
    unread: bool = False  # ZooKeeper's txn logs are held, and none could be read


def facts(bundle: Bundle) -> Facts:
    """The reassignments under way at the capture."""
    v = views(bundle)
    running = under_way(bundle)
    fields = [f.name for f in dataclasses.fields(UnderWay)]
    rows = running.orderBy("topic", "partition").select(*fields).limit(SHOWN).collect()
    beyond = running.count() - SHOWN if len(rows) == SHOWN else 0
    unread = v.evidence.zk_history and v.partition_changes is None
    return Facts(
        [UnderWay(**r.asDict()) for r in rows], beyond, frozenset(v.live_brokers), v.as_of_ms, unread
    )


def judge(facts: Facts, coverage: Coverage) -> list[Finding]:
    """Reassignments under way at the capture that cannot finish (a target broker is not registered)
    or have run for STUCK_AFTER_MS. Plain Python: tested from hand-written facts."""
    if facts.unread:
        coverage.add("reassignment", [NO_TXN])
    if facts.beyond:
        coverage.add(
            "reassignment",
            [f"{facts.beyond} reassignments under way beyond the first {SHOWN} (by topic) were not examined"],
        )
    out = []
    for r in facts.under_way:
        down = sorted(b for b in r.target if b not in facts.live)
        since = r.started or r.written
        ran_ms = (facts.as_of_ms or 0) - int(since.timestamp() * 1000) if since is not None else None
        if not down and (ran_ms is None or ran_ms < STUCK_AFTER_MS):
            continue
        at_least = "" if r.started is not None else "at least "
        why = (
            f"broker(s) {', '.join(map(str, down))} of its target are not registered, so their copies cannot "
            "catch up"
            if down
            else f"it has run for {at_least}{(ran_ms or 0) / 60_000:.0f} min"
        )
        if r.started is not None:
            began, refs = (
                f"begun at {r.started:%Y-%m-%d %H:%M:%S} ZooKeeper time",
                [txn_ref(r.started_zxid)] if r.started_zxid is not None else [],
            )
        elif r.written is not None:
            written = f"{r.written:%Y-%m-%d %H:%M:%S}"
            began = f"begun at or before {written} ZooKeeper time (its topic znode's last write)"
            refs = [zk_ref(topic_path(r.topic), r.written_zxid)]
        else:
            began, refs = "begun at a moment the evidence does not hold", []
        moved = (
            f"from {list(r.origin)} to {list(r.target)}" if r.origin is not None else f"to {list(r.target)}"
        )
        out.append(
            Finding(
                "reassignment.stuck",
                WARNING,
                {"topic": r.topic, "partition": r.partition, "target": list(r.target), "brokers_down": down},
                f"The reassignment of {r.topic}-{r.partition} {moved}, {began}, was still under way at the "
                f"capture with {r.in_isr} of {len(r.target)} target replicas in the ISR: {why}.",
                tuple(refs),
            )
        )
    return out


ANALYSIS = Analysis(
    "reassignment",
    needs={Need.ZK_STATE: "the reassignments under way at the capture, and which brokers are registered"},
    wants={Need.ZK_HISTORY: "when each reassignment began (else its topic znode's last write bounds it)"},
    facts=facts,
    judge=judge,
    reads=("partition_changes", "partitions", "live_brokers", "as_of_ms"),
    kinds=(
        Kind(
            "reassignment.stuck",
            (WARNING,),
            {"topic": str, "partition": int, "target": list, "brokers_down": list},
            key=("topic", "partition"),
        ),
    ),
)
findings = ANALYSIS.findings
