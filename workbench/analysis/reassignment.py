"""Partition reassignments step by step, as ZooKeeper's history holds them (KIP-455, the controller's
onPartitionReassignment, 2.4+): `started` when the topic znode took RS = target + origin with the adding
and removing replicas (phase U/A), `caught_up` when every target replica was in the ISR (phase B begins),
`completed` when the topic znode was written with the target alone (B6). One still under way at the
capture is stuck when a target replica's broker is not registered (its copy cannot catch up), or when it
has run for STUCK_AFTER_MS.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from workbench.analysis.contract import NO_TXN, WARNING, Analysis, Kind, Need
from workbench.analysis.findings import Coverage, Finding, txn_ref
from workbench.model.partition_history import stretches
from workbench.model.views import views

if TYPE_CHECKING:
    from workbench.frames import Bundle

STUCK_AFTER_MS = 30 * 60_000  # under way this long at the capture (a throttled copy can take longer)
SHOWN = 50  # reassignments under way examined one by one; coverage counts any beyond


def reassignments(bundle: Bundle) -> DataFrame | None:
    """Every reassignment of a partition: topic, partition, origin, target, started/started_zxid,
    caught_up/caught_up_zxid, completed/completed_zxid (null: under way at the capture), took_ms (to
    completion) and in_isr (the target replicas in the ISR at its last change). None without the history."""
    changes = views(bundle).partition_changes
    if changes is None:
        return None
    moving = (F.size(F.coalesce("adding", F.array())) + F.size(F.coalesce("removing", F.array()))) > 0
    target = F.filter("replicas", lambda r: ~F.array_contains(F.coalesce("removing", F.array()), r))
    origin = F.filter("replicas", lambda r: ~F.array_contains(F.coalesce("adding", F.array()), r))
    # Caught up: the first change, while it ran, with every target replica in the ISR.
    caught = F.forall(target, lambda r: F.array_contains(F.coalesce("isr", F.array()), r))
    return (
        stretches(changes, moving)
        .groupBy("topic", "partition", "stretch")
        .agg(
            F.min_by(F.struct("zxid", "time", origin.alias("origin"), target.alias("target")), "zxid").alias(
                "s"
            ),
            F.min_by(F.struct("zxid", "time"), F.when(caught, F.col("zxid"))).alias("c"),
            F.max_by(
                F.struct(F.col("next_zxid").alias("zxid"), F.col("next_time").alias("time")), "zxid"
            ).alias("e"),
            F.max_by("isr", "zxid").alias("last_isr"),
        )
        .select(
            "topic",
            "partition",
            F.col("s.origin").alias("origin"),
            F.col("s.target").alias("target"),
            F.col("s.time").alias("started"),
            F.col("s.zxid").alias("started_zxid"),
            F.col("c.time").alias("caught_up"),
            F.col("c.zxid").alias("caught_up_zxid"),
            F.col("e.time").alias("completed"),
            F.col("e.zxid").alias("completed_zxid"),
            F.size(F.array_intersect("s.target", F.coalesce("last_isr", F.array()))).alias("in_isr"),
        )
        .withColumn("took_ms", F.unix_millis("completed") - F.unix_millis("started"))
    )


@dataclass(frozen=True)
class UnderWay:
    """A reassignment still under way at the capture."""

    topic: str
    partition: int
    origin: list[int]
    target: list[int]
    started: datetime
    started_zxid: int
    in_isr: int  # target replicas in the ISR at its last change


@dataclass(frozen=True)
class Facts:
    """What the findings need, asked of Spark in one query (two when more than SHOWN are under way)."""

    under_way: list[UnderWay]  # the first SHOWN by topic and partition
    beyond: int  # under way beyond those
    live: frozenset[int]  # brokers registered at the capture
    as_of_ms: int | None  # the capture's time


def facts(bundle: Bundle) -> Facts | None:
    """The reassignments under way at the capture; None without ZooKeeper's history."""
    moves = reassignments(bundle)
    if moves is None:
        return None
    v = views(bundle)
    running = moves.where(F.col("completed").isNull())
    fields = [f.name for f in dataclasses.fields(UnderWay)]
    rows = running.orderBy("topic", "partition").select(*fields).limit(SHOWN).collect()
    beyond = running.count() - SHOWN if len(rows) == SHOWN else 0
    return Facts([UnderWay(**r.asDict()) for r in rows], beyond, frozenset(v.live_brokers), v.as_of_ms)


def judge(facts: Facts | None, coverage: Coverage) -> list[Finding]:
    """Reassignments under way at the capture that cannot finish (a target broker is not registered)
    or have run for STUCK_AFTER_MS. Plain Python: tested from hand-written facts."""
    if facts is None:
        coverage.add("reassignment", [NO_TXN])
        return []
    if facts.beyond:
        coverage.add(
            "reassignment",
            [f"{facts.beyond} reassignments under way beyond the first {SHOWN} (by topic) were not examined"],
        )
    out = []
    for r in facts.under_way:
        down = sorted(b for b in r.target if b not in facts.live)
        ran_ms = (facts.as_of_ms or 0) - int(r.started.timestamp() * 1000)
        if not down and ran_ms < STUCK_AFTER_MS:
            continue
        why = (
            f"broker(s) {', '.join(map(str, down))} of its target are not registered, so their copies cannot "
            "catch up"
            if down
            else f"it has run for {ran_ms / 60_000:.0f} min"
        )
        out.append(
            Finding(
                "reassignment.stuck",
                WARNING,
                {"topic": r.topic, "partition": r.partition, "target": list(r.target), "brokers_down": down},
                f"The reassignment of {r.topic}-{r.partition} from {list(r.origin)} to {list(r.target)}, "
                f"begun at {r.started:%Y-%m-%d %H:%M:%S} ZooKeeper time, was still under way at the capture "
                f"with {r.in_isr} of {len(r.target)} target replicas in the ISR: {why}.",
                (txn_ref(r.started_zxid),),
            )
        )
    return out


ANALYSIS = Analysis(
    "reassignment",
    needs={Need.ZK_HISTORY: "when each reassignment began"},
    wants={Need.ZK_STATE: "which brokers are registered at the capture"},
    facts=facts,
    judge=judge,
    reads=("partition_changes", "live_brokers", "as_of_ms"),
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
