"""Controller elections and failovers, and the ZooKeeper sessions brokers lost (seeds 002, 003).

The elections as each source tells them are `elections.py`'s views (re-exported here for the notebooks:
`controller.elections(bundle)`); the chain of them is the history's (`model/history/controllers.py`), each
new controller's own log (its onControllerFailover steps and what it resumed) and the sessions brokers lost
are `model/failovers.py`'s. Why the previous controller went is read from that broker's own log
(`model/session_ends.py`); where ZooKeeper's history does not tell who it was and how its tenure ended,
from the brokers' lines (`model/tenures.py`). In two halves: `facts` asks Spark, `judge` words the findings;
those about single brokers (lost sessions, controlled shutdowns, reach) are worded in `brokers.py`.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from workbench.analysis.brokers import (
    CAUSE_TEXT,
    expiry_findings,
    no_endpoint_finding,
    shutdown_finding,
    unreachable_finding,
)
from workbench.analysis.contract import CRITICAL, INFO, WARNING, Analysis, Kind, Need, maybe
from workbench.analysis.findings import Coverage, Finding, file_ref, hex_zxid, ranges, txn_ref
from workbench.kafka import behaviour
from workbench.model import failovers
from workbench.model.channel import NoEndpoint, Unreachable, no_endpoint, unreachable
from workbench.model.elections import elected, elected_lines, elections, failover_steps
from workbench.model.evidence import Held
from workbench.model.failovers import FailoverLog, Line
from workbench.model.history import controllers
from workbench.model.history.controllers import Election
from workbench.model.history.sessions import Expired
from workbench.model.history_gaps import Gap
from workbench.model.outage import Failover, Outage, outages
from workbench.model.session_ends import HALTED, session_ends
from workbench.model.shutdowns import ControlledShutdown, troubled
from workbench.model.skew import skew_ms
from workbench.model.tenures import TenureEnd, logged_outage
from workbench.model.views import views
from workbench.together import together

if TYPE_CHECKING:
    from workbench.frames import Bundle

CHECK = "controller"
FLAPPING_WINDOW_MS = 10 * 60_000
FLAPPING_ELECTIONS = 3
SHOWN = 50  # troubled controlled shutdowns at most
__all__ = ["ANALYSIS", "elected", "elected_lines", "elections", "failover_steps", "findings"]


@dataclass
class Facts:
    """What the controller analysis judges: the elections in order; per (broker, epoch) its failover log;
    how each session ended (`session_ends`); the brokers with logs; the gap the history resumed after;
    each failover's outage (epoch -> `outage.Outage`); the sessions brokers lost; where ZooKeeper's
    history does not tell it, how the tenure before each election ended as the brokers' lines tell (epoch ->
    TenureEnd)."""

    chain: list[Election]
    logs: dict[tuple[int, int], FailoverLog]
    ends: dict[int, tuple[str, str | None]]
    with_logs: frozenset[int]
    resumed_after: Gap | None
    outages: dict[int, Outage]
    expired: list[Expired]
    ended: dict[int, TenureEnd] = field(default_factory=dict)
    shutdowns: list[ControlledShutdown] = field(default_factory=list)  # retried or failed
    # the log the version writes elections to, and whether a broker's is held
    election_log: tuple[str, bool] | None = None
    unreachable: list[Unreachable] = field(default_factory=list)  # registered brokers it could not reach
    no_endpoint: list[NoEndpoint] = field(default_factory=list)


def facts(bundle: Bundle) -> Facts:
    v = views(bundle)
    ends = session_ends(bundle)
    chain, ended = controllers.controller_chain(bundle), controllers.tenure_ends(bundle)
    failed_over = failovers.election_logs(bundle)
    retried, not_reached = troubled(bundle, SHOWN), unreachable(bundle, SHOWN)
    no_listener = no_endpoint(bundle, SHOWN)
    got = together(failed_over, retried, not_reached, no_listener)
    logs = got[failed_over]
    lost = _outages(bundle, chain, ends, logs)
    return Facts(
        chain,
        logs,
        ends,
        v.evidence.with_logs,
        v.resumed_after,
        lost,
        controllers.sessions_lost(bundle) + _controllers_lost(chain, ended),
        ended,
        got[retried],
        _election_log(v.evidence),
        got[not_reached],
        got[no_listener],
    )


def _election_log(ev: Held) -> tuple[str, bool]:
    """The log a controller's election is written to at the bundle's version (behaviour fact
    `controller_election_in_server_log`), and whether any broker's is in the bundle."""
    old = behaviour.holds("controller_election_in_server_log", ev.kafka_version)
    names = {True: ("server",), False: ("controller",), None: ("controller", "server")}[old]
    said = {True: "server.log", False: "controller.log", None: "controller.log (server.log before 0.11)"}[old]
    version = f"Kafka {ev.kafka_version}" if ev.kafka_version else "Kafka"
    held = any(set(names) & a for a in ev.appenders.values())
    return f"{said}, where {version} logs a controller's election", held


def _controllers_lost(chain: list[Election], ended: dict[int, TenureEnd]) -> list[Expired]:
    """Logs only: a controller whose lines stop and that started again without a shutdown (`crash`), or
    that halted for failed log dirs, lost its ZooKeeper session, which the next election shows: /controller
    is ephemeral, and a new controller is elected only once it is gone (a crashed or halted broker's
    client never closes its session, so ZooKeeper expires it). Its own client's expiry line, where it ran
    again to log one, is found as such."""
    out = []
    for e in chain:
        t = ended.get(e.epoch) if e.epoch is not None else None
        if (
            t is None
            or t.how not in ("crash", HALTED)
            or (e.previous is not None and e.previous.broker != t.broker)
        ):
            continue
        seen = (
            f"broker {e.broker} was elected controller in its place at {e.logged_time:%Y-%m-%d %H:%M:%S} "
            "(its clock)"
        )
        at, ref = e.logged_time, e.line or e.ref
        out.append(Expired(t.broker, None, t.how, t.said.ref if t.said else None, at, ref, seen=seen))
    return out


def judge(f: Facts, coverage: Coverage) -> list[Finding]:
    out: list[Finding] = []
    if not f.chain and f.election_log is not None and not f.election_log[1]:
        coverage.add(CHECK, [f"{f.election_log[0]}: no broker's is in the bundle, so no election was read"])
    first_txn = next((e for e in f.chain if e.zxid is not None), None)
    for before, e in zip([None, *f.chain], f.chain, strict=False):
        log = f.logs.get((e.broker, e.epoch)) if e.broker is not None and e.epoch is not None else None
        after_gap = f.resumed_after if e is first_txn and e.previous is None else None
        outage = f.outages.get(e.epoch) if e.epoch is not None else None
        ended = f.ended.get(e.epoch) if e.epoch is not None else None
        if ended is not None:
            e, outage = _logged_previous(e, ended, log)
        unseen = _unseen(before, e)
        out.append(_election_finding(e, f.ends, log or FailoverLog(), f.with_logs, after_gap, outage, unseen))
    out += _flapping(f.chain) + expiry_findings(f.expired) + [shutdown_finding(c) for c in f.shutdowns]
    out += [unreachable_finding(u) for u in f.unreachable]
    return out + [no_endpoint_finding(n) for n in f.no_endpoint]


def _election_finding(
    e: Election,
    ends: dict[int, tuple[str, str | None]],
    log: FailoverLog,
    with_logs: frozenset[int],
    after_gap: Gap | None = None,
    outage: Outage | None = None,
    unseen: list[int] | None = None,
) -> Finding:
    """An election's finding; `after_gap`: the gap the history resumed after, when this is the first
    election read after it (a later epoch than 1 then had a controller before it that the gap hides);
    `unseen`: the epochs between the election before it in the evidence and this one."""
    refs = [e.ref]
    subject: dict[str, Any] = {"epoch": e.epoch, "broker": e.broker}
    if e.zxid is not None:
        subject["zxid"] = hex_zxid(e.zxid)
    p = e.previous
    if p is None and (after_gap is not None or unseen) and (e.epoch is None or e.epoch > 1):
        kind, severity, cause = "controller.failover", WARNING, "unknown"
        text = f"Controller moved to broker {e.broker} (epoch {e.epoch}) from a controller "
        if after_gap is not None:
            text += f"ZooKeeper's readable history does not show: {after_gap.describe()}"
            refs += [file_ref(d.file) for d in after_gap.damage]
        else:
            text += f"the evidence does not show: no txn or line tells epoch{'s' * (len(unseen or []) > 1)} "
            text += f"{ranges(unseen or [])} before it"
    elif p is None:
        text = f"Broker {e.broker} was elected controller with epoch {e.epoch}: "
        text += "the first election in the evidence"
        if e.epoch is not None and e.epoch > 1:
            text += (
                " (the one before it is not)" if e.epoch == 2 else f" (the {e.epoch - 1} before it are not)"
            )
        kind, severity, cause = "controller.election", INFO, "first"
    else:
        kind, severity = "controller.failover", WARNING
        cause, why_ref = _cause(p, ends)
        was = f"epoch {p.epoch}" if p.epoch is not None else "its lines show it controller before"
        if p.broker == e.broker:
            text = f"Broker {e.broker} was elected controller again (epoch {e.epoch}) after its tenure "
            text += f"({was}) ended"
        else:
            text = f"Controller moved from broker {p.broker} ({was}) to broker {e.broker} (epoch {e.epoch})"
        if outage is not None:  # the headline: how long nothing acted as controller
            subject["outage_ms"] = [outage.lower_ms, outage.upper_ms]
            text += ", " + outage.headline()
            refs += outage.refs
        told = "untold" if cause == "unknown" and p.cause is not None else cause
        text += ": " + CAUSE_TEXT[told].format(b=p.broker, by=_by(p.gone_by))
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
    refs += [e.line] if e.line else []  # the elected broker's own line, after what its cause cites
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


def _unseen(before: Election | None, e: Election) -> list[int]:
    """The epochs between the election before `e` in the evidence and `e`, which neither source shows."""
    if before is None or before.epoch is None or e.epoch is None:
        return []
    return list(range(before.epoch + 1, e.epoch))


def _logged_previous(e: Election, t: TenureEnd, log: FailoverLog | None) -> tuple[Election, Outage | None]:
    """Where ZooKeeper's history does not tell it: the election with the tenure before it as the brokers'
    lines tell it (the broker that last acted as controller, and why it stopped), and the outage they
    bound."""
    p = e.previous
    if p is not None and p.broker != t.broker:  # the lines do not tell that controller's end
        return e, None
    said = [x.ref for x in (t.said, t.resigned) if x is not None]
    before = Election(
        p.epoch if p is not None else t.epoch,
        t.broker,
        None,
        t.last_act.ts,
        p.ref if p is not None else t.last_act.ref,
        p.previous if p is not None else None,
        cause=(t.how, said[0] if said else None),
    )
    logged = dataclasses.replace(e, previous=before)
    ready = log.ready.ts if log is not None and log.ready is not None else None
    return logged, logged_outage(t, e.logged_time, ready) if ready is not None else None


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
        if p is None or p.gone_zxid is None or p.gone_time is None or e.epoch is None or p.broker is None:
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
    if p.cause is not None:
        return p.cause
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
            # an election moves the controller only to another broker than the one before it
            moves = sum(1 for e in group if e.previous is not None and e.previous.broker != e.broker)
            out.append(
                Finding(
                    "controller.flapping",
                    CRITICAL,
                    {"epochs": epochs, "brokers": sorted({e.broker for e in group if e.broker is not None})},
                    f"The controller was elected {len(group)} times within {FLAPPING_WINDOW_MS // 60_000} "
                    f"minutes (epochs {ranges(epochs)}), moving to another broker {moves} time(s).",
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
    facts=facts,
    judge=judge,
    reads=(
        "elections",
        "elected_lines",
        "controller_chain",
        "sessions_lost",
        "tenure_ends",
        "failover_steps",
        "registrations",
        "session_ends",
        "skew",
        "history",
        "resumed_after",
    ),
    kinds=(
        Kind(
            "controller.election",
            (INFO,),
            _ELECTED,
            {"zxid": str, "ready_ms": int},
            key=("broker", "epoch"),
            event=True,
        ),
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
            key=("broker", "epoch", "cause", "reassignments"),
            event=True,
        ),
        Kind(
            "controller.flapping", (CRITICAL,), {"epochs": list, "brokers": list}, key=("epochs",), event=True
        ),
        Kind(
            "broker.controlled_shutdown",
            (WARNING, INFO),
            {"broker": int, "outcome": str, "attempts": int},
            key=("broker", "outcome"),
            event=True,
        ),
        Kind(
            "controller.broker_unreachable",
            (WARNING,),
            {"broker": int, "failures": int},
            {"controller": int},
            key=("broker",),
            event=True,
        ),
        Kind("broker.no_endpoint", (CRITICAL,), {"broker": int, "listener": str}, key=("broker", "listener")),
        Kind(
            "broker.session_expired",
            (WARNING,),
            {"broker": int, "cause": str},
            {"session": str, "zxid": str},
            key=("broker",),
            event=True,
        ),
    ),
    plots="workbench.plots.standard:controller",
)
findings = ANALYSIS.findings
