"""Deletions the controller's lines show begun and not completed, where ZooKeeper's state is absent (its
`/admin/delete_topics` markers, where held, say what is pending: `deletion_steps.markers`).

The TopicDeletionManager logs each step (catalog `deletion.*`, TopicDeletionManager.scala 2.5.1-3.6.2): the
start ("Starting topic deletion", "Deletion of topic t (re)started"), each halt and its reason ("Halted
deletion of topics t due to ..."), the replicas whose deletion failed ("Deletion failed for replicas
[Topic=t,Partition=p,Replica=r],..."), the brokers' answers to its StopReplica ("partition errors =
HashMap(t-0 -> KAFKA_STORAGE_ERROR, ...)"), the topics it found pending when it started ("List of topics
to be deleted: ...") and those of them it held back there without a halt line ("List of topics ineligible
for deletion: ...": a replica offline, its broker not registered or its log dir failed, or a reassignment
in progress; KafkaController.fetchTopicDeletionsInProgress 2.5.1:784-795 2.8.2:964-975), and the end
("Deletion of topic t successfully completed"). A deletion is unfinished where its last start (or a
controller finding it pending) has no completion after it, on one clock: the controller's lines are its
own broker's, and a new controller's say only what it found pending.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING

from pyspark.sql import DataFrame, Row, Window
from pyspark.sql import functions as F

from workbench.model.deletion_steps import topics_of
from workbench.model.refs import Said
from workbench.together import Ask

if TYPE_CHECKING:
    from workbench.frames import Bundle

STARTS = ("deletion.started", "deletion.topic_started", "deletion.restarted_on_broker_startup")
INELIGIBLE = "controller.topics_ineligible_for_deletion"
_REPLICA = r"\[Topic=([^,\]]+),Partition=(\d+),Replica=(\d+)\]"
_ANSWER = r"([^\s,()]+)-(\d+) -> ([A-Z_]+)"


@dataclass(frozen=True)
class Unfinished:
    """A deletion begun and not completed as far as the controller's lines go: its last start (or a new
    controller finding it pending), its halts' reasons, the replicas whose deletion failed (`p@broker`),
    the errors brokers answered its StopReplica with, and its last line."""

    topic: str
    started: Said
    pending_at_start: bool  # a controller found it pending when it started (its own start not logged)
    halts: list[str]
    halt: Said | None  # the last halt
    failed: list[str]
    errors: list[str]
    last: Said
    held: Said | None = None  # the same start listed it ineligible: held back from then, no halt logged


def unfinished(bundle: Bundle, limit: int) -> Ask[list[Unfinished]]:
    """The first `limit` unfinished deletions by topic (a query over the controller's deletion lines)."""
    ev = bundle.cluster_events.where(
        F.col("event").startswith("deletion.")
        | F.col("event").isin("controller.topics_to_delete", INELIGIBLE)
    )
    a = F.col("attrs")
    named = F.coalesce(a["topics"], a["topic"], F.col("topic"))
    failed = F.transform(
        F.regexp_extract_all(a["replicas"], F.lit(_REPLICA), 0),
        lambda x: F.struct(
            F.regexp_extract(x, _REPLICA, 1).alias("t"),
            F.concat(F.regexp_extract(x, _REPLICA, 2), F.lit("@"), F.regexp_extract(x, _REPLICA, 3)).alias(
                "r"
            ),
        ),
    )
    answers = F.transform(
        F.regexp_extract_all(a["partition_errors"], F.lit(_ANSWER), 0),
        lambda x: F.struct(
            F.regexp_extract(x, _ANSWER, 1).alias("t"), F.regexp_extract(x, _ANSWER, 3).alias("r")
        ),
    )
    per_topic = (
        ev.select(
            "event",
            "ts",
            "line_no",
            "file",
            a["reason"].alias("reason"),
            F.explode(
                F.when(F.col("event") == "deletion.replica_failed", failed)
                .when(F.col("event") == "deletion.stop_replica_response", answers)
                .otherwise(
                    F.transform(
                        topics_of(named),
                        lambda t: F.struct(t.alias("t"), F.lit(None).cast("string").alias("r")),
                    )
                )
            ).alias("x"),
        )
        .select(
            "event", "ts", "line_no", "file", "reason", F.col("x.t").alias("topic"), F.col("x.r").alias("r")
        )
        .where(F.col("topic") != "")
    )
    order = F.struct("ts", "line_no", "file")

    def last(cond: F.Column) -> F.Column:
        return F.max_by(F.when(cond, F.struct("ts", "file", "line_no")), F.when(cond, order))

    begun = F.col("event").isin(*STARTS) | (F.col("event") == "controller.topics_to_delete")
    rows = (
        per_topic.groupBy("topic")
        .agg(
            last(begun).alias("started"),
            F.max_by(F.col("event") == "controller.topics_to_delete", F.when(begun, order)).alias("pending"),
            last(F.col("event") == "deletion.completed").alias("completed"),
            F.sort_array(F.collect_set(F.when(F.col("event") == "deletion.halted", F.col("reason")))).alias(
                "halts"
            ),
            last(F.col("event") == "deletion.halted").alias("halt"),
            last(F.col("event") == INELIGIBLE).alias("ineligible"),
            F.sort_array(
                F.collect_set(F.when(F.col("event") == "deletion.replica_failed", F.col("r")))
            ).alias("failed"),
            F.sort_array(
                F.collect_set(
                    F.when(
                        (F.col("event") == "deletion.stop_replica_response") & (F.col("r") != "NONE"),
                        F.col("r"),
                    )
                )
            ).alias("errors"),
            F.max_by(F.struct("ts", "file", "line_no"), order).alias("last"),
        )
        .where(
            F.col("started").isNotNull()
            & (F.col("completed").isNull() | (F.col("completed.ts") < F.col("started.ts")))
        )
        .orderBy("topic")
        .limit(limit)  # at most `limit` topics
    )
    return Ask(rows, _unfinished)


def _unfinished(rows: list[Row]) -> list[Unfinished]:
    return [
        Unfinished(
            r.topic,
            Said(**r.started.asDict()),
            bool(r.pending),
            [h for h in r.halts if h],
            Said(**r.halt.asDict()) if r.halt else None,
            list(r.failed),
            list(r.errors),
            Said(**r.last.asDict()),
            _held(r),
        )
        for r in rows
    ]


def _held(r: Row) -> Said | None:
    """The new controller's listing of the topic as ineligible, where it is the one its start printed with
    the pending topics (the next lines of one call, so the same file within a second) and nothing began
    it again since: init keeps only the pending topics of that list ineligible (TopicDeletionManager.init
    2.5.1:94-101), so the deletion waited from its start without a halt line."""
    if not r.pending or r.ineligible is None:
        return None
    held, started = Said(**r.ineligible.asDict()), r.started
    same_start = held.file == started.file and held.line_no > started.line_no
    return held if same_start and held.ts - started.ts <= timedelta(seconds=1) else None


def deleting(bundle: Bundle) -> DataFrame:
    """topic, from_ts, to_ts (null: no completion follows): each stretch in which the controller's lines
    show a topic under deletion, when its partitions go offline on purpose (TopicDeletionManager takes
    their replicas offline before deleting them)."""
    ev = bundle.cluster_events.where(F.col("event").isin(*STARTS, "deletion.completed"))
    a = F.col("attrs")
    rows = ev.select(
        F.explode(topics_of(F.coalesce(a["topics"], a["topic"], F.col("topic")))).alias("topic"),
        "ts",
        "event",
    )
    w = Window.partitionBy("topic").orderBy("ts").rowsBetween(1, Window.unboundedFollowing)
    done = F.min(F.when(F.col("event") == "deletion.completed", F.col("ts"))).over(w)
    return rows.select("topic", F.col("ts").alias("from_ts"), done.alias("to_ts"), "event").where(
        F.col("event") != "deletion.completed"
    )


@dataclass(frozen=True)
class Recreated:
    """A topic the controller saw created again after a deletion of it completed: the completion and the
    creation ("New topics: [...]", KafkaController.processTopicChange; every release words it so)."""

    topic: str
    deleted: Said
    created: Said


def recreated(bundle: Bundle, limit: int) -> Ask[list[Recreated]]:
    """The first `limit` re-creations by topic and time, each delete/re-create cycle on its own: a query
    over the controller's completions and topic changes."""
    ev = bundle.cluster_events
    a = F.col("attrs")
    said = F.struct("ts", "file", "line_no")
    steps = (
        ev.where(F.col("event") == "deletion.completed")
        .select(
            F.explode(topics_of(F.coalesce(a["topics"], a["topic"], F.col("topic")))).alias("topic"),
            said.alias("at"),
            F.lit(False).alias("made"),
        )
        .unionByName(
            ev.where(F.col("event") == "topic.change").select(
                F.explode(topics_of(a["new_topics"])).alias("topic"),
                said.alias("at"),
                F.lit(True).alias("made"),
            )
        )
    )
    w = Window.partitionBy("topic").orderBy("at.ts", "at.line_no", "at.file")
    rows = (
        steps.withColumn("before", F.lag(F.struct("made", "at")).over(w))
        .where(F.col("made") & ~F.col("before.made"))
        .orderBy("topic", "at.ts")
        .limit(limit)  # at most `limit` cycles
    )
    return Ask(
        rows,
        lambda rs: [Recreated(r.topic, Said(**r.before.at.asDict()), Said(**r.at.asDict())) for r in rs],
    )
