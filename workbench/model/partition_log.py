"""Each partition's leader and ISR as the controller's and brokers' own lines tell them: the partitions'
history where ZooKeeper's is absent (ZooKeeper's, where held, is authoritative: `partition_history.py`).

The controller's `state-change.log` is its journal of the states it sets ("Changed partition t-0 from
OfflinePartition to OnlinePartition with state LeaderAndIsr(...)", written at every release from 1.1, at
TRACE until 2.5 where the appender takes TRACE); the requests it sends and the brokers receive print the
same state, and a leader logs its own ISR changes. Each line is ordered by the leader epoch it prints
before its clock (brokers' clocks differ).

An unclean election, from the lines alone (behaviour `unclean_election_warned`, `..._marks_recovering`,
`only_unclean_election_leaves_the_isr`, `last_isr_member_kept`): until 1.0 the controller says so; from
3.2 it writes the state RECOVERING; between, a leader elected from OfflinePartition with an ISR of itself
that was not in the ISR before it. That ISR is the last one a line printed before the election, less each
replica the controller took offline since (a replica going offline leaves the ISR unless it is its last
member).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from pyspark.sql import DataFrame, Row, Window
from pyspark.sql import functions as F

from workbench.kafka import printed
from workbench.model import acting
from workbench.model.deletion_log import deleting
from workbench.model.partition_history import counted_as
from workbench.model.reads import view
from workbench.model.refs import file_ref_col
from workbench.together import Ask

if TYPE_CHECKING:
    from workbench.frames import Bundle

# event -> the attribute printing a partition's state (leader, epoch, ISR)
STATES = {
    "partition.state_change": "leader_and_isr",
    "replica.removed_from_isr": "leader_and_isr",
    "leader_election.offline_selected": "leader_and_isr",
    "isr.updated_by_controller": "leader_and_isr",
    "reassignment.leader_and_isr_sent": "leader_and_isr",
    "request.leader_and_isr.sent": "partition_state",
    "request.leader_and_isr.received": "partition_state",
    "request.update_metadata.sent": "partition_state",
    "request.update_metadata.leader_cached": "partition_state",
}
ISR_LISTS = {
    "isr.shrink": "to_isr",
    "isr.expand": "to_isr",
    "isr.updated": "isr",
    "isr.updated_by_controller": "isr",
}
OFFLINE_REPLICA = "OfflineReplica"
LINE = "struct<ts:timestamp,file:string,line_no:bigint>"  # a line's place, as the queries carry it
# a replica taken offline, the controller's own words for an unclean election, a failed election
OTHERS = ("replica.state_change", "leader_election.unclean", "partition.state_change_failed")
# the controller's own lines of a partition's state: one clock, its broker's
CONTROLLER_LINES = (
    "partition.state_change",
    "partition.state_change_failed",
    "replica.removed_from_isr",
    "leader_election.offline_selected",
    "leader_election.unclean",
)


@view
def logged_states(bundle: Bundle) -> DataFrame:
    """Every line that prints a partition's state or ISR, or takes a replica offline: topic, partition,
    broker_id, ts, file, line_no, event, from_state, to_state, leader, leader_epoch, isr (array<int>),
    version (of the state znode the state was written at, where the line names it: behaviour
    `printed_state_names_its_version`), recovering, replica (taken offline), said_unclean (the controller's
    own words, until 1.0)."""
    ev = bundle.cluster_events.where(
        F.col("event").isin(*STATES, *ISR_LISTS, *OTHERS) & F.col("partition").isNotNull()
    )
    a = F.col("attrs")
    state = F.coalesce(*[F.when(F.col("event") == e, a[k]) for e, k in STATES.items()])
    listed = F.coalesce(*[F.when(F.col("event") == e, a[k]) for e, k in ISR_LISTS.items()])
    offline = (F.col("event") == "replica.state_change") & (a["to_state"] == OFFLINE_REPLICA)
    return ev.where((F.col("event") != "replica.state_change") | offline).select(
        "topic",
        "partition",
        "broker_id",
        "ts",
        "file",
        "line_no",
        "event",
        a["from_state"].alias("from_state"),
        a["to_state"].alias("to_state"),
        F.coalesce(printed.leader(state), a["leader"].try_cast("int")).alias("leader"),
        printed.leader_epoch(state).alias("leader_epoch"),
        F.coalesce(printed.isr(state), F.when(listed.isNotNull(), printed.ints(listed))).alias("isr"),
        F.coalesce(printed.version(state), F.try_element_at(printed.ints(a["zk_version"]), F.lit(1))).alias(
            "version"
        ),
        F.coalesce(printed.recovering(state), F.lit(False)).alias("recovering"),
        F.when(offline, a["replica"].try_cast("int")).alias("replica"),
        (F.col("event") == "leader_election.unclean").alias("said_unclean"),
    )


def leader_starts(bundle: Bundle) -> DataFrame:
    """Each new leader's "starts at leader epoch E from offset O" line: leader, topic, partition,
    leader_epoch, from_offset (where its log ended), the ISR it prints (`isr`, from 2.4), ts, file,
    line_no."""
    a = F.col("attrs")
    return bundle.cluster_events.where(F.col("event") == "partition.became_leader").select(
        F.col("broker_id").alias("leader"),
        "topic",
        "partition",
        a["leader_epoch"].try_cast("int").alias("leader_epoch"),
        a["offset"].alias("from_offset"),
        F.when(a["isr"].isNotNull(), printed.ints(a["isr"])).alias("isr"),
        "ts",
        "file",
        "line_no",
    )


@dataclass(frozen=True)
class OfflineElection:
    """A leader the controller's lines elected for an offline partition with an ISR of itself alone, and
    the ISR before it as the lines tell it (None: no line printed one before): the last printed
    (`isr_printed`, at `isr_file`:`isr_line`) less the replicas taken offline since (`went_offline`)."""

    topic: str
    partition: int
    leader: int
    leader_epoch: int | None
    ts: datetime
    file: str
    line_no: int
    recovering: bool
    said_unclean: bool
    isr_printed: list[int] | None
    isr_file: str | None
    isr_line: int | None
    went_offline: list[int]
    isr_before: list[int] | None
    from_offset: str | None = None  # the new leader's "starts at leader epoch E from offset O"


def offline_elections(
    bundle: Bundle, limit: int, held: DataFrame | None = None
) -> Ask[tuple[list[OfflineElection], int]]:
    """The first `limit` leaders elected for offline partitions with an ISR of themselves alone (by time),
    each with the ISR before it; and how many there are. Those at a leader epoch whose beginning `held`
    holds (topic, partition, leader_epoch: ZooKeeper's), or of a partition it holds any such epoch of where
    the line prints none, are left out: that account is authoritative."""
    s = logged_states(bundle)
    alone = (F.size("isr") == 1) & (F.element_at("isr", 1) == F.col("leader"))
    from_offline = (
        (F.col("event") == "partition.state_change")
        & (F.col("from_state") == "OfflinePartition")
        & (F.col("to_state") == "OnlinePartition")
        & alone
    )
    key = [
        "topic",
        "partition",
        "leader",
        "leader_epoch",
        "ts",
        "file",
        "line_no",
        "recovering",
        "said_unclean",
    ]
    elected = s.where(from_offline | F.col("said_unclean")).select(*key)
    if held is not None:
        h = held.select(*[F.col(c).alias(f"h_{c}") for c in ("topic", "partition", "leader_epoch")])
        same = (
            (F.col("h_topic") == F.col("topic"))
            & (F.col("h_partition") == F.col("partition"))
            & (F.col("leader_epoch").isNull() | (F.col("h_leader_epoch") == F.col("leader_epoch")))
        )
        elected = elected.join(h, same, "left_anti")
    before = s.select(
        "topic",
        "partition",
        F.col("ts").alias("b_ts"),
        F.col("line_no").alias("b_line"),
        F.col("file").alias("b_file"),
        F.col("leader_epoch").alias("b_epoch"),
        F.col("isr").alias("b_isr"),
        F.col("replica").alias("b_replica"),
    )
    # a line before the election: an earlier epoch where it prints one, else an earlier time
    earlier = (F.col("b_epoch") < F.col("leader_epoch")) | (
        (F.col("b_epoch").isNull() | F.col("leader_epoch").isNull()) & (F.col("b_ts") < F.col("ts"))
    )
    printed_isr = F.struct(
        F.col("b_isr").alias("isr"),
        F.col("b_ts").alias("ts"),
        F.col("b_file").alias("file"),
        F.col("b_line").alias("line"),
    )
    last = (
        elected.join(
            before.withColumnsRenamed({"topic": "b_topic", "partition": "b_partition"}),
            (F.col("b_topic") == F.col("topic")) & (F.col("b_partition") == F.col("partition")) & earlier,
            "left",
        )
        .groupBy(*key)
        .agg(
            F.max_by(
                printed_isr, F.when(F.col("b_isr").isNotNull(), F.struct("b_ts", "b_epoch", "b_line"))
            ).alias("printed"),
            F.collect_list(
                F.when(F.col("b_replica").isNotNull(), F.struct("b_ts", "b_line", "b_replica"))
            ).alias("offline"),
        )
    )
    since = F.filter(F.array_sort("offline"), lambda x: x["b_ts"] >= F.col("printed.ts"))
    went = F.transform(since, lambda x: x["b_replica"])
    folded = F.aggregate(
        went,
        F.col("printed.isr"),
        lambda acc, r: F.when(F.size(acc) > 1, F.array_remove(acc, r)).otherwise(acc),
    )
    out = (
        last.select(*key, "printed", went.alias("went"), folded.alias("folded"))
        .join(
            leader_starts(bundle).drop("isr", "ts", "file", "line_no"),
            ["leader", "topic", "partition", "leader_epoch"],
            "left",
        )
        .dropDuplicates(key)
        .withColumn("n", F.count("*").over(Window.partitionBy(F.lit(0))))
        .orderBy("ts", "topic", "partition", "line_no")
        .limit(limit)  # at most `limit` elections
    )
    return Ask(out, _offline_elections)


def _offline_elections(out: list[Row]) -> tuple[list[OfflineElection], int]:
    total = out[0].n if out else 0
    return [
        OfflineElection(
            r.topic,
            r.partition,
            r.leader,
            r.leader_epoch,
            r.ts,
            r.file,
            r.line_no,
            r.recovering,
            r.said_unclean,
            list(r.printed.isr) if r.printed and r.printed.isr is not None else None,
            r.printed.file if r.printed else None,
            r.printed.line if r.printed else None,
            list(r.went or []),
            list(r.folded) if r.folded is not None else None,
            r.from_offset,
        )
        for r in out
    ], total


def logged_changes(bundle: Bundle) -> DataFrame:
    """Each partition, change by change, as the controller's lines tell it: `partition_changes`' rows
    where ZooKeeper's history is absent, each naming its line (`ref`; zxid null, `time` the controller's
    clock, `seq` its place among the lines of one moment: twice its line number, the row before it one
    less). A line that leaves the partition without a leader (leader -1, OfflinePartition, a failed
    election) has leader -1; one naming a leader has it registered (the controller names live brokers
    only). An election from OfflinePartition with no line of its going offline since the last leader
    named has a row of its own just before it, without a ref: the partition was offline, since when is
    not in the lines. `deleting` (and `queued`): its topic under deletion as the controller's lines tell
    it (`deletion_log.deleting`), which Kafka leaves out of OfflinePartitionsCount. Replicas and
    min.insync.replicas are not in these lines (null); `refused_by` is read as `acting.mark` reads it,
    on the brokers' own clocks."""
    s = logged_states(bundle).where(F.col("event").isin(*CONTROLLER_LINES))
    off = (
        (F.col("leader") == -1)
        | (F.col("to_state") == "OfflinePartition")
        | ((F.col("event") == "partition.state_change_failed") & (F.col("to_state") == "OnlinePartition"))
    )
    on = (F.col("leader") >= 0) & (F.col("event") != "partition.state_change_failed")
    lines = s.where(off | on).select(
        "topic",
        "partition",
        F.col("ts").alias("time"),
        (F.col("line_no") * 2).alias("seq"),
        file_ref_col("file", "line_no").alias("ref"),
        F.when(off, F.lit(-1)).otherwise(F.col("leader")).alias("leader"),
        F.when(~off, F.col("leader_epoch")).alias("leader_epoch"),
        F.when(~off, F.col("isr")).alias("isr"),
        (~off & F.coalesce(F.col("from_state") == "OfflinePartition", F.lit(False))).alias("from_offline"),
    )
    w = Window.partitionBy("topic", "partition").orderBy("time", "seq")
    after_off = F.last(F.col("leader") < 0).over(w.rowsBetween(Window.unboundedPreceding, -1))
    unlogged = lines.withColumn("after_off", after_off).where(
        F.col("from_offline") & ~F.coalesce("after_off", F.lit(False))
    )
    started = unlogged.select(
        "topic",
        "partition",
        "time",
        (F.col("seq") - 1).alias("seq"),
        F.lit(None).cast("string").alias("ref"),
        F.lit(-1).alias("leader"),
        F.lit(None).cast("int").alias("leader_epoch"),
        F.lit(None).cast("array<int>").alias("isr"),
    )
    rows = lines.drop("from_offline").unionByName(started)
    gone = deleting(bundle).alias("g")
    purposed = (
        (F.col("g.topic") == F.col("r.topic"))
        & (F.col("r.time") >= F.col("g.from_ts"))
        & (F.col("g.to_ts").isNull() | (F.col("r.time") <= F.col("g.to_ts")))
    )
    r = rows.alias("r")
    flagged = (
        r.join(gone, purposed, "left_semi")
        .withColumn("deleting", F.lit(True))
        .unionByName(r.join(gone, purposed, "left_anti").withColumn("deleting", F.lit(False)))
    )
    named = flagged.select(
        "topic",
        "partition",
        F.lit(None).cast("long").alias("zxid"),
        "time",
        "seq",
        "ref",
        "leader",
        "leader_epoch",
        "isr",
        F.lit(None).cast("array<int>").alias("replicas"),
        F.lit(None).cast("array<int>").alias("adding"),
        F.lit(None).cast("array<int>").alias("removing"),
        F.col("deleting").alias("queued"),
        "deleting",
        (F.col("leader") >= 0).alias("registered"),
        F.lit(None).cast("int").alias("min_isr"),
    )
    marked = acting.mark(bundle, named, {}, True)
    st = F.struct(F.lit(True).alias("present"), "leader", "isr")
    asg = F.struct(F.lit(True).alias("present"), "replicas", "adding")
    return marked.withColumn("counted_as", counted_as(st, asg))
