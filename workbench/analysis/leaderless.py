"""Partitions without a working leader, and for how long: offline (no leader, or one not registered:
Kafka's OfflinePartitionsCount) and without an acting leader (a registered leader that refused to lead
them, `acting`), from the one service timeline (`service.unserved`): each stretch nobody served a
partition is one outage, told once by how it began (gone offline, or refused), however its reason changed
after (an offline partition whose returning leader refuses it; a refusing leader that goes away).

An offline episode that began when its leader's registration ended is, when that broker stopped without
a shutdown (a crash, a hang, a lost network: `model.session_ends`), longer than the series shows: the
broker did no leader's work from its last sign of life, while ZooKeeper kept its session until the
timeout. The finding bounds that outage the way a controller failover's is bounded (`outage.outages`:
its last log line and last write, and the session timeout), up to the new leader's election. An outage
going on where the history stops at a gap and where it resumes is one where the gap cannot have ended it
(`model.across_gap`). Without ZooKeeper's history the controller's lines' stretches are grouped in
`leaderless_lines.py`; either way an offline group is worded in `offline.py` and a leader that refused
in `not_acting.py`; what one moment shows (ZooKeeper's tree at the capture, a paste) in
`leaderless_moment.py`; a leader that stood still, with or without it, in `paused.py`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame, Row
from pyspark.sql import functions as F

from workbench.analysis.contract import CRITICAL, NO_TXN, WARNING, Analysis, Kind, Need, maybe
from workbench.analysis.findings import TP, Coverage, Finding
from workbench.analysis.leaderless_lines import logged_groups
from workbench.analysis.leaderless_moment import at_capture, pasted
from workbench.analysis.lost_leader import Down, Succeeded
from workbench.analysis.not_acting import (
    NotActing,
    moved_by,
    not_acting_finding,
    refusals,
)
from workbench.analysis.offline import Offline, offline_finding
from workbench.analysis.paused import paused_finding
from workbench.model.across_gap import before_gap
from workbench.model.channel import Quiet, went_quiet
from workbench.model.described import Shown, offline_facts
from workbench.model.evidence import lacking
from workbench.model.health import captured_at, grouped
from workbench.model.history import controllers
from workbench.model.history.brokers import SILENT, offline_windows, pauses
from workbench.model.history.counts import OfflineThen, offline_at_capture, tree_leaders
from workbench.model.history.sessions import Expired
from workbench.model.outage import Outage, silent_leaders
from workbench.model.pauses import ELECTED_WITHIN_S, Paused, paused
from workbench.model.service import elected_at_once, outages
from workbench.model.views import ClusterViews, views
from workbench.together import Ask, Joined, given, rows, together

if TYPE_CHECKING:
    from workbench.frames import Bundle


@dataclass
class Facts:
    """What the leaderless analysis judges: the offline groups (`offline`, begun by a txn or, without
    ZooKeeper's history, by the controller's line) and those without an acting leader (`not_acting`,
    either way); with that history the outage of each group whose leader went silent (began_zxid ->
    (outage, how its session ended)) and how the history read is said; without it (`history` False) what
    a pasted describe shows, when the evidence ends, whether txn logs were held but none could be read,
    and what the lines and the tree tell below."""

    history: bool
    pasted: Shown | None = None
    offline: list[Offline] = field(default_factory=list)
    silent: dict[int, tuple[Outage, str]] = field(default_factory=dict)
    not_acting: list[NotActing] = field(default_factory=list)
    history_read: str = ""
    ends: datetime | None = None
    unread: bool = False
    lacking: list[str] = field(default_factory=list)  # the controller's journal, where absent
    quiet: dict[tuple[int, datetime], Quiet] = field(default_factory=dict)  # (lost leader, start) -> signs
    paused: list[Paused] = field(default_factory=list)  # leaders that stood still and ran on in their session
    gap: str = ""  # the txns missing in the gap the history read resumes after ('0x7a-0x7c')
    # the controllers whose tenure the lines end, where the lines leave partitions without a leader: their
    # leader lost may be one of them, gone from its last sign of life
    succeeded: list[Succeeded] = field(default_factory=list)
    # without ZooKeeper's history: each broker's stretches without a registration (`history.brokers`, told
    # by the controllers' lines), on their clock: whether an election's new leader was registered as the
    # loss was handled
    down: dict[int, list[Down]] = field(default_factory=dict)
    # without ZooKeeper's history: the sessions brokers lost (`history.sessions`), which bound when a leader
    # that crashed went silent
    lost: list[Expired] = field(default_factory=list)
    # without ZooKeeper's history: what its tree at the capture shows without a live leader (None: no tree)
    now: OfflineThen | None = None
    lines_end: datetime | None = None  # the brokers' last line (`ends` is the capture's, where it is known)


def facts(bundle: Bundle) -> Facts:
    stretch = outages(bundle)
    v = views(bundle)
    first = F.col("whys")[0]
    # one outage per stretch nobody served a partition (`service.outages`), told by how it began: gone
    # offline (or its leader silent until its session's expiry took it offline), or refused by the leader
    # ZooKeeper or the controller's line names; a pause its session survived is told apart (`paused_finding`)
    refused_first = refusals(stretch.where(first == "refused")) if stretch is not None else given([])
    if v.partition_changes is None:  # the outages the controller's lines tell (`logged_changes`), if any
        stood = paused(bundle, {}, taken_back=True)
        told = logged_groups(
            stretch, tree_leaders(bundle), {p.broker for p in stood if p.taken_back is not None}
        )
        shown, lives, now = offline_facts(bundle), _down(bundle), offline_at_capture(bundle)
        last = Ask(bundle.log_events.agg(F.max("ts").alias("t")), lambda rs: rs[0].t if rs else None)
        got = together(told, refused_first, shown, lives, now, last)
        logged, refused = got[told], got[refused_first]
        ends = v.span[1] if (logged or refused) and v.span is not None else None
        absent = lacking(v.evidence, "state-change", "the controller's partition states")
        starts = [(g.leader, g.began) for g in logged if g.leader is not None and not g.refused]
        quiet = went_quiet(bundle, starts)
        lost_leader = any(not g.refused for g in logged)  # it may have been the controller
        return Facts(False, got[shown], logged, not_acting=moved_by(bundle, refused), ends=ends,
                     unread=v.evidence.zk_history, lacking=absent, quiet=quiet,
                     paused=_not_moved(stood, logged), succeeded=_succeeded(bundle) if lost_leader else [],
                     down=got[lives], lost=controllers.sessions_lost(bundle), now=got[now],
                     lines_end=got[last])  # fmt: skip
    assert stretch is not None  # ZooKeeper's history held
    # (a silent leader's stretch whose leadership moved before its expiry never went offline: not told)
    went_offline = _offline(
        stretch.where(first.isin("offline", SILENT) & F.col("off_zxid").isNotNull()), v, captured_at(bundle)
    )
    got = together(went_offline, refused_first)
    offline = got[went_offline]
    # a leader that went silent: its outage from its last sign of life (an episode that ran on into a
    # refusal is counted from ZooKeeper's offline moment: its own finding says the refusal)
    led = [g for g in offline if g.known_start and g.leader is not None and g.leader >= 0 and not g.refused]
    silent = silent_leaders(bundle, [g for g in led if not g.across])
    silent.update(before_gap(bundle, silent_leaders, [g for g in led if g.across]))
    stood = pauses(bundle)
    not_acting = moved_by(bundle, got[refused_first])
    gap = v.resumed_after.missing if v.resumed_after is not None else ""
    return Facts(True, None, offline, silent, not_acting, v.history_read, paused=stood, gap=gap)


def _down(bundle: Bundle) -> Ask[dict[int, list[Down]]]:
    """The brokers' stretches without a registration, as the lines tell them (one row per stretch); none
    without the brokers' logs."""
    if not views(bundle).evidence.with_logs:
        return given({})

    def read(rs: list[Row]) -> dict[int, list[Down]]:
        out: dict[int, list[Down]] = {}
        for r in sorted(rs, key=lambda r: (r.broker, r.down)):
            out.setdefault(r.broker, []).append(Down(r.down, r.down_ref, r.up))
        return out

    return Ask(offline_windows(bundle).select("broker", "down", "down_ref", "up"), read)


def _succeeded(bundle: Bundle) -> list[Succeeded]:
    """Each election after a tenure the brokers' lines end (the history's controller chain and tenure
    ends), on the elected broker's clock."""
    ends = controllers.tenure_ends(bundle)
    chain = controllers.controller_chain(bundle)
    return [Succeeded(e.logged_time, e.broker, ends[e.epoch]) for e in chain if e.epoch in ends]


def _not_moved(stood: list[Paused], logged: list[Offline]) -> list[Paused]:
    """The pauses, those whose session expired (`Paused.taken_back`) with only the partitions no line of
    the controller's left without a leader from when it stood still to the new controller's start (a
    minute's slack: the clocks differ): those a stretch tells are its outage."""
    out = []
    for p in stood:
        if p.taken_back is not None:
            until = p.taken_back.ts + timedelta(seconds=ELECTED_WITHIN_S)
            moved = {
                TP(w.topic, w.partition)
                for g in logged
                if g.leader == p.broker and g.lines is not None
                for w in g.lines.went
                if p.heard <= w.at <= until
            }
            p = replace(p, led=[tp for tp in p.led if tp not in moved])
        out.append(p)
    return out


def judge(f: Facts, coverage: Coverage) -> list[Finding]:
    """Offline episodes (grouped by the txn that took their leader, or as the lines tell them), windows
    without an acting leader (grouped by the refusing broker and what named it, either way), and leaders
    that stood still in their session."""
    if not f.history:
        if f.unread:
            coverage.add("leaderless", [NO_TXN])
        coverage.add("leaderless", f.lacking)
    found = [offline_finding(g, f) for g in f.offline]
    if not f.history:
        found = pasted(f.pasted, coverage, "leaderless") + found + at_capture(f, coverage)
    found += [not_acting_finding(g, f.ends, f.lines_end) for g in f.not_acting]
    return found + [x for x in map(paused_finding, f.paused) if x is not None]


def nobody_serves(found: list[Finding]) -> int:
    """How many partitions nobody served at the capture, from the outages' findings (each partition is in
    one: one outage per stretch of the service timeline); what a pasted describe shows is of its moment,
    and what the lines alone leave without a leader is of their end (`unserved_when_lines_end`)."""
    return sum(f.subject.get("still", 0) for f in _outages(found) if "lines_end" not in f.subject)


def unserved_when_lines_end(found: list[Finding]) -> tuple[int, str | None]:
    """How many partitions the outages' findings from the brokers' lines alone leave unserved when the
    lines end, and when that is (the latest such finding's `lines_end`): whether they are served at the
    capture, the lines do not tell."""
    told = [f for f in _outages(found) if "lines_end" in f.subject and f.subject.get("still")]
    return sum(f.subject["still"] for f in told), max((f.subject["lines_end"] for f in told), default=None)


def _outages(found: list[Finding]) -> list[Finding]:
    return [
        f
        for f in found
        if f.kind in ("partition.offline", "partition.no_acting_leader") and "taken_at" not in f.subject
    ]


ANALYSIS = Analysis(
    "leaderless",
    needs={
        Need.ZK_HISTORY: "partitions without a live or acting leader over time (from the controller's lines "
        "instead: those it left without a leader, or whose leader named refused them)",
        Need.ZK_STATE: "without ZooKeeper's history, the partitions without a live leader at the capture",
        Need.PASTED: "the partitions a kafka-topics --describe shows without a leader, at its moment",
        Need.LOGS: "which leaders refused to act or stood still (a pause shorter than the ZooKeeper "
        "client's read timeout, 2/3 of the session timeout, logs no client line, so is not seen: "
        "zk_client_idle_beyond_read_timeout_means_it_stood_still); without ZooKeeper's history, the "
        "partitions the controller's lines leave without a leader or with one that refused them",
    },
    facts=facts,
    judge=judge,
    reads=(
        "outages",
        "elected_lines",
        "controller_chain",
        "sessions_lost",
        "tenure_ends",
        "registrations",
        "ended_registrations",
        "skew",
        "history",
        "history_base",
        "history_span",
        "resumed_after",
        "as_of_ms",
        "logged_states",
        "span",
        "partition_changes",
        "znodes_carried",
        "registrations_carried",
        "partitions",
        "live_brokers",
        "delete_markers",
    ),
    kinds=(
        Kind(
            "partition.offline",
            (CRITICAL, WARNING),
            {"partitions": int},
            {
                "zxid": str,
                "began": str,
                "broker": maybe(int),
                "outage_ms": list,
                "offline_ms": int,
                "taken_at": str,
                "still": int,
                "led_at_capture": int,
                "lines_end": str,
                "refused_by": list,
                "across": str,
                "session": str,
            },
            key=("zxid", "broker", "partitions"),
            event=True,
        ),
        Kind(
            "partition.leader_paused",
            (WARNING,),
            {"broker": int, "partitions": int, "session": str, "outage_ms": list},
            key=("broker", "partitions"),
            event=True,
        ),
        Kind(
            "partition.no_acting_leader",
            (CRITICAL,),
            {"partitions": int, "broker": int, "still": int},
            {"zxid": str, "began": str, "trigger": str, "outage_ms": list, "lines_end": str},
            key=("broker", "zxid", "partitions", "still"),
            event=True,
        ),
    ),
)
findings = ANALYSIS.findings


def _offline(ep: DataFrame, v: ClusterViews, captured: Any) -> Ask[list[Offline]]:
    """Stretches that began offline, or with a leader silent until its expiry took them offline, grouped
    by the txn that took them offline and their leader then (`off_*`) and whether a leader elected as they
    came back refused them (they ran on: nobody served them all along). Over a tree not known (the history
    read starts after a gap or a purge, without a snapshot) a stretch before which whether the partition
    had a live leader was not known began at an unknown moment: those are one group that says so. A
    group's longest is its time offline (`off_ms`): a silent leader's outage is bounded apart. One offline
    in the tree the history starts from is counted from the history's first txn, its first sight."""
    first = F.lit(v.history_span.began if v.history_span is not None else None).cast("timestamp")
    began = F.coalesce(F.col("off_began"), first)
    ended = F.coalesce(F.col("ended"), F.lit(captured).cast("timestamp"))
    ep = ep.select(
        "topic",
        "partition",
        F.col("off_zxid").alias("began_zxid"),
        began.alias("began"),
        "ended_zxid",
        "ended",
        F.coalesce(F.col("off_ms"), F.unix_millis(ended) - F.unix_millis(began)).alias("lasted_ms"),
        F.col("off_leader").alias("leader"),
        F.col("off_registered").alias("registered"),
        F.coalesce("off_queued", F.lit(False)).alias("queued"),
        F.coalesce("back", F.lit(False)).alias("back"),
        elected_at_once().alias("at_once"),
        F.col("ended_from").isNotNull().alias("told"),
        "first_seen",
        "across",
        F.array_contains("whys", "refused").alias("ran_on"),
        "refusers",
    )
    refused = [
        F.count_if("queued").alias("queued"),
        F.count_if("back").alias("back"),
        F.count_if("at_once").alias("at_once"),
        F.count_if("told").alias("told"),
        F.count_if("ran_on").alias("refused"),
        F.sort_array(F.array_distinct(F.flatten(F.collect_list("refusers")))).alias("by"),
    ]
    unseen = rows(None)
    if not v.history_base[1]:
        unseen = rows(grouped(ep.where("first_seen"), ["first_seen"], *refused))
        ep = ep.where(~F.col("first_seen"))
    seen = rows(grouped(ep, ["began_zxid", "leader", "registered", "ran_on", "across"], *refused))
    return Joined(_groups, unseen, seen)


def _groups(unseen: list[Row], seen: list[Row]) -> list[Offline]:
    out = [_group(g, g.worst.began_zxid, known_start=False) for g in unseen]
    for g in seen:
        out.append(_group(g, g.began_zxid, leader=g.leader, registered=bool(g.registered), across=g.across))
    return out


def _group(g: Any, began_zxid: int, **kw: Any) -> Offline:
    """An offline group from `health.grouped`'s row."""
    tps = [TP(t.topic, t.partition) for t in g.tps]
    kw.update(refused=g.refused, refused_by=list(g.by), queued=g.queued, back=g.back)
    kw["at_once"] = g.at_once if g.told == g.n - g.still else None  # every election's leader known
    return Offline(g.n, tps, g.longest, g.still, g.began, began_zxid, g.worst.ended_zxid, **kw)
