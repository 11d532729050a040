"""`zk/znodes.jsonl` (what `workbench capture zk` writes, DESIGN.md) -> `znodes`.

Read as text so every line keeps its number: a line that is not a znode object goes to bad_records.
"""

from __future__ import annotations

from pathlib import Path

from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.types import BooleanType, IntegerType, LongType, StringType, StructField, StructType

from workbench import schemas
from workbench.sources.common import cut
from workbench.spark import kept

STAT = StructType(
    [StructField(n, LongType()) for n in ("czxid", "mzxid", "pzxid", "ctime", "mtime")]
    + [StructField(n, IntegerType()) for n in ("version", "cversion", "aversion")]
    + [StructField("ephemeralOwner", LongType())]
    + [StructField(n, IntegerType()) for n in ("dataLength", "numChildren")]
)
LINE = StructType(
    [
        StructField("path", StringType()),
        StructField("data", StringType()),
        StructField("encoding", StringType()),
        StructField("stat", STAT),
        StructField("redacted", BooleanType()),
        StructField("_corrupt_record", StringType()),
    ]
)


def read_znodes_jsonl(spark: SparkSession, jsonl: Path, file: str) -> tuple[DataFrame, DataFrame]:
    """znodes and bad records (with line numbers) from a znodes.jsonl file."""
    raw = spark.read.text(str(jsonl)).select(
        F.col("value"),
        F.col("_metadata.file_block_start").alias("block"),
        F.monotonically_increasing_id().alias("seq"),
    )
    lines = raw.withColumn("line_no", F.row_number().over(Window.orderBy("block", "seq")).cast("long"))
    options = {"mode": "PERMISSIVE", "columnNameOfCorruptRecord": "_corrupt_record"}
    parsed = lines.where(F.trim("value") != "").withColumn("z", F.from_json("value", LINE, options))
    known_encoding = F.coalesce(F.col("z.encoding"), F.lit("utf-8")).isin("utf-8", "base64")
    problem = (
        F.when(F.col("z._corrupt_record").isNotNull() | F.col("z").isNull(), F.lit("not a JSON object"))
        .when(~F.col("z.path").startswith("/"), F.lit('no absolute "path"'))
        .when(F.col("z.stat").isNull(), F.lit('no "stat" object'))
        .when(
            F.col("z.data").isNotNull() & ~known_encoding,
            F.lit('"encoding" is neither utf-8 nor base64'),
        )
    )
    # Kept: every view of the tree reads it, and each reading would number and parse the lines again.
    checked = kept(parsed.withColumn("problem", problem))
    bad = checked.where(F.col("problem").isNotNull()).select(
        F.lit("znodes.jsonl").alias("source"),
        F.lit(file).alias("file"),
        F.col("line_no").alias("position"),
        F.concat(F.col("problem"), F.lit("; expected one znode as DESIGN.md describes")).alias("reason"),
        cut("value").alias("raw"),
    )
    z = checked.where(F.col("problem").isNull()).select("z.*")
    path = F.col("path")
    encoding = F.when(F.col("data").isNotNull(), F.coalesce(F.col("encoding"), F.lit("utf-8")))
    znodes = z.select(
        path,
        F.when(path != "/", F.regexp_replace(path, "/[^/]*$", "")).alias("parent"),
        F.regexp_extract(path, "([^/]*)$", 1).alias("name"),
        F.col("data"),
        encoding.alias("data_encoding"),
        F.col("stat.dataLength").alias("data_length"),
        *(F.col(f"stat.{c}").alias(c) for c in ("czxid", "mzxid", "pzxid")),
        F.timestamp_millis("stat.ctime").alias("ctime"),
        F.timestamp_millis("stat.mtime").alias("mtime"),
        *(F.col(f"stat.{c}").alias(c) for c in ("version", "cversion", "aversion")),
        F.col("stat.ephemeralOwner").alias("ephemeral_owner"),
        F.col("stat.numChildren").alias("num_children"),
        F.coalesce(F.col("redacted"), F.lit(False)).alias("redacted"),
        F.lit(file).alias("source"),
    ).withColumn("parent", F.when(F.col("parent") == "", F.lit("/")).otherwise(F.col("parent")))
    return znodes.select(*schemas.ZNODES.names), bad
