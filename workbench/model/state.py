"""The cluster as it was at one moment (`state_at`), and what changed between two moments (`diff`).

With ZooKeeper's txn logs the state is exact: ZooKeeper's tree as of a zxid (the newest snapshot holding no
later change, plus the txns after it replayed; `Bundle.znodes_at`), read as Kafka reads it. A time is turned
into the last txn at or before it, on the ZooKeeper leader's clock. Without the history, the captured tree
answers for the capture's moment; any other moment is rebuilt from the brokers' own logs, marked as such,
with what the logs cannot say left unknown.
"""

from __future__ import annotations

import numbers
import re
from collections.abc import Callable
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from workbench.kafka import znodes as paths
from workbench.kafka.zkdata_decode import ZkDataError, decode_controller, decode_controller_epoch
from workbench.kafka.znode_frames import partitions_in, reassignment_requested
from workbench.kafka.znodes import BROKER_PATH, DELETE_MARKER_PATH
from workbench.model.cluster_state import PARTITION_COLUMNS, ClusterState, StateDiff, diff
from workbench.model.deletion_log import deleting
from workbench.model.history import controllers
from workbench.model.history.brokers import listed_live
from workbench.model.history.partitions import printed_at
from workbench.model.partition_history import ORDER
from workbench.model.service import served
from workbench.model.views import views
from workbench.spark import kept
from workbench.together import rows, together

if TYPE_CHECKING:
    from workbench.frames import Bundle

__all__ = ["ClusterState", "StateDiff", "diff", "state_at"]


def state_at(bundle: Bundle, at: int | datetime | str | None = None) -> ClusterState:
    """The cluster as of a zxid (int), a time (datetime, or ISO text; UTC unless it says), or now (None:
    the newest state the bundle holds)."""
    if isinstance(at, numbers.Integral) and not isinstance(at, (int, bool)):
        at = int(at)  # a zxid from a pandas frame (numpy's int64)
    v = views(bundle)
    when = _as_time(at) if isinstance(at, (datetime, str)) else None
    if v.evidence.zk_history and at is not None:
        zxid, time = _last_txn(bundle, at if isinstance(at, int) else None, when)
        # kept: each question asked of the state would replay ZooKeeper's tree again
        state = _from_zookeeper(kept(bundle.znodes_at(zxid)[0]), _shown(at), zxid, time)
        changes = served(bundle)
        state.counted = None if changes is None else _counted_at(changes, zxid, when or time)
        hidden = _gaps_before(bundle, zxid)
        if hidden:  # replayed across txns nobody can read: not exact, and said why
            state.exact = False
            state.unknown = (*state.unknown, *(f"ZooKeeper's history: {g}" for g in hidden))
        return state
    if at is None and v.evidence.zk_state:
        return _from_zookeeper(bundle.znodes, _shown(at), None, None)
    if isinstance(at, int):
        raise ValueError(f"state at zxid {at:#x}: the bundle has no ZooKeeper txn logs; ask for a time")
    return _from_logs(bundle, when, _shown(at))


def _counted_at(changes: DataFrame, zxid: int | None, time: datetime | None) -> DataFrame:
    """topic, partition, counted_as: each partition's last change at or before `zxid` and `time` (a silent
    leader's begins between txns, `service.served`; a line's change has no zxid)."""
    upto = F.lit(True) if zxid is None else F.col("zxid") <= zxid
    if time is not None:
        upto &= F.col("time") <= F.lit(time)
    return (
        changes.where(upto)
        .groupBy("topic", "partition")
        .agg(F.max_by("counted_as", F.struct(*ORDER)).alias("counted_as"))
    )


def _gaps_before(bundle: Bundle, zxid: int) -> list[str]:
    """The gaps in ZooKeeper's history before `zxid` that no snapshot between them and it covers: the tree
    replayed to `zxid` lacks what they held."""
    snapshots = [f.zxid for f in bundle.evidence.zk_files if f.kind == "snapshot" and f.zxid <= zxid]
    return [
        g.describe()
        for g in views(bundle).history_gaps
        if (g.after or 0) < zxid and not any(g.before is not None and s >= g.before - 1 for s in snapshots)
    ]


def _as_time(at: datetime | str) -> datetime:
    try:
        t = at if isinstance(at, datetime) else datetime.fromisoformat(at.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(
            f"state at {at!r}: expected a zxid (an int) or an ISO time such as '2024-03-12 10:06:01.2' (UTC "
            "unless it says)"
        ) from None
    return t if t.tzinfo is not None else t.replace(tzinfo=timezone.utc)


def _shown(at: int | datetime | str | None) -> str:
    if at is None:
        return "newest"
    return f"zxid {at:#x}" if isinstance(at, int) else str(at)


def _last_txn(bundle: Bundle, zxid: int | None, when: datetime | None) -> tuple[int, datetime | None]:
    """The last txn at or before a zxid or a time: (its zxid, its time); (0, None) before the first."""
    h = bundle.znode_history
    h = h.where(F.col("zxid") <= zxid) if zxid is not None else h.where(F.col("time") <= F.lit(when))
    last = h.agg(F.max("zxid").alias("z"), F.max_by("time", "zxid").alias("t")).collect()[0]
    return (last.z, last.t) if last.z is not None else (0, None)


def _from_zookeeper(znodes: DataFrame, at: str, zxid: int | None, time: datetime | None) -> ClusterState:
    top = znodes.where(
        F.col("path").isin(paths.CONTROLLER, paths.CONTROLLER_EPOCH, paths.REASSIGN_PARTITIONS)
        | F.col("path").rlike(BROKER_PATH)
        | F.col("path").rlike(DELETE_MARKER_PATH)
    ).select("path", "data", "source")
    shown = rows(top)  # a few znodes per broker and per pending deletion
    # the newest state: as of the tree's newest change
    newest = rows(
        znodes.agg(F.max("mzxid").alias("z"), F.max_by("mtime", "mzxid").alias("t")) if zxid is None else None
    )
    got = together(shown, newest)
    top_rows = got[shown]
    data = {r.path: r.data for r in top_rows}
    if zxid is None:
        zxid, time = got[newest][0].z, got[newest][0].t
    partitions = partitions_in(znodes).select(*PARTITION_COLUMNS)
    source = top_rows[0].source if top_rows else "an empty tree"
    controller = data.get(paths.CONTROLLER)
    epoch = data.get(paths.CONTROLLER_EPOCH)
    return ClusterState(
        at=at,
        exact=True,
        source=f"ZooKeeper: {source}",
        zxid=zxid,
        time=time,
        controller=_decoded(decode_controller, controller, "brokerid"),
        controller_epoch=_decoded(decode_controller_epoch, epoch),
        live_brokers=tuple(
            sorted(int(r.path.rsplit("/", 1)[1]) for r in top_rows if _is(r.path, BROKER_PATH))
        ),
        delete_markers=tuple(
            sorted(r.path.rsplit("/", 1)[1] for r in top_rows if _is(r.path, DELETE_MARKER_PATH))
        ),
        partitions=partitions,
        reassignments=reassignments_in(partitions, znodes),
    )


def _is(path: str, pattern: str) -> bool:
    return re.match(pattern, path) is not None


def _decoded(decode: Callable[[bytes], Any], data: str | None, field: str | None = None) -> Any:
    """A znode's data as Kafka decodes it (kafka/zkdata_decode.py), or None where it is absent or
    unreadable: the state then says it does not know, rather than guessing."""
    if data is None:
        return None
    try:
        value = decode(data.encode("utf-8"))
    except ZkDataError:
        return None
    return getattr(value, field) if field else value


def reassignments_in(partitions: DataFrame, znodes: DataFrame) -> DataFrame:
    """Partitions being moved: adding or removing replicas in the topic znode (KIP-455, 2.4+), or listed
    in `/admin/reassign_partitions` (the request a controller has not yet taken up, or a pre-2.4 one);
    target: the requested replicas, else the replicas without those being removed."""
    moving = partitions.where((F.size("adding") > 0) | (F.size("removing") > 0))
    requested = reassignment_requested(znodes).withColumnRenamed("replicas", "requested")
    both = moving.join(requested, ["topic", "partition"], "full").join(
        partitions.select("topic", "partition", F.col("replicas").alias("now")),
        ["topic", "partition"],
        "left",
    )
    kept = F.filter(
        F.coalesce("replicas", "now"), lambda r: ~F.array_contains(F.coalesce("removing", F.array()), r)
    )
    return both.select(
        "topic",
        "partition",
        F.coalesce("replicas", "now").alias("replicas"),
        "adding",
        "removing",
        F.coalesce("requested", kept).alias("target"),
    )


def _from_logs(bundle: Bundle, when: datetime | None, at: str) -> ClusterState:
    """Rebuilt from the one history as the brokers' lines tell it up to `when` (None: all of them): the
    controller of the highest epoch elected (`controllers.controller_chain`: epochs order elections
    whatever the clocks say), the live brokers it last listed, the topics whose deletion started and
    did not complete (`deletion_log.deleting`), each partition's state as the lines print it
    (`partitions.printed_at`), and what each then adds to the counts as the service timeline reads the
    controller's lines (`service.served`: offline and without an acting leader as the leaderless findings
    count them). Assignments, topic ids and reassignments are not in the lines as state, so they stay
    unknown, and with them which partitions were under-replicated."""
    until = None if when is None else when.astimezone(timezone.utc).replace(tzinfo=None)  # as Spark's rows
    elected = [
        e
        for e in controllers.controller_chain(bundle)
        if e.epoch is not None and (until is None or e.time <= until)
    ]
    last = max(elected, key=lambda e: e.epoch or 0, default=None)
    controller = last.broker if last is not None else None
    undone = F.col("to_ts").isNull()
    if when is not None:  # begun by then, and not completed by then
        undone = (F.col("from_ts") <= F.lit(when)) & (undone | (F.col("to_ts") > F.lit(when)))
    pending = deleting(bundle).where(undone)
    markers = sorted({r.topic for r in pending.select("topic").distinct().collect()})
    printed = printed_at(bundle, when)
    changes = served(bundle)  # what the controller's lines left each partition, as the outages read it
    return ClusterState(
        at=at,
        exact=False,
        source="brokers' logs (clocks may differ)",
        zxid=None,
        time=when,
        controller=controller,
        controller_epoch=last.epoch if last is not None else None,
        live_brokers=listed_live(bundle, controller, when),
        delete_markers=tuple(markers),  # a topic deleted again after it was re-created counts
        partitions=printed.select(
            "topic",
            "partition",
            F.lit(None).cast("string").alias("topic_id"),
            F.lit(None).cast("array<int>").alias("replicas"),
            F.lit(None).cast("array<int>").alias("adding"),
            F.lit(None).cast("array<int>").alias("removing"),
            "leader",
            "leader_epoch",
            "isr",
        ),
        reassignments=bundle.spark.createDataFrame(
            [],
            "topic string, partition int, replicas array<int>, adding array<int>, removing array<int>, "
            "target array<int>",
        ),
        unknown=("assignments", "topic ids", "reassignments"),
        counted=None if changes is None else _counted_at(changes, None, when),
    )
