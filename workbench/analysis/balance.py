"""Leader balance: brokers whose share of preferred leadership stayed above the controller's threshold
longer than its automatic rebalance takes to act, and why nothing moved it back.

The ratio is KafkaController.checkAndTriggerAutoLeaderRebalance's (2.5.1-3.6.2): of the partitions whose
first replica is the broker (topics queued for deletion left out), those whose leader is another broker.
Above leader.imbalance.per.broker.percentage (default 10) the controller, every
leader.imbalance.check.interval.seconds (default 300) while auto.leader.rebalance.enable is true, elects the
preferred replica wherever it is alive and in the ISR and, before 3.4, no reassignment runs
(behaviour: auto_rebalance_waits_for_reassignments). An imbalance that outlives
that interval was therefore not corrected, and the finding says which of those conditions the evidence
shows. Also here: ISR churn per broker, and replicas that keep leaving their partition's ISR (flapping).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from workbench.analysis.contract import NO_TXN, WARNING, Analysis, Kind, Need
from workbench.analysis.findings import Coverage, Finding, file_ref, first_refs, tp_list, txn_ref, zk_ref
from workbench.analysis.health import Health, health
from workbench.kafka import behaviour, defaults
from workbench.model.views import views

if TYPE_CHECKING:
    from workbench.frames import Bundle

IMBALANCE_PERCENTAGE = defaults.BROKER["leader.imbalance.per.broker.percentage"]
CHECK_INTERVAL_SECONDS = defaults.BROKER["leader.imbalance.check.interval.seconds"]


def imbalance_since(h: Health, threshold: float) -> list[Any]:
    """Per broker at the series' last bucket: preferred, not_leading, imbalance_ratio, and `since`, the
    first bucket of the run of buckets that ends the series above the threshold (null when not above)."""
    above = F.col("imbalance_ratio") > threshold
    w = Window.partitionBy("broker")
    settled = F.max(F.when(~above, F.col("minute"))).over(w)
    since = F.min(F.when(above & (settled.isNull() | (F.col("minute") > settled)), F.col("minute"))).over(w)
    return (
        h.brokers.select(
            "broker", "minute", "preferred", "not_leading", "imbalance_ratio", since.alias("since")
        )
        .where(F.col("minute") == F.lit(h.last))
        .orderBy("broker")
        .collect()
    )


def _run(bundle: Bundle, coverage: Coverage) -> list[Finding]:
    """Flapping replicas, and registered brokers whose imbalance outlived the controller's check."""
    v = views(bundle)
    h = health(bundle)
    if h is None:
        coverage.add("leader_balance", [NO_TXN])
        return []
    percentage = float(_setting(bundle, "leader.imbalance.per.broker.percentage", IMBALANCE_PERCENTAGE))
    interval_s = int(_setting(bundle, "leader.imbalance.check.interval.seconds", CHECK_INTERVAL_SECONDS))
    live = v.live_brokers
    out = _flapping_findings(bundle)
    for r in imbalance_since(h, percentage / 100):
        if r.since is None or r.broker not in live:
            continue  # balanced, or not registered: its absence is the finding (broker.session_expired)
        # above at the end of every bucket from `since` to the last: for longer than one check interval
        if (r.minute - r.since).total_seconds() <= interval_s:
            continue
        out.append(_finding(bundle, r, percentage, interval_s))
    return out


def _setting(bundle: Bundle, key: str, default: str) -> str:
    """The brokers' setting where their server.properties agree on it, else Kafka's default."""
    values = set(views(bundle).evidence.config(key, default).values())
    return values.pop() if len(values) == 1 else default


def _finding(bundle: Bundle, r: Any, percentage: float, interval_s: int) -> Finding:
    v = views(bundle)
    b = r.broker
    parts = v.partitions.where((F.col("replicas")[0] == b) & (F.col("leader") != b))
    deleting = v.delete_markers.select("topic")
    not_led = (
        parts.join(deleting, "topic", "left_anti")
        .agg(
            F.count_if(F.array_contains("isr", b)).alias("movable"),
            F.slice(
                F.sort_array(F.collect_list(F.struct("topic", "partition", "state_path", "state_mzxid"))),
                1,
                3,
            ).alias("some"),
        )
        .collect()[0]
    )
    queued = parts.join(deleting, "topic", "left_semi").agg(
        F.count("*").alias("n"), F.sort_array(F.collect_set("topic")).alias("topics")
    )
    left_out = queued.collect()[0]  # one row: the preferred partitions of topics queued for deletion
    moving = v.partitions.where((F.size("adding") > 0) | (F.size("removing") > 0)).count()
    why, refs = _why_not_corrected(bundle, r.since, moving, r.not_leading - not_led.movable)
    unknown = f" that {v.history_read} shows assigned (those before it are not known)"
    counted = "" if v.history_base[1] else unknown
    aside = ""
    if left_out.n:
        aside = (
            f"; {left_out.n} more it is the preferred leader for belong to topic(s) queued for deletion "
            f"({', '.join(left_out.topics[:3])}{', ...' if len(left_out.topics) > 3 else ''}), which the "
            "controller leaves out of both the ratio and the rebalance until the deletion completes"
        )
    return Finding(
        "leader.imbalance",
        WARNING,
        {"broker": b, "ratio": round(r.imbalance_ratio, 2), "threshold": percentage / 100},
        f"Broker {b} does not lead {r.not_leading} of the {r.preferred} partitions{counted} it is the "
        f"preferred leader for (imbalance {r.imbalance_ratio:.2f}, above "
        f"leader.imbalance.per.broker.percentage {percentage:g}) at every minute's end since "
        f"{r.since:%Y-%m-%d %H:%M} ZooKeeper time, longer than the controller's {interval_s} s rebalance "
        f"check; broker {b} is in the ISR of {not_led.movable or 'none'} of them"
        f"{', which a preferred election could move back' if not_led.movable else ''}; {why}{aside}.",
        tuple(first_refs([zk_ref(p.state_path, p.state_mzxid) for p in not_led.some], 3) + refs),
    )


def _why_not_corrected(bundle: Bundle, since: datetime, moving: int, stuck: int) -> tuple[str, list[str]]:
    """What the evidence says about the automatic rebalance since the imbalance began; `stuck`: the
    partitions not led by their preferred replica whose ISR lacks it, which no preferred election moves."""
    v = views(bundle)
    disabled = [
        b
        for b, x in v.evidence.config("auto.leader.rebalance.enable", "true").items()
        if x.strip() == "false"
    ]
    if disabled:
        return (
            "auto.leader.rebalance.enable is false in server.properties of broker(s) "
            + ", ".join(map(str, disabled)),
            [f"broker-{b}:server.properties" for b in disabled[:3]],
        )
    waits = behaviour.holds("auto_rebalance_waits_for_reassignments", v.evidence.kafka_version)
    if moving and waits is not False:
        return (
            f"{moving} partition(s) are being reassigned, and the controller skips the rebalance while "
            "any are" + ("" if waits else " (before Kafka 3.4; this bundle's version is not known)"),
            [],
        )
    out_of_isr = (
        f"; {stuck} of them cannot move: the rebalance elects a preferred replica only where it is "
        "alive and in the ISR (canPreferredReplicaBeLeader)"
        if stuck
        else ""
    )
    if not v.evidence.with_logs:
        return "the bundle has no broker logs to show whether the controller checked" + out_of_isr, []
    checks = (
        bundle.cluster_events.where(
            (F.col("event") == "leader_election.auto_rebalance") & (F.col("ts") >= F.lit(since))
        )
        .agg(
            F.count("*").alias("n"),
            F.max_by(F.struct("file", "line_no"), F.struct("ts", "file", "line_no")).alias("last"),
        )
        .collect()[0]
    )
    if checks.n:
        return (
            f"the controller logged {checks.n} automatic rebalance check(s) since then without moving them"
            + out_of_isr,
            [file_ref(checks.last.file, checks.last.line_no)],
        )
    return (
        "no broker's log holds an automatic rebalance check ('Processing automatic preferred replica "
        "leader election', INFO) since then, as the controller logs one each check while "
        "auto.leader.rebalance.enable is true" + out_of_isr,
        [],
    )


# -- ISR churn --------------------------------------------------------------------------------------
FLAPPING_DEPARTURES = 3  # a replica leaving its partition's ISR this often ...
FLAPPING_WINDOW_S = 600  # ... within this long (ZooKeeper's clock)


def isr_changes(bundle: Bundle) -> DataFrame | None:
    """Each replica leaving or joining a partition's ISR as ZooKeeper recorded it: topic, partition,
    broker, zxid, time, change ('left' or 'joined'). None without ZooKeeper's history."""
    changes = views(bundle).partition_changes
    if changes is None:
        return None
    w = Window.partitionBy("topic", "partition").orderBy("zxid")
    with_isr = changes.where(F.col("isr").isNotNull())
    d = with_isr.select(
        "topic", "partition", "zxid", "time", "isr", F.lag("isr").over(w).alias("before")
    ).where(F.col("before").isNotNull())
    return (
        d.select(
            "topic", "partition", "zxid", "time", F.explode(F.array_except("before", "isr")).alias("broker")
        )
        .withColumn("change", F.lit("left"))
        .unionByName(
            d.select(
                "topic",
                "partition",
                "zxid",
                "time",
                F.explode(F.array_except("isr", "before")).alias("broker"),
            ).withColumn("change", F.lit("joined"))
        )
    )


def isr_churn(bundle: Bundle, bucket: str = "1 minute") -> DataFrame | None:
    """Per bucket and broker, how many of its replicas left and joined an ISR: minute, broker, left,
    joined (only buckets with churn)."""
    changes = isr_changes(bundle)
    if changes is None:
        return None
    return (
        changes.groupBy(F.window("time", bucket)["start"].alias("minute"), "broker")
        .pivot("change", ["left", "joined"])
        .count()
        .na.fill(0, ["left", "joined"])
        .orderBy("minute", "broker")
    )


def flapping(bundle: Bundle) -> DataFrame | None:
    """Replicas that left their partition's ISR FLAPPING_DEPARTURES times or more within
    FLAPPING_WINDOW_S: topic, partition, broker, departures (the most in one window), first, last and
    the zxids of those departures."""
    changes = isr_changes(bundle)
    if changes is None:
        return None
    left = changes.where(F.col("change") == "left")
    w = (
        Window.partitionBy("topic", "partition", "broker")
        .orderBy(F.unix_seconds("time"))
        .rangeBetween(-FLAPPING_WINDOW_S, 0)
    )
    return (
        left.withColumn("in_window", F.count("*").over(w))
        .groupBy("topic", "partition", "broker")
        .agg(
            F.max("in_window").alias("departures"),
            F.min("time").alias("first"),
            F.max("time").alias("last"),
            F.slice(F.sort_array(F.collect_list("zxid")), 1, 10).alias("zxids"),
        )
        .where(F.col("departures") >= FLAPPING_DEPARTURES)
    )


def _flapping_findings(bundle: Bundle) -> list[Finding]:
    """One finding per broker whose replicas flapped, naming the partitions."""
    flaps = flapping(bundle)
    if flaps is None:
        return []
    rows = (
        flaps.groupBy("broker")
        .agg(
            F.count("*").alias("n"),
            F.max("departures").alias("most"),
            F.min("first").alias("first"),
            F.max("last").alias("last"),
            F.slice(F.sort_array(F.collect_list(F.struct("topic", "partition"))), 1, 60).alias("tps"),
            F.slice(F.sort_array(F.flatten(F.collect_list("zxids"))), 1, 5).alias("zxids"),
        )
        .orderBy("broker")
        .collect()
    )
    return [
        Finding(
            "isr.flapping",
            WARNING,
            {"broker": r.broker, "partitions": r.n},
            f"Broker {r.broker}'s replica left the ISR of {r.n} partition(s) ({tp_list(r.tps)}) up to "
            f"{r.most} times within {FLAPPING_WINDOW_S // 60} minutes, between {r.first:%Y-%m-%d %H:%M:%S} "
            f"and {r.last:%H:%M:%S} ZooKeeper time.",
            tuple(txn_ref(z) for z in r.zxids),
        )
        for r in rows
    ]


ANALYSIS = Analysis(
    "leader_balance",
    needs={Need.ZK_HISTORY: "how long an imbalance lasted, and which replicas flapped"},
    wants={Need.ZK_STATE: "which brokers are registered at the capture"},
    run=_run,
    reads=(
        "health",
        "partitions",
        "partition_changes",
        "delete_markers",
        "live_brokers",
        "history_base",
        "resumed_after",
    ),
    kinds=(
        Kind("leader.imbalance", (WARNING,), {"broker": int, "ratio": float, "threshold": float}),
        Kind("isr.flapping", (WARNING,), {"broker": int, "partitions": int}),
    ),
)
findings = ANALYSIS.findings
