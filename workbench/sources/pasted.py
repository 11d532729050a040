"""Everything under pasted/: each file read once, each line given a kind, each kind to its reader.

A paste is an SRE's terminal: one file may hold a `kafka-topics --describe`, a ZooKeeper shell session
and other commands. A line that starts a command (a shell prompt, a zkCli prompt, a command zkCli echoed)
opens a segment that runs to the next; each reader reads its lines, and a line no reader takes is a bad
record with the reason of the segment it is in. A file of no kind read is one bad record: "not read".
"""

from __future__ import annotations

from dataclasses import dataclass

from pyspark.sql import Column, DataFrame, SparkSession, Window
from pyspark.sql import functions as F

from workbench import recognise, schemas
from workbench.bundle import Pasted
from workbench.kafka import znodes
from workbench.sources import kafka_log_dirs, kafka_topics, zk_export, zk_shell
from workbench.sources.common import cut, empty, lines_of, pasted_texts

SHELL = (  # another command at a shell's prompt: [root@b1 ~]# ..., user@host:~$ ..., $ ...
    r"^(?:\[[^\]]*@[^\]]*\] ?[$#]|[\w.-]+@[\w.-]+(?::[^\s$#]*)?[$#]|[$#]) +\S.*$"
)
READ = ("topic", "partition", "log_dirs", "zk_command", "zs_command", "tree_node")
KINDS = "kafka-topics --describe, kafka-log-dirs --describe, a ZooKeeper shell transcript or zk_shell export"


@dataclass(frozen=True)
class PastedFrames:
    partition_descriptions: DataFrame
    log_dir_descriptions: DataFrame
    znodes_observed: DataFrame
    bad_records: DataFrame


def read_pasted(spark: SparkSession, pasted: list[Pasted]) -> PastedFrames:
    """The frames of what was pasted about the whole cluster (pasted/)."""
    if not pasted:
        bad = empty(spark, schemas.BAD_RECORDS)
        return PastedFrames(
            empty(spark, schemas.PARTITION_DESCRIPTIONS),
            empty(spark, schemas.LOG_DIR_DESCRIPTIONS),
            empty(spark, schemas.ZNODES_OBSERVED),
            bad,
        )
    origin = spark.createDataFrame(
        [(str(p.path), p.file, p.taken_at, p.timezone) for p in pasted],
        "abs string, file string, taken string, tz string",
    )
    texts = pasted_texts(spark, [str(p.path) for p in pasted], origin).withColumn(
        "export", zk_export.is_export(F.col("value"))
    )
    lines = lines_of(texts)
    exports = zk_export.export_rows(texts.where("export"), lines.where("export"))
    kinds = _segments(lines.where(~F.col("export")).withColumn("kind", _kind(F.col("line"))))
    descriptions = kafka_topics.rows(kinds.where(F.col("kind").isin("topic", "partition")))
    log_dirs, json_bad = kafka_log_dirs.rows(kinds.where(F.col("kind") == "log_dirs"))
    observed, zk_bad = zk_shell.observations(kinds.where(F.col("seg.tool").isin("zk", "zs")))
    readers = json_bad.withColumn("source", F.lit("kafka-log-dirs")).unionByName(
        zk_bad.withColumn("source", F.lit("zookeeper-shell"))
    )
    observed = _kafkas(observed.unionByName(exports))
    return PastedFrames(descriptions, log_dirs, observed, _bad(kinds, readers))


def _kafkas(observed: DataFrame) -> DataFrame:
    """Paths as Kafka names them: a transcript made without Kafka's chroot (`/kafka/brokers/ids`) has it
    taken off, the chroot being the one the file's paths show (the command keeps it as typed)."""
    shown = F.nullif(F.regexp_extract("path", znodes.CHROOT, 1), F.lit(""))
    chroot = F.min(shown).over(Window.partitionBy("file"))
    path = F.col("path")
    return (
        observed.withColumn("chroot", chroot)
        .withColumn(
            "path",
            F.when(path == F.col("chroot"), F.lit("/"))
            .when(
                path.startswith(F.concat(F.col("chroot"), F.lit("/"))),
                F.expr("substr(path, length(chroot) + 1)"),
            )
            .otherwise(path),
        )
        .drop("chroot")
    )


def _kind(line: Column) -> Column:
    zk = zk_shell.kind(line)
    return (
        F.when(line.rlike(kafka_topics.TOPIC_LINE), "topic")
        .when(line.rlike(kafka_topics.PARTITION_LINE), "partition")
        .when(line.rlike(recognise.JSON_LINE), "log_dirs")
        .when(zk.isNotNull(), zk)
        .when(line.rlike(kafka_topics.COMMAND) | line.rlike(SHELL), "shell")
        .when(line.rlike(kafka_topics.STRUCTURE) | line.rlike(recognise.LOG_DIRS_STRUCTURE), "structure")
        .when(line.rlike(kafka_topics.ERROR) | line.rlike(kafka_log_dirs.ERROR), "error")
    )


def _segments(lines: DataFrame) -> DataFrame:
    """Each line with its file's kinds and the command whose segment it is in (seg: tool, text, cwd,
    line_no; null before the first), and `read`: the file holds a line of a kind read."""
    starts = F.col("kind").isin("zk_command", "zs_command", "shell")
    cmd = zk_shell.command(F.col("line"))
    seg = F.when(
        starts,
        F.struct(
            F.when(F.col("kind") == "shell", "shell").otherwise(cmd["tool"]).alias("tool"),
            F.when(F.col("kind") == "shell", F.col("line")).otherwise(cmd["text"]).alias("text"),
            cmd["cwd"].alias("cwd"),
            F.col("line_no"),
        ),
    )
    before = Window.partitionBy("file").orderBy("line_no")
    ours = Window.partitionBy("file")
    return lines.select(
        "*",
        F.last(seg, ignorenulls=True).over(before).alias("seg"),
        F.max(F.coalesce(F.col("kind").isin(*READ), F.lit(False)).cast("int")).over(ours).alias("file_read"),
        F.max(F.coalesce(F.col("kind").isin("topic", "partition"), F.lit(False)).cast("int"))
        .over(ours)
        .alias("described"),
    )


def _bad(kinds: DataFrame, readers: DataFrame) -> DataFrame:
    """Bad records of every pasted file: the lines of a read file that no reader took, the readers' own,
    and one per file that holds nothing read. `readers`: the readers' own (source, file, line_no, reason,
    line)."""
    outside = F.col("seg").isNull() | (F.col("seg.tool") == "shell")
    left = kinds.where(
        (F.col("file_read") == 1)
        & outside
        & (
            F.col("kind").isNull()
            | ~F.col("kind").isin("topic", "partition", "log_dirs", "structure", "shell")
        )
    )
    reason = (
        F.when(F.col("kind") == "error", "an error the command printed")
        .when(
            F.col("kind").isin("tree_top", "tree_node"),
            "a zk_shell tree without its command: the path it starts from is not known",
        )
        .when(F.col("described") == 1, kafka_topics.BAD)
        .otherwise(f"not a line of a paste read ({KINDS})")
    )
    lines = left.select(
        F.when(F.col("described") == 1, "kafka-topics").otherwise("pasted").alias("source"),
        "file",
        F.col("line_no").alias("position"),
        reason.alias("reason"),
        cut("line").alias("raw"),
    )
    own = readers.select(
        "source", "file", F.col("line_no").alias("position"), "reason", cut("line").alias("raw")
    )
    unread = kinds.where((F.col("file_read") == 0) & (F.col("line_no") == 1)).select(
        F.lit("pasted").alias("source"),
        "file",
        F.lit(None).cast("long").alias("position"),
        F.lit(f"not read: no line of a kind read from pasted/ ({KINDS})").alias("reason"),
        cut("line").alias("raw"),
    )
    return lines.unionByName(own).unionByName(unread)
