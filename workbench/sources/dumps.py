"""The controller's dump lines taken apart: one row an entry of what the line lists.

A DEBUG or TRACE dump holds the controller's whole view at that moment in one field: "All leaders = ..."
(`controller.all_leaders`, doControlledShutdown, every release) lists its leadership cache and "Preferred
replicas by broker ..." (`leader_election.preferred_by_broker`, checkAndTriggerAutoLeaderRebalance,
0.11-2.4) each partition's assignment. The entries are printed by Scala's toString, so they are read with
one pattern each (RE2, in Spark): a partition is `t-0` (TopicPartition) or, before 1.0, `[t,0]`
(TopicAndPartition); LeaderIsrAndControllerEpoch prints `(Leader:1,ISR:1,2,LeaderEpoch:3,ZkVersion:4,
ControllerEpoch:5)` (KafkaController.scala @1.1.1 l.1616, @2.8.2 l.2580), with `LeaderRecoveryState:`
from 3.2 (@3.6.2 l.2766) and no ZkVersion at 0.10 (@0.10.2.2 l.1444).
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

_PARTITION = r"(?:\[([^,\[\]\s]+),(\d+)\]|([^,()\[\]\s]+)-(\d+))"  # [t,0] before 1.0, else t-0
_LEADER = (
    r"\(" + _PARTITION + r",\(Leader:(-?\d+),ISR:([-\d,]*),(?:LeaderRecoveryState:\w+,)?"
    r"LeaderEpoch:(-?\d+)(?:,ZkVersion:(-?\d+))?,ControllerEpoch:(-?\d+)\)\)"
)
_ASSIGNED = _PARTITION + r" -> \w+\(([-\d, ]*)\)"  # t-0 -> List(1, 2): a Seq's toString
_WHERE = ("broker_id", "ts", "file", "line_no")


def leaders_listed(events: DataFrame) -> DataFrame:
    """Each partition of each "All leaders" line: the line's broker_id, ts, file, line_no, then topic,
    partition, leader, isr (array), leader_epoch, zk_version (null at 0.10), controller_epoch."""
    names = ("leader", "isr", "leader_epoch", "zk_version", "controller_epoch")
    return _entries(events, "controller.all_leaders", "leaders", _LEADER, names).select(
        *_WHERE,
        "topic",
        "partition",
        F.col("leader").cast("int").alias("leader"),
        _ints(F.col("isr"), ",").alias("isr"),
        *(F.nullif(F.col(n), F.lit("")).cast("int").alias(n) for n in names[2:]),
    )


def preferred_listed(events: DataFrame) -> DataFrame:
    """Each partition of each "Preferred replicas by broker" line: where the line is, topic, partition,
    replicas (array, as the controller held them) and preferred (their first, the map's key)."""
    replicas = _ints(F.col("replicas"), ", ")
    return _entries(
        events, "leader_election.preferred_by_broker", "by_broker", _ASSIGNED, ("replicas",)
    ).select(*_WHERE, "topic", "partition", replicas.alias("replicas"), replicas[0].alias("preferred"))


def _entries(events: DataFrame, kind: str, field: str, pattern: str, names: tuple[str, ...]) -> DataFrame:
    """One row an occurrence of `pattern` in the field, its groups after the partition's four by name."""
    dumps = events.where(F.col("event") == kind).select(*_WHERE, F.col("attrs")[field].alias("v"))
    groups = ("old_topic", "old_partition", "topic_", "partition_", *names)
    found = [F.regexp_extract_all("v", F.lit(pattern), i + 1).alias(g) for i, g in enumerate(groups)]
    zipped = F.arrays_zip(*found)
    e = dumps.select(*_WHERE, F.explode(zipped).alias("e")).select(*_WHERE, "e.*")
    topic = F.when(F.col("topic_") != "", F.col("topic_")).otherwise(F.col("old_topic"))
    partition = F.when(F.col("partition_") != "", F.col("partition_")).otherwise(F.col("old_partition"))
    return e.select(*_WHERE, topic.alias("topic"), partition.cast("int").alias("partition"), *names)


def _ints(listed: Column, separator: str) -> Column:
    """'1,2' -> [1, 2]; '' -> []."""
    return F.when(listed == "", F.array().cast("array<int>")).otherwise(
        F.split(listed, separator).cast("array<int>")
    )
