"""Each broker's clock against ZooKeeper's, measured once per bundle (`reads.fact`).

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

from dataclasses import dataclass
from functools import reduce
from typing import TYPE_CHECKING

from pyspark.sql import Column, DataFrame, Window, WindowSpec
from pyspark.sql import functions as F

from workbench.kafka.znodes import BROKER_PATH, STATE_PATH
from workbench.model.reads import fact
from workbench.model.views import session_of, views

if TYPE_CHECKING:
    from workbench.frames import Bundle


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


@fact
def skew(bundle: Bundle) -> list[Skew]:
    """Per broker with logs, its clock's skew against ZooKeeper's (empty without ZooKeeper's history);
    measured once per bundle."""
    return _skew(bundle)


def skew_ms(bundle: Bundle) -> dict[int, int]:
    """Broker -> its clock minus ZooKeeper's (ms), for the brokers whose skew is known."""
    return {s.broker: s.estimate_ms for s in skew(bundle) if s.estimate_ms is not None}


def skew_col(skews: dict[int, int], broker: str = "broker_id") -> Column:
    """Each row's broker's skew (`skew_ms`: its clock minus ZooKeeper's, ms) by its `broker` column; null
    where it is not known."""
    if not skews:
        return F.lit(None).cast("long")
    mapping = F.create_map(*[x for b, ms in sorted(skews.items()) for x in (F.lit(b), F.lit(ms))])
    return mapping[F.col(broker)]


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
            F.regexp_extract("path", STATE_PATH, 2).try_cast("int").alias("partition"),
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
