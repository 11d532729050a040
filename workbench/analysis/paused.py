"""partition.leader_paused, and partition.offline for a pause ZooKeeper's session did not survive: the
leaders that stood still (`model.pauses`), with ZooKeeper's history or without, which no ZooKeeper state
shows. Plain Python, part of the leaderless analysis (`leaderless.judge`)."""

from __future__ import annotations

from typing import Any

from workbench.analysis.contract import WARNING
from workbench.analysis.findings import Finding, bounds, moment, tp_list
from workbench.model.pauses import Paused
from workbench.model.refs import Said


def paused_finding(p: Paused) -> Finding | None:
    """partition.leader_paused: a leader that stood still and ran on in its session; partition.offline: one
    whose session expired and that the next controller took back as live (`Paused.taken_back`); None
    where it led nothing then."""
    if not p.led:
        return None
    lower, upper = p.bounds_ms
    span = bounds(lower, upper)
    heard = f"{p.heard:%H:%M:%S.%f}"[:-3]
    if p.taken_back is not None:
        return _taken_back(p, p.taken_back, span, heard)
    text = (
        f"{len(p.led)} partition(s) ({tp_list(p.led)}) had no working leader for {span}: broker {p.broker}, "
        f"their leader then by {p.led_from}, stood still (its ZooKeeper client heard nothing from {heard} "
        f"until it ran again at {p.said.ts:%H:%M:%S}, its clock: a long GC pause, a stalled disk or a frozen "
        f"VM) and ran on in the same session (it reconnected at {p.resumed.ts:%H:%M:%S}, before ZooKeeper's "
        f"{p.timeout_ms} ms session timeout ran out). ZooKeeper kept its registration and leadership never "
        "moved, so neither OfflinePartitionsCount nor --unavailable-partitions showed it; their producers "
        f"and consumers waited or timed out. Find the pause in broker {p.broker}'s GC log or its host's "
        "(a stalled disk, a VM's stolen time) and remove its cause: a pause longer than the session timeout "
        "would have moved their leadership instead."
    )
    subject: dict[str, Any] = {
        "broker": p.broker,
        "partitions": len(p.led),
        "session": f"0x{p.session:x}",
        "outage_ms": [lower, upper],
    }
    return Finding("partition.leader_paused", WARNING, subject, text, (p.said.ref, p.resumed.ref))


def _taken_back(p: Paused, listed: Said, span: str, heard: str) -> Finding:
    """partition.offline from a pause ZooKeeper's session did not survive, whose broker the controller
    elected in its place took as live: its partitions' leadership never moved, so only its own lines tell
    that nobody served them while it stood still."""
    lower, upper = p.bounds_ms
    text = (
        f"{len(p.led)} partition(s) ({tp_list(p.led)}) had no working leader for {span}: broker {p.broker}, "
        f"their leader then by {p.led_from}, stood still (its ZooKeeper client heard nothing from {heard} "
        f"until it ran again at {p.said.ts:%H:%M:%S}, its clock: a long GC pause, a stalled disk or a frozen "
        f"VM) past its {p.timeout_ms} ms session timeout. ZooKeeper expired its session (its client learned "
        f"so at {p.resumed.ts:%H:%M:%S}) and it registered anew before the controller elected in its place "
        f"read the live brokers (that controller's list at {listed.ts:%H:%M:%S}, its clock, names broker "
        f"{p.broker}), so no leader was elected for them and it led them again as it ran: neither "
        "OfflinePartitionsCount nor a state change in the controller's lines shows it; their producers and "
        f"consumers waited or timed out meanwhile. Find the pause in broker {p.broker}'s GC log or its "
        "host's (a stalled disk, a VM's stolen time) and remove its cause."
    )
    subject: dict[str, Any] = {
        "partitions": len(p.led),
        "broker": p.broker,
        "began": moment(p.heard),
        "session": f"0x{p.session:x}",
        "still": 0,
        "outage_ms": [lower, upper],
    }
    return Finding("partition.offline", WARNING, subject, text, (p.said.ref, p.resumed.ref, listed.ref))
