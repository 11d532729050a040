"""The derived views every analysis shares, built once per bundle: what evidence there is, brokers and
their ZooKeeper sessions, topics and partitions as ZooKeeper holds them, and the replicas on disk.

Each view is a DataFrame (nothing is collected here but small sets: broker ids, configs). The session
view answers "whose write was this?": a session that registered `/brokers/ids/N` is broker N's, so a
write by a session that is no broker's came from an outside tool (kafka-topics.sh --zookeeper, CMAK, ...).
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable, Hashable
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar, cast

from pyspark.sql import Column, DataFrame, Row
from pyspark.sql import functions as F

from workbench.kafka import behaviour
from workbench.kafka.znode_frames import partitions_in, topics_in
from workbench.kafka.znodes import BROKER_IDS, BROKER_PATH, DELETE_MARKER_PATH, STATE_PATH, TOPIC_PATH
from workbench.model.evidence import Held, evidence_of
from workbench.model.history_gaps import Gap, history_gaps, unchanged_children, unchanged_znodes
from workbench.model.reads import read
from workbench.once import lock_for, once
from workbench.spark import kept, small_evidence
from workbench.together import Ask, together
from workbench.zookeeper import txns as zk_ops

if TYPE_CHECKING:
    from workbench.frames import Bundle

WATCHED_PATHS = "|".join(f"({p})" for p in (STATE_PATH, TOPIC_PATH, DELETE_MARKER_PATH, BROKER_PATH))
UNWRITTEN_PATHS = "|".join(f"({p})" for p in (STATE_PATH, TOPIC_PATH, DELETE_MARKER_PATH))
CREATES = tuple(zk_ops.OP_NAMES[t] for t in zk_ops.CREATES)  # as znode_history names the ops
DELETES = tuple(zk_ops.OP_NAMES[t] for t in zk_ops.DELETES)
T = TypeVar("T")


class Watched(NamedTuple):
    """`views.watched_history`: the txns, the tree as of zxid `before_zxid` (None: zxid 0, empty), and
    whether either holds a deletion marker (asked in the pass that keeps them: a bundle without one asks
    nothing of deletions)."""

    txns: DataFrame
    before: DataFrame | None
    before_zxid: int
    marked: bool = False


def _registered(znodes: DataFrame) -> DataFrame:
    """Registration znodes (path, data, ephemeral_owner, czxid, ctime) as registrations."""
    return znodes.select(
        "path",
        F.col("ephemeral_owner").alias("session_id"),
        "czxid",
        F.col("ctime").alias("registered"),
        F.from_json("data", "rack string")["rack"].alias("rack"),
    )


def _by_broker(regs: DataFrame) -> DataFrame:
    """Registrations in the columns `views.registrations` gives, the broker id read from the path."""
    return regs.select(
        F.regexp_extract("path", BROKER_PATH, 1).try_cast("int").alias("broker_id"),
        "rack", "session_id", "czxid", "registered", "ended_zxid", "ended",
    )  # fmt: skip


def session_of(hex_text: Column) -> Column:
    """'0x1000118eb9b0001' as ZooKeeper's session id (a long), as znode_history holds it."""
    return F.conv(F.regexp_replace(hex_text, "^0[xX]", ""), 16, 10).cast("long")


# What the bundle holds and how it is planned: read by any code, not views of the cluster (`reads`).
NOT_VIEWS = frozenset({"bundle", "small", "evidence", "memo", "history_read"})


class ClusterViews:
    """The bundle seen as a cluster. Built once per bundle (`views(bundle)`), shared by every analysis;
    an analysis reads those it declares (`reads.reading`)."""

    def __init__(self, bundle: Bundle, small: bool = False) -> None:
        self.bundle = bundle
        self.small = small  # planned as small evidence (`spark.planned_for`)
        self._memo: dict[Hashable, Any] = {}

    def __getattribute__(self, name: str) -> Any:
        if name.startswith("_") or name in NOT_VIEWS:
            return object.__getattribute__(self, name)
        with read(name):
            return object.__getattribute__(self, name)

    def memo(self, key: Hashable, make: Callable[[], T], name: str | None = None) -> T:
        """What an analysis derives once per bundle and others reuse (the health series per bucket, the
        brokers' clock skews): made on first use, kept with the views; `name` is the view it is."""
        with read(name):
            if key not in self._memo:
                with lock_for(self, ("memo", key)):
                    if key not in self._memo:
                        self._memo[key] = make()
            return cast(T, self._memo[key])

    # -- what evidence there is --------------------------------------------------------------------
    @once
    def evidence(self) -> Held:
        return evidence_of(self.bundle.evidence)

    @once
    def topic_ids_expected(self) -> bool | None:
        """Whether the brokers use topic ids (Kafka 2.8+, KIP-516): from the manifest's version, else
        from the evidence (a partition.metadata file or a topic_id in ZooKeeper); None when unknown."""
        v = behaviour.parse(self.evidence.kafka_version)
        if v is not None:
            return v >= (2, 8)
        seen = self.bundle.partition_metadata.limit(1).count() > 0
        seen = seen or self.topics.where(F.col("topic_id").isNotNull()).limit(1).count() > 0
        return True if seen else None

    # -- ZooKeeper state ---------------------------------------------------------------------------
    @once
    def topics(self) -> DataFrame:
        """`/brokers/topics/<t>` now (`topics_in`)."""
        return topics_in(self.bundle.znodes)

    @once
    def partitions(self) -> DataFrame:
        """Every partition now (`partitions_in`)."""
        return partitions_in(self.bundle.znodes)

    @once
    def _at_a_glance(self) -> tuple[set[int], Row | None]:
        """`live_brokers` and `history_span`, asked together: nearly every analysis needs both."""
        registered = Ask(
            self.bundle.znodes.where(F.col("path").rlike(BROKER_PATH)).select(
                F.regexp_extract("path", BROKER_PATH, 1).try_cast("int").alias("b")
            ),
            lambda rs: {r.b for r in rs},
        )
        span = Ask(
            self.history.agg(
                F.min("zxid").alias("first"), F.min("time").alias("began"), F.max("time").alias("ended")
            )
            if self.evidence.zk_history
            else None,
            lambda rs: rs[0] if rs and rs[0].first is not None else None,
        )
        got = together(registered, span)
        return got[registered], got[span]

    @property
    def live_brokers(self) -> set[int]:
        """Brokers registered in `/brokers/ids` in the ZooKeeper state (empty without ZooKeeper state)."""
        return self._at_a_glance[0]

    @once
    def delete_markers(self) -> DataFrame:
        """Topics queued for deletion: `/admin/delete_topics/<t>` in the ZooKeeper state."""
        return self.bundle.znodes.where(F.col("path").rlike(DELETE_MARKER_PATH)).select(
            F.regexp_extract("path", DELETE_MARKER_PATH, 1).alias("topic"), "path", "czxid", "ctime"
        )

    @once
    def history_gaps(self) -> list[Gap]:
        """Zxids no readable txn log holds, oldest first (`history_gaps`); empty without txn logs."""
        return history_gaps(self.bundle, self.bundle.txn_log_damage) if self.evidence.zk_history else []

    @once
    def resumed_after(self) -> Gap | None:
        """The newest gap the history goes on after: the analyses read only what follows it."""
        return next((g for g in reversed(self.history_gaps) if g.before is not None), None)

    @property
    def history(self) -> DataFrame:
        """The txns the analyses read: every txn, or those after the newest gap (nothing inside or
        across a gap is inferred)."""
        gap = self.resumed_after
        h = self.bundle.znode_history
        return h if gap is None else h.where(F.col("zxid") >= F.lit(gap.before))

    @property
    def history_read(self) -> str:
        """The history the analyses read, named for a finding's text."""
        gap = self.resumed_after
        if gap is None or gap.before is None:
            return "the txn logs in the bundle"
        return f"the history read (from zxid {gap.before:#x}, after txns {gap.missing} that are unreadable)"

    @property
    def history_span(self) -> Row | None:
        """ZooKeeper's history at a glance, in one pass over its txn logs: first (zxid), began and ended
        (times of its first and last txns); None without txn logs."""
        return self._at_a_glance[1]

    @once
    def as_of_ms(self) -> int | None:
        """The moment the evidence describes: the capture's time, else ZooKeeper's newest txn (never the
        clock of the machine reading it)."""
        if self.evidence.captured_ms is not None or self.history_span is None:
            return self.evidence.captured_ms
        return int(self.history_span.ended.timestamp() * 1000)

    @once
    def span(self) -> tuple[datetime, datetime] | None:
        """The time the evidence covers, for a plot's axis (naive UTC): from ZooKeeper's first txn read
        (else the first log line) to the capture (else the last txn or log line); None with neither."""
        began, ended = self.history_span.began if self.history_span is not None else None, self.as_of_ms
        ms = [int(began.timestamp() * 1000) if began is not None else None, ended]
        if None in ms:
            logs = self.bundle.log_events.agg(F.min("ts").alias("began"), F.max("ts").alias("ended"))
            row = logs.collect()[0]
            seen = [int(t.timestamp() * 1000) if t is not None else None for t in (row.began, row.ended)]
            ms = [m if m is not None else s for m, s in zip(ms, seen, strict=True)]
        first, last = ms
        if first is None or last is None:
            return None
        return _naive_utc(first), _naive_utc(last)

    @once
    def partition_changes(self) -> DataFrame | None:
        """Each partition at every txn that changed it (`partition_history`), computed once (`kept`): the
        health series and the balance checks all read it. None without ZooKeeper's txn logs."""
        from workbench.model.partition_history import partition_changes

        return kept(partition_changes(self.bundle)) if self.history_span is not None else None

    # -- brokers and sessions ----------------------------------------------------------------------
    @once
    def history_base(self) -> tuple[int, bool]:
        """The zxid of the tree the history starts from, and whether that tree is known: the tree just
        before the first txn, known when the history starts with the server (a log named 1) or from a
        snapshot. When ZooKeeper purged the snapshots before it (as its autopurge does), the oldest
        snapshot, from which ZooKeeper itself would restore (fuzzy: the txns after it replay over it);
        after a gap, a snapshot that covers it. Without one the tree is unknown, never guessed from
        before a gap."""
        span = self.history_span
        first = span.first if span is not None else 1
        snapshots = sorted(f.zxid for f in self.bundle.evidence.zk_files if f.kind == "snapshot")
        gap = self.resumed_after
        if gap is not None and gap.before is not None:
            snapshots = [s for s in snapshots if s >= gap.before - 1]
        if snapshots and snapshots[0] > first - 1:
            return snapshots[0], True
        return first - 1, first <= 1 or bool(snapshots)

    @once
    def registrations_carried(self) -> DataFrame | None:
        """After a gap over a tree not known, the registrations (`/brokers/ids/N`) the history had when it
        stopped before the gap, where ZooKeeper's counts prove the gap made and ended none
        (`unchanged_children`); else None."""
        gap = self.resumed_after
        if gap is None or self.history_base[1]:
            return None
        return unchanged_children(self.bundle, gap, BROKER_IDS)

    @once
    def znodes_carried(self) -> DataFrame | None:
        """After a gap over a tree not known, what of that tree is carried across it: the registrations
        (`registrations_carried`), and the partitions' states, topics and deletion markers the gap did not
        write (`unchanged_znodes`); None where nothing is proven."""
        gap = self.resumed_after
        if gap is None or self.history_base[1]:
            return None
        left = unchanged_znodes(self.bundle, gap, UNWRITTEN_PATHS)
        proven = [f for f in (self.registrations_carried, left) if f is not None]
        return functools.reduce(DataFrame.unionByName, proven) if proven else None

    @property
    def brokers_known(self) -> bool:
        """Whether the brokers registered at each txn of the history read are known: over a known tree,
        or after a gap that made and ended no registration."""
        return self.history_base[1] or self.registrations_carried is not None

    @once
    def watched_history(self) -> Watched | None:
        """The txns on partitions' state, topics, deletion markers and broker registrations (and every
        session closing), and those paths in the tree the history starts from: read once
        (`kept`). None without txn logs."""
        span = self.history_span
        if span is None:
            return None
        watched = F.col("path").rlike(WATCHED_PATHS)
        txns = kept(
            self.history.where(F.col("applied") & (watched | (F.col("op") == "closeSession"))).select(
                "zxid", "time", "op", "path", "data", "session_id"
            )
        )
        marked = _any_marker(txns)  # one decode of the txn logs, rather than one per concurrent reader
        at, known = self.history_base
        if at <= 0:
            return Watched(txns, None, 0, marked)
        carried = self.znodes_carried
        unknown = carried if carried is not None else self.bundle.znodes.limit(0)
        tree = self.bundle.znodes_at(at)[0] if known else unknown
        before = kept(tree.where(watched).select("path", "data", "czxid", "ctime", "ephemeral_owner"))
        return Watched(txns, before, at, _any_marker(before) or marked)

    @once
    def registrations(self) -> DataFrame:
        """Every registration of a broker (`/brokers/ids/N`, ephemeral): broker_id, rack, session_id, czxid
        (the broker epoch), registered (time) and when it ended (ended_zxid, ended: its session closed or
        its znode deleted; null while it lasts), from ZooKeeper's history and the tree before it, plus the
        registrations alive in the ZooKeeper state."""
        alive = _registered(self.bundle.znodes.where(F.col("path").rlike(BROKER_PATH)))
        not_ended = [
            F.lit(None).cast("long").alias("ended_zxid"),
            F.lit(None).cast("timestamp").alias("ended"),
        ]
        if self.watched_history is None:
            return kept(_by_broker(alive.select("*", *not_ended)))
        h, base, *_ = self.watched_history
        # KafkaZkClient.registerBroker creates the znode empty and sets its data in the same multi txn.
        written = h.where(F.col("op").isin(*CREATES, "setData") & F.col("path").rlike(BROKER_PATH))
        created = _registered(
            written.groupBy("path", F.col("zxid").alias("czxid"))
            .agg(
                F.max(F.when(F.col("op") != "setData", F.col("session_id"))).alias("ephemeral_owner"),
                F.min("time").alias("ctime"),
                F.max_by("data", F.col("op") == "setData").alias("data"),
            )
            .where(F.col("ephemeral_owner").isNotNull())
        )
        if base is not None:  # those alive in the tree before, unless the history saw them made
            alive_before = _registered(base.where(F.col("path").rlike(BROKER_PATH)))
            created = created.unionByName(alive_before.join(created.select("czxid"), "czxid", "left_anti"))
        # Either ends it: its session closing, or its znode deleted; one key joins both.
        enders = h.where(
            (F.col("op") == "closeSession") | (F.col("op").isin(*DELETES) & F.col("path").rlike(BROKER_PATH))
        ).select(
            F.when(F.col("op") == "closeSession", F.concat(F.lit("session "), F.col("session_id")))
            .otherwise(F.col("path"))
            .alias("key"),
            F.struct(F.col("zxid").alias("ended_zxid"), F.col("time").alias("ended")).alias("end"),
        )
        keys = F.array("path", F.concat(F.lit("session "), F.col("session_id")))
        ended = (
            created.select("*", F.explode(keys).alias("key"))
            .join(enders, "key", "left")
            .groupBy("path", "session_id", "czxid", "registered", "rack")
            .agg(F.min(F.when(F.col("end.ended_zxid") > F.col("czxid"), F.col("end"))).alias("e"))
            .select("path", "session_id", "czxid", "registered", "rack", "e.ended_zxid", "e.ended")
        )
        still = alive.join(ended.select("czxid"), "czxid", "left_anti").select("*", *not_ended)
        return kept(_by_broker(ended.unionByName(still)))

    @once
    def sessions(self) -> DataFrame:
        """ZooKeeper session -> the broker that owns it: the session that registered `/brokers/ids/N`
        (or, in a broker's own log, the session its ZooKeeper client established). `how` is the evidence.
        A session absent here is no broker's."""
        registered = self.registrations.select(
            "session_id",
            "broker_id",
            F.concat(F.lit("registered /brokers/ids/"), F.col("broker_id")).alias("how"),
        )
        logs = self.bundle.cluster_events.where(F.col("event") == "zk.session_established").select(
            session_of(F.col("attrs")["session"]).alias("session_id"),
            "broker_id",
            F.concat(F.lit("established in "), F.col("file")).alias("how"),
        )
        both = registered.unionByName(logs).where(
            F.col("session_id").isNotNull() & F.col("broker_id").isNotNull()
        )
        return kept(both.groupBy("session_id", "broker_id").agg(F.min("how").alias("how")))

    # -- data dirs ---------------------------------------------------------------------------------
    @once
    def replicas(self) -> DataFrame:
        """Every partition dir on every broker: broker_id, log_dir, dir_name, topic, partition, dir_state
        (live, delete, future, stray) and the topic id its partition.metadata holds (null without one)."""
        dirs = (
            self.bundle.datadir_files.where(F.col("dir_name").isNotNull())
            .groupBy("broker_id", "log_dir", "dir_name", "topic", "partition", "dir_state")
            .agg(F.max("mtime").alias("newest_mtime"))
        )
        meta = self.bundle.partition_metadata.select(
            "broker_id",
            "log_dir",
            "dir_name",
            F.col("topic_id").alias("disk_topic_id"),
            F.col("file").alias("metadata_file"),
        )
        return dirs.join(meta, ["broker_id", "log_dir", "dir_name"], "left")

    @once
    def listed_whole(self) -> frozenset[int]:
        """Brokers whose every log dir was listed whole (listing.tsv, or a pasted ls, find or du of the
        dir), so that a partition dir missing from it is gone: `stat` shows only the files it was given."""
        dirs = self.bundle.evidence.log_dirs
        pasted_only = [d for d in dirs if d.listing is None]
        if not pasted_only:
            return self.evidence.with_datadirs
        shown = {
            (r.broker_id, r.log_dir)
            for r in self.bundle.datadir_files.where(F.col("listed_as").isin("ls -l", "find -ls", "du"))
            .select("broker_id", "log_dir")
            .distinct()
            .collect()
        }
        partial = {d.broker_id for d in pasted_only if (d.broker_id, d.name) not in shown}
        return frozenset(self.evidence.with_datadirs - partial)


_VIEWS: weakref.WeakKeyDictionary[Bundle, ClusterViews] = weakref.WeakKeyDictionary()


def _any_marker(znodes: DataFrame) -> bool:
    """Whether any of `znodes` (kept, and made by this pass over them) is a deletion marker."""
    marker = F.col("path").rlike(DELETE_MARKER_PATH).cast("int")
    return bool(znodes.agg(F.coalesce(F.max(marker), F.lit(0)).alias("m")).first()[0])  # type: ignore[index]


def _naive_utc(ms: int) -> datetime:
    """Milliseconds since the epoch as the naive UTC datetime a plot's axis takes."""
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc).replace(tzinfo=None)


def views(bundle: Bundle) -> ClusterViews:
    """The bundle's views, made on first use and kept while the bundle lives (or until `release`)."""
    with lock_for(bundle, "views"):
        if bundle not in _VIEWS:
            _VIEWS[bundle] = ClusterViews(bundle, small_evidence(bundle.evidence.size_bytes()))
        return _VIEWS[bundle]


def forget(bundle: Bundle) -> None:
    """Let go of a bundle's views and what they keep: Spark's context cleaner frees their checkpoints once
    the JVM collects them (`Bundle.release` frees the bundle's own cached frames too)."""
    _VIEWS.pop(bundle, None)


def release(bundle: Bundle) -> None:
    """Let go of a bundle's views, its cached frames, and of every other cached frame in the session."""
    bundle.release()
    bundle.spark.catalog.clearCache()
