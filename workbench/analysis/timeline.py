"""One timeline of the whole cluster: every broker's typed log events, ZooKeeper's txns and the data-dir
files' modification times, each row with the ref a person can open, on ZooKeeper's clock.

Brokers' clocks drift; ZooKeeper's txns carry its leader's clock and a total order (zxid). A broker's skew
(its clock minus ZooKeeper's) is bounded by pairs of a log line and a txn that must come in one order:

- after the txn (upper bound: skew <= line time - txn time): "Registered broker N ... czxid (broker epoch)"
  after the create of /brokers/ids/N at that czxid; "Session establishment complete ... session id" after
  that session's createSession; "ISR updated ... version V" after the write of that partition's state V;
- before it (lower bound: skew >= line time - txn time): "Creating /brokers/ids/N" before the create its
  "Registered" line names; "Initializing a new session" before the createSession its next "Session
  establishment complete" names; "Shrinking/Expanding ISR" before the write its next "ISR updated" names.

The estimate is the middle of the tightest bounds, applied only when both exist and agree; otherwise the
broker's lines keep its own clock and the skew table says why.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from datetime import datetime
from functools import reduce
from typing import TYPE_CHECKING

from pyspark.sql import Column, DataFrame, Window, WindowSpec
from pyspark.sql import functions as F

from workbench.analysis.cluster import session_of, views
from workbench.analysis.findings import file_ref_col
from workbench.kafka.znodes import BROKER_PATH, MILESTONE_PATH, STATE_PATH, UNDER_TOPIC_PATH

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


@dataclass(frozen=True)
class Skew:
    """A broker's clock minus ZooKeeper's, in ms: the bounds the pairs give, how many pairs, and the
    estimate applied (None: not applied, `why` says why)."""

    broker: int
    lower_ms: int | None
    upper_ms: int | None
    pairs: int
    estimate_ms: int | None
    why: str


_SKEWS: weakref.WeakKeyDictionary[Bundle, list[Skew]] = weakref.WeakKeyDictionary()


def skew(bundle: Bundle) -> list[Skew]:
    """Per broker with logs, its clock's skew against ZooKeeper's (empty without ZooKeeper's history);
    measured once per bundle."""
    if bundle not in _SKEWS:
        _SKEWS[bundle] = _skew(bundle)
    return _SKEWS[bundle]


def skew_ms(bundle: Bundle) -> dict[int, int]:
    """Broker -> its clock minus ZooKeeper's (ms), for the brokers whose skew is known."""
    return {s.broker: s.estimate_ms for s in skew(bundle) if s.estimate_ms is not None}


def _skew(bundle: Bundle) -> list[Skew]:
    v = views(bundle)
    if not v.evidence.zk_history:
        return []
    pairs = _pairs(bundle)
    rows = {
        r.broker_id: r
        for r in pairs.groupBy("broker_id")
        .agg(
            F.max(F.when(F.col("bound") == "lower", F.col("gap_ms"))).alias("lower"),
            F.min(F.when(F.col("bound") == "upper", F.col("gap_ms"))).alias("upper"),
            F.count("*").alias("n"),
        )
        .collect()
    }
    out = []
    for b in sorted(v.evidence.with_logs):
        r = rows.get(b)
        lower, upper, n = (r.lower, r.upper, r.n) if r else (None, None, 0)
        if lower is None or upper is None:
            why = "only one side bounded" if n else "no line and txn pairs"
            out.append(Skew(b, lower, upper, n, None, why))
        elif lower > upper:
            out.append(Skew(b, lower, upper, n, None, "bounds disagree (the clock moved?)"))
        else:
            out.append(Skew(b, lower, upper, n, (lower + upper) // 2, "applied"))
    return out


def _pairs(bundle: Bundle) -> DataFrame:
    """broker_id, bound ('lower' or 'upper'), gap_ms (line time - txn time): one row per pair."""
    ev = bundle.cluster_events.where(F.col("event").isNotNull())
    h = bundle.znode_history.where(F.col("applied"))
    a = F.col("attrs")
    by_log = Window.partitionBy("broker_id", "file").orderBy("ts", "line_no")
    following = by_log.rowsBetween(1, Window.unboundedFollowing)

    def next_value(kind: str, value: Column, w: WindowSpec = following) -> Column:
        return F.first(F.when(F.col("event") == kind, value), ignorenulls=True).over(w)

    registered = ev.where(F.col("event").isin("zk.ephemeral_creating", "broker.registered")).select(
        "broker_id",
        "ts",
        "event",
        F.when(F.col("event") == "broker.registered", a["broker_epoch"].try_cast("long"))
        .otherwise(next_value("broker.registered", a["broker_epoch"].try_cast("long")))
        .alias("zxid"),
        (F.col("event") == "broker.registered").alias("after"),
    )
    creates = h.where(F.col("op").isin("create", "create2") & F.col("path").rlike(BROKER_PATH)).select(
        "zxid", F.col("time").alias("txn_time")
    )
    sessions = ev.where(F.col("event").isin("zk.client_reinitializing", "zk.session_established")).select(
        "broker_id",
        "ts",
        "event",
        F.when(F.col("event") == "zk.session_established", session_of(a["session"]))
        .otherwise(next_value("zk.session_established", session_of(a["session"])))
        .alias("session_id"),
        (F.col("event") == "zk.session_established").alias("after"),
    )
    opened = h.where(F.col("op") == "createSession").select("session_id", F.col("time").alias("txn_time"))
    isr_lines = ev.where(F.col("event").isin("isr.shrink", "isr.expand", "isr.updated")).where(
        F.col("topic").isNotNull() & F.col("partition").isNotNull()
    )
    by_partition = Window.partitionBy("broker_id", "topic", "partition").orderBy("ts", "line_no")
    version = a["zk_version"].try_cast("int")
    isr = isr_lines.select(
        "broker_id",
        "ts",
        "topic",
        "partition",
        F.when(F.col("event") == "isr.updated", version)
        .otherwise(next_value("isr.updated", version, by_partition.rowsBetween(1, Window.unboundedFollowing)))
        .alias("version"),
        (F.col("event") == "isr.updated").alias("after"),
    )
    # A topic deleted and created again restarts its state znodes' versions: a version written by two
    # incarnations could pair a line with the wrong write, so such versions pair with nothing.
    same_version = Window.partitionBy("topic", "partition", "version")
    writes = (
        h.where((F.col("op") == "setData") & F.col("path").rlike(STATE_PATH))
        .select(
            F.regexp_extract("path", STATE_PATH, 1).alias("topic"),
            F.regexp_extract("path", STATE_PATH, 2).cast("int").alias("partition"),
            "version",
            F.col("time").alias("txn_time"),
        )
        .withColumn("writes", F.count("*").over(same_version))
        .where(F.col("writes") == 1)
    )
    joined = [
        registered.join(creates, "zxid"),
        sessions.join(opened, "session_id"),
        isr.join(writes, ["topic", "partition", "version"]),
    ]
    gap = (F.unix_millis("ts") - F.unix_millis("txn_time")).alias("gap_ms")
    return reduce(
        DataFrame.unionByName,
        [
            j.select("broker_id", F.when(F.col("after"), "upper").otherwise("lower").alias("bound"), gap)
            for j in joined
        ],
    )


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
    return rows.orderBy("time", F.col("zxid").asc_nulls_last(), "broker_id", "ref")


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
        .orderBy("time", F.col("zxid").asc_nulls_last(), "broker_id", "ref")
    )
