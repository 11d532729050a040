"""Which topics' deletions the controller had begun (its `topicsWithDeletionStarted`), from ZooKeeper's
history: the one deletion state Kafka's OfflinePartitionsCount leaves out from 2.3 (before 2.3 it left out
every topic queued). A topic only queued keeps being counted: its partitions may be offline or
under-replicated and serve clients all the same.

Kafka's rules (facts `offline_count_leaves_out_deletions_started`, `deletion_starts_when_eligible`): a
queued topic's deletion starts when the controller finds it eligible, that is at its queueing (a
reassignment in progress does not hold it there: processTopicDeletion marks a topic ineligible before
queueing it, which marks only topics already queued); at a new controller's start unless one of its
replicas is on a broker not registered or a reassignment of it is in progress; and later when a broker
holding one of its replicas registers or a reassignment of one of its partitions completes (both resume it
whatever else holds it). It stays started, halted or not, until the topic is deleted or the controller's
tenure ends (a new controller starts with none; one that begins it again at once is not told apart).
The txns read are few (markers, the znodes of topics ever marked, `/admin/reassign_partitions`,
`/controller`, registrations): Spark collects them, this module reasons.

Where the history starts from a tree holding a marker, the controller then in office is taken to have
started the deletion at its queueing, as it does.

The txn that makes the controller begin (or hold) a deletion orders it; the controller acts on it within
its event queue's delay, which ZooKeeper does not show. Its own line times it where the logs hold it
("Deletion of topic T (re)started", 2.5+; "Topic deletion callback for T" before; "Initializing manager
with ... initial ineligible deletions" for a new controller's holds), on ZooKeeper's clock (`skew`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from pyspark.sql import Column, DataFrame, Row
from pyspark.sql import functions as F

from workbench.kafka import behaviour
from workbench.kafka.znode_frames import REASSIGN_ZNODE, TOPIC_ZNODE
from workbench.kafka.znodes import CONTROLLER, DELETE_MARKER_PATH, REASSIGN_PARTITIONS, TOPIC_PATH
from workbench.model.deletion_steps import topics_of
from workbench.model.skew import skew_ms
from workbench.model.views import CREATES, DELETES, views
from workbench.together import Ask, Joined, rows, together

if TYPE_CHECKING:
    from workbench.frames import Bundle

# What a change is of, in the order the rule reads changes of one txn (a multi's ops).
MARKER, TOPIC, REASSIGN, CONTROLLER_ELECTED, BROKER = "marker", "topic", "reassign", "controller", "broker"


@dataclass(frozen=True)
class Change:
    """One change the rule reads: a deletion marker created or deleted (`present`), a topic znode written
    or deleted (its `replicas`, and `moving`: its partitions being reassigned), `/admin/reassign_partitions`
    written or deleted (`moving`: the partitions it names), a controller elected, a broker's registration
    beginning or ending (`present`)."""

    zxid: int
    time: datetime | None
    what: str
    topic: str | None = None
    present: bool = True
    broker: int | None = None
    replicas: frozenset[int] = frozenset()
    moving: frozenset[tuple[str, int]] = frozenset()


@dataclass(frozen=True)
class Said:
    """The controller's own lines, on ZooKeeper's clock: when it began each topic's deletion, and when a
    new controller held back the topics it found ineligible."""

    begun: dict[str, list[datetime]] = field(default_factory=dict)
    held: list[tuple[datetime, frozenset[str]]] = field(default_factory=list)

    def first(self, times: list[datetime], after: datetime | None) -> datetime | None:
        """The first of `times` from `after` (less the clock's slack) to a minute after it."""
        if after is None:
            return None
        lo, hi = after - SLACK, after + timedelta(minutes=1)
        return next((t for t in sorted(times) if lo <= t <= hi), None)


SLACK = timedelta(seconds=1)  # what is left of a broker's clock error once its skew is removed


@dataclass(frozen=True)
class Started:
    """A stretch a topic's deletion was under way for the controller (ended_zxid None: still at the end of
    the history)."""

    topic: str
    began_zxid: int  # the txn that made the controller begin it
    began: datetime | None  # when it did (its line's time, else that txn's)
    ended_zxid: int | None = None
    ended: datetime | None = None


def started(
    changes: Iterable[Change],
    base_zxid: int | None,
    version: str | None,
    enabled: bool = True,
    said: Said | None = None,
) -> list[Started]:
    """The stretches each topic's deletion was under way, from `changes` in zxid order; those at
    `base_zxid` or before describe the tree the history starts from. Before 2.3 a topic counts from its
    queueing to its marker's removal (OfflinePartitionsCount then left out every topic queued). With
    delete.topic.enable=false (`enabled` False) the controller removes the markers and begins none. The
    controller's lines (`said`) time a begin or a hold the txns order."""
    said = said or Said()
    if not enabled:
        return []
    queued_rule = behaviour.holds("offline_count_leaves_out_deletions_started", version) is False
    marked: set[str] = set()
    replicas: dict[str, frozenset[int]] = {}
    moving_in_topic: dict[str, frozenset[tuple[str, int]]] = {}
    moving_asked: frozenset[tuple[str, int]] = frozenset()
    live: set[int] = set()
    open_: dict[str, tuple[int, datetime | None]] = {}
    out: list[Started] = []

    def moving(topic: str) -> bool:
        return bool(moving_in_topic.get(topic)) or any(t == topic for t, _ in moving_asked)

    def begin(topic: str, c: Change) -> None:
        if topic in marked and topic not in open_:
            told = None if queued_rule else said.first(said.begun.get(topic, []), c.time)
            open_[topic] = (c.zxid, told or c.time)

    def end(topic: str, c: Change, held: bool = False) -> None:
        if topic in open_:
            zxid, time = open_.pop(topic)
            told = said.first([t for t, ts in said.held if topic in ts], c.time) if held else None
            out.append(Started(topic, zxid, time, c.zxid, told or c.time))

    for c in sorted(changes, key=lambda c: (c.zxid, _ORDER[c.what])):
        in_base = base_zxid is not None and c.zxid <= base_zxid
        if c.what == MARKER and c.topic is not None:
            if c.present:
                marked.add(c.topic)
                begin(c.topic, c)
            else:
                end(c.topic, c)
                marked.discard(c.topic)
        elif c.what == TOPIC and c.topic is not None:
            done = moving_in_topic.get(c.topic, frozenset()) - c.moving  # a reassignment completed
            moving_in_topic[c.topic] = c.moving
            replicas[c.topic] = c.replicas
            if not c.present:
                end(c.topic, c)
            elif done and not in_base and not queued_rule:
                begin(c.topic, c)
        elif c.what == REASSIGN:
            done = moving_asked - c.moving
            moving_asked = c.moving
            if not in_base and not queued_rule:
                for t in sorted({t for t, _ in done}):
                    begin(t, c)
        elif c.what == CONTROLLER_ELECTED and not queued_rule:
            for t in sorted(marked):  # the new controller begins those it finds eligible, the rest wait
                if moving(t) or not replicas.get(t, frozenset()) <= live:
                    end(t, c, held=True)
                else:
                    begin(t, c)
        elif c.what == BROKER and c.broker is not None:
            if not c.present:
                live.discard(c.broker)
                continue
            live.add(c.broker)
            if not in_base and not queued_rule:
                for t in sorted(marked):
                    if c.broker in replicas.get(t, frozenset()):
                        begin(t, c)
    out += [Started(t, zxid, time) for t, (zxid, time) in open_.items()]
    return sorted(out, key=lambda s: (s.topic, s.began_zxid))


# Within one txn: a registration before what the controller does on it, an election before the markers
# it reads, a marker's removal after the topic znode's (KafkaZkClient.deleteTopicZNode, then the marker).
_ORDER = {BROKER: 0, CONTROLLER_ELECTED: 1, REASSIGN: 2, TOPIC: 3, MARKER: 4}


def deletions_started(bundle: Bundle) -> DataFrame | None:
    """topic, zxid, time, started (True: the deletion began at `time`, False: it ended), `zxid` the last
    txn before that moment: the stretches of `started` as rows a partition's history joins; None without
    ZooKeeper's history or where no topic was ever marked for deletion. Made once per bundle."""
    return views(bundle).memo("deletions_started", lambda: _as_rows(bundle))


def _as_rows(bundle: Bundle) -> DataFrame | None:
    v = views(bundle)
    watched = v.watched_history
    if watched is None or not watched.marked:  # nothing was ever marked for deletion: nothing to ask
        return None
    # delete.topic.enable: true by default from 1.0 (KafkaConfig Defaults 0.11.0.2:182, 1.0.0:185)
    old = (behaviour.parse(v.evidence.kafka_version) or (1, 0)) < (1, 0)
    enabled = v.evidence.config("delete.topic.enable", "false" if old else "true")
    off = bool(enabled) and all(x.strip().lower() == "false" for x in enabled.values())
    asked, lines = changes(bundle), said(bundle)
    got = together(asked, lines)
    read = got[asked]
    if read is None:  # nothing was ever marked for deletion: no more questions
        return None
    found = started(read, watched.before_zxid, v.evidence.kafka_version, not off, got[lines])
    rows = [(s.topic, s.began_zxid, s.began, True) for s in found]
    rows += [(s.topic, s.ended_zxid, s.ended, False) for s in found if s.ended_zxid is not None]
    moments = bundle.spark.createDataFrame(rows, "topic string, after long, time timestamp, started boolean")
    # after the last txn before the moment (those of its millisecond follow its line), from the one that
    # made the controller act
    txns = v.history.select("zxid", F.col("time").alias("t"))
    m = moments.alias("m")
    return (
        m.join(txns, (F.col("zxid") >= F.col("m.after")) & (F.col("t") < F.col("m.time")), "left")
        .groupBy("m.topic", "m.after", "m.time", "m.started")
        .agg(F.max("zxid").alias("zxid"))
        .select("topic", F.coalesce("zxid", "after").alias("zxid"), "time", "started")
    )


def said(bundle: Bundle) -> Ask[Said]:
    """The controller's lines that time a deletion's begin and a new controller's holds, on ZooKeeper's
    clock where the broker's skew is known: a row per line."""
    skews = skew_ms(bundle)
    ev = bundle.cluster_events.where(
        F.col("event").isin(
            "deletion.topic_started", "deletion.topic_callback", "deletion.manager_initialized"
        )
    )
    topics = F.when(F.col("event") == "deletion.topic_started", F.array(F.col("topic"))).when(
        F.col("event") == "deletion.topic_callback", topics_of(F.col("attrs")["topics"])
    )
    lines = ev.select(  # a line per deletion begun and per controller
        "event",
        "broker_id",
        "ts",
        F.coalesce(topics, topics_of(F.col("attrs")["ineligible_topics"])).alias("topics"),
    )

    def read(rows: list[Row]) -> Said:
        out = Said()
        for r in rows:
            at = r.ts - timedelta(milliseconds=skews.get(r.broker_id, 0))
            if r.event == "deletion.manager_initialized":
                out.held.append((at, frozenset(r.topics or ())))
            else:
                for t in r.topics or ():
                    out.begun.setdefault(t, []).append(at)
        return out

    return Ask(lines, read)


def changes(bundle: Bundle) -> Ask[list[Change] | None]:
    """The few changes `started` reads, from ZooKeeper's history and the tree it starts from: every marker,
    every write of a topic ever marked, of /admin/reassign_partitions and /controller, and every
    registration (`views.registrations`); None where no marker was ever made."""
    v = views(bundle)
    watched = v.watched_history
    assert watched is not None
    _, base, at, _ = watched
    ops = v.history.where(F.col("applied") & F.col("op").isin(*CREATES, "setData", *DELETES)).select(
        "zxid", "time", "path", "data", F.col("op").isin(*DELETES).alias("gone")
    )
    if base is not None:
        ops = ops.unionByName(
            base.select(
                F.lit(at).cast("long").alias("zxid"),
                F.lit(None).cast("timestamp").alias("time"),
                "path",
                "data",
                F.lit(False).alias("gone"),
            )
        )
    marker = F.regexp_extract("path", DELETE_MARKER_PATH, 1)
    topic = F.regexp_extract("path", TOPIC_PATH, 1)
    ever_marked = ops.where(F.col("path").rlike(DELETE_MARKER_PATH)).select(marker.alias("t")).distinct()
    z = F.from_json("data", TOPIC_ZNODE)

    def moving_keys(m: Column) -> Column:
        return F.coalesce(
            F.map_keys(F.map_filter(m, lambda _, r: F.size(r) > 0)), F.array().cast("array<string>")
        )

    moving_in = F.array_union(moving_keys(z["adding_replicas"]), moving_keys(z["removing_replicas"]))
    asked = F.from_json("data", REASSIGN_ZNODE)["partitions"]
    kind = (
        F.when(F.col("path").rlike(DELETE_MARKER_PATH), F.lit(MARKER))
        .when(F.col("path").rlike(TOPIC_PATH), F.lit(TOPIC))
        .when(F.col("path") == REASSIGN_PARTITIONS, F.lit(REASSIGN))
        .when((F.col("path") == CONTROLLER) & ~F.col("gone"), F.lit(CONTROLLER_ELECTED))
    )
    found = (
        ops.withColumn("what", kind)
        .where(F.col("what").isNotNull())
        .join(ever_marked, F.col("t") == topic, "left")
        .where((F.col("what") != TOPIC) | F.col("t").isNotNull())
        .select(
            "zxid",
            "time",
            "what",
            F.when(F.col("what") == MARKER, marker).when(F.col("what") == TOPIC, topic).alias("topic"),
            (~F.col("gone")).alias("present"),
            F.when(
                ~F.col("gone") & (F.col("what") == TOPIC),
                F.array_distinct(F.flatten(F.map_values(z["partitions"]))),
            ).alias("replicas"),
            F.when(
                ~F.col("gone") & (F.col("what") == TOPIC),
                F.transform(moving_in, lambda p: F.struct(topic.alias("t"), p.cast("int").alias("p"))),
            )
            .when(
                ~F.col("gone") & (F.col("what") == REASSIGN),
                F.transform(asked, lambda r: F.struct(r["topic"].alias("t"), r["partition"].alias("p"))),
            )
            .alias("moving"),
        )
    )  # the markers, the marked topics' znodes, the reassignments and elections: a few rows
    registered = v.registrations.select("broker_id", "czxid", "registered", "ended_zxid", "ended")
    return Joined(_changes, rows(found), rows(registered))


def _changes(found: list[Row], registered: list[Row]) -> list[Change] | None:
    out = [
        Change(
            r.zxid,
            r.time,
            r.what,
            r.topic,
            r.present,
            replicas=frozenset(r.replicas or ()),
            moving=frozenset((m.t, m.p) for m in r.moving or ()),
        )
        for r in found
    ]
    if not any(c.what == MARKER for c in out):
        return None
    for r in registered:
        out.append(Change(r.czxid, r.registered, BROKER, broker=r.broker_id))
        if r.ended_zxid is not None:
            out.append(Change(r.ended_zxid, r.ended, BROKER, present=False, broker=r.broker_id))
    return out
