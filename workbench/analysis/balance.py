"""Leader balance: brokers whose share of preferred leadership stayed above the controller's threshold
longer than its automatic rebalance takes to act, and why nothing moved it back.

The ratio is KafkaController.checkAndTriggerAutoLeaderRebalance's (2.5.1-3.6.2): of the partitions whose
first replica is the broker (topics queued for deletion left out), those whose leader is another broker.
Above leader.imbalance.per.broker.percentage (default 10) the controller, every
leader.imbalance.check.interval.seconds (default 300) while auto.leader.rebalance.enable is true, elects the
preferred replica wherever it is alive and in the ISR and, before 3.4, no reassignment runs
(behaviour: auto_rebalance_waits_for_reassignments). An imbalance that outlives
that interval was therefore not corrected, and the finding says which of those conditions the evidence
shows. How long it lasted is the health series' (ZooKeeper's history); without it, ZooKeeper's tree at the
capture bounds it from below: the ratio has not changed since the last write that could change it
(`history.counts.imbalances`). Also here: replicas that keep leaving their partition's ISR (flapping,
`model/isr.py`).

In two halves: `facts` asks Spark (a query per concern, for all brokers at once), `judge` decides and
words the findings in plain Python.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any

from pyspark.sql import Row
from pyspark.sql import functions as F

from workbench.analysis.contract import NO_TXN, WARNING, Analysis, Kind, Need
from workbench.analysis.findings import TP, Coverage, Finding, file_ref, first_refs, tp_list, txn_ref, zk_ref
from workbench.kafka import behaviour, defaults
from workbench.model.history.counts import FROM_TREE, imbalances
from workbench.model.history.partitions import FROM_TXNS, isr_writes_unseen
from workbench.model.isr import FLAPPING_WINDOW_S, flapping
from workbench.model.views import views
from workbench.together import Ask, Joined, count, given, rows, together

if TYPE_CHECKING:
    from workbench.frames import Bundle

IMBALANCE_PERCENTAGE = defaults.BROKER["leader.imbalance.per.broker.percentage"]
CHECK_INTERVAL_SECONDS = defaults.BROKER["leader.imbalance.check.interval.seconds"]


# -- facts (Spark) ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Imbalanced:
    """A broker above the threshold at the end of every bucket from `since` to the last (`minute`), or at
    the capture (`minute`) and unchanged since `since` (ZooKeeper's tree), with the partitions it is the
    preferred leader for and does not lead, and the rebalance checks logged since."""

    broker: int
    preferred: int
    not_leading: int
    imbalance_ratio: float
    since: datetime
    minute: datetime
    movable: int  # of those it does not lead (topics queued for deletion left out), those whose ISR holds it
    some: list[tuple[str, int | None]]  # state znodes (path, mzxid) of the first few of them
    queued: list[str]  # topics queued for deletion it is the preferred leader for and does not lead
    queued_partitions: int
    checks: int | None  # automatic rebalance checks the brokers logged since `since`; None: no logs
    last_check: tuple[str, int] | None  # the last of them (file, line)


@dataclass(frozen=True)
class Flapped:
    """One broker's replicas that left their partition's ISR FLAPPING_DEPARTURES times or more."""

    broker: int
    n: int
    most: int
    first: datetime
    last: datetime
    tps: list[TP]
    refs: list[str]  # the first departures' txns, or lines
    from_txns: bool  # ZooKeeper's history told them (its clock); else the lines (their brokers' clocks)


@dataclass(frozen=True)
class Facts:
    percentage: float  # leader.imbalance.per.broker.percentage, where the brokers agree, else the default
    interval_s: int  # leader.imbalance.check.interval.seconds, likewise
    live: frozenset[int]  # brokers registered at the capture
    imbalanced: list[Imbalanced]  # above the threshold at the series' last bucket
    flapped: list[Flapped]
    disabled: list[int]  # brokers whose server.properties turn auto.leader.rebalance.enable off
    waits: bool | None  # the rebalance skips while any reassignment runs, at this version (None: unknown)
    moving: int  # partitions being reassigned at the capture
    counted_from: str | None  # the history the preferred partitions are known from, when not all are
    # what told the imbalances: the health series (FROM_TXNS), ZooKeeper's tree at the capture (FROM_TREE:
    # each unchanged since at most the last write that could change it), or nothing (None)
    told: str | None = FROM_TXNS
    unseen: int = 0  # writes of partitions' states no line printed (the ISR changes told by the lines)


def facts(bundle: Bundle) -> Facts:
    """The brokers above the threshold at the end, with their partitions and the logged checks (a query
    each for all of them), from the history's imbalances; and the flapping replicas, from its ISR
    changes."""
    v = views(bundle)
    percentage = float(v.evidence.agreed("leader.imbalance.per.broker.percentage", IMBALANCE_PERCENTAGE))
    at_end, told = imbalances(bundle, percentage / 100)
    ends = rows(at_end)
    flaps, unseen = _flapped(bundle), isr_writes_unseen(bundle)
    got = together(ends, flaps, unseen)
    above = sorted((r for r in got[ends] if r.since is not None), key=lambda r: r.broker)
    disabled = [
        b
        for b, x in v.evidence.config("auto.leader.rebalance.enable", "true").items()
        if x.strip() == "false"
    ]
    reassigning = v.partitions.where((F.size("adding") > 0) | (F.size("removing") > 0))
    moving, imbalanced = count(reassigning if above else None), _imbalanced(bundle, above)
    then = together(moving, imbalanced)
    return Facts(
        percentage=percentage,
        interval_s=int(v.evidence.agreed("leader.imbalance.check.interval.seconds", CHECK_INTERVAL_SECONDS)),
        live=frozenset(v.live_brokers),
        imbalanced=then[imbalanced],
        flapped=got[flaps],
        disabled=disabled,
        waits=behaviour.holds("auto_rebalance_waits_for_reassignments", v.evidence.kafka_version),
        moving=then[moving],
        counted_from=None if told != FROM_TXNS or v.history_base[1] else v.history_read,
        told=told,
        unseen=got[unseen],
    )


def _imbalanced(bundle: Bundle, above: list[Any]) -> Ask[list[Imbalanced]]:
    """For the brokers `above`: their preferred partitions led by another broker, and the automatic
    rebalance checks the brokers logged since each began."""
    if not above:
        return given([])
    v = views(bundle)
    brokers = [r.broker for r in above]
    deleting = v.delete_markers.select("topic", F.lit(True).alias("queued"))
    parts = (
        v.partitions.where(F.col("replicas")[0].isin(brokers) & (F.col("leader") != F.col("replicas")[0]))
        .join(deleting, "topic", "left")
        .select(
            F.col("replicas")[0].alias("broker"),
            "topic",
            "partition",
            "state_path",
            "state_mzxid",
            F.coalesce("queued", F.lit(False)).alias("queued"),
            F.array_contains("isr", F.col("replicas")[0]).alias("in_isr"),
        )
    )
    kept_in = ~F.col("queued")
    detail = rows(  # one row per broker above the threshold
        parts.groupBy("broker").agg(
            F.count_if(kept_in & F.col("in_isr")).alias("movable"),
            F.slice(
                F.sort_array(
                    F.collect_list(
                        F.when(kept_in, F.struct("topic", "partition", "state_path", "state_mzxid"))
                    )
                ),
                1,
                3,
            ).alias("some"),
            F.count_if("queued").alias("queued_partitions"),
            F.sort_array(F.collect_set(F.when(F.col("queued"), F.col("topic")))).alias("queued"),
        )
    )
    return Joined(
        partial(_read_imbalanced, above), detail, _checks(bundle, {r.broker: r.since for r in above})
    )


def _read_imbalanced(
    above: list[Any], detail: list[Row], checks: dict[int, tuple[int, tuple[str, int] | None]]
) -> list[Imbalanced]:
    by_broker = {r.broker: r for r in detail}
    out = []
    for r in above:
        d = by_broker.get(r.broker)
        n, last = checks.get(r.broker, (None, None))
        out.append(
            Imbalanced(
                r.broker,
                r.preferred,
                r.not_leading,
                r.imbalance_ratio,
                r.since,
                r.minute,
                d.movable if d else 0,
                [(s.state_path, s.state_mzxid) for s in d.some] if d else [],
                list(d.queued) if d else [],
                d.queued_partitions if d else 0,
                n,
                last,
            )
        )
    return out


def _checks(bundle: Bundle, since: dict[int, datetime]) -> Ask[dict[int, tuple[int, tuple[str, int] | None]]]:
    """Per broker, the automatic rebalance checks logged since `since[broker]` and the last of them, in
    one row; empty without broker logs."""
    if not views(bundle).evidence.with_logs:
        return given({})
    lines = bundle.cluster_events.where(F.col("event") == "leader_election.auto_rebalance")
    aggs = []
    for b, t in since.items():
        after = F.col("ts") >= F.lit(t)
        aggs += [
            F.count_if(after).alias(f"n{b}"),
            F.max_by(F.struct("file", "line_no"), F.when(after, F.struct("ts", "file", "line_no"))).alias(
                f"last{b}"
            ),
        ]
    return Ask(
        lines.agg(*aggs),
        lambda rs: {
            b: (r[f"n{b}"], (r[f"last{b}"].file, r[f"last{b}"].line_no) if r[f"n{b}"] else None)
            for r in rs
            for b in since
        },
    )


def _flapped(bundle: Bundle) -> Ask[list[Flapped]]:
    """Per broker whose replicas flapped: how many, the most departures in one window, when, which, and
    what told the first departures."""
    per_broker = (
        flapping(bundle)
        .groupBy("broker")
        .agg(
            F.count("*").alias("n"),
            F.max("departures").alias("most"),
            F.min("first").alias("first"),
            F.max("last").alias("last"),
            F.slice(F.sort_array(F.collect_list(F.struct("topic", "partition"))), 1, 60).alias("tps"),
            F.slice(F.sort_array(F.flatten(F.collect_list("told"))), 1, 5).alias("told"),
        )
        .orderBy("broker")  # one row per broker
    )
    return Ask(
        per_broker,
        lambda rs: [
            Flapped(
                r.broker,
                r.n,
                r.most,
                r.first,
                r.last,
                [TP(t.topic, t.partition) for t in r.tps],
                [txn_ref(t.zxid) if t.zxid is not None else file_ref(t.file, t.line_no) for t in r.told],
                all(t.zxid is not None for t in r.told),
            )
            for r in rs
        ],
    )


# -- findings (plain Python) ---------------------------------------------------------------------------
def judge(f: Facts, coverage: Coverage) -> list[Finding]:
    """Flapping replicas, and registered brokers whose imbalance outlived the controller's check, with why
    nothing moved it back. Plain Python: tested from hand-written facts."""
    out = [_flapping_finding(x) for x in f.flapped]
    if f.unseen:
        coverage.add(
            "leader_balance",
            [
                f"{f.unseen} write(s) of partitions' states that no line prints (their versions skipped): "
                "the ISR changes in them are not counted for flapping"
            ],
        )
    if f.told != FROM_TXNS and Need.ZK_HISTORY.value in coverage["leader_balance"].used:
        coverage.add("leader_balance", [NO_TXN])  # held, yet none of its txns read
    if f.told is None:
        return out
    for r in f.imbalanced:
        if r.broker not in f.live:
            continue  # not registered: its absence is the finding (broker.session_expired)
        # above at the end of every bucket from `since` to the last (or unchanged from `since` to the
        # capture): for longer than one check interval
        if (r.minute - r.since).total_seconds() <= f.interval_s:
            continue
        out.append(_imbalance_finding(f, r))
    return out


def _imbalance_finding(f: Facts, r: Imbalanced) -> Finding:
    b = r.broker
    why, refs = _why_not_corrected(f, r)
    counted = (
        f" that {f.counted_from} shows assigned (those before it are not known)" if f.counted_from else ""
    )
    aside = ""
    if r.queued_partitions:
        aside = (
            f"; {r.queued_partitions} more it is the preferred leader for belong to topic(s) queued for "
            f"deletion ({', '.join(r.queued[:3])}{', ...' if len(r.queued) > 3 else ''}), which the "
            "controller leaves out of both the ratio and the rebalance until the deletion completes"
        )
    lasted = (
        f"at the capture, unchanged since at least {r.since:%Y-%m-%d %H:%M:%S} ZooKeeper time (the last "
        "write to their state znodes or to the topics' in ZooKeeper's tree)"
        if f.told == FROM_TREE
        else f"at every minute's end since {r.since:%Y-%m-%d %H:%M} ZooKeeper time"
    )
    return Finding(
        "leader.imbalance",
        WARNING,
        {"broker": b, "ratio": round(r.imbalance_ratio, 2), "threshold": f.percentage / 100}
        | ({"queued": r.queued} if r.queued else {}),
        f"Broker {b} does not lead {r.not_leading} of the {r.preferred} partitions{counted} it is the "
        f"preferred leader for (imbalance {r.imbalance_ratio:.2f}, above "
        f"leader.imbalance.per.broker.percentage {f.percentage:g}) {lasted}, longer than the controller's "
        f"{f.interval_s} s rebalance check; broker {b} is in the ISR of {r.movable or 'none'} of them"
        f"{', which a preferred election could move back' if r.movable else ''}; {why}{aside}.",
        tuple(first_refs([zk_ref(path, mzxid) for path, mzxid in r.some], 3) + refs),
    )


def _why_not_corrected(f: Facts, r: Imbalanced) -> tuple[str, list[str]]:
    """What the evidence says about the automatic rebalance since the imbalance began; the partitions not
    led by their preferred replica whose ISR lacks it no preferred election moves."""
    if f.disabled:
        return (
            "auto.leader.rebalance.enable is false in server.properties of broker(s) "
            + ", ".join(map(str, f.disabled)),
            [f"broker-{b}:server.properties" for b in f.disabled[:3]],
        )
    if f.moving and f.waits is not False:
        return (
            f"{f.moving} partition(s) are being reassigned, and the controller skips the rebalance while "
            "any are" + ("" if f.waits else " (before Kafka 3.4; this bundle's version is not known)"),
            [],
        )
    stuck = r.not_leading - r.movable
    out_of_isr = (
        f"; {stuck} of them cannot move: the rebalance elects a preferred replica only where it is "
        "alive and in the ISR (canPreferredReplicaBeLeader)"
        if stuck
        else ""
    )
    if r.checks is None:
        return "the bundle has no broker logs to show whether the controller checked" + out_of_isr, []
    if r.checks and r.last_check:
        return (
            f"the controller logged {r.checks} automatic rebalance check(s) since then without moving them"
            + out_of_isr,
            [file_ref(*r.last_check)],
        )
    return (
        "no broker's log holds an automatic rebalance check ('Processing automatic preferred replica "
        "leader election', INFO) since then, as the controller logs one each check while "
        "auto.leader.rebalance.enable is true" + out_of_isr,
        [],
    )


def _flapping_finding(r: Flapped) -> Finding:
    return Finding(
        "isr.flapping",
        WARNING,
        {"broker": r.broker, "partitions": r.n},
        f"Broker {r.broker}'s replica left the ISR of {r.n} partition(s) ({tp_list(r.tps)}) up to "
        f"{r.most} times within {FLAPPING_WINDOW_S // 60} minutes, between {r.first:%Y-%m-%d %H:%M:%S} "
        f"and {r.last:%H:%M:%S} "
        + ("ZooKeeper time." if r.from_txns else "on the clocks of the brokers whose lines print it."),
        tuple(r.refs),
    )


ANALYSIS = Analysis(
    "leader_balance",
    needs={
        Need.ZK_HISTORY: "how long an imbalance lasted, and the ISR changes in zxid order (the replicas that "
        "flapped are read from the partition states the lines print instead)",
        Need.LOGS: "which replicas flapped, from the partition states the lines print (without ZooKeeper's)",
        Need.ZK_STATE: "which brokers are registered at the capture, and each broker's imbalance then",
    },
    facts=facts,
    judge=judge,
    reads=(
        "health",
        "partitions",
        "partition_changes",
        "logged_states",
        "delete_markers",
        "live_brokers",
        "history_base",
        "resumed_after",
        "as_of_ms",
    ),
    kinds=(
        Kind(
            "leader.imbalance",
            (WARNING,),
            {"broker": int, "ratio": float, "threshold": float},
            {"queued": list},  # topics queued for deletion it is the preferred leader of and does not lead
            key=("broker",),
        ),
        Kind("isr.flapping", (WARNING,), {"broker": int, "partitions": int}, event=True),
    ),
)
findings = ANALYSIS.findings
