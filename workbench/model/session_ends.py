"""How each broker's ZooKeeper session ended, read from that broker's own log and ordered by its own clock
only: after the line that established the session ZooKeeper closed, did it shut down, see its session
expire, or start again without either (it crashed)? An expiry the broker lived through is told apart by
its ZooKeeper client's time-out line for that session (`behaviour.stood_still`): idle for about the read
timeout, it kept running but heard nothing (a network partition, ZooKeeper unreachable); idle for the
whole session timeout or more, the process stood still (a hang: a long GC pause, a stalled disk). The
controller analysis names an election's cause from this, and each lost session is a finding of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import TYPE_CHECKING

from pyspark.sql import Column, DataFrame, Row
from pyspark.sql import functions as F

from workbench.kafka import behaviour
from workbench.model.log_dirs import HALTS
from workbench.model.reads import fact
from workbench.model.refs import file_ref, file_ref_col
from workbench.model.views import session_of, views
from workbench.together import Ask, answer, given

if TYPE_CHECKING:
    from workbench.frames import Bundle


# What ended a broker's session, from its own log: the first of these after the session began. Each
# event's wordings, loggers and source lines by version are the catalog's (kafka/messages/broker.py and
# zookeeper.py: KafkaServer.shutdown's "shutting down" and doControlledShutdown's line at every release
# read; the expiry as Kafka's ZooKeeperClient logs it, 1.1+: "Session expired" in ZooKeeperClient.scala at
# 1.1.1 and 2.0.1, as 101tec's ZkClient did in 0.10-1.x, or as ZooKeeper's ClientCnxn does). "starting"
# with neither before it is our reading, not a line of Kafka's: nothing is logged when a process is
# killed or its host dies, so the next start is the first trace of that end. A halt for failed log dirs
# (`halted`) ends it too.
ENDINGS = {
    "broker.shutting_down": "shutdown",
    "controlled_shutdown.started": "shutdown",
    "zk.client_session_expired": "session_expiry",
    "zk.session_expired": "session_expiry",
    "broker.starting": "crash",
}
HALTED = "halted"


def halted() -> Column:
    """A line after which its broker halted for failed log dirs (`log_dirs.HALTS`): it stopped at once,
    without a shutdown, and left its session to expire (`halted_broker_leaves_its_session_to_expire`)."""
    return (F.col("event") == "log_dir.failed") & F.col("attrs")["step"].isin(*HALTS)


def ends_session() -> Column:
    """A line of `ENDINGS`, or a halt."""
    return F.col("event").isin(list(ENDINGS)) | halted()


def ending() -> Column:
    """How a line that `ends_session` says its session ended (null for any other line)."""
    told = F.create_map(*[x for k, e in ENDINGS.items() for x in (F.lit(k), F.lit(e))])[F.col("event")]
    return F.when(halted(), F.lit(HALTED)).otherwise(told)


def lived_as(idle_ms: int, timeout_ms: int) -> str:
    """How a broker lived through its session's expiry, from its client's time-out line: it stood still
    (a hang) or ran on cut off from ZooKeeper (a network partition), `behaviour.stood_still`."""
    return "hang" if behaviour.stood_still(idle_ms, timeout_ms) else "network_partition"


def failed_on_expiry() -> Column:
    """A controller event that failed because its broker's session had expired: ZooKeeper's
    SessionExpiredException ("KeeperErrorCode = Session expired", KeeperException.java release-3.5.9:480,
    540-544) thrown out of the event ("Error processing event ...", KafkaController.process 2.8.2:2477)."""
    thrown = F.coalesce(F.col("attrs")["exception"], F.col("stack_trace"), F.lit(""))
    return (F.col("event") == "controller.event_error") & thrown.contains("SessionExpiredException")


def expiry_said() -> Column:
    """The event, with a controller event that failed on an expired session read as Kafka's own "Session
    expired." line (zk.client_session_expired)."""
    return F.when(failed_on_expiry(), F.lit("zk.client_session_expired")).otherwise(F.col("event"))


@dataclass(frozen=True)
class Ended:
    """A registration ZooKeeper's history saw end, and how its session ended (`session_ends`)."""

    broker_id: int
    session_id: int
    czxid: int  # its registration's create
    ended_zxid: int
    ended: datetime
    how: str  # shutdown, session_expiry, hang, network_partition, crash, halted, unknown
    told: str | None  # the log ref that says so
    halted_at: datetime | None = None  # its halt line's time (its broker's clock), where it halted


@fact
def session_ends(bundle: Bundle) -> dict[int, tuple[str, str | None]]:
    """Session id -> (how it ended: shutdown, session_expiry, hang, network_partition, crash, halted,
    unknown; the log ref that says so), for every broker session ZooKeeper's history saw end. Read from
    that broker's own log only."""
    ended = sorted(ended_registrations(bundle), key=lambda e: e.session_id)
    return {e.session_id: (e.how, e.told) for e in ended}


@fact
def ended_registrations(bundle: Bundle) -> list[Ended]:
    """Every registration ZooKeeper's history saw end (its broker, session, end) with how its session
    ended (`session_ends`): asked in one query, so that no reader asks the registrations again."""
    v = views(bundle)
    if not v.evidence.zk_history:
        return []
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
    marks = (
        ev.withColumn("event", expiry_said())
        .where(ends_session())
        .select("broker_id", "ts", "file", "line_no", ending().alias("how"))
    )
    first = (
        regs.select("broker_id", "session_id", "czxid", "ended_zxid", "ended")
        .join(began, ["broker_id", "session_id"], "left")
        .join(marks, ["broker_id"], "left")
        .withColumn(
            "m",
            F.when(
                F.col("began").isNotNull() & (F.col("ts") > F.col("began")),
                F.struct("how", "file", "line_no", "ts"),
            ),
        )
        .groupBy("broker_id", "session_id", "czxid", "ended_zxid", "ended", "began")
        .agg(F.min_by("m", F.when(F.col("m").isNotNull(), F.struct("ts", "file", "line_no"))).alias("m"))
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
    expired = [sid for sid, (how, _) in out.items() if how == "session_expiry"]
    out.update(_lived_through(bundle, expired))
    ordered = sorted(first, key=lambda r: (r.ended_zxid, r.broker_id, r.session_id))
    return [
        Ended(
            r.broker_id,
            r.session_id,
            r.czxid,
            r.ended_zxid,
            r.ended,
            *out[r.session_id],
            r.m.ts if out[r.session_id][0] == HALTED else None,
        )
        for r in ordered
    ]


def _lived_through(bundle: Bundle, sessions: list[int]) -> dict[int, tuple[str, str | None]]:
    """Session -> (hang or network_partition, the time-out line), for the expired sessions asked for."""
    if not sessions:
        return {}
    negotiated = answer(negotiated_timeouts(bundle, sessions))
    found = lived_through(bundle.cluster_events, {s: ms for s, (ms, _) in negotiated.items()}, sessions)
    return {sid: (how, file_ref(f, n)) for sid, (how, f, n) in found.items()}


def lived_through(
    events: DataFrame,
    timeouts: dict[int, int] | None = None,
    sessions: list[int] | None = None,
    default_timeout_ms: int | None = None,
) -> dict[int, tuple[str, str, int]]:
    """Session -> (hang or network_partition, file, line) for each session whose ZooKeeper client logged
    a time-out, from the longest idle time it reported (`behaviour.stood_still`) against the session's
    timeout: `timeouts` (ZooKeeper's createSession), else the one its established line reports, else
    `default_timeout_ms`. Events: any brokers' typed lines (`cluster_events`, or `read_logs`' events)."""
    rows = timed_out(events, sessions).collect()  # one row per session that timed out
    return read_timed_out(rows, timeouts, default_timeout_ms)


def timed_out(events: DataFrame, sessions: list[int] | None = None) -> DataFrame:
    """Per session whose client logged a time-out (of `sessions`, None: any): its longest idle time and
    where it said so (`out`), and the timeout its established line reports (`logged_timeout`)."""
    ev = events.where(F.col("event").isin("zk.session_timed_out", "zk.session_established")).withColumn(
        "session_id", session_of(F.col("attrs")["session"])
    )
    if sessions is not None:
        ev = ev.where(F.col("session_id").isin(sessions))
    return (
        ev.groupBy("session_id")
        .agg(
            F.max_by(
                F.struct(F.col("attrs")["idle_ms"].cast("long").alias("idle_ms"), "file", "line_no"),
                F.when(
                    F.col("event") == "zk.session_timed_out",
                    F.struct(F.col("attrs")["idle_ms"].cast("long"), "file", "line_no"),
                ),
            ).alias("out"),
            F.max(F.col("attrs")["timeout_ms"].cast("long")).alias("logged_timeout"),
        )
        .where(F.col("out").isNotNull())
    )


def read_timed_out(
    rows: list[Row], timeouts: dict[int, int] | None = None, default_timeout_ms: int | None = None
) -> dict[int, tuple[str, str, int]]:
    """`lived_through` of `timed_out`'s rows."""
    found = {}
    for r in rows:
        timeout = (timeouts or {}).get(r.session_id) or r.logged_timeout or default_timeout_ms
        if r.out.idle_ms is None or timeout is None:
            continue
        found[r.session_id] = (lived_as(r.out.idle_ms, timeout), r.out.file, r.out.line_no)
    return found


def session_timeout(
    bundle: Bundle, broker: int, session: int | None, known: dict[int, tuple[int, str]]
) -> tuple[int | None, str]:
    """A broker's session timeout: as ZooKeeper negotiated it (`known`: `negotiated_timeouts`), else what
    the broker asked for (server.properties, else Kafka's default for the version); and what tells it,
    with the release's default where it is shorter (`behaviour.below_default`)."""
    ev = views(bundle).evidence
    if session is not None and session in known:
        ms, told = known[session]
        return ms, f"negotiated, {told}{behaviour.below_default(ms, ev.kafka_version)}"
    asked = ev.configs.get(broker, {}).get("zookeeper.session.timeout.ms")
    if asked is not None and asked.strip().isdigit():
        below = behaviour.below_default(int(asked), ev.kafka_version)
        return int(asked), f"asked for in broker {broker}'s server.properties{below}"
    default = behaviour.zk_session_timeout_default_ms(ev.kafka_version)
    return (default, f"Kafka {ev.kafka_version}'s default") if default is not None else (None, "")


# The lines that print the timeout ZooKeeper negotiated for a session: the client's as it is established
# (ClientCnxn), the server's as it grants it (ZooKeeperServer)
NEGOTIATED_LINES = ("zk.session_established", "zk.server.session_established")


def negotiated(bundle: Bundle) -> DataFrame:
    """session_id, negotiated (ms, told): the timeout ZooKeeper negotiated for each session and what tells
    it: its createSession txn, else a line that prints it (the broker's ZooKeeper client, or the server),
    whichever evidence the bundle holds."""
    txns = (
        views(bundle)
        .history.where(F.col("op") == "createSession")
        .select(
            "session_id",
            F.col("session_timeout").cast("long").alias("ms"),
            F.lit(0).alias("rank"),
            F.lit("ZooKeeper's createSession").alias("told"),
        )
    )
    lines = bundle.cluster_events.where(F.col("event").isin(*NEGOTIATED_LINES)).select(
        session_of(F.col("attrs")["session"]).alias("session_id"),
        F.col("attrs")["timeout_ms"].try_cast("long").alias("ms"),
        F.lit(1).alias("rank"),
        F.concat(F.lit("as "), file_ref_col("file", "line_no"), F.lit(" prints")).alias("told"),
    )
    return (
        txns.unionByName(lines)
        .where(F.col("ms").isNotNull() & F.col("session_id").isNotNull())
        .groupBy("session_id")
        .agg(F.min_by(F.struct("ms", "told"), F.struct("rank", "told")).alias("negotiated"))
    )


def negotiated_timeouts(bundle: Bundle, sessions: list[int]) -> Ask[dict[int, tuple[int, str]]]:
    """Session -> its negotiated timeout and what tells it (`negotiated`), for the sessions asked for."""
    asked = negotiated(bundle).where(F.col("session_id").isin(sessions))  # one row per session
    return Ask(asked, lambda rs: {r.session_id: (r.negotiated.ms, r.negotiated.told) for r in rs})


@dataclass(frozen=True)
class Heard:
    """When a broker's ZooKeeper client last heard from its server in a session: `at`, on ZooKeeper's
    clock where the broker's skew is known (`aligned`), `idle_ms` before its time-out line (`ref`)."""

    at: datetime
    idle_ms: int
    ref: str
    aligned: bool


def last_heard(bundle: Bundle, owners: dict[int, int], skews: dict[int, int]) -> Ask[dict[int, Heard]]:
    """Session -> when its broker (`owners`: session -> broker) last heard from ZooKeeper in it, from its
    client's first time-out line for it after it last (re)connected: the line's time less the idle time
    it reports (a later line's idle counts from a connection attempt, not from the server). A live client
    is heard at least every third of the timeout, so it went silent at most that long after."""
    if not owners:
        return given({})
    ev = bundle.cluster_events.where(F.col("event").isin("zk.session_timed_out", "zk.session_established"))
    out_line = F.struct("ts", F.col("attrs")["idle_ms"].cast("long").alias("idle_ms"), "file", "line_no")
    rows = (
        ev.withColumn("session_id", session_of(F.col("attrs")["session"]))
        .where(F.col("session_id").isin(list(owners)))
        .groupBy("broker_id", "session_id")
        .agg(
            F.max(F.when(F.col("event") == "zk.session_established", F.col("ts"))).alias("connected"),
            F.sort_array(F.collect_list(F.when(F.col("event") == "zk.session_timed_out", out_line))).alias(
                "outs"
            ),
        )  # one row per session, with its few time-out lines
    )
    return Ask(rows, partial(_heard, owners, skews))


def _heard(owners: dict[int, int], skews: dict[int, int], rows: list[Row]) -> dict[int, Heard]:
    out = {}
    for r in rows:
        t = next((o for o in r.outs if r.connected is None or o.ts > r.connected), None)
        if r.broker_id != owners[r.session_id] or t is None or t.idle_ms is None:
            continue
        skew = skews.get(r.broker_id)
        at = t.ts - timedelta(milliseconds=t.idle_ms + (skew or 0))
        out[r.session_id] = Heard(at, t.idle_ms, file_ref(t.file, t.line_no), skew is not None)
    return out


# How a session ended after which its broker had gone silent before ZooKeeper expired it: it crashed,
# halted, stood still, was cut off, or (its client's time-out line absent) at least did not shut down.
SILENT_ENDINGS = ("crash", HALTED, "hang", "network_partition", "session_expiry")


WAKE_MS = 1_000  # what a process that ran again logs around its client's time-out line, queued meanwhile


def unheard(events: DataFrame) -> DataFrame:
    """broker_id, heard, said, file, line_no: each time a broker's ZooKeeper client said it had not heard
    from its server ("have not heard from server in <idle>ms" at `said`), and when it last had (`heard`:
    idle counts from the last packet received or connection attempt, on a monotonic clock, so a pause
    counts: `zk_client_idle_beyond_read_timeout_means_it_stood_still`)."""
    idle = F.col("attrs")["idle_ms"].cast("long")
    return events.where((F.col("event") == "zk.session_timed_out") & idle.isNotNull()).select(
        "broker_id",
        (F.col("ts") - F.make_dt_interval(secs=idle / 1000)).alias("heard"),
        F.col("ts").alias("said"),
        "file",
        "line_no",
    )


def signs_of_life(events: DataFrame) -> DataFrame:
    """The brokers' lines (`events`) that show their process at work: all but those logged from the moment
    a broker's ZooKeeper client last heard from its server to just after it said so (`unheard`). A process
    that stood still writes them when it runs again; one cut off from ZooKeeper does no work that needs it."""
    said = unheard(events).select(F.col("broker_id").alias("b"), "heard", "said")
    within = (F.col("broker_id") == F.col("b")) & F.col("ts").between(
        F.col("heard"), F.col("said") + F.expr(f"INTERVAL {WAKE_MS} MILLISECONDS")
    )
    return events.join(F.broadcast(said), within, "left_anti")
