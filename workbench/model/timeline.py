"""One timeline of the whole cluster: every broker's typed log events, ZooKeeper's txns and the data-dir
files' modification times, each row with the ref a person can open, on ZooKeeper's clock (each broker's
lines moved by its skew, `model.skew`).
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from workbench.kafka.znodes import BROKER_PATH, MILESTONE_PATH, UNDER_TOPIC_PATH
from workbench.model.refs import file_ref_col
from workbench.model.skew import Skew, skew

if TYPE_CHECKING:
    from workbench.frames import Bundle

TIMELINE_COLUMNS = (
    "time",
    "broker_time",
    "zxid",
    "broker_id",
    "source",
    "kind",
    "topic",
    "partition",
    "detail",
    "ref",
)


def in_order() -> list[Column]:
    """The timeline's order, the same wherever it is shown: ZooKeeper's time, then the zxid (ZooKeeper's
    own order), the broker, the evidence (a multi's ops share one ref), then the kind."""
    return [F.col("time"), F.col("zxid").asc_nulls_last(), F.col("broker_id"), F.col("ref"), F.col("kind")]


def timeline(
    bundle: Bundle,
    topic: str | None = None,
    partition: int | None = None,
    broker: int | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    kinds: str | None = None,
    skews: list[Skew] | None = None,
) -> DataFrame:
    """The merged timeline (TIMELINE_COLUMNS), filtered, in order: `time` on ZooKeeper's clock where the
    broker's skew was estimated (else the broker's own), `broker_time` as the broker printed it."""
    skews = skew(bundle) if skews is None else skews
    applied = {s.broker: s.estimate_ms for s in skews if s.estimate_ms is not None}
    shift = (
        F.create_map(*[x for b, ms in applied.items() for x in (F.lit(b), F.lit(ms))]) if applied else None
    )

    def corrected(ts: Column) -> Column:
        if shift is None:
            return ts
        ms = F.coalesce(shift[F.col("broker_id")], F.lit(0))
        return F.timestamp_millis(F.unix_millis(ts) - ms)

    logs = bundle.cluster_events.where(F.col("event").isNotNull()).select(
        corrected(F.col("ts")).alias("time"),
        F.col("ts").alias("broker_time"),
        F.lit(None).cast("long").alias("zxid"),
        "broker_id",
        F.lit("log").alias("source"),
        F.col("event").alias("kind"),
        "topic",
        "partition",
        F.substring("message", 1, 300).alias("detail"),
        file_ref_col("file", "line_no").alias("ref"),
    )
    h = bundle.znode_history.where(F.col("applied"))
    zk = h.select(
        F.col("time"),
        F.lit(None).cast("timestamp").alias("broker_time"),
        "zxid",
        _number(F.regexp_extract("path", BROKER_PATH, 1)).alias("broker_id"),
        F.lit("zookeeper").alias("source"),
        F.concat(F.lit("zk."), F.col("op")).alias("kind"),
        F.nullif(F.regexp_extract("path", UNDER_TOPIC_PATH, 1), F.lit("")).alias("topic"),
        _number(F.regexp_extract("path", UNDER_TOPIC_PATH, 2)).alias("partition"),
        F.coalesce(F.concat_ws(" ", "path", F.substring("data", 1, 200)), F.col("op")).alias("detail"),
        F.concat(F.lit("zk:txn@0x"), F.lower(F.hex("zxid"))).alias("ref"),
    )
    files = bundle.datadir_files.where(
        F.col("mtime").isNotNull() & F.col("file").rlike(_METADATA_FILES)
    ).select(
        corrected(F.col("mtime")).alias("time"),
        F.col("mtime").alias("broker_time"),
        F.lit(None).cast("long").alias("zxid"),
        "broker_id",
        F.lit("datadir").alias("source"),
        F.lit("file.modified").alias("kind"),
        "topic",
        "partition",
        F.concat_ws("/", "log_dir", "path").alias("detail"),
        file_ref_col(
            F.concat_ws("/", F.lit("brokers"), "broker_id", F.lit("datadirs"), "log_dir", "path")
        ).alias("ref"),
    )
    rows = logs.unionByName(zk).unionByName(files)
    for wanted, col in ((topic, "topic"), (partition, "partition"), (broker, "broker_id")):
        if wanted is not None:
            rows = rows.where(F.col(col) == F.lit(wanted))
    if since is not None:
        rows = rows.where(F.col("time") >= F.lit(since))
    if until is not None:
        rows = rows.where(F.col("time") <= F.lit(until))
    if kinds:
        rows = rows.where(F.col("kind").startswith(kinds))
    return rows.orderBy(*in_order())


def _number(text: Column) -> Column:
    """A number regexp_extract found, null where it found none ('')."""
    return F.nullif(text, F.lit("")).cast("int")


_METADATA_FILES = r"(^|/)(partition\.metadata|leader-epoch-checkpoint|[a-z-]+-checkpoint|meta\.properties)$"


# What a postmortem's timeline shows: the moments that change who leads, who is alive, what a topic is.
MILESTONE_KINDS = (
    "broker.started", "broker.shut_down", "controlled_shutdown.succeeded", "zk.session_expired",
    "zk.client_session_expired", "controller.elected", "controller.ready", "controller.broker_failure",
    "controller.resigned", "deletion.started", "deletion.halted", "deletion.completed",
    "topic.new_partitions", "topic_id.mismatch", "topic_id.inconsistent", "isr.shrink", "isr.expand",
    "log_dir.io_error", "log_dir.failed", "deletion.disabled", "reassignment.failed",
    "reassignment.assignment_updated",
)  # fmt: skip


def milestones(bundle: Bundle, skews: list[Skew] | None = None) -> DataFrame:
    """The merged timeline cut to a postmortem's length: the milestones (MILESTONE_KINDS; ZooKeeper's
    writes to /controller, broker registrations, topic znodes and /admin, and session closes), each kind
    said once per broker, topic and minute with the number of rows it stands for (`rows`)."""
    t = timeline(bundle, skews=skews)
    zk_kept = (F.col("source") == "zookeeper") & (
        (F.col("kind") == "zk.closeSession")
        | (F.col("kind").isin("zk.create", "zk.setData", "zk.delete") & F.col("detail").rlike(MILESTONE_PATH))
    )
    kept = t.where(F.col("kind").isin(*MILESTONE_KINDS) | zk_kept)
    key: list[Column | str] = ["kind", "broker_id", "topic", F.date_trunc("minute", "time")]
    w = Window.partitionBy(*key).orderBy("time", F.col("zxid").asc_nulls_last(), "ref")
    return (
        kept.select(
            "*", F.row_number().over(w).alias("n"), F.count("*").over(Window.partitionBy(*key)).alias("rows")
        )
        .where(F.col("n") == 1)
        .select(
            "time",
            "zxid",
            "broker_id",
            "kind",
            "topic",
            F.substring("detail", 1, 160).alias("detail"),
            "ref",
            "rows",
        )
        .orderBy(*in_order())
    )
