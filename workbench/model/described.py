"""What pasted output says of the cluster at the moment it was taken, read by Kafka's own rules: the
partitions `kafka-topics --describe` shows without a leader or under-replicated, and the topics it or a
ZooKeeper shell shows marked for deletion. Each row keeps its paste (file, line, taken_at): facts of
different moments are never joined as if they held at once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from pyspark.sql import Column, DataFrame, Row
from pyspark.sql import functions as F

from workbench.kafka.znodes import BROKER_IDS, DELETE_MARKER_PATH
from workbench.model.refs import TP
from workbench.model.views import views
from workbench.together import Ask, Joined, count, given
from workbench.together import rows as rows_of

if TYPE_CHECKING:
    from workbench.frames import Bundle

DELETE_TOPICS = "/admin/delete_topics"
DESCRIBE = "kafka-topics --describe (pasted)"  # what a check used, as coverage says it


def _partitions(bundle: Bundle) -> DataFrame:
    return bundle.partition_descriptions.where(F.col("partition").isNotNull() & F.col("replicas").isNotNull())


def no_leader() -> Column:
    """`Leader: none` (TopicCommand: the leader is null), or the state znode's -1 (LeaderAndIsr.NoLeader,
    2.8.2 l.23) that TopicCommand printed as it was before 2.4."""
    return F.col("leader").isNull() | (F.col("leader") == -1)


def replication_factor() -> Column:
    """TopicCommand's: the replicas less those being added while a reassignment runs (getReplicationFactor,
    2.8.2 l.596-609; before 2.6 no reassignment is printed, and all replicas count, 0.10.2.2 l.215)."""
    changing = F.array_union(
        F.coalesce("adding_replicas", F.array().cast("array<int>")),
        F.coalesce("removing_replicas", F.array().cast("array<int>")),
    )
    running = F.arrays_overlap("replicas", changing)
    return F.when(
        F.coalesce(running, F.lit(False)),
        F.size(F.array_except("replicas", F.coalesce("adding_replicas", F.array().cast("array<int>")))),
    ).otherwise(F.size("replicas"))


def offline(bundle: Bundle) -> DataFrame:
    """Partitions shown with no leader, or by `--unavailable-partitions` (a leader that is not a live
    broker: `hasUnavailablePartitions`, TopicCommand.scala 2.8.2 l.152-154, 3.6.2 l.143-145): topic,
    partition, replicas, isr, leader (the one printed, not live; null: none), file, line_no, taken_at."""
    return (
        _partitions(bundle)
        .where(no_leader() | (F.col("shown_by") == "unavailable-partitions"))
        .select(
            "topic",
            "partition",
            "replicas",
            "isr",
            F.when(~no_leader(), F.col("leader")).alias("leader"),
            "file",
            "line_no",
            "taken_at",
        )
    )


def under_replicated(bundle: Bundle) -> DataFrame:
    """Partitions shown with a leader and fewer in-sync replicas than their replication factor
    (PartitionDescription.isUnderReplicated, 2.8.2 l.136-138): topic, partition, replicas, isr,
    out_of_isr (the replicas not in it, sorted), file, line_no, taken_at."""
    return (
        _partitions(bundle)
        .where(~no_leader() & (F.size(F.coalesce("isr", F.array())) < replication_factor()))
        .select(
            "topic",
            "partition",
            "replicas",
            "isr",
            F.array_sort(F.array_except("replicas", F.coalesce("isr", F.array().cast("array<int>")))).alias(
                "out_of_isr"
            ),
            "file",
            "line_no",
            "taken_at",
        )
    )


def marked_for_deletion(bundle: Bundle) -> DataFrame:
    """Topics a paste shows marked for deletion: describe's MarkedForDeletion (0.11-2.8 over ZooKeeper),
    a child of /admin/delete_topics an `ls` printed, or the marker znode a command showed. topic, how,
    file, line_no, taken_at (one row per topic and paste)."""
    described = bundle.partition_descriptions.where(F.col("marked_for_deletion")).select(
        "topic",
        F.lit("kafka-topics --describe printed MarkedForDeletion").alias("how"),
        "file",
        "line_no",
        "taken_at",
    )
    observed = bundle.znodes_observed
    listed = observed.where((F.col("path") == DELETE_TOPICS) & F.col("children").isNotNull()).select(
        F.explode("children").alias("topic"),
        F.concat(F.lit("a pasted `"), F.col("command"), F.lit("` listed it")).alias("how"),
        "file",
        "line_no",
        "taken_at",
    )
    shown = observed.where(F.col("path").rlike(DELETE_MARKER_PATH) & F.col("exists")).select(
        F.regexp_extract("path", DELETE_MARKER_PATH, 1).alias("topic"),
        F.concat(F.lit("a pasted `"), F.coalesce("command", "observed_as"), F.lit("` showed it")).alias(
            "how"
        ),
        "file",
        "line_no",
        "taken_at",
    )
    return (
        described.unionByName(listed)
        .unionByName(shown)
        .groupBy("topic", "file", "taken_at")
        .agg(F.min_by("how", "line_no").alias("how"), F.min("line_no").alias("line_no"))
    )


# -- what the analyses ask of the pastes: a few rows each, as plain values -------------------------------
@dataclass(frozen=True)
class Group:
    """Partitions one paste shows alike (without a leader; under-replicated with the same brokers out of
    their ISR): how many, which, the brokers holding their replicas and the first lines showing them."""

    file: str
    taken_at: datetime | None
    partitions: int
    tps: list[TP]
    brokers: list[int]
    lines: list[int]
    out_of_isr: list[int] = field(default_factory=list)
    leader: int | None = None  # the leader `--unavailable-partitions` printed: a broker not live


@dataclass(frozen=True)
class Shown:
    """What the pastes show of a check's partitions: the groups, and whether any describe was pasted (so
    that none found is a describe read, not an absent one)."""

    groups: list[Group]
    described: bool


def _shown(bundle: Bundle, rows: DataFrame, *keys: str) -> Ask[Shown | None]:
    """Per paste (and keys) the partitions `rows` holds, and whether any describe was pasted, in one
    query; None for a bundle without pastes (no query)."""
    if not bundle.evidence.pasted:
        return given(None)
    found = (
        rows.groupBy("file", "taken_at", *keys)
        .agg(
            F.count("*").alias("n"),
            F.sort_array(F.collect_list(F.struct("topic", "partition"))).alias("tps"),
            F.sort_array(F.array_distinct(F.flatten(F.collect_list("replicas")))).alias("brokers"),
            F.slice(F.sort_array(F.collect_list("line_no")), 1, 5).alias("lines"),
        )
        .orderBy("file", *keys)
    )

    def read(found: list[Row], described: int) -> Shown:
        groups = [
            Group(
                g.file,
                g.taken_at,
                g.n,
                [TP(t.topic, t.partition) for t in g.tps],
                list(g.brokers),
                list(g.lines),
                list(g.out_of_isr) if "out_of_isr" in keys else [],
                g.leader if "leader" in keys else None,
            )
            for g in found
        ]
        return Shown(groups, bool(groups) or described > 0)

    return Joined(read, rows_of(found), count(bundle.partition_descriptions.limit(1)))


def offline_facts(bundle: Bundle) -> Ask[Shown | None]:
    return _shown(bundle, offline(bundle), "leader")


def under_replicated_facts(bundle: Bundle) -> Ask[Shown | None]:
    return _shown(bundle, under_replicated(bundle), "out_of_isr")


@dataclass(frozen=True)
class Registered:
    """The brokers a pasted `ls /brokers/ids` listed: those registered at that moment."""

    file: str
    line_no: int
    taken_at: datetime | None
    brokers: list[int]


@dataclass(frozen=True)
class Marked:
    """A topic a paste shows marked for deletion, the replicas of it the data dirs (copied or listed)
    still hold live, as `partition@broker`, and the brokers a pasted `ls /brokers/ids` listed (the one in
    the same paste where there is one)."""

    topic: str
    how: str
    file: str
    line_no: int
    taken_at: datetime | None
    replicas_left: list[str]
    registered: Registered | None = None

    @property
    def left_unregistered(self) -> list[int]:
        """Brokers holding a replica left that the listing did not show registered."""
        if self.registered is None:
            return []
        holding = {int(r.rsplit("@", 1)[1]) for r in self.replicas_left}
        return sorted(holding - set(self.registered.brokers))


def marked_facts(bundle: Bundle) -> list[Marked]:
    """The topics pastes show marked for deletion (none without pastes), each paste's own row."""
    if not bundle.evidence.pasted:
        return []
    rows = marked_for_deletion(bundle).orderBy("topic", "file").collect()
    if not rows:
        return []
    left: dict[str, list[str]] = {}
    for r in (
        views(bundle)
        .replicas.where(F.col("topic").isin(sorted({r.topic for r in rows})) & (F.col("dir_state") == "live"))
        .groupBy("topic")
        .agg(F.sort_array(F.collect_set(F.concat_ws("@", "partition", "broker_id"))).alias("left"))
        .collect()
    ):
        left[r.topic] = list(r.left)
    listed = [
        Registered(
            r.file, r.line_no, r.taken_at, sorted(int(c) for c in r.children if c.lstrip("-").isdigit())
        )
        for r in bundle.znodes_observed.where((F.col("path") == BROKER_IDS) & F.col("children").isNotNull())
        .orderBy(F.desc_nulls_last("taken_at"), "file", F.desc("line_no"))
        .collect()
    ]

    def registered(file: str) -> Registered | None:
        return next((r for r in listed if r.file == file), listed[0] if listed else None)

    return [
        Marked(r.topic, r.how, r.file, r.line_no, r.taken_at, left.get(r.topic, []), registered(r.file))
        for r in rows
    ]


@dataclass(frozen=True)
class FailedDir:
    """A log dir a pasted kafka-log-dirs --describe shows with an error, at the first line showing it."""

    file: str
    taken_at: datetime | None
    broker: int
    log_dir: str
    error: str
    line_no: int


def failed_dir_facts(bundle: Bundle) -> Ask[list[FailedDir]]:
    """The log dirs pasted kafka-log-dirs output shows failed (none without pastes)."""
    if not bundle.evidence.pasted:
        return given([])
    found = (
        bundle.log_dir_descriptions.where(F.col("error").isNotNull())
        .groupBy("file", "taken_at", "broker_id", "log_dir", "error")
        .agg(F.min("line_no").alias("line_no"))
        .orderBy("broker_id", "log_dir", "file")
    )
    return Ask(
        found,
        lambda rs: [FailedDir(r.file, r.taken_at, r.broker_id, r.log_dir, r.error, r.line_no) for r in rs],
    )
