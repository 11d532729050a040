"""The leaders elected from outside the ISR before them (unclean elections), from ZooKeeper's partition
states where its history holds them, else the controller's offline elections of a leader alone in its ISR,
whose lines tell clean from unclean (read by `analysis.data_loss`)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from workbench.model.evidence import lacking
from workbench.model.partition_log import OfflineElection, leader_starts, offline_elections
from workbench.model.views import views
from workbench.together import Ask, Joined, given, rows

if TYPE_CHECKING:
    from workbench.frames import Bundle


@dataclass(frozen=True)
class UncleanElection:
    """An election of a leader outside the ISR before it, as ZooKeeper's txns hold it, with its "starts at
    leader epoch" line where its log has one."""

    topic: str
    partition: int
    zxid: int
    time: datetime
    leader: int
    leader_epoch: int
    isr_before: list[int]
    before_zxid: int
    from_offset: str | None
    file: str | None
    line_no: int | None


@dataclass(frozen=True)
class Unclean:
    """The leaders elected from outside the ISR: those ZooKeeper's txns hold (`txns`), and the offline
    elections of a leader alone in its ISR that only the controller's lines show (`lines`, at leader epochs
    whose beginning no txn read holds; `lines_total` of them in all), to be told clean or unclean from what
    the lines print. `unread`: ZooKeeper's txn logs are held but none could be read; `lacking`: the
    evidence missing to tell the lines' elections."""

    txns: list[UncleanElection]
    lines: list[OfflineElection]
    lines_total: int
    unread: bool
    lacking: list[str] = dataclasses.field(default_factory=list)


def unclean(bundle: Bundle, limit: int) -> Ask[Unclean]:
    """The unclean elections the evidence shows, at most `limit` of each source, asked together."""
    v = views(bundle)
    changes = v.partition_changes
    txns = rows(
        None
        if changes is None
        else _from_txns(changes)
        .join(leader_starts(bundle), ["leader", "topic", "partition", "leader_epoch"], "left")
        .orderBy("zxid", "topic", "partition")
        .select(*[f.name for f in dataclasses.fields(UncleanElection)])
        .limit(limit)
    )
    # From the server's first txn on and with no gap, ZooKeeper's history holds every state a line prints:
    # the lines have nothing to add, and are not asked.
    span = v.history_span
    whole = changes is not None and span is not None and span.first <= 1 and v.resumed_after is None
    if whole:
        lines: Ask[tuple[list[OfflineElection], int]] = given(([], 0))
    else:
        lines = offline_elections(bundle, limit, None if changes is None else _elected_in(changes))
    unread = changes is None and v.evidence.zk_history
    absent = (
        lacking(v.evidence, "state-change", "the leaders the controller elects, with the ISR before")
        if changes is None
        else []
    )
    return Joined(
        lambda found, logged: Unclean(
            [UncleanElection(**r.asDict()) for r in found], logged[0], logged[1], unread, absent
        ),
        txns,
        lines,
    )


def _elected_in(changes: DataFrame) -> DataFrame:
    """topic, partition, leader_epoch: each leader epoch whose beginning ZooKeeper's txns hold (a state at a
    lower epoch before it). A later state at the same epoch (an ISR change) does not show how it began."""
    w = Window.partitionBy("topic", "partition").orderBy("zxid", "time")
    before = F.lag("leader_epoch").over(w)
    return (
        changes.select("topic", "partition", "leader_epoch", before.alias("before"))
        .where(F.col("before") < F.col("leader_epoch"))
        .select("topic", "partition", "leader_epoch")
        .distinct()
    )


def _from_txns(changes: DataFrame) -> DataFrame:
    """topic, partition, zxid, time, leader, leader_epoch, isr_before, before_zxid: each state ZooKeeper's
    txns hold of a leader alone in its ISR that was not in the ISR of the state before."""
    w = Window.partitionBy("topic", "partition").orderBy("zxid", "time")
    prev = F.lag(F.struct("zxid", "leader", "isr")).over(w)
    return (
        changes.select("topic", "partition", "zxid", "time", "leader", "leader_epoch", "isr", prev.alias("p"))
        .where(
            (F.col("leader") >= 0)
            & F.col("p.isr").isNotNull()
            & (F.col("leader") != F.col("p.leader"))
            & ~F.array_contains("p.isr", F.col("leader"))
            & (F.col("isr") == F.array(F.col("leader")))
        )
        .select(
            "topic",
            "partition",
            "zxid",
            "time",
            "leader",
            "leader_epoch",
            F.col("p.isr").alias("isr_before"),
            F.col("p.zxid").alias("before_zxid"),
        )
    )
