"""Stretches nobody served a partition, from the controller's and brokers' lines alone (where ZooKeeper's
history is absent; with it, `service.py` tells them): the controller left it without a leader
(`leaderless`), or named a leader that refused the LeaderAndIsr (`refused_leaders`). A refusing broker
keeps its old role (behaviour `refused_leader_and_isr_keeps_role`), so nobody serves the partition until a
broker logs that it starts leading it ("... starts at leader epoch E").

From 2.8 (the first release with topic ids, so with refusals) the controller writes every partition state
it sets at INFO (`Changed partition t-0 from OnlinePartition to OnlinePartition with state
LeaderAndIsr(leader=2, ...)`, PartitionStateMachine 2.8.2:244, 3.6.2:248), a preferred or controlled
shutdown's election too: the leader it named is in its lines.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from pyspark.sql import Column, DataFrame, Row, Window
from pyspark.sql import functions as F

from workbench.model.acting import SLACK_UNALIGNED_MS, acceptances, refusals
from workbench.model.deletion_log import deleting
from workbench.model.partition_log import CONTROLLER_LINES, LINE, logged_states
from workbench.model.refs import file_ref
from workbench.model.views import views
from workbench.together import Ask, given

if TYPE_CHECKING:
    from workbench.frames import Bundle


def _marked(bundle: Bundle) -> tuple[DataFrame, Column, Column]:
    """The controller's lines of each partition's state, and the columns that say a line leaves it
    without a leader (`off`) or names one (`on`)."""
    s = logged_states(bundle).where(F.col("event").isin(*CONTROLLER_LINES))
    off = (
        (F.col("leader") == -1)
        | (F.col("to_state") == "OfflinePartition")
        | ((F.col("event") == "partition.state_change_failed") & (F.col("to_state") == "OnlinePartition"))
    )
    on = (F.col("leader") >= 0) & (F.col("event") != "partition.state_change_failed")
    return s, off, on


@dataclass(frozen=True)
class Leaderless:
    """A stretch in which the controller's lines left a partition without a leader: from the first line
    saying so (leader -1, a failed election, OfflinePartition; None: its start is not in the lines, only
    the election that ended it, from OfflinePartition) to the next naming a leader (None: none did before
    the lines end), with the leader it had before (None: no line named one) and the one that line names,
    and whether that line's ISR is its leader alone (None: it prints no ISR)."""

    topic: str
    partition: int
    began: datetime | None
    began_ref: str | None
    ended: datetime | None
    ended_ref: str | None
    lost: int | None
    leader: int | None = None
    # the leader named refused the partition (its own line; its clock), and the partition was led again
    # (a broker's "starts at leader epoch" line after the refusal; None: not before the lines end)
    refused: datetime | None = None
    refused_ref: str | None = None
    led_again: datetime | None = None
    led_again_ref: str | None = None
    alone: bool | None = None


def leaderless(bundle: Bundle, limit: int) -> Ask[tuple[list[Leaderless], int]]:
    """The first `limit` stretches without a leader (by start, or end where the start is not logged), and
    how many there are; none without the brokers' logs."""
    if not views(bundle).evidence.with_logs:
        return given(([], 0))
    s, off, on = _marked(bundle)
    w = Window.partitionBy("topic", "partition").orderBy("ts", "line_no")
    before = w.rowsBetween(Window.unboundedPreceding, -1)
    line = F.struct("ts", "file", "line_no")
    # a line naming a leader, with the leader and whether the ISR it prints is that leader alone
    alone = F.when(F.col("isr").isNotNull(), F.col("isr") == F.array("leader")).alias("alone")
    named = F.struct("ts", "file", "line_no", "leader", alone)
    marked = s.select(
        "topic",
        "partition",
        line.alias("line"),
        named.alias("named"),
        off.alias("off"),
        (on & (F.col("from_state") == "OfflinePartition")).alias("elected_from_offline"),
        F.min(F.when(on, named)).over(w.rowsBetween(1, Window.unboundedFollowing)).alias("next_on"),
        F.last(F.when(on, F.col("leader")), ignorenulls=True).over(before).alias("lost"),
        F.last(F.when(on, F.lit(False)).when(off, F.lit(True)), ignorenulls=True)
        .over(before)
        .alias("after_off"),
    )
    gone = deleting(bundle)  # a topic under deletion goes offline on purpose
    purposed = (
        (gone["topic"] == marked["topic"])
        & (F.col("line.ts") >= gone["from_ts"])
        & (gone["to_ts"].isNull() | (F.col("line.ts") <= gone["to_ts"]))
    )
    marked = marked.join(gone, purposed, "left_anti")
    logged = (
        marked.where("off")
        .groupBy("topic", "partition", "next_on")
        .agg(F.min_by(F.struct(F.col("line").alias("first"), "lost"), "line").alias("b"))
        .select(
            "topic", "partition", F.col("b.first").alias("first"), "next_on", F.col("b.lost").alias("lost")
        )
    )
    unlogged = marked.where(F.col("elected_from_offline") & ~F.coalesce("after_off", F.lit(False))).select(
        "topic",
        "partition",
        F.lit(None).cast(LINE).alias("first"),
        F.col("named").alias("next_on"),
        "lost",
    )
    rows = (
        _refused(bundle, logged.unionByName(unlogged))
        .withColumn("n", F.count("*").over(Window.partitionBy(F.lit(0))))
        .orderBy(F.coalesce("first.ts", "next_on.ts"), "topic", "partition")
        .limit(limit)  # at most `limit` stretches
    )
    return Ask(rows, _leaderless)


def _leaderless(rows: list[Row]) -> tuple[list[Leaderless], int]:
    total = rows[0].n if rows else 0
    return [
        Leaderless(
            r.topic,
            r.partition,
            r.first.ts if r.first else None,
            file_ref(r.first.file, r.first.line_no) if r.first else None,
            r.next_on.ts if r.next_on else None,
            file_ref(r.next_on.file, r.next_on.line_no) if r.next_on else None,
            r.lost,
            r.next_on.leader if r.next_on else None,
            r.refusal.ts if r.refusal else None,
            r.refusal.ref if r.refusal else None,
            r.again.ts if r.again else None,
            r.again.ref if r.again else None,
            r.next_on.alone if r.next_on else None,
        )
        for r in rows
    ], total


def _refused(bundle: Bundle, stretches: DataFrame) -> DataFrame:
    """The stretches with `refusal` (ts, ref: the leader the ending line names refused the partition,
    its line within the unaligned clocks' slack of the election) and `again` (ts, ref: the first broker
    to start leading it after that refusal). The refusing broker keeps its old role, so nobody serves the
    partition until then (behaviour `refused_leader_and_isr_keeps_role`)."""
    r = refusals(bundle, {})
    a = acceptances(bundle, {})
    s = stretches.alias("s")
    at = F.unix_millis("s.next_on.ts")
    said = (
        (F.col("s.topic") == F.col("r.topic"))
        & (F.col("s.partition") == F.col("r.partition"))
        & (F.col("s.next_on.leader") == F.col("r.broker"))
        & (F.abs(F.col("r.at_ms") - at) <= SLACK_UNALIGNED_MS)
    )
    # the refusal of this election: the first logged after it, else the nearest before (the clocks differ)
    rank = F.struct((F.col("r.at_ms") < at).alias("before"), F.abs(F.col("r.at_ms") - at).alias("d"))
    refused = s.join(r.alias("r"), said, "left").select(
        "s.*",
        F.when(F.col("r.ref").isNotNull(), F.struct("r.at_ms", "r.ref")).alias("rf"),
        F.when(F.col("r.ref").isNotNull(), rank).alias("rank"),
    )
    keys = stretches.columns
    first_refusal = refused.groupBy(*keys).agg(F.min_by("rf", "rank").alias("rf"))
    after = (
        (F.col("x.topic") == F.col("a.topic"))
        & (F.col("x.partition") == F.col("a.partition"))
        & (F.col("a.at_ms") > F.col("x.rf.at_ms"))
    )
    led = (
        first_refusal.alias("x")
        .join(a.alias("a"), after, "left")
        .groupBy(*[F.col(f"x.{k}").alias(k) for k in keys], F.col("x.rf").alias("rf"))
        .agg(F.min(F.when(F.col("a.at_ms").isNotNull(), F.struct("a.at_ms", "a.ref"))).alias("ag"))
    )
    return led.select(
        *keys,
        F.when(F.col("rf").isNotNull(), F.struct(F.timestamp_millis("rf.at_ms").alias("ts"), "rf.ref")).alias(
            "refusal"
        ),
        F.when(F.col("ag").isNotNull(), F.struct(F.timestamp_millis("ag.at_ms").alias("ts"), "ag.ref")).alias(
            "again"
        ),
    )


@dataclass(frozen=True)
class Refused:
    """A leader the controller's lines named for a partition that had one (one coming back from offline is
    `Leaderless`'s) and that refused the LeaderAndIsr: nobody served the partition from the controller's
    line (its clock) until a broker logged that it leads it again (`led_again`, that broker's clock; None:
    not before the lines end). `lost`: the leader named before (None: no line named one)."""

    topic: str
    partition: int
    leader: int
    leader_epoch: int | None
    named: datetime
    named_ref: str
    refused: datetime
    refused_ref: str
    led_again: datetime | None
    led_again_ref: str | None
    lost: int | None


def refused_leaders(bundle: Bundle, limit: int) -> Ask[tuple[list[Refused], int]]:
    """The first `limit` windows in which a leader the controller named (not from OfflinePartition)
    refused the partition, by the controller's line, and how many there are: the refusal its own line
    within the unaligned clocks' slack, and no line of it starting to lead at that epoch; none without
    the brokers' logs."""
    if not views(bundle).evidence.with_logs:
        return given(([], 0))
    s, off, on = _marked(bundle)
    w = Window.partitionBy("topic", "partition").orderBy("ts", "line_no")
    before = w.rowsBetween(Window.unboundedPreceding, -1)
    named = s.select(
        "topic",
        "partition",
        "leader",
        "leader_epoch",
        on.alias("on"),
        F.coalesce(F.col("from_state") == "OfflinePartition", F.lit(False)).alias("from_offline"),
        F.struct("ts", "file", "line_no").alias("first"),
        F.struct("ts", "file", "line_no", "leader").alias("next_on"),
        F.last(F.when(on, F.col("leader")), ignorenulls=True).over(before).alias("lost"),
        F.last(F.when(on, F.lit(False)).when(off, F.lit(True)), ignorenulls=True)
        .over(before)
        .alias("after_off"),
    )
    new_leader = (
        F.col("on")
        & ~F.col("from_offline")
        & ~F.coalesce("after_off", F.lit(False))
        & (F.col("lost").isNull() | (F.col("lost") != F.col("leader")))
    )
    a = acceptances(bundle, {}).alias("a")
    led = (
        (F.col("c.topic") == F.col("a.topic"))
        & (F.col("c.partition") == F.col("a.partition"))
        & (F.col("c.leader") == F.col("a.broker"))
        & (F.col("c.leader_epoch") == F.col("a.leader_epoch"))
    )
    candidates = named.where(new_leader).alias("c").join(a, led, "left_anti")
    rows = (
        _refused(bundle, candidates.select("topic", "partition", "leader_epoch", "first", "next_on", "lost"))
        .where(F.col("refusal").isNotNull())
        .withColumn("n", F.count("*").over(Window.partitionBy(F.lit(0))))
        .orderBy("first.ts", "topic", "partition")
        .limit(limit)  # at most `limit` windows
    )
    return Ask(rows, _refused_windows)


def _refused_windows(rows: list[Row]) -> tuple[list[Refused], int]:
    return [
        Refused(
            r.topic,
            r.partition,
            r.next_on.leader,
            r.leader_epoch,
            r.first.ts,
            file_ref(r.first.file, r.first.line_no),
            r.refusal.ts,
            r.refusal.ref,
            r.again.ts if r.again else None,
            r.again.ref if r.again else None,
            r.lost,
        )
        for r in rows
    ], (rows[0].n if rows else 0)
