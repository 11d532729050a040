"""zk_shell's `cp <path> json://!file.json/...` export -> znodes_observed: a JSON object keyed by znode path,
each `{"content": base64 | null, "acls": [...]}` (rgs1/zk_shell `copy_util.py` JSONProxy @8df7182
l.447-545): data, and no stat, which the export does not keep.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import MapType, StringType, StructField, StructType

from workbench.sources.zk_shell import observed_rows

EXPORT = MapType(StringType(), StructType([StructField("content", StringType())]))


def is_export(value: Column) -> Column:
    """A whole file that is zk_shell's `cp ... json://` export: an object keyed by absolute paths."""
    export = F.from_json(value, EXPORT)
    return F.coalesce(
        (F.size(export) > 0) & F.forall(F.map_keys(export), lambda k: k.startswith("/")), F.lit(False)
    )


def export_rows(texts: DataFrame, lines: DataFrame) -> DataFrame:
    """znodes_observed of zk_shell exports (texts: file, taken_at, value): a znode per key with its data
    (the export's base64 decoded where it is UTF-8 text) and no stat, which the export does not keep."""
    nodes = texts.select("file", "taken_at", F.explode(F.from_json("value", EXPORT)).alias("path", "node"))
    raw = F.unbase64("node.content")
    text = raw.cast("string")
    keys = (
        lines.select("file", F.regexp_extract("line", r'^\s*"(/[^"]*)"\s*:', 1).alias("path"), "line_no")
        .where(F.col("path") != "")
        .groupBy("file", "path")
        .agg(F.min("line_no").alias("line_no"))
    )
    data = F.when(F.is_valid_utf8(text), text).otherwise(F.col("node.content"))
    known = ("data", "data_encoding", "data_length")
    shown = nodes.join(keys, ["file", "path"], "left").select(
        "*",
        data.alias("data"),
        F.when(
            F.col("node.content").isNotNull(), F.when(F.is_valid_utf8(text), "utf-8").otherwise("base64")
        ).alias("data_encoding"),
        F.when(F.col("node.content").isNotNull(), F.length(raw)).alias("data_length"),
    )
    command = F.lit(None).cast("string").alias("command")
    return observed_rows(shown.select("*", F.lit("json export").alias("observed_as"), command), True, *known)
