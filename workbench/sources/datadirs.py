"""Broker log dirs -> datadir_files, partition_metadata, leader_epochs, checkpoints, meta_properties.

Every format is read as Kafka reads it (reference: FORMATS.md part A; sources cited in kafka/logdir.py):
a file Kafka would refuse goes to `bad_records` with Kafka's own error message and nothing in it is
loaded; the entries of files Kafka accepts are loaded with their line numbers.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, fields

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

from workbench import schemas
from workbench.bundle import LISTING, LogDir, metadata_files
from workbench.kafka import logdir as kafka
from workbench.sources.common import cut, decoded_path, empty
from workbench.sources.listings import read_listings
from workbench.spark import leaf_parallelism, narrowed

METADATA_GLOB = "{" + ",".join(sorted(kafka.ROOT_METADATA_FILES | kafka.PARTITION_METADATA_FILES)) + "}"
ENTRY_LINE = r"^(-?\d+)\s+(-?\d+)\s*$"  # leader-epoch-checkpoint: epoch start_offset
OFFSET_LINE = r"^(\S+)\s+(-?\d+)\s+(-?\d+)\s*$"  # offset checkpoints: topic partition offset


@dataclass
class DataDirFrames:
    datadir_files: DataFrame
    partition_metadata: DataFrame
    leader_epochs: DataFrame
    checkpoints: DataFrame
    meta_properties: DataFrame
    bad_records: DataFrame

    def frames(self) -> list[DataFrame]:
        return [getattr(self, f.name) for f in fields(self)]

    def cache(self) -> DataDirFrames:
        return DataDirFrames(*(narrowed(frame).cache() for frame in self.frames()))


def read_log_dirs(spark: SparkSession, dirs: list[LogDir]) -> DataDirFrames:
    """Load every log dir of a bundle; an empty list gives empty frames."""
    if not dirs:
        return DataDirFrames(
            *(
                empty(spark, s)
                for s in (
                    schemas.DATADIR_FILES,
                    schemas.PARTITION_METADATA,
                    schemas.LEADER_EPOCHS,
                    schemas.CHECKPOINTS,
                    schemas.META_PROPERTIES,
                    schemas.BAD_RECORDS,
                )
            )
        )
    files, bad_listing = _listing(spark, [d for d in dirs if d.listing is not None])
    pasted, bad_pasted = read_listings(spark, dirs)
    topic, partition, state = dir_parts(F.col("dir_name"))
    files = files.unionByName(
        pasted.select("*", topic.alias("topic"), partition.alias("partition"), state.alias("dir_state"))
    )
    meta = _metadata_files(spark, dirs).cache()  # read once: each kind of file and its bad records below
    pm, bad_pm = _partition_metadata(meta)
    le, bad_le = _leader_epochs(meta)
    cp, bad_cp = _checkpoints(meta)
    mp, bad_mp = _meta_properties(meta)
    empties = files.where(
        (F.col("size") == 0)
        & F.col("file").isin(kafka.PARTITION_METADATA, kafka.META_PROPERTIES)
        & (F.col("dir_name").isNotNull() == (F.col("file") == kafka.PARTITION_METADATA))
    ).select(
        F.col("file").alias("source"),
        F.when(F.col("line_no").isNull(), F.concat(F.regexp_replace("listing", "[^/]*$", ""), "path"))
        .otherwise(F.col("listing"))
        .alias("file"),
        F.col("line_no").alias("position"),
        F.lit("empty file; Kafka cannot read it").alias("reason"),
        F.lit("").alias("raw"),
    )
    bad = bad_listing
    for b in (bad_pasted, bad_pm, bad_le, bad_cp, bad_mp, empties):
        bad = bad.unionByName(b)
    return DataDirFrames(
        files.select(*schemas.DATADIR_FILES.fieldNames()),
        pm.select(*schemas.PARTITION_METADATA.fieldNames()),
        le.select(*schemas.LEADER_EPOCHS.fieldNames()),
        cp.select(*schemas.CHECKPOINTS.fieldNames()),
        mp.select(*schemas.META_PROPERTIES.fieldNames()),
        bad,
    )


def dir_parts(dir_name: Column) -> tuple[Column, Column, Column]:
    """(topic, partition, dir_state) of a partition dir name, as Log.parseTopicPartitionName does."""
    live_topic = F.regexp_extract(dir_name, kafka.LIVE_DIR, 1)
    sfx_topic = F.regexp_extract(dir_name, kafka.SUFFIXED_DIR, 1)
    sfx_state = F.regexp_extract(dir_name, kafka.SUFFIXED_DIR, 4)
    is_sfx = sfx_state != ""
    topic = F.when(is_sfx, sfx_topic).when(live_topic != "", live_topic)
    partition = F.when(is_sfx, F.regexp_extract(dir_name, kafka.SUFFIXED_DIR, 2)).when(
        live_topic != "", F.regexp_extract(dir_name, kafka.LIVE_DIR, 2)
    )
    state = (
        F.when(dir_name.isNull(), None)
        .when(is_sfx, sfx_state)
        .when(live_topic != "", "live")
        .otherwise("unrecognized")
    )
    return topic, partition.try_cast("int"), state


def _listing(spark: SparkSession, dirs: list[LogDir]) -> tuple[DataFrame, DataFrame]:
    """The listing.tsv files: find's own numbers, exact."""
    if not dirs:
        return empty(spark, schemas.DATADIR_FILES), empty(spark, schemas.BAD_RECORDS)
    origin = spark.createDataFrame(
        [(str(d.listing), d.broker_id, d.name, d.file_prefix) for d in dirs],
        "listing string, broker_id int, log_dir string, prefix string",
    )
    raw = (
        spark.read.text([str(d.listing) for d in dirs])
        .select("value", decoded_path(F.col("_metadata.file_path")).alias("listing"))
        .join(F.broadcast(origin), "listing")
    )
    parts = F.split("value", "\t")
    size = F.get(parts, 1).try_cast("long")
    mtime = F.get(parts, 2).try_cast("double")
    ok = (F.size(parts) == 3) & size.isNotNull() & mtime.isNotNull() & (F.get(parts, 0) != "")
    lines = raw.withColumn("ok", ok)
    path = F.get(parts, 0)
    dir_name = F.when(path.contains("/"), F.substring_index(path, "/", 1))
    topic, partition, state = dir_parts(dir_name)
    files = lines.where("ok").select(
        "broker_id",
        "log_dir",
        path.alias("path"),
        dir_name.alias("dir_name"),
        topic.alias("topic"),
        partition.alias("partition"),
        state.alias("dir_state"),
        F.when(path.contains("/"), F.regexp_extract(path, r"^[^/]*/(.*)$", 1)).otherwise(path).alias("file"),
        size.alias("size"),
        F.timestamp_seconds(mtime).alias("mtime"),
        F.lit("subsecond").alias("mtime_precision"),
        F.lit(None).cast("string").alias("mtime_text"),
        F.lit("find -printf").alias("listed_as"),
        F.concat("prefix", F.lit(LISTING)).alias("listing"),
        F.lit(None).cast("long").alias("line_no"),
        F.lit(None).cast("timestamp").alias("taken_at"),
    )
    bad = lines.where(~F.col("ok")).select(
        F.lit("listing").alias("source"),
        F.concat("prefix", F.lit("listing.tsv")).alias("file"),
        F.lit(None).cast("long").alias("position"),
        F.lit("expected 'path<TAB>size<TAB>mtime' as find -printf '%P\\t%s\\t%T@\\n' prints").alias("reason"),
        cut("value").alias("raw"),
    )
    return files, bad


def _metadata_files(spark: SparkSession, dirs: list[LogDir]) -> DataFrame:
    """Every metadata file of the log dirs, whole, with its place. The files are named one by one (Spark's
    own listing skips directories whose names start with '_', such as __consumer_offsets-0) and read in
    the Python workers, a few hundred a task: Spark's file reader would first list tens of thousands of
    tiny files in a job of its own, which took longer than reading them."""
    placed = [
        (str(d.root / rel), d.broker_id, d.name, d.file_prefix + rel, rel)
        for d in dirs
        for rel in metadata_files(d.root)
    ]
    origin = spark.createDataFrame(
        placed, "abs_path string, broker_id int, log_dir string, file string, rel string"
    )
    if not placed:
        return origin.select("*", *[F.lit(None).alias(c) for c in ("value",)]).limit(0).transform(_place)
    tasks = max(1, min(len(placed) // 500, 4 * leaf_parallelism(spark)))
    schema = origin.schema.add("value", "binary")
    return _place(origin.repartition(tasks).mapInArrow(_with_content, schema))


def _with_content(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """mapInArrow body: each file's bytes (a file per row; metadata files are a few hundred bytes).
    Empty files are left out, as Spark's reader leaves them out: the listing tells of them."""
    for batch in batches:
        content = pa.array([_read(path) for path in batch.column("abs_path").to_pylist()], pa.binary())
        table = pa.Table.from_batches([batch]).append_column("value", content)
        yield from table.filter(pc.greater(pc.binary_length(content), 0)).to_batches()


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise OSError(f"{path}: cannot read this metadata file of the bundle ({e.strerror})") from e


def _place(texts: DataFrame) -> DataFrame:
    rel = F.col("rel")
    dir_name = F.when(rel.contains("/"), F.substring_index(rel, "/", 1))
    topic, partition, state = dir_parts(dir_name)
    content = F.regexp_replace(F.col("value").cast("string"), r"\r?\n$", "")
    return texts.select(
        "broker_id",
        "log_dir",
        "file",
        dir_name.alias("dir_name"),
        F.regexp_extract(rel, r"([^/]+)$", 1).alias("name"),
        (F.size(F.split(rel, "/")) - 1).alias("depth"),
        topic.alias("topic"),
        partition.alias("partition"),
        state.alias("dir_state"),
        F.split(content, r"\r?\n").alias("lines"),
        F.col("value").cast("string").alias("content"),
    )


def _bad(frame: DataFrame, source: str, reason: Column, raw: Column, position: Column) -> DataFrame:
    return frame.select(
        F.lit(source).alias("source"),
        "file",
        position.cast("long").alias("position"),
        reason.alias("reason"),
        cut(raw).alias("raw"),
    )


def _malformed(line: Column) -> Column:
    return F.concat(
        F.lit("Malformed line in checkpoint file ("), F.col("file"), F.lit("): '"), line, F.lit("'")
    )


def _partition_metadata(meta: DataFrame) -> tuple[DataFrame, DataFrame]:
    """partition.metadata: 'version: 0' then 'topic_id: <22 chars>' (PartitionMetadataFile.scala 2.8.2)."""
    files = meta.where((F.col("name") == kafka.PARTITION_METADATA) & (F.col("depth") == 1))
    l1, l2 = F.get("lines", 0), F.get("lines", 1)
    p1, p2 = F.split(l1, r":\s+"), F.split(l2, r":\s+")
    version = F.get(p1, 1).try_cast("int")
    topic_id = F.get(p2, 1)
    reason = (
        F.when((F.size(p1) != 2) | version.isNull(), _malformed(l1))
        .when(
            version != kafka.PARTITION_METADATA_VERSION,
            F.concat(
                F.lit("Unrecognized version of partition metadata file ("),
                "file",
                F.lit("): "),
                F.get(p1, 1),
            ),
        )
        .when(l2.isNull() | (F.size(p2) != 2), _malformed(F.coalesce(l2, F.lit(""))))
        .when(~topic_id.rlike("^" + kafka.TOPIC_ID + "(==)?$"), _malformed(l2))
        .when(
            F.substring(topic_id, 1, 22) == kafka.ZERO_TOPIC_ID,
            F.concat(F.lit("Invalid topic ID in partition metadata file ("), "file", F.lit(")")),
        )
    )
    checked = files.withColumn("reason", reason)
    tid = F.substring(topic_id, 1, 22)
    hexed = F.lower(F.hex(F.unbase64(F.concat(F.translate(tid, "-_", "+/"), F.lit("==")))))
    good = checked.where(F.col("reason").isNull()).select(
        "*",
        version.alias("version"),
        tid.alias("topic_id"),
        F.regexp_replace(hexed, r"^(.{8})(.{4})(.{4})(.{4})(.{12})$", "$1-$2-$3-$4-$5").alias("topic_uuid"),
    )
    bad = _bad(
        checked.where(F.col("reason").isNotNull()),
        "partition.metadata",
        F.col("reason"),
        F.col("content"),
        F.lit(None),
    )
    return good, bad


def _checkpoint_lines(files: DataFrame, entry: str, source: str) -> tuple[DataFrame, DataFrame]:
    """The checkpoint layout (CheckpointFile.scala 2.8.2): version, count, entries; one bad line or a
    wrong count makes Kafka refuse the whole file."""
    version_line, count_line = F.get("lines", 0), F.get("lines", 1)
    version = version_line.try_cast("int")
    count = count_line.try_cast("int")
    entries = F.slice("lines", 3, 1 << 30)
    bad_lines = F.filter(
        F.transform(entries, lambda x, i: F.struct(x.alias("line"), (i + 3).alias("n"))),
        lambda s: ~s["line"].rlike(entry),
    )
    reason = (
        F.when(version.isNull(), _malformed(version_line))
        .when(
            version != kafka.CHECKPOINT_VERSION,
            F.concat(
                F.lit("Unrecognized version of the checkpoint file ("),
                "file",
                F.lit("): "),
                version_line,
            ),
        )
        .when(count_line.isNull(), None)  # Kafka reads a file with only its version as empty
        .when(count.isNull(), _malformed(count_line))
        .when(F.size(bad_lines) > 0, _malformed(F.get(bad_lines, 0)["line"]))
        .when(
            F.size(entries) != count,
            F.concat(
                F.lit("Expected "),
                count_line,
                F.lit(" entries in checkpoint file ("),
                "file",
                F.lit("), but found only "),
                F.size(entries).cast("string"),
            ),
        )
    )
    position = F.when(F.size(bad_lines) > 0, F.get(bad_lines, 0)["n"]).when(version.isNull(), 1)
    checked = files.withColumn("reason", reason).withColumn("pos", position)
    good = (
        checked.where(F.col("reason").isNull())
        .select("*", F.posexplode(F.coalesce(entries, F.array())).alias("i", "line"))
        .withColumn("line_no", F.col("i") + 3)
    )
    bad = _bad(
        checked.where(F.col("reason").isNotNull()),
        source,
        F.col("reason"),
        F.col("content"),
        F.col("pos"),
    )
    return good, bad


def _leader_epochs(meta: DataFrame) -> tuple[DataFrame, DataFrame]:
    files = meta.where((F.col("name") == kafka.LEADER_EPOCH_CHECKPOINT) & (F.col("depth") == 1))
    good, bad = _checkpoint_lines(files, ENTRY_LINE, kafka.LEADER_EPOCH_CHECKPOINT)
    return good.select(
        "*",
        F.regexp_extract("line", ENTRY_LINE, 1).try_cast("int").alias("epoch"),
        F.regexp_extract("line", ENTRY_LINE, 2).try_cast("long").alias("start_offset"),
    ), bad


def _checkpoints(meta: DataFrame) -> tuple[DataFrame, DataFrame]:
    files = meta.where(F.col("name").isin(*kafka.OFFSET_CHECKPOINTS) & (F.col("depth") == 0))
    good, bad = _checkpoint_lines(files, OFFSET_LINE, "checkpoint")
    kinds = F.create_map(*[x for k, v in kafka.OFFSET_CHECKPOINTS.items() for x in (F.lit(k), F.lit(v))])
    return good.drop("topic", "partition").select(
        "*",
        F.regexp_extract("line", OFFSET_LINE, 1).alias("topic"),
        F.regexp_extract("line", OFFSET_LINE, 2).try_cast("int").alias("partition"),
        kinds[F.col("name")].alias("kind"),
        F.regexp_extract("line", OFFSET_LINE, 3).try_cast("long").alias("offset"),
    ), bad


def _meta_properties(meta: DataFrame) -> tuple[DataFrame, DataFrame]:
    """meta.properties, ZooKeeper form (version 0, broker.id) or KRaft form (version 1, node.id)
    (BrokerMetadataCheckpoint.scala 2.8.2; MetaProperties 3.6.2)."""
    is_meta = (F.col("name") == kafka.META_PROPERTIES) & (F.col("depth") == 0)
    files = meta.where(is_meta)
    # key, then "=", ":" or white space, then the value; a key alone has an empty value (Properties.load)
    pair = r"^\s*([^=:\s]+)(?:\s*[=:]\s*|\s+)?(.*?)\s*$"
    entries = F.transform(
        F.filter("lines", lambda x: ~x.rlike(r"^\s*([#!].*)?$")),
        lambda x: F.struct(F.regexp_extract(x, pair, 1).alias("k"), F.regexp_extract(x, pair, 2).alias("v")),
    )
    # A key given twice keeps its last value, as Properties.load does (map_from_entries would fail the
    # query). Folded entry by entry, so each line is parsed once; and only for meta.properties rows:
    # Spark may compute an expression that the filter repeats before the name test (subexpression
    # elimination), and on a broker's offset checkpoints (a line per replica) it ran for minutes.
    no_props = F.create_map().cast("map<string,string>")
    props = F.when(
        is_meta,
        F.aggregate(
            entries,
            no_props,
            lambda acc, e: F.map_concat(
                F.map_filter(acc, lambda k, _: k != e["k"]), F.create_map(e["k"], e["v"])
            ),
        ),
    )
    version = props["version"].try_cast("int")
    stored = F.when(version == 1, props["node.id"]).otherwise(props["broker.id"])
    reason = (
        F.when(props["version"].isNull(), F.lit("Failed to find required property version."))
        .when(
            ~version.isin(0, 1),
            F.concat(F.lit("Expected version 0 or 1, but got version "), props["version"]),
        )
        .when(
            stored.isNull(),
            F.when(version == 1, "Failed to find required property node.id.").otherwise(
                "Failed to find required property broker.id."
            ),
        )
        .when(stored.try_cast("int").isNull(), F.lit("Failed to parse broker.id property as an int"))
        .when(
            (version == 1) & props["cluster.id"].isNull(),
            "Failed to find required property cluster.id.",
        )
    )
    checked = files.withColumn("props", props).withColumn("reason", reason)
    good = checked.where(F.col("reason").isNull()).select(
        "*",
        F.col("props")["version"].try_cast("int").alias("version"),
        F.col("props")["cluster.id"].alias("cluster_id"),
        F.coalesce(F.col("props")["node.id"], F.col("props")["broker.id"])
        .try_cast("int")
        .alias("stored_broker_id"),
        F.col("props")["directory.id"].alias("directory_id"),
        F.nullif(
            F.regexp_extract("content", r"(?m)^#([A-Z][a-z]{2} [A-Z][a-z]{2} .*\d{4})\s*$", 1),
            F.lit(""),
        ).alias("written"),
        F.col("props").alias("properties"),
    )
    bad = _bad(
        checked.where(F.col("reason").isNotNull()),
        kafka.META_PROPERTIES,
        F.col("reason"),
        F.col("content"),
        F.lit(None),
    )
    return good, bad
