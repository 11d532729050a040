"""From the brokers' lines alone, when the leader a group of partitions lost stopped working, and whether
Kafka counted them offline: its signs of life (the controller's failed sends, its last line, a halt, a
crash's session counted back from its loss, a controller's end its successor's startup acted on), each
setting the outage's bounds where it tells them, and the event that handled its loss (`handled`). Plain
Python over the leaderless analysis's facts; `leaderless_lines` words what they say."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, NamedTuple

from workbench.analysis.outage_told import STOPPED
from workbench.model.channel import Quiet
from workbench.model.history.sessions import Expired
from workbench.model.outage import Outage, epoch_ms, ms, silence
from workbench.model.pauses import ELECTED_WITHIN_S
from workbench.model.tenures import TenureEnd, logged_outage


class Elected(NamedTuple):
    """Of a group whose start the lines do not hold, the partitions one election line gave a leader:
    that leader, whether their ISR was it alone (None: the line prints no ISR), when, and how many."""

    leader: int | None
    alone: bool | None
    at: datetime
    partitions: int


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


# How a lines finding's opening reads its bounds (`silent`): on one clock, on two brokers' clocks, or
# from below only
ONE_CLOCK, CLOCKS, AT_LEAST = "", "clocks", "at least"


def silent(
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
    log holds no shutdown) went silent a session timeout before (`counted_back`). And how the opening reads
    the bounds (`offline._from_lines`)."""
    upto = lambda said: ms(at - said.ts) + (after_ms or 0)  # noqa: E731
    if q is not None and lost is not None and q.halted and q.last_line is not None:
        if after_ms is not None:
            subject["outage_ms"] = [upto(q.last_line)] * 2  # the finding leads with it
        text = (
            f"; broker {lost} {STOPPED['halted']} from {q.last_line.ts:%H:%M:%S} (its clock: its last line)"
        )
        return text, (q.last_line.ref,), ONE_CLOCK
    if loss is not None and lost is not None and (q is None or not q.heard):
        return counted_back(loss, q or Quiet(None, None), at, after_ms, subject)
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
    if after_ms is not None:  # the finding leads with it; no last line: a lower bound
        subject["outage_ms"] = [lower, upper if upper is not None else lower]
    return text, refs, CLOCKS if q.last_line is not None else AT_LEAST


def counted_back(
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
        epoch_ms(loss.at),
        timeout,
        None,
        epoch_ms(last.ts) if last is not None else None,
        epoch_ms(sent.ts) if sent is not None else None,
    )
    # its last line bounds it: its clock
    clocks = CLOCKS if last is not None and gone.earliest == epoch_ms(last.ts) else ONE_CLOCK
    end = epoch_ms(at) + (after_ms or 0)
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
        subject["outage_ms"] = [o.lower_ms, o.upper_ms]  # the finding leads with it
    how = "gone" if loss.ref is None else "crash"  # no start again in its log: nothing says it ran again
    return f"; broker {loss.broker} {STOPPED[how]} from then: {o.detail()}", o.refs, clocks


def loss_of(lost: list[Expired], broker: int | None, at: datetime) -> Expired | None:
    """The crash of `broker` a controller handled within ELECTED_WITHIN_S before `at` (its clock), where
    the session timeout is known (`history.sessions`: its log holds no shutdown)."""
    crashed = [e for e in lost if e.broker == broker and e.how == "crash" and e.timeout is not None]
    return max((e for e in crashed if e.at <= at <= e.at + WITHIN), key=lambda e: e.at, default=None)


def controller_gone(
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


def handled(
    lost: int | None, elected: list[Elected], down: dict[int, list[Down]]
) -> tuple[int | None, str | None]:
    """Of partitions elected from OfflinePartition (`elected`) with no line of their going offline, how many
    the event in which the controller handled the loss of their leader (`lost`) elected, and the line that
    tells that loss (its "Broker failure callback"); (None, None) where that is not known of every one.
    That event takes them
    offline and elects every one it can (onReplicasBecomeOffline, `offline_count_set_after_each_event`):
    one whose new leader was registered then was elected in it, unless elected alone in its ISR (it may
    have waited for unclean election to be enabled) or more than WITHIN after the loss (an event the lines
    do not show): not known; one whose new leader was not registered then waited for its return."""
    at_once, told = 0, set()
    for e in elected:
        if lost is None or e.leader is None:
            return None, None
        failed = [d for d in down.get(lost, []) if d.down <= e.at]
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
