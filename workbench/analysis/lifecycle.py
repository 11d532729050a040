"""Topic lifecycle: how each topic came to be, and whether its layout and name are ones Kafka makes.

- `creations`: every topic creation and partition addition in ZooKeeper's history, with the brokers then
  registered (and their racks) and who wrote it (a broker's own session: a CreateTopics request or an
  automatic creation; any other session: a tool writing ZooKeeper, such as kafka-topics --zookeeper).
- Findings:
  - `topic.manual_assignment`: replicas Kafka's default assignment could not have given over the brokers
    then registered, for any start index and replica shift, rack aware or in any broker order
    (`kafka.assignment`): made by hand (--replica-assignment) or by a tool;
  - `topic.rack_concentrated`: a partition with every replica on one rack while the brokers span several;
  - `topic.auto_created`: the brokers' "Auto creation of topic" lines. Only 2.5 writes one: from 2.8 an
    automatic creation goes through the same ZkAdminManager.createTopics as a CreateTopics request, and
    no version names the client at INFO (kafka.request.logger has it at DEBUG), so neither is guessed;
  - `topic.name_collision` and `topic.invalid_name`: names Kafka's Topic rules refuse (`kafka.names`),
    which only a tool writing ZooKeeper directly gets past.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql.types import StringType, StructField, StructType

from workbench.analysis.cluster import CREATES, DELETES, TOPIC_PATH, TOPIC_ZNODE, version_tuple, views
from workbench.analysis.findings import Coverage, Finding, file_ref, txn_ref, zk_ref
from workbench.kafka.assignment import (
    BrokerMetadata,
    default_assignment_could_give,
    new_partitions_as_kafka_would,
)
from workbench.kafka.names import LEGAL_CHARS, MAX_NAME_LENGTH, invalid_topic_message

if TYPE_CHECKING:
    from workbench.frames import Bundle

SHOWN = 10  # topics named in a finding's text; the count says how many there are


def creations(bundle: Bundle) -> DataFrame | None:
    """Each topic creation (first_partition 0) and partition addition in ZooKeeper's history: topic, zxid,
    time, first_partition, added and existing (partition -> replicas), by (the broker whose session wrote
    it; null: another session, a tool's), brokers (id and rack of each then registered). None without
    ZooKeeper's history."""
    watched = views(bundle).watched_history
    if watched is None:
        return None
    h, base, base_zxid = watched
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
    return added.join(then, ["topic", "zxid"])


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
            if missing:
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
    checked = made.select("topic", "zxid", "first_partition", "added", "existing", "brokers").mapInArrow(
        _not_kafkas, schema
    )
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
    names = v.topics.select("topic", F.concat(F.lit("/brokers/topics/"), "topic").alias("path"))
    if v.watched_history is not None:
        h = v.watched_history.txns
        names = names.unionByName(
            h.where(F.col("path").rlike(TOPIC_PATH)).select(
                F.regexp_extract("path", TOPIC_PATH, 1).alias("topic"), "path"
            )
        )
    return names.distinct()


def findings(bundle: Bundle, coverage: Coverage) -> list[Finding]:
    """Assignments not Kafka's, rack concentration, automatic creations, colliding and invalid names."""
    v = views(bundle)
    used, missing = ["ZooKeeper's state"], []
    made = creations(bundle)
    if made is None:
        missing.append("ZooKeeper's txn logs (zk/txnlog/): who created each topic, and with what assignment")
    else:
        used.append("ZooKeeper's history")
        assert v.watched_history is not None
        born = v.watched_history.txns.where(
            F.col("op").isin(*CREATES) & F.col("path").rlike(TOPIC_PATH)
        ).select(F.regexp_extract("path", TOPIC_PATH, 1).alias("topic"))
        older = v.topics.join(born, "topic", "left_anti").count()
        if older:
            missing.append(f"the creation of {older} topic(s), before the history's first txn: not checked")
    coverage.record("topic_lifecycle", used, missing)
    if (version_tuple(v.evidence.kafka_version) or (2, 8)) >= (2, 8):
        coverage.not_applicable(
            "topic_auto_creation", "Kafka 2.8+ logs an automatic creation as it logs a CreateTopics request"
        )
    else:
        logs = ["broker logs"] if v.evidence.with_logs else []
        coverage.record("topic_auto_creation", logs, [] if logs else ["broker logs (server.log)"])
    return [*_manual(made), *_concentrated(bundle), *_auto_created(bundle), *_names(bundle)]


def _manual(made: DataFrame | None) -> list[Finding]:
    if made is None:
        return []
    row = (
        not_default(made)
        .agg(
            F.count("*").alias("n"),
            F.count_distinct("topic").alias("topics"),
            F.slice(
                F.sort_array(F.collect_list(F.struct("zxid", "topic", "by", "first_partition", "why"))),
                1,
                SHOWN,
            ).alias("some"),
        )
        .collect()[0]
    )
    if not row.n:
        return []
    shown = "; ".join(
        f"{s.topic} ({'created' if s.first_partition == 0 else f'partitions from {s.first_partition} added'} "
        f"by {f'broker {s.by}' if s.by is not None else 'a tool'}: {s.why})"
        for s in row.some
    )
    return [
        Finding(
            "topic.manual_assignment",
            "info",
            {"topics": row.topics},
            f"{row.n} topic creation(s) or partition addition(s) in {row.topics} topic(s) have replicas "
            "that Kafka's default assignment could not have given over the brokers registered then (no "
            "start index and replica shift, rack aware or in any broker order, gives them): assigned by hand "
            f"(--replica-assignment) or by a tool. {shown}{' ...' if row.n > SHOWN else ''}",
            tuple(txn_ref(s.zxid) for s in row.some[:3]),
        )
    ]


def _concentrated(bundle: Bundle) -> list[Finding]:
    on_one = rack_concentrated(bundle)
    if on_one is None:
        return []
    row = (
        on_one.groupBy("topic", "rack")
        .agg(F.count("*").alias("n"))
        .agg(
            F.sum("n").alias("n"),
            F.count("*").alias("topics"),
            F.slice(F.sort_array(F.collect_list(F.struct("topic", "rack", "n"))), 1, SHOWN).alias("some"),
        )
        .collect()[0]
    )
    if not row.n:
        return []
    shown = ", ".join(f"{s.topic} ({s.n} on rack {s.rack})" for s in row.some)
    return [
        Finding(
            "topic.rack_concentrated",
            "warning",
            {"partitions": row.n, "topics": row.topics},
            f"{row.n} partition(s) of {row.topics} topic(s) keep every replica on one rack, though the "
            f"registered brokers span several: losing that rack takes them offline. {shown}"
            f"{' ...' if row.topics > SHOWN else ''}",
            tuple(zk_ref(f"/brokers/topics/{s.topic}") for s in row.some[:3]),
        )
    ]


def _auto_created(bundle: Bundle) -> list[Finding]:
    row = (
        bundle.cluster_events.where(F.col("event") == "topic.auto_created")
        .groupBy("topic")
        .agg(F.min_by(F.struct("ts", "broker_id", "file", "line_no"), "ts").alias("first"))
        .agg(
            F.count("*").alias("n"),
            F.slice(
                F.sort_array(F.collect_list(F.struct(F.col("first.ts").alias("ts"), "topic", "first"))),
                1,
                SHOWN,
            ).alias("some"),
        )
        .collect()[0]
    )
    if not row.n:
        return []
    shown = ", ".join(f"{s.topic} (broker {s.first.broker_id}, {s.ts:%Y-%m-%d %H:%M:%S})" for s in row.some)
    return [
        Finding(
            "topic.auto_created",
            "info",
            {"topics": row.n},
            f"{row.n} topic(s) were created automatically (auto.create.topics.enable: a client's Metadata "
            f"request named a topic that did not exist): {shown}{' ...' if row.n > SHOWN else ''}. The "
            "broker's log does not name the client (only kafka.request.logger does, at DEBUG).",
            tuple(file_ref(s.first.file, s.first.line_no) for s in row.some[:3]),
        )
    ]


def _names(bundle: Bundle) -> list[Finding]:
    names = topic_names(bundle)
    valid = (
        F.col("topic").rlike(f"^{LEGAL_CHARS}+$")
        & ~F.col("topic").isin(".", "..")
        & (F.length("topic") <= MAX_NAME_LENGTH)
    )
    bad = (
        names.where(~valid)
        .groupBy("topic")
        .agg(F.min("path").alias("path"))
        .orderBy("topic")
        .limit(SHOWN + 1)
        .collect()
    )
    clashes = (
        names.select("topic", F.translate("topic", ".", "_").alias("unified"))  # unify_collision_chars
        .distinct()
        .groupBy("unified")
        .agg(F.sort_array(F.collect_list("topic")).alias("topics"))
        .where(F.size("topics") > 1)
        .orderBy("unified")
        .limit(SHOWN + 1)
        .collect()
    )
    out = []
    if bad:
        out.append(
            Finding(
                "topic.invalid_name",
                "warning",
                {"topics": len(bad)},
                "Topic name(s) Kafka refuses, written to ZooKeeper by a tool that bypassed its checks: "
                + "; ".join(f"{b.topic!r}: {invalid_topic_message(b.topic)}" for b in bad[:SHOWN]),
                tuple(zk_ref(b.path) for b in bad[:3]),
            )
        )
    if clashes:
        out.append(
            Finding(
                "topic.name_collision",
                "warning",
                {"groups": len(clashes)},
                "Topics whose names differ only in '.' and '_' share their metric names, so their metrics "
                "collide; Kafka refuses to create one while the other exists: "
                + "; ".join(" and ".join(c.topics) for c in clashes[:SHOWN]),
                tuple(zk_ref(f"/brokers/topics/{t}") for t in clashes[0].topics[:3]),
            )
        )
    return out
