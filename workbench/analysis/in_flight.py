"""What was still in flight at the capture: reassignments under way, topics queued for deletion and a
preferred replica election asked for through ZooKeeper, each with its age and what it holds back.

Read from ZooKeeper's tree as captured; ages come from ZooKeeper's history where the bundle has it (when a
reassignment's replicas were first added), else from the znodes' own times (a deletion marker's and an
election request's ctime; a topic znode's mtime, the last rewrite, bounds a reassignment's start). What a
reassignment holds back is Kafka's: a deletion of its topic waits for it (`reassignment_blocks_deletion`)
and, before 3.4, the automatic leader rebalance waits for every reassignment
(`auto_rebalance_waits_for_reassignments`).
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from pyspark.sql import functions as F

from workbench.analysis.contract import INFO, WARNING, Analysis, Kind, Need
from workbench.analysis.findings import Coverage, Finding, ranges, txn_ref, zk_ref
from workbench.analysis.reassignment import reassignments
from workbench.analysis.state import state_at
from workbench.kafka import behaviour
from workbench.kafka import znodes as paths
from workbench.model.views import views

if TYPE_CHECKING:
    from workbench.frames import Bundle

SHOWN = 60  # partitions of one topic named in a finding


def _run(bundle: Bundle, coverage: Coverage) -> list[Finding]:
    """One finding per topic with a reassignment under way, one listing the topics queued for deletion,
    one for a preferred replica election request still in ZooKeeper."""
    v = views(bundle)
    now = v.as_of_ms
    state = state_at(bundle)
    times = {
        r.path: r
        for r in bundle.znodes.where(
            F.col("path").startswith(paths.DELETE_TOPICS + "/")
            | F.col("path").isin(paths.PREFERRED_REPLICA_ELECTION, paths.REASSIGN_PARTITIONS)
        )
        .select("path", "ctime", "mzxid", "czxid", "data")
        .collect()
    }  # a znode per pending deletion or request
    queued = set(state.delete_markers or ())
    out = _reassignments(bundle, state.partitions, state.reassignments, queued, now)
    if queued:
        ages = {t: _age(now, times.get(paths.delete_topic_path(t))) for t in sorted(queued)}
        shown = ", ".join(f"{t} ({a})" for t, a in ages.items())
        out.append(
            Finding(
                "in_flight.deletion",
                INFO,
                {"topics": sorted(queued)},
                f"{len(queued)} topic(s) queued for deletion at the capture, with how long ago each was "
                f"asked for: {shown}.",
                tuple(zk_ref(paths.delete_topic_path(t)) for t in sorted(queued)[:5]),
            )
        )
    election = times.get(paths.PREFERRED_REPLICA_ELECTION)
    if election is not None:
        out.append(
            Finding(
                "in_flight.preferred_election",
                WARNING,
                {"path": paths.PREFERRED_REPLICA_ELECTION},
                f"A preferred replica election asked for through ZooKeeper ({_age(now, election)}) was "
                "still waiting at the capture: the controller deletes the request once it has run it, so no "
                "controller has taken it up.",
                (zk_ref(paths.PREFERRED_REPLICA_ELECTION, czxid=election.czxid),),
            )
        )
    return out


def _reassignments(
    bundle: Bundle, partitions: Any, moving: Any, queued: set[str], now: int | None
) -> list[Finding]:
    """Per topic: the partitions under way, how long, each target replica not yet in the ISR, and what
    waits for them."""
    if moving.isEmpty():
        return []
    history = reassignments(bundle)
    started = (
        history.where(F.col("completed").isNull()).select("topic", "partition", "started", "started_zxid")
        if history is not None
        else None
    )
    topics = bundle.znodes.where(F.col("path").rlike(r"^/brokers/topics/[^/]+$")).select(
        F.col("name").alias("topic"), F.col("mtime").alias("written"), F.col("mzxid").alias("written_zxid")
    )
    rows = moving.join(partitions.select("topic", "partition", "isr"), ["topic", "partition"], "left").join(
        topics, "topic", "left"
    )
    if started is not None:
        rows = rows.join(started, ["topic", "partition"], "left")
    else:
        rows = rows.select(
            "*",
            F.lit(None).cast("timestamp").alias("started"),
            F.lit(None).cast("long").alias("started_zxid"),
        )
    waiting = F.array_except("target", F.coalesce("isr", F.array()))
    per_topic = (
        rows.groupBy("topic")
        .agg(
            F.count("*").alias("n"),
            F.min("started").alias("started"),
            F.min("started_zxid").alias("started_zxid"),
            F.min("written").alias("written"),
            F.min("written_zxid").alias("written_zxid"),
            F.slice(
                F.sort_array(F.collect_list(F.struct("partition", "target", waiting.alias("waiting")))),
                1,
                SHOWN,
            ).alias("parts"),
        )
        .orderBy("topic")
        .collect()
    )
    version = views(bundle).evidence.kafka_version
    waits_rebalance = behaviour.holds("auto_rebalance_waits_for_reassignments", version)
    out = []
    for r in per_topic:
        since = r.started or r.written
        exact = r.started is not None
        age = _age(now, since, exact)
        targets = "; ".join(f"{p.partition} -> {list(p.target)}" for p in r.parts)
        out_of_isr = [f"{p.partition}@{b}" for p in r.parts for b in sorted(p.waiting or [])]
        joined = (
            f"target replicas not yet in the ISR: {', '.join(out_of_isr)}"
            if out_of_isr
            else "every target replica is in the ISR (the controller has yet to finish it)"
        )
        holds = []
        if r.topic in queued:
            holds.append(f"the deletion of {r.topic}, queued, waits until it ends")
        if waits_rebalance:
            holds.append("the controller's automatic leader rebalance elects nothing anywhere while it runs")
        elif waits_rebalance is None:
            holds.append(
                "before Kafka 3.4 the automatic leader rebalance also waits for it (version unknown)"
            )
        partitions = ranges([p.partition for p in r.parts])
        out.append(
            Finding(
                "in_flight.reassignment",
                WARNING if r.topic in queued else INFO,
                {"topic": r.topic, "partitions": [p.partition for p in r.parts], "waiting": out_of_isr},
                f"The reassignment of {r.topic} partition(s) {partitions} ({r.n}) was under way at the "
                f"capture ({age}): {targets}; {joined}."
                + (f" Meanwhile {'; '.join(holds)}." if holds else ""),
                (txn_ref(r.started_zxid) if exact else zk_ref(paths.topic_path(r.topic), r.written_zxid),),
            )
        )
    return out


def _age(now: int | None, znode_or_time: Any, exact: bool = True) -> str:
    """'42 min, since 2024-03-12 08:20:31 ZooKeeper time'; 'at least ...' when only a bound is known."""
    since = znode_or_time if isinstance(znode_or_time, datetime) else getattr(znode_or_time, "ctime", None)
    if not isinstance(since, datetime):
        return "since a moment not known"
    shown = f"since {since.astimezone(timezone.utc):%Y-%m-%d %H:%M:%S} ZooKeeper time"
    if now is None:
        return shown
    ms = now - int(since.timestamp() * 1000)
    span = f"{ms / 60_000:.0f} min" if ms >= 120_000 else f"{ms / 1000:.0f} s"
    return f"{'' if exact else 'at least '}{span}, {shown}"


ANALYSIS = Analysis(
    "in_flight",
    needs={Need.ZK_STATE: "what was under way at the capture"},
    wants={Need.ZK_HISTORY: "a reassignment's age is bounded by its topic znode"},
    run=_run,
    kinds=(
        Kind("in_flight.reassignment", (WARNING, INFO), {"topic": str, "partitions": list, "waiting": list}),
        Kind("in_flight.deletion", (INFO,), {"topics": list}),
        Kind("in_flight.preferred_election", (WARNING,), {"path": str}),
    ),
)
findings = ANALYSIS.findings
