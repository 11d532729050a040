"""What each new controller's own log tells of its failover, and the ZooKeeper sessions brokers lost:
facts `analysis/controller.py` judges, as plain values (a query or two each).

The controllers one after another are the history's (`history/controllers.py`); how each session ended is
`session_ends.py`'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from pyspark.sql import Row
from pyspark.sql import functions as F

from workbench.kafka import behaviour, printed
from workbench.model.elections import elected_lines, failover_steps
from workbench.model.refs import file_ref
from workbench.model.session_ends import ENDINGS, expiry_said, lived_through
from workbench.model.views import session_of, views
from workbench.together import Ask, Joined, given, rows

if TYPE_CHECKING:
    from workbench.frames import Bundle


@dataclass(frozen=True)
class Line:
    """A new controller's log line from its election to 'Ready to serve'."""

    event: str
    step: str | None
    ts: datetime
    file: str
    line_no: int


@dataclass
class FailoverLog:
    """A new controller's failover, as its own log tells it: its lines, its election and 'Ready to serve'
    lines, and what it resumed (kind -> what)."""

    steps: list[Line] = field(default_factory=list)
    elected: Line | None = None
    ready: Line | None = None
    resumed: dict[str, list[str]] = field(default_factory=dict)

    @property
    def ready_ms(self) -> int | None:
        if self.elected is None or self.ready is None:
            return None
        return round((self.ready.ts - self.elected.ts).total_seconds() * 1000)


def election_logs(bundle: Bundle) -> Ask[dict[tuple[int, int], FailoverLog]]:
    """Per (broker, epoch): its lines from its election to 'Ready to serve', and what it resumed."""

    def read(steps: list[Row], picked: list[Picked]) -> dict[tuple[int, int], FailoverLog]:
        out: dict[tuple[int, int], FailoverLog] = {}
        for r in steps:
            log = out.setdefault((r.broker_id, r.epoch), FailoverLog())
            if log.ready is not None:  # what it did after, resuming its work, is not its start
                continue
            line = Line(r.event, r.step, r.ts, r.file, r.line_no)
            log.steps.append(line)
            if r.event == "controller.elected":
                log.elected = line
            if r.event == "controller.ready":
                log.ready = line
        resumed = picked_up(picked)
        for key, log in out.items():
            log.resumed = resumed.get(key, {})
        return out

    steps = failover_steps(bundle).orderBy("broker_id", "epoch", "ts", "line_no")
    return Joined(read, rows(steps), picked_lines(bundle))


@dataclass(frozen=True)
class Picked:
    """A controller (broker, epoch) logged that it worked on `what`: a reassignment's partition, a deleted
    topic, preferred elections."""

    broker_id: int
    epoch: int
    kind: str
    what: str


def picked_lines(bundle: Bundle) -> Ask[list[Picked]]:
    """Per controller (broker, epoch) and thing: reassignments it sent or completed, deletions it
    (re)started, preferred elections it resumed, and the topics queued for deletion its failover listed
    (kind "listed deletions"; an empty list is one row with `what` ""); each line given to the broker's
    last election before it."""
    ev = bundle.cluster_events
    elected = elected_lines(bundle).select(
        "broker_id", F.col("failover_file").alias("file"), "epoch", F.col("ts").alias("from_ts")
    )
    kinds = {
        "reassignment.leader_and_isr_sent": "reassignments",
        "reassignment.caught_up": "reassignments",
        "reassignment.assignment_updated": "reassignments",
        "deletion.topic_started": "deletions",
        "leader_election.pending": "preferred elections",
        "controller.topics_to_delete": LISTED,
        "deletion.manager_initialized": LISTED,
    }
    picked = ev.where(F.col("event").isin(list(kinds))).where(
        (F.col("event") != "leader_election.pending") | (F.col("attrs")["step"] == "resuming")
    )
    attrs = F.col("attrs")
    # a partition's line names it; a list (preferred elections', the failover's deletions) is one per name
    listed = F.coalesce(attrs["partitions"], attrs["topics"], F.lit(""))
    names = F.split(F.regexp_replace(listed, r"^\w*(Set|List)\(|\)$|\s", ""), ",")
    what = F.explode(
        F.when(
            F.col("partition").isNotNull(),
            F.array(F.concat_ws("-", "topic", F.col("partition").cast("string"))),
        )
        .when(F.col("topic").isNotNull(), F.array("topic"))
        .otherwise(names)
    )
    kind = F.create_map(*[x for k, v in kinds.items() for x in (F.lit(k), F.lit(v))])[F.col("event")]
    lines = (
        picked.select("broker_id", "file", "line_no", "ts", kind.alias("kind"), what.alias("what"))
        .join(elected, ["broker_id", "file"])
        .where(F.col("ts") >= F.col("from_ts"))
        .groupBy("broker_id", "file", "line_no", "kind", "what")
        .agg(F.max("epoch").alias("epoch"))
        .where((F.col("what") != "") | (F.col("kind") == LISTED))
        .select("broker_id", "epoch", "kind", "what")
        .distinct()
    )
    return Ask(lines, lambda rs: [Picked(r.broker_id, r.epoch, r.kind, r.what) for r in rs])


LISTED = "listed deletions"


def picked_up(picked: list[Picked]) -> dict[tuple[int, int], dict[str, list[str]]]:
    """What each new controller picked up from ZooKeeper: a reassignment or a deletion that an earlier
    controller's log already shows under way (one an operator starts during its term is its own, not
    resumed; KafkaController.onControllerFailover resumes them after logging 'Ready to serve', 2.5.1:248-251,
    2.8.2:264-267, 3.6.2:319-322, so the log cannot tell them apart by place), and the preferred elections
    it says it resumes. Without an earlier controller's log nothing else is called resumed; a deletion
    the failover's own list of topics to be deleted leaves out was requested after it
    (fetchTopicDeletionsInProgress 2.8.2:964-975, TopicDeletionManager.init 2.8.2:96)."""
    first: dict[tuple[str, str], int] = {}
    listed: dict[tuple[int, int], set[str]] = {}
    for p in picked:
        if p.kind == LISTED:
            listed.setdefault((p.broker_id, p.epoch), set()).add(p.what)
        else:
            first[(p.kind, p.what)] = min(first.get((p.kind, p.what), p.epoch), p.epoch)
    out: dict[tuple[int, int], dict[str, set[str]]] = {}
    for p in picked:
        key = (p.broker_id, p.epoch)
        if p.kind == LISTED or (p.kind == "deletions" and p.what not in listed.get(key, {p.what})):
            continue
        if p.kind == "preferred elections" or first[(p.kind, p.what)] < p.epoch:
            out.setdefault(key, {}).setdefault(p.kind, set()).add(p.what)
    return {key: {k: sorted(v) for k, v in kinds.items()} for key, kinds in out.items()}


@dataclass(frozen=True)
class Expired:
    """A ZooKeeper session a broker lost, and how: from ZooKeeper's history (`zxids`: its registration's
    create and end; `at`: the end, ZooKeeper's clock), from the broker's client line naming the session
    (`at`: its first, broker's clock), from Kafka's own "Session expired." lines alone (`lines`: how
    many; no session), or from a controller's line saying it failed where its own log holds no shutdown
    (`left_silently`: no session, no lines; `at` the controller's clock). `how`: the cause
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


def expiries(bundle: Bundle, ends: dict[int, tuple[str, str | None]]) -> Ask[list[Expired]]:
    """Every session a broker lost: each ended registration in ZooKeeper's history (`ends`: how each
    session ended), else the expiries the brokers' logs tell (found here: their queries build on each
    other)."""
    v = views(bundle)
    if v.evidence.zk_history:
        regs = v.registrations.where(F.col("ended_zxid").isNotNull()).orderBy("ended_zxid")
        return Ask(
            regs,
            lambda regs: [
                Expired(
                    r.broker_id,
                    r.session_id,
                    *ends.get(r.session_id, ("unknown", None)),
                    r.ended,
                    zxids=(r.czxid, r.ended_zxid),
                )
                for r in regs
            ],
        )
    found = _expired_in_lines(bundle)
    return given(found)


def _expired_in_lines(bundle: Bundle) -> list[Expired]:
    v = views(bundle)
    # logs only: the client's "Unable to reconnect ... session 0x.. has expired" names the session, as a
    # ZooKeeper server's "Expiring session 0x.." does where it writes into a broker's log; the session is the
    # broker's whose registration it owned (its Stat line), else the client line's folder's
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
    rows = (
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
    out += left_silently(bundle, v.evidence.with_logs)
    for r in (
        bundle.cluster_events.where(expiry_said() == "zk.client_session_expired")
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


# How far apart the controller's and a broker's clocks may be when neither is aligned with ZooKeeper's: a
# broker's shutdown line precedes the end of its registration, but its clock may run ahead.
CLOCKS_APART_MS = 30_000


def left_silently(bundle: Bundle, with_logs: frozenset[int]) -> list[Expired]:
    """Logs only: the brokers a controller saw fail ("Broker failure callback for", every release:
    KafkaController.onBrokerFailure 0.10.2.2:469, 2.8.2:582, 3.6.2:636) whose own log, held in the
    bundle and begun before, has no shutdown or expiry line in the session that ended then. A
    registration is ephemeral: it ends when the session is closed (a shutdown) or expired, so a broker that
    did not shut down lost its session: it crashed, or stood still and has not run since. One query."""
    ev = bundle.cluster_events
    failed = ev.where(F.col("event") == "controller.broker_failure").select(
        F.explode(printed.ints(F.col("attrs")["brokers"])).alias("broker"),
        F.col("ts").alias("left"),
        "file",
        "line_no",
    )
    held = ev.where(F.col("broker_id").isin(sorted(with_logs))).withColumnRenamed("broker_id", "broker")
    first = held.groupBy("broker").agg(F.min("ts").alias("first"))
    marks = held.where(F.col("event").isin(list(ENDINGS))).select("broker", F.col("ts").alias("at"), "event")
    apart = F.expr(f"INTERVAL {CLOCKS_APART_MS // 1000} SECONDS")
    started = (F.col("event") == "broker.starting") & (F.col("at") <= F.col("left") - apart)
    ended = (F.col("event") != "broker.starting") & (F.col("at") <= F.col("left") + apart)
    rows = (
        failed.join(first, "broker")
        .where(F.col("first") < F.col("left"))
        .join(marks, "broker", "left")
        .groupBy("broker", "left", "file", "line_no")
        .agg(
            F.max(F.when(started, F.col("at"))).alias("began"),
            F.max(F.when(ended, F.col("at"))).alias("ended"),
        )
        .where(F.col("ended").isNull() | (F.col("ended") <= F.col("began")))
        .orderBy("left", "broker")
        .collect()  # one row per broker failure the controllers logged without its broker's shutdown
    )
    return [
        Expired(
            r.broker,
            None,
            "crash",
            None,
            r.left,
            file_ref(r.file, r.line_no),
            seen=f"the controller saw it fail at {r.left:%Y-%m-%d %H:%M:%S} (its clock)",
        )
        for r in rows
    ]
