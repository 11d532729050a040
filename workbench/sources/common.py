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
