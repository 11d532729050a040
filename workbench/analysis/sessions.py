"""How each broker's ZooKeeper session ended, read from that broker's own log and ordered by its own clock
only: after the line that established the session ZooKeeper closed, did it shut down, see its session
expire, or start again without either (it crashed or hung)? The controller analysis names an election's
cause from this, and each lost session is a finding of its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import functions as F

from workbench.analysis.cluster import session_of, views
from workbench.analysis.findings import file_ref

if TYPE_CHECKING:
    from workbench.frames import Bundle

# What ended a broker's session, from its own log: the first of these after the session began.
ENDINGS = {
    "broker.shutting_down": "shutdown",
    "controlled_shutdown.started": "shutdown",
    "zk.client_session_expired": "session_expiry",
    "zk.session_expired": "session_expiry",
    "broker.starting": "crash",
}


def session_ends(bundle: Bundle) -> dict[int, tuple[str, str | None]]:
    """Session id -> (how it ended: shutdown, session_expiry, crash, unknown; the log ref that says so),
    for every broker session ZooKeeper's history saw end. Read from that broker's own log only."""
    v = views(bundle)
    if not v.evidence.zk_history:
        return {}
    regs = v.registrations.where(F.col("ended_zxid").isNotNull())
    ev = bundle.cluster_events
    began = (
        ev.where(F.col("event") == "zk.session_established")
        .select(
            "broker_id", session_of(F.col("attrs")["session"]).alias("session_id"), F.col("ts").alias("began")
        )
        .unionByName(
            ev.where(F.col("event") == "broker.registered")
            .select(
                "broker_id",
                F.col("attrs")["broker_epoch"].cast("long").alias("czxid"),
                F.col("ts").alias("began"),
            )
            .join(regs.select("czxid", "session_id"), "czxid")
            .drop("czxid")
        )
        .groupBy("broker_id", "session_id")
        .agg(F.min("began").alias("began"))
    )
    ending = F.create_map(*[x for k, e in ENDINGS.items() for x in (F.lit(k), F.lit(e))])[F.col("event")]
    marks = ev.where(F.col("event").isin(list(ENDINGS))).select(
        "broker_id", "ts", "file", "line_no", ending.alias("how")
    )
    first = (
        regs.select("broker_id", "session_id")
        .join(began, ["broker_id", "session_id"], "left")
        .join(marks, ["broker_id"], "left")
        .withColumn(
            "m",
            F.when(
                F.col("began").isNotNull() & (F.col("ts") > F.col("began")),
                F.struct("how", "file", "line_no"),
            ),
        )
        .groupBy("broker_id", "session_id", "began")
        .agg(F.min_by("m", F.when(F.col("m").isNotNull(), F.struct("ts", "line_no"))).alias("m"))
        .collect()
    )
    have_logs = v.evidence.with_logs
    out: dict[int, tuple[str, str | None]] = {}
    for r in first:
        if r.broker_id not in have_logs or r.began is None:
            out[r.session_id] = ("unknown", None)
        elif r.m is None or r.m.how is None:
            out[r.session_id] = ("crash", None)
        else:
            out[r.session_id] = (r.m.how, file_ref(r.m.file, r.m.line_no))
    return out
