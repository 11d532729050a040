"""How each topic came to be, from ZooKeeper's history: every creation and partition addition with the
brokers registered then (and their racks) and whose session wrote it (`creations`), and those Kafka's
default assignment could not have given over those brokers (`not_default`, `kafka.assignment`); where
the partitions now sit by rack (`rack_concentrated`) and every topic name seen (`topic_names`). The
findings that read them are `analysis/lifecycle.py`'s and `analysis/typos.py`'s."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from workbench.kafka.assignment import (
    BrokerMetadata,
    default_assignment_could_give,
    new_partitions_as_kafka_would,
)
from workbench.kafka.znode_frames import TOPIC_ZNODE
from workbench.kafka.znodes import TOPIC_PATH, topic_path
from workbench.model.views import CREATES, DELETES, views

if TYPE_CHECKING:
    from workbench.frames import Bundle


def creations(bundle: Bundle) -> DataFrame | None:
    """Each topic creation (first_partition 0) and partition addition in ZooKeeper's history: topic, zxid,
    time, first_partition, added and existing (partition -> replicas), by (the broker whose session wrote
    it; null: another session, a tool's), brokers (id and rack of each then registered) and brokers_known
    (false where the history starts after a gap over a tree not known: some brokers then may be missing).
    None without ZooKeeper's history."""
    watched = views(bundle).watched_history
    if watched is None:
        return None
    h, base, base_zxid, _ = watched
    w = Window.partitionBy("topic").orderBy("zxid")
    topic = F.regexp_extract("path", TOPIC_PATH, 1).alias("topic")
    writes = h.where(
        F.col("op").isin(*CREATES, "setData", *DELETES) & F.col("path").rlike(TOPIC_PATH)
    ).select(
        topic,
        "zxid",
        "time",
        "session_id",
        F.col("op").isin(*CREATES).alias("created"),
        F.when(~F.col("op").isin(*DELETES), F.from_json("data", TOPIC_ZNODE)["partitions"]).alias("now"),
    )
    if base is not None:  # the topics in the tree the history starts from: what a setData grows from
        writes = writes.unionByName(
            base.where(F.col("path").rlike(TOPIC_PATH)).select(
                topic,
                F.lit(base_zxid).cast("long").alias("zxid"),
                F.lit(None).cast("timestamp").alias("time"),
                F.lit(None).cast("long").alias("session_id"),
                F.lit(None).cast("boolean").alias("created"),
                F.from_json("data", TOPIC_ZNODE)["partitions"].alias("now"),
            )
        )
    before = F.when(~F.col("created"), F.lag("now").over(w))
    grown = writes.select("*", before.alias("existing")).select(
        "*",
        F.array_except(
            F.coalesce(F.map_keys("now"), F.array()), F.coalesce(F.map_keys("existing"), F.array())
        ).alias("new_ids"),
    )
    # A creation, or partitions added to a topic whose earlier partitions are known (a topic first seen
    # rewritten, with no tree from before the history, is left out: what it grew from is unknown).
    known = F.col("created") | (~F.col("created") & F.col("existing").isNotNull())
    added = grown.where((F.size("new_ids") > 0) & F.coalesce(known, F.lit(False))).select(
        "topic",
        "zxid",
        "time",
        "session_id",
        F.when(F.col("existing").isNull(), F.lit(0)).otherwise(F.size("existing")).alias("first_partition"),
        F.map_filter("now", lambda k, _: F.array_contains("new_ids", k)).alias("added"),
        "existing",
    )
    regs = views(bundle).registrations
    a, r = added.select("topic", "zxid", "session_id").alias("a"), regs.alias("r")
    then = (
        a.join(
            r,
            (F.col("r.czxid") <= F.col("a.zxid"))
            & (F.col("r.ended_zxid").isNull() | (F.col("a.zxid") < F.col("r.ended_zxid"))),
            "left",
        )
        .groupBy("a.topic", "a.zxid")
        .agg(
            F.max(F.when(F.col("r.session_id") == F.col("a.session_id"), F.col("r.broker_id"))).alias("by"),
            F.sort_array(
                F.collect_list(F.struct(F.col("r.broker_id").alias("id"), F.col("r.rack").alias("rack")))
            ).alias("brokers"),
        )
    )
    # Where the tree the history starts from is not known (after a gap) and the gap may have made or ended
    # a registration, a broker registered before it and still then may be absent from `regs`: the brokers
    # then are not known, so nothing is judged by them.
    known = F.lit(views(bundle).brokers_known).alias("brokers_known")
    return added.join(then, ["topic", "zxid"]).select("*", known)


def _not_kafkas(batches: Iterator[Any]) -> Iterator[Any]:
    """Per creation or addition (a few per topic, never per line): why Kafka's default assignment could
    not have given it, or nothing."""
    import pyarrow as pa

    for batch in batches:
        whys: list[str | None] = []
        for row in batch.to_pylist():
            brokers = [
                BrokerMetadata(b["id"], b["rack"]) for b in row["brokers"] or [] if b["id"] is not None
            ]
            added = {int(p): list(rs or []) for p, rs in (row["added"] or [])}
            existing = {int(p): list(rs or []) for p, rs in (row["existing"] or [])}
            ids = {b.id for b in brokers}
            missing = sorted({x for rs in added.values() for x in rs} - ids)
            if not row["brokers_known"]:
                whys.append(None)
            elif missing:
                whys.append(f"broker(s) {', '.join(map(str, missing))} not registered then")
            elif row["first_partition"] == 0:
                ok = default_assignment_could_give(added, brokers)
                whys.append(None if ok else f"not a default assignment over brokers {sorted(ids)}")
            else:
                ok = new_partitions_as_kafka_would(existing, added, brokers)
                whys.append(None if ok else f"not the partitions Kafka adds over brokers {sorted(ids)}")
        yield pa.RecordBatch.from_arrays(
            [batch.column("topic"), batch.column("zxid"), pa.array(whys, pa.string())],
            names=["topic", "zxid", "why"],
        )


def not_default(made: DataFrame) -> DataFrame:
    """Of `creations`, those Kafka's default assignment could not have given: topic, zxid, time, by,
    first_partition, why."""
    schema = StructType(
        [StructField("topic", StringType()), made.schema["zxid"], StructField("why", StringType())]
    )
    checked = made.select(
        "topic", "zxid", "first_partition", "added", "existing", "brokers", "brokers_known"
    ).mapInArrow(_not_kafkas, schema)
    return made.join(checked.where(F.col("why").isNotNull()), ["topic", "zxid"]).select(
        "topic", "zxid", "time", "by", "first_partition", "why"
    )


def racks(bundle: Bundle) -> dict[int, str]:
    """Each broker's rack (broker.rack) as its newest registration gives it; brokers without one left out.
    One entry per broker, so it is a small lookup the driver may hold."""
    latest = views(bundle).registrations.groupBy("broker_id").agg(F.max_by("rack", "czxid").alias("rack"))
    return {r.broker_id: r.rack for r in latest.where(F.col("rack").isNotNull()).collect()}


def rack_concentrated(bundle: Bundle) -> DataFrame | None:
    """Partitions now whose replicas (two or more) all sit on one rack while the registered brokers span
    several: topic, partition, rack, replicas. Topics queued for deletion left out. None when the
    registered brokers are not on two racks or more (then nothing can be concentrated)."""
    v = views(bundle)
    rack_of = racks(bundle)
    if len({rack_of[b] for b in v.live_brokers if b in rack_of}) < 2:
        return None
    lookup = F.create_map(*[x for b, r in sorted(rack_of.items()) for x in (F.lit(b), F.lit(r))])
    parts = v.partitions.join(v.delete_markers.select("topic"), "topic", "left_anti")
    placed = parts.where(F.size("replicas") >= 2).select(
        "topic", "partition", "replicas", F.transform("replicas", lambda b: lookup[b]).alias("racks")
    )
    return placed.where(
        F.forall("racks", lambda x: x.isNotNull()) & (F.size(F.array_distinct("racks")) == 1)
    ).select("topic", "partition", F.col("racks")[0].alias("rack"), "replicas")


def topic_names(bundle: Bundle) -> DataFrame:
    """Every topic name in the ZooKeeper state and its history: topic, and where it was seen (path)."""
    v = views(bundle)
    names = v.topics.select("topic", F.concat(F.lit(topic_path("")), "topic").alias("path"))
    if v.watched_history is not None:
        h = v.watched_history.txns
        names = names.unionByName(
            h.where(F.col("path").rlike(TOPIC_PATH)).select(
                F.regexp_extract("path", TOPIC_PATH, 1).alias("topic"), "path"
            )
        )
    return names.distinct()
