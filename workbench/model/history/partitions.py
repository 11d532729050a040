"""The partitions' leaders and ISRs, from ZooKeeper's history and the brokers' lines together: who led a
partition at a moment, the states the lines print, and each replica leaving or joining an ISR (the leaders
elected from outside the ISR: `unclean`).

ZooKeeper's partition states (`partition_history`) are authoritative where its history holds them: they
are what the controller wrote, in zxid order. The states the controller's and brokers' lines print
(`partition_log`) tell the rest: a moment before ZooKeeper's history begins (or after the gap it resumes
from), an election whose leader epoch's beginning no txn read holds, or every moment where the bundle has
no txn logs. Where that history runs whole from the server's first txn, the lines have nothing to add.
Each answer says which told it.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING

from pyspark.sql import DataFrame, Row, Window
from pyspark.sql import functions as F

from workbench.model import acting
from workbench.model.partition_log import leader_starts, logged_states
from workbench.model.refs import TP
from workbench.model.skew import skew_col, skew_ms
from workbench.model.views import views
from workbench.together import Ask, given

if TYPE_CHECKING:
    from workbench.frames import Bundle

FROM_TXNS, FROM_LINES = "ZooKeeper's partition states", "the states the brokers' lines print"
FROM_OWN_LINES = "the broker's own lines"  # its refusals and the leader epochs it started at


def led_at(bundle: Bundle, asked: list[tuple[int, int, datetime]]) -> Ask[dict[int, tuple[list[TP], str]]]:
    """For each (i, broker, at) asked: the partitions that broker led at `at` (on ZooKeeper's clock where
    the broker's skew is known), and what told it: ZooKeeper's partition states where its history began
    before `at`, else the lines' (`_last_leaders`). One query."""
    if not asked:
        return given({})
    v = views(bundle)
    changes, span = v.partition_changes, v.history_span
    began = span.began if changes is not None and span is not None else None
    wanted = bundle.spark.createDataFrame(
        [(i, b, at, began is not None and began <= at) for i, b, at in asked],
        "i int, broker int, at timestamp, by_txns boolean",
    )
    told = F.broadcast(wanted)
    by = ["i", "broker", "topic", "partition"]
    printed = _printed_leaders(bundle).join(told.where(~F.col("by_txns")), F.col("ts") <= F.col("at"))
    states = _last_leaders(printed, ["i", "broker"]).select(*by, "leader")
    if changes is not None:
        from_txns = changes.join(told.where("by_txns"), F.col("time") <= F.col("at"))
        states = states.unionByName(from_txns.groupBy(*by).agg(F.max_by("leader", "zxid").alias("leader")))
    led = (
        states.where(F.col("leader") == F.col("broker"))
        .groupBy("i")
        .agg(F.sort_array(F.collect_list(F.struct("topic", "partition"))).alias("tps"))
    )  # one row per moment asked
    told_by = {i: FROM_TXNS if began is not None and began <= at else FROM_LINES for i, _, at in asked}

    def read(rs: list[Row]) -> dict[int, tuple[list[TP], str]]:
        tps = {r.i: [TP(t.topic, t.partition) for t in r.tps] for r in rs}
        return {i: (tps.get(i, []), source) for i, source in told_by.items()}

    return Ask(led, read)


def printed_at(bundle: Bundle, when: datetime | None) -> DataFrame:
    """topic, partition, leader, leader_epoch, isr: each partition's state as the lines printed up to
    `when` (None: all of them), where ZooKeeper's history does not tell it: the leader named at the
    highest leader epoch (`_last_leaders`, -1: none), and the ISR last printed at that epoch, or by that
    leader after it began it (its own ISR changes print no epoch), on its clock. A partition whose topic's
    deletion completed after its last line is gone."""
    lines = _stated(bundle)
    if when is not None:
        lines = lines.where(F.col("ts") <= F.lit(when))
    won = _last_leaders(_printed_leaders(bundle, lines), [])
    isr = lines.where(F.col("isr").isNotNull()).select(
        "topic",
        "partition",
        "broker_id",
        "ts",
        "line_no",
        "isr",
        F.col("life").alias("l"),
        F.col("leader_epoch").alias("epoch"),
    )
    at_epoch = (F.col("l") == F.col("life")) & (
        (F.col("epoch") == F.col("leader_epoch"))
        | (
            F.col("epoch").isNull()
            & (F.col("broker_id") == F.col("leader"))
            & (F.col("ts") >= F.col("began"))
        )
    )
    last = (
        won.join(isr, ["topic", "partition"])
        .where(at_epoch)
        .groupBy("topic", "partition")
        .agg(F.max_by("isr", F.struct("ts", "line_no")).alias("isr"))
    )
    # a topic whose deletion completed after its partition's last line is gone
    done = bundle.cluster_events.where(F.col("event") == "deletion.completed")
    if when is not None:
        done = done.where(F.col("ts") <= F.lit(when))
    ended = done.groupBy("topic").agg(F.max("ts").alias("deleted"))
    seen = lines.groupBy("topic", "partition").agg(F.max("ts").alias("seen"))
    gone = seen.join(ended, "topic").where(F.col("deleted") >= F.col("seen"))
    return (
        won.join(gone, ["topic", "partition"], "left_anti")
        .join(last, ["topic", "partition"], "left")
        .select("topic", "partition", "leader", "leader_epoch", "isr")
    )


def _leader_starts(bundle: Bundle) -> DataFrame:
    """The leaders' own "starts at leader epoch E" lines (`leader_starts`) as the states they print."""
    return leader_starts(bundle).select(
        "topic",
        "partition",
        F.col("leader").alias("broker_id"),
        "ts",
        "file",
        "line_no",
        F.lit("partition.became_leader").alias("event"),
        "leader",
        "leader_epoch",
        "isr",
    )


def _stated(bundle: Bundle) -> DataFrame:
    """The states the lines print (`logged_states`) and the leaders' own starts, each in its partition's
    life (`_lives`)."""
    return _lives(bundle, logged_states(bundle).unionByName(_leader_starts(bundle), allowMissingColumns=True))


def _printed_leaders(bundle: Bundle, lines: DataFrame | None = None) -> DataFrame:
    """Each line naming a partition's leader at a leader epoch (`lines`: `_stated` by default), but a
    failed election's: topic, partition, broker_id, ts, line_no, life, leader, leader_epoch."""
    if lines is None:
        lines = _stated(bundle)
    return lines.where(
        F.col("leader").isNotNull()
        & F.col("leader_epoch").isNotNull()
        & (F.col("event") != "partition.state_change_failed")
    ).select("topic", "partition", "broker_id", "ts", "line_no", "life", "leader", "leader_epoch")


def _last_leaders(lines: DataFrame, by: list[str]) -> DataFrame:
    """by..., topic, partition, life, leader, leader_epoch, began: per partition the leader the line at the
    highest leader epoch of its last life names (epochs order every broker's lines whatever their clocks;
    within one epoch every line names the same leader), and the first line its own broker wrote at that
    epoch (`began`: null where none did)."""
    keys = [*by, "topic", "partition"]
    state, order = (
        F.struct("life", "leader", "leader_epoch"),
        F.struct("life", "leader_epoch", "ts", "line_no"),
    )
    won = lines.groupBy(*keys).agg(F.max_by(state, order).alias("w"))
    own = lines.where(F.col("broker_id") == F.col("leader")).select(
        *keys, F.struct("life", "leader", "leader_epoch").alias("o"), "ts"
    )
    began = won.join(own, keys).where(F.col("o") == F.col("w")).groupBy(*keys).agg(F.min("ts").alias("began"))
    return won.join(began, keys, "left").select(*keys, "w.life", "w.leader", "w.leader_epoch", "began")


def told_to_lead(bundle: Bundle) -> DataFrame:
    """broker, topic, partition, refused: for each partition a broker was told to lead, whether it did not
    serve it the last time it was. ZooKeeper's partition states where its history is held (the refusal
    `acting.mark` ties to the last state naming that broker leader while registered); else the broker's own
    lines, by the same rule: its last refusal of a LeaderAndIsr for the partition (`acting.refusals`) with
    no "starts at leader epoch" after it (`acting.acceptances`), nor one before it that still held: a
    leader that started leading and then refused a later request still serves at its epoch
    (`refused_leader_and_isr_keeps_role`), until it follows ("Follower ... starts at leader epoch") or
    starts again. A refusal line does not say which role the request gave, so the lines' answer is for a
    broker its readers know is the partition's leader."""
    changes = views(bundle).partition_changes
    if changes is not None:
        return (
            changes.where(F.col("leader").isNotNull() & F.coalesce("registered", F.lit(False)))
            .groupBy(F.col("leader").alias("broker"), "topic", "partition")
            .agg(F.max_by(F.col("refused_by").isNotNull(), "zxid").alias("refused"))
        )
    skews = skew_ms(bundle)
    keys = ["broker", "topic", "partition"]
    last = (
        acting.refusals(bundle, skews)
        .select(*keys, "at_ms", F.lit(True).alias("refusal"))
        .unionByName(acting.acceptances(bundle, skews).select(*keys, "at_ms", F.lit(False).alias("refusal")))
        .groupBy(*keys)
        .agg(
            F.max(F.when(F.col("refusal"), F.col("at_ms"))).alias("r"),
            F.max(F.when(~F.col("refusal"), F.col("at_ms"))).alias("l"),
        )
    )
    # what ends a leadership the broker began: following the partition, or the broker starting again
    skew = F.coalesce(skew_col(skews), F.lit(0))
    ev = bundle.cluster_events
    at = (F.unix_millis("ts") - skew).alias("at_ms")
    followed = ev.where(F.col("event") == "partition.became_follower").select(
        F.col("broker_id").alias("broker"), "topic", "partition", at
    )
    started = ev.where(F.col("event") == "broker.starting").select(F.col("broker_id").alias("b"), at)
    held = F.col("l").isNotNull() & (F.col("l") < F.col("r"))
    between = (F.col("e.at_ms") > F.col("k.l")) & (F.col("e.at_ms") < F.col("k.r"))
    k = last.where(held).alias("k")
    ended = (
        k.join(followed.alias("e"), [F.col(f"k.{c}") == F.col(f"e.{c}") for c in keys], "inner")
        .where(between)
        .select(*[F.col(f"k.{c}").alias(c) for c in keys])
        .unionByName(
            k.join(started.alias("e"), (F.col("k.broker") == F.col("e.b")) & between).select(
                *[F.col(f"k.{c}").alias(c) for c in keys]
            )
        )
        .distinct()
        .select(*keys, F.lit(True).alias("ended"))
    )
    refused = F.col("r").isNotNull() & (F.col("l").isNull() | held & F.coalesce("ended", F.lit(False)))
    return last.join(ended, keys, "left").select(*keys, refused.alias("refused"))


def refused_when_named(bundle: Bundle, asked: list[tuple[int, str, int]]) -> tuple[dict[int, list[TP]], str]:
    """Broker -> those of the (broker, topic, partition) asked whose broker refused to lead the partition
    the last time it was told to (`told_to_lead`), and what told it. One query."""
    told = FROM_TXNS if views(bundle).partition_changes is not None else FROM_OWN_LINES
    if not asked:
        return {}, told
    wanted = bundle.spark.createDataFrame(asked, "broker int, topic string, partition int")
    found = (
        told_to_lead(bundle).join(wanted, ["broker", "topic", "partition"]).where("refused").collect()
    )  # at most the partitions asked
    out: dict[int, list[TP]] = {}
    for r in sorted(found, key=lambda r: (r.broker, r.topic, r.partition)):
        out.setdefault(r.broker, []).append(TP(r.topic, r.partition))
    return out, told


def isr_changes(bundle: Bundle) -> DataFrame:
    """Each replica leaving ('left') or joining ('joined') a partition's ISR: topic, partition, broker,
    change, time, and what told it: `zxid`, the txn that wrote the state (ZooKeeper's partition states,
    where its history is held), else `file` and `line_no`, the first line printing the state it led to.
    A topic created again begins new lives of its partitions: their first ISR is nobody joining. From the
    lines, a partition's states are ordered by the version of its state znode each names (behaviour
    `printed_state_names_its_version`) within each life (a creation's NewPartition line begins one), and
    `time` is that line's, on its broker's clock. A write no line printed hides what changed in it:
    `isr_writes_unseen` counts them."""
    changes = views(bundle).partition_changes
    if changes is not None:
        # a deleted state has no ISR: the next life's first is compared with nothing
        w = Window.partitionBy("topic", "partition").orderBy("zxid", "time")
        d = changes.select(
            "topic", "partition", "zxid", "time", "isr", F.lag("isr").over(w).alias("before")
        ).where(F.col("isr").isNotNull())
        told = [
            F.col("zxid"),
            F.lit(None).cast("string").alias("file"),
            F.lit(None).cast("long").alias("line_no"),
        ]
    else:
        d = _printed_states(bundle).select("topic", "partition", "time", "isr", "before", "file", "line_no")
        told = [F.lit(None).cast("long").alias("zxid"), F.col("file"), F.col("line_no")]
    d = d.where(F.col("before").isNotNull())
    return d.select(
        "topic",
        "partition",
        "time",
        *told,
        F.explode(F.array_except("before", "isr")).alias("broker"),
        F.lit("left").alias("change"),
    ).unionByName(
        d.select(
            "topic",
            "partition",
            "time",
            *told,
            F.explode(F.array_except("isr", "before")).alias("broker"),
            F.lit("joined").alias("change"),
        )
    )


def isr_writes_unseen(bundle: Bundle) -> Ask[int]:
    """How many writes of a partition's state fall between two versions the lines print and were printed
    by none (what changed in them is not known); 0 where ZooKeeper's history tells every write."""
    if views(bundle).partition_changes is not None:
        return given(0)
    skipped = F.col("version") - F.col("before_version") - 1
    return Ask(
        _printed_states(bundle).agg(F.sum(F.when(skipped > 0, skipped)).alias("n")),
        lambda rs: int(rs[0].n or 0) if rs else 0,
    )


def _printed_states(bundle: Bundle) -> DataFrame:
    """Per partition, life and version of its state znode a line prints it at: time, isr, file and line_no
    of the first such line, and the ISR and version printed before it in that life (`before`,
    `before_version`)."""
    s = logged_states(bundle).where(F.col("isr").isNotNull() & F.col("version").isNotNull())
    first = F.struct("ts", "file", "line_no", "isr")
    per = _lives(bundle, s).groupBy("topic", "partition", "life", "version").agg(F.min(first).alias("f"))
    w = Window.partitionBy("topic", "partition", "life").orderBy("version")
    return per.select(
        "topic",
        "partition",
        "version",
        F.col("f.ts").alias("time"),
        F.col("f.isr").alias("isr"),
        F.col("f.file").alias("file"),
        F.col("f.line_no").alias("line_no"),
        F.lag("f.isr").over(w).alias("before"),
        F.lag("version").over(w).alias("before_version"),
    )


def _lives(bundle: Bundle, lines: DataFrame) -> DataFrame:
    """`lines` (topic, partition, ts, line_no, event, from_state) with `life`: which life of its partition
    each is in, by time. A topic created again after its deletion begins new lives, whose states start
    again from leader epoch 0 and version 0 (`behaviour`'s new_partition_starts_at_leader_epoch_0): a life
    begins at the controller's line of the partition's
    creation (from NewPartition, where its state-change lines are held) and after each completed deletion
    of its topic (the controller's "successfully completed")."""
    done = bundle.cluster_events.where(F.col("event") == "deletion.completed").select(
        "topic", "ts", "line_no", "event"
    )
    marked = lines.withColumn("mark", F.lit(False)).unionByName(
        done.withColumn("mark", F.lit(True)), allowMissingColumns=True
    )
    born = (F.col("event") == "partition.state_change") & (F.col("from_state") == "NewPartition")
    first = F.when(F.col("mark") | born, 0).otherwise(1)  # a life's first line before one at its moment
    deleted = F.sum(F.col("mark").cast("int")).over(
        Window.partitionBy("topic").orderBy("ts", first, "line_no")
    )
    per = Window.partitionBy("topic", "partition").orderBy("ts", first, "line_no")
    return (
        marked.withColumn("deleted", deleted)
        .where(~F.col("mark"))
        .withColumn("life", F.col("deleted") + F.sum(born.cast("int")).over(per))
        .drop("mark", "deleted")
    )
