"""Each lost ZooKeeper session as a finding; how each ended is `model.session_ends`'s (the controller
analysis names an election's cause from it too)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import functions as F

from workbench.analysis.contract import WARNING
from workbench.analysis.findings import Finding, file_ref, hex_zxid, txn_ref
from workbench.kafka import behaviour
from workbench.model.session_ends import SILENT_ENDINGS, lived_through
from workbench.model.views import session_of, views

if TYPE_CHECKING:
    from workbench.frames import Bundle

CAUSE_TEXT = {
    "shutdown": "broker {b} shut down",
    "session_expiry": "broker {b}'s ZooKeeper session expired",
    "crash": "broker {b} stopped without a shutdown (a crash or hang) and ZooKeeper expired its session",
    "hang": "broker {b} stood still (its ZooKeeper client heard nothing for about the whole session timeout: "
    "a long GC pause, a stalled disk or a frozen VM), ZooKeeper expired its session, and it learned so when "
    "it ran again",
    "network_partition": "broker {b} kept running but lost ZooKeeper (its client timed out after the read "
    "timeout, 2/3 of the session's: a network partition or ZooKeeper unreachable) and ZooKeeper expired "
    "its session",
    "unknown": "broker {b}'s session closed (no log from broker {b} tells a shutdown from a crash)",
    "deleted": "/controller was deleted by {by}",
}


def expiry_findings(bundle: Bundle, ends: dict[int, tuple[str, str | None]]) -> list[Finding]:
    """Brokers that lost their ZooKeeper session: ZooKeeper closed it without the broker shutting down
    (history), or the broker's own client logged the expiry (logs only)."""
    v = views(bundle)
    out = []
    if v.evidence.zk_history:
        regs = v.registrations.where(F.col("ended_zxid").isNotNull()).orderBy("ended_zxid").collect()
        for r in regs:
            how, ref = ends.get(r.session_id, ("unknown", None))
            if how not in SILENT_ENDINGS:
                continue
            text = CAUSE_TEXT[how].format(b=r.broker_id)
            out.append(
                Finding(
                    "broker.session_expired",
                    WARNING,
                    {
                        "broker": r.broker_id,
                        "session": f"0x{r.session_id:x}",
                        "zxid": hex_zxid(r.ended_zxid),
                        "cause": how,
                    },
                    f"{text[0].upper()}{text[1:]}: session 0x{r.session_id:x} "
                    f"(registered at zxid {hex_zxid(r.czxid)}) "
                    f"ended at zxid {hex_zxid(r.ended_zxid)}, {r.ended:%Y-%m-%d %H:%M:%S} ZooKeeper time.",
                    tuple(x for x in (txn_ref(r.czxid), txn_ref(r.ended_zxid), ref) if x),
                )
            )
        return out
    # logs only: the client's "Unable to reconnect ... session 0x.. has expired" names the session
    rows = (
        bundle.cluster_events.where(F.col("event") == "zk.session_expired")
        .withColumn("session_id", session_of(F.col("attrs")["session"]))
        .groupBy("broker_id", "session_id")
        .agg(
            F.count("*").alias("n"),
            F.min_by(F.struct("file", "line_no", "ts"), F.struct("ts", "file", "line_no")).alias("first"),
        )
        .orderBy("broker_id", "first.ts")
        .collect()  # one row per expired session
    )
    lived = lived_through(
        bundle.cluster_events,
        sessions=[r.session_id for r in rows if r.session_id is not None],
        default_timeout_ms=behaviour.zk_session_timeout_default_ms(v.evidence.kafka_version),
    )
    for r in rows:
        how, file, line_no = lived.get(r.session_id, ("session_expiry", "", 0))
        text = CAUSE_TEXT[how].format(b=r.broker_id)
        session = f"0x{r.session_id:x}" if r.session_id is not None else "?"
        out.append(
            Finding(
                "broker.session_expired",
                WARNING,
                {"broker": r.broker_id, "session": session, "cause": how},
                f"{text[0].upper()}{text[1:]}: its client logged session {session} expired at "
                f"{r.first.ts:%Y-%m-%d %H:%M:%S} broker time.",
                (file_ref(r.first.file, r.first.line_no), *([file_ref(file, line_no)] if file else [])),
            )
        )
    named = {r.broker_id for r in rows}
    for r in (
        bundle.cluster_events.where(F.col("event") == "zk.client_session_expired")
        .groupBy("broker_id")
        .agg(
            F.count("*").alias("n"),
            F.min_by(F.struct("file", "line_no", "ts"), F.struct("ts", "file", "line_no")).alias("first"),
        )
        .collect()  # one row per broker: Kafka's own "Session expired." where the client's line is absent
    ):
        if r.broker_id in named:
            continue
        out.append(
            Finding(
                "broker.session_expired",
                WARNING,
                {"broker": r.broker_id, "cause": "session_expiry"},
                f"Broker {r.broker_id}'s ZooKeeper session expired ({r.n} line(s), first at "
                f"{r.first.ts:%Y-%m-%d %H:%M:%S} broker time).",
                (file_ref(r.first.file, r.first.line_no),),
            )
        )
    return out
