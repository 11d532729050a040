"""The repair plan without ZooKeeper's state: which id is current, from what the evidence itself names.

A broker that refuses a LeaderAndIsr logs both ids: the one its log holds and the one in the request
(Partition.checkOrSetTopicId 2.8.2:455, ReplicaManager 3.6.2:1830), and the request's is the id the
controller read from ZooKeeper (fact `leader_and_isr_carries_the_controllers_topic_id`). Pasted
`kafka-topics --describe` output or a zkCli transcript prints the id itself. Where every such line names
one id for a topic, that id is taken as current and each replica on disk holding another is stale; where
they name several, which is current is unknown and the topic is left out, said so. The order of the steps
is not forecast (no partition states); each script's `--check` reads ZooKeeper when it is run and stops
where the id, the files or the assignment differ.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pyspark.sql import functions as F

from workbench.model.refs import file_ref
from workbench.model.topic_ids import printed_ids, refusals, replica_ids

if TYPE_CHECKING:
    from workbench.frames import Bundle
    from workbench.remediation.planner import StaleReplica


@dataclass(frozen=True)
class Named:
    """An id a line of the evidence names as a topic's current one, and where (`file:line`)."""

    topic: str
    topic_id: str
    where: str


@dataclass(frozen=True)
class OnDisk:
    """A replica's partition.metadata id, and whether its broker refused the controller's request for it
    (then the partition is assigned to it; otherwise the bundle cannot say)."""

    broker: int
    log_dir: str
    topic: str
    partition: int
    disk_topic_id: str
    refused: bool


def current_ids(named: list[Named]) -> tuple[dict[str, Named], list[str]]:
    """The one id the evidence names for each topic (the first line naming it), and a sentence for each
    topic named with more than one: which is current is unknown then."""
    by_topic: dict[str, dict[str, Named]] = {}
    for n in sorted(named, key=lambda n: (n.topic, n.where)):
        by_topic.setdefault(n.topic, {}).setdefault(n.topic_id, n)
    current = {t: next(iter(ids.values())) for t, ids in by_topic.items() if len(ids) == 1}
    gaps = [
        f"The evidence names {len(ids)} ids for {t} ("
        + "; ".join(f"{i} at {n.where}" for i, n in sorted(ids.items()))
        + "): which is current is unknown without ZooKeeper's /brokers/topics/"
        + f"{t}, so its replicas are not in this plan. Capture ZooKeeper and make the plan again."
        for t, ids in sorted(by_topic.items())
        if len(ids) > 1
    ]
    return current, gaps


def stale(on_disk: list[OnDisk], current: dict[str, Named]) -> list[StaleReplica]:
    """The replicas whose partition.metadata holds another id than the current one; `assigned` True where
    the broker refused the request for it, None where the bundle cannot say (the script checks it)."""
    from workbench.remediation.planner import StaleReplica

    return [
        StaleReplica(
            r.broker,
            r.log_dir,
            r.topic,
            r.partition,
            r.disk_topic_id,
            current[r.topic].topic_id,
            True if r.refused else None,
            None,
        )
        for r in sorted(on_disk, key=lambda r: (r.broker, r.topic, r.partition, r.log_dir))
        if r.topic in current and r.disk_topic_id != current[r.topic].topic_id
    ]


def facts(bundle: Bundle) -> tuple[list[Named], list[OnDisk]]:
    """The ids the brokers' refusals and the pastes name, and every replica's id on disk (three queries)."""
    named, refused = [], set()
    for r in refusals(bundle).where(F.col("topic").isNotNull()).collect():
        refused |= {(r.broker_id, r.topic, p) for p in r.partitions if p is not None}
        if r.request_topic_id:
            first = r.refs[0]
            named.append(
                Named(
                    r.topic,
                    r.request_topic_id,
                    f"broker {r.broker_id}'s refusal, {file_ref(first.file, first.line_no)}",
                )
            )
    for r in printed_ids(bundle).where(F.col("printed_id").isNotNull()).collect():
        named.append(Named(r.topic, r.printed_id, f"{r.how}, {file_ref(r.file, r.line_no)}"))
    topics = sorted({n.topic for n in named})
    disk = (
        replica_ids(bundle)
        .where(F.col("disk_topic_id").isNotNull() & F.col("topic").isin(*topics))
        .select("broker_id", "log_dir", "topic", "partition", "disk_topic_id")
        .collect()
        if topics
        else []
    )
    on_disk = [
        OnDisk(
            r.broker_id,
            r.log_dir,
            r.topic,
            r.partition,
            r.disk_topic_id,
            (r.broker_id, r.topic, r.partition) in refused,
        )
        for r in disk
    ]
    return named, on_disk
