"""Controller elections and failovers, and the ZooKeeper sessions brokers lost (seeds 002, 003).

The elections themselves, from ZooKeeper's history or the controllers' logs, are `elections.py`'s views
(re-exported here for the notebooks: `controller.elections(bundle)`). Why the previous controller went is
read from that broker's own log (`sessions.py`). The new controller's log gives the onControllerFailover
steps and what it resumed.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pyspark.sql import functions as F

from workbench.analysis.contract import CRITICAL, INFO, WARNING, Analysis, Kind, Need, maybe, two_halves
from workbench.analysis.findings import Coverage, Finding, file_ref, hex_zxid, ranges, txn_ref
from workbench.analysis.sessions import CAUSE_TEXT, Expired, expiries, expiry_findings
from workbench.model.elections import elected, elected_lines, elections, failover_steps
from workbench.model.history_gaps import Gap
from workbench.model.outage import Failover, Outage, outages
from workbench.model.session_ends import session_ends
from workbench.model.skew import skew_ms
from workbench.model.views import views

if TYPE_CHECKING:
    from workbench.frames import Bundle

CHECK = "controller"
FLAPPING_WINDOW_MS = 10 * 60_000
FLAPPING_ELECTIONS = 3
__all__ = ["ANALYSIS", "elected", "elected_lines", "elections", "failover_steps", "findings"]


@dataclass
class Election:
    """One election, linked to the one before it (`previous`), with how its controller's tenure ended:
    `gone_zxid`/`gone_time` the close of its session or /controller's delete, `gone_by` the session that
    deleted it, `session` the controller's own."""

    epoch: int | None
    broker: int | None
    zxid: int | None
    time: Any
    ref: str
    previous: Election | None = None
    gone_zxid: int | None = None
    gone_time: Any = None
    gone_by: int | None = None
    session: int | None = None


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


@dataclass
class Facts:
    """What the controller analysis judges: the elections in order; per (broker, epoch) its failover log;
    how each session ended (`session_ends`); the brokers with logs; the gap the history resumed after;
    each failover's outage (epoch -> `outage.Outage`); the sessions brokers lost."""

    chain: list[Election]
    logs: dict[tuple[int, int], FailoverLog]
    ends: dict[int, tuple[str, str | None]]
    with_logs: frozenset[int]
    resumed_after: Gap | None
    outages: dict[int, Outage]
    expired: list[Expired]


def facts(bundle: Bundle) -> Facts:
    v = views(bundle)
    ends = session_ends(bundle)
    chain = _chain(bundle)
    logs = _election_logs(bundle)
    lost = _outages(bundle, chain, ends, logs)
    return Facts(chain, logs, ends, v.evidence.with_logs, v.resumed_after, lost, expiries(bundle, ends))


def judge(f: Facts, coverage: Coverage) -> list[Finding]:
    out: list[Finding] = []
    for e in f.chain:
        log = f.logs.get((e.broker, e.epoch)) if e.broker is not None and e.epoch is not None else None
        after_gap = f.resumed_after if e is f.chain[0] and e.zxid is not None else None
        outage = f.outages.get(e.epoch) if e.epoch is not None else None
        out.append(_election_finding(e, f.ends, log or FailoverLog(), f.with_logs, after_gap, outage))
    return out + _flapping(f.chain) + expiry_findings(f.expired)


def _chain(bundle: Bundle) -> list[Election]:
    """Elections in order: from ZooKeeper's history when there is one, else from the controllers' logs."""
    v = views(bundle)
    out: list[Election] = []
    if v.evidence.zk_history:
        for r in elections(bundle).orderBy("zxid").collect():
            out.append(
                Election(
                    r.epoch,
                    r.broker,
                    r.zxid,
                    r.time,
                    txn_ref(r.zxid),
                    None,
                    r.gone_zxid,
                    r.gone_time,
                    r.gone_by,
                    r.session_id,
                )
            )
    else:
        rows = elected_lines(bundle).orderBy("epoch", "ts").collect()
        for r in rows:
            if out and out[-1].epoch == r.epoch:
                continue
            out.append(Election(r.epoch, r.broker_id, None, r.ts, file_ref(r.file, r.line_no)))
    for before, after in itertools.pairwise(out):
        after.previous = before
    return out


def _election_logs(bundle: Bundle) -> dict[tuple[int, int], FailoverLog]:
    """Per (broker, epoch): its lines from its election to 'Ready to serve', and what it resumed."""
    steps = failover_steps(bundle).orderBy("broker_id", "epoch", "ts", "line_no").collect()
    out: dict[tuple[int, int], FailoverLog] = {}
    for r in steps:
        log = out.setdefault((r.broker_id, r.epoch), FailoverLog())
        line = Line(r.event, r.step, r.ts, r.file, r.line_no)
        log.steps.append(line)
        if r.event == "controller.elected":
            log.elected = line
        if r.event == "controller.ready":
            log.ready = line
    resumed = picked_up(_picked(bundle))
    for key, log in out.items():
        log.resumed = resumed.get(key, {})
    return out


@dataclass(frozen=True)
class Picked:
    """A controller (broker, epoch) logged that it worked on `what`: a reassignment's partition, a deleted
    topic, preferred elections."""

    broker_id: int
    epoch: int
    kind: str
    what: str


def _picked(bundle: Bundle) -> list[Picked]:
    """Per controller (broker, epoch) and thing: reassignments it sent or completed, deletions it
    (re)started, preferred elections it resumed; each line given to the broker's last election before it."""
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
    }
    picked = ev.where(F.col("event").isin(list(kinds))).where(
        (F.col("event") != "leader_election.pending") | (F.col("attrs")["step"] == "resuming")
    )
    what = F.coalesce(
        F.concat_ws("-", "topic", F.col("partition").cast("string")), F.col("attrs")["partitions"]
    )
    kind = F.create_map(*[x for k, v in kinds.items() for x in (F.lit(k), F.lit(v))])[F.col("event")]
    rows = (
        picked.select(
            "broker_id",
            "file",
            "line_no",
            "ts",
            kind.alias("kind"),
            F.when(F.col("partition").isNull(), F.col("topic")).otherwise(what).alias("what"),
        )
        .join(elected, ["broker_id", "file"])
        .where(F.col("ts") >= F.col("from_ts"))
        .groupBy("broker_id", "file", "line_no", "kind", "what")
        .agg(F.max("epoch").alias("epoch"))
        .where(F.col("what").isNotNull() & (F.col("what") != ""))
        .select("broker_id", "epoch", "kind", "what")
        .distinct()
        .collect()
    )
    return [Picked(r.broker_id, r.epoch, r.kind, r.what) for r in rows]


def picked_up(picked: list[Picked]) -> dict[tuple[int, int], dict[str, list[str]]]:
    """What each new controller picked up from ZooKeeper: a reassignment or a deletion that an earlier
    controller's log already shows under way (one an operator starts during its term is its own, not
    resumed; KafkaController.onControllerFailover resumes them after logging 'Ready to serve', 2.5.1:248-251,
    2.8.2:264-267, 3.6.2:319-322, so the log cannot tell them apart by place), and the preferred elections
    it says it resumes. Without an earlier controller's log nothing else is called resumed."""
    first: dict[tuple[str, str], int] = {}
    for p in picked:
        first[(p.kind, p.what)] = min(first.get((p.kind, p.what), p.epoch), p.epoch)
    out: dict[tuple[int, int], dict[str, set[str]]] = {}
    for p in picked:
        if p.kind == "preferred elections" or first[(p.kind, p.what)] < p.epoch:
            out.setdefault((p.broker_id, p.epoch), {}).setdefault(p.kind, set()).add(p.what)
    return {key: {k: sorted(v) for k, v in kinds.items()} for key, kinds in out.items()}


def _election_finding(
    e: Election,
    ends: dict[int, tuple[str, str | None]],
    log: FailoverLog,
    with_logs: frozenset[int],
    after_gap: Gap | None = None,
    outage: Outage | None = None,
) -> Finding:
    """An election's finding; `after_gap`: the gap the history resumed after, when this is the first
    election read after it (a later epoch than 1 then had a controller before it that the gap hides)."""
    refs = [e.ref]
    subject: dict[str, Any] = {"epoch": e.epoch, "broker": e.broker}
    if e.zxid is not None:
        subject["zxid"] = hex_zxid(e.zxid)
    p = e.previous
    if p is None and after_gap is not None and (e.epoch is None or e.epoch > 1):
        kind, severity, cause = "controller.failover", WARNING, "unknown"
        text = f"Controller moved to broker {e.broker} (epoch {e.epoch}) from a controller ZooKeeper's "
        text += f"readable history does not show: {after_gap.describe()}"
        refs += [file_ref(d.file) for d in after_gap.damage]
    elif p is None:
        text = f"Broker {e.broker} was elected controller with epoch {e.epoch}: "
        text += "the first election in the evidence"
        if e.epoch is not None and e.epoch > 1:
            text += f" (the {e.epoch - 1} before it are not)"
        kind, severity, cause = "controller.election", INFO, "first"
    else:
        kind, severity = "controller.failover", WARNING
        cause, why_ref = _cause(p, ends)
        text = f"Controller moved from broker {p.broker} (epoch {p.epoch}) "
        text += f"to broker {e.broker} (epoch {e.epoch})"
        if outage is not None:  # the headline: how long nothing acted as controller
            subject["outage_ms"] = [outage.lower_ms, outage.upper_ms]
            text += ", " + outage.headline()
            refs += outage.refs
        text += ": " + CAUSE_TEXT[cause].format(b=p.broker, by=_by(p.gone_by))
        if p.gone_zxid is not None:
            text += f" (zxid {hex_zxid(p.gone_zxid)})"
            refs.append(txn_ref(p.gone_zxid))
        if outage is not None and outage.detail():
            text += "; " + outage.detail()
        if p.gone_zxid is not None:
            gap = (e.time - p.gone_time).total_seconds() * 1000 if e.time and p.gone_time else None
            if gap is not None:
                subject["gap_ms"] = round(gap)
                text += f"; the next election came {round(gap)} ms after its session ended"
                text += " (ZooKeeper's clock)"
        if why_ref:
            refs.append(why_ref)
        subject["previous"] = p.broker
    subject["cause"] = cause
    if log.elected is not None and log.ready is not None:
        subject["ready_ms"] = log.ready_ms
        slow = _slowest(log.steps)
        text += f"; ready to serve {log.ready_ms} ms after its election" + (
            f" (slowest step: {slow})" if slow else ""
        )
        refs += [file_ref(log.elected.file, log.elected.line_no), file_ref(log.ready.file, log.ready.line_no)]
    elif e.broker is not None and e.broker not in with_logs:
        text += f"; no log from broker {e.broker} for its failover steps"
    resumed = log.resumed
    if resumed and p is not None:
        subject.update({k.replace(" ", "_"): v for k, v in resumed.items()})
        text += "; it resumed " + "; ".join(f"{k} {', '.join(_short(v))}" for k, v in sorted(resumed.items()))
    return Finding(kind, severity, subject, text + ".", tuple(dict.fromkeys(refs)))


def _outages(
    bundle: Bundle,
    chain: list[Election],
    ends: dict[int, tuple[str, str | None]],
    logs: dict[tuple[int, int], FailoverLog],
) -> dict[int, Outage]:
    """Epoch -> the real outage of each failover that ZooKeeper's history shows (outage.py)."""
    failovers = []
    for e in chain:
        p = e.previous
        if p is None or p.gone_zxid is None or e.time is None or e.epoch is None or p.broker is None:
            continue
        log = logs.get((e.broker, e.epoch)) if e.broker is not None else None
        ready_ms = log.ready_ms if log is not None else None
        cause = _cause(p, ends)[0]
        failovers.append(
            Failover(e.epoch, p.broker, p.session, p.gone_zxid, p.gone_time, cause, e.time, ready_ms)
        )
    if not failovers:
        return {}
    return outages(bundle, failovers, skew_ms(bundle))


def _cause(p: Election, ends: dict[int, tuple[str, str | None]]) -> tuple[str, str | None]:
    if p.gone_by is not None:
        return "deleted", None
    if p.session is not None and p.session in ends:
        return ends[p.session]
    return "unknown", None


def _by(session: int | None) -> str:
    return f"session 0x{session:x}" if session is not None else "?"


def _slowest(steps: list[Line]) -> str | None:
    best, took = None, -1.0
    for a, b in itertools.pairwise(steps):
        ms = (b.ts - a.ts).total_seconds() * 1000
        if ms > took:
            best, took = (a.step or a.event), ms
    return f"{best} {round(took)} ms" if best is not None else None


def _short(items: list[str], n: int = 6) -> list[str]:
    return items if len(items) <= n else [*items[:n], f"and {len(items) - n} more"]


def _flapping(chain: list[Election]) -> list[Finding]:
    """Several elections within FLAPPING_WINDOW_MS (ZooKeeper's clock, or one broker's log when alone)."""
    out = []
    i = 0
    while i < len(chain):
        j = i
        while (
            j + 1 < len(chain)
            and chain[j + 1].time
            and chain[i].time
            and (chain[j + 1].time - chain[i].time).total_seconds() * 1000 <= FLAPPING_WINDOW_MS
        ):
            j += 1
        if j - i + 1 >= FLAPPING_ELECTIONS:
            group = chain[i : j + 1]
            epochs = [e.epoch for e in group if e.epoch is not None]
            out.append(
                Finding(
                    "controller.flapping",
                    CRITICAL,
                    {"epochs": epochs, "brokers": sorted({e.broker for e in group if e.broker is not None})},
                    f"The controller moved {len(group)} times within {FLAPPING_WINDOW_MS // 60_000} minutes "
                    f"(epochs {ranges(epochs)}).",
                    tuple(e.ref for e in group),
                )
            )
            i = j + 1
        else:
            i += 1
    return out


_ELECTED: dict[str, type | tuple[type, ...]] = {"epoch": maybe(int), "broker": maybe(int), "cause": str}
ANALYSIS = Analysis(
    CHECK,
    needs={
        Need.ZK_HISTORY: "elections and gaps from the brokers' logs only (their clocks differ)",
        Need.LOGS: "causes unknown there",
    },
    run=two_halves(facts, judge),
    reads=(
        "elections",
        "elected_lines",
        "failover_steps",
        "registrations",
        "session_ends",
        "skew",
        "history",
        "resumed_after",
    ),
    kinds=(
        Kind("controller.election", (INFO,), _ELECTED, {"zxid": str, "ready_ms": int}),
        Kind(
            "controller.failover",
            (WARNING,),
            _ELECTED,
            {
                "zxid": str,
                "previous": maybe(int),
                "outage_ms": list,
                "gap_ms": int,
                "ready_ms": int,
                "reassignments": list,
                "deletions": list,
                "preferred_elections": list,
            },
        ),
        Kind("controller.flapping", (CRITICAL,), {"epochs": list, "brokers": list}),
        Kind(
            "broker.session_expired", (WARNING,), {"broker": int, "cause": str}, {"session": str, "zxid": str}
        ),
    ),
    plots="workbench.plots.standard:controller",
)
findings = ANALYSIS.findings
