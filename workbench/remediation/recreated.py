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

from pyspark.sql import functions as F

from workbench.analysis.findings import ranges
from workbench.model.deletion_log import recreated as recreated_in_logs
from workbench.model.refs import file_ref
from workbench.model.topic_ids import znode_history
from workbench.model.views import views
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


def ids_of_deleted(writes: list[tuple[str, int, str, str | None]]) -> dict[str, tuple[frozenset[str], int]]:
    """Per topic, from its znode's writes in order (topic, zxid, change, topic_id): the ids its incarnations
    held before a deletion, and the zxid of the last deletion."""
    out: dict[str, tuple[frozenset[str], int]] = {}
    held: dict[str, set[str]] = {}
    for topic, zxid, change, topic_id in sorted(writes, key=lambda w: (w[0], w[1])):
        if change == "deleted":
            old = out.get(topic, (frozenset(), zxid))[0] | held.pop(topic, set())
            out[topic] = (frozenset(old), zxid)
        elif topic_id:
            held.setdefault(topic, set()).add(topic_id)
    return out


def recreated(bundle: Bundle, topics: list[str]) -> dict[str, Recreated]:
    """The `topics` the evidence shows deleted and created again: from ZooKeeper's history with the ids of
    what was deleted, else from the controllers' lines (ids not known)."""
    if not topics:
        return {}
    out: dict[str, Recreated] = {}
    ev = views(bundle).evidence
    if ev.zk_history:
        writes = [
            (r.topic, r.zxid, r.change, r.topic_id)
            for r in znode_history(bundle)
            .where(F.col("topic").isin(*topics))
            .select("topic", "zxid", "change", "topic_id")
            .collect()
        ]
        for topic, (old, zxid) in ids_of_deleted(writes).items():
            out[topic] = Recreated(topic, old, f"its znode deleted at zxid {hex_zxid(zxid)}")
    if ev.with_logs:
        for r in answer(recreated_in_logs(bundle, LIMIT)):
            if r.topic in topics and r.topic not in out:
                where = f"the controller's lines, {file_ref(r.created.file, r.created.line_no)}"
                out[r.topic] = Recreated(r.topic, None, where)
    return out


def left_out(bundle: Bundle, replicas: list[StaleReplica]) -> tuple[list[StaleReplica], list[str]]:
    """`replicas` less those of a topic deleted and created again that hold an earlier incarnation's id,
    and a sentence per such topic."""
    rec = recreated(bundle, sorted({r.topic for r in replicas}))
    old = [r for r in replicas if r.topic in rec and rec[r.topic].holds_old(r.disk_topic_id)]
    notes = [rec[t].note([r for r in old if r.topic == t]) for t in sorted({r.topic for r in old})]
    return [r for r in replicas if r not in old], notes
