"""Partition reassignments: each one step by step where ZooKeeper's history holds it, and each under way at
the capture with since when, whichever evidence tells it.

Step by step (`reassignments`, KIP-455, the controller's onPartitionReassignment, 2.4+): `started` when the
topic znode took RS = target + origin with the adding and removing replicas (phase U/A), `caught_up` when
every target replica was in the ISR (phase B begins), `completed` when the topic znode was written with the
target alone (B6).

Under way at the capture (`under_way`): ZooKeeper's tree says which (the topic znode's adding or removing
replicas, or `/admin/reassign_partitions`: a request no controller has taken up, or one before 2.4), and
since when its history's txns say where they hold the start; else the topic znode's last write bounds it
(the controller rewrites the znode as a reassignment starts, so it began then or before).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from workbench.kafka.znodes import TOPIC_PATH
from workbench.model.partition_history import stretches
from workbench.model.state import reassignments_in
from workbench.model.views import views

if TYPE_CHECKING:
    from workbench.frames import Bundle


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


def under_way(bundle: Bundle) -> DataFrame:
    """Each partition being reassigned at the capture: topic, partition, origin (null where the tree does
    not tell it: a request not taken up, or one before 2.4), target, isr, waiting (the target replicas not
    in it), in_isr (those in it), and since when: started/started_zxid, its start in ZooKeeper's history
    (null where the history does not hold it), and written/written_zxid, its topic znode's last write,
    which it began at or before."""
    v = views(bundle)
    moving = reassignments_in(v.partitions, bundle.znodes)
    topics = bundle.znodes.where(F.col("path").rlike(TOPIC_PATH)).select(
        F.regexp_extract("path", TOPIC_PATH, 1).alias("topic"),
        F.col("mtime").alias("written"),
        F.col("mzxid").alias("written_zxid"),
    )
    isr = F.coalesce("isr", F.array())
    told = moving.select(
        "topic",
        "partition",
        F.when(
            (F.size(F.coalesce("adding", F.array())) + F.size(F.coalesce("removing", F.array()))) > 0,
            F.array_except("replicas", F.coalesce("adding", F.array())),
        ).alias("origin"),
        "target",
    )
    rows = told.join(v.partitions.select("topic", "partition", "isr"), ["topic", "partition"], "left").join(
        topics, "topic", "left"
    )
    history = reassignments(bundle)
    if history is not None:
        started = history.where(F.col("completed").isNull()).select(
            "topic", "partition", "started", "started_zxid"
        )
        rows = rows.join(started, ["topic", "partition"], "left")
    else:
        rows = rows.select(
            "*",
            F.lit(None).cast("timestamp").alias("started"),
            F.lit(None).cast("long").alias("started_zxid"),
        )
    return rows.select(
        "topic",
        "partition",
        "origin",
        "target",
        "isr",
        F.array_except("target", isr).alias("waiting"),
        F.size(F.array_intersect("target", isr)).alias("in_isr"),
        "started",
        "started_zxid",
        "written",
        "written_zxid",
    )
