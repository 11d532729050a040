"""Who actually leads: the changes at which a partition's leader in ZooKeeper was not acting as its leader.

ZooKeeper's partition state names the leader the controller chose; the broker becomes it only by accepting
the LeaderAndIsr (Partition.makeLeader logs "... starts at leader epoch E"). A broker that refuses it for
its topic id keeps its old role, and the controller does not react to that error (behaviour facts
`refused_leader_and_isr_keeps_role`, `controller_acts_only_on_storage_errors`): ZooKeeper and the
controller's OfflinePartitionsCount look healthy while nobody serves the partition, and no leader counts it
under-replicated (`under_replicated_signals`).

Per partition, a leadership is the run of changes with one leader and one registration of it (a restart
starts a new one). Within it, the leader is not acting from the change whose LeaderAndIsr it refused until
it logs that it starts at a leader epoch of that run: a leader that took an earlier epoch of the run keeps
leading at that epoch (refusing a later one fences its followers and its ISR writes, but it still serves).
A refusal is tied to the changes around it on ZooKeeper's clock, the broker's skew removed where known.

A leader that went silent (it crashed, stood still, or was cut off) is not acting either, from the moment
its session's expiry proves it silent until the expiry, while ZooKeeper still names it (`silent_leaders`);
the health counts read both (`service.counted`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from workbench.model.outage import registration_outages
from workbench.model.refs import file_ref_col
from workbench.model.session_ends import SILENT_ENDINGS, ended_registrations
from workbench.model.skew import skew_col, skew_ms
from workbench.model.views import views

if TYPE_CHECKING:
    from workbench.frames import Bundle

# How far a refusal may lie from the change it answers, on ZooKeeper's clock: the request follows the
# write by milliseconds; the rest is what is left of the broker's clock error.
SLACK_MS = 2_000
SLACK_UNALIGNED_MS = 10_000  # the broker's skew is not known: its own clock, a wider margin
REFUSALS = ("topic_id.mismatch",)  # the LeaderAndIsr errors a broker logs with its partition


def refusals(bundle: Bundle, skews: dict[int, int]) -> DataFrame:
    """broker, topic, partition, at_ms (ZooKeeper's clock where the skew is known), slack_ms, error, ref:
    each LeaderAndIsr a broker refused for a partition, as its log says."""
    ev = bundle.cluster_events.where(F.col("event").isin(*REFUSALS) & F.col("partition").isNotNull())
    skew = skew_col(skews)
    return ev.select(
        F.col("broker_id").alias("broker"),
        "topic",
        "partition",
        (F.unix_millis("ts") - F.coalesce(skew, F.lit(0))).alias("at_ms"),
        F.when(skew.isNull(), SLACK_UNALIGNED_MS).otherwise(SLACK_MS).alias("slack_ms"),
        F.lit("INCONSISTENT_TOPIC_ID").alias("error"),
        file_ref_col("file", "line_no").alias("ref"),
    )


def acceptances(bundle: Bundle, skews: dict[int, int]) -> DataFrame:
    """broker, topic, partition, leader_epoch, at_ms, ref: each time a broker started leading at an epoch."""
    ev = bundle.cluster_events.where(
        (F.col("event") == "partition.became_leader") & F.col("partition").isNotNull()
    )
    return ev.select(
        F.col("broker_id").alias("broker"),
        "topic",
        "partition",
        F.col("attrs")["leader_epoch"].try_cast("int").alias("leader_epoch"),
        (F.unix_millis("ts") - F.coalesce(skew_col(skews), F.lit(0))).alias("at_ms"),
        file_ref_col("file", "line_no").alias("ref"),
    )


def mark(bundle: Bundle, rows: DataFrame, skews: dict[int, int], known_base: bool) -> DataFrame:
    """`rows` (partition_changes before counting: topic, partition, zxid, time, seq, leader, leader_epoch,
    registered ...; in the order of zxid, time and seq) with `refused_by` (the refusal line's ref) and
    `refused_at` (its time) on each change at which the leader named had refused to lead and had not led
    since the leadership began; null elsewhere. `known_base`: the history read starts from a known tree
    (else a partition's first change begins where nothing is known of it)."""
    refused_lines = refusals(bundle, skews)
    if refused_lines.isEmpty():  # no broker refused: nothing to flag, and no joins for Spark to plan (1.4 s)
        return rows.withColumns(
            {"refused_by": F.lit(None).cast("string"), "refused_at": F.lit(None).cast("timestamp")}
        )
    w = Window.partitionBy("topic", "partition").orderBy("zxid", "time", "seq")
    # a new leader, or the same one registered again (a restart); a registration that only becomes
    # known (after a gap) is the same leadership
    new_leadership = (
        F.lag("leader").over(w).isNull()
        | (F.lag("leader").over(w) != F.col("leader"))
        | (F.coalesce("registered", F.lit(False)) & ~F.coalesce(F.lag("registered").over(w), F.lit(True)))
    )
    runs = rows.select(
        "*",
        F.row_number().over(w).alias("_k"),  # the change's place: zxids alone do not order the lines' rows
        F.lead("time").over(w).alias("_next_time"),
        F.sum(new_leadership.cast("int")).over(w).alias("_leadership"),
        F.lag("leader").over(w).isNull().alias("_first"),  # its state not seen before this change
    )
    at = F.unix_millis("c.time")
    until = F.coalesce(F.unix_millis("c._next_time"), F.lit(2**62))
    c, r, a = runs.alias("c"), refused_lines.alias("r"), acceptances(bundle, skews).alias("a")

    def on(x: str) -> Column:
        return (
            (F.col("c.topic") == F.col(f"{x}.topic"))
            & (F.col("c.partition") == F.col(f"{x}.partition"))
            & (F.col("c.leader") == F.col(f"{x}.broker"))
        )

    near = (F.col("r.at_ms") >= at - F.col("r.slack_ms")) & (F.col("r.at_ms") < until + F.col("r.slack_ms"))
    # the refusal answering this change: the first after it, else the nearest before (the clocks differ)
    rank = F.struct((F.col("r.at_ms") < at).alias("before"), F.abs(F.col("r.at_ms") - at).alias("d"))
    refused = (
        c.join(r, on("r") & near)
        .groupBy("c.topic", "c.partition", "c._k")
        .agg(F.min_by(F.struct("r.ref", "r.at_ms"), rank).alias("_refusal"))
    )
    accepted = (
        c.join(
            a,
            on("a")
            & (F.col("a.leader_epoch") == F.col("c.leader_epoch"))
            & (F.col("a.at_ms") >= at - SLACK_UNALIGNED_MS),
        )
        .groupBy("c.topic", "c.partition", "c._k")
        .agg(F.lit(True).alias("_accepted"))
    )
    in_run = Window.partitionBy("topic", "partition", "_leadership").orderBy("_k")
    so_far = in_run.rowsBetween(Window.unboundedPreceding, 0)
    flagged = (
        runs.join(refused, ["topic", "partition", "_k"], "left")
        .join(accepted, ["topic", "partition", "_k"], "left")
        .select(
            "*",
            F.max(F.coalesce("_accepted", F.lit(False))).over(so_far).alias("_led"),
            F.first("_refusal", ignorenulls=True).over(so_far).alias("_refused"),
        )
    )
    # A leadership already under way where the history read begins (the tree it starts from, or no tree
    # at all) may have been taken before: whether its leader led is not known, so it is never flagged.
    began = F.first(F.struct("time", "_first")).over(so_far)
    unknown = began["time"].isNull() | (began["_first"] & F.lit(not known_base))
    serving = (F.col("leader") >= 0) & F.coalesce("registered", F.lit(False))
    flag = serving & ~F.col("_led") & F.col("_refused").isNotNull() & ~unknown
    return flagged.select(
        *rows.columns,
        F.when(flag, F.col("_refused.ref")).alias("refused_by"),
        F.when(flag, F.timestamp_millis("_refused.at_ms")).alias("refused_at"),
    )


def silent_leaders(bundle: Bundle) -> DataFrame | None:
    """broker, since (ZooKeeper's clock), since_zxid (the last txn at or before it), until_zxid (the end of
    its registration): each registration whose broker went silent before ZooKeeper expired its session,
    from the moment the evidence proves it silent (the outage's lower bound, as its finding gives it,
    `outage.outages`: the latest `behaviour.went_silent` allows from the expiry, its own client's time-out
    line or the controller's first failed send to it tightening it), or from its halt line where it
    halted for failed log dirs (an exact moment, `halted_broker_leaves_its_session_to_expire`): its
    leaderships had no acting leader from then, though ZooKeeper named it until the expiry. None when
    there is none (or no ZooKeeper history). Made once per bundle (the health series and every `state_at`
    read it)."""
    return views(bundle).memo("silent_leaders", lambda: _silent_leaders(bundle))


def _silent_leaders(bundle: Bundle) -> DataFrame | None:
    v = views(bundle)
    regs = [r for r in ended_registrations(bundle) if r.how in SILENT_ENDINGS]
    if not regs:
        return None
    skews = skew_ms(bundle)
    bounded = registration_outages(bundle)  # silent from the outage's lower bound, as its finding gives it
    rows = []
    for r in regs:
        ended = round(r.ended.timestamp() * 1000)
        o = bounded.get(r.session_id)
        if r.halted_at is not None:  # it stopped at its halt line (its clock; by the expiry at the latest)
            halted = round(r.halted_at.timestamp() * 1000) - skews.get(r.broker_id, 0)
            rows.append((r.broker_id, min(halted, ended), r.ended_zxid))
        elif o is not None and o.timeout_ms is not None:
            rows.append((r.broker_id, ended - o.lower_ms, r.ended_zxid))
    if not rows:
        return None
    windows = bundle.spark.createDataFrame(rows, "broker int, since_ms long, until_zxid long")
    txns = v.history.select("zxid", F.unix_millis("time").alias("t"))
    return (
        windows.join(txns, F.col("t") <= F.col("since_ms"), "left")
        .groupBy("broker", "since_ms", "until_zxid")
        .agg(F.max("zxid").alias("since_zxid"))
        .select("broker", F.timestamp_millis("since_ms").alias("since"), "since_zxid", "until_zxid")
    )
