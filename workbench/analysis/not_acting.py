"""Partitions whose leader refused to lead them (`acting`: INCONSISTENT_TOPIC_ID), from the one service
timeline's stretches that began so (`service.unserved`), whichever source named that leader: a txn of
ZooKeeper's, or without its history the controller's line. ZooKeeper and Kafka's own counts show them
healthy while nobody serves them. Part of the leaderless analysis: one judge for both sources."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame, Row
from pyspark.sql import functions as F

from workbench.analysis.contract import CRITICAL
from workbench.analysis.findings import TP, Finding, bounds, duration, hex_zxid, moment, tp_list, txn_ref
from workbench.analysis.outage_told import bounded, lines_ended, still_when
from workbench.model.health import grouped
from workbench.model.outage import ms
from workbench.model.refs import file_ref_col
from workbench.model.skew import skew_col, skew_ms
from workbench.together import Ask

if TYPE_CHECKING:
    from workbench.frames import Bundle

# How long before ZooKeeper's write a controller's election line may come (its clock set by `skew`): the
# controller logs it, then elects and writes each partition's state, within milliseconds to seconds; a
# line further back is another election's.
MOVED_WITHIN_MS = 10_000
TRIGGERS = {  # KafkaController.scala ElectionTrigger 2.4.1:49-51, 2.8.2:56-58, 3.6.2:60-62
    "AutoTriggered": "the controller's automatic preferred-replica election (auto.leader.rebalance.enable)",
    "AdminClientTriggered": "a preferred-replica election asked for through the admin API "
    "(kafka-leader-election)",
    "ZkTriggered": "a preferred-replica election asked for in ZooKeeper (/admin/preferred_replica_election)",
}


@dataclass(frozen=True)
class Moved:
    """The controller's preferred-replica election that named the refusing leader: its line's trigger
    (None before 2.4, whose line does not say), when (the controller's clock) and the line."""

    trigger: str | None
    ts: datetime
    controller: int
    ref: str

    def by(self) -> str:
        """What named the leader, for the finding's first sentence."""
        return f", chosen by {TRIGGERS.get(self.trigger or '', 'a preferred-replica election')},"

    def detail(self) -> str:
        at = f"{self.ts:%H:%M:%S.%f}"[:-3]
        return (
            f" Broker {self.controller}, the controller, started that election at {at} (its clock): a "
            "preferred election hands leadership to the first replica of the assignment, here a broker "
            "that refuses the topic's id."
        )


@dataclass(frozen=True)
class NotActing:
    """Partitions whose leader refused to lead them, grouped by that leader and what named it: the txn
    that wrote it into their state (`began_zxid`), or without ZooKeeper's history the controller's line
    (`began_ref`, `began` on the controller's clock). `epoch`: the lowest leader epoch (`epochs`: how many);
    `refs`: the first lines of its refusals, `first_refused` the earliest (its broker's clock)."""

    leader: int
    began_zxid: int | None
    partitions: int
    tps: list[TP]
    longest_ms: int
    still: int
    began: datetime
    epoch: int | None
    ended_zxid: int | None
    refs: list[str]
    # of them, those whose ISR was short of their replicas as the window began (None: replicas not known)
    short: int | None = 0
    then_offline: int = 0  # of them, those that then went offline too, in the same outage
    moved: Moved | None = None  # the preferred election that named the refusing leader, where logged
    began_ref: str | None = None
    epochs: int = 1
    first_refused: datetime | None = None
    # of them, those a leader that did not refuse led again, the last of those (its time and its line)
    led_again: int = 0
    last_led: datetime | None = None
    led_ref: str | None = None
    unled: list[TP] = field(default_factory=list)  # the first of those not led again, by name


def short(g: NotActing) -> str:
    """How many of the window's partitions the CLI's ISR test (`under_replicated_signals`) lists."""
    if g.short == 0:
        return "none of them: their ISR was whole"
    return "all of them" if g.short == g.partitions else f"{g.short} of them"


def refusals(ep: DataFrame) -> Ask[list[NotActing]]:
    """Stretches that began with a leader that refused them (`ep`, outages of either source), grouped by
    that leader and what named it (a txn, or the controller's line); a stretch runs on when it then went
    offline too."""
    led = F.col("ended_leader") >= 0
    extra = (
        F.min("leader_epoch").alias("epoch"),
        F.count_distinct("leader_epoch").alias("epochs"),
        F.max("ended_zxid").alias("last_ended"),
        F.slice(F.sort_array(F.array_distinct(F.flatten(F.collect_list("refusals")))), 1, 5).alias("refs"),
        F.min("refused_at").alias("first_refused"),
        # the ISR against the replicas, where the replicas are known (not in the controller's lines)
        F.when(F.count_if(F.col("out_of_isr").isNotNull()) > 0, F.count_if(F.size("out_of_isr") > 0)).alias(
            "short"
        ),
        F.count_if(F.array_contains("whys", "offline")).alias("then_offline"),
        F.count_if(led).alias("led_again"),
        F.max(F.when(led, F.col("ended"))).alias("last_led"),
        F.min(F.when(led, F.col("ended_ref"))).alias("led_ref"),
        F.slice(
            F.sort_array(
                F.collect_list(F.when(~F.coalesce(led, F.lit(False)), F.struct("topic", "partition")))
            ),
            1,
            60,
        ).alias("unled"),
    )
    return Ask(grouped(ep, ["leader", "began_zxid", "began_ref"], *extra), _not_acting)


def _not_acting(groups: list[Row]) -> list[NotActing]:
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
            began_ref=g.began_ref,
            epochs=g.epochs,
            first_refused=g.first_refused,
            led_again=g.led_again,
            last_led=g.last_led,
            led_ref=g.led_ref,
            unled=[TP(t.topic, t.partition) for t in g.unled],
        )
        for g in groups
    ]


def moved_by(bundle: Bundle, groups: list[NotActing]) -> list[NotActing]:
    """`groups`, each with the preferred-replica election that named its refusing leader (`Moved`), the
    line within MOVED_WITHIN_MS before what named it: a txn, on ZooKeeper's clock (`skew`), or the
    controller's line, on its own."""
    found: dict[int, Moved] = {}
    for on_zk_clock in (True, False):
        wanted = [
            (i, t, g.began)
            for i, g in enumerate(groups)
            if (g.began_zxid is not None) == on_zk_clock
            for t in g.tps
        ]
        found |= preferred_elections(bundle, wanted, on_zk_clock)
    return [replace(g, moved=found.get(i)) for i, g in enumerate(groups)]


def preferred_elections(
    bundle: Bundle, wanted: list[tuple[int, TP, datetime]], on_zk_clock: bool
) -> dict[int, Moved]:
    """For each key of `wanted` (key, a partition it names, when the refusing leader was named), the
    controller's "Starting replica leader election (PREFERRED) ... triggered by T" line (KafkaController
    onReplicaElection 2.4.1:750, 2.8.2:859, 3.6.2:914; before 2.4 "Starting preferred replica leader
    election for partitions ...", onPreferredReplicaElection 0.10.2.2:658, 2.3.1:644) naming one of its
    partitions, the last within MOVED_WITHIN_MS before that moment: on ZooKeeper's clock (`on_zk_clock`,
    the line's moved by its broker's skew), else on the controller's own (its line naming the leader).
    One query."""
    if not wanted:
        return {}
    rows = [(key, at, f"{t.topic}-{t.partition}") for key, t, at in wanted]
    asked = bundle.spark.createDataFrame(rows, "key int, at timestamp, tp string")
    skew = F.coalesce(skew_col(skew_ms(bundle) if on_zk_clock else {}), F.lit(0))
    lines = bundle.cluster_events.where(
        (F.col("event") == "leader_election.started")
        & (F.coalesce(F.col("attrs")["election_type"], F.lit("PREFERRED")) == "PREFERRED")
    ).select(
        F.explode(F.split(F.col("attrs")["partitions"], ",")).alias("tp"),
        F.struct(
            F.col("attrs")["trigger"].alias("trigger"),
            F.col("ts"),
            F.col("broker_id").alias("controller"),
            file_ref_col("file", "line_no").alias("ref"),
        ).alias("line"),
        (F.unix_millis("ts") - skew).alias("line_ms"),
    )
    at_ms = F.unix_millis("at")
    found = (
        asked.join(lines, "tp")
        .where((F.col("line_ms") <= at_ms) & (F.col("line_ms") > at_ms - MOVED_WITHIN_MS))
        .groupBy("key")
        .agg(F.max_by("line", "line_ms").alias("line"))
        .collect()  # one row per key
    )
    return {r.key: Moved(**r.line.asDict()) for r in found}


def then_offline(g: NotActing) -> str:
    """Those of the window's partitions whose outage ran on offline (the refusing leader went away)."""
    if not g.then_offline:
        return ""
    some = "All of them" if g.then_offline == g.partitions else f"{g.then_offline} of them"
    return (
        f" {some} then went offline too (no live leader), with nobody serving them in between: the "
        "duration is the whole outage's."
    )


def not_acting_finding(
    g: NotActing, ends: datetime | None = None, lines_end: datetime | None = None
) -> Finding:
    """Nobody served them (a produce there fails 'Leader not local', Partition.scala appendRecordsToLeader
    2.8.2:1074), yet every count Kafka keeps shows them healthy. Named by a txn, or without ZooKeeper's
    history by the controller's line (`ends`: the evidence's end; `lines_end`: the brokers' last line, as
    of which those not led again are still without one)."""
    zk = g.began_zxid is not None
    subject: dict[str, Any] = {"partitions": g.partitions, "broker": g.leader, "still": g.still}
    if g.began_zxid is not None:
        subject["zxid"] = hex_zxid(g.began_zxid)
        subject["outage_ms"] = [g.longest_ms, g.longest_ms]  # the longest's, as every outage finding says it
        lasted = f" for up to {duration(g.longest_ms)}" + (", still at the capture" if g.still else "")
        named = f"from zxid {hex_zxid(g.began_zxid)} ({g.began:%Y-%m-%d %H:%M:%S} ZooKeeper time) ZooKeeper"
        named += " names"
    else:
        at = g.began.replace(microsecond=0)
        subject["began"] = moment(at)
        if g.still:
            still_when(subject, lines_end)
        # from the naming line itself, not the second it is in
        took = ms(g.last_led - g.began) if g.last_led is not None else 0
        bounded(subject, g.began, took, g.still, ends, lines_end)
        lasted = ""
        if "outage_ms" in subject:  # the longest led again, or bounded by the lines' end and the capture
            lasted = f" for {bounds(*subject['outage_ms'])}" if g.still else f" for up to {duration(took)}"
        named = f"from {at:%Y-%m-%d %H:%M:%S} (the controller's clock) the controller named"
    by, detail = (g.moved.by(), g.moved.detail()) if g.moved is not None else ("", "")
    if g.moved is not None:
        subject["trigger"] = g.moved.trigger or "preferred"
    epoch = f" (leader epoch {g.epoch})" if g.epochs == 1 else ""
    first = f"; first at {g.first_refused:%H:%M:%S}, its clock" if g.first_refused is not None else ""
    text = (
        f"{g.partitions} partition(s) ({tp_list(g.tps)}) had no acting leader{lasted}: {named} broker "
        f"{g.leader} their leader{epoch}{by} but broker {g.leader} refused the LeaderAndIsr "
        f"(INCONSISTENT_TOPIC_ID: its log holds another topic id{first}) and kept its old role, so nobody "
        "served them"
    )
    if not zk and g.still:
        if g.led_again:
            text += f"; {g.led_again} were led again, the last after about {duration(took)} (the brokers' "
            text += "clocks)"
        which = "them" if g.still == g.partitions else f"{g.still} of them"
        text += f"; no broker's line says it has led {which} since{lines_ended(lines_end, ends)}"
    listed = (
        f", and `kafka-topics --describe --under-replicated-partitions` lists only those whose ISR is short "
        f"of their replicas ({short(g)})"
        if g.short is not None
        else ""
    )
    shows = "ZooKeeper and OfflinePartitionsCount show" if zk else "OfflinePartitionsCount shows"
    text += (
        f".{detail} The controller does not act on that error, so {shows} them healthy while nobody serves "
        "them; the leaders' UnderReplicatedPartitions metric misses them too (no broker leads them)"
        f"{listed}.{then_offline(g)}"
    )
    began = txn_ref(g.began_zxid) if g.began_zxid is not None else (g.began_ref or "")
    ended = [txn_ref(g.ended_zxid)] if zk and g.ended_zxid is not None else [g.led_ref] if g.led_ref else []
    refs = (began, *([g.moved.ref] if g.moved else []), *ended, *g.refs)
    return Finding("partition.no_acting_leader", CRITICAL, subject, text, refs)
