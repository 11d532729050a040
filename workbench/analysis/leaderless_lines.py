"""partition.offline where ZooKeeper's history is absent (the leaderless analysis's other half), over
time: the outages of the one service timeline (`service.outages`) made of the controller's lines that
began when they left a partition without a leader, grouped in Spark as ZooKeeper's are (`logged_groups`:
by the second and the leader lost, as `leaderless._offline` groups by the txn), then worded in plain
Python (`logged`; each bounded from the leader lost's last sign of life where the lines tell it,
`lost_leader.py`; those ZooKeeper's tree at the capture shows led again are not still unserved). Those
begun by a leader named that refused are `not_acting.py`'s, whichever source names it; what one moment
shows is in `leaderless_moment.py`."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from pyspark.sql import Column, DataFrame, Row, Window
from pyspark.sql import functions as F

from workbench.analysis.contract import CRITICAL, WARNING
from workbench.analysis.findings import (
    TP,
    Finding,
    bounds,
    duration,
    moment,
    tp_list,
)
from workbench.analysis.lost_leader import (
    AT_LEAST,
    CLOCKS,
    ONE_CLOCK,
    Elected,
    controller_gone,
    handled,
    loss_of,
    silent,
)
from workbench.analysis.outage_told import bounded, kafka_counted, lines_ended, still_when
from workbench.model.health import grouped
from workbench.model.outage import ms
from workbench.together import Ask, given

if TYPE_CHECKING:
    from workbench.analysis.leaderless import Facts


class Went(NamedTuple):
    """A partition of a group and when it lost its leader (or, its start unknown, was elected)."""

    topic: str
    partition: int
    at: datetime


@dataclass(frozen=True)
class Logged:
    """Outages the controller's lines began by leaving partitions without a leader (`service.outages` of
    `partition_log.logged_changes`), grouped in Spark (`logged_groups`) as ZooKeeper's are by their txn:
    those begun in one second (`at`, the controller's clock) with one leader lost (`lost`, None: no line
    named one), apart from those whose new leader refused them (`refused_by`: they ran on, nobody served
    them until a broker led them again). A stretch whose start the lines do not hold is keyed by the
    election that ended it (from OfflinePartition): one broker's failure takes all its partitions offline
    and elects at once, leaving -1 where no replica is left, so it joins the group its loss began.

    - `known`: how many hold their start (none: the group's start is not known); `start`: the first
      start, or election, exact; `longest_ms`: the longest from its own start, and `last_ended`, the last
      election, of those the lines give a leader again; `tps`: the first partitions by name;
      `ended_refs`: the first lines naming their new leaders; `elected`: where no start is known, each
      election;
    - of those the lines leave without a leader: `led_now`, how many ZooKeeper's tree at the capture
      names a registered leader for (the first `led_tps`, led by `led_by`), and `offline_now`, every one
      it shows without a live leader (of topics not queued for deletion);
    - `went`: where the leader lost stood still (`leaderless._not_moved`), every partition and when.
    """

    at: datetime
    lost: int | None
    partitions: int
    tps: list[TP]
    known: int
    start: datetime
    began_ref: str | None
    ended: int
    longest_ms: int
    last_ended: datetime | None
    ended_refs: list[str]
    elected: list[Elected] = field(default_factory=list)
    led_now: int = 0
    led_tps: list[TP] = field(default_factory=list)
    led_by: list[int] = field(default_factory=list)
    offline_now: list[TP] = field(default_factory=list)
    went: list[Went] = field(default_factory=list)
    # ran on: the leaders elected that refused them, the first refusal (its broker's clock, its line, and
    # the controller's line that named that leader), and those a broker led again (the last, its line)
    refused_by: list[int] = field(default_factory=list)
    first_refused: datetime | None = None
    refused_ref: str | None = None
    named_ref: str | None = None
    led_again: int = 0
    last_led: datetime | None = None
    led_ref: str | None = None

    @property
    def open(self) -> int:
        """How many no later line gives a leader (that leads)."""
        return self.partitions - (self.led_again if self.refused_by else self.ended)


def logged_groups(stretch: DataFrame | None, tree: DataFrame | None, paused: set[int]) -> Ask[list[Logged]]:
    """The outages of the controller's lines that began without a leader (`stretch`), grouped (`Logged`)
    in one query, with what ZooKeeper's tree at the capture shows of those still without one when the lines
    end (`tree`: `counts.tree_leaders`), and each partition of a group whose leader lost is in `paused`
    (brokers that stood still)."""
    if stretch is None:
        return given([])
    n = F.col("named")
    refused = F.coalesce(n["refused_by"].isNotNull(), F.lit(False))
    led = F.coalesce(F.col("ended_leader") >= 0, F.lit(False))
    known = F.col("began_ref").isNotNull()
    leader = F.when(refused, n["leader"]).when(led, F.col("ended_leader"))
    isr = F.when(refused, n["isr"]).otherwise(F.col("ended_isr"))
    ended = F.when(refused, n["time"]).when(led, F.col("ended"))
    went = F.coalesce(F.when(known, F.col("began")), ended, F.col("began"))
    rows = stretch.where(F.col("count") == "offline").select(
        "topic",
        "partition",
        F.date_trunc("second", went).alias("at"),
        F.coalesce("before", F.lit(-1)).alias("lost"),
        refused.alias("ran_on"),
        known.alias("known"),
        went.alias("began"),
        F.when(known, F.struct(F.col("began").alias("t"), F.col("began_ref").alias("r"))).alias("opening"),
        ended.alias("ended"),
        F.when(refused, n["ref"]).when(led, F.col("ended_ref")).alias("ended_ref"),
        leader.alias("leader"),
        F.when(isr.isNotNull() & leader.isNotNull(), (F.size(isr) == 1) & (isr[0] == leader)).alias("alone"),
        F.when(refused, n["refused_at"]).alias("refused"),
        F.when(refused, n["refused_by"]).alias("refused_ref"),
        F.when(refused & led, F.col("ended")).alias("led_again"),
        F.when(refused & led, F.col("ended_ref")).alias("led_again_ref"),
        # no txn tells a line's stretch (`grouped` asks for them)
        F.lit(None).cast("long").alias("began_zxid"),
        F.lit(None).cast("long").alias("ended_zxid"),
    )
    still = F.when(F.col("ran_on"), F.col("led_again").isNull()).otherwise(F.col("ended").isNull())
    if tree is not None:
        rows = rows.join(tree, ["topic", "partition"], "left")
    else:
        rows = rows.select(
            "*", F.lit(None).cast("int").alias("led_by"), F.lit(None).cast("boolean").alias("offline")
        )
    registered, offline = F.col("led_by").isNotNull(), F.coalesce(F.col("offline"), F.lit(False))
    keys = ["at", "lost", "ran_on"]
    unseen = ~F.col("known") & ~F.col("ran_on")
    same = F.count("*").over(Window.partitionBy(*keys, "leader", "alone", "ended"))
    tp = F.struct("topic", "partition")
    rows = rows.select(
        "*",
        # from its own start (0 where it is not in the lines: elected at once)
        (F.unix_millis("ended") - F.unix_millis("began")).alias("lasted_ms"),
        F.when(unseen, F.struct("leader", "alone", F.col("ended").alias("at"), same.alias("n"))).alias("e"),
        F.when(still & registered, tp).alias("led_tp"),
        F.when(still & registered, F.col("led_by")).alias("led_leader"),
        F.when(still & offline, tp).alias("offline_tp"),
    )

    def listed(c: str | Column, first: int | None = None) -> Column:
        got = F.sort_array(F.collect_list(c))
        return F.slice(got, 1, first) if first else got

    extra = (
        F.count_if("known").alias("known"),
        F.min("opening").alias("opening"),
        F.count_if(F.col("ended").isNotNull()).alias("ended_n"),
        F.max("ended").alias("last_ended"),
        F.slice(F.sort_array(F.array_distinct(F.collect_list("ended_ref"))), 1, 2).alias("ended_refs"),
        F.array_distinct(F.collect_list("e")).alias("elected"),
        F.count("led_tp").alias("led_now"),
        listed("led_tp", 60).alias("led_tps"),
        F.sort_array(F.array_distinct(F.collect_list("led_leader"))).alias("led_by"),
        listed("offline_tp").alias("offline_now"),
        listed(
            F.when(
                F.col("lost").isin(*sorted(paused)),
                F.struct("topic", "partition", F.col("began").alias("at")),
            )
            if paused
            else F.lit(None)
        ).alias("went"),
        F.sort_array(F.array_distinct(F.collect_list(F.when(F.col("ran_on"), F.col("leader"))))).alias("by"),
        F.min(
            F.when(
                F.col("ran_on"),
                F.struct(
                    F.coalesce("refused", "at").alias("t"),
                    F.col("refused_ref"),
                    F.col("refused"),
                    "ended_ref",
                ),
            )
        ).alias("first"),
        F.count_if(F.col("led_again").isNotNull()).alias("led_again"),
        F.max("led_again").alias("last_led"),
        F.min("led_again_ref").alias("led_ref"),
    )
    return Ask(grouped(rows, keys, *extra), _logged)


def _logged(groups: list[Row]) -> list[Logged]:
    """`logged_groups`' rows, in the order the lines tell them: by second, then leader lost, a group that
    ran on into a refusal before the rest."""
    out = []
    for g in sorted(groups, key=lambda g: (g.at, g.lost, not g.ran_on)):
        first = g.first
        out.append(
            Logged(
                g.at,
                None if g.lost < 0 else g.lost,
                g.n,
                _tps(g.tps),
                g.known,
                g.began,
                g.opening.r if g.opening else None,
                g.ended_n,
                int(g.longest or 0),
                g.last_ended,
                list(g.ended_refs),
                elected=[Elected(e.leader, e.alone, e.at, e.n) for e in g.elected],
                led_now=g.led_now,
                led_tps=_tps(g.led_tps),
                led_by=list(g.led_by),
                offline_now=_tps(g.offline_now),
                went=[Went(w.topic, w.partition, w.at) for w in g.went],
                refused_by=list(g.by) if g.ran_on else [],
                first_refused=first.refused if first else None,
                refused_ref=first.refused_ref if first else None,
                named_ref=first.ended_ref if first else None,
                led_again=g.led_again,
                last_led=g.last_led,
                led_ref=g.led_ref,
            )
        )
    return out


def _tps(rows: list[Row]) -> list[TP]:
    return [TP(r.topic, r.partition) for r in rows]


def logged(f: Facts) -> list[Finding]:
    """partition.offline from the controller's lines: a finding per group (`Logged`), critical where a
    partition had no leader when the lines end; those whose start the lines do not hold joined the group
    their election ended at its start, or are a group of their own."""
    out = []
    for g in f.logged:
        if g.refused_by:
            out.append(_ran_on(g, f))
            continue
        at, lost = g.at, g.lost
        who = f" (their leader before was broker {lost})" if lost is not None else ""
        subject: dict[str, Any] = {"partitions": g.partitions, "broker": lost}
        q = f.quiet.get((-1 if lost is None else lost, g.start))
        at_once, still, longest = g.partitions - g.known, g.open, g.longest_ms
        if g.known:
            subject.update(began=moment(at), still=still)
        else:
            subject["began"], longest = "unknown", 0  # from the election that ended them
        led = g.last_ended if g.known and g.last_ended else g.start  # the last election
        # the bounds from their leader's last sign of life to it, if the lines tell it (`outage_ms`)
        after = None if still else ms(led - g.start)
        said, refs, how = silent(q, loss_of(f.lost, lost, g.start), lost, g.start, after, subject)
        gone = ""  # their leader was the controller before: its startup took them offline and elected them
        if not said and not still:
            gone, gone_refs = controller_gone(f.succeeded, lost, g.start, subject, led, longest)
            refs, how = refs + gone_refs, CLOCKS if gone else how
        if not g.known:
            text = _led_with(g, subject, how)
            text += "had no leader until the controller elected one "
            text += f"from OfflinePartition at {at:%Y-%m-%d %H:%M:%S} (its clock)"
            text += gone or who + (said or "; when they lost their leader is not in its lines")
            text += ". No client could produce to or consume from them meanwhile."
            if "outage_ms" in subject:  # a new controller's start takes them offline and elects them at once
                elected = f"at {at:%H:%M:%S} (the controller's clock)"
                at_once_n, loss = (g.partitions, None) if gone else handled(lost, g.elected, f.down)
                text += kafka_counted(elected, at_once_n, g.partitions)
                refs += (loss,) if loss and loss not in refs else ()
                if at_once_n == g.partitions:
                    subject["offline_ms"] = 0  # what Kafka's count held them for (the report's alert)
            out.append(Finding("partition.offline", WARNING, subject, text, (g.ended_refs[0], *refs)))
            continue
        text = _led_with(g, subject, how)
        text += f"had no leader from {at:%Y-%m-%d %H:%M:%S} "
        text += f"(the controller's clock){who}"
        if at_once:
            text += f"; {at_once} of them got a new leader at once, from OfflinePartition"
        if g.ended:
            subject["offline_ms"] = 0 if gone else longest  # what Kafka's count held them for
            text += f"; {'it' if g.partitions == 1 else g.ended} got a leader again"
            text += f"{'' if g.partitions == 1 else ', the last'} after {duration(longest)}"
        if still:
            still_when(subject, f.lines_end)
            which = "them" if still == g.partitions else f"{still} of them"
            text += f"; no later line of the controller's names a leader for {which}"
            text += f"{lines_ended(f.lines_end, f.ends)}{_led_now(g, subject)}{_offline_now(g)}"
        text += (said or gone) + ". No client could produce to or consume from them meanwhile."
        if "outage_ms" in subject:
            elected = f"at {led:%H:%M:%S} (the controller's clock)"
            text += kafka_counted(elected, g.ended if gone else at_once, g.ended)
        # still without a live leader in ZooKeeper's tree at the capture: to the capture, not the lines' end
        bounded(subject, g.start, longest, still, f.ends, None if g.offline_now else f.lines_end)
        refs = (g.began_ref or "", *g.ended_refs, *refs)
        severity = CRITICAL if subject["still"] else WARNING
        out.append(Finding("partition.offline", severity, subject, text, tuple(refs)))
    return out


def _ran_on(g: Logged, f: Facts) -> Finding:
    """Partitions whose stretch without a leader ran on into a refusal: the broker elected as they came
    back refused the LeaderAndIsr and kept its old role (`refused_leader_and_isr_keeps_role`), so nobody
    served them until a broker logged leading them again: one episode, as with ZooKeeper's history."""
    at, lost, still = g.at, g.lost, g.open
    who = f" (their leader before was broker {lost})" if lost is not None else ""
    subject: dict[str, Any] = {"partitions": g.partitions, "broker": lost, "still": still}
    subject.update(refused_by=g.refused_by, began=moment(at) if g.known else "unknown")
    if still:
        still_when(subject, f.lines_end)
    took = ms(g.last_led - g.start) if g.led_again and g.last_led is not None else 0
    bounded(subject, g.start, took, still, f.ends, f.lines_end)
    # led with how long, as the finding from ZooKeeper's history is; where the lines hold only the election
    # that ended the stretch (`at`), not its start, at least as long as from then
    lasted = ""
    if "outage_ms" in subject:
        lower, upper = subject["outage_ms"]
        lasted = f" for {bounds(lower, upper)}" if g.known else f" for at least {duration(lower)}"
    since = f"from {at:%Y-%m-%d %H:%M:%S}" if g.known else f"from before {at:%Y-%m-%d %H:%M:%S}, when"
    since += " (the controller's clock)" if g.known else " the controller elected one from OfflinePartition"
    first = g.first_refused or at
    text = (
        f"{g.partitions} partition(s) ({tp_list(g.tps)}) had no working leader{lasted} {since}{who}: "
        f"broker(s) {', '.join(map(str, g.refused_by))}, elected their leader as they came "
        "back, refused the LeaderAndIsr for them (INCONSISTENT_TOPIC_ID: its log holds another topic id; "
        f"first at {first:%H:%M:%S}, its clock) and kept their old role"
    )
    if g.led_again:
        text += f"; {g.led_again} were led again, the last after about {duration(took)} (the brokers' clocks)"
    if still:
        which = "them" if still == g.partitions else f"{still} of them"
        text += f"; no broker's line says it has led {which} since{lines_ended(f.lines_end, f.ends)}"
    text += ". No client could produce to or consume from them meanwhile."
    refs = [r for r in (g.began_ref, g.named_ref) if r] + [g.refused_ref or ""]
    refs += [g.led_ref] if g.led_ref else []
    return Finding("partition.offline", CRITICAL if still else WARNING, subject, text, tuple(refs))


def _led_now(g: Logged, subject: dict[str, Any]) -> str:
    """Where ZooKeeper's tree at the capture names a registered leader for partitions the lines leave
    without one: they were led again by then (a controller elected one after the lines end, or in lines
    not held), so they are not still unserved (`still` less them, `led_at_capture`)."""
    if not g.led_now:
        return ""
    again = g.led_now
    subject["still"] -= again
    subject["led_at_capture"] = again
    brokers = ", ".join(map(str, g.led_by))
    which = "them" if not subject["still"] else f"{again} of them ({tp_list(g.led_tps)})"
    return (
        f", but at the capture ZooKeeper's tree names a registered leader for {which} (broker(s) "
        f"{brokers}): a controller elected one after the lines end, or in lines the bundle does not hold"
    )


def _offline_now(g: Logged) -> str:
    """Where ZooKeeper's tree at the capture still shows partitions the lines leave without a leader
    without a live one, so said: they were so at the capture."""
    if not g.offline_now:
        return ""
    n = len(g.offline_now)
    return f", and at the capture ZooKeeper's tree shows {n} of them still without a live leader"


def _led_with(g: Logged, subject: dict[str, Any], how: str = ONE_CLOCK) -> str:
    """A finding's opening: the partitions, and where their outage is bounded (`outage_ms`, from their
    leader's last sign of life), how long they had no working leader, as the finding from ZooKeeper's
    history opens; then what the controller's lines show of it."""
    head = f"{g.partitions} partition(s) ({tp_list(g.tps)}) "
    if "outage_ms" not in subject:
        return head
    lasted = bounds(*subject["outage_ms"])
    lasted = (
        f"at least {lasted}"
        if how == AT_LEAST
        else lasted + (" (the two brokers' clocks)" if how == CLOCKS else "")
    )
    return head + f"had no working leader for {lasted}: they "
