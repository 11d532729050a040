"""partition.offline where ZooKeeper's history is absent (the leaderless analysis's other half), over
time: the outages of the one service timeline (`service.outages`) made of the controller's lines that
began when they left a partition without a leader, grouped in Spark as ZooKeeper's are (`logged_groups`:
by the second and the leader lost, as `leaderless._offline` groups by the txn), then worded in plain
Python (`logged`; each bounded where the controller could not reach the leader lost:
`model.channel.went_quiet`; those ZooKeeper's tree at the capture shows led again are not still
unserved). Those begun by a leader named that refused are `not_acting.py`'s, whichever source names it;
what one moment shows is in `leaderless_moment.py`."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
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
from workbench.analysis.outage_told import STOPPED, bounded, kafka_counted, lines_ended, ms, still_when
from workbench.model.channel import Quiet
from workbench.model.health import grouped
from workbench.model.history.sessions import Expired
from workbench.model.outage import Outage, silence
from workbench.model.pauses import ELECTED_WITHIN_S
from workbench.model.tenures import TenureEnd, logged_outage
from workbench.together import Ask, given

if TYPE_CHECKING:
    from workbench.analysis.leaderless import Facts


class Elected(NamedTuple):
    """Of a group whose start the lines do not hold, the partitions one election line gave a leader:
    that leader, whether their ISR was it alone (None: the line prints no ISR), when, and how many."""

    leader: int | None
    alone: bool | None
    at: datetime
    partitions: int


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


class Down(NamedTuple):
    """A broker's stretch without a registration, as the controllers' lines tell it (`history.brokers`):
    from the line that says it gone (`ref`) until one says it back (None: no line does)."""

    down: datetime
    ref: str
    up: datetime | None


@dataclass(frozen=True)
class Succeeded:
    """An election after a tenure the brokers' lines end (`tenures.TenureEnd`): when broker `by` was
    elected, on its own clock, and how the controller before it stopped."""

    elected: datetime
    by: int | None
    ended: TenureEnd


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
        said, refs, how = _silent(q, _loss(f.lost, lost, g.start), lost, g.start, after, subject)
        gone = ""  # their leader was the controller before: its startup took them offline and elected them
        if not said and not still:
            gone, gone_refs = _controller_gone(f.succeeded, lost, g.start, subject, led, longest)
            refs, how = refs + gone_refs, CLOCKS if gone else how
        if not g.known:
            text = _led_with(g, subject, how)
            text += "had no leader until the controller elected one "
            text += f"from OfflinePartition at {at:%Y-%m-%d %H:%M:%S} (its clock)"
            text += gone or who + (said or "; when they lost their leader is not in its lines")
            text += ". No client could produce to or consume from them meanwhile."
            if "outage_ms" in subject:  # a new controller's start takes them offline and elects them at once
                elected = f"at {at:%H:%M:%S} (the controller's clock)"
                handled = (g.partitions, None) if gone else _handled(g, f.down)
                text += kafka_counted(elected, handled[0], g.partitions)
                refs += (handled[1],) if handled[1] and handled[1] not in refs else ()
                if handled[0] == g.partitions:
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


# How a lines finding's opening reads its bounds (`_silent`): on one clock, on two brokers' clocks, or
# from below only
ONE_CLOCK, CLOCKS, AT_LEAST = "", "clocks", "at least"


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


def _silent(
    q: Quiet | None,
    loss: Expired | None,
    lost: int | None,
    at: datetime,
    after_ms: int | None,
    subject: dict[str, Any],
) -> tuple[str, tuple[str, ...], str]:
    """The signs that the leader lost at `at` was gone before (model.channel.went_quiet): the controller's
    first failed send to it (gone by then) and its own last line before that (alive then; its clock). With
    both, and `after_ms` (how long they stayed without a leader from `at`), the outage's bounds go in the
    subject; with the send alone, its lower bound. A leader whose last line is its halt for failed log dirs
    stopped then: the outage is exact. A leader that crashed (`loss`: a controller handled its failure, its
    log holds no shutdown) went silent a session timeout before (`_counted_back`). And how the opening reads
    the bounds (`_led_with`)."""
    upto = lambda said: ms(at - said.ts) + (after_ms or 0)  # noqa: E731
    if q is not None and lost is not None and q.halted and q.last_line is not None:
        if after_ms is not None:
            subject["outage_ms"] = [upto(q.last_line)] * 2  # the finding leads with it (`_led_with`)
        text = (
            f"; broker {lost} {STOPPED['halted']} from {q.last_line.ts:%H:%M:%S} (its clock: its last line)"
        )
        return text, (q.last_line.ref,), ONE_CLOCK
    if loss is not None and lost is not None and (q is None or not q.heard):
        return _counted_back(loss, q or Quiet(None, None), at, after_ms, subject)
    if q is None or lost is None or q.unreachable is None:
        return "", (), ONE_CLOCK  # a last line alone says the broker lived, not that it led them until then
    refs = tuple(x.ref for x in (q.unreachable, q.last_line) if x is not None)
    lower = upto(q.unreachable)
    upper = max(lower, upto(q.last_line)) if q.last_line is not None else None
    text = f"; broker {lost} was already unreachable at {q.unreachable.ts:%H:%M:%S} (the controller's first "
    text += "failed connection to it)"
    if q.last_line is not None and q.heard:
        text += (
            f" and its ZooKeeper client last heard from ZooKeeper at {q.last_line.ts:%H:%M:%S} (its clock; "
        )
        text += "its time-out line: it stood still or was cut off from then)"
    elif q.last_line is not None:
        text += f" and its last line was at {q.last_line.ts:%H:%M:%S} (its clock)"
    if after_ms is not None:  # the finding leads with it (`_led_with`); no last line: a lower bound
        subject["outage_ms"] = [lower, upper if upper is not None else lower]
    return text, refs, CLOCKS if q.last_line is not None else AT_LEAST


def _counted_back(
    loss: Expired, q: Quiet, at: datetime, after_ms: int | None, subject: dict[str, Any]
) -> tuple[str, tuple[str, ...], str]:
    """A leader that crashed went silent within `behaviour.went_silent` of its session's expiry, which
    came before the controller handled its failure (`loss.at`, the controller's clock, as the election at
    `at` is), not before its last line (its own clock) and not after the controller's first failed send
    to it (the controller's clock): the outage from then to `after_ms` after `at`, as `outage.outages`
    bounds it from ZooKeeper's expiry."""
    assert loss.timeout is not None
    timeout, told = loss.timeout
    last, sent = q.last_line, q.unreachable  # a send after its last line (`went_quiet`)
    gone = silence(
        _epoch_ms(loss.at),
        timeout,
        None,
        _epoch_ms(last.ts) if last is not None else None,
        _epoch_ms(sent.ts) if sent is not None else None,
    )
    # its last line bounds it: its clock
    clocks = CLOCKS if last is not None and gone.earliest == _epoch_ms(last.ts) else ONE_CLOCK
    end = _epoch_ms(at) + (after_ms or 0)
    handled = f"{loss.at:%H:%M:%S.%f}"[:-3]
    o = Outage(
        max(0, end - gone.latest),
        end - gone.earliest,
        last.ts if last is not None else None,
        "its last log line (on its own clock)",
        timeout,
        told,
        tuple(r for r in (loss.first, *(x.ref for x in (sent, last) if x is not None)) if r),
        gone.pinged_after,
        expiry_said=f"the controller's handling of its failure (at {handled}, its clock), which came after "
        "it by as long as the controller took to learn of it",
        unreachable=sent.ts if sent is not None else None,
    )
    if after_ms is not None:
        subject["outage_ms"] = [o.lower_ms, o.upper_ms]  # the finding leads with it (`_led_with`)
    how = "gone" if loss.ref is None else "crash"  # no start again in its log: nothing says it ran again
    return f"; broker {loss.broker} {STOPPED[how]} from then: {o.detail()}", o.refs, clocks


def _loss(lost: list[Expired], broker: int | None, at: datetime) -> Expired | None:
    """The crash of `broker` a controller handled within ELECTED_WITHIN_S before `at` (its clock), where
    the session timeout is known (`history.sessions`: its log holds no shutdown)."""
    crashed = [e for e in lost if e.broker == broker and e.how == "crash" and e.timeout is not None]
    return max((e for e in crashed if e.at <= at <= e.at + WITHIN), key=lambda e: e.at, default=None)


def _epoch_ms(t: datetime) -> int:
    return round(t.timestamp() * 1000)


def _controller_gone(
    succeeded: list[Succeeded],
    lost: int | None,
    at: datetime,
    subject: dict[str, Any],
    led: datetime,
    at_least: int = 0,
) -> tuple[str, tuple[str, ...]]:
    """Where the leader lost was the controller the new one (the broker acting at `at`) took over from
    within ELECTED_WITHIN_S before, and the lines tell how its tenure ended: the partitions had no working
    leader from its last sign of life (`tenures.logged_outage`, to their election at `led` instead of the
    new controller's readiness), on the two brokers' clocks, and at least as long as the new controller's
    lines show them without one (`at_least`, on its clock alone: the two clocks may disagree by more). Its
    startup took them offline and elected them in one event (`offline_count_set_after_each_event`):
    Kafka's count never held them."""
    for s in succeeded:
        if lost is None or s.ended.broker != lost or not s.elected <= at <= s.elected + WITHIN:
            continue
        o = logged_outage(s.ended, s.elected, led)
        if o is None:
            continue
        lower = max(o.lower_ms, at_least)
        subject["outage_ms"] = [lower, max(o.upper_ms, lower)]
        detail = o.detail()
        text = f"; broker {lost}, their leader, was the controller before broker {s.by} (elected at "
        text += f"{s.elected:%H:%M:%S}, its clock) and {STOPPED.get(s.ended.how, STOPPED['unknown'])}"
        text += f" from then{': ' + detail if detail else ''}"
        return text, o.refs
    return "", ()


WITHIN = timedelta(seconds=ELECTED_WITHIN_S)


def _handled(g: Logged, down: dict[int, list[Down]]) -> tuple[int | None, str | None]:
    """Of a group elected from OfflinePartition with no line of their going offline, how many the event in
    which the controller handled their leader's loss elected, and the line that tells that loss (its
    "Broker failure callback"); (None, None) where that is not known of every one. That event takes them
    offline and elects every one it can (onReplicasBecomeOffline, `offline_count_set_after_each_event`):
    one whose new leader was registered then was elected in it, unless elected alone in its ISR (it may
    have waited for unclean election to be enabled) or more than WITHIN after the loss (an event the lines
    do not show): not known; one whose new leader was not registered then waited for its return."""
    at_once, told = 0, set()
    for e in g.elected:
        if g.lost is None or e.leader is None:
            return None, None
        failed = [d for d in down.get(g.lost, []) if d.down <= e.at]
        if not failed:
            return None, None
        loss = max(failed)  # the last loss of the lost leader the lines tell before the election
        told.add(loss.ref)
        live = not any(
            d.down <= loss.down and (d.up is None or d.up > loss.down) for d in down.get(e.leader, [])
        )
        if live and (e.alone is not False or e.at - loss.down > WITHIN):  # else the lines miss events
            return None, None
        at_once += live * e.partitions
    return (at_once, min(told)) if told else (None, None)
