"""A topic deletion's steps, as every analysis and plot reads them: ZooKeeper's (the marker's create and
delete, the topic znode's delete) and the brokers' (the controller's TopicDeletionManager lines, replica
state changes, '-delete' renames and log removals), each with the evidence to open (`analysis.deletion`
judges them)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from pyspark.sql import Column, DataFrame, Row
from pyspark.sql import functions as F

from workbench.kafka.znode_frames import reassignment_requested
from workbench.kafka.znodes import DELETE_MARKER_PATH, TOPIC_PATH
from workbench.model.refs import file_ref_col
from workbench.model.views import views
from workbench.together import Ask, given

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
    log removed), state (its last replica state in the controller's log) and completed (the topic's: the
    marker or topic znode removed, else the controller's line; null while it lasts); each time on its
    source's clock. Replicas are those ZooKeeper still assigns and those the logs name."""
    steps = timeline(bundle).where(F.col("topic") == topic)

    def earliest(step: Column) -> Column:
        """The first time of those steps, ZooKeeper's txn before the controller's line."""
        return F.min_by("ts", F.when(step, F.struct(F.col("zxid").isNull(), "ts")))

    asked = steps.agg(
        earliest(F.col("step").isin("requested", "deletion.started")).alias("requested"),
        earliest(F.col("step").isin("marker removed", "topic znode removed", "deletion.completed")).alias(
            "completed"
        ),
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
            F.lit(topic).alias("topic"),
            "partition",
            "broker",
            "requested",
            "renamed",
            "deleted",
            "state",
            "completed",
        )
    )


# -- what the steps, the tree and the data dirs say of each deletion: the deletion analysis's facts ----------
@dataclass(frozen=True)
class Step:
    """One step of a deletion: when (its source's clock), the evidence to open, its zxid (ZooKeeper's)."""

    ts: datetime | None
    ref: str
    zxid: int | None = None


@dataclass(frozen=True)
class Halt:
    """The last halt of a deletion: the controller's reason (step deletion.halted), or a storage error
    (step log_dir.io_error)."""

    step: str
    detail: str | None
    ref: str


@dataclass(frozen=True)
class Steps:
    """What a topic's deletion steps say, over every source."""

    topic: str
    asked: Step | None = None  # the first request: the marker's create, else the controller's line
    done: Step | None = None  # the last finishing step (the marker's removal included)
    finished: bool = False  # the topic znode removed or the controller's 'completed' line
    halts: tuple[str, ...] = ()  # the controller's halting reasons, sorted
    halt_refs: tuple[str, ...] = ()  # the first two of their lines
    last_halt: Halt | None = None
    refused: str | None = None  # the line saying delete.topic.enable=false dropped it


@dataclass(frozen=True)
class Marker:
    """A topic still marked for deletion in ZooKeeper's tree, with its partitions' replicas (None: its
    topic znode is gone), those being reassigned, whether /admin/reassign_partitions names it, and the
    (partition, broker) replicas with a live dir in the data dirs."""

    topic: str
    path: str
    czxid: int
    ctime: datetime
    replicas: dict[int, list[int]] | None
    reassigning: list[int] = field(default_factory=list)
    reassignment_asked: bool = False
    on_disk: frozenset[tuple[int, int]] = frozenset()


@dataclass(frozen=True)
class DeleteDir:
    """A '-delete' dir on a broker's disk, with its rename where the broker's log says it, and the error
    its removal failed on (the I/O error at the root of LogManager's "Exception while deleting" line)."""

    broker: int
    topic: str
    partition: int
    renamed: datetime | None
    ref: str | None
    failed: str | None = None
    failed_ref: str | None = None


@dataclass(frozen=True)
class Stray:
    """Live dirs of a topic ZooKeeper does not have, on one broker."""

    broker: int
    topic: str
    partitions: list[int]
    log_dir: str


def markers(bundle: Bundle) -> Ask[list[Marker]]:
    """The topics queued for deletion by name, each with its partitions' replicas (None: no topic znode),
    those being reassigned, whether a reassignment of it is requested and the replicas on disk."""
    v = views(bundle)
    marked = v.delete_markers.select("topic")
    moving = F.size(F.coalesce("adding", F.array())) + F.size(F.coalesce("removing", F.array())) > 0
    parts = (
        v.partitions.join(marked, "topic", "left_semi")
        .groupBy("topic")
        .agg(
            F.collect_list(F.struct("partition", "replicas")).alias("parts"),
            F.sort_array(F.collect_list(F.when(moving, F.col("partition")))).alias("reassigning"),
        )
    )
    asked = (
        reassignment_requested(bundle.znodes)
        .join(marked, "topic", "left_semi")
        .groupBy("topic")
        .agg(F.lit(True).alias("asked"))
    )
    held = (
        v.replicas.where(F.col("dir_state") == "live")
        .join(marked, "topic", "left_semi")
        .groupBy("topic")
        .agg(F.collect_set(F.struct("partition", "broker_id")).alias("held"))
    )
    found = (
        v.delete_markers.join(parts, "topic", "left")
        .join(asked, "topic", "left")
        .join(held, "topic", "left")
        .orderBy("topic")
    )

    def read(rows: list[Row]) -> list[Marker]:
        return [
            Marker(
                m.topic,
                m.path,
                m.czxid,
                m.ctime,
                {p.partition: list(p.replicas or []) for p in m.parts} if m.parts is not None else None,
                list(m.reassigning or []),
                bool(m.asked),
                frozenset((h.partition, h.broker_id) for h in m.held or ()),
            )
            for m in rows
        ]

    return Ask(found, read)


def steps_by_topic(steps: DataFrame, marked: DataFrame | None) -> Ask[dict[str, Steps]]:
    """Per topic, in one pass over the steps: its request, its end, its halts and a refusal; only the
    topics whose deletion finished, was refused or is still marked (`marked`: their topics)."""

    def at(step: str, *more: str) -> Column:
        return F.col("step").isin(step, *more)

    finished = at("topic znode removed", "deletion.completed")
    halted = at("deletion.halted")
    if marked is not None:
        steps = steps.join(marked.select("topic", F.lit(True).alias("marked")), "topic", "left")
    rows = (
        steps.groupBy("topic")
        .agg(
            F.min_by(
                F.struct("ts", "ref", "zxid"),
                F.when(at("requested", "deletion.started"), F.struct(F.col("zxid").isNull(), *IN_ORDER)),
            ).alias("asked"),
            F.max_by(
                F.struct("ts", "ref", "zxid"),
                F.when(
                    finished | at("marker removed"),
                    F.struct(F.coalesce(F.col("zxid"), F.lit(0)), *IN_ORDER),
                ),
            ).alias("done"),
            F.max(finished).alias("finished"),
            F.sort_array(F.collect_set(F.when(halted, F.col("detail")))).alias("halts"),
            F.slice(F.sort_array(F.collect_list(F.when(halted, F.col("ref")))), 1, 2).alias("halt_refs"),
            F.max_by(
                F.struct("step", "detail", "ref"),
                F.when(at("deletion.halted", "log_dir.io_error"), F.struct(*IN_ORDER)),
            ).alias("last_halt"),
            F.min(F.when(at("deletion.disabled"), F.col("ref"))).alias("refused"),
            F.max(F.col("marked") if marked is not None else F.lit(False)).alias("marked"),
        )
        .where(F.col("finished") | F.col("refused").isNotNull() | F.col("marked"))
    )
    return Ask(
        rows,
        lambda rs: {
            r.topic: Steps(
                r.topic,
                Step(r.asked.ts, r.asked.ref, r.asked.zxid) if r.asked is not None else None,
                Step(r.done.ts, r.done.ref, r.done.zxid) if r.done is not None else None,
                bool(r.finished),
                tuple(r.halts),
                tuple(r.halt_refs),
                Halt(r.last_halt.step, r.last_halt.detail, r.last_halt.ref)
                if r.last_halt is not None
                else None,
                r.refused,
            )
            for r in rs
        },
    )


def delete_dirs(bundle: Bundle, steps: DataFrame) -> Ask[list[DeleteDir]]:
    dirs = (
        views(bundle)
        .replicas.where(F.col("dir_state") == "delete")
        .select("broker_id", "dir_name", "topic", "partition")
    )
    renamed = steps.where(F.col("step") == "log.renamed_for_deletion").select(
        F.col("broker").alias("broker_id"),
        F.regexp_extract("detail", r"([^/]+)$", 1).alias("dir_name"),
        "ts",
        "ref",
    )
    # "Exception while deleting Log(dir=<path>, topic=...) in dir D." (2.1+; `Log(<path>)` before), its
    # stack's last cause the I/O error (LogManager.deleteLogs, 2.5.1:821 2.8.2:891 3.6.2:1095)
    path = F.regexp_extract(F.col("attrs")["log_name"], r"^Log\((?:dir=)?([^,)]+)", 1)
    cause = F.regexp_extract(F.coalesce("stack_trace", F.lit("")), r"(?s).*Caused by: ([^\n]+)", 1)
    failed = (
        bundle.cluster_events.where(F.col("event") == "log.delete_failed")
        .select(
            "broker_id",
            F.regexp_extract(path, r"([^/\\]+)$", 1).alias("dir_name"),
            "ts",
            F.struct(
                F.coalesce(F.nullif(cause, F.lit("")), F.col("attrs")["exception"]).alias("error"),
                file_ref_col("file", "line_no").alias("ref"),
            ).alias("f"),
        )
        .groupBy("broker_id", "dir_name")
        .agg(F.min_by("f", "ts").alias("f"))
    )
    rows = dirs.join(renamed, ["broker_id", "dir_name"], "left").join(
        failed, ["broker_id", "dir_name"], "left"
    )
    return Ask(
        rows,
        lambda rs: [
            DeleteDir(r.broker_id, r.topic, r.partition, r.ts, r.ref, r.f and r.f.error, r.f and r.f.ref)
            for r in rs
        ],
    )


def strays(bundle: Bundle) -> Ask[list[Stray]]:
    """Live replicas on disk of topics ZooKeeper's tree does not hold; none where the tree was not captured
    (every replica would look a stray)."""
    v = views(bundle)
    if not v.evidence.zk_state:
        return given([])
    rows = (
        v.replicas.where(F.col("dir_state") == "live")
        .join(v.topics.select("topic"), "topic", "left_anti")
        .groupBy("broker_id", "topic")
        .agg(F.sort_array(F.collect_set("partition")).alias("partitions"), F.min("log_dir").alias("log_dir"))
    )
    return Ask(rows, lambda rs: [Stray(r.broker_id, r.topic, list(r.partitions), r.log_dir) for r in rs])
