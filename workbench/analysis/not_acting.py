"""Partitions whose ZooKeeper leader refused to lead them (`acting`: INCONSISTENT_TOPIC_ID), from the one
service timeline's stretches that began so (`service.unserved`): ZooKeeper and Kafka's own counts show them
healthy while nobody serves them. Part of the leaderless analysis."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from workbench.analysis.contract import CRITICAL
from workbench.analysis.findings import TP, Finding, duration, hex_zxid, tp_list, txn_ref
from workbench.model.health import grouped


@dataclass(frozen=True)
class NotActing:
    """Partitions whose ZooKeeper leader refused to lead them, grouped by that leader and the txn that
    named it (`epoch`: the leader epoch; `refs`: the first lines of its refusals)."""

    leader: int
    began_zxid: int
    partitions: int
    tps: list[TP]
    longest_ms: int
    still: int
    began: datetime
    epoch: int | None
    ended_zxid: int | None
    refs: list[str]
    short: int = 0  # of them, those whose ISR was short of their replicas as the window began
    then_offline: int = 0  # of them, those that then went offline too, in the same outage


def short(g: NotActing) -> str:
    """How many of the window's partitions the CLI's ISR test (`under_replicated_signals`) lists."""
    if g.short == 0:
        return "none of them: their ISR was whole"
    return "all of them" if g.short == g.partitions else f"{g.short} of them"


def refusals(ep: DataFrame) -> list[NotActing]:
    """Stretches that began with a ZooKeeper leader that refused them (`ep`), grouped by that leader and
    the txn that named it; a stretch runs on when it then went offline too."""
    extra = (
        F.min("leader_epoch").alias("epoch"),
        F.max("ended_zxid").alias("last_ended"),
        F.slice(F.sort_array(F.array_distinct(F.flatten(F.collect_list("refusals")))), 1, 5).alias("refs"),
        F.count_if(F.size("out_of_isr") > 0).alias("short"),
        F.count_if(F.array_contains("whys", "offline")).alias("then_offline"),
    )
    return [
        NotActing(
            g.leader,
            g.began_zxid,
            g.n,
            [TP(t.topic, t.partition) for t in g.tps],
            g.longest,
            g.still,
            g.began,
            g.epoch,
            g.last_ended,
            list(g.refs),
            g.short,
            g.then_offline,
        )
        for g in grouped(ep, ["leader", "began_zxid"], *extra)
    ]


def then_offline(g: NotActing) -> str:
    """Those of the window's partitions whose outage ran on offline (the refusing leader went away)."""
    if not g.then_offline:
        return ""
    some = "All of them" if g.then_offline == g.partitions else f"{g.then_offline} of them"
    return (
        f" {some} then went offline too (no live leader), with nobody serving them in between: the "
        "duration is the whole outage's."
    )


def not_acting_finding(g: NotActing) -> Finding:
    """Nobody served them (a produce there fails 'Leader not local', Partition.scala appendRecordsToLeader
    2.8.2:1074), yet every count Kafka keeps shows them healthy."""
    still = ", still at the capture" if g.still else ""
    return Finding(
        "partition.no_acting_leader",
        CRITICAL,
        {"partitions": g.partitions, "broker": g.leader, "zxid": hex_zxid(g.began_zxid), "still": g.still},
        f"{g.partitions} partition(s) ({tp_list(g.tps)}) had no acting leader for up to "
        f"{duration(g.longest_ms)}{still}: from zxid {hex_zxid(g.began_zxid)} "
        f"({g.began:%Y-%m-%d %H:%M:%S} ZooKeeper time) ZooKeeper names broker {g.leader} their "
        f"leader (leader epoch {g.epoch}), but broker {g.leader} refused the LeaderAndIsr "
        "(INCONSISTENT_TOPIC_ID) and did not lead them. The controller does not act on that error, "
        "so ZooKeeper and OfflinePartitionsCount show them healthy while nobody serves them; the "
        "leaders' UnderReplicatedPartitions metric misses them too (no broker leads them), and "
        "`kafka-topics --describe --under-replicated-partitions` lists only those whose ISR is short of "
        f"their replicas ({short(g)}).{then_offline(g)}",
        (*(txn_ref(z) for z in (g.began_zxid, g.ended_zxid) if z is not None), *g.refs),
    )
