"""What pasted output says of the cluster at the moment it was taken, read by Kafka's own rules: the
partitions `kafka-topics --describe` shows without a leader or under-replicated, and the topics it or a
ZooKeeper shell shows marked for deletion. Each row keeps its paste (file, line, taken_at): facts of
different moments are never joined as if they held at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from workbench.kafka.znodes import DELETE_MARKER_PATH

if TYPE_CHECKING:
    from workbench.frames import Bundle

DELETE_TOPICS = "/admin/delete_topics"


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
    """Partitions shown with no leader: topic, partition, replicas, isr, file, line_no, taken_at."""
    return (
        _partitions(bundle)
        .where(no_leader())
        .select("topic", "partition", "replicas", "isr", "file", "line_no", "taken_at")
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
