"""ISR churn, from the one history's ISR changes (`history.partitions.isr_changes`: ZooKeeper's partition
states, else the states the lines print): each replica leaving or joining its partition's ISR per bucket and
broker, and the replicas that keep leaving (flapping; `analysis/balance.py` words them); and the brokers
alone in the ISR of what they lead at the capture."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pyspark.sql import DataFrame, Row, Window
from pyspark.sql import functions as F

from workbench.kafka.znodes import CONTROLLER
from workbench.model.history.partitions import isr_changes, told_to_lead
from workbench.model.reads import view
from workbench.model.views import views
from workbench.together import Ask, Joined, given, rows

if TYPE_CHECKING:
    from workbench.frames import Bundle

FLAPPING_DEPARTURES = 3  # a replica leaving its partition's ISR this often ...
FLAPPING_WINDOW_S = 600  # ... within this long (ZooKeeper's clock, or the lines' brokers')


def isr_churn(bundle: Bundle, bucket: str = "1 minute") -> DataFrame:
    """Per bucket and broker, how many of its replicas left and joined an ISR: minute, broker, left,
    joined (only buckets with churn)."""
    return (
        isr_changes(bundle)
        .groupBy(F.window("time", bucket)["start"].alias("minute"), "broker")
        .pivot("change", ["left", "joined"])
        .count()
        .na.fill(0, ["left", "joined"])
        .orderBy("minute", "broker")
    )


def flapping(bundle: Bundle) -> DataFrame:
    """Replicas that left their partition's ISR FLAPPING_DEPARTURES times or more within
    FLAPPING_WINDOW_S: topic, partition, broker, departures (the most in one window), first, last, and
    what told the first ten departures (`told`: time, and the txn's zxid or the line's file and line_no;
    a line's time is on its broker's clock)."""
    left = isr_changes(bundle).where(F.col("change") == "left")
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
            F.slice(F.sort_array(F.collect_list(F.struct("time", "zxid", "file", "line_no"))), 1, 10).alias(
                "told"
            ),
        )
        .where(F.col("departures") >= FLAPPING_DEPARTURES)
    )


@dataclass(frozen=True)
class OnlyInSync:
    """A registered broker that is, at the capture, the only in-sync replica (and the leader) of
    partitions with other replicas: `partitions` how many, `tps` the first by name, `controller` whether
    it is the controller too."""

    broker: int
    partitions: int
    tps: list[tuple[str, int]]
    controller: bool
    refusing: int = 0  # of them, those it refuses to lead at the capture (`acting`: nobody serves them)


def only_in_sync(bundle: Bundle) -> Ask[list[OnlyInSync]]:
    """From ZooKeeper's tree at the capture (its partitions and its controller): the registered
    brokers leading
    partitions whose ISR is themselves alone, though the partitions have other replicas. Topics queued for
    deletion are left out: they are going, and a controlled shutdown leaves them alone too."""
    v = views(bundle)
    live = sorted(v.live_brokers)
    if not live:
        return given([])
    leader = F.col("leader")
    alone = v.partitions.where(
        (F.size("replicas") > 1)
        & (F.size("isr") == 1)
        & (F.element_at("isr", 1) == leader)
        & leader.isin(live)
    ).join(v.delete_markers.select("topic"), "topic", "left_anti")
    # whether its leader refused it the last time it was told to lead it (`history.partitions`)
    told = told_to_lead(bundle).withColumnRenamed("broker", "leader")
    alone = alone.join(told, ["topic", "partition", "leader"], "left")
    per_broker = (
        alone.groupBy(leader.alias("broker"))
        .agg(
            F.count("*").alias("n"),
            F.count_if(F.coalesce("refused", F.lit(False))).alias("refusing"),
            F.slice(F.sort_array(F.collect_list(F.struct("topic", "partition"))), 1, 60).alias("tps"),
        )
        .orderBy("broker")  # a row per broker
    )
    # who is controller now: it moves too if that broker stops
    said = bundle.znodes.where(F.col("path") == CONTROLLER).select(
        F.get_json_object("data", "$.brokerid").cast("int").alias("controller")
    )
    return Joined(_only_in_sync, rows(per_broker), rows(said))


def _only_in_sync(per_broker: list[Row], said: list[Row]) -> list[OnlyInSync]:
    controller = said[0].controller if said else None
    return [
        OnlyInSync(r.broker, r.n, [(t.topic, t.partition) for t in r.tps], r.broker == controller, r.refusing)
        for r in per_broker
    ]


# A replica the leader drops, as its 'Shrinking ISR' line prints it (from 2.2,
# `shrink_line_prints_high_watermark`): its id, its end offset and, from 3.6, its lastCaughtUpTimeMs
# (`shrink_line_prints_last_caught_up`)
DROPPED = r"\(brokerId: (-?\d+), endOffset: (-?\d+|unknown)(?:, lastCaughtUpTimeMs: (-?\d+|unknown))?\)"
QUARTER_HOUR_MS = 15 * 60_000  # every time zone's offset is a whole number of them


@view
def held_high_watermarks(bundle: Bundle) -> DataFrame:
    """Each replica a leader dropped from the ISR while it held the partition's high watermark
    (`acks_all_answered_at_the_high_watermark`): the leader's 'Shrinking ISR' line prints the high
    watermark at that replica's end offset, short of the leader's own. topic, partition, leader, broker
    (the follower), ts, file, line_no (the leader's line, on its clock), high_watermark, records (the
    leader's end offset less it), waited_ms: since the follower last caught up, from 3.6 (the line's time
    less its lastCaughtUpTimeMs; the time the line is printed in is the broker's zone, an offset of whole
    quarter hours away from the epoch's, and the wait far less: a replica is dropped within half of
    replica.lag.time.max.ms of falling behind it), else null."""
    a = F.col("attrs")
    ids = F.regexp_extract_all(a["out_of_sync"], F.lit(DROPPED), F.lit(1))
    lines = bundle.cluster_events.where(
        (F.col("event") == "isr.shrink") & a["high_watermark"].isNotNull() & a["out_of_sync"].isNotNull()
    ).select(
        "topic",
        "partition",
        F.col("broker_id").alias("leader"),
        "ts",
        "file",
        "line_no",
        a["high_watermark"].try_cast("long").alias("high_watermark"),
        a["end_offset"].try_cast("long").alias("leader_end"),
        F.regexp_extract_all(a["out_of_sync"], F.lit(DROPPED), F.lit(2)).alias("ends"),
        F.regexp_extract_all(a["out_of_sync"], F.lit(DROPPED), F.lit(3)).alias("caught_up"),
        F.posexplode(ids).alias("i", "broker"),
    )
    at = F.col("i") + 1
    since = F.unix_millis("ts") - F.element_at("caught_up", at).try_cast("long")
    zone = F.round(since / QUARTER_HOUR_MS) * QUARTER_HOUR_MS
    return lines.select(
        "topic",
        "partition",
        "leader",
        F.col("broker").try_cast("int").alias("broker"),
        "ts",
        "file",
        "line_no",
        "high_watermark",
        (F.col("leader_end") - F.col("high_watermark")).alias("records"),
        (since - zone).cast("long").alias("waited_ms"),
        F.element_at("ends", at).try_cast("long").alias("end_offset"),
    ).where((F.col("end_offset") == F.col("high_watermark")) & (F.col("records") > 0))
