"""Topics' lives, from ZooKeeper and the controller's lines together.

- Re-created: ZooKeeper's delete of a topic's znode and its next create (with the ids the deleted
  incarnation held), and the controller's completion of a deletion followed by its "New topics" line
  naming the topic (`deletion_log.recreated`). One re-creation whichever tells it: a line's creation
  matches ZooKeeper's of the same topic within CLOCKS_APART_MS (the controller's clock against
  ZooKeeper's); what only the lines show (before the txn logs begin, inside a gap) is theirs alone.
- Deletions under way at the capture (`under_way`): ZooKeeper's markers where its tree was captured (what
  the controller itself reads); where it was not, the deletions the controller's lines show begun and not
  completed, and what pasted outputs show marked.
- The topic ids the cluster holds, against which the replicas' partition.metadata are checked
  (`ids_said`): ZooKeeper's topic znodes where its tree was captured, else what pasted outputs printed.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame, Row, Window
from pyspark.sql import functions as F

from workbench.kafka.znodes import TOPIC_PATH
from workbench.model import deletion_steps
from workbench.model.deletion_log import Recreated, Unfinished, recreated, unfinished
from workbench.model.deletion_steps import Marker
from workbench.model.described import Marked, marked_facts
from workbench.model.evidence import lacking
from workbench.model.history.sessions import CLOCKS_APART_MS
from workbench.model.refs import Said
from workbench.model.topic_ids import (
    Mismatch,
    Printed,
    ShownWithout,
    Znode,
    mismatches,
    printed_ids,
    printed_mismatches,
)
from workbench.model.views import views
from workbench.together import Ask, Joined, given

if TYPE_CHECKING:
    from workbench.frames import Bundle


@dataclass(frozen=True)
class Recreation:
    """A topic deleted and created again: ZooKeeper's delete and create of its znode (`deleted_zxid`,
    `created_zxid`) and the ids the deleted incarnation held (`old_ids`) where its history holds them;
    the controller's completion and "New topics" lines (`deleted`, `created`) where its log shows them.
    `at`: the creation, on ZooKeeper's clock where it holds it, else the controller's."""

    topic: str
    at: datetime
    deleted_zxid: int | None = None
    created_zxid: int | None = None
    old_ids: frozenset[str] = frozenset()
    deleted: Said | None = None
    created: Said | None = None


def recreations(bundle: Bundle, limit: int) -> Ask[list[Recreation]]:
    """Every re-creation the evidence shows (at most `limit` from the lines), by topic and time. Two
    queries, asked together."""
    return Joined(merged, Ask(_lives(bundle), _from_txns), recreated(bundle, limit))


def _lives(bundle: Bundle) -> DataFrame:
    """Per topic whose znode was deleted and incarnation (`life`: how many creates of its znode came before,
    in the history read): its create's zxid and time, its delete's zxid, and the topic ids its writes held.
    A topic never deleted has no row: the rows are as many as the deletions and what followed them."""
    h = views(bundle).history.where(
        F.col("applied") & F.col("path").rlike(TOPIC_PATH) & F.col("op").isin("create", "setData", "delete")
    )
    created = F.col("op") == "create"
    upto = Window.partitionBy("topic").orderBy("zxid").rowsBetween(Window.unboundedPreceding, 0)
    return (
        h.select(
            F.regexp_extract("path", TOPIC_PATH, 1).alias("topic"),
            "zxid",
            "time",
            "op",
            F.get_json_object("data", "$.topic_id").alias("topic_id"),
        )
        .withColumn("life", F.sum(F.when(created, 1).otherwise(0)).over(upto))
        .groupBy("topic", "life")
        .agg(
            F.min(F.when(created, F.col("zxid"))).alias("created_zxid"),
            F.min(F.when(created, F.col("time"))).alias("created_time"),
            F.max(F.when(F.col("op") == "delete", F.col("zxid"))).alias("deleted_zxid"),
            F.collect_set("topic_id").alias("ids"),
        )
        .withColumn("deleted", F.max("deleted_zxid").over(Window.partitionBy("topic")))
        .where(F.col("deleted").isNotNull())
    )  # one row per incarnation of a topic deleted


def _from_txns(lives: list[Row]) -> list[Recreation]:
    """Each incarnation that ended in a delete, followed by one its create began."""
    by_topic: dict[str, list[Row]] = {}
    for r in sorted(lives, key=lambda r: (r.topic, r.life)):
        by_topic.setdefault(r.topic, []).append(r)
    return [
        Recreation(
            topic,
            after.created_time,
            before.deleted_zxid,
            after.created_zxid,
            frozenset(before.ids),
        )
        for topic, rs in by_topic.items()
        for before, after in pairwise(rs)
        if before.deleted_zxid is not None and after.created_zxid is not None
    ]


def merged(txns: list[Recreation], lines: list[Recreated]) -> list[Recreation]:
    """ZooKeeper's re-creations, each given the controller's lines of the same topic that created it within
    CLOCKS_APART_MS (the nearest); the lines' other re-creations as they are."""
    out = list(txns)
    for r in lines:
        near = [
            (abs((t.at - r.created.ts).total_seconds()), i)
            for i, t in enumerate(out)
            if t.topic == r.topic and t.created is None and t.created_zxid is not None
        ]
        near = [(s, i) for s, i in near if s * 1000 <= CLOCKS_APART_MS]
        if near:
            i = min(near)[1]
            out[i] = dataclasses.replace(out[i], deleted=r.deleted, created=r.created)
        else:
            out.append(Recreation(r.topic, r.created.ts, deleted=r.deleted, created=r.created))
    return sorted(out, key=lambda r: (r.topic, r.at))


@dataclass(frozen=True)
class UnderWay:
    """The deletions under way at the capture, as the evidence tells them: ZooKeeper's markers (`markers`,
    the tree captured), else the deletions the controller's lines show begun and not completed by the time
    they end (`unfinished`, `ends`) and the topics pasted outputs show marked (`pasted`); `lacking`: the
    logs that would tell them and are absent."""

    markers: list[Marker] = dataclasses.field(default_factory=list)
    unfinished: list[Unfinished] = dataclasses.field(default_factory=list)
    pasted: list[Marked] = dataclasses.field(default_factory=list)
    ends: datetime | None = None
    lacking: list[str] = dataclasses.field(default_factory=list)


def under_way(bundle: Bundle, limit: int) -> Ask[UnderWay]:
    """The deletions under way (at most `limit` from the lines): one query, and the pastes' own where
    there are pastes and no tree."""
    v = views(bundle)
    if v.evidence.zk_state:
        return Joined(lambda markers: UnderWay(markers), deletion_steps.markers(bundle))
    pasted = marked_facts(bundle)
    ends = v.span[1] if v.span is not None else None
    absent = lacking(v.evidence, "controller", "each deletion's steps")
    return Joined(lambda begun: UnderWay([], begun, pasted, ends, absent), unfinished(bundle, limit))


def marked(bundle: Bundle) -> DataFrame | None:
    """The topics ZooKeeper's tree holds marked for deletion (topic, path, czxid, ctime); None where the
    tree was not captured."""
    v = views(bundle)
    return v.delete_markers if v.evidence.zk_state else None


@dataclass(frozen=True)
class IdsSaid:
    """The topic ids the cluster holds, against the replicas' partition.metadata: from ZooKeeper's tree, the
    replicas that disagree with it (`mismatches`), the znodes of their topics and of those without an id
    (`known`, `absent`); without the tree, from what pastes printed (`pasted`: the kinds of paste read,
    None where none was), the replicas that disagree with it (`printed`) and the topic znodes a pasted
    shell showed without an id (`shown_without`)."""

    mismatches: list[Mismatch] = dataclasses.field(default_factory=list)
    known: dict[str, Znode] = dataclasses.field(default_factory=dict)
    absent: list[Znode] = dataclasses.field(default_factory=list)
    pasted: list[str] | None = None
    printed: list[Mismatch] = dataclasses.field(default_factory=list)
    shown_without: list[ShownWithout] = dataclasses.field(default_factory=list)


def ids_said(bundle: Bundle) -> Ask[IdsSaid]:
    """The topic ids the cluster holds: from ZooKeeper's tree, three queries asked together; else from the
    pastes, their own jobs (there are pastes) or none."""
    v = views(bundle)
    if v.evidence.zk_state:
        found = mismatches(bundle)
        stale = Ask(
            found,
            lambda rs: [
                Mismatch(
                    r.topic, r.broker_id, r.disk_topic_id, r.zk_topic_id, list(r.partitions), list(r.files)
                )
                for r in rs
            ],
        )
        absent = Ask(v.topics.where(F.col("topic_id").isNull()), lambda rs: [_znode(t) for t in rs])
        known = Ask(  # the znodes of the topics whose replicas disagree with it
            v.topics.join(found.select("topic").distinct(), "topic", "left_semi"),
            lambda rs: {r.topic: _znode(r) for r in rs},
        )
        return Joined(lambda m, a, k: IdsSaid(m, k | {z.topic: z for z in a}, a), stale, absent, known)
    return given(_printed(bundle) if v.evidence.pasted else IdsSaid())


def _znode(r: Any) -> Znode:
    return Znode(r.topic, r.path, r.topic_id, r.znode_version, r.czxid, r.mzxid, r.data_version)


def _printed(bundle: Bundle) -> IdsSaid:
    """The ids pasted output printed: the replicas that disagree with them, and the topic znodes a pasted
    shell showed without `topic_id`."""
    printed = printed_ids(bundle).cache()
    pasted = sorted(r.source for r in printed.select("source").distinct().collect())
    disagree = [
        Mismatch(
            r.topic,
            r.broker_id,
            r.disk_topic_id,
            r.printed_id,
            list(r.partitions),
            list(r.files),
            Printed(r.how, r.file, r.line_no, r.taken_at),
        )
        for r in printed_mismatches(bundle).collect()
    ]
    without = [
        ShownWithout(
            r.topic, r.znode_version, r.mzxid, Printed(r.how, r.file, r.line_no, r.taken_at, r.command)
        )
        for r in printed.where(F.col("printed_id").isNull()).orderBy("topic").collect()
    ]
    printed.unpersist()
    return IdsSaid(pasted=pasted, printed=disagree, shown_without=without)
