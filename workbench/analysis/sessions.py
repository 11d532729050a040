"""Each lost ZooKeeper session as a finding; how each ended is `model.session_ends`'s (the controller
analysis names an election's cause from it too)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
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


@dataclass(frozen=True)
class Expired:
    """A ZooKeeper session a broker lost, and how: from ZooKeeper's history (`zxids`: its registration's
    create and end; `at`: the end, ZooKeeper's clock), from the broker's client line naming the session
    (`at`: its first, broker's clock), or from Kafka's own "Session expired." lines alone (`lines`: how
    many; no session). `how`: the cause (model.session_ends' words) and `ref` the line telling it."""

    broker: int
    session: int | None
    how: str
    ref: str | None
    at: datetime
    first: str | None = None  # the first line saying it (logs only)
    zxids: tuple[int, int] | None = None
    lines: int = 0


def expiries(bundle: Bundle, ends: dict[int, tuple[str, str | None]]) -> list[Expired]:
    """Every session a broker lost: each ended registration in ZooKeeper's history (`ends`: how each
    session ended), else the expiries the brokers' logs tell."""
    v = views(bundle)
    if v.evidence.zk_history:
        regs = v.registrations.where(F.col("ended_zxid").isNotNull()).orderBy("ended_zxid").collect()
        return [
            Expired(
                r.broker_id,
                r.session_id,
                *ends.get(r.session_id, ("unknown", None)),
                r.ended,
                zxids=(r.czxid, r.ended_zxid),
            )
            for r in regs
        ]
    # logs only: the client's "Unable to reconnect ... session 0x.. has expired" names the session
    rows = (
        bundle.cluster_events.where(F.col("event") == "zk.session_expired")
        .withColumn("session_id", session_of(F.col("attrs")["session"]))
        .groupBy("broker_id", "session_id")
        .agg(F.min_by(F.struct("file", "line_no", "ts"), F.struct("ts", "file", "line_no")).alias("first"))
        .orderBy("broker_id", "first.ts")
        .collect()  # one row per expired session
    )
    lived = lived_through(
        bundle.cluster_events,
        sessions=[r.session_id for r in rows if r.session_id is not None],
        default_timeout_ms=behaviour.zk_session_timeout_default_ms(v.evidence.kafka_version),
    )
    out = []
    for r in rows:
        how, file, line_no = lived.get(r.session_id, ("session_expiry", "", 0))
        told = file_ref(file, line_no) if file else None
        out.append(
            Expired(r.broker_id, r.session_id, how, told, r.first.ts, file_ref(r.first.file, r.first.line_no))
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
        if r.broker_id not in named:
            first = file_ref(r.first.file, r.first.line_no)
            out.append(Expired(r.broker_id, None, "session_expiry", None, r.first.ts, first, lines=r.n))
    return out


def expiry_findings(expired: list[Expired]) -> list[Finding]:
    """Brokers that lost their ZooKeeper session: ZooKeeper closed it without the broker shutting down
    (history), or the broker's own client logged the expiry (logs only)."""
    out = []
    refs: tuple[str | None, ...]
    for e in expired:
        text = CAUSE_TEXT[e.how].format(b=e.broker)
        session = f"0x{e.session:x}" if e.session is not None else "?"
        if e.zxids is not None:
            if e.how not in SILENT_ENDINGS:
                continue
            made, ended = e.zxids
            subject = {"broker": e.broker, "session": session, "zxid": hex_zxid(ended), "cause": e.how}
            said = (
                f"{text[0].upper()}{text[1:]}: session {session} (registered at zxid {hex_zxid(made)}) "
                f"ended at zxid {hex_zxid(ended)}, {e.at:%Y-%m-%d %H:%M:%S} ZooKeeper time."
            )
            refs = (txn_ref(made), txn_ref(ended), e.ref)
        elif e.lines:
            subject = {"broker": e.broker, "cause": e.how}
            said = (
                f"Broker {e.broker}'s ZooKeeper session expired ({e.lines} line(s), first at "
                f"{e.at:%Y-%m-%d %H:%M:%S} broker time)."
            )
            refs = (e.first, None, None)
        else:
            subject = {"broker": e.broker, "session": session, "cause": e.how}
            said = (
                f"{text[0].upper()}{text[1:]}: its client logged session {session} expired at "
                f"{e.at:%Y-%m-%d %H:%M:%S} broker time."
            )
            refs = (e.first, e.ref, None)
        out.append(Finding("broker.session_expired", WARNING, subject, said, tuple(x for x in refs if x)))
    return out
