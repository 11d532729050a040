"""Kafka's own counts of the partitions, as the one history tells them: UnderReplicatedPartitions (each
stretch a partition was under-replicated, `under_replicated`) and the controller's leader imbalance ratio
(each broker's at the end, and since when, `imbalances`). From the health series where ZooKeeper's
history is held (`model/health.py`); else from ZooKeeper's tree at the capture, which tells each count then
and, from its writes, a lower bound of how long it had held. Each answer says which told it. And
OfflinePartitionsCount's partitions at the capture from the tree alone (`offline_at_capture`): where the
history is held, its stretches tell them (`service.unserved`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from pyspark.sql import Column, DataFrame, Row, Window
from pyspark.sql import functions as F

from workbench.kafka import znodes as paths
from workbench.model.health import Health, captured_at, episodes, health
from workbench.model.history.partitions import FROM_TXNS, told_to_lead
from workbench.model.refs import TP
from workbench.model.views import views
from workbench.together import Ask, Joined, given, rows

if TYPE_CHECKING:
    from workbench.frames import Bundle

FROM_TREE = "ZooKeeper's tree at the capture"


def imbalances(bundle: Bundle, threshold: float) -> tuple[DataFrame | None, str | None]:
    """Per broker at the end of what tells it (`minute`): preferred (the partitions whose first replica it
    is), not_leading (those of them led by another broker, or by none), imbalance_ratio and `since` (null
    where not above `threshold`), topics queued for deletion left out as the controller leaves them out;
    and what told it. The health series (ZooKeeper's history): `since` is the first minute of the run above
    the threshold that ends it. Else ZooKeeper's tree at the capture (`_unchanged_since`): the ratio has not
    changed since `since` (it may have been above before: how long it lasted is a lower bound). None where
    neither is held."""
    h = health(bundle)
    if h is not None:
        return imbalance_since(h, threshold), FROM_TXNS
    v = views(bundle)
    at = captured_at(bundle)
    if not v.evidence.zk_state or at is None:
        return None, None
    first = F.col("replicas")[0]
    preferred = (
        v.partitions.join(v.delete_markers.select("topic"), "topic", "left_anti")
        .where(first.isNotNull())
        .groupBy(first.alias("broker"))
        .agg(
            F.count("*").alias("preferred"),
            F.count_if(F.col("leader").isNotNull() & (F.col("leader") != first)).alias("not_leading"),
            F.max("state_mzxid").alias("last_state"),
        )
    )
    ratio = F.col("not_leading") / F.col("preferred")
    per = preferred.select(
        "broker",
        F.lit(at).cast("timestamp").alias("minute"),
        "preferred",
        "not_leading",
        ratio.alias("imbalance_ratio"),
        F.when(ratio > threshold, F.col("last_state")).alias("last_state"),
    )
    return _unchanged_since(bundle.znodes, per, at), FROM_TREE  # a row per broker, in no order


def _unchanged_since(znodes: DataFrame, per: DataFrame, at: datetime) -> DataFrame:
    """`per` with `since` in place of `last_state`: the latest moment a broker's ratio can have changed,
    as ZooKeeper's tree tells it. Only a write changes it: of the state of a partition it is the preferred
    leader for (`last_state`), of a topic znode (created, partitions added, reassigned), or a change to the
    children of /brokers/topics or /admin/delete_topics (a topic created, queued for deletion or gone). A
    zxid's time is at most the time of the first write at or after it in the tree (zxids only grow), or
    the capture where none is."""
    any_topic = (
        znodes.where(
            F.col("path").rlike(paths.TOPIC_PATH) | F.col("path").isin(paths.TOPICS, paths.DELETE_TOPICS)
        )
        .agg(F.max(F.greatest("mzxid", "pzxid")).alias("w"))
        .select(F.coalesce("w", F.lit(0)).alias("w"))
    )
    writes = znodes.select(F.col("mzxid").alias("z"), F.col("mtime").alias("t")).unionByName(
        znodes.select(F.col("czxid").alias("z"), F.col("ctime").alias("t"))
    )
    last = per.crossJoin(any_topic).select("*", F.greatest("last_state", "w").alias("z_changed"))
    # each broker's zxid among the tree's writes, before those at the same zxid: the first time at or after
    marks = last.where(F.col("last_state").isNotNull()).select(
        F.col("z_changed").alias("z"), F.lit(None).cast("timestamp").alias("t"), "broker"
    )
    timeline = writes.select("z", "t", F.lit(None).cast("int").alias("broker")).unionByName(marks)
    onward = Window.orderBy("z", F.col("broker").isNull()).rowsBetween(
        Window.currentRow, Window.unboundedFollowing
    )
    first_after = timeline.select("broker", F.min("t").over(onward).alias("t")).where(
        F.col("broker").isNotNull()
    )
    return last.join(first_after, "broker", "left").select(
        "broker",
        "minute",
        "preferred",
        "not_leading",
        "imbalance_ratio",
        F.when(F.col("last_state").isNotNull(), F.coalesce(F.col("t"), F.lit(at).cast("timestamp"))).alias(
            "since"
        ),
    )


def under_replicated(bundle: Bundle) -> tuple[DataFrame | None, str | None]:
    """Each stretch a partition was under-replicated as Kafka counts it (UnderReplicatedPartitions: an
    acting leader whose ISR holds fewer than its replicas less those being added): topic, partition, began,
    began_zxid, ended and ended_zxid (null: still at the capture), lasted_ms (to the capture when still)
    and out_of_isr; and what told it. The health series (ZooKeeper's history): each stretch whole. Else
    ZooKeeper's tree at the capture: each partition under-replicated then whose leader is registered and did
    not refuse it the last time it was told to (`told_to_lead`), since its state znode's last write, which
    wrote the ISR it has (`began`, `began_zxid` its mzxid): it may have begun before, so `lasted_ms` is a
    lower bound. None where neither is held."""
    h = health(bundle)
    at = captured_at(bundle)
    if h is not None:
        return episodes(h.partitions, "under_replicated", at), FROM_TXNS
    v = views(bundle)
    if not v.evidence.zk_state or at is None:
        return None, None
    adding = F.coalesce("adding", F.array().cast("array<int>"))
    isr = F.coalesce("isr", F.array().cast("array<int>"))
    refused = (
        told_to_lead(bundle)
        .where("refused")
        .select(F.col("broker").alias("leader"), "topic", "partition", F.lit(True).alias("refused"))
    )
    led = (F.col("leader") >= 0) & F.col("leader").isin(*sorted(v.live_brokers))
    short = F.size(isr) < F.size("replicas") - F.size(adding)
    return (
        v.partitions.where(led & short)
        .join(refused, ["leader", "topic", "partition"], "left_anti")
        .select(
            "topic",
            "partition",
            F.col("state_mtime").alias("began"),
            F.col("state_mzxid").alias("began_zxid"),
            F.lit(None).cast("timestamp").alias("ended"),
            F.lit(None).cast("long").alias("ended_zxid"),
            (F.lit(int(at.timestamp() * 1000)) - F.unix_millis("state_mtime")).alias("lasted_ms"),
            F.sort_array(F.array_except(F.array_except("replicas", adding), isr)).alias("out_of_isr"),
        ),
        FROM_TREE,
    )


@dataclass(frozen=True)
class OfflineNow:
    """A partition ZooKeeper's tree at the capture shows without a live leader: its leader there (-1: none
    set), its ISR, its state znode's last write and how long it had been offline then (`upper_ms` None: not
    bounded from above)."""

    tp: TP
    leader: int
    isr: list[int]
    state_mzxid: int
    lower_ms: int
    upper_ms: int | None


@dataclass(frozen=True)
class OfflineThen:
    """What ZooKeeper's tree shows without a live leader when it was taken: the partitions (of topics not
    queued for deletion), how many more of topics queued, and, where the bundle holds no capture time, the
    tree's newest write, after which it was taken (each partition's bounds are then from below)."""

    partitions: list[OfflineNow]
    queued: int = 0
    newest: datetime | None = None


def offline_at_capture(bundle: Bundle) -> Ask[OfflineThen | None]:
    """The partitions without a live leader in ZooKeeper's tree at the capture, as the controller counts
    them (`offline_in_the_tree`: a state znode whose leader is -1 or not registered; a partition without
    one is new), those of topics queued for deletion left out (Kafka leaves them out once the deletion has
    begun, `offline_count_leaves_out_deletions_started`, which the tree does not tell) and counted; None
    without the tree. How long each had been offline, from what the tree's writes bound: leader -1, at least
    since its state znode's last write (which left it so, or kept it so); a leader not registered, after
    that write (only the controller writes it once its leader is gone, and it would have elected another or
    written -1) and at or before the last change of /brokers/ids' children (its pzxid), whose time is at
    most that of the first write at or after it. Without the capture's time, to the tree's newest write:
    from below only. One query."""
    v = views(bundle)
    if not v.evidence.zk_state:
        return given(None)
    at = captured_at(bundle)
    offline = v.partitions.where(_offline(v.live_brokers))
    znodes = bundle.znodes
    mark = F.lit(False).alias("mark")
    writes = znodes.select(F.col("mzxid").alias("z"), F.col("mtime").alias("t"), mark).unionByName(
        znodes.select(F.col("czxid").alias("z"), F.col("ctime").alias("t"), mark)
    )
    pzxid = znodes.where(F.col("path") == paths.BROKER_IDS).select(
        F.col("pzxid").alias("z"), F.lit(None).cast("timestamp").alias("t"), F.lit(True).alias("mark")
    )
    onward = Window.orderBy("z", F.col("mark").desc()).rowsBetween(
        Window.currentRow, Window.unboundedFollowing
    )
    left_by = writes.unionByName(pzxid).select("mark", F.min("t").over(onward).alias("t")).where("mark")
    newest = writes.agg(F.max("t").alias("t")) if at is None else None

    def read(found: list[Row], left: list[Row], marked: list[Row], last: list[Row]) -> OfflineThen | None:
        then = at or next((r.t for r in last if r.t is not None), None)
        if then is None:  # a tree without a write
            return None
        captured = int(then.timestamp() * 1000)
        by = next((r.t for r in left if r.t is not None), then)
        queued = {r.topic for r in marked}
        out = []
        for r in found:
            since = captured - int(r.state_mtime.timestamp() * 1000)
            lower = since if r.leader < 0 else captured - int(by.timestamp() * 1000)
            upper = since if r.leader >= 0 and at is not None else None
            tp, isr = TP(r.topic, r.partition), list(r.isr or [])
            out.append(OfflineNow(tp, r.leader, isr, r.state_mzxid, max(0, lower), upper))
        kept = [o for o in out if o.tp.topic not in queued]
        return OfflineThen(kept, len(out) - len(kept), None if at is not None else then)

    columns = ("topic", "partition", "leader", "isr", "state_mzxid", "state_mtime")
    found = rows(offline.select(*columns))
    return Joined(read, found, rows(left_by), rows(v.delete_markers.select("topic")), rows(newest))


def _registered(live: set[int]) -> Column:
    return F.coalesce(F.col("leader").isin(*sorted(live)), F.lit(False)) if live else F.lit(False)


def _offline(live: set[int]) -> Column:
    """A state znode's leader as the controller counts it offline (`offline_in_the_tree`): -1, or a broker
    not registered."""
    return F.col("leader").isNotNull() & ((F.col("leader") < 0) | ~_registered(live))


def tree_leaders(bundle: Bundle) -> DataFrame | None:
    """topic, partition, led_by (the leader ZooKeeper's tree at the capture names, where registered; null:
    none) and offline (as `offline_at_capture` counts it: no live leader, of a topic not queued for
    deletion); None without the tree."""
    v = views(bundle)
    if not v.evidence.zk_state:
        return None
    queued = v.delete_markers.select("topic", F.lit(True).alias("queued")).distinct()
    return v.partitions.join(F.broadcast(queued), "topic", "left").select(
        "topic",
        "partition",
        F.when(_registered(v.live_brokers), F.col("leader")).alias("led_by"),
        (_offline(v.live_brokers) & F.col("queued").isNull()).alias("offline"),
    )


def imbalance_since(h: Health, threshold: float) -> DataFrame:
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
    )
