"""What the brokers do with the records a leader appends: its followers fetch them and keep up, or fall
behind (fenced, or their fetchers stalled) and are dropped from the ISR once replica.lag.time.max.ms has
passed; those that catch up rejoin it, and the high watermark is the least end offset of the ISR's
replicas (Partition.maybeShrinkIsr, maybeExpandIsr and maybeIncrementLeaderHW: `story.produce` drives it).
"""

from __future__ import annotations

from workbench.kafka import behaviour
from workbench.simulate import controller as ctl
from workbench.simulate import reassignment
from workbench.simulate.cluster import Broker, Cluster, Partition


def fetched(c: Cluster, p: Partition, leader: Broker) -> None:
    """After the leader appended: its followers fetch, fall behind or rejoin, and the high watermark
    moves."""
    lr = c.replica(leader, p)
    if leader.leading[p.tp] != p.leader_epoch:
        return  # leading at an older epoch: followers on the new one are fenced, its ISR writes too
    caught_up = [p.leader]
    for r in p.replicas:
        x = c.brokers[r]
        if r == p.leader or not x.alive or x.following.get(p.tp) != p.leader or p.tp in x.stuck_since:
            continue
        if x.stalled_since is not None:  # its fetchers stand still: it does not keep up
            continue
        if x.fetch_epoch.get(p.tp, p.leader_epoch) < p.leader_epoch:  # fenced: it awaits a
            x.stuck_since.setdefault(p.tp, c.now)  # LeaderAndIsr it refused
            continue
        if x.catching_up.get(p.tp, c.now) > c.now:  # still copying (a reassignment)
            continue
        x.catching_up.pop(p.tp, None)
        fr = c.replica(x, p)
        rolled(c, x, p, fr.grow(lr.log_end_offset, c.now))
        fr.caught_up_ms = c.now
        fr.copy_epochs(lr.epochs, c.now)  # learnt from the batches it fetched
        caught_up.append(r)
    lagging = [r for r in p.isr if r not in caught_up and c.brokers[r].alive]
    if lagging and all(
        c.now - _behind_since(c, c.brokers[r], p) >= c.replica_lag_time_max_ms for r in lagging
    ):
        shrink_isr(c, p, lagging, lr.log_end_offset)
    joining = [r for r in caught_up if r not in p.isr]
    if joining and ctl.alter_isr(c, p, [*p.isr, *joining]):
        reassignment.maybe_complete(c, p)
        if p.topic not in c.topics:  # its completion let a queued deletion finish
            return
    hw = min(c.replica(c.brokers[r], p).log_end_offset for r in p.isr)
    for r in p.isr:
        c.replica(c.brokers[r], p).high_watermark = hw


def _behind_since(c: Cluster, b: Broker, p: Partition) -> int:
    """Since when a follower has not kept up with its leader: fenced, or its fetchers stalled (now: it
    keeps up, or has nothing to fetch from yet)."""
    stalled = b.stalled_since if b.stalled_since is not None else c.now
    return b.stuck_since.get(p.tp, stalled)


def rolled(c: Cluster, b: Broker, p: Partition, offsets: list[int]) -> None:
    """The segments a replica's log rolled while it grew (Log.roll / LocalLog.roll)."""
    for offset in offsets:
        c.say(b.id, "log.segment_rolled", of=p.tp, offset=offset, ms=c.jitter(0, 4))


def shrink_isr(c: Cluster, p: Partition, out: list[int], leader_leo: int) -> None:
    """Partition.maybeShrinkIsr on the leader, then the ISR write (controller.alter_isr). From 3.6 its line
    prints when each dropped replica last caught up, on the leader's clock
    (`shrink_line_prints_last_caught_up`)."""
    new_isr = [r for r in p.isr if r not in out]
    hw = c.replica(c.brokers[p.leader], p).high_watermark
    since = behaviour.holds("shrink_line_prints_last_caught_up", c.version)
    skew = c.logs.skew_ms.get(p.leader, 0)
    dropped = {r: c.replica(c.brokers[r], p) for r in out}
    ends = " ".join(
        f"(brokerId: {r}, endOffset: {x.log_end_offset}"
        + (f", lastCaughtUpTimeMs: {x.caught_up_ms + skew})" if since else ")")
        for r, x in dropped.items()
    )
    c.say(
        p.leader,
        "isr.shrink",
        of=p.tp,
        from_isr=",".join(map(str, p.isr)),
        to_isr=",".join(map(str, new_isr)),
        high_watermark=hw,
        end_offset=leader_leo,
        out_of_sync=ends,
    )
    if behaviour.holds("shrink_line_prints_high_watermark", c.version):
        leader = p.leader
        for r, x in dropped.items():  # it held the high watermark: acks=all producers waited for it
            if x.log_end_offset == hw < leader_leo:
                c.truth["held_back"].append(
                    {"broker": r, "leader": leader, "topic": p.topic, "partition": p.partition}
                    | {"at_ms": c.now, "waited_ms": c.now - x.caught_up_ms}
                )
    if not ctl.alter_isr(c, p, new_isr):
        return
    for r in out:
        c.truth["isr_departures"].append(
            {
                "topic": p.topic,
                "partition": p.partition,
                "broker": r,
                "at_ms": c.now,
                "reason": "not fetching",
            }
        )
