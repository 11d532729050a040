"""A topic deletion's steps, as every analysis and plot reads them: ZooKeeper's (the marker's create and
delete, the topic znode's delete) and the brokers' (the controller's TopicDeletionManager lines, replica
state changes, '-delete' renames and log removals), each with the evidence to open (`analysis.deletion`
judges them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from workbench.kafka.znodes import DELETE_MARKER_PATH, TOPIC_PATH
from workbench.model.views import views

if TYPE_CHECKING:
    from workbench.frames import Bundle

# The replica states of a deletion, as the controller names them in state-change.log (case objects in
# ReplicaStateMachine.scala: 0.11.0.0:322-332, 2.5.1:462-472, 2.8.2:473-483, 3.6.2:473-483).
DELETION_STATES = ("ReplicaDeletionStarted", "ReplicaDeletionSuccessful", "ReplicaDeletionIneligible")


def topics_of(text: Column) -> Column:
    """'Set(a, b)', 'HashSet(a)', 'a,b' -> [a, b]: the topic lists the controller prints."""
    bare = F.regexp_replace(text, r"^(?:Set|HashSet|ListSet|ArrayBuffer|List)?\(?|\)$", "")
    return F.filter(F.split(bare, r",\s*"), lambda t: t != "")


# A step's place among a topic's steps, ties included (rows of one time on several brokers): so that "first"
# and "last" are the same whatever order Spark's plan leaves the rows in.
IN_ORDER = ("ts", "seq", "ref")


def timeline(bundle: Bundle) -> DataFrame:
    """Every step of every deletion: topic, source (zk or broker-N), step, zxid (ZooKeeper only), ts (the
    source's own clock), seq (the zxid, or the line in its log file: the order within a source when
    timestamps tie), partition, broker (a replica's), detail, ref."""
    h = views(bundle).history.where(F.col("applied"))
    marker = h.where(F.col("path").rlike(DELETE_MARKER_PATH) & F.col("op").isin("create", "delete")).select(
        F.regexp_extract("path", DELETE_MARKER_PATH, 1).alias("topic"),
        F.when(F.col("op") == "create", "requested").otherwise("marker removed").alias("step"),
        "zxid",
        "time",
    )
    topic_gone = h.where(F.col("path").rlike(TOPIC_PATH) & (F.col("op") == "delete")).select(
        F.regexp_extract("path", TOPIC_PATH, 1).alias("topic"),
        F.lit("topic znode removed").alias("step"),
        "zxid",
        "time",
    )
    zk = marker.unionByName(topic_gone).select(
        "topic",
        F.lit("zk").alias("source"),
        "step",
        "zxid",
        F.col("time").alias("ts"),
        F.col("zxid").alias("seq"),
        F.lit(None).cast("int").alias("partition"),
        F.lit(None).cast("int").alias("broker"),
        F.lit(None).cast("string").alias("detail"),
        F.concat(F.lit("zk:txn@0x"), F.lower(F.hex("zxid"))).alias("ref"),
    )
    ev = bundle.cluster_events
    named = ev.where(
        F.col("event").isin("deletion.started", "deletion.halted", "deletion.disabled", "deletion.retrying")
    ).select("*", F.explode(topics_of(F.col("attrs")["topics"])).alias("t"))
    single = ev.where(
        F.col("event").isin(
            "deletion.topic_started", "deletion.completed", "log.renamed_for_deletion", "log.deleted"
        )
        | ((F.col("event") == "replica.state_change") & F.col("attrs")["to_state"].isin(*DELETION_STATES))
        | (F.col("event") == "log_dir.io_error")
    ).withColumn("t", F.col("topic"))
    logs = named.unionByName(single).select(
        F.col("t").alias("topic"),
        F.concat(F.lit("broker-"), F.col("broker_id")).alias("source"),
        F.when(F.col("event") == "replica.state_change", F.col("attrs")["to_state"])
        .otherwise(F.col("event"))
        .alias("step"),
        F.lit(None).cast("long").alias("zxid"),
        "ts",
        F.col("line_no").cast("long").alias("seq"),
        "partition",
        F.when(F.col("event") == "replica.state_change", F.col("attrs")["replica"].cast("int"))
        .when(F.col("event").startswith("log"), F.col("broker_id"))
        .alias("broker"),
        F.coalesce(F.col("attrs")["reason"], F.col("attrs")["dir"]).alias("detail"),
        F.concat(
            F.lit("broker-"),
            F.col("broker_id"),
            F.lit(":"),
            F.regexp_replace("file", "^brokers/[^/]+/", ""),
            F.lit(":"),
            F.col("line_no"),
        ).alias("ref"),
    )
    return zk.unionByName(logs).where(F.col("topic").isNotNull())


def replica_progress(bundle: Bundle, topic: str) -> DataFrame:
    """Each replica of a topic under deletion, for a Gantt chart: topic, partition, broker, requested (the
    request: the marker's create, else the controller's line), renamed (its '-delete' rename), deleted (its
    log removed) and state (its last replica state in the controller's log); each time on its source's
    clock. Replicas are those ZooKeeper still assigns and those the logs name."""
    steps = timeline(bundle).where(F.col("topic") == topic)
    asked = steps.where(F.col("step").isin("requested", "deletion.started")).agg(
        F.min_by("ts", F.struct(F.col("zxid").isNull(), "ts")).alias("requested")
    )
    assigned = (
        views(bundle)
        .partitions.where(F.col("topic") == topic)
        .select("partition", F.explode("replicas").alias("broker"))
    )
    named = steps.where(F.col("partition").isNotNull() & F.col("broker").isNotNull())
    per_replica = named.groupBy("partition", "broker").agg(
        F.min(F.when(F.col("step") == "log.renamed_for_deletion", F.col("ts"))).alias("renamed"),
        F.max(F.when(F.col("step") == "log.deleted", F.col("ts"))).alias("deleted"),
        F.max_by(F.when(F.col("step").isin(*DELETION_STATES), F.col("step")), F.struct(*IN_ORDER)).alias(
            "state"
        ),
    )
    return (
        assigned.unionByName(named.select("partition", "broker"))
        .distinct()
        .join(per_replica, ["partition", "broker"], "left")
        .crossJoin(asked)
        .select(
            F.lit(topic).alias("topic"), "partition", "broker", "requested", "renamed", "deleted", "state"
        )
    )
