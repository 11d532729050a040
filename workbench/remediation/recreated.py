"""Replicas a repair must not adopt: a topic deleted and created again while a broker was away leaves it a
log of the deleted topic, holding that topic's id. Removing its partition.metadata would make the broker
take the new id for the old records (KIP-516's ids exist to refuse exactly that), so the plan leaves such
replicas out and says what to do instead: their dir goes, its broker stopped, while the partition has a
leader elsewhere; a broker sent a LeaderAndIsr for a partition it has no log of creates one, empty, and
follows (Partition.makeFollower / createLogIfNotExists, 2.8.2:629-645, 3.6.2:792-824).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench.analysis.findings import ranges
from workbench.model.history.topics import Recreation, recreations
from workbench.together import answer
from workbench.zookeeper.txns import hex_zxid

if TYPE_CHECKING:
    from workbench.frames import Bundle
    from workbench.remediation.planner import StaleReplica

LIMIT = 200  # re-creations read from the controllers' lines


@dataclass(frozen=True)
class Recreated:
    """A topic deleted and created again: the ids its deleted incarnations held (None: the evidence does
    not say, so any id but the current one may be theirs) and where the evidence shows it."""

    topic: str
    old_ids: frozenset[str] | None
    where: str

    def holds_old(self, disk_id: str) -> bool:
        return self.old_ids is None or disk_id in self.old_ids

    def note(self, held: list[StaleReplica]) -> str:
        """Why `held` (this topic's replicas holding an earlier id) are left out, and what to do instead."""
        by_broker: dict[int, list[int]] = {}
        for r in held:
            by_broker.setdefault(r.broker, []).append(r.partition)
        where = "; ".join(f"broker {b}: {ranges(ps)}" for b, ps in sorted(by_broker.items()))
        return (
            f"{self.topic} was deleted and created again ({self.where}), and its replicas holding an earlier "
            f"id ({where}) {'may hold' if self.old_ids is None else 'hold'} the deleted topic's records, "
            "which removing partition.metadata would "
            "make their broker serve as the new topic's. Left out: with the broker stopped and the partition "
            "led by another broker, move the whole partition dir out of the log dir; the broker then "
            "creates the log empty and copies it from the leader."
        )


def recreated(bundle: Bundle, topics: list[str]) -> dict[str, Recreated]:
    """The `topics` the evidence shows deleted and created again (the history's `history/topics.py`): with
    the ids of what was deleted where ZooKeeper's history holds the deletions, else from the controllers'
    lines (ids not known)."""
    if not topics:
        return {}
    return told(answer(recreations(bundle, LIMIT)), topics)


def told(found: list[Recreation], topics: list[str]) -> dict[str, Recreated]:
    """Per topic of `topics`: the ids every deleted incarnation ZooKeeper's history holds had, and its last
    deletion; or where only the lines show one, its first."""
    out: dict[str, Recreated] = {}
    for topic in topics:
        mine = [r for r in found if r.topic == topic]
        txns = [r for r in mine if r.deleted_zxid is not None]
        if txns:
            old = frozenset().union(*(r.old_ids for r in txns))
            last = max(r.deleted_zxid for r in txns if r.deleted_zxid is not None)
            out[topic] = Recreated(topic, old, f"its znode deleted at zxid {hex_zxid(last)}")
        elif mine and mine[0].created is not None:
            out[topic] = Recreated(topic, None, f"the controller's lines, {mine[0].created.ref}")
    return out


def left_out(bundle: Bundle, replicas: list[StaleReplica]) -> tuple[list[StaleReplica], list[str]]:
    """`replicas` less those of a topic deleted and created again that hold an earlier incarnation's id,
    and a sentence per such topic."""
    rec = recreated(bundle, sorted({r.topic for r in replicas}))
    old = [r for r in replicas if r.topic in rec and rec[r.topic].holds_old(r.disk_topic_id)]
    notes = [rec[t].note([r for r in old if r.topic == t]) for t in sorted({r.topic for r in old})]
    return [r for r in replicas if r not in old], notes
