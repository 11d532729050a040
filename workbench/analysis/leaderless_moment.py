"""partition.offline where ZooKeeper's history is absent, as one moment shows it (the leaderless analysis's
third part): the partitions ZooKeeper's tree at the capture shows without a live leader, and those a
pasted kafka-topics --describe shows without one at its moment. Plain Python over the facts
`leaderless.facts` collects."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from workbench.analysis.contract import CRITICAL
from workbench.analysis.findings import (
    Coverage,
    Finding,
    bounds,
    duration,
    file_ref,
    hex_zxid,
    moment,
    taken,
    tp_list,
)
from workbench.model.described import DESCRIBE, Shown
from workbench.model.history.counts import FROM_TREE, OfflineNow
from workbench.model.refs import zk_ref

if TYPE_CHECKING:
    from workbench.analysis.leaderless import Facts


def at_capture(f: Facts, coverage: Coverage) -> list[Finding]:
    """partition.offline from ZooKeeper's tree at the capture, grouped by the leader it names, leaving out
    the partitions the controller's lines already tell unserved when they end (their finding says it)."""
    if f.now is None:
        return []
    if f.now.queued:
        coverage.add(
            "leaderless",
            used=[
                f"{FROM_TREE}: {f.now.queued} partition(s) of topics queued for deletion without a live "
                "leader then, left to the deletion's finding (whether the controller had begun deleting "
                "them, and so stopped counting them offline, the tree does not tell)"
            ],
        )
    told = {(t.topic, t.partition) for g in f.offline if g.lines is not None for t in g.lines.offline_now}
    told |= {(t.topic, t.partition) for g in f.not_acting for t in g.unled}
    groups: dict[int, list[OfflineNow]] = {}
    for o in f.now.partitions:
        if (o.tp.topic, o.tp.partition) not in told:
            groups.setdefault(o.leader, []).append(o)
    when = "at the capture, as ZooKeeper's tree holds it"
    if f.now.newest is not None:
        when = (
            f"in ZooKeeper's tree, taken after its newest write ({f.now.newest:%Y-%m-%d %H:%M:%S} ZooKeeper "
            "time: the bundle holds no capture time, so each time below is a lower bound)"
        )
    return [_offline_then(leader, xs, when) for leader, xs in sorted(groups.items())]


def _offline_then(leader: int, xs: list[OfflineNow], when: str) -> Finding:
    """One leader's partitions without a live leader in the tree (-1: none set)."""
    longest = max(xs, key=lambda o: (o.upper_ms or o.lower_ms, o.lower_ms))
    lower, upper = longest.lower_ms, longest.upper_ms
    subject: dict[str, Any] = {
        "partitions": len(xs),
        "zxid": hex_zxid(longest.state_mzxid),
        "broker": leader if leader >= 0 else None,
        "still": len(xs),
    }
    if lower or upper:  # bounded (from below only where `upper` is None)
        subject["outage_ms"] = [lower, lower if upper is None else upper]
    else:
        subject["began"] = "unknown"
    written = f"zxid {hex_zxid(longest.state_mzxid)}"
    if leader < 0:  # none of the ISR was live to elect (`offline_in_the_tree`, `last_isr_member_kept`)
        subject["offline_ms"] = lower  # counted since its leader's loss, before that write
        isr = ", ".join(map(str, sorted({b for o in xs for b in o.isr}))) or "none"
        how = (
            f"their state znodes hold leader -1 (no replica of their ISR, broker(s) {isr}, was live to "
            f"elect), the longest since at least its last write at {written}: nobody has served them for "
            f"at least {duration(lower)}. The controller elects a leader for them when a broker of their "
            "ISR registers again. Kafka's OfflinePartitionsCount counts them"
        )
    else:
        if upper is None:
            lasted = f"at least {duration(lower)}" if lower else "a time the tree does not bound"
        else:
            lasted = bounds(lower, upper) if lower else f"up to {duration(upper)}"
        how = (
            f"their state znodes name broker {leader} their leader, and broker {leader} is not registered in "
            "/brokers/ids: no controller had yet acted on its loss (it would have elected another leader or "
            "written -1). Its registration ended after the longest's state was last written "
            f"({written}) and by the last change to /brokers/ids, so nobody has served them for {lasted}. "
            "Kafka's OfflinePartitionsCount does not count them until a controller handles that loss"
        )
    return Finding(
        "partition.offline",
        CRITICAL,
        subject,
        f"{len(xs)} partition(s) ({tp_list(sorted(o.tp for o in xs))}) had no live leader {when}: {how}. No "
        "client can produce to or consume from them meanwhile.",
        tuple(
            zk_ref(f"/brokers/topics/{o.tp.topic}/partitions/{o.tp.partition}/state", o.state_mzxid)
            for o in sorted(xs, key=lambda o: o.tp)[:3]
        ),
    )


def pasted(shown: Shown | None, coverage: Coverage, check: str) -> list[Finding]:
    """partition.offline: the partitions a pasted describe shows with no leader, or with one not live."""
    if shown is None:
        return []
    out = []
    for g in shown.groups:
        brokers = ", ".join(map(str, g.brokers))
        how = (
            f"had no leader when kafka-topics --describe was {taken(g.taken_at)} (`Leader: none`)"
            if g.leader is None
            else f"had no live leader when kafka-topics --describe --unavailable-partitions was "
            f"{taken(g.taken_at)}: it printed leader {g.leader}, a broker not live then (TopicCommand "
            "lists a partition whose leader is not a live broker there)"
        )
        out.append(
            Finding(
                "partition.offline",
                CRITICAL,
                {"partitions": g.partitions, "taken_at": moment(g.taken_at)}
                | ({"broker": g.leader} if g.leader is not None else {}),
                f"{g.partitions} partition(s) ({tp_list(g.tps)}) {how}; their replicas are on broker(s) "
                f"{brokers}. A "
                "paste shows one moment: when they went offline and for how long is not known.",
                tuple(file_ref(g.file, line) for line in g.lines),
            )
        )
    if shown.described:
        coverage.add(check, used=[DESCRIBE])
    return out
