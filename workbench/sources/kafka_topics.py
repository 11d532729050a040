"""`kafka-topics --describe` as SREs paste it -> partition_descriptions, with where and when each was taken.

The layouts, from TopicCommand at each release (docs/pasted-evidence.md has the citations):
- a topic line `Topic:t<TAB>PartitionCount:3<TAB>ReplicationFactor:3<TAB>Configs:a=b` (before 2.4, no space
  after the colons), `Topic: t<TAB>TopicId: <id><TAB>PartitionCount: 3 ...` from 2.4, TopicId from 2.8 and
  only for a topic that has one; `MarkedForDeletion:true` after it over ZooKeeper (0.11-2.8);
- a line per partition `<TAB>Topic: t<TAB>Partition: 0<TAB>Leader: 1<TAB>Replicas: 1,2,3<TAB>Isr: 1,2`, then
  `Adding Replicas:`/`Removing Replicas:` (2.6+, while reassigning), `Elr:`/`LastKnownElr:` (3.8+) and
  `MarkedForDeletion: true` (over ZooKeeper). A leader is `none` when there is none (`-1` over ZooKeeper
  before 2.4, kept as printed).
- the partition filters (--under-replicated-partitions, --unavailable-partitions, ...) print no topic line:
  those partitions' topic fields are null, not known.
A terminal's copy turns the tabs into spaces, and trailing spaces may be gone: any white space separates.
Lines from other commands in the same paste (prompts, the tool's log on stderr, blank lines) are structure;
anything else that is not a line of the output is a bad record (sources/pasted.py reads the files).
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from workbench.recognise import PARTITION_LINE, TOPIC_LINE

COMMAND = r"^(?:.*?[$#%>] +)?\S*kafka-topics(?:\.sh|\.bat)?\s.*$"  # the command, behind a prompt
STRUCTURE = (
    r"^\s*$"  # blank
    r"|^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] [A-Z]+ .*$"  # the tool's log4j on stderr
)
# The partition filters (TopicCommand.scala 2.8.2 l.668-675): each prints only the partitions it names
FILTER = r"--((?:unavailable|under-replicated|under-min-isr|at-min-isr)-partitions)\b"
ERROR = r"^(?:Error while executing topic command|Exception in thread|Topic .* doesn't exist)"
BAD = "not a line of kafka-topics --describe (0.10-3.9)"
_CONFIG_PAIRS = r",(?=[^,=]+=)"  # a comma in a value (cleanup.policy=compact,delete) is not a pair's end


def _ids(text: Column) -> Column:
    return F.when(text == "N/A", None).otherwise(
        F.filter(F.split(text, ","), lambda x: x != "").cast("array<int>")
    )


def rows(lines: DataFrame) -> DataFrame:
    """partition_descriptions from the `topic` and `partition` lines (kind, by pasted.py) of each file:
    a row per partition line with its topic line's fields (the last topic line before it, when it names
    the same topic), and a row per topic line that no partition line follows."""
    is_topic = F.col("kind") == "topic"

    def topic(group: int) -> Column:
        return F.regexp_extract("line", TOPIC_LINE, group)

    def part(group: int) -> Column:
        return F.regexp_extract("line", PARTITION_LINE, group)

    topic_fields = F.struct(
        topic(1).alias("topic"),
        F.nullif(topic(2), F.lit("")).alias("topic_id"),
        topic(3).cast("int").alias("partition_count"),
        topic(4).cast("int").alias("replication_factor"),
        F.str_to_map(F.nullif(topic(5), F.lit("")), F.lit(_CONFIG_PAIRS), F.lit("=")).alias("configs"),
        (topic(6) != "").alias("marked"),
    )
    before = Window.partitionBy("file").orderBy("line_no")
    with_topic = lines.select(
        "*",
        F.last(F.when(is_topic, topic_fields), ignorenulls=True).over(before).alias("t"),
        F.lead("kind").over(before).alias("next_kind"),
    )
    own = F.col("t.topic") == F.when(is_topic, topic(1)).otherwise(part(1))
    t = F.when(own, F.col("t"))
    marked = F.when((part(10) != "") | t["marked"], True)
    alone = is_topic & ~F.coalesce(F.col("next_kind") == "partition", F.lit(False))
    return with_topic.where((F.col("kind") == "partition") | alone).select(
        F.when(is_topic, topic(1)).otherwise(part(1)).alias("topic"),
        t["topic_id"].alias("topic_id"),
        F.when(~is_topic, part(2).cast("int")).alias("partition"),
        F.when(~is_topic & (part(3) != "none"), part(3).cast("int")).alias("leader"),
        F.when(~is_topic, _ids(part(4))).alias("replicas"),
        F.when(~is_topic, _ids(part(5))).alias("isr"),
        F.when(F.col("line").contains("Adding Replicas:"), _ids(part(6))).alias("adding_replicas"),
        F.when(F.col("line").contains("Removing Replicas:"), _ids(part(7))).alias("removing_replicas"),
        F.when(F.col("line").rlike(r"\sElr:"), _ids(part(8))).alias("elr"),
        F.when(F.col("line").contains("LastKnownElr:"), _ids(part(9))).alias("last_known_elr"),
        marked.alias("marked_for_deletion"),
        F.nullif(F.regexp_extract(F.col("seg.text"), FILTER, 1), F.lit("")).alias("shown_by"),
        t["partition_count"].alias("partition_count"),
        t["replication_factor"].alias("replication_factor"),
        t["configs"].alias("configs"),
        "file",
        "line_no",
        "taken_at",
    )
