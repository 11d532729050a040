"""A moment of the cluster as a value (`ClusterState`: what `model.state.state_at` answers, whatever it
read), its counts as the health series counts them, and what changed between two moments (`diff`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

# What every state's `partitions` holds, whatever it was read from.
PARTITION_COLUMNS = (
    "topic",
    "partition",
    "topic_id",
    "replicas",
    "adding",
    "removing",
    "leader",
    "leader_epoch",
    "isr",
)


@dataclass
class ClusterState:
    """The cluster at one moment. `exact`: read from ZooKeeper's tree; else rebuilt from the brokers'
    logs, whose clocks may disagree, with what they cannot say in `unknown`. Scalars are small and on the
    driver; `partitions` (one row per partition) and `reassignments` stay in Spark."""

    at: str  # the moment asked for, as given
    exact: bool
    source: str  # what the state was read from
    zxid: int | None  # the last txn applied (exact states; for a capture, its newest change)
    time: datetime | None  # that txn's time, or the time asked for (from logs)
    controller: int | None
    controller_epoch: int | None
    live_brokers: tuple[int, ...] | None
    delete_markers: tuple[str, ...] | None  # topics queued for deletion (`/admin/delete_topics/<t>`)
    partitions: DataFrame  # PARTITION_COLUMNS
    reassignments: DataFrame  # topic, partition, replicas, adding, removing, target
    unknown: tuple[str, ...] = field(default=())
    # Per partition, what it adds to the health counts at this moment (partition_history.counted_as), as
    # the service timeline reads ZooKeeper's history (the counts then are the health series' own) or the
    # controller's lines (the leaderless findings')
    counted: DataFrame | None = None

    def summary(self) -> dict[str, Any]:
        """The scalars and the partition counts a notebook or the CLI shows for one moment, counted as
        the health series counts them (as Kafka does: a deletion begun is not offline, nothing leaves the
        under-replicated count); without ZooKeeper's history and the controller's lines whether a leader
        acts is not known (None), nor whether a queued topic's deletion had begun: its partitions are left
        out of offline. Without the assignments, which partitions were under-replicated is not known
        (None)."""
        counts = self.partitions.agg(F.count("*").alias("partitions")).collect()[0].asDict()
        if self.counted is not None:
            counts.update(
                self.counted.agg(
                    *[
                        F.count_if(_counts_as(c)).alias(c)
                        for c in ("offline", "no_acting_leader", "under_replicated")
                    ]
                )
                .collect()[0]
                .asDict()
            )
        else:
            queued = F.col("topic").isin(*(self.delete_markers or ()))
            live = F.array(*[F.lit(b) for b in self.live_brokers or ()])
            registered = F.lit(True) if self.live_brokers is None else F.array_contains(live, F.col("leader"))
            offline = (F.col("leader") < 0) | ~registered
            adding = F.size(F.coalesce("adding", F.array()))
            counts.update(
                self.partitions.agg(
                    F.count_if(offline & ~queued).alias("offline"),
                    F.lit(None).cast("long").alias("no_acting_leader"),
                    F.count_if(~offline & (F.size("isr") < F.size("replicas") - adding)).alias(
                        "under_replicated"
                    ),
                )
                .collect()[0]
                .asDict()
            )
        if "assignments" in self.unknown:
            counts["under_replicated"] = None
        return {
            "at": self.at,
            "exact": self.exact,
            "source": self.source,
            "zxid": self.zxid,
            "time": self.time,
            "controller": self.controller,
            "controller_epoch": self.controller_epoch,
            "live_brokers": list(self.live_brokers) if self.live_brokers is not None else None,
            "delete_markers": list(self.delete_markers) if self.delete_markers is not None else None,
            "reassignments": self.reassignments.count(),
            **counts,
            "unknown": list(self.unknown),
        }


def _counts_as(count: str) -> Column:
    """Whether a partition's `counted_as` (partition_history) holds `count`."""
    return F.exists("counted_as", lambda x: x["count"] == F.lit(count))


@dataclass
class StateDiff:
    """What changed from `before` to `after`: scalars here, partitions in `partitions` (topic, partition,
    what, before, after), one row per changed field."""

    before: ClusterState
    after: ClusterState
    changes: dict[str, tuple[Any, Any]]
    partitions: DataFrame


def diff(before: ClusterState, after: ClusterState) -> StateDiff:
    """Scalars compared on the driver; partitions in Spark: a partition on one side only is one
    'exists' row, one on both a row per field that differs."""
    changes: dict[str, tuple[Any, Any]] = {}
    for name in ("controller", "controller_epoch", "live_brokers", "delete_markers"):
        old, new = getattr(before, name), getattr(after, name)
        if old != new:
            changes[name] = (old, new)
    fields = [c for c in PARTITION_COLUMNS if c not in ("topic", "partition")]
    a = before.partitions.select("topic", "partition", F.struct(*fields).alias("a"))
    b = after.partitions.select("topic", "partition", F.struct(*fields).alias("b"))

    def change(what: str, old: Column, new: Column) -> Column:
        return F.struct(
            F.lit(what).alias("what"), old.cast("string").alias("before"), new.cast("string").alias("after")
        )

    both = F.array(*[change(c, F.col("a")[c], F.col("b")[c]) for c in fields])
    one = F.array(change("exists", F.col("a").isNotNull(), F.col("b").isNotNull()))
    partitions = (
        a.join(b, ["topic", "partition"], "full")
        .select(
            "topic",
            "partition",
            F.explode(F.when(F.col("a").isNull() | F.col("b").isNull(), one).otherwise(both)).alias("c"),
        )
        .select("topic", "partition", "c.*")
        .where(~F.col("before").eqNullSafe(F.col("after")))
    )
    return StateDiff(before, after, changes, partitions)
