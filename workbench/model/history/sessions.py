"""The ZooKeeper sessions brokers lost, from ZooKeeper's history and the brokers' lines together: each
ended registration ZooKeeper's history holds (its create and end, how it ended from the broker's own log,
`session_ends`), and what the lines alone tell where that history does not: a session a client or server
line names expired, a broker a controller saw fail whose own log holds no shutdown, a broker's own
"Session expired." lines. One session is one loss whichever tells it: ZooKeeper's account where it has
one (a session id is the same number in both), the lines' where it has none.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING

from pyspark.sql import DataFrame, Row
from pyspark.sql import functions as F

from workbench.kafka import behaviour, printed
from workbench.model.refs import file_ref
from workbench.model.session_ends import (
    HALTED,
    ended_registrations,
    ending,
    ends_session,
    expiry_said,
    negotiated,
    read_timed_out,
    session_timeout,
    timed_out,
)
from workbench.model.views import session_of, views
from workbench.together import Ask, Joined, rows

if TYPE_CHECKING:
    from workbench.frames import Bundle

# How far apart the controller's and a broker's clocks, or ZooKeeper's, may be when neither is aligned with
# the other: a broker's shutdown line precedes the end of its registration, but its clock may run ahead.
CLOCKS_APART_MS = 30_000


@dataclass(frozen=True)
class Expired:
    """A ZooKeeper session a broker lost, and how: from ZooKeeper's history (`zxids`: its registration's
    create and end; `at`: the end, ZooKeeper's clock), from the broker's client line naming the session
    (`at`: its first, broker's clock), from Kafka's own "Session expired." lines alone (`lines`: how
    many; no session), or from a controller's line saying it failed where its own log holds no shutdown
    (no session, no lines; `at` the controller's clock). `how`: the cause
    (model.session_ends' words) and `ref` the line telling it."""

    broker: int
    session: int | None
    how: str
    ref: str | None
    at: datetime
    first: str | None = None  # the first line saying it (logs only)
    zxids: tuple[int, int] | None = None
    lines: int = 0
    seen: str = ""  # logs only, no session named: what showed it gone
    # a controller saw it fail (`at`): its session timeout and what tells it, which bound when it went
    # silent before (`behaviour.went_silent`)
    timeout: tuple[int, str] | None = None


def lost(bundle: Bundle) -> Ask[list[Expired]]:
    """Every session a broker lost that the evidence shows: ZooKeeper's ended registrations with how each
    session ended (`session_ends.ended_registrations`, a fact of its own), and the lines'. Three queries,
    asked together."""
    v = views(bundle)
    default_timeout = behaviour.zk_session_timeout_default_ms(v.evidence.kafka_version)

    def named(found: list[Row], out: list[Row]) -> list[Expired]:
        lived = read_timed_out(out, default_timeout_ms=default_timeout)
        return [_named(r, lived) for r in sorted(found, key=lambda r: (r.broker_id, r.first.ts))]

    def told(named: list[Expired], silent: list[Expired], said: list[Expired]) -> list[Expired]:
        ended = [
            Expired(e.broker_id, e.session_id, e.how, e.told, e.ended, zxids=(e.czxid, e.ended_zxid))
            for e in ended_registrations(bundle)
        ]
        return merged(ended, named, silent, said)

    return Joined(
        told,
        Joined(named, rows(_named_sessions(bundle)), rows(timed_out(bundle.cluster_events))),
        Ask(_left_silently(bundle, v.evidence.with_logs), partial(_silent, bundle)),
        Ask(_said_expired(bundle), _said),
    )


def merged(
    ended: list[Expired], named: list[Expired], silent: list[Expired], said: list[Expired]
) -> list[Expired]:
    """One loss per session: ZooKeeper's ended registrations (`ended`), then the sessions the lines name
    that ZooKeeper's history does not hold, the failures a controller saw that no registration's end
    within CLOCKS_APART_MS tells, and a broker's own "Session expired." lines where no loss of its is told
    otherwise (a clean shutdown is none)."""
    known = {e.session for e in ended}
    out = ended + [e for e in named if e.session not in known]
    out += [
        s
        for s in silent
        if not any(
            e.broker == s.broker and abs((e.at - s.at).total_seconds()) * 1000 <= CLOCKS_APART_MS
            for e in ended
        )
    ]
    told = {e.broker for e in out if e.how != "shutdown"}
    return out + [e for e in said if e.broker not in told]


def _named_sessions(bundle: Bundle) -> DataFrame:
    """Each session a line names expired, with its first such line: the client's "Unable to reconnect ...
    session 0x.. has expired", or a ZooKeeper server's "Expiring session 0x.." where it writes into a
    broker's log; the session is the broker's whose registration it owned (its Stat line), else the client
    line's folder's."""
    ev = bundle.cluster_events
    a = F.col("attrs")
    owners = (
        ev.where((F.col("event") == "zk.ephemeral_created") & a["path"].rlike(r"^/brokers/ids/\d+$"))
        .select(
            a["ephemeral_owner"].cast("long").alias("session_id"),
            F.regexp_extract(a["path"], r"(\d+)$", 1).cast("int").alias("owner"),
        )
        .distinct()
    )
    return (
        ev.where(F.col("event").isin("zk.session_expired", "zk.server.session_expiring"))
        .withColumn("session_id", session_of(a["session"]))
        .join(owners, "session_id", "left")
        .withColumn(
            "broker_id",
            F.coalesce("owner", F.when(F.col("event") == "zk.session_expired", F.col("broker_id"))),
        )
        .where(F.col("broker_id").isNotNull())
        .groupBy("broker_id", "session_id")
        .agg(F.min_by(F.struct("file", "line_no", "ts"), F.struct("ts", "file", "line_no")).alias("first"))
    )  # one row per expired session


def _named(r: Row, lived: dict[int, tuple[str, str, int]]) -> Expired:
    how, file, line_no = lived.get(r.session_id, ("session_expiry", "", 0))
    told = file_ref(file, line_no) if file else None
    return Expired(r.broker_id, r.session_id, how, told, r.first.ts, file_ref(r.first.file, r.first.line_no))


def _said_expired(bundle: Bundle) -> DataFrame:
    """Per broker, Kafka's own "Session expired." lines: how many, and the first."""
    return (
        bundle.cluster_events.where(expiry_said() == "zk.client_session_expired")
        .groupBy("broker_id")
        .agg(
            F.count("*").alias("n"),
            F.min_by(F.struct("file", "line_no", "ts"), F.struct("ts", "file", "line_no")).alias("first"),
        )
    )  # one row per broker


def _said(found: list[Row]) -> list[Expired]:
    return [
        Expired(
            r.broker_id,
            None,
            "session_expiry",
            None,
            r.first.ts,
            file_ref(r.first.file, r.first.line_no),
            lines=r.n,
        )
        for r in sorted(found, key=lambda r: r.broker_id)
    ]


def _left_silently(bundle: Bundle, with_logs: frozenset[int]) -> DataFrame:
    """The brokers a controller saw fail ("Broker failure callback for", every release:
    KafkaController.onBrokerFailure 0.10.2.2:469, 2.8.2:582, 3.6.2:636) whose own log, held in the
    bundle and begun before, has no shutdown or expiry line in the session that ended then. A
    registration is ephemeral: it ends when the session is closed (a shutdown) or expired, so a broker that
    did not shut down lost its session: it crashed (its start again, `back`, where its log holds one),
    halted (its last halt line, `halt`), or stood still and has not run since. With the timeout
    negotiated for the last session it established before (`session_ends.negotiated`), where a line prints
    it."""
    ev = bundle.cluster_events
    failed = ev.where(F.col("event") == "controller.broker_failure").select(
        F.explode(printed.ints(F.col("attrs")["brokers"])).alias("broker"),
        F.col("ts").alias("left"),
        "file",
        "line_no",
    )
    held = ev.where(F.col("broker_id").isin(sorted(with_logs))).withColumnRenamed("broker_id", "broker")
    first = held.groupBy("broker").agg(F.min("ts").alias("first"))
    marks = held.where(ends_session()).select(
        "broker",
        F.col("ts").alias("at"),
        "event",
        ending().alias("how"),
        F.struct(F.col("ts").alias("at"), "file", "line_no").alias("said"),
        F.lit(None).cast("long").alias("session_id"),
    )
    established = held.where(F.col("event") == "zk.session_established").select(
        "broker",
        F.col("ts").alias("at"),
        "event",
        F.lit(None).cast("string").alias("how"),
        F.lit(None).cast(marks.schema["said"].dataType).alias("said"),
        session_of(F.col("attrs")["session"]).alias("session_id"),
    )
    apart = F.expr(f"INTERVAL {CLOCKS_APART_MS // 1000} SECONDS")
    starting = F.col("event") == "broker.starting"
    started = starting & (F.col("at") <= F.col("left") - apart)
    before = F.col("at") <= F.col("left") + apart
    ended = ~starting & (F.col("how") != HALTED) & before
    halt = (F.col("how") == HALTED) & before
    made = (F.col("event") == "zk.session_established") & before
    back = starting & (F.col("at") > F.col("left") - apart)
    return (
        failed.join(first, "broker")
        .where(F.col("first") < F.col("left"))
        .join(marks.unionByName(established), "broker", "left")
        .groupBy("broker", "left", "file", "line_no")
        .agg(
            F.max(F.when(started, F.col("at"))).alias("began"),
            F.max(F.when(ended, F.col("at"))).alias("ended"),
            F.max_by(F.when(halt, F.col("said")), F.when(halt, F.col("said"))).alias("halt"),
            F.max_by(F.when(made, F.col("session_id")), F.when(made, F.col("at"))).alias("session_id"),
            F.min_by(F.when(back, F.col("said")), F.when(back, F.col("said"))).alias("back"),
        )
        .where(F.col("ended").isNull() | (F.col("ended") <= F.col("began")))
        .join(negotiated(bundle), "session_id", "left")
    )  # one row per broker failure the controllers logged without its broker's shutdown or expiry


def _silent(bundle: Bundle, found: list[Row]) -> list[Expired]:
    """A failure without a shutdown: a crash (told by the broker's start again, where its log holds one,
    as `session_ends` tells it), or a halt where the broker's last line since it started says it halted for
    failed log dirs; with the session timeout that bounds when it went silent."""

    def how(r: Row) -> tuple[str, str | None]:
        if r.halt is not None and (r.began is None or r.halt.at > r.began):
            return HALTED, file_ref(r.halt.file, r.halt.line_no)
        return "crash", file_ref(r.back.file, r.back.line_no) if r.back is not None else None

    def timeout(r: Row) -> tuple[int, str] | None:
        known = {r.session_id: (r.negotiated.ms, r.negotiated.told)} if r.negotiated else {}
        ms, told = session_timeout(bundle, r.broker, r.session_id, known)
        return (ms, told) if ms is not None else None

    return [
        Expired(
            r.broker,
            None,
            *how(r),
            r.left,
            file_ref(r.file, r.line_no),
            seen=f"the controller saw it fail at {r.left:%Y-%m-%d %H:%M:%S} (its clock)",
            timeout=timeout(r),
        )
        for r in sorted(found, key=lambda r: (r.left, r.broker))
    ]
