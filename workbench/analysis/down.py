"""The brokers down at the capture: each broker the evidence knows (a replica assigned to it, a registration
in ZooKeeper's history, its own logs, data dirs or config) that is not registered in `/brokers/ids` then.
Since when (its last registration's end, else its log's last line), why (how its session ended, from its
own log: `model.session_ends`), what it leaves: the partitions whose last in-sync replica it is (Kafka keeps
the last ISR member and sets no leader: behaviour `last_isr_member_kept`; they come back only with it, or
with an unclean election that drops what only it holds), those ZooKeeper's tree still names it the leader
of (no controller has acted on its loss: behaviour `offline_in_the_tree`) and those under-replicated
without it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from pyspark.sql import functions as F

from workbench.analysis.brokers import CAUSE_TEXT
from workbench.analysis.contract import CRITICAL, INFO, WARNING, Analysis, Kind, Need
from workbench.analysis.findings import TP, Coverage, Finding, duration, hex_zxid, tp_list, txn_ref, zk_ref
from workbench.kafka import znodes as paths
from workbench.model.history import partitions
from workbench.model.log_dirs import Said, failed_dirs_logged
from workbench.model.refs import file_ref
from workbench.model.session_ends import session_ends
from workbench.model.views import views
from workbench.together import given, rows, together

if TYPE_CHECKING:
    from workbench.frames import Bundle

SHOWN = 60  # partitions named per broker
LAST_LINES = timedelta(minutes=1)


@dataclass(frozen=True)
class Down:
    """A broker not registered at the capture: its last registration's end (ZooKeeper's clock and txn) and
    session, how that ended (session_ends' word and the line saying so), its log's last line (its clock),
    the partitions assigned to it, those it is the last in-sync replica of (the first SHOWN; `only` how
    many) and how many others are under-replicated without it."""

    broker: int
    ended: datetime | None = None
    ended_zxid: int | None = None
    how: str | None = None
    told: str | None = None
    log_ends: datetime | None = None
    log_ref: str | None = None
    hosts: int = 0
    last_in_isr: list[TP] = field(default_factory=list)
    only: int = 0
    under: int = 0
    halted_for: str | None = None  # the log dir whose failure the broker's log says it halted for
    halted_ref: str | None = None
    refused: list[TP] = field(
        default_factory=list
    )  # of `last_in_isr`, those it refused to lead when last named
    refused_told: str | None = None  # what told `refused`: ZooKeeper's partition states, or its own lines
    # the partitions ZooKeeper's tree still names it the leader of: no controller has acted on its loss
    leads: int = 0


@dataclass(frozen=True)
class Facts:
    """The brokers down at the capture, and the capture's time (ms)."""

    down: list[Down]
    captured_ms: int | None


def facts(bundle: Bundle) -> Facts:
    v = views(bundle)
    live = v.live_brokers
    not_live = (lambda c: ~F.col(c).isin(sorted(live))) if live else (lambda c: F.lit(True))
    hosting = rows(  # one row per broker not registered that replicas are assigned to
        v.partitions.select("topic", "partition", "isr", "leader", F.explode("replicas").alias("broker"))
        .where(not_live("broker"))
        .withColumn("last", (F.size("isr") == 1) & F.array_contains("isr", F.col("broker")))
        .groupBy("broker")
        .agg(
            F.count("*").alias("hosts"),
            F.sum(F.col("last").cast("int")).alias("only"),
            F.slice(
                F.sort_array(F.collect_list(F.when(F.col("last"), F.struct("topic", "partition")))), 1, SHOWN
            ).alias("tps"),
            F.sum((~F.coalesce(F.array_contains("isr", F.col("broker")), F.lit(False))).cast("int")).alias(
                "out"
            ),
            F.sum((F.col("leader") == F.col("broker")).cast("int")).alias("leads"),
        )
    )
    registered = rows(  # one row per broker once registered and not now
        v.registrations.where(not_live("broker_id"))
        .groupBy("broker_id")
        .agg(F.max_by(F.struct("ended", "ended_zxid", "session_id"), "czxid").alias("last"))
    )
    with_logs = bool(v.evidence.with_logs - live)
    last_lines = rows(  # one row per broker not registered with logs
        bundle.cluster_events.where(not_live("broker_id") & F.col("broker_id").isNotNull())
        .groupBy("broker_id")
        .agg(F.max_by(F.struct("ts", "file", "line_no"), F.struct("ts", "line_no")).alias("last"))
        if with_logs
        else None
    )
    failed = failed_dirs_logged(bundle) if with_logs else given([])
    got = together(hosting, registered, last_lines, failed)
    hosted = {r.broker: r for r in got[hosting]}
    regs = {r.broker_id: r for r in got[registered]}
    known = (set(hosted) | set(regs) | set(v.evidence.brokers)) - live
    logs = {r.broker_id: r.last for r in got[last_lines] if r.broker_id in known}
    # of the partitions it is the last in-sync replica of, those it refused to lead when last told to
    asked = [(b, t.topic, t.partition) for b, h in hosted.items() if h.only for t in h.tps]
    refused, refused_told = partitions.refused_when_named(bundle, asked)
    ends = session_ends(bundle) if regs else {}
    # a halt for a failed log dir among its log's last lines (a minute: the handler's lines, then the halt)
    halts = {
        d.broker: d
        for d in got[failed]
        if d.halted is not None and d.broker in logs and d.halted.ts >= logs[d.broker].ts - LAST_LINES
    }
    out = []
    for b in sorted(known):
        h, reg, line = hosted.get(b), regs.get(b), logs.get(b)
        last = reg.last if reg is not None else None
        how, told = ends.get(last.session_id, (None, None)) if last is not None else (None, None)
        out.append(
            Down(
                b,
                last.ended if last is not None else None,
                last.ended_zxid if last is not None else None,
                how,
                told,
                line.ts if line is not None else None,
                file_ref(line.file, line.line_no) if line is not None else None,
                h.hosts if h is not None else 0,
                [TP(t.topic, t.partition) for t in h.tps] if h is not None else [],
                (h.only or 0) if h is not None else 0,
                (h.out or 0) if h is not None else 0,
                halts[b].log_dir if b in halts else None,
                _said_ref(halts[b].halted) if b in halts else None,
                refused.get(b, []),
                refused_told if b in refused else None,
                leads=(h.leads or 0) if h is not None else 0,
            )
        )
    return Facts(out, v.as_of_ms)


def _said_ref(s: Said | None) -> str | None:
    return file_ref(s.file, s.line_no) if s is not None else None


def judge(f: Facts, coverage: Coverage) -> list[Finding]:
    """broker.down for each broker down at the capture: critical where partitions have no other in-sync
    replica or it still leads them in ZooKeeper's tree, a warning where it leaves them under-replicated,
    info where it hosts nothing."""
    return [_finding(d, f) for d in f.down]


def _finding(d: Down, f: Facts) -> Finding:
    refs = [zk_ref(paths.BROKER_IDS)]
    text = f"Broker {d.broker} is down at the capture (not registered in {paths.BROKER_IDS})"
    subject: dict[str, Any] = {"broker": d.broker}
    if d.ended_zxid is not None and d.ended is not None:
        ago = ""
        if f.captured_ms is not None:
            ago = f", {duration(f.captured_ms - round(d.ended.timestamp() * 1000))} before the capture"
        text += (
            f": its registration ended at zxid {hex_zxid(d.ended_zxid)} ({d.ended:%Y-%m-%d %H:%M:%S} "
            f"ZooKeeper time{ago})"
        )
        subject.update(zxid=hex_zxid(d.ended_zxid), since=f"{d.ended:%Y-%m-%d %H:%M:%S}")
        refs.append(txn_ref(d.ended_zxid))
        if d.how in CAUSE_TEXT and d.how != "unknown":
            text += "; " + CAUSE_TEXT[d.how].format(b=d.broker)
            refs += [d.told] if d.told else []
    elif d.log_ends is not None:
        text += f": its log ends at {d.log_ends:%Y-%m-%d %H:%M:%S} (its clock)"
        subject["since"] = f"{d.log_ends:%Y-%m-%d %H:%M:%S}"
    else:
        text += "; since when, the evidence does not say"
    if d.log_ref:
        refs.append(d.log_ref)
    if d.hosts == 0:
        text += ". No partition is assigned to it: if it was taken out of the cluster, nothing waits for it."
        return Finding("broker.down", INFO, subject | {"partitions": 0}, text, tuple(refs))
    subject.update(partitions=d.hosts, last_in_isr=d.only)
    text += f". {d.hosts} partition(s) are assigned to it"
    if d.leads:  # offline as the tree counts it (`offline_in_the_tree`); not yet in Kafka's own count
        subject["leads"] = d.leads
        text += (
            f"; ZooKeeper's tree still names it the leader of {d.leads}: no controller has acted on its loss "
            "(it would have elected another leader or written -1), so nobody serves them, though Kafka's "
            "OfflinePartitionsCount does not count them until one does (partition.offline)"
        )
    if d.only:
        unnamed = d.only - len(d.last_in_isr)  # the first SHOWN are named
        named = tp_list(d.last_in_isr) + (f", and {unnamed} more" if unnamed > 0 else "")
        text += (
            f"; {d.only} ({named}) have it as their last in-sync replica, so they have no "
            "leader until it returns (an unclean election would bring them back without what only it holds)"
        )
    if d.refused:
        when = (
            "the last time ZooKeeper named it their leader"
            if d.refused_told == partitions.FROM_TXNS
            else "the last time it was told to, as its own lines show (it never led them after)"
        )
        text += (
            f"; it refused to lead {tp_list(d.refused)} {when} (INCONSISTENT_TOPIC_ID: its log holds another "
            "topic id), so elected again as it returns it would refuse them again: repair their topic id "
            "(topic_id.refused), or they stay unserved"
        )
    if d.under:
        text += f"; {d.under} are under-replicated without it"
    if d.halted_for is not None:
        refs += [d.halted_ref] if d.halted_ref else []
        text += (
            f". It halted because its log dir {d.halted_for} failed (log_dir.offline): repair the dir, or "
            f"take it out of log.dirs, before starting broker {d.broker} again, or it fails the same way."
        )
    else:
        why = "; its log's last lines say why it stopped" if d.log_ref else ""
        text += f". Start broker {d.broker} again{why}"
        # started as it is, the next election of it as leader is refused again: its files go first
        text += (
            ", once its stale partition.metadata is gone: its step of the repair plan (`workbench "
            "remediate`) removes them while it is stopped, then starts it."
            if d.refused
            else "."
        )
    return Finding("broker.down", CRITICAL if d.only or d.leads else WARNING, subject, text, tuple(refs))


ANALYSIS = Analysis(
    "brokers_down",
    needs={Need.ZK_STATE: "which brokers are registered at the capture"},
    wants={
        Need.ZK_HISTORY: "since when a broker is down (its registration's end)",
        Need.LOGS: "why it stopped (how its session ended)",
    },
    facts=facts,
    judge=judge,
    reads=(
        "live_brokers",
        "partitions",
        "registrations",
        "session_ends",
        "as_of_ms",
        "partition_changes",
        "skew",
    ),
    kinds=(
        Kind(
            "broker.down",
            (CRITICAL, WARNING, INFO),
            {"broker": int, "partitions": int},
            {"zxid": str, "since": str, "last_in_isr": int, "leads": int},
            key=("broker",),
        ),
    ),
)
findings = ANALYSIS.findings
