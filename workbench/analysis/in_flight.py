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

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from pyspark.sql import functions as F

from workbench.analysis.contract import INFO, WARNING, Analysis, Kind, Need
from workbench.analysis.findings import Coverage, Finding, ranges, txn_ref, zk_ref
from workbench.kafka import behaviour
from workbench.kafka import znodes as paths
from workbench.model.history.reassignments import under_way
from workbench.model.state import state_at
from workbench.model.views import views
from workbench.together import count, rows, together

if TYPE_CHECKING:
    from workbench.frames import Bundle

SHOWN = 60  # partitions of one topic named in a finding


@dataclass(frozen=True)
class Moving:
    """A topic's partitions under reassignment at the capture: how many, when the first began (ZooKeeper's
    history; None without it) and its topic znode's last rewrite (the bound without it), and the first
    SHOWN as (partition, target replicas, target replicas not in the ISR)."""

    topic: str
    partitions: int
    started: datetime | None
    started_zxid: int | None
    written: datetime | None
    written_zxid: int | None
    parts: list[tuple[int, list[int], list[int]]]


@dataclass(frozen=True)
class Facts:
    """What was in flight at the capture (`now`: its time): the reassignments, the topics queued for
    deletion with when each was asked for (None: not known), a preferred election request's (ctime,
    czxid), and whether the version's automatic leader rebalance waits for reassignments (None: the
    version is not known)."""

    now: int | None
    moving: list[Moving]
    queued: dict[str, datetime | None]
    election: tuple[datetime, int] | None
    waits_rebalance: bool | None


def facts(bundle: Bundle) -> Facts:
    v = views(bundle)
    state = state_at(bundle)
    pending = rows(  # a znode per pending deletion or request
        bundle.znodes.where(
            F.col("path").startswith(paths.DELETE_TOPICS + "/")
            | F.col("path").isin(paths.PREFERRED_REPLICA_ELECTION, paths.REASSIGN_PARTITIONS)
        ).select("path", "ctime", "czxid")
    )
    moving = count(state.reassignments.limit(1))
    got = together(pending, moving)
    times = {r.path: r for r in got[pending]}
    queued = {}
    for t in sorted(state.delete_markers or ()):
        marker = times.get(paths.delete_topic_path(t))
        queued[t] = marker.ctime if marker is not None else None
    election = times.get(paths.PREFERRED_REPLICA_ELECTION)
    return Facts(
        v.as_of_ms,
        _reassignments(bundle) if got[moving] else [],
        queued,
        (election.ctime, election.czxid) if election is not None else None,
        behaviour.holds("auto_rebalance_waits_for_reassignments", v.evidence.kafka_version),
    )


def judge(f: Facts, coverage: Coverage) -> list[Finding]:
    """One finding per topic with a reassignment under way, one listing the topics queued for deletion,
    one for a preferred replica election request still in ZooKeeper."""
    out = [_reassignment(m, f) for m in f.moving]
    if f.queued:
        shown = ", ".join(f"{t} ({_age(f.now, at)})" for t, at in f.queued.items())
        out.append(
            Finding(
                "in_flight.deletion",
                INFO,
                {"topics": list(f.queued)},
                f"{len(f.queued)} topic(s) queued for deletion at the capture, with how long ago each was "
                f"asked for: {shown}.",
                tuple(zk_ref(paths.delete_topic_path(t)) for t in list(f.queued)[:5]),
            )
        )
    if f.election is not None:
        asked, czxid = f.election
        out.append(
            Finding(
                "in_flight.preferred_election",
                WARNING,
                {"path": paths.PREFERRED_REPLICA_ELECTION},
                f"A preferred replica election asked for through ZooKeeper ({_age(f.now, asked)}) was "
                "still waiting at the capture: the controller deletes the request once it has run it, so no "
                "controller has taken it up.",
                (zk_ref(paths.PREFERRED_REPLICA_ELECTION, czxid=czxid),),
            )
        )
    return out


def _reassignments(bundle: Bundle) -> list[Moving]:
    """Per topic: the partitions under way (`history.reassignments.under_way`), since when, and each
    target replica not yet in the ISR."""
    per_topic = (
        under_way(bundle)
        .groupBy("topic")
        .agg(
            F.count("*").alias("n"),
            F.min("started").alias("started"),
            F.min("started_zxid").alias("started_zxid"),
            F.min("written").alias("written"),
            F.min("written_zxid").alias("written_zxid"),
            F.slice(F.sort_array(F.collect_list(F.struct("partition", "target", "waiting"))), 1, SHOWN).alias(
                "parts"
            ),
        )
        .orderBy("topic")
        .collect()
    )
    return [
        Moving(
            r.topic,
            r.n,
            r.started,
            r.started_zxid,
            r.written,
            r.written_zxid,
            [(p.partition, list(p.target), sorted(p.waiting or [])) for p in r.parts],
        )
        for r in per_topic
    ]


def _reassignment(m: Moving, f: Facts) -> Finding:
    """A topic's reassignment under way: how long, each target replica not yet in the ISR, what waits."""
    exact = m.started is not None
    age = _age(f.now, m.started or m.written, exact)
    targets = "; ".join(f"{p} -> {target}" for p, target, _ in m.parts)
    out_of_isr = [f"{p}@{b}" for p, _, waiting in m.parts for b in waiting]
    joined = (
        f"target replicas not yet in the ISR: {', '.join(out_of_isr)}"
        if out_of_isr
        else "every target replica is in the ISR (the controller has yet to finish it)"
    )
    holds = []
    if m.topic in f.queued:
        holds.append(f"the deletion of {m.topic}, queued, waits until it ends")
    if f.waits_rebalance:
        holds.append("the controller's automatic leader rebalance elects nothing anywhere while it runs")
    elif f.waits_rebalance is None:
        holds.append("before Kafka 3.4 the automatic leader rebalance also waits for it (version unknown)")
    shown = [p for p, _, _ in m.parts]
    return Finding(
        "in_flight.reassignment",
        WARNING if m.topic in f.queued else INFO,
        {"topic": m.topic, "partitions": shown, "waiting": out_of_isr},
        f"The reassignment of {m.topic} partition(s) {ranges(shown)} ({m.partitions}) was under way at the "
        f"capture ({age}): {targets}; {joined}." + (f" Meanwhile {'; '.join(holds)}." if holds else ""),
        (
            txn_ref(m.started_zxid)
            if exact and m.started_zxid is not None
            else zk_ref(paths.topic_path(m.topic), m.written_zxid),
        ),
    )


def _age(now: int | None, since: datetime | None, exact: bool = True) -> str:
    """'42 min, since 2024-03-12 08:20:31 ZooKeeper time'; 'at least ...' when only a bound is known."""
    if since is None:
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
    facts=facts,
    judge=judge,
    reads=("partition_changes", "partitions", "as_of_ms"),
    kinds=(
        Kind(
            "in_flight.reassignment",
            (WARNING, INFO),
            {"topic": str, "partitions": list, "waiting": list},
            key=("topic", "partitions"),
        ),
        Kind("in_flight.deletion", (INFO,), {"topics": list}, key=("topics",)),
        Kind("in_flight.preferred_election", (WARNING,), {"path": str}),
    ),
)
findings = ANALYSIS.findings
