"""How each controller's tenure ended, as the brokers' own lines tell it: the controllers' history where
ZooKeeper's is absent (ZooKeeper's, where held, is authoritative: `elections.py`).

Who was controller before an election the logs show, when no earlier election is in them: the broker that
last did a controller's work before it. Only the active controller logs its state changes ("[Controller
id=N epoch=E] ..."), its own leader elections, deletions and reassignments, and only it has request
threads to the brokers ("[RequestSendThread controllerId=N]"), which it stops when it resigns. A line
saying "Resigning" is no such sign: every broker whose session expires logs it (behaviour
`resigning_logged_by_every_expired_broker`).

Why it ended: the first of its session's expiry, its shutdown, its halt for failed log dirs, or its start
again (a crash) after its last act; an expiry its ZooKeeper client lived through is a hang or a cut-off
network (`session_ends.lived_through`). Each broker's lines are on its own clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from pyspark.sql import functions as F

from workbench.kafka import behaviour
from workbench.model.outage import Outage
from workbench.model.refs import Said
from workbench.model.session_ends import HALTED, ending, ends_session, expiry_said, lived_as, negotiated
from workbench.model.views import session_of, views

if TYPE_CHECKING:
    from workbench.frames import Bundle

# what only the active controller logs (besides its state-change lines, which carry its epoch)
ACTS = ("leader_election.", "deletion.", "reassignment.")
ACT_EVENTS = (
    "controller.ready",
    "controller.broker_change",
    "controller.broker_startup",
    "controller.broker_failure",
    "isr.updating",
    "isr.updated_by_controller",  # not isr.updated: every leader logs that of its own partitions
)
# its request threads, which it stops as it resigns: proof it was the controller, not of when it worked
CHANNEL = "RequestSendThread controllerId="
RESIGNED = ("controller.resigning", "controller.resigned")
CLOSED = "broker.shut_down"  # "shut down completed": its session closed then (KafkaServer.shutdown)
WITHIN_S = 60  # a controller resigning stops its threads within this long of its session's expiry


@dataclass(frozen=True)
class TenureEnd:
    """The controller before an election as its lines tell: its broker, the epoch its lines print (None:
    none do), its last act as controller, how its tenure ended (`how`: shutdown, session_expiry, hang,
    network_partition, crash, halted, unknown) and the line saying so, its resignation, and its ZooKeeper
    client's time-out (`idle_ms` before `timed_out`)."""

    broker: int
    epoch: int | None
    last_act: Said
    last_event: str
    how: str
    said: Said | None
    resigned: Said | None
    timed_out: Said | None
    idle_ms: int | None
    timeout_ms: int | None
    timeout_from: str = ""  # where the session timeout was read
    closed: Said | None = None  # its "shut down completed"


def ended_before(bundle: Bundle, elections: list[tuple[int, datetime]]) -> dict[int, TenureEnd]:
    """Epoch -> the tenure that ended before each election (epoch, the time of its election line) the logs
    show, where some broker did a controller's work before it. One query."""
    if not elections:
        return {}
    ev = bundle.cluster_events
    wanted = bundle.spark.createDataFrame(elections, "e_epoch int, e_ts timestamp")
    ctx_epoch = F.regexp_extract("context", r"^Controller id=\d+ epoch=(\d+)$", 1)
    channel = F.col("context").startswith(CHANNEL)
    acting = (ctx_epoch != "") | channel | F.col("event").isin(*ACT_EVENTS)
    for prefix in ACTS:
        acting |= F.col("event").startswith(prefix)
    acts = ev.where(acting).select(
        "broker_id",
        "ts",
        "file",
        "line_no",
        "event",
        F.when(ctx_epoch != "", ctx_epoch.cast("int")).alias("epoch"),
        channel.alias("channel"),
    )
    before = acts.join(F.broadcast(wanted), F.col("ts") < F.col("e_ts")).where(
        F.col("epoch").isNull() | (F.col("epoch") < F.col("e_epoch"))
    )
    by = (
        before.groupBy("e_epoch", "e_ts")
        .agg(F.max_by("broker_id", F.struct("ts", "line_no")).alias("broker_id"))
        .join(before, ["e_epoch", "e_ts", "broker_id"])
    )
    work = ~F.col("channel")
    last = by.groupBy("e_epoch", "e_ts", "broker_id").agg(
        F.max_by(F.struct("ts", "file", "line_no", "event"), F.when(work, F.struct("ts", "line_no"))).alias(
            "act"
        ),
        F.max_by(F.struct("ts", "file", "line_no", "event"), F.struct("ts", "line_no")).alias("any_act"),
        F.min(F.when(F.col("channel"), F.col("ts"))).alias("stopped"),
        F.max("epoch").alias("epoch"),
    )
    # where its only lines are its threads' stops, its tenure ended within WITHIN_S before them
    from_ts = F.coalesce(F.col("act.ts"), F.col("stopped") - F.expr(f"INTERVAL {WITHIN_S} SECONDS"))
    last = last.select(
        "e_epoch",
        "e_ts",
        "broker_id",
        F.coalesce("act", "any_act").alias("act"),
        from_ts.alias("from_ts"),
        "epoch",
    ).select("e_epoch", "e_ts", "broker_id", "act.*", "from_ts", "epoch")
    said = F.struct("ts", "file", "line_no")
    endings = (
        ev.withColumn("event", expiry_said()).where(
            ends_session()
            | F.col("event").isin(*RESIGNED, CLOSED, "zk.session_timed_out", "zk.session_established")
        )
    ).select(
        F.col("broker_id").alias("b"),
        F.col("ts").alias("at"),
        F.col("event").alias("said"),
        ending().alias("how"),
        said.alias("line"),
        F.col("attrs")["idle_ms"].try_cast("long").alias("idle_ms"),
        F.col("attrs")["timeout_ms"].try_cast("long").alias("timeout_ms"),
        session_of(F.col("attrs")["session"]).alias("session_id"),
    )
    after = F.col("at") > F.col("from_ts")
    established = F.col("said") == "zk.session_established"

    def first(cond: F.Column, value: F.Column) -> F.Column:
        return F.min_by(F.when(cond & after, value), F.when(cond & after, F.struct("at", "line.line_no")))

    ended = (
        last.join(endings, F.col("b") == F.col("broker_id"), "left")
        .groupBy("e_epoch", "broker_id", "ts", "file", "line_no", "event", "epoch")
        .agg(
            first(F.col("how").isNotNull(), F.struct("how", "line")).alias("end"),
            first(F.col("said").isin(*RESIGNED), F.col("line")).alias("resigned"),
            first(F.col("said") == CLOSED, F.col("line")).alias("closed"),
            first(
                F.col("said") == "zk.session_timed_out", F.struct(F.col("line").alias("line"), "idle_ms")
            ).alias("timed_out"),
            # the session it held at its last act: the last it established before (its id, in its line)
            F.max_by(F.col("session_id"), F.when(established & ~after, F.struct("at", "line.line_no"))).alias(
                "session_id"
            ),
            F.max(F.when(after, F.col("timeout_ms"))).alias("timeout_ms"),  # the sessions it made after
        )
    )
    rows = ended.join(negotiated(bundle), "session_id", "left").collect()  # one row per election
    version = views(bundle).evidence.kafka_version
    default_timeout = behaviour.zk_session_timeout_default_ms(version)
    out = {}
    for r in rows:
        timed_out = Said(**r.timed_out.line.asDict()) if r.timed_out else None
        idle = r.timed_out.idle_ms if r.timed_out else None
        # its session's negotiated timeout (`session_ends.negotiated`), else that of a session it made after
        # (the broker's own setting, as a rule unchanged by a restart), else the version's default
        timeout = r.negotiated.ms if r.negotiated else r.timeout_ms or default_timeout
        told = (  # how the timeout is known
            f"negotiated, {r.negotiated.told}"
            if r.negotiated
            else "negotiated for a later session"
            if r.timeout_ms
            else f"Kafka {version}'s default"
            if timeout
            else ""
        )
        cause: str = r.end.how if r.end else "unknown"
        if cause == "session_expiry" and idle is not None and timeout is not None:
            cause = lived_as(idle, timeout)
        out[r.e_epoch] = TenureEnd(
            r.broker_id,
            r.epoch,
            Said(r.ts, r.file, r.line_no),
            r.event,
            cause,
            Said(**r.end.line.asDict()) if r.end else None,
            Said(**r.resigned.asDict()) if r.resigned else None,
            timed_out,
            idle,
            timeout,
            told + (behaviour.below_default(timeout, version) if timeout else ""),
            Said(**r.closed.asDict()) if r.closed else None,
        )
    return out


def logged_outage(end: TenureEnd, elected: datetime, ready: datetime) -> Outage | None:
    """How long no controller worked, from the old controller's last sign of life (its broker's clock) to
    the new one's 'Ready to serve' (its own); None where nothing says how its tenure ended. A client that
    stood still or was cut off last heard from ZooKeeper `idle_ms` before its time-out line, and went silent
    at most a third of the session timeout later; a crashed controller or one whose session expired went
    silent a session timeout before the election its expiry let happen (`behaviour.went_silent`), not
    before its last act; one that shut down worked until its shutdown ended."""

    def ms(t: datetime) -> int:
        return round((ready - t).total_seconds() * 1000)

    what = f"its last act as controller ({end.last_event}, on its own clock)"
    ping = round((end.timeout_ms or 0) * behaviour.PING_EVERY_OF_TIMEOUT)
    if end.how in ("hang", "network_partition") and end.timed_out is not None and end.idle_ms is not None:
        heard = end.timed_out.ts - timedelta(milliseconds=end.idle_ms)
        return Outage(
            max(0, ms(heard) - ping),
            ms(heard),
            heard,
            f"when its ZooKeeper client last heard from ZooKeeper ({end.idle_ms} ms before its time-out, "
            "on its own clock)",
            end.timeout_ms,
            end.timeout_from,
            (end.timed_out.ref,),
        )
    if end.how == "unknown":
        return None
    if end.how == "shutdown":  # it worked until its shutdown closed its session
        last = max((x for x in (end.closed, end.said, end.last_act) if x is not None), key=lambda x: x.ts)
        gone = "its shutdown's end (on its own clock)" if last is end.closed else what
        return Outage(ms(last.ts), ms(last.ts), last.ts, gone, None, "", (last.ref,))
    if end.how == HALTED and end.said is not None:  # it stopped at its halt line, whatever its session did
        gone = "its halt for failed log dirs (on its own clock)"
        return Outage(ms(end.said.ts), ms(end.said.ts), end.said.ts, gone, None, "", (end.said.ref,))
    if end.timeout_ms is None:
        upper = ms(end.last_act.ts)
        return Outage(upper, upper, end.last_act.ts, what, None, "", (end.last_act.ref,))
    at = round(elected.timestamp() * 1000)
    earliest, latest = behaviour.went_silent(at, end.timeout_ms)
    earliest = max(earliest, round(end.last_act.ts.timestamp() * 1000))
    end_ms = round(ready.timestamp() * 1000)
    return Outage(
        max(0, end_ms - max(latest, earliest)),
        end_ms - earliest,
        end.last_act.ts,
        what,
        end.timeout_ms,
        end.timeout_from,
        (end.last_act.ref,),
        expiry_said=f"the election that expiry let happen (at {elected:%H:%M:%S.%f}"[:-3]
        + ", the new controller's clock), which came after it by as long as the brokers took to learn of it",
    )
