"""Small pieces every source shares: empty frames, bad-record frames, file paths as Spark writes them."""

from __future__ import annotations

from collections.abc import Iterable

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import StructType

from workbench import schemas

BadRecord = tuple[str, str, "int | None", str, str]


def empty(spark: SparkSession, schema: StructType) -> DataFrame:
    return spark.createDataFrame([], schema)


def bad_records_frame(spark: SparkSession, rows: Iterable[BadRecord]) -> DataFrame:
    """bad_records from problems found on the driver (whole files), raw cut as everywhere."""
    cut = [(s, f, p, r, raw[: schemas.RAW_CUT]) for s, f, p, r, raw in rows]
    return spark.createDataFrame(cut, schemas.BAD_RECORDS)


def decoded_path(file_path: Column) -> Column:
    """Spark's `_metadata.file_path` ('file:/a%20b/c') back to the local path ('/a b/c')."""
    return F.regexp_replace(F.try_url_decode(F.replace(file_path, F.lit("+"), F.lit("%2B"))), "^file:", "")


def cut(col: Column | str) -> Column:
    return F.substring(col, 1, schemas.RAW_CUT)


def pasted_lines(spark: SparkSession, paths: list[str], origin: DataFrame) -> DataFrame:
    """Every line of pasted text files, numbered from 1. `origin` has a row per file: its local path
    (`abs`), when it was taken (`taken`, ISO-8601 or null) and what else rides along (its place in the
    bundle). Gives origin's other columns, taken_at (null: unknown), line_no and line. Each file is read
    whole, in one task: what is pasted into an incident channel is small."""
    text = (
        spark.read.text(sorted(set(paths)), wholetext=True)
        .select(decoded_path(F.col("_metadata.file_path")).alias("abs"), "value")
        .join(F.broadcast(origin), "abs")
    )
    keep = [c for c in origin.columns if c not in ("abs", "taken")]
    lines = F.split(F.regexp_replace("value", r"\r?\n$", ""), r"\r?\n")
    return text.select(
        *keep, F.col("taken").try_cast("timestamp").alias("taken_at"), F.posexplode(lines).alias("i", "line")
    ).select(*keep, "taken_at", (F.col("i") + 1).cast("long").alias("line_no"), "line")
