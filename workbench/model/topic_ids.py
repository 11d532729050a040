"""What the evidence says of topic ids, for the topic-id analyses (`analysis/topic_ids.py`,
`analysis/topic_id_cause.py`) and the notebooks: each live replica's id on disk against ZooKeeper's, the ids
pasted output printed, the brokers' refusals, every write to a topic znode with the id before and after
it; and, as plain values for the analyses' judges, the topic znodes, the id-changing writes and the stale
replicas' impact on the ISRs."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from pyspark.sql import DataFrame, Row, Window
from pyspark.sql import functions as F

from workbench.kafka.logdir import PARTITION_METADATA
from workbench.kafka.znode_frames import epoch_of
from workbench.kafka.znodes import CONTROLLER_EPOCH, TOPIC_PATH
from workbench.model.reads import view
from workbench.model.views import views
from workbench.together import Ask, Joined, given, rows

if TYPE_CHECKING:
    from workbench.frames import Bundle


@view
def replica_ids(bundle: Bundle) -> DataFrame:
    """Every live replica with the id on its disk and ZooKeeper's: broker_id, topic, partition,
    disk_topic_id, zk_topic_id, state (match, mismatch, zk_missing, no_metadata, no_topic), metadata_file.
    A view (kept): the topic-id analysis asks it in several branches, the repair plan and plots again."""
    v = views(bundle)
    live = v.replicas.where(F.col("dir_state") == "live")
    zk = v.topics.select("topic", F.col("topic_id").alias("zk_topic_id"), F.lit(True).alias("in_zk"))
    state = (
        F.when(F.col("in_zk").isNull(), "no_topic")
        .when(F.col("disk_topic_id").isNull(), "no_metadata")
        .when(F.col("zk_topic_id").isNull(), "zk_missing")
        .when(F.col("disk_topic_id") == F.col("zk_topic_id"), "match")
        .otherwise("mismatch")
    )
    return live.join(zk, "topic", "left").select(
        "broker_id",
        "log_dir",
        "topic",
        "partition",
        "disk_topic_id",
        "zk_topic_id",
        state.alias("state"),
        "metadata_file",
    )


UNREADABLE_SHOWN = 5  # partition.metadata files named that could not be read; the rest counted


def unread_metadata(bundle: Bundle) -> Ask[list[str]]:
    """The replicas whose topic id is unknown: those whose partition.metadata copy could not be read
    (each file named, as Kafka would refuse it), and per broker those a pasted listing shows (with its
    partition.metadata, or without its files as `ls -l` does) with no copy of the file beside it."""
    if not bundle.evidence.log_dirs:
        return given([])
    bad = bundle.datadir_bad_records.where(F.col("source") == PARTITION_METADATA).agg(
        F.count("*").alias("n"),
        F.slice(F.sort_array(F.collect_list(F.struct("file", "reason"))), 1, UNREADABLE_SHOWN).alias("first"),
    )
    pasted = sorted({d.broker_id for d in bundle.evidence.log_dirs if d.pasted and d.broker_id is not None})
    unread = None
    if pasted:
        where = ["broker_id", "log_dir", "dir_name"]
        dirs = (
            bundle.datadir_files.where(
                F.col("broker_id").isin(pasted)
                & (F.col("dir_state") == "live")
                & F.col("line_no").isNotNull()
            )
            .groupBy(*where)
            .agg(
                F.max((F.col("file") == PARTITION_METADATA).cast("int")).alias("listed"),
                F.count("file").alias("files"),
            )
            .where((F.col("listed") == 1) | (F.col("files") == 0))
        )
        unread = (
            dirs.join(bundle.partition_metadata.select(*where), where, "left_anti")
            .groupBy("broker_id")
            .agg(F.count("*").alias("n"))
            .orderBy("broker_id")
        )
    return Joined(_unread, rows(bad), rows(unread))


def _unread(bad: list[Row], unread: list[Row]) -> list[str]:
    (counted,) = bad
    out = [f"{r.file}: unreadable ({r.reason}); its replica's topic id is not known" for r in counted.first]
    if counted.n > UNREADABLE_SHOWN:
        out.append(f"{counted.n - UNREADABLE_SHOWN} more partition.metadata file(s) unreadable")
    return out + [
        f"broker {r.broker_id}: partition.metadata of {r.n} replica(s) a pasted listing shows, "
        "not copied beside it"
        for r in unread
    ]


def printed_ids(bundle: Bundle) -> DataFrame:
    """The topic ids pasted output printed, where the bundle has no ZooKeeper tree to read them from: the
    TopicIds of `kafka-topics --describe`, and the `topic_id` of topic znodes a pasted ZooKeeper shell
    showed (null where the znode has none). topic, printed_id, source, how, command (the shell's), file,
    line_no, taken_at, znode_version, mzxid (where the shell printed the stat)."""
    described = (
        bundle.partition_descriptions.where(F.col("topic_id").isNotNull())
        .groupBy("topic", F.col("topic_id").alias("printed_id"), "file", "taken_at")
        .agg(F.min("line_no").alias("line_no"))
        .select(
            "*",
            F.lit("kafka-topics --describe").alias("source"),
            F.lit("kafka-topics --describe printed TopicId").alias("how"),
            F.lit(None).cast("int").alias("znode_version"),
        )
    )
    shown = bundle.znodes_observed.where(
        F.col("path").rlike(TOPIC_PATH) & F.col("exists") & F.col("data_shown") & F.col("data").isNotNull()
    ).select(
        F.regexp_extract("path", TOPIC_PATH, 1).alias("topic"),
        F.get_json_object("data", "$.topic_id").alias("printed_id"),
        "file",
        "taken_at",
        "line_no",
        F.lit("a ZooKeeper shell transcript").alias("source"),
        F.concat(F.lit("its topic znode (a pasted `"), F.col("command"), F.lit("`) holds topic_id")).alias(
            "how"
        ),
        F.get_json_object("data", "$.version").cast("int").alias("znode_version"),
        "mzxid",
        "command",
    )
    return described.select(
        "*", F.lit(None).cast("long").alias("mzxid"), F.lit(None).cast("string").alias("command")
    ).unionByName(shown)


def printed_mismatches(bundle: Bundle) -> DataFrame:
    """Replicas whose partition.metadata id differs from one pasted output printed (`printed_ids`), per
    topic, broker and paste (with when it was taken)."""
    printed = printed_ids(bundle).where(F.col("printed_id").isNotNull())
    disk = replica_ids(bundle).where(F.col("disk_topic_id").isNotNull())
    return (
        disk.join(printed, "topic")
        .where(F.col("disk_topic_id") != F.col("printed_id"))
        .groupBy("topic", "broker_id", "disk_topic_id", "printed_id", "how", "file", "line_no", "taken_at")
        .agg(
            F.sort_array(F.collect_set("partition")).alias("partitions"),
            F.slice(F.sort_array(F.collect_set("metadata_file")), 1, 5).alias("files"),
        )
    )


def mismatches(bundle: Bundle) -> DataFrame:
    """Replicas whose partition.metadata id differs from ZooKeeper's, per topic and broker."""
    return (
        replica_ids(bundle)
        .where(F.col("state") == "mismatch")
        .groupBy("topic", "broker_id", "disk_topic_id", "zk_topic_id")
        .agg(
            F.sort_array(F.collect_set("partition")).alias("partitions"),
            F.slice(F.sort_array(F.collect_set("metadata_file")), 1, 5).alias("files"),
        )
    )


def disagreements(bundle: Bundle) -> DataFrame:
    """Topics whose replicas disagree among themselves: each id on disk with the replicas holding it."""
    ids = replica_ids(bundle).where(F.col("disk_topic_id").isNotNull())
    per_id = ids.groupBy("topic", "disk_topic_id").agg(
        F.count("*").alias("replicas"),
        F.slice(F.sort_array(F.collect_set("metadata_file")), 1, 3).alias("files"),
    )
    w = Window.partitionBy("topic")
    return per_id.withColumn("ids", F.count("*").over(w)).where(F.col("ids") > 1).drop("ids")


def refusals(bundle: Bundle) -> DataFrame:
    """The brokers' own lines: LeaderAndIsr refused for a topic id (both wordings) and 'inconsistent
    topic id' errors, per broker, topic and pair of ids."""
    ev = bundle.cluster_events.where(F.col("event").isin("topic_id.mismatch", "topic_id.inconsistent"))
    return ev.groupBy(
        "broker_id",
        "topic",
        F.col("attrs")["log_topic_id"].alias("log_topic_id"),
        F.coalesce(F.col("attrs")["request_topic_id"], F.col("attrs")["topic_id"]).alias("request_topic_id"),
    ).agg(
        F.sort_array(F.collect_set("partition")).alias("partitions"),
        F.count("*").alias("lines"),
        F.min("ts").alias("first"),
        F.max("ts").alias("last"),
        F.slice(F.sort_array(F.collect_list(F.struct("file", "line_no"))), 1, 5).alias("refs"),
    )


def znode_history(bundle: Bundle) -> DataFrame:
    """Every write to a topic znode in ZooKeeper's history with the topic_id before and after it:
    zxid, time, topic, op, session_id, writer_broker (null: no broker's session), fenced (a controller's
    write checks /controller_epoch), controller_epoch in force, znode_version, topic_id, previous_id,
    partitions count, change (created, minted, removed, replaced, kept, deleted)."""
    v = views(bundle)
    h = views(bundle).history.where(F.col("applied"))
    writes = h.where(
        F.col("path").rlike(TOPIC_PATH) & F.col("op").isin("create", "setData", "delete")
    ).select(
        "zxid",
        "time",
        F.regexp_extract("path", TOPIC_PATH, 1).alias("topic"),
        "path",
        "op",
        "session_id",
        F.get_json_object("data", "$.topic_id").alias("topic_id"),
        F.get_json_object("data", "$.version").cast("int").alias("znode_version"),
        F.size(F.from_json(F.get_json_object("data", "$.partitions"), "map<string,array<int>>")).alias(
            "partitions"
        ),
    )
    fenced = h.where((F.col("op") == "check") & (F.col("path") == CONTROLLER_EPOCH)).select(
        "zxid", F.lit(True).alias("fenced")
    )
    epochs = h.where((F.col("path") == CONTROLLER_EPOCH) & F.col("op").isin("create", "setData")).select(
        F.col("zxid").alias("epoch_zxid"), epoch_of(F.col("data")).alias("epoch")
    )
    owners = v.sessions.groupBy("session_id").agg(F.min("broker_id").alias("writer_broker"))
    w = Window.partitionBy("topic").orderBy("zxid")
    prev = F.lag("topic_id").over(w)
    prev_op = F.lag("op").over(w)
    change = (
        F.when(F.col("op") == "delete", "deleted")
        .when((F.col("op") == "create") | (prev_op == "deleted") | prev_op.isNull(), "created")
        .when(prev.isNull() & F.col("topic_id").isNotNull(), "minted")
        .when(prev.isNotNull() & F.col("topic_id").isNull(), "removed")
        .when(prev != F.col("topic_id"), "replaced")
        .otherwise("kept")
    )
    in_force = (
        writes.join(epochs, epochs.epoch_zxid <= writes.zxid, "left")
        .groupBy(*writes.columns)
        .agg(F.max_by("epoch", "epoch_zxid").alias("controller_epoch"))
    )
    return (
        in_force.join(fenced.distinct(), "zxid", "left")
        .join(owners, "session_id", "left")
        .withColumn("fenced", F.coalesce("fenced", F.lit(False)))
        .withColumn("previous_id", prev)
        .withColumn("change", change)
    )


# -- the facts the analyses judge -------------------------------------------------------------------
@dataclass(frozen=True)
class Znode:
    """A topic znode in ZooKeeper's tree: its id (None: none) and its stat."""

    topic: str
    path: str
    topic_id: str | None
    znode_version: int | None
    czxid: int
    mzxid: int
    data_version: int | None


@dataclass(frozen=True)
class Write:
    """A write to a topic znode that created, deleted or changed its id (topic_ids.znode_history)."""

    zxid: int
    change: str
    topic_id: str | None
    previous_id: str | None
    session_id: int | None
    writer_broker: int | None  # None: no broker's session
    fenced: bool  # checked /controller_epoch: a controller's write
    znode_version: int | None
    partitions: int | None
    controller_epoch: int | None


@dataclass(frozen=True)
class Impact:
    """A topic's stale replicas against its partitions' ISRs at the capture: how many, those out of the ISR
    and those in it (as partition@broker), the partitions nobody serves now (no live leader, or one that
    refused them: `unavailable`), those served now whose every in-sync replica is stale (`at_risk`: lost
    once leadership moves off `at_risk_leaders`), and their state znodes. `acting_known`: whether ZooKeeper's
    history tells which leaders refused (without it, a registered leader is taken to serve)."""

    topic: str
    replicas: int
    out_of_isr: list[str]
    will_leave: list[str]
    unavailable: list[int]
    paths: list[str]
    at_risk: list[int] = field(default_factory=list)
    at_risk_leaders: list[int] = field(default_factory=list)
    acting_known: bool = True


@dataclass(frozen=True)
class Stale:
    """A broker's replicas of a topic whose partition.metadata holds `disk_topic_id`."""

    topic: str
    broker_id: int
    disk_topic_id: str


@dataclass(frozen=True)
class Mismatch(Stale):
    """A broker's replicas of a topic whose partition.metadata holds another id than `said_id`: ZooKeeper's
    (`printed` None), or the one a paste printed (`printed`: how, file, line, when it was taken)."""

    said_id: str
    partitions: list[int]
    files: list[str]
    printed: Printed | None = None


@dataclass(frozen=True)
class Printed:
    """Where pasted output printed something: what printed it, the file and line, when it was taken."""

    how: str
    file: str
    line_no: int
    taken_at: datetime | None
    command: str | None = None


@dataclass(frozen=True)
class ShownWithout:
    """A topic znode a pasted ZooKeeper shell showed without topic_id."""

    topic: str
    znode_version: int | None
    mzxid: int | None
    printed: Printed


def foreign_cluster(bundle: Bundle) -> Ask[dict[int, tuple[str, str, str]]]:
    """Brokers whose meta.properties names another cluster than `/cluster/id`:
    broker -> (disk id, zk id, file)."""
    zk = bundle.znodes.where(F.col("path") == "/cluster/id").select(
        F.get_json_object("data", "$.id").alias("zk_id")
    )
    disks = bundle.meta_properties.join(zk, F.col("cluster_id") != F.col("zk_id")).select(
        "broker_id", "cluster_id", "zk_id", "file"
    )
    return Ask(disks, lambda rs: {r.broker_id: (r.cluster_id, r.zk_id, r.file) for r in rs})


def id_changes(writes: DataFrame, topics: list[str]) -> Ask[dict[str, list[Write]]]:
    """The writes that changed each topic's id (or created or deleted it), in zxid order."""

    def read(rows: list[Row]) -> dict[str, list[Write]]:
        out: dict[str, list[Write]] = {}
        for r in rows:
            out.setdefault(r.topic, []).append(
                Write(
                    r.zxid,
                    r.change,
                    r.topic_id,
                    r.previous_id,
                    r.session_id,
                    r.writer_broker,
                    bool(r.fenced),
                    r.znode_version,
                    r.partitions,
                    r.controller_epoch,
                )
            )
        return out

    return Ask(writes.where(F.col("topic").isin(topics) & (F.col("change") != "kept")).orderBy("zxid"), read)


def impact(bundle: Bundle, ids: DataFrame, topics: list[str]) -> Ask[list[Impact]]:
    """Per topic: which replicas will be refused, which ISRs they left or will leave, which partitions
    nobody serves now (no live leader, or its last change's leader refused it: `acting.mark`), and which
    are served now with no in-sync replica left that accepts the current id."""
    v = views(bundle)
    stale = (
        ids.where((F.col("state") == "mismatch") & F.col("topic").isin(topics))
        .groupBy("topic", "partition")
        .agg(F.collect_set("broker_id").alias("stale"))
    )
    parts = v.partitions.where(F.col("topic").isin(topics)).select(
        "topic", "partition", "isr", "leader", "state_path"
    )
    changes = v.partition_changes
    refused = F.lit(False)
    if changes is not None:
        last = changes.where(F.col("topic").isin(topics)).groupBy("topic", "partition")
        parts = parts.join(
            last.agg(F.max_by("refused_by", "zxid").alias("refused_by")), ["topic", "partition"], "left"
        )
        refused = F.col("refused_by").isNotNull()
    live = F.coalesce(F.col("leader"), F.lit(-1)).isin(sorted(v.live_brokers))
    no_current = F.size(F.array_except(F.coalesce("isr", F.array()), "stale")) == 0
    joined = stale.join(parts, ["topic", "partition"], "left").select(
        "topic",
        "partition",
        "stale",
        "state_path",
        "leader",
        F.array_except("stale", F.coalesce("isr", F.array())).alias("out"),
        F.array_intersect("stale", F.coalesce("isr", F.array())).alias("leaving"),
        (~live | refused).alias("unavailable"),
        (live & ~refused & no_current).alias("at_risk"),
    )
    pair = F.transform(
        "out", lambda b: F.concat(F.col("partition").cast("string"), F.lit("@"), b.cast("string"))
    )
    leave = F.transform(
        "leaving", lambda b: F.concat(F.col("partition").cast("string"), F.lit("@"), b.cast("string"))
    )
    per_topic = (  # one row per topic
        joined.groupBy("topic").agg(
            F.sum(F.size("stale")).alias("replicas"),
            F.flatten(F.collect_list(pair)).alias("out_of_isr"),
            F.flatten(F.collect_list(leave)).alias("will_leave"),
            F.sort_array(F.collect_list(F.when(F.col("unavailable"), F.col("partition")))).alias(
                "unavailable"
            ),
            F.sort_array(F.collect_list(F.when(F.col("at_risk"), F.col("partition")))).alias("at_risk"),
            F.sort_array(F.collect_set(F.when(F.col("at_risk"), F.col("leader")))).alias("at_risk_leaders"),
            F.slice(F.sort_array(F.collect_list("state_path")), 1, 3).alias("paths"),
        )
    )
    known = changes is not None
    return Ask(
        per_topic,
        lambda rs: [
            Impact(
                r.topic,
                r.replicas,
                sorted(r.out_of_isr),
                sorted(r.will_leave),
                [p for p in r.unavailable if p is not None],
                [p for p in r.paths if p],
                [p for p in r.at_risk if p is not None],
                [b for b in r.at_risk_leaders if b is not None],
                known,
            )
            for r in rs
        ],
    )
