"""The cluster's health over time, as its ZooKeeper held it: per minute (or any bucket) the offline and
under-replicated partitions, the partitions under their min.insync.replicas, and per broker the partitions
it leads and the controller's leader imbalance. A view the analyses declare (`Analysis.reads`: health,
leaderless, leader_balance) and the report's figures read.

Exact from ZooKeeper's history: every partition's state, assignment, deletion marker and its leader's
registration are followed txn by txn (zxid order, so the brokers' clocks play no part), and each counts
the way Kafka counts it (`partition_history`):

- offline: no leader (-1), or a leader that is not registered (KafkaController's OfflinePartitionsCount),
  the topics whose deletion the controller had begun left out as it leaves them out (before 2.3 every
  topic queued: `deletions_started`);
- no acting leader: a registered leader that refused the LeaderAndIsr making it leader and has not led
  since, or one that went silent (crashed, hung, cut off) before ZooKeeper expired its session, from
  when the expiry proves it (`acting`): nobody serves the partition, though ZooKeeper and Kafka's own
  counts look healthy;
- under-replicated: an acting leader with fewer replicas in the ISR than the replicas less those being
  added (Partition.isUnderReplicated, 2.4+), whatever its topic's deletion (the leader's
  UnderReplicatedPartitions); under min ISR: fewer than min.insync.replicas;
- leaders: per broker, the partitions it leads, every topic's;
- imbalance: per broker, the partitions whose first replica it is, and those of them whose leader is not
  it, over them, topics queued for deletion left out (KafkaController.checkAndTriggerAutoLeaderRebalance,
  2.5.1-3.6.2).

Each partition's contribution changes only at its own txns, so the series is summed from +1/-1 changes:
nothing per partition and per minute is ever made, and only the per-minute counts leave Spark.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from workbench.model.history.brokers import offline_windows as offline_windows  # the notebooks' name
from workbench.model.partition_history import WHOLE_CLUSTER, min_isr, stretches
from workbench.model.reads import declare
from workbench.model.service import outages, served
from workbench.model.views import views
from workbench.spark import kept

if TYPE_CHECKING:
    from workbench.frames import Bundle

CLUSTER_COUNTS = ("offline", "no_acting_leader", "under_replicated", "under_min_isr")
PEAKED = CLUSTER_COUNTS[:3]  # the counts whose peak within a bucket is kept
BROKER_COUNTS = ("leaders", "preferred", "not_leading")


@dataclass
class Health:
    """`minutes`: bucket start, then each cluster count at the bucket's end and, for offline, no acting
    leader and under-replicated, its peak within the bucket (under_min_isr is null where
    min.insync.replicas is not known). `brokers`: bucket, broker, leaders, preferred, not_leading and
    imbalance_ratio at its end. `partitions`: one row per partition and change (zxid, time, leader, isr,
    replicas, refused_by, counted_as ...), the detail the findings and a notebook's drill-down read as
    ZooKeeper shows it; `served`: those rows with the stretches ZooKeeper does not show, its leaders silent
    (`service.counted`), that the counts read; `outages`: each stretch nobody served a partition
    (`service.outages`)."""

    minutes: DataFrame
    brokers: DataFrame
    partitions: DataFrame
    served: DataFrame
    outages: DataFrame
    bucket: str
    last: datetime  # the last bucket's start (the capture's)


def health(bundle: Bundle, bucket: str = "1 minute") -> Health | None:
    """The health series from ZooKeeper's history; None without it (a series from the brokers' logs would
    be a guess at what the controller saw). Made once per bundle and bucket (`views.memo`); the series
    is computed once (`kept`)."""
    bucket_ms = _bucket_ms(bucket)
    return views(bundle).memo(("health", bucket), lambda: _health(bundle, bucket, bucket_ms), "health")


declare(health)  # a view the analyses read (`Analysis.reads`), built per bucket; the runner builds 1 minute


def _health(bundle: Bundle, bucket: str, bucket_ms: int) -> Health | None:
    v = views(bundle)
    changes, span = v.partition_changes, v.history_span
    if changes is None or span is None:
        return None
    ended = max(v.evidence.captured_ms or 0, _ms(span.ended))
    rows, stretches = served(bundle), outages(bundle)
    assert rows is not None and stretches is not None  # the history held
    counts = _deltas(rows)
    series = kept(_series(counts, _ms(span.began) // bucket_ms, ended // bucket_ms, bucket_ms))
    cluster = series.where(F.col("broker") == WHOLE_CLUSTER)
    minutes = (
        cluster.groupBy("minute")
        .pivot("count", list(CLUSTER_COUNTS))
        .agg(F.first("value").alias("v"), F.first("peak").alias("peak"))
    )
    minutes = minutes.select(
        "minute",
        *[F.coalesce(F.col(f"{c}_v"), F.lit(0)).alias(c) for c in PEAKED],
        *[F.coalesce(F.col(f"{c}_peak"), F.lit(0)).alias(f"{c}_peak") for c in PEAKED],
        F.when(F.lit(min_isr(bundle)[1] is not None), F.coalesce(F.col("under_min_isr_v"), F.lit(0))).alias(
            "under_min_isr"
        ),
    ).orderBy("minute")
    per_broker = (
        series.where(F.col("broker") != WHOLE_CLUSTER)
        .groupBy("minute", "broker")
        .pivot("count", list(BROKER_COUNTS))
        .agg(F.first("value"))
        .na.fill(0, list(BROKER_COUNTS))
        .withColumn(
            "imbalance_ratio",
            F.when(F.col("preferred") > 0, F.col("not_leading") / F.col("preferred")).otherwise(F.lit(0.0)),
        )
        .orderBy("minute", "broker")
    )
    last = datetime.fromtimestamp(ended // bucket_ms * bucket_ms / 1000, tz=timezone.utc)
    return Health(minutes, per_broker, changes, rows, stretches, bucket, last)


def _bucket_ms(bucket: str) -> int:
    amount, _, unit = bucket.strip().partition(" ")
    ms = {"second": 1_000, "minute": 60_000, "hour": 3_600_000}.get(unit.rstrip("s"))
    if not amount.isdigit() or ms is None or int(amount) <= 0:
        raise ValueError(
            f"bucket {bucket!r}: expected a count and a unit, such as '1 minute' or '10 seconds'"
        )
    return int(amount) * ms


def _deltas(changes: DataFrame) -> DataFrame:
    """+1/-1 per count and broker at each txn that moved it: count, broker, zxid, time, delta."""
    w = Window.partitionBy("topic", "partition").orderBy("zxid", "time")
    none = F.filter("counted_as", lambda x: F.lit(False))
    prev = F.coalesce(F.lag("counted_as").over(w), none)
    d = changes.select(
        "zxid",
        "time",
        F.array_except("counted_as", prev).alias("up"),
        F.array_except(prev, "counted_as").alias("down"),
    )
    moved = d.select("zxid", "time", F.explode("up").alias("k"), F.lit(1).alias("delta")).unionByName(
        d.select("zxid", "time", F.explode("down").alias("k"), F.lit(-1).alias("delta"))
    )
    return (
        moved.groupBy(F.col("k.count").alias("count"), F.col("k.broker").alias("broker"), "zxid", "time")
        .agg(F.sum("delta").alias("delta"))
        .where(F.col("delta") != 0)
    )


def _series(deltas: DataFrame, first: int, last: int, bucket_ms: int) -> DataFrame:
    """Each count per bucket: value at its end (the changes of txns stamped in it or before) and peak
    (the highest the count reached after a txn stamped in it, in zxid order, or the value it began with).
    Buckets from `first` to `last` (bucket numbers), txns before the first counted in the first."""
    at = F.floor(F.unix_millis("time") / bucket_ms).cast("long")
    level = F.sum("delta").over(
        Window.partitionBy("count", "broker")
        .orderBy("zxid", "time")
        .rowsBetween(Window.unboundedPreceding, 0)
    )
    per_bucket = (
        deltas.select(
            "count",
            "broker",
            F.greatest(F.coalesce(at, F.lit(first)), F.lit(first)).alias("b"),
            "delta",
            level.alias("level"),
        )
        .groupBy("count", "broker", "b")
        .agg(F.sum("delta").alias("moved"), F.max("level").alias("top"))
    )
    spark = deltas.sparkSession
    always = spark.createDataFrame([(c, WHOLE_CLUSTER) for c in CLUSTER_COUNTS], "count string, broker int")
    grid = (
        spark.range(first, last + 1)
        .withColumnRenamed("id", "b")
        .crossJoin(deltas.select("count", "broker").unionByName(always).distinct())
        .join(per_bucket, ["count", "broker", "b"], "left")
    )
    moved = F.coalesce(F.col("moved"), F.lit(0))
    value = F.sum(moved).over(Window.partitionBy("count", "broker").orderBy("b")).cast("int")
    return grid.select(
        "count",
        "broker",
        F.timestamp_millis(F.col("b") * bucket_ms).alias("minute"),
        value.alias("value"),
        F.greatest(value - moved, F.coalesce(F.col("top"), value - moved)).cast("int").alias("peak"),
    )


def _ms(t: Any) -> int:
    return int(t.timestamp() * 1000) if t is not None else 0


def episodes(changes: DataFrame, count: str, captured: Any) -> DataFrame:
    """Each stretch a partition spent counted as `count` (offline, under_replicated, ...): topic,
    partition, began/began_zxid, ended/ended_zxid (null: still at the capture), lasted_ms (to the capture
    when still), and at its start the leader, whether it was registered, and the replicas out of the ISR."""
    marked = stretches(changes, F.exists("counted_as", lambda x: x["count"] == count))
    out_of_isr = F.sort_array(
        F.array_except(F.array_except("replicas", "adding"), F.coalesce("isr", F.array()))
    )
    ended_at = F.coalesce(F.col("ended"), F.lit(captured).cast("timestamp"))
    return (
        marked.groupBy("topic", "partition", "stretch")
        .agg(
            F.min_by(
                F.struct(
                    "zxid",
                    "time",
                    "leader",
                    "leader_epoch",
                    "registered",
                    "refused_by",
                    "first_seen",
                    out_of_isr.alias("out"),
                ),
                "zxid",
            ).alias("s"),
            F.max_by(F.struct("next_zxid", "next_time"), "zxid").alias("e"),
        )
        .select(
            "topic",
            "partition",
            F.col("s.zxid").alias("began_zxid"),
            F.col("s.time").alias("began"),
            F.col("e.next_zxid").alias("ended_zxid"),
            F.col("e.next_time").alias("ended"),
            F.col("s.leader").alias("leader"),
            F.col("s.leader_epoch").alias("leader_epoch"),
            F.col("s.registered").alias("registered"),
            F.col("s.refused_by").alias("refused_by"),
            F.col("s.out").alias("out_of_isr"),
            F.col("s.first_seen").alias("first_seen"),
        )
        .withColumn("lasted_ms", F.unix_millis(ended_at) - F.unix_millis("began"))
    )


def leaderless_windows(h: Health, captured: Any) -> DataFrame:
    """When partitions had no acting leader, for a plot: one row per stretch shared by the partitions that
    began and ended it together (`service.outages`: count, as it began, offline or no_acting_leader;
    began, ended: the capture when still; partitions). A broker's death takes many partitions at one
    txn, so the rows stay few."""
    return h.outages.groupBy(
        "count", "began", F.coalesce("ended", F.lit(captured).cast("timestamp")).alias("ended")
    ).agg(F.count("*").alias("partitions"))


def captured_at(bundle: Bundle) -> datetime | None:
    ms = views(bundle).as_of_ms
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc) if ms is not None else None


def grouped(ep: DataFrame, keys: list[str], *extra: Column) -> DataFrame:
    """Episodes grouped, a row a group in order of their beginning, then of their keys (groups that began
    together in one order whatever the plan): how many partitions, the longest, how many still at the
    capture (`ended` null), the first partitions by name (a finding's list, never every row), the txns
    that began and ended the longest (null where lines, not txns, tell them), and the `extra` aggregates
    asked for."""
    return (
        ep.groupBy(*keys)
        .agg(
            *extra,
            F.count("*").alias("n"),
            F.max("lasted_ms").alias("longest"),
            F.count_if(F.col("ended").isNull()).alias("still"),
            F.slice(F.sort_array(F.collect_list(F.struct("topic", "partition"))), 1, 60).alias("tps"),
            F.min("began").alias("began"),
            # the longest; of those as long, the last to end (still: last of all), then the first to
            # begin: one episode whatever order the plan left them in
            F.max_by(
                F.struct("began_zxid", "ended_zxid"),
                F.struct("lasted_ms", F.coalesce("ended_zxid", F.lit(2**62)), -F.col("began_zxid")),
            ).alias("worst"),
        )
        .orderBy("began", *keys)
    )
