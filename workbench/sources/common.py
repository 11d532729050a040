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


def pasted_texts(spark: SparkSession, paths: list[str], origin: DataFrame) -> DataFrame:
    """Pasted text files whole (`value`). `origin` has a row per file: its local path (`abs`), when it was
    taken (`taken`, ISO-8601 or null) and what else rides along (its place in the bundle). Gives origin's
    other columns, taken_at (null: unknown) and value. Each file is read in one task: what is pasted into
    an incident channel is small."""
    keep = [c for c in origin.columns if c not in ("abs", "taken")]
    return (
        spark.read.text(sorted(set(paths)), wholetext=True)
        .select(decoded_path(F.col("_metadata.file_path")).alias("abs"), "value")
        .join(F.broadcast(origin), "abs")
        .select(*keep, F.col("taken").try_cast("timestamp").alias("taken_at"), "value")
    )


def lines_of(texts: DataFrame) -> DataFrame:
    """Every line of `pasted_texts`, numbered from 1: its other columns, line_no and line."""
    keep = [c for c in texts.columns if c != "value"]
    lines = F.split(F.regexp_replace("value", r"\r?\n\z", ""), r"\r?\n")
    return texts.select(*keep, F.posexplode(lines).alias("i", "line")).select(
        *keep, (F.col("i") + 1).cast("long").alias("line_no"), "line"
    )


def pasted_lines(spark: SparkSession, paths: list[str], origin: DataFrame) -> DataFrame:
    """`lines_of(pasted_texts(...))`."""
    return lines_of(pasted_texts(spark, paths, origin))
