"""Findings from what pasted output shows at one moment (`model/described.py`), for a bundle without the
ZooKeeper evidence that shows it over time: health and leaderless (no txn logs), deletion (no tree). Each
says when its paste was taken and that a paste shows a moment, not how long anything lasted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from workbench.analysis.contract import CRITICAL, WARNING
from workbench.analysis.findings import TP, Coverage, Finding, file_ref, first_refs, tp_list
from workbench.model import described
from workbench.model.views import views

if TYPE_CHECKING:
    from workbench.frames import Bundle

DESCRIBE = "kafka-topics --describe (pasted)"


def taken(at: Any) -> str:
    """When a paste was taken, as a finding says it."""
    return f"taken at {at:%Y-%m-%d %H:%M:%S} UTC" if at else "taken at a time not known"


def _moment(at: Any) -> str:
    return f"{at:%Y-%m-%dT%H:%M:%SZ}" if at else "unknown"


@dataclass(frozen=True)
class Group:
    """Partitions one paste shows alike (without a leader; under-replicated with the same brokers out of
    their ISR): how many, which, the brokers holding their replicas and the first lines showing them."""

    file: str
    taken_at: datetime | None
    partitions: int
    tps: list[TP]
    brokers: list[int]
    lines: list[int]
    out_of_isr: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class Shown:
    """What the pastes show of a check's partitions: the groups, and whether any describe was pasted (so
    that none found is a describe read, not an absent one)."""

    groups: list[Group]
    described: bool


def _shown(bundle: Bundle, rows: DataFrame, *keys: str) -> Shown | None:
    """Per paste (and keys) the partitions `rows` holds; None for a bundle without pastes (no query)."""
    if not bundle.evidence.pasted:
        return None
    found = (
        rows.groupBy("file", "taken_at", *keys)
        .agg(
            F.count("*").alias("n"),
            F.sort_array(F.collect_list(F.struct("topic", "partition"))).alias("tps"),
            F.sort_array(F.array_distinct(F.flatten(F.collect_list("replicas")))).alias("brokers"),
            F.slice(F.sort_array(F.collect_list("line_no")), 1, 5).alias("lines"),
        )
        .orderBy("file", *keys)
        .collect()
    )
    groups = [
        Group(
            g.file,
            g.taken_at,
            g.n,
            [TP(t.topic, t.partition) for t in g.tps],
            list(g.brokers),
            list(g.lines),
            list(g.out_of_isr) if "out_of_isr" in keys else [],
        )
        for g in found
    ]
    return Shown(groups, bool(groups) or not bundle.partition_descriptions.isEmpty())


def offline_facts(bundle: Bundle) -> Shown | None:
    return _shown(bundle, described.offline(bundle))


def under_replicated_facts(bundle: Bundle) -> Shown | None:
    return _shown(bundle, described.under_replicated(bundle), "out_of_isr")


def offline(shown: Shown | None, coverage: Coverage, check: str) -> list[Finding]:
    """partition.offline: the partitions a pasted describe shows with no leader."""
    if shown is None:
        return []
    out = []
    for g in shown.groups:
        brokers = ", ".join(map(str, g.brokers))
        out.append(
            Finding(
                "partition.offline",
                CRITICAL,
                {"partitions": g.partitions, "taken_at": _moment(g.taken_at)},
                f"{g.partitions} partition(s) ({tp_list(g.tps)}) had no leader when kafka-topics --describe "
                f"was {taken(g.taken_at)} (`Leader: none`); their replicas are on broker(s) {brokers}. A "
                "paste shows one moment: when they went offline and for how long is not known.",
                tuple(file_ref(g.file, line) for line in g.lines),
            )
        )
    if shown.described:
        coverage.add(check, used=[DESCRIBE])
    return out


def under_replicated(shown: Shown | None, coverage: Coverage, check: str) -> list[Finding]:
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
                    "taken_at": _moment(g.taken_at),
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


@dataclass(frozen=True)
class Marked:
    """A topic a paste shows marked for deletion, and the replicas of it the data dirs (copied or listed)
    still hold live, as `partition@broker`."""

    topic: str
    how: str
    file: str
    line_no: int
    taken_at: datetime | None
    replicas_left: list[str]


def marked_facts(bundle: Bundle) -> list[Marked]:
    """The topics pastes show marked for deletion (none without pastes), each paste's own row."""
    if not bundle.evidence.pasted:
        return []
    rows = described.marked_for_deletion(bundle).orderBy("topic", "file").collect()
    if not rows:
        return []
    left: dict[str, list[str]] = {}
    for r in (
        views(bundle)
        .replicas.where(F.col("topic").isin(sorted({r.topic for r in rows})) & (F.col("dir_state") == "live"))
        .groupBy("topic")
        .agg(F.sort_array(F.collect_set(F.concat_ws("@", "partition", "broker_id"))).alias("left"))
        .collect()
    ):
        left[r.topic] = list(r.left)
    return [Marked(r.topic, r.how, r.file, r.line_no, r.taken_at, left.get(r.topic, [])) for r in rows]


def marked(rows: list[Marked], coverage: Coverage, check: str) -> list[Finding]:
    """deletion.marked: what each paste shows marked, with the replicas still on disk."""
    if not rows:
        return []
    coverage.add(check, used=["the topics a pasted output shows marked for deletion"])
    out = []
    for r in rows:
        on_disk = r.replicas_left
        dirs = (
            f"; the data dirs in the bundle still hold {len(on_disk)} live replica(s) of it "
            f"({', '.join(first_refs(on_disk, 6))})"
            if on_disk
            else ""
        )
        out.append(
            Finding(
                "deletion.marked",
                WARNING,
                {"topic": r.topic, "taken_at": _moment(r.taken_at), "replicas_left": on_disk},
                f"{r.topic} was marked for deletion when the paste was {taken(r.taken_at)} ({r.how}){dirs}. "
                "Without ZooKeeper's tree and history, whether the controller went on to delete it is not "
                "known.",
                (file_ref(r.file, r.line_no),),
            )
        )
    return out


@dataclass(frozen=True)
class FailedDir:
    """A log dir a pasted kafka-log-dirs --describe shows with an error, at the first line showing it."""

    file: str
    taken_at: datetime | None
    broker: int
    log_dir: str
    error: str
    line_no: int


def failed_dir_facts(bundle: Bundle) -> list[FailedDir]:
    if not bundle.evidence.pasted:
        return []
    rows = (
        bundle.log_dir_descriptions.where(F.col("error").isNotNull())
        .groupBy("file", "taken_at", "broker_id", "log_dir", "error")
        .agg(F.min("line_no").alias("line_no"))
        .orderBy("broker_id", "log_dir", "file")
        .collect()
    )
    return [FailedDir(r.file, r.taken_at, r.broker_id, r.log_dir, r.error, r.line_no) for r in rows]


def failed_log_dirs(rows: list[FailedDir], coverage: Coverage, check: str) -> list[Finding]:
    """log_dir.offline: a log dir a pasted kafka-log-dirs --describe shows with an error. ZooKeeper does not
    record a failed dir, so this is read whatever else the bundle holds."""
    if not rows:
        return []
    coverage.add(check, used=["kafka-log-dirs --describe (pasted)"])
    return [
        Finding(
            "log_dir.offline",
            CRITICAL,
            {"broker": r.broker, "log_dir": r.log_dir, "taken_at": _moment(r.taken_at)},
            f"Broker {r.broker}'s log dir {r.log_dir} had failed ({r.error.rsplit('.', 1)[-1]}) when "
            f"kafka-log-dirs --describe was {taken(r.taken_at)}: a broker marks every replica in a failed "
            "dir offline, stops fetching them and tells the controller (ReplicaManager.handleLogDirFailure, "
            "2.8.2 l.1837-1874).",
            (file_ref(r.file, r.line_no),),
        )
        for r in rows
    ]
