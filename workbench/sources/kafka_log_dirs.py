"""`kafka-log-dirs --describe` as SREs paste it -> log_dir_descriptions: each broker's log dirs, the error
of a failed one, and the replicas each holds with their size, lag and whether they are a future replica.

LogDirsCommand (1.0+, KIP-113; Scala in core/ to 3.5, Java in tools/ from 3.6) prints `Querying brokers for
log directories information`, `Received log directory information from brokers 1,2`, then one line of
JSON: {"version":1,"brokers":[{"broker":1,"logDirs":[{"logDir":..,"error":null|"<exception class>",
"partitions":[{"partition":"orders-0","size":..,"offsetLag":..,"isFuture":false}]}]}]}. Its keys come in
insertion order to 3.5 and in HashMap order from 3.6, so it is read as JSON, never by position
(docs/pasted-evidence.md has the source lines).
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.types import (
    ArrayType,
    BooleanType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
)

from workbench import schemas

ERROR = r"^ERROR: The given brokers do not exist from --broker-list"
_REPLICA = StructType(
    [
        StructField("partition", StringType()),
        StructField("size", LongType()),
        StructField("offsetLag", LongType()),
        StructField("isFuture", BooleanType()),
    ]
)
_DIR = StructType(
    [
        StructField("logDir", StringType()),
        StructField("error", StringType()),
        StructField("partitions", ArrayType(_REPLICA)),
    ]
)
OUTPUT = StructType(
    [
        StructField("version", IntegerType()),
        StructField(
            "brokers",
            ArrayType(
                StructType([StructField("broker", IntegerType()), StructField("logDirs", ArrayType(_DIR))])
            ),
        ),
    ]
)


def rows(lines: DataFrame) -> tuple[DataFrame, DataFrame]:
    """(log_dir_descriptions, bad lines: file, line_no, reason, line) from the JSON lines (kind, by
    pasted.py): a row per replica, and one per log dir that holds none (its error may be why)."""
    parsed = lines.select("*", F.from_json("line", OUTPUT).alias("out"))
    ok = F.col("out.brokers").isNotNull() & (F.col("out.version") == 1)
    bad = parsed.where(~F.coalesce(ok, F.lit(False))).select(
        "file",
        "line_no",
        F.lit("not the JSON kafka-log-dirs --describe prints (1.0-3.9): a line cut or wrapped?").alias(
            "reason"
        ),
        "line",
    )
    brokers = parsed.where(ok).select("file", "line_no", "taken_at", F.explode("out.brokers").alias("b"))
    dirs = brokers.select("*", F.explode_outer("b.logDirs").alias("d"))
    replicas = dirs.select("*", F.explode_outer("d.partitions").alias("p"))
    name = F.col("p.partition")
    return (
        replicas.select(
            F.col("b.broker").alias("broker_id"),
            F.col("d.logDir").alias("log_dir"),
            F.col("d.error").alias("error"),
            F.regexp_extract(name, r"^(.*)-\d+$", 1).alias("topic"),
            F.regexp_extract(name, r"-(\d+)$", 1).cast("int").alias("partition"),
            F.col("p.size").alias("size"),
            F.col("p.offsetLag").alias("offset_lag"),
            F.col("p.isFuture").alias("is_future"),
            "file",
            "line_no",
            "taken_at",
        ).select(*schemas.LOG_DIR_DESCRIPTIONS.names),
        bad,
    )
