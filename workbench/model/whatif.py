"""What-ifs for a safety review, computed on the captured state and never executed: which topics a
`kafka-topics --delete --topic REGEX` would mark, which partitions would lose their leader if a broker
stopped now, and which topics' ids a pre-2.8 tool adding partitions through ZooKeeper would wipe.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from workbench.kafka.names import INTERNAL_TOPICS
from workbench.model.views import views

if TYPE_CHECKING:
    from workbench.frames import Bundle


def include_list_regex(raw: str) -> str:
    """TopicCommand's IncludeList (Whitelist before 2.8): commas become alternatives, spaces and
    surrounding quotes are dropped; a topic is chosen when the whole name matches."""
    regex = raw.strip().replace(",", "|").replace(" ", "")
    return regex.lstrip("\"'").rstrip("\"'")


def delete_would_mark(bundle: Bundle, pattern: str) -> DataFrame:
    """The topics `kafka-topics --delete --topic PATTERN` would choose (Java regex, whole name, as Spark's
    rlike is): topic, partitions, internal (refused: "a kafka internal topic and is not allowed to be
    marked for deletion"; with --zookeeper the command stops there) and already_marked."""
    v = views(bundle)
    regex = f"^(?:{include_list_regex(pattern)})$"
    marked = v.delete_markers.select("topic", F.lit(True).alias("already_marked"))
    return (
        v.topics.where(F.col("topic").rlike(regex))
        .select("topic", F.size(F.map_keys("assignment")).alias("partitions"))
        .withColumn("internal", F.col("topic").isin(*sorted(INTERNAL_TOPICS)))
        .join(marked, "topic", "left")
        .withColumn("already_marked", F.coalesce("already_marked", F.lit(False)))
        .orderBy("topic")
    )


def offline_if_stopped(bundle: Bundle, brokers: Iterable[int]) -> DataFrame:
    """Partitions that would have no leader if `brokers` stopped now (unclean leader election off): no
    replica of the ISR outside them is registered. topic, partition, leader, isr, replicas; only
    partitions those brokers hold, topics queued for deletion left out."""
    v = views(bundle)
    stopping = sorted(set(brokers))
    live = sorted(v.live_brokers - set(stopping))
    isr = F.coalesce("isr", F.array())
    survivors = F.filter(isr, lambda r: r.isin(*live)) if live else F.array()
    held = F.arrays_overlap(F.coalesce("replicas", F.array()), F.array(*[F.lit(b) for b in stopping]))
    return (
        v.partitions.join(v.delete_markers.select("topic"), "topic", "left_anti")
        .where(held & (F.size(survivors) == 0))
        .select("topic", "partition", "leader", "isr", "replicas")
        .orderBy("topic", "partition")
    )


def ids_an_old_tool_would_wipe(bundle: Bundle) -> DataFrame:
    """Topics whose znode holds a topic_id: a pre-2.8 tool adding partitions through ZooKeeper rewrites
    the znode as version 1 without it (KAFKA-14190), and the next controller mints another id that the
    brokers' partition.metadata will not match. topic, topic_id, partitions."""
    return (
        views(bundle)
        .topics.where(F.col("topic_id").isNotNull())
        .select("topic", "topic_id", F.size(F.map_keys("assignment")).alias("partitions"))
        .orderBy("topic")
    )
