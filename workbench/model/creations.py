"""How each topic came to be, from ZooKeeper's history and the controllers' lines: every creation and
partition addition with the brokers registered then (and their racks) and whose session wrote it where
ZooKeeper tells it (`creations`), and those Kafka's
default assignment could not have given over those brokers (`not_default`, `kafka.assignment`); where
the partitions now sit by rack (`rack_concentrated`) and every topic name seen (`topic_names`). The
findings that read them are `analysis/lifecycle.py`'s and `analysis/typos.py`'s."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from workbench.kafka import printed
from workbench.kafka.assignment import (
    BrokerMetadata,
    default_assignment_could_give,
    new_partitions_as_kafka_would,
)
from workbench.kafka.znode_frames import TOPIC_ZNODE
from workbench.kafka.znodes import TOPIC_PATH, topic_path
from workbench.model.deletion_steps import topics_of
from workbench.model.history.sessions import CLOCKS_APART_MS
from workbench.model.reads import view
from workbench.model.refs import file_ref_col, hex_col
from workbench.model.skew import skew_col, skew_ms
from workbench.model.views import CREATES, DELETES, views

if TYPE_CHECKING:
    from workbench.frames import Bundle


@view
def creations(bundle: Bundle) -> DataFrame:
    """Each topic creation (first_partition 0) and partition addition: topic, zxid (the txn; null where a
    line tells it), time, first_partition, added and existing (partition -> replicas), by (the broker whose
    session wrote it; null: another session, a tool's, or not known), brokers (id and rack of each then
    registered), brokers_known (false where they may not all be known) and ref (the txn or line that tells
    it). ZooKeeper's history where it holds them; else the creations the controllers' lines show
    (`_from_lines`), which one of ZooKeeper's of the same topic within CLOCKS_APART_MS tells instead. A
    view (kept): the lifecycle and typo analyses ask it in many branches."""
    txns, lines = _from_txns(bundle), _from_lines(bundle)
    if txns is None:
        return lines
    told = txns.where(F.col("first_partition") == 0).select(
        F.col("topic").alias("t"), F.col("time").alias("at")
    )
    near = (F.col("topic") == F.col("t")) & (
        F.abs(F.unix_millis("time") - F.unix_millis("at")) <= CLOCKS_APART_MS
    )
    return txns.unionByName(lines.join(told, near, "left_anti"))


def _from_txns(bundle: Bundle) -> DataFrame | None:
    """The creations and additions ZooKeeper's history holds, with the brokers then registered and whose
    session wrote each (brokers_known false where the history starts after a gap over a tree not known:
    some brokers then may be missing); None without it."""
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
    ref = F.concat(F.lit("zk:txn@"), hex_col("zxid")).alias("ref")
    return added.join(then, ["topic", "zxid"]).select(*COLUMNS[:-2], known, ref)


def _from_lines(bundle: Bundle) -> DataFrame:
    """The topics the active controller saw created: its "New topics: [...] ... new partition replica
    assignment [...]" line, with the assignment it read from the new topics' znodes (KafkaController
    processTopicChange, every release: 1.1.1:1282, 2.5.1:1434, 2.8.2:1650, 3.6.2:1700), over the brokers
    that controller last logged live before it in its log: "Currently active brokers" as it was elected
    (1.1.1:659, 2.8.2:926, 3.6.2:981) and "all live brokers" at each change of /brokers/ids (1.1.1:1239,
    2.8.2:1579, 3.6.2:1629). Those are the brokers registered when the topic was written unless a
    registration changed between the write and the controller's handling of it. Their racks: their
    registrations now, else their server.properties. brokers_known is false where no such line precedes
    it, or a broker then is neither registered now nor has its server.properties in the bundle. On
    ZooKeeper's clock where the controller's skew is known; who wrote the topic znode is not known."""
    ev = bundle.cluster_events
    skew = F.coalesce(skew_col(skew_ms(bundle)), F.lit(0))
    at = F.timestamp_millis(F.unix_millis("ts") - skew).alias("time")
    made = (
        ev.where(F.col("event") == "topic.change")
        .select(
            "broker_id",
            "ts",
            "file",
            "line_no",
            at,
            topics_of(F.col("attrs")["new_topics"]).alias("new"),
            F.explode(printed.assignment(F.col("attrs")["assignment"])).alias("p"),
        )
        .where(F.array_contains("new", F.col("p.topic")))
    )
    per_topic = made.groupBy(
        "broker_id", "ts", "file", "line_no", "time", F.col("p.topic").alias("topic")
    ).agg(F.map_from_entries(F.collect_list(F.struct("p.partition", "p.replicas"))).alias("added"))
    live = ev.where(F.col("event").isin(*LIVE_BROKERS)).select(
        F.col("broker_id").alias("c"),
        F.struct("ts", "line_no").alias("o"),
        printed.ints(F.col("attrs")["brokers"]).alias("ids"),
    )
    before = (F.col("c") == F.col("broker_id")) & (F.col("o") < F.struct("ts", "line_no"))
    keys = ["broker_id", "ts", "file", "line_no", "time", "topic"]  # a creation: its line and topic
    then = (
        per_topic.join(live, before, "left")
        .groupBy(*keys)
        .agg(F.first("added").alias("added"), F.max_by("ids", "o").alias("ids"))
    )
    # each broker then with its rack: its registration now, else its server.properties
    configured = {b: c.get("broker.rack") for b, c in views(bundle).evidence.configs.items()}
    now = views(bundle).registrations.where(F.col("ended_zxid").isNull())
    listed = then.select(*keys, "added", F.explode_outer("ids").alias("id")).join(
        now.select(F.col("broker_id").alias("id"), "rack", F.lit(True).alias("now")), "id", "left"
    )
    rack = F.col("rack")
    if configured:
        said = F.create_map(*[x for b, r in sorted(configured.items()) for x in (F.lit(b), F.lit(r))])
        rack = F.when(F.col("now"), rack).otherwise(said[F.col("id")])
    told = F.coalesce(F.col("now"), F.lit(False)) | F.col("id").isin(*configured)
    one = F.when(F.col("id").isNotNull(), F.struct("id", rack.alias("rack")))
    return (
        listed.groupBy(*keys)
        .agg(
            F.first("added").alias("added"),
            F.sort_array(F.collect_list(one)).alias("brokers"),
            ((F.count("id") > 0) & F.bool_and(told)).alias("brokers_known"),
        )
        .select(
            "topic",
            F.lit(None).cast("long").alias("zxid"),
            "time",
            F.lit(None).cast("long").alias("session_id"),
            F.lit(0).alias("first_partition"),
            "added",
            F.lit(None).cast("map<string,array<int>>").alias("existing"),
            F.lit(None).cast("int").alias("by"),
            "brokers",
            "brokers_known",
            file_ref_col("file", "line_no").alias("ref"),
        )
    )


# the controller's lines naming every broker live: as it is elected, and at each change of /brokers/ids
LIVE_BROKERS = ("controller.live_brokers", "controller.broker_change")
COLUMNS = (
    "topic",
    "zxid",
    "time",
    "session_id",
    "first_partition",
    "added",
    "existing",
    "by",
    "brokers",
    "brokers_known",
    "ref",
)


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
            [batch.column("topic"), batch.column("ref"), pa.array(whys, pa.string())],
            names=["topic", "ref", "why"],
        )


def not_default(made: DataFrame) -> DataFrame:
    """Of `creations`, those Kafka's default assignment could not have given: topic, zxid, time, by,
    first_partition, why and ref."""
    schema = StructType(
        [
            StructField("topic", StringType()),
            StructField("ref", StringType()),
            StructField("why", StringType()),
        ]
    )
    checked = made.select(
        "topic", "ref", "first_partition", "added", "existing", "brokers", "brokers_known"
    ).mapInArrow(_not_kafkas, schema)
    return made.join(checked.where(F.col("why").isNotNull()), ["topic", "ref"]).select(
        "topic", "zxid", "time", "by", "first_partition", "why", "ref"
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
