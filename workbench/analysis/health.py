"""Health: partitions under-replicated for minutes (grouped by the brokers out of their ISR) and failed
log dirs. The under-replicated stretches are the one history's (`history.counts.under_replicated`): the
health series (`model/health.py`), else those under-replicated at the capture in ZooKeeper's tree (how long
a lower bound), else what pastes show;
failed log dirs also from the brokers' own lines (`model/log_dirs.py`), whatever else the bundle holds;
and, from ZooKeeper's tree at the capture (with or without its history), the brokers not to restart: alone
in the ISR of what they lead, and whether they refuse it.
Partitions without a working leader are `leaderless`'s findings. In two halves: `facts` asks Spark,
`judge` words the findings in plain Python.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from pyspark.sql import functions as F

from workbench.analysis.contract import CRITICAL, INFO, NO_TXN, WARNING, Analysis, Kind, Need
from workbench.analysis.findings import (
    TP,
    Coverage,
    Finding,
    duration,
    file_ref,
    moment,
    taken,
    tp_list,
    txn_ref,
    zk_ref,
)
from workbench.model.described import DESCRIBE, FailedDir, Shown, failed_dir_facts, under_replicated_facts
from workbench.model.health import grouped
from workbench.model.history.counts import FROM_TREE, under_replicated
from workbench.model.history.partitions import FROM_TXNS
from workbench.model.isr import OnlyInSync, only_in_sync
from workbench.model.log_dirs import DirFailed, failed_dirs_logged
from workbench.model.partition_history import min_isr
from workbench.together import count, rows, together

if TYPE_CHECKING:
    from workbench.frames import Bundle

SUSTAINED_MS = 5 * 60_000  # under-replicated this long is not a restart's blip


@dataclass(frozen=True)
class Episodes:
    """Partitions under-replicated for SUSTAINED_MS or more with the same brokers out of their ISR: how
    many, the longest stretch, how many still at the capture, the first of them by name, when the first
    began, and the txns that began and ended the longest (ended None: still)."""

    out_of_isr: list[int]
    partitions: int
    longest_ms: int
    still: int
    tps: list[TP]
    began: datetime
    worst: tuple[int, int | None]


@dataclass(frozen=True)
class Facts:
    """What the health analysis judges: failed log dirs a paste shows; `episodes` from ZooKeeper's
    history (None without it, when `pasted` stands in: what a pasted describe shows); whether the brokers'
    min.insync.replicas is known (their server.properties agree); failed log dirs the brokers logged."""

    failed_dirs: list[FailedDir]
    episodes: list[Episodes] | None
    pasted: Shown | None
    min_isr_known: bool
    logged: list[DirFailed] = field(default_factory=list)
    only: list[OnlyInSync] = field(default_factory=list)  # brokers alone in the ISR of what they lead
    # what told the episodes: the health series (FROM_TXNS), ZooKeeper's tree at the capture (FROM_TREE:
    # each partition under-replicated then, since at most its state's last write), or nothing (None)
    told: str | None = FROM_TXNS
    recent: int = 0  # from the tree: under-replicated at the capture, its state written under SUSTAINED_MS


def facts(bundle: Bundle) -> Facts:
    failed = failed_dir_facts(bundle)
    logged = failed_dirs_logged(bundle)
    alone = only_in_sync(bundle)  # from ZooKeeper's tree at the capture, whatever history it holds
    found, told = under_replicated(bundle)
    if found is None:
        shown = under_replicated_facts(bundle)
        got = together(failed, logged, shown, alone)
        return Facts(got[failed], None, got[shown], False, got[logged], got[alone], told)
    lasted = F.col("lasted_ms") >= SUSTAINED_MS
    groups = rows(grouped(found.where(lasted), ["out_of_isr"]))
    recent = count(found.where(~lasted & F.col("ended").isNull()) if told == FROM_TREE else None)
    got = together(groups, logged, alone, failed, recent)
    episodes = [
        Episodes(
            sorted(g.out_of_isr or []),
            g.n,
            g.longest,
            g.still,
            [TP(t.topic, t.partition) for t in g.tps],
            g.began,
            (g.worst.began_zxid, g.worst.ended_zxid),
        )
        for g in got[groups]
    ]
    known = min_isr(bundle)[1] is not None
    return Facts(got[failed], episodes, None, known, got[logged], got[alone], told, got[recent] or 0)


def judge(f: Facts, coverage: Coverage) -> list[Finding]:
    """Partitions under-replicated for SUSTAINED_MS or more (grouped by the brokers out of their ISR);
    those without a working leader are `leaderless`'s."""
    failed = _failed_log_dirs(f.failed_dirs, coverage, "health") + [_logged_dir(d) for d in f.logged]
    if f.told != FROM_TXNS and Need.ZK_HISTORY.value in coverage["health"].used:
        coverage.add("health", [NO_TXN])  # held, yet none of its txns could be read
    if f.episodes is None:
        return failed + _pasted(f.pasted, coverage, "health") + [_only_in_sync(o) for o in f.only]
    if f.told == FROM_TXNS and not f.min_isr_known:
        coverage.add(
            "health",
            ["server.properties: min.insync.replicas (under-min-ISR counted only where a topic sets it)"],
        )
    if f.recent:
        coverage.add(
            "health",
            [
                f"{f.recent} partition(s) under-replicated at the capture whose state ZooKeeper wrote less "
                f"than {duration(SUSTAINED_MS)} before it: whether they were for longer is not known "
                "(ZooKeeper's txn logs would tell)"
            ],
        )
    under = [_under_replicated(e) if f.told == FROM_TXNS else _under_replicated_now(e) for e in f.episodes]
    return failed + under + [_only_in_sync(o) for o in f.only]


ANALYSIS = Analysis(
    "health",
    needs={
        Need.ZK_HISTORY: "offline and under-replicated partitions over time",
        Need.PASTED: "under-replicated partitions (kafka-topics) and failed log dirs (kafka-log-dirs)",
        Need.LOGS: "failed log dirs and the brokers they halted (the brokers' own lines)",
        Need.ZK_STATE: "the brokers alone in the ISR of what they lead at the capture (not to restart), and "
        "the partitions under-replicated then",
    },
    facts=facts,
    judge=judge,
    reads=("health", "as_of_ms", "partitions", "live_brokers", "delete_markers", "partition_changes", "skew"),
    kinds=(
        Kind(
            "partition.under_replicated",
            (WARNING, INFO),
            {"partitions": int, "brokers": list, "still": int},
            {"taken_at": str},  # from a pasted describe: the moment it shows
            key=("brokers", "partitions", "still"),
            event=True,
        ),
        Kind(
            "broker.only_in_sync",
            (WARNING,),
            {"broker": int, "partitions": int},
            key=("broker", "partitions"),
        ),
        Kind(
            "log_dir.offline",
            (CRITICAL,),
            {"broker": int, "log_dir": str},
            {"taken_at": str, "halted": bool},  # taken_at: a paste's moment; halted: from the broker's lines
            key=("broker", "log_dir"),
        ),
    ),
    plots="workbench.plots.standard:health",
)
findings = ANALYSIS.findings


def _only_in_sync(o: OnlyInSync) -> Finding:
    """The broker not to restart: a controlled shutdown cannot move the leadership it alone holds in sync
    (`controlled_shutdown_keeps_a_sole_isr_leader`). Where it refuses to lead them, nobody serves them now
    and a restart does not help: it is elected again as it returns, and refuses again (the log it loads
    holds the other id: `first_leader_and_isr_refused`)."""
    tps = [TP(t, p) for t, p in o.tps]
    also = ", and the controller," if o.controller else ""
    text = (
        f"Broker {o.broker}{also} is the only in-sync replica, and ZooKeeper's leader, of {o.partitions} "
        f"partition(s) ({tp_list(tps)}) at the capture, though they have other replicas"
    )
    if o.refusing:
        some = "all of them" if o.refusing == o.partitions else f"{o.refusing} of them"
        text += (
            f". It refuses to lead {some} (INCONSISTENT_TOPIC_ID): nobody serves those now, and a restart "
            "will not bring them back (elected again as it returns, it refuses again: the log it loads "
            "holds the other id, Partition.scala 3.6.2:561-564): repair their topic id first"
        )
    if o.refusing < o.partitions:
        others = "the others" if o.refusing else "those"
        text += (
            f"{'; ' if o.refusing else ': '}do not restart or stop it until {others} are back in the ISR. A "
            f"controlled shutdown cannot move their leadership (no other in-sync replica), so broker "
            f"{o.broker} would retry, then shut down uncleanly ('Proceeding to do an unclean shutdown as all "
            "the controlled shutdown attempts failed'), and they would be offline until it returns"
        )
        text += ", with a controller failover on top." if o.controller else "."
    else:
        text += "; it holds their only in-sync copy: do not stop it meanwhile."
    return Finding(
        "broker.only_in_sync",
        WARNING,
        {"broker": o.broker, "partitions": o.partitions},
        text,
        tuple(zk_ref(f"/brokers/topics/{t}/partitions/{p}/state") for t, p in o.tps[:3]),
    )


def _under_replicated(e: Episodes) -> Finding:
    brokers = ", ".join(map(str, e.out_of_isr))
    still = f", {e.still} still at the capture" if e.still else ", all recovered before the capture"
    return Finding(
        "partition.under_replicated",
        WARNING if e.still else INFO,
        {"partitions": e.partitions, "brokers": e.out_of_isr, "still": e.still},
        f"{e.partitions} partition(s) ({tp_list(e.tps)}) were under-replicated for up to "
        f"{duration(e.longest_ms)}{still}: broker(s) {brokers} out of their ISR from "
        f"{e.began:%Y-%m-%d %H:%M:%S} ZooKeeper time.",
        tuple(txn_ref(z) for z in e.worst if z is not None),
    )


def _under_replicated_now(e: Episodes) -> Finding:
    """From ZooKeeper's tree at the capture: under-replicated then, each since at most its state's last
    write (which wrote the ISR it has), so how long is a lower bound."""
    brokers = ", ".join(map(str, e.out_of_isr))
    return Finding(
        "partition.under_replicated",
        WARNING,
        {"partitions": e.partitions, "brokers": e.out_of_isr, "still": e.still},
        f"{e.partitions} partition(s) ({tp_list(e.tps)}) were under-replicated at the capture: broker(s) "
        f"{brokers} out of their ISR, the longest for at least {duration(e.longest_ms)}, since ZooKeeper "
        f"wrote that ISR at {e.began:%Y-%m-%d %H:%M:%S} ZooKeeper time (it may have been short before: "
        "ZooKeeper's txn logs would tell).",
        tuple(zk_ref(f"/brokers/topics/{t.topic}/partitions/{t.partition}/state") for t in e.tps[:3]),
    )


def _pasted(shown: Shown | None, coverage: Coverage, check: str) -> list[Finding]:
    """partition.under_replicated: the partitions a pasted describe shows with a leader and fewer in-sync
    replicas than their replication factor, grouped by the brokers out of their ISR."""
    if shown is None:
        return []
    out = []
    for g in shown.groups:
        brokers = g.out_of_isr
        out.append(
            Finding(
                "partition.under_replicated",
                WARNING,
                {
                    "partitions": g.partitions,
                    "brokers": brokers,
                    "still": g.partitions,
                    "taken_at": moment(g.taken_at),
                },
                f"{g.partitions} partition(s) ({tp_list(g.tps)}) were under-replicated when kafka-topics "
                f"--describe was {taken(g.taken_at)}: broker(s) {', '.join(map(str, brokers))} out of their "
                "ISR. A paste shows one moment: how long they were is not known.",
                tuple(file_ref(g.file, line) for line in g.lines),
            )
        )
    if shown.described:
        coverage.add(check, used=[DESCRIBE])
    return out


def _failed_log_dirs(rows: list[FailedDir], coverage: Coverage, check: str) -> list[Finding]:
    """log_dir.offline: a log dir a pasted kafka-log-dirs --describe shows with an error. ZooKeeper does not
    record a failed dir, so this is read whatever else the bundle holds."""
    if not rows:
        return []
    coverage.add(check, used=["kafka-log-dirs --describe (pasted)"])
    return [
        Finding(
            "log_dir.offline",
            CRITICAL,
            {"broker": r.broker, "log_dir": r.log_dir, "taken_at": moment(r.taken_at)},
            f"Broker {r.broker}'s log dir {r.log_dir} had failed ({r.error.rsplit('.', 1)[-1]}) when "
            f"kafka-log-dirs --describe was {taken(r.taken_at)}: a broker marks every replica in a failed "
            "dir offline, stops fetching them and tells the controller (ReplicaManager.handleLogDirFailure, "
            "2.8.2 l.1837-1874).",
            (file_ref(r.file, r.line_no),),
        )
        for r in rows
    ]


def _logged_dir(d: DirFailed) -> Finding:
    """log_dir.offline from the broker's own lines: the dir, its first line and error, and whether the broker
    halted for it (behaviour fact `failed_log_dir_takes_its_replicas_offline`)."""
    error = f' ("{_first_line(d.error.message)}")' if d.error else ""
    if d.halted:
        then = (
            f'the broker then halted ({d.halted.ts:%H:%M:%S}: "{_first_line(d.halted.message)}"), so every '
            "replica it held is offline until it is restarted with the dir repaired or removed from log.dirs"
        )
    else:
        then = (
            "the broker stopped serving its replicas in that dir and told the controller, which elects "
            "other leaders for those it led there where another in-sync replica is alive; they stay offline "
            "on this broker until it is restarted with the dir repaired or removed from log.dirs"
        )
    refs = dict.fromkeys(file_ref(s.file, s.line_no) for s in (d.first, d.error, d.halted) if s)
    return Finding(
        "log_dir.offline",
        CRITICAL,
        {"broker": d.broker, "log_dir": d.log_dir, "halted": d.halted is not None},
        f"Broker {d.broker}'s log dir {d.log_dir} failed at {d.first.ts:%Y-%m-%d %H:%M:%S} broker "
        f"time{error}: {then}.",
        tuple(refs),
    )


def _first_line(message: str) -> str:
    return message.split("\n", 1)[0].strip()
