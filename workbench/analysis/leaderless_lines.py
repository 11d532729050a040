"""partition.offline where ZooKeeper's history is absent (the leaderless analysis's other half), over
time: the outages of the one service timeline (`service.outages`) made of the controller's lines that
began when they left a partition without a leader (each bounded where the controller could not reach the
leader lost: `model.channel.went_quiet`; those ZooKeeper's tree at the capture shows led again are not
still unserved). Those begun by a leader named that refused are `not_acting.py`'s, whichever source
names it; what one moment shows is in `leaderless_moment.py`. Plain Python over the facts
`leaderless.facts` collects."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, NamedTuple

from workbench.analysis.contract import CRITICAL, WARNING
from workbench.analysis.findings import (
    TP,
    Coverage,
    Finding,
    bounds,
    duration,
    moment,
    tp_list,
)
from workbench.model.channel import Quiet
from workbench.model.history.sessions import Expired
from workbench.model.outage import Outage, silence
from workbench.model.pauses import ELECTED_WITHIN_S
from workbench.model.tenures import TenureEnd, logged_outage

if TYPE_CHECKING:
    from workbench.analysis.leaderless import Facts

SHOWN = 500  # stretches without a leader read from the logs at most; coverage counts any beyond

# How a leader stopped leading, as a finding says it (its session's end: `session_ends`, `tenures`).
STOPPED = {
    "crash": "stopped without a shutdown (a crash, or a hang ended by a restart) and did no leader's work",
    # no line after: nothing says it ran again (session_ends' "crash" without the start that told it)
    "gone": "stopped without a shutdown and logged nothing after (a crash, or a hang it has not come back "
    "from) and did no leader's work",
    "hang": "stood still (a long GC pause, a stalled disk or VM) and did no leader's work",
    "halted": "halted for failed log dirs (at once, without a shutdown) and did no leader's work",
    "network_partition": "was cut off from ZooKeeper and its followers: nothing it accepted was replicated",
    "session_expiry": "lost its ZooKeeper session without a shutdown and did no leader's work",
    "unknown": "stopped without a shutdown and did no leader's work",
    "shutdown": "shut down and led them no more",
}


@dataclass(frozen=True)
class Leaderless:
    """An outage the controller's lines began by leaving a partition without a leader (`service.outages`
    of `partition_log.logged_changes`): from the first line saying so (leader -1, a failed election,
    OfflinePartition; None: its start is not in the lines, only the election that ended it, from
    OfflinePartition) to the next naming a leader (None: none did before the lines end), with the leader
    it had before (None: no line named one) and the one that line names, and whether that line's ISR is its
    leader alone (None: it prints no ISR)."""

    topic: str
    partition: int
    began: datetime | None
    began_ref: str | None
    ended: datetime | None
    ended_ref: str | None
    lost: int | None
    leader: int | None = None
    # the leader named refused the partition (its own line; its clock), and the partition was led again
    # (the controller's next line naming a leader that did not refuse; None: not before the lines end)
    refused: datetime | None = None
    refused_ref: str | None = None
    led_again: datetime | None = None
    led_again_ref: str | None = None
    alone: bool | None = None


def from_outages(rows: list[Any]) -> list[Leaderless]:
    """The outages `service.outages` makes of the controller's lines that began without a leader (its
    rows), as the lines' findings tell them; those begun by a leader that refused are `NotActing` groups
    (`not_acting.refusals`), as with ZooKeeper's history."""
    logged: list[Leaderless] = []
    for r in rows:
        led = r.ended_leader is not None and r.ended_leader >= 0
        end: tuple[datetime | None, str | None] = (r.ended, r.ended_ref) if led else (None, None)
        n = r.named
        if n is None or n.refused_by is None:  # the line naming a leader ended it
            isr, leader = r.ended_isr, r.ended_leader if end[0] is not None else None
            alone = None if isr is None or leader is None else list(isr) == [leader]
            logged.append(Leaderless(r.topic, r.partition, r.began if r.began_ref else None, r.began_ref,
                                     *end, r.before, leader, alone=alone))  # fmt: skip
            continue
        alone = None if n.isr is None else list(n.isr) == [n.leader]
        began = r.began if r.began_ref else None
        logged.append(Leaderless(r.topic, r.partition, began, r.began_ref, n.time, n.ref, r.before, n.leader,
                                 n.refused_at, n.refused_by, *end, alone))  # fmt: skip
    return logged


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


def logged(f: Facts, coverage: Coverage) -> list[Finding]:
    """partition.offline from the controller's lines: the stretches that began together (the same second,
    the same leader lost) as one finding, critical where a partition had no leader when the lines end.
    Those whose start the lines do not hold join the group their election ended at its start (one broker's
    failure: the controller takes all its partitions offline and elects at once, leaving -1 where no
    replica is left); the rest are grouped by the election that ended them."""
    groups: dict[tuple[datetime, int], list[Leaderless]] = {}
    unseen: dict[tuple[datetime, int], list[Leaderless]] = {}
    for x in f.logged:
        at = x.began or x.ended
        assert at is not None
        into = unseen if x.began is None else groups
        into.setdefault((at.replace(microsecond=0), -1 if x.lost is None else x.lost), []).append(x)
    out = []
    for (at, lost_id), xs in sorted({**unseen, **groups}.items(), key=lambda g: g[0]):
        lost = None if lost_id < 0 else lost_id
        at_once = unseen.get((at, lost_id), []) if (at, lost_id) in groups else []
        # the leader elected refused them; those within a refusal's outage are its own (`refused`)
        ran = [x for x in xs + at_once if x.refused is not None]
        if ran:
            out.append(_ran_on(ran, at, lost, f))
        opening = min(xs, key=lambda x: (x.began or at, x.began_ref or ""))  # the group's first line
        xs, at_once = [[x for x in g if x.refused is None] for g in (xs, at_once)]
        if not xs and not at_once:
            continue
        who = f" (their leader before was broker {lost})" if lost is not None else ""
        subject: dict[str, Any] = {"partitions": len(xs), "broker": lost}
        start = min(x.began or x.ended or at for x in xs + at_once)  # exact, on the controller's clock
        q, loss = f.quiet.get((lost_id, start)), _loss(f.lost, lost, start)
        if (at, lost_id) not in groups:
            subject["began"] = "unknown"
            said, refs, how = _silent(q, loss, lost, start, 0, subject)
            gone, gone_refs = _controller_gone(f.succeeded, lost, start, subject) if not said else ("", ())
            text = _led_with(xs, subject, CLOCKS if gone else how)
            text += "had no leader until the controller elected one "
            text += f"from OfflinePartition at {at:%Y-%m-%d %H:%M:%S} (its clock)"
            text += gone or who + (said or "; when they lost their leader is not in its lines")
            refs += gone_refs
            text += ". No client could produce to or consume from them meanwhile."
            if "outage_ms" in subject:  # a new controller's start takes them offline and elects them at once
                elected = f"at {at:%H:%M:%S} (the controller's clock)"
                handled = (len(xs), None) if gone else _handled(xs, f.down)
                text += kafka_counted(elected, handled[0], len(xs))
                refs += (handled[1],) if handled[1] and handled[1] not in refs else ()
                if handled[0] == len(xs):
                    subject["offline_ms"] = 0  # what Kafka's count held them for (the report's alert)
            first = min(xs, key=lambda x: x.ended_ref or "")
            out.append(Finding("partition.offline", WARNING, subject, text, (first.ended_ref or "", *refs)))
            continue
        first, xs = opening, xs + at_once
        ended = [x for x in xs if x.ended is not None]
        still = len(xs) - len(ended)
        longest = max((round((x.ended - at).total_seconds() * 1000) for x in ended if x.ended), default=0)
        subject.update(partitions=len(xs), began=moment(at), still=still)
        said, silent, how = _silent(q, loss, lost, start, longest if not still else None, subject)
        text = _led_with(xs, subject, how)
        text += f"had no leader from {at:%Y-%m-%d %H:%M:%S} "
        text += f"(the controller's clock){who}"
        if at_once:
            text += f"; {len(at_once)} of them got a new leader at once, from OfflinePartition"
        if ended:
            subject["offline_ms"] = longest
            text += f"; {'it' if len(xs) == 1 else len(ended)} got a leader again"
            text += f"{'' if len(xs) == 1 else ', the last'} after {duration(longest)}"
        if still:
            still_when(subject, f.lines_end)
            led_now = _led_now(xs, f, subject)
            which = "them" if still == len(xs) else f"{still} of them"
            text += f"; no later line of the controller's names a leader for {which}"
            text += f"{lines_ended(f.lines_end, f.ends)}{led_now}{_offline_now(xs, f)}"
        text += said + ". No client could produce to or consume from them meanwhile."
        if "outage_ms" in subject:
            elected = f"at {at + timedelta(milliseconds=longest):%H:%M:%S} (the controller's clock)"
            text += kafka_counted(elected, len(at_once), len(ended))
        # still without a live leader in ZooKeeper's tree at the capture: to the capture, not the lines' end
        bounded(subject, at, longest, still, f.ends, None if _offline_now(xs, f) else f.lines_end)
        refs = (first.began_ref or "", *sorted({x.ended_ref for x in ended if x.ended_ref})[:2], *silent)
        severity = CRITICAL if subject["still"] else WARNING
        out.append(Finding("partition.offline", severity, subject, text, tuple(refs)))
    if f.logged_total > len(f.logged):
        more = f.logged_total - len(f.logged)
        coverage.add(
            "leaderless", [f"{more} more stretches without a leader in the controller's lines, not read"]
        )
    return out


def _ran_on(ran: list[Leaderless], at: datetime, lost: int | None, f: Facts) -> Finding:
    """Partitions whose stretch without a leader ran on into a refusal: the broker elected as they came
    back refused the LeaderAndIsr and kept its old role (`refused_leader_and_isr_keeps_role`), so nobody
    served them until a broker logged leading them again: one episode, as with ZooKeeper's history."""
    by = sorted({x.leader for x in ran if x.leader is not None})
    again = [x for x in ran if x.led_again is not None]
    still = len(ran) - len(again)
    who = f" (their leader before was broker {lost})" if lost is not None else ""
    known = any(x.began is not None for x in ran)  # else `at` is the election that ended the stretch
    subject: dict[str, Any] = {"partitions": len(ran), "broker": lost, "still": still, "refused_by": by}
    subject["began"] = moment(at) if known else "unknown"
    if still:
        still_when(subject, f.lines_end)
    first = min(ran, key=lambda x: (x.refused or at, x.refused_ref or ""))
    since = f"from {at:%Y-%m-%d %H:%M:%S}" if known else f"from before {at:%Y-%m-%d %H:%M:%S}, when"
    since += " (the controller's clock)" if known else " the controller elected one from OfflinePartition"
    text = (
        f"{len(ran)} partition(s) ({tp_list(ran)}) had no working leader {since}{who}: broker(s) "
        f"{', '.join(map(str, by))}, elected their leader as they came "
        "back, refused the LeaderAndIsr for them (INCONSISTENT_TOPIC_ID: its log holds another topic id; "
        f"first at {first.refused:%H:%M:%S}, its clock) and kept their old role"
    )
    took = 0
    if again:
        last = max(again, key=lambda x: x.led_again or at)
        assert last.led_again is not None
        took = round((last.led_again - at).total_seconds() * 1000)
        text += f"; {len(again)} were led again, the last after about {duration(took)} (the brokers' clocks)"
    if still:
        which = "them" if still == len(ran) else f"{still} of them"
        text += f"; no broker's line says it has led {which} since{lines_ended(f.lines_end, f.ends)}"
    text += ". No client could produce to or consume from them meanwhile."
    # from the election that ended it, where its start is unknown
    bounded(subject, at, took, still, f.ends, f.lines_end)
    began = min((x for x in ran if x.began_ref), key=lambda x: x.began or at, default=None)
    refs = (
        *([began.began_ref] if began and began.began_ref else []),
        *([first.ended_ref] if first.ended_ref else []),
        first.refused_ref or "",
        *sorted({x.led_again_ref for x in again if x.led_again_ref})[:1],
    )
    return Finding("partition.offline", CRITICAL if still else WARNING, subject, text, tuple(refs))


def still_when(subject: dict[str, Any], lines_end: datetime | None) -> None:
    """A finding from the lines alone counts its partitions `still` as of the lines' end, not the capture:
    said in its subject (`lines_end`), so that no one reads it as what is down now (`nobody_serves`)."""
    if lines_end is not None:
        subject["lines_end"] = moment(lines_end)


def _led_now(xs: list[Leaderless], f: Facts, subject: dict[str, Any]) -> str:
    """Where ZooKeeper's tree at the capture names a registered leader for partitions the lines leave
    without one: they were led again by then (a controller elected one after the lines end, or in lines
    not held), so they are not still unserved (`still` less them, `led_at_capture`)."""
    again = sorted({TP(x.topic, x.partition) for x in xs if x.ended is None} & f.led_now.keys())
    if not again:
        return ""
    subject["still"] -= len(again)
    subject["led_at_capture"] = len(again)
    brokers = ", ".join(map(str, sorted({f.led_now[t] for t in again})))
    which = "them" if not subject["still"] else f"{len(again)} of them ({tp_list(again)})"
    return (
        f", but at the capture ZooKeeper's tree names a registered leader for {which} (broker(s) "
        f"{brokers}): a controller elected one after the lines end, or in lines the bundle does not hold"
    )


def _offline_now(xs: list[Leaderless], f: Facts) -> str:
    """Where ZooKeeper's tree at the capture still shows partitions the lines leave without a leader
    without a live one (`Facts.now`), so said: they were so at the capture."""
    offline = {p.tp for p in f.now.partitions} if f.now is not None else set()
    held = sorted({TP(x.topic, x.partition) for x in xs if x.ended is None} & offline)
    if not held:
        return ""
    return f", and at the capture ZooKeeper's tree shows {len(held)} of them still without a live leader"


def bounded(
    subject: dict[str, Any],
    at: datetime,
    longest: int,
    open_: int,
    ends: datetime | None,
    lines_end: datetime | None,
) -> None:
    """The outage's bounds (`outage_ms`) where no sign of life bounds it already: the longest stretch the
    lines time from `at`; or, with `open_` partitions the lines leave without a leader when they end, from
    `lines_end` (at least that long: nothing later tells; None where ZooKeeper's tree at the capture shows
    them still without a live one, `_offline_now`) to the evidence's end (the capture: at most that long,
    where it came later), as where the tree names a leader for them (`_led_now`). The report and triage say
    this number (`postmortem.longest_told`); nothing where the lines cannot time it."""
    if "outage_ms" in subject or (open_ and ends is None):
        return
    if not open_:
        if longest >= 0:
            subject["outage_ms"] = [longest, longest]
        return
    assert ends is not None
    last = min(lines_end, ends) if lines_end is not None else ends
    subject["outage_ms"] = [max(0, longest, _ms(last - at)), max(0, _ms(ends - at))]


def _ms(d: timedelta) -> int:
    return round(d.total_seconds() * 1000)


def lines_ended(lines_end: datetime | None, ends: datetime | None) -> str:
    """When the lines end, and the capture after it (`ends`, where it came later): what bounds how long
    partitions the lines leave without a leader went on so."""
    if lines_end is None or ends is None or lines_end >= ends:
        return f" (the evidence ends {ends:%Y-%m-%d %H:%M:%S})" if ends is not None else ""
    return f" (the lines end {lines_end:%Y-%m-%d %H:%M:%S}, the capture {ends:%H:%M:%S})"


# How a lines finding's opening reads its bounds (`_silent`): on one clock, on two brokers' clocks, or
# from below only
ONE_CLOCK, CLOCKS, AT_LEAST = "", "clocks", "at least"


def _led_with(xs: list[Leaderless], subject: dict[str, Any], how: str = ONE_CLOCK) -> str:
    """A finding's opening: the partitions, and where their outage is bounded (`outage_ms`, from their
    leader's last sign of life), how long they had no working leader, as the finding from ZooKeeper's
    history opens; then what the controller's lines show of it."""
    head = f"{len(xs)} partition(s) ({tp_list(xs)}) "
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
    ms = lambda said: round((at - said.ts).total_seconds() * 1000) + (after_ms or 0)  # noqa: E731
    if q is not None and lost is not None and q.halted and q.last_line is not None:
        if after_ms is not None:
            subject["outage_ms"] = [ms(q.last_line)] * 2  # the finding leads with it (`_led_with`)
        text = (
            f"; broker {lost} {STOPPED['halted']} from {q.last_line.ts:%H:%M:%S} (its clock: its last line)"
        )
        return text, (q.last_line.ref,), ONE_CLOCK
    if loss is not None and lost is not None and (q is None or not q.heard):
        return _counted_back(loss, q or Quiet(None, None), at, after_ms, subject)
    if q is None or lost is None or q.unreachable is None:
        return "", (), ONE_CLOCK  # a last line alone says the broker lived, not that it led them until then
    refs = tuple(x.ref for x in (q.unreachable, q.last_line) if x is not None)
    lower = ms(q.unreachable)
    upper = max(lower, ms(q.last_line)) if q.last_line is not None else None
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
    succeeded: list[Succeeded], lost: int | None, at: datetime, subject: dict[str, Any]
) -> tuple[str, tuple[str, ...]]:
    """Where the leader lost was the controller the new one (the broker electing at `at`) took over from
    within ELECTED_WITHIN_S before, and the lines tell how its tenure ended: the partitions had no working
    leader from its last sign of life (`tenures.logged_outage`, to this election instead of the new
    controller's readiness), on the two brokers' clocks."""
    for s in succeeded:
        if lost is None or s.ended.broker != lost or not s.elected <= at <= s.elected + WITHIN:
            continue
        o = logged_outage(s.ended, s.elected, at)
        if o is None:
            continue
        subject["outage_ms"] = [o.lower_ms, o.upper_ms]
        detail = o.detail()
        text = f"; broker {lost}, their leader, was the controller before broker {s.by} (elected at "
        text += f"{s.elected:%H:%M:%S}, its clock) and {STOPPED.get(s.ended.how, STOPPED['unknown'])}"
        text += f" from then{': ' + detail if detail else ''}"
        return text, o.refs
    return "", ()


WITHIN = timedelta(seconds=ELECTED_WITHIN_S)


def _handled(xs: list[Leaderless], down: dict[int, list[Down]]) -> tuple[int | None, str | None]:
    """Of `xs`, elected from OfflinePartition with no line of their going offline, how many the event in
    which the controller handled their leader's loss elected, and the line that tells that loss (its
    "Broker failure callback"); (None, None) where that is not known of every one. That event takes them
    offline and elects every one it can (onReplicasBecomeOffline, `offline_count_set_after_each_event`):
    one whose new leader was registered then was elected in it, unless elected alone in its ISR (it may
    have waited for unclean election to be enabled) or more than WITHIN after the loss (an event the lines
    do not show): not known; one whose new leader was not registered then waited for its return."""
    at_once, told = 0, set()
    for x in xs:
        if x.lost is None or x.ended is None or x.leader is None:
            return None, None
        failed = [d for d in down.get(x.lost, []) if d.down <= x.ended]
        if not failed:
            return None, None
        loss = max(failed)  # the last loss of the lost leader the lines tell before the election
        told.add(loss.ref)
        live = not any(
            d.down <= loss.down and (d.up is None or d.up > loss.down) for d in down.get(x.leader, [])
        )
        if live and (x.alone is not False or x.ended - loss.down > WITHIN):  # else the lines miss events
            return None, None
        at_once += live
    return at_once, min(told)


def kafka_counted(elected: str, at_once: int | None = None, total: int = 0) -> str:
    """Where an outage is bounded from before a controller learned its leader was gone (its last sign of
    life, or ZooKeeper's end of its session), how Kafka's own count departs from it
    (`offline_count_set_after_each_event`): an SRE's alert on it saw a part at most. `elected`: when they
    were led again, and on which clock; `at_once`, of the `total` led again, those elected in the event
    in which the controller learned it (None: not known)."""
    gauge = " Kafka's OfflinePartitionsCount"
    sets = "the active controller sets it after each event it handles"
    if at_once is not None and at_once == total:
        return (
            f"{gauge} never counted them: {sets}, and the event in which a controller learned their leader "
            "was gone elected their new leaders."
        )
    text = f"{gauge} counted them for less{'' if at_once is not None else ', if at all'}: {sets}, so it "
    text += (
        f"counted them only from when a controller learned their leader was gone to their election {elected}"
    )
    if at_once is None:
        return text + ", and not where one event did both."
    if at_once:
        text += f", and never the {at_once} that event elected"
    return text + "."
