"""The topicId mismatch (seed 001): which replicas hold an id ZooKeeper no longer has, why, what it breaks.

A broker records its topic's id in each partition dir (`partition.metadata`, 2.8+, KIP-516) and refuses a
LeaderAndIsr whose id differs (INCONSISTENT_TOPIC_ID): at 2.8 only for a partition it has loaded since it
started (Partition.checkOrSetTopicId, 2.8.2 l.438-463), at 3.x against the log on disk
(ReplicaManager.hasConsistentTopicId, 3.6.2 l.1966). A refused follower never fetches and leaves the ISR.
The id changes when a controller finds a topic znode without `topic_id` and mints one
(initializeControllerContext / processTopicChange): the znode lost it because a pre-2.8 tool rewrote it
(KAFKA-14190) or a controller with IBP < 2.8 did (KAFKA-12835). The causes are in `topic_id_cause.py`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from workbench.analysis import topic_id_cause
from workbench.analysis.contract import CRITICAL, WARNING, Analysis, Kind, Need, maybe, two_halves
from workbench.analysis.described import taken
from workbench.analysis.findings import Coverage, Finding, file_ref, first_refs, ranges, zk_ref
from workbench.kafka.logdir import PARTITION_METADATA
from workbench.kafka.znode_frames import epoch_of
from workbench.kafka.znodes import CONTROLLER_EPOCH, TOPIC_PATH
from workbench.model.views import views

if TYPE_CHECKING:
    from workbench.frames import Bundle

CHECK = "topic_ids"


def replica_ids(bundle: Bundle) -> DataFrame:
    """Every live replica with the id on its disk and ZooKeeper's: broker_id, topic, partition,
    disk_topic_id, zk_topic_id, state (match, mismatch, zk_missing, no_metadata, no_topic), metadata_file."""
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


def unread_metadata(bundle: Bundle) -> list[str]:
    """Per broker, the live replicas whose topic id is unknown because a pasted listing shows their dir
    (with its partition.metadata, or without its files as `ls -l` does) but no copy of the file is there."""
    pasted = sorted({d.broker_id for d in bundle.evidence.log_dirs if d.pasted and d.broker_id is not None})
    if not pasted:
        return []
    where = ["broker_id", "log_dir", "dir_name"]
    dirs = (
        bundle.datadir_files.where(
            F.col("broker_id").isin(pasted) & (F.col("dir_state") == "live") & F.col("line_no").isNotNull()
        )
        .groupBy(*where)
        .agg(
            F.max((F.col("file") == PARTITION_METADATA).cast("int")).alias("listed"),
            F.count("file").alias("files"),
        )
        .where((F.col("listed") == 1) | (F.col("files") == 0))
    )
    unread = dirs.join(bundle.partition_metadata.select(*where), where, "left_anti")
    return [
        f"broker {r.broker_id}: partition.metadata of {r['count']} replica(s) a pasted listing shows, "
        "not copied beside it"
        for r in unread.groupBy("broker_id").count().orderBy("broker_id").collect()
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


@dataclass(frozen=True)
class Mismatch(topic_id_cause.Stale):
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
class Disagreeing:
    """One id a topic's replicas hold on disk, where they hold more than one."""

    topic: str
    disk_topic_id: str
    replicas: int
    files: list[str]


@dataclass(frozen=True)
class Refusal:
    """A broker's lines refusing a topic id for a topic (per pair of ids): the partitions, how many lines,
    the first and last (broker's clock) and the first lines as (file, line)."""

    broker_id: int
    topic: str | None
    log_topic_id: str | None
    request_topic_id: str | None
    partitions: list[int]
    lines: int
    first: datetime
    last: datetime
    refs: list[tuple[str, int]]


@dataclass(frozen=True)
class ShownWithout:
    """A topic znode a pasted ZooKeeper shell showed without topic_id."""

    topic: str
    znode_version: int | None
    mzxid: int | None
    printed: Printed


@dataclass
class Facts:
    """What the topic-id analysis judges. `expected`: whether the version has topic ids (None: version
    unknown); `unread`: the replicas whose partition.metadata a pasted listing shows but no copy holds;
    `mismatches` against ZooKeeper's tree, the topic znodes of those topics and of those without an id
    (`absent`); the replicas' disagreements and the brokers' refusals; without the tree, what pastes
    printed (`pasted`: the kinds of paste read, None where none was); the causes' facts (None: no topic
    affected)."""

    expected: bool | None
    version: str | None
    unread: list[str] = field(default_factory=list)
    mismatches: list[Mismatch] = field(default_factory=list)
    known: dict[str, topic_id_cause.Znode] = field(default_factory=dict)
    absent: list[topic_id_cause.Znode] = field(default_factory=list)
    disagreements: list[Disagreeing] = field(default_factory=list)
    refusals: list[Refusal] = field(default_factory=list)
    pasted: list[str] | None = None
    printed: list[Mismatch] = field(default_factory=list)
    shown_without: list[ShownWithout] = field(default_factory=list)
    affected: list[str] = field(default_factory=list)
    causes: topic_id_cause.Facts | None = None


def facts(bundle: Bundle) -> Facts:
    v = views(bundle)
    ev = v.evidence
    f = Facts(v.topic_ids_expected, ev.kafka_version)
    if f.expected is False:
        return f
    f.unread = unread_metadata(bundle)
    if ev.zk_state:
        f.mismatches = [
            Mismatch(r.topic, r.broker_id, r.disk_topic_id, r.zk_topic_id, list(r.partitions), list(r.files))
            for r in mismatches(bundle).collect()
        ]
        f.absent = [_znode(t) for t in v.topics.where(F.col("topic_id").isNull()).collect()]
    elif ev.pasted:  # the ids pasted output printed stand in
        _from_pastes(bundle, f)
    named = sorted({r.topic for r in f.mismatches} | {t.topic for t in f.absent})
    if named:
        f.known = {r.topic: _znode(r) for r in v.topics.where(F.col("topic").isin(named)).collect()}
    f.disagreements = [
        Disagreeing(r.topic, r.disk_topic_id, r.replicas, list(r.files))
        for r in disagreements(bundle).collect()
    ]
    f.refusals = [
        Refusal(
            r.broker_id,
            r.topic,
            r.log_topic_id,
            r.request_topic_id,
            [p for p in r.partitions if p is not None],
            r.lines,
            r.first,
            r.last,
            [(x.file, x.line_no) for x in r.refs],
        )
        for r in refusals(bundle).collect()
    ]
    f.affected = sorted(
        {r.topic for r in f.mismatches}
        | {r.topic for r in f.disagreements}
        | {r.topic for r in f.refusals if r.topic}
        | {t.topic for t in f.absent}
    )
    if f.affected:
        writes = znode_history(bundle) if ev.zk_history else None
        f.causes = topic_id_cause.facts(bundle, f.affected, f.mismatches, replica_ids(bundle), writes)
    return f


def _znode(r: Any) -> topic_id_cause.Znode:
    return topic_id_cause.Znode(
        r.topic, r.path, r.topic_id, r.znode_version, r.czxid, r.mzxid, r.data_version
    )


def _from_pastes(bundle: Bundle, f: Facts) -> None:
    """Without ZooKeeper's tree: the mismatches against the ids pasted output printed, and the topic
    znodes a pasted shell showed without `topic_id`."""
    printed = printed_ids(bundle).cache()
    f.pasted = sorted(r.source for r in printed.select("source").distinct().collect())
    f.printed = [
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
    f.shown_without = [
        ShownWithout(
            r.topic, r.znode_version, r.mzxid, Printed(r.how, r.file, r.line_no, r.taken_at, r.command)
        )
        for r in printed.where(F.col("printed_id").isNull()).orderBy("topic").collect()
    ]
    printed.unpersist()


def judge(f: Facts, coverage: Coverage) -> list[Finding]:
    """Every topic-id finding, with the root cause and impact of each affected topic."""
    if f.expected is False:
        coverage.not_applicable(CHECK, f"Kafka {f.version} has no topic ids (they came with 2.8, KIP-516)")
        return []
    if f.expected is None:
        coverage.add(CHECK, ["the Kafka version (manifest kafka_version): topic ids assumed in use"])
    coverage.add(CHECK, f.unread)
    out: list[Finding] = []
    if f.pasted is not None:
        coverage.add(CHECK, used=[f"the topic ids a pasted {u} printed" for u in f.pasted])
        out += [_printed_mismatch(r) for r in f.printed]
        out += [_missing_shown(r) for r in f.shown_without]
    out += [_mismatch(r, f.known[r.topic]) for r in f.mismatches]
    by_topic: dict[str, list[Disagreeing]] = {}
    for d in f.disagreements:
        by_topic.setdefault(d.topic, []).append(d)
    out += [_disagreement(topic, ids) for topic, ids in sorted(by_topic.items())]
    out += [_refusal(r) for r in f.refusals]
    out += [_missing(t) for t in sorted(f.absent, key=lambda t: t.topic)]
    if f.causes is not None:
        out += topic_id_cause.causes(f.causes, f.affected, f.mismatches)
    return out


def _mismatch(r: Mismatch, t: topic_id_cause.Znode) -> Finding:
    return _stale(r, f"ZooKeeper says {r.said_id}", zk_ref(t.path, t.mzxid))


def _printed_mismatch(r: Mismatch) -> Finding:
    p = r.printed
    assert p is not None
    said = f"{p.how} {r.said_id} ({taken(p.taken_at)}; the partition.metadata as copied into the bundle)"
    return _stale(r, said, file_ref(p.file, p.line_no))


def _missing_shown(r: ShownWithout) -> Finding:
    p = r.printed
    said = f"as a pasted `{p.command}` showed, {taken(p.taken_at)}"
    return _no_id(r.topic, r.znode_version, r.mzxid, said, file_ref(p.file, p.line_no))


def _stale(r: Mismatch, said: str, ref: str) -> Finding:
    """A broker's replicas whose partition.metadata holds another id than the cluster's (`said`)."""
    return Finding(
        "topic_id.mismatch",
        CRITICAL,
        {"topic": r.topic, "broker": r.broker_id, "partitions": r.partitions, "topic_id": r.said_id},
        f"Broker {r.broker_id} holds {len(r.partitions)} replica(s) of {r.topic} (partitions "
        f"{ranges(r.partitions)}) whose partition.metadata says topic id {r.disk_topic_id}, but {said}: the "
        "broker refuses the controller's LeaderAndIsr for them (INCONSISTENT_TOPIC_ID).",
        (ref, *first_refs([file_ref(x) for x in r.files], 3)),
    )


def _disagreement(topic: str, ids: list[Disagreeing]) -> Finding:
    shown = "; ".join(
        f"{r.disk_topic_id} on {r.replicas} replica(s)" for r in sorted(ids, key=lambda r: -r.replicas)
    )
    refs = [file_ref(x) for r in ids for x in r.files]
    return Finding(
        "topic_id.replicas_disagree",
        WARNING,
        {"topic": topic, "topic_ids": sorted(r.disk_topic_id for r in ids)},
        f"The replicas of {topic} disagree on its topic id: {shown}.",
        tuple(first_refs(refs, 6)),
    )


def _refusal(r: Refusal) -> Finding:
    return Finding(
        "topic_id.refused",
        CRITICAL,
        {"topic": r.topic, "broker": r.broker_id, "partitions": r.partitions},
        f"Broker {r.broker_id} refused the topic id {r.request_topic_id} for {r.topic} partitions "
        f"{ranges(r.partitions)}: its log holds {r.log_topic_id} ({r.lines} line(s), "
        f"{r.first:%Y-%m-%d %H:%M:%S} to {r.last:%H:%M:%S} broker time).",
        tuple(file_ref(file, line) for file, line in r.refs),
    )


def _missing(t: topic_id_cause.Znode) -> Finding:
    return _no_id(
        t.topic, t.znode_version, t.mzxid, f"last written at zxid 0x{t.mzxid:x}", zk_ref(t.path, t.mzxid)
    )


def _no_id(topic: str, version: int | None, mzxid: int | None, said: str, ref: str) -> Finding:
    """A topic znode without topic_id (`said`: where it was seen)."""
    form = f"version {version}" if version is not None else "unreadable"
    pre = " (a pre-2.8 form)" if (version or 0) < 3 else ""
    return Finding(
        "topic_id.missing",
        CRITICAL,
        {"topic": topic, **({"zxid": f"0x{mzxid:x}"} if mzxid is not None else {})},
        f"The topic znode of {topic} has no topic_id ({form}{pre}, {said}): the next controller to start "
        "will mint a new id, and every replica that recorded the old one will refuse it.",
        (ref,),
    )


_TOPIC = {"topic": str}
ANALYSIS = Analysis(
    CHECK,
    needs={
        Need.ZK_STATE: "no topic id to compare the data dirs with",
        Need.DATA_DIRS: "the ids in the replicas' partition.metadata",
        Need.LOGS: "the brokers' refusals",
        Need.PASTED: "the topic ids a kafka-topics --describe or a ZooKeeper shell printed, at their moment",
    },
    wants={Need.ZK_HISTORY: "the root cause can only be 'likely'"},
    run=two_halves(facts, judge),
    kinds=(
        Kind(
            "topic_id.mismatch", (CRITICAL,), {**_TOPIC, "broker": int, "partitions": list, "topic_id": str}
        ),
        Kind("topic_id.replicas_disagree", (WARNING,), {**_TOPIC, "topic_ids": list}),
        Kind("topic_id.refused", (CRITICAL,), {"topic": maybe(str), "broker": int, "partitions": list}),
        Kind("topic_id.missing", (CRITICAL,), _TOPIC, {"zxid": str}),  # zxid: where ZooKeeper's stat shows it
        *topic_id_cause.KINDS,
    ),
    plots="workbench.plots.standard:topic_ids",
)
findings = ANALYSIS.findings
