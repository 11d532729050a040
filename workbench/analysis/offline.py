"""partition.offline, one judge whichever source told it: a group of outages of the one service timeline
(`service.outages`) that began when partitions lost their leader, grouped in Spark by the txn that began
them (`leaderless._offline`) or, without ZooKeeper's history, by the controller's line
(`leaderless_lines.logged_groups`), worded here in one shape: how long nobody served them, from when
(and from which sign of their leader's end), how they got a leader again, those still without one, what
clients saw, and what Kafka's own OfflinePartitionsCount counted. Each source adds what only it knows: a
txn's gap and the topics queued for deletion from ZooKeeper's history; the lines' refs, their end and
what ZooKeeper's tree at the capture shows of those the lines leave without a leader."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, NamedTuple

from workbench.analysis.contract import CRITICAL, WARNING
from workbench.analysis.findings import TP, Finding, bounds, duration, hex_zxid, moment, tp_list, txn_ref
from workbench.analysis.lost_leader import (
    AT_LEAST,
    CLOCKS,
    Elected,
    controller_gone,
    handled,
    loss_of,
    silent,
)
from workbench.analysis.outage_told import STOPPED, bounded, kafka_counted, lines_ended, still_when
from workbench.model.outage import ms

if TYPE_CHECKING:
    from workbench.analysis.leaderless import Facts

CLIENTS = " No client could produce to or consume from them meanwhile."


class Went(NamedTuple):
    """A partition of a group and when it lost its leader (or, its start unknown, was elected)."""

    topic: str
    partition: int
    at: datetime


@dataclass(frozen=True)
class Lined:
    """What the controller's lines add to a group they tell (`leaderless_lines.logged_groups`):

    - `began_ref`: the first line of their going without a leader (None: no line holds a start; those
      with none were elected at once, from OfflinePartition: `Offline.at_once`); `ended_refs`: the first
      lines naming their new leaders; `last_led`: the last of those (ran on: the last line of a broker
      leading one again, `led_ref`); `elected`: where no start is known, each election;
    - of those the lines leave without a leader: `led_now`, how many ZooKeeper's tree at the capture names
      a registered leader for (the first `led_tps`, led by `led_by`), and `offline_now`, every one it
      shows without a live leader (of topics not queued for deletion);
    - `went`: where the leader lost stood still (`leaderless._not_moved`), every partition and when;
    - ran on: the first refusal (its broker's clock, its line) and the line that named that leader.
    """

    began_ref: str | None
    ended_refs: list[str] = field(default_factory=list)
    last_led: datetime | None = None
    elected: list[Elected] = field(default_factory=list)
    led_now: int = 0
    led_tps: list[TP] = field(default_factory=list)
    led_by: list[int] = field(default_factory=list)
    offline_now: list[TP] = field(default_factory=list)
    went: list[Went] = field(default_factory=list)
    first_refused: datetime | None = None
    refused_ref: str | None = None
    named_ref: str | None = None
    led_ref: str | None = None


@dataclass(frozen=True)
class Offline:
    """Outages that began when partitions lost their leader, grouped by what began them and their leader
    then (`leader`: its id, -1 where none was set, None where no line names one; `registered`: whether it
    was), or (`known_start` False) those already without one when the evidence first shows them: how many,
    the first by name, the longest stretch, how many still (at the capture; from the lines alone, as they
    end), when the first began. Named by the txns that began the group and ended its longest, or (`lines`)
    by the controller's lines.

    `refused`: how many ran on (the leader elected as they came back refused them: nobody served them
    until a broker led them again), by `refused_by`; `at_once`: of those led again, how many were elected
    in the event in which the controller learned their leader was gone (None: not known). From ZooKeeper's
    history alone: `across`, one outage across the gap the history read resumes after (`model.across_gap`);
    `queued`, those of topics queued for deletion whose deletion had not begun; `back`, those their leader
    took again as it registered anew, at the same leader epoch."""

    partitions: int
    tps: list[TP]
    longest_ms: int
    still: int
    began: datetime
    began_zxid: int | None
    ended_zxid: int | None
    leader: int | None = None
    registered: bool = False
    known_start: bool = True
    refused: int = 0
    refused_by: list[int] = field(default_factory=list)
    across: bool = False
    queued: int = 0
    back: int = 0
    at_once: int | None = 0
    lines: Lined | None = None


@dataclass
class _Said:
    """The parts of a group's one sentence, in order: how long, from when, how they got a leader again,
    those still without one; then what Kafka counted and what else the source adds."""

    subject: dict[str, Any]
    refs: tuple[str, ...]
    lasted: str = ""
    since: str = ""
    ended: str = ""
    still: str = ""
    kafka: str = ""
    more: str = ""


def offline_finding(g: Offline, f: Facts) -> Finding:
    """One group's finding: critical while a partition of it is still without a working leader."""
    s = _from_txns(g, f) if g.lines is None else _from_lines(g, g.lines, f)
    lasted = f" for {s.lasted}" if s.lasted else ""
    text = f"{g.partitions} partition(s) ({tp_list(g.tps)}) had no working leader{lasted}{s.since}"
    text += f"{s.ended}{s.still}.{CLIENTS}{s.kafka}{s.more}"
    severity = CRITICAL if s.subject.get("still") else WARNING
    return Finding("partition.offline", severity, s.subject, text, s.refs)


def _refusal(g: Offline, first: datetime | None = None) -> str:
    """How an outage ran on: the broker elected as they came back refused the LeaderAndIsr and kept its old
    role (`refused_leader_and_isr_keeps_role`)."""
    when = f"; first at {first:%H:%M:%S}, its clock" if first is not None else ""
    return (
        f"; then broker(s) {', '.join(map(str, g.refused_by))}, elected their leader as they came back, "
        "refused the LeaderAndIsr for them (INCONSISTENT_TOPIC_ID: its log holds another topic id"
        f"{when}) and kept their old role"
    )


def _refusal_counted(still: int) -> str:
    """What Kafka's metrics saw of an outage that ran on into a refusal: no metric counts a registered
    leader that will not lead."""
    quiet = "has been quiet since" if still else "stayed quiet until they were led again"
    return (
        " Kafka's OfflinePartitionsCount counted them at most until that election, and no Kafka metric "
        f"counts a leader that refuses: an alert on Kafka's metrics {quiet}."
    )


def _from_txns(g: Offline, f: Facts) -> _Said:
    """A group ZooKeeper's history tells: begun by the txn that ended its leader's registration (or left it
    without one), bounded from that leader's last sign of life where it went silent first (`f.silent`)."""
    assert g.began_zxid is not None
    zxid, at = hex_zxid(g.began_zxid), f"{g.began:%Y-%m-%d %H:%M:%S} ZooKeeper time"
    refs = tuple(txn_ref(z) for z in (g.began_zxid, g.ended_zxid) if z is not None)
    gone = "without a working leader" if g.refused else "offline"
    still = f"; {g.still} still {gone} at the capture" if g.still else ""
    subject: dict[str, Any] = {"partitions": g.partitions, "zxid": zxid}
    if not g.known_start:
        subject.update(began="unknown", still=g.still, outage_ms=[g.longest_ms, g.longest_ms])
        since = f" when {f.history_read} first shows their state ({at}), and so for up to "
        since += f"{duration(g.longest_ms)} from then; when that began is not known"
        return _Said(subject, refs, since=since, still=still)
    lost = g.leader is not None and g.leader >= 0 and not g.registered
    why = f"broker {g.leader}, their leader, was no longer registered" if lost else "no leader was set (-1)"
    # the longest's bounds, as every outage finding says them
    subject.update(broker=g.leader, still=g.still, outage_ms=[g.longest_ms, g.longest_ms])
    since = f" from zxid {zxid} ({at}), when {why}"
    s = _Said(subject, refs, f"up to {duration(g.longest_ms)}", since, still=still)
    led_again = g.partitions - g.still - g.back
    if g.refused:  # the same episode ran on: said once, with its whole length
        subject["refused_by"] = g.refused_by
        s.ended, s.kafka = _refusal(g), _refusal_counted(g.still)
    elif g.began_zxid in f.silent:  # the leader stopped working before ZooKeeper noticed
        o, cause = f.silent[g.began_zxid]
        said = o.detail()
        s.lasted = bounds(o.lower_ms, o.upper_ms)
        s.since = (
            f": broker {g.leader}, their leader, {STOPPED.get(cause, STOPPED['unknown'])} from then"
            f"{': ' + said if said else ''}; ZooKeeper kept its registration until zxid {zxid} ({at}), and "
            f"they had no live leader for up to {duration(g.longest_ms)} after that"
        )
        subject.update(outage_ms=[o.lower_ms, o.upper_ms], offline_ms=g.longest_ms)
        s.refs += o.refs
        if g.back:  # new_controller_takes_registrations_as_it_finds_them
            which = "They" if g.back == g.partitions else f"{g.back} of them"
            s.more += (
                f" {which} had broker {g.leader} as their leader again, at the same leader epoch, once it "
                "registered anew: no leader was elected for them, as the controller elected in its place "
                "found it registered when it read the live brokers, so only its session's end shows in "
                "ZooKeeper's partition states, and Kafka's OfflinePartitionsCount never counted them (no "
                "controller saw them offline)."
            )
    if not g.refused and lost and g.ended_zxid is not None and led_again:
        # ZooKeeper ended the leader's session before any controller learned it: Kafka's count saw less
        s.kafka = kafka_counted(f"(the longest's at zxid {hex_zxid(g.ended_zxid)})", g.at_once, led_again)
    never = g.at_once is not None and not g.still and not g.refused and g.back + g.at_once == g.partitions
    if never and (s.kafka or g.back):  # what Kafka's count held them for, as the lines' findings say it:
        subject["offline_ms"] = 0  # never, as the finding says (the report's alert, the next step)
    if g.queued:  # however the episode is told: Kafka's count leaves out only a deletion begun
        s.more += (  # (offline_count_leaves_out_deletions_started)
            f" {g.queued} of them belong to topic(s) queued for deletion whose deletion the controller had "
            "not begun, or held back as a new controller (a replica offline or a reassignment in progress): "
            "OfflinePartitionsCount counts them until it begins (the deletion's finding says what holds it)."
        )
    if g.across:
        subject["across"] = f.gap
        s.more += (
            f" The history has a gap within it (txns {f.gap} unreadable), but their state znodes were not "
            "written inside it, so no leader was elected for them there"
            + (", and no broker registered or left in it" if g.leader is not None and g.leader >= 0 else "")
            + ": one outage across it."
        )
    return s


def _from_lines(g: Offline, x: Lined, f: Facts) -> _Said:
    """A group the controller's lines tell: from its first line of their going without a leader (or, where
    no line holds it, the election that ended it), bounded from their leader's last sign of life where the
    lines tell it (`lost_leader`); those ZooKeeper's tree at the capture shows led again are not still."""
    if g.refused:
        return _ran_on(g, x, f)
    at, lost = g.began.replace(microsecond=0), g.leader
    who = f" (their leader before was broker {lost})" if lost is not None else ""
    subject: dict[str, Any] = {"partitions": g.partitions, "broker": lost}
    q = f.quiet.get((-1 if lost is None else lost, g.began))
    ended, still, longest = g.partitions - g.still, g.still, g.longest_ms
    if g.known_start:
        subject.update(began=moment(at), still=still)
    else:
        subject["began"], longest = "unknown", 0  # from the election that ended them
    led = x.last_led if g.known_start and x.last_led else g.began  # the last election
    # the bounds from their leader's last sign of life to it, if the lines tell it (`outage_ms`)
    after = None if still else ms(led - g.began)
    said, refs, how = silent(q, loss_of(f.lost, lost, g.began), lost, g.began, after, subject)
    gone = ""  # their leader was the controller before: its startup took them offline and elected them
    if not said and not still:
        gone, gone_refs = controller_gone(f.succeeded, lost, g.began, subject, led, longest)
        refs, how = refs + gone_refs, CLOCKS if gone else how
    sign = said or gone  # "; broker N ..."
    s = _Said(subject, refs)
    from_sign = "outage_ms" in subject  # from their leader's sign of life: the finding leads with it
    if from_sign:
        s.lasted = bounds(*subject["outage_ms"])
        s.lasted = f"at least {s.lasted}" if how == AT_LEAST else s.lasted
        s.lasted += " (the two brokers' clocks)" if how == CLOCKS else ""
    if not g.known_start:
        elected = f"from OfflinePartition at {at:%Y-%m-%d %H:%M:%S} (its clock)"
        s.since = f" until the controller elected one {elected}{who}"
        s.since += sign or "; when they lost their leader is not in its lines"
        if from_sign:  # a new controller's start takes them offline and elects them at once
            s.since = f": {sign[2:]}; the controller elected a leader {elected}"
            at_once, loss = (g.partitions, None) if gone else handled(lost, x.elected, f.down)
            s.kafka = kafka_counted(f"at {at:%H:%M:%S} (the controller's clock)", at_once, g.partitions)
            s.refs += (loss,) if loss and loss not in s.refs else ()
            if at_once == g.partitions:
                subject["offline_ms"] = 0  # what Kafka's count held them for (the report's alert)
        s.refs = (x.ended_refs[0], *s.refs)
        return s
    line = f"{at:%Y-%m-%d %H:%M:%S} (the controller's clock)"
    s.since = f" from {line}{who}{sign}"
    if from_sign:
        s.since = f": {sign[2:]}; the controller's lines show them without a leader from {line}"
    at_once = g.at_once or 0  # with no line of their going: elected at once, from OfflinePartition
    if at_once:
        s.ended += f"; {at_once} of them got a new leader at once, from OfflinePartition"
    if ended:
        subject["offline_ms"] = 0 if gone else longest  # what Kafka's count held them for
        s.ended += f"; {'it' if g.partitions == 1 else ended} got a leader again"
        if from_sign or still:  # else the finding leads with it
            s.ended += f"{'' if g.partitions == 1 else ', the last'} after {duration(longest)}"
    if still:
        still_when(subject, f.lines_end)
        which = "them" if still == g.partitions else f"{still} of them"
        s.still = f"; no later line of the controller's names a leader for {which}"
        s.still += f"{lines_ended(f.lines_end, f.ends)}{_led_now(x, subject)}{_offline_now(x)}"
    if from_sign:
        elected = f"at {led:%H:%M:%S} (the controller's clock)"
        s.kafka = kafka_counted(elected, ended if gone else at_once, ended)
    # still without a live leader in ZooKeeper's tree at the capture: to the capture, not the lines' end
    bounded(subject, g.began, longest, still, f.ends, None if x.offline_now else f.lines_end)
    if not from_sign and "outage_ms" in subject:
        lower, upper = subject["outage_ms"]
        s.lasted = bounds(lower, upper) if still else f"up to {duration(upper)}"
    s.refs = (x.began_ref or "", *x.ended_refs, *refs)
    return s


def _ran_on(g: Offline, x: Lined, f: Facts) -> _Said:
    """Partitions whose stretch without a leader ran on into a refusal: nobody served them until a broker
    logged leading them again, one episode, as with ZooKeeper's history."""
    at, lost, still = g.began.replace(microsecond=0), g.leader, g.still
    who = f" (their leader before was broker {lost})" if lost is not None else ""
    subject: dict[str, Any] = {"partitions": g.partitions, "broker": lost, "still": still}
    subject.update(refused_by=g.refused_by, began=moment(at) if g.known_start else "unknown")
    if still:
        still_when(subject, f.lines_end)
    led_again = g.partitions - still
    took = ms(x.last_led - g.began) if led_again and x.last_led is not None else 0
    bounded(subject, g.began, took, still, f.ends, f.lines_end)
    s = _Said(subject, ())
    # where the lines hold only the election that ended the stretch (`at`), not its start, at least as
    # long as from then
    if "outage_ms" in subject:
        lower, upper = subject["outage_ms"]
        s.lasted = bounds(lower, upper) if g.known_start else f"at least {duration(lower)}"
    s.since = f" from {at:%Y-%m-%d %H:%M:%S} (the controller's clock){who}"
    if not g.known_start:
        s.since = f" from before {at:%Y-%m-%d %H:%M:%S}, when the controller elected one from "
        s.since += f"OfflinePartition{who}"
    s.ended = _refusal(g, x.first_refused or at)
    if led_again:
        s.ended += f"; {led_again} were led again, the last after about {duration(took)} (the brokers' "
        s.ended += "clocks)"
    if still:
        which = "them" if still == g.partitions else f"{still} of them"
        s.still = f"; no broker's line says it has led {which} since{lines_ended(f.lines_end, f.ends)}"
    s.kafka = _refusal_counted(still)
    s.refs = (*[r for r in (x.began_ref, x.named_ref) if r], x.refused_ref or "")
    s.refs += (x.led_ref,) if x.led_ref else ()
    return s


def _led_now(x: Lined, subject: dict[str, Any]) -> str:
    """Where ZooKeeper's tree at the capture names a registered leader for partitions the lines leave
    without one: they were led again by then (a controller elected one after the lines end, or in lines
    not held), so they are not still unserved (`still` less them, `led_at_capture`)."""
    if not x.led_now:
        return ""
    again = x.led_now
    subject["still"] -= again
    subject["led_at_capture"] = again
    brokers = ", ".join(map(str, x.led_by))
    which = "them" if not subject["still"] else f"{again} of them ({tp_list(x.led_tps)})"
    return (
        f", but at the capture ZooKeeper's tree names a registered leader for {which} (broker(s) "
        f"{brokers}): a controller elected one after the lines end, or in lines the bundle does not hold"
    )


def _offline_now(x: Lined) -> str:
    """Where ZooKeeper's tree at the capture still shows partitions the lines leave without a leader
    without a live one, so said: they were so at the capture."""
    if not x.offline_now:
        return ""
    n = len(x.offline_now)
    return f", and at the capture ZooKeeper's tree shows {n} of them still without a live leader"
