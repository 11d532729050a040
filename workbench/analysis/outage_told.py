"""How the leaderless analysis's findings say an outage, whichever source told it and whichever judge
words it (`offline`, `not_acting`): how its leader stopped, its bounds where the lines end before the
capture, and what Kafka's own OfflinePartitionsCount saw of it."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from workbench.analysis.findings import moment
from workbench.model.outage import ms

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


def still_when(subject: dict[str, Any], lines_end: datetime | None) -> None:
    """A finding from the lines alone counts its partitions `still` as of the lines' end, not the capture:
    said in its subject (`lines_end`), so that no one reads it as what is down now (`nobody_serves`)."""
    if lines_end is not None:
        subject["lines_end"] = moment(lines_end)


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
    them still without a live one) to the evidence's end (the capture: at most that long, where it came
    later), as where the tree names a leader for them. The report and triage say this number
    (`postmortem.longest_told`); nothing where the lines cannot time it."""
    if "outage_ms" in subject or (open_ and ends is None):
        return
    if not open_:
        if longest >= 0:
            subject["outage_ms"] = [longest, longest]
        return
    assert ends is not None
    last = min(lines_end, ends) if lines_end is not None else ends
    subject["outage_ms"] = [max(0, longest, ms(last - at)), max(0, ms(ends - at))]


def lines_ended(lines_end: datetime | None, ends: datetime | None) -> str:
    """When the lines end, and the capture after it (`ends`, where it came later): what bounds how long
    partitions the lines leave without a leader went on so."""
    if lines_end is None or ends is None or lines_end >= ends:
        return f" (the evidence ends {ends:%Y-%m-%d %H:%M:%S})" if ends is not None else ""
    return f" (the lines end {lines_end:%Y-%m-%d %H:%M:%S}, the capture {ends:%H:%M:%S})"


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
