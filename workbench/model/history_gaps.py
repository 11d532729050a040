"""Gaps in ZooKeeper's history: zxids no readable txn log holds.

Within one epoch (a zxid's high 32 bits, one leader's term) ZooKeeper numbers txns one by one, and a new
epoch's first txn has counter 1 (Leader.lead sets the zxid to (epoch, 0); ZxidUtils, release-3.8.4). So
the zxids the logs hold show what is missing without knowing what it was: a counter that skips within an
epoch, an epoch that does not begin at 1 after another epoch, damage after the last txn read. Each gap
names the damage that explains it (file and byte offset) or says no log holds it.

Nothing inside a gap may be inferred. The analyses therefore read the history from the end of the newest
gap (`views.history`), over the tree ZooKeeper itself would restore there: a snapshot at or after the
gap, else none (an unknown tree, as for a history purged without its snapshots), but for what ZooKeeper's
own counts prove the gap left alone: the brokers' registrations where it made and ended none
(`unchanged_children`), and the znodes it did not write (`unchanged_znodes`).
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from pyspark.sql import Column, DataFrame, Row, Window
from pyspark.sql import functions as F

from workbench.together import rows, together
from workbench.zookeeper.txns import hex_zxid

if TYPE_CHECKING:
    from workbench.frames import Bundle

COUNTER = (1 << 32) - 1
NO_LOG = "no txn log in the bundle holds them (a log file missing, or the server synced from a snapshot)"


@dataclass(frozen=True)
class Damage:
    """Where a txn log is damaged: file (as the bundle names it), byte offset, reason."""

    file: str
    position: int
    reason: str

    def __str__(self) -> str:
        return f"{self.file} at byte {self.position}: {self.reason}"


@dataclass(frozen=True)
class Gap:
    """Zxids after `after` and before `before` that no readable log holds (`before` None: the history
    ends inside it). Times are those of the txns around it (ZooKeeper's clock)."""

    after: int | None
    before: int | None
    after_time: datetime | None
    before_time: datetime | None
    damage: tuple[Damage, ...]  # what explains it; none: no log in the bundle holds those zxids

    @property
    def missing(self) -> str:
        """The missing zxids, as ZooKeeper prints them: '0x75', '0x75-0x7a', 'after 0xe9'."""
        if self.before is None:
            return f"after {hex_zxid(self.after or 0)}"
        first, last = (self.after or 0) + 1, self.before - 1
        return hex_zxid(first) if first == last else f"{hex_zxid(first)}-{hex_zxid(last)}"

    def describe(self) -> str:
        when = ""
        if self.after_time is not None:
            until = f" and {self.before_time:%H:%M:%S.%f}"[:-3] if self.before_time is not None else ""
            when = f" (after {self.after_time:%Y-%m-%d %H:%M:%S.%f}"[:-3] + until + " ZooKeeper time)"
            when = when.replace("(after", "(between") if until else when
        why = "; ".join(map(str, self.damage)) if self.damage else NO_LOG
        return f"txns {self.missing} unreadable{when}: {why}"


def history_gaps(bundle: Bundle, damage: DataFrame) -> list[Gap]:
    """The gaps of the bundle's txn logs, oldest first; `damage` is the txn logs' bad records."""
    txns = bundle.znode_history.select("zxid", "time", "file", "offset").distinct()
    txns = txns.withColumn("epoch", F.shiftright("zxid", 32))
    per_epoch = rows(
        txns.groupBy("epoch")
        .agg(
            F.count("*").alias("n"),
            F.min("zxid").alias("first"),
            F.max("zxid").alias("last"),
            F.min_by(F.struct("time", "file", "offset"), "zxid").alias("first_at"),
            F.max_by(F.struct("time", "file", "offset"), "zxid").alias("last_at"),
        )
        .orderBy("epoch")
    )
    damaged = rows(damage.select("file", "position", "reason"))  # one row per damage
    got = together(per_epoch, damaged)
    epochs, problems = got[per_epoch], got[damaged]
    if not epochs:
        return []
    holes: list[tuple[int, int, Row, Row]] = []  # (after, before, where each is: time, file, offset)
    for prev, e in itertools.pairwise(epochs):
        if e.first & COUNTER != 1:
            holes.append((prev.last, e.first, prev.last_at, e.first_at))
    broken = [e.epoch for e in epochs if e.n != e.last - e.first + 1]
    if broken:
        w = Window.partitionBy("epoch").orderBy("zxid")
        at = F.struct("time", "file", "offset")
        skips = (
            txns.where(F.col("epoch").isin(broken))
            .select("zxid", at.alias("at"), F.lag("zxid").over(w).alias("p"), F.lag(at).over(w).alias("p_at"))
            .where(F.col("zxid") - F.col("p") > 1)
            .collect()  # one row per gap
        )
        holes += [(r.p, r.zxid, r.p_at, r.at) for r in skips]
    gaps = [_gap(a, b, a_at, b_at, problems) for a, b, a_at, b_at in sorted(holes, key=lambda h: h[0])]
    last = epochs[-1]
    tail = [
        p
        for p in problems
        if p.file == last.last_at.file and p.position > last.last_at.offset and not _benign_tail(p.reason)
    ]
    if tail:
        gaps.append(Gap(last.last, None, last.last_at.time, None, tuple(Damage(*p) for p in tail)))
    return gaps


def _gap(after: int, before: int, a: Row, b: Row, problems: list[Row]) -> Gap:
    """The gap between the txns at `a` and `b` (time, file, offset), with the damage that lies between
    them in file order."""

    def between(p: Row) -> bool:
        if a.file == b.file:
            return bool(p.file == a.file and a.offset < p.position < b.offset)
        return bool(
            (p.file == a.file and p.position > a.offset) or (p.file == b.file and p.position < b.offset)
        )

    named = tuple(Damage(p.file, p.position, p.reason) for p in problems if between(p))
    return Gap(after, before, a.time, b.time, named)


def _benign_tail(reason: str) -> bool:
    """A log cut inside its last txn is a server stopped while writing it: that txn was never
    acknowledged (SyncRequestProcessor flushes before a proposal is acked), so nothing is missing."""
    return reason.startswith("partial txn: file ends")


def written_inside(bundle: Bundle, gap: Gap, most: int = 8) -> list[str]:
    """What the gap hides, as far as ZooKeeper's state tells: the znodes it shows created, set, or given
    or deprived of a child by a txn inside the gap (a later write to the same znode hides an earlier one)."""
    first = (gap.after or 0) + 1
    last = gap.before - 1 if gap.before is not None else None

    def inside(c: str) -> Column:
        return (F.col(c) >= first) & (F.col(c) <= last) if last is not None else F.col(c) >= first

    rows = (
        bundle.znodes.where(inside("czxid") | inside("mzxid") | inside("pzxid"))
        .select("path", F.when(inside("czxid"), "created").when(inside("mzxid"), "set").otherwise(
            "a child created or deleted").alias("how"), F.greatest("czxid", "mzxid", "pzxid").alias("z"))
        .orderBy("path")
        .limit(most + 1)
        .collect()  # at most most + 1 rows
    )  # fmt: skip
    shown = [f"{r.path} ({r.how})" for r in rows[:most]]
    return shown + (["and more"] if len(rows) > most else [])


def unchanged_children(bundle: Bundle, gap: Gap, parent: str) -> DataFrame | None:
    """The children `parent` had when the history stopped before `gap`, where ZooKeeper's own counts prove
    the gap created and deleted none of them; else None. A parent's cversion counts every create and
    delete of a child (DataNode.copyStat, release-3.8.4:159-162: twice the creates less the children): the
    captured state's, less the changes the history shows after the gap up to the parent's pzxid there,
    is its cversion when the gap began. Every change after the gap must be seen: a closeSession lists the
    ephemerals it deletes only from ZooKeeper 3.6 (PrepRequestProcessor release-3.6.0:615-616, on unless
    zookeeper.closeSessionTxn.enabled=false), so an older log's closeSession after
    the gap leaves the children unproven, as does a tree before the gap that is not known."""
    from workbench.model.views import CREATES, DELETES  # views reads this module

    if bundle.evidence.znodes_jsonl is None or gap.after is None or gap.before is None:
        return None
    snapshots = [f.zxid for f in bundle.evidence.zk_files if f.kind == "snapshot" and f.zxid <= gap.after]
    child = f"^{re.escape(parent)}/[^/]+$"
    captured = bundle.znodes.agg(
        F.max(F.greatest("czxid", "mzxid", "pzxid")).alias("newest"),
        F.max(F.when(F.col("path") == parent, F.struct("pzxid", "cversion"))).alias("p"),
    ).collect()[0]
    if captured.p is None or captured.newest < gap.before:  # no parent, or captured before the gap ended
        return None
    after = F.col("applied") & (F.col("zxid") >= gap.before) & (F.col("zxid") <= captured.p.pzxid)
    changed = after & F.col("op").isin(*CREATES, *DELETES) & F.col("path").rlike(child)
    closing = after & (F.col("op") == "closeSession")
    listed = F.size(F.filter("deleted_paths", lambda p: p.rlike(child)))
    seen = bundle.znode_history.agg(
        F.min("zxid").alias("first"),
        F.count(F.when(changed, 1)).alias("n"),
        F.sum(F.when(closing & F.col("deleted_paths").isNotNull(), listed)).alias("closed"),
        F.count(F.when(closing & F.col("deleted_paths").isNull(), 1)).alias("unlisted"),
    ).collect()[0]
    if seen.unlisted or not (snapshots or (seen.first or 0) <= 1):
        return None
    tree = bundle.znodes_at(gap.after)[0]
    was = tree.where(F.col("path") == parent).select("cversion").collect()
    if not was or captured.p.cversion - seen.n - (seen.closed or 0) != was[0].cversion:
        return None
    return tree.where(F.col("path").rlike(child))


def unchanged_znodes(bundle: Bundle, gap: Gap, paths: str) -> DataFrame | None:
    """The persistent znodes whose path matches `paths` in the tree when the history stopped before `gap`,
    where ZooKeeper's own counts prove the gap did not touch them: the capture holds each with the same
    czxid (never deleted and made again), and its data version went on from where it was, each setData
    setting the version before it plus one (PrepRequestProcessor.checkAndIncVersion, DataTree.setData,
    release-3.8.4:398,759-763 and 655-656): the first setData after the gap sets that version plus one, or
    none came and the capture's version is the same. None where that tree is not known or the capture
    (zk/znodes.jsonl) is older than the gap's end."""
    if bundle.evidence.znodes_jsonl is None or gap.after is None or gap.before is None:
        return None
    newest = bundle.znodes.agg(F.max(F.greatest("czxid", "mzxid", "pzxid"))).collect()[0][0]
    snapshots = [f.zxid for f in bundle.evidence.zk_files if f.kind == "snapshot" and f.zxid <= gap.after]
    first = bundle.znode_history.agg(F.min("zxid")).collect()[0][0] if not snapshots else None
    if newest is None or newest < gap.before or (first or 0) > 1:
        return None
    tree = bundle.znodes_at(gap.after)[0]
    before = tree.where(F.col("path").rlike(paths) & (F.col("ephemeral_owner") == 0))
    captured = bundle.znodes.select(
        "path", F.col("czxid").alias("now_czxid"), F.col("version").alias("now_version")
    )
    written = F.col("applied") & (F.col("zxid") >= gap.before) & (F.col("op") == "setData")
    first_set = (
        bundle.znode_history.where(written & F.col("path").rlike(paths))
        .groupBy("path")
        .agg(F.min_by("version", "zxid").alias("next_version"))
    )
    went_on = F.coalesce(
        F.col("next_version") == F.col("version") + 1, F.col("now_version") == F.col("version")
    )
    return (
        before.join(captured, "path")
        .join(first_set, "path", "left")
        .where((F.col("czxid") == F.col("now_czxid")) & went_on)
        .select(*tree.columns)
    )
