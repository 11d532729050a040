"""Each partition, change by change, as ZooKeeper's history holds it: its state (leader, ISR), its
assignment (replicas, those being added), whether its topic is queued for deletion and whether the
controller had begun deleting it (`deletions_started`), and whether its leader is registered, at every txn
that changed any of them, in zxid order (the brokers' clocks play no part).
The health series and the balance checks read it; each row also says what the partition then adds to
the counts Kafka keeps (`counted_as`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from workbench.kafka.znode_frames import PARTITION_STATE, TOPIC_ZNODE
from workbench.kafka.znodes import DELETE_MARKER_PATH, STATE_PATH, TOPIC_CONFIG_PATH, TOPIC_PATH
from workbench.model import acting
from workbench.model.deletions_started import deletions_started
from workbench.model.skew import skew_ms
from workbench.model.views import CREATES, DELETES, views

if TYPE_CHECKING:
    from workbench.frames import Bundle

WHOLE_CLUSTER = -1  # the broker of a cluster-wide count
ORDER = ("zxid", "time", "seq")  # the order of a partition's changes
FILLED = ("st", "asg", "queued", "deleting")  # a partition's columns carried forward to its later changes


def partition_changes(bundle: Bundle) -> DataFrame:
    """Every partition at each txn that changed its state, its assignment, its topic's deletion marker or
    deletion's start or its leader's registration: topic, partition, zxid, time, seq and ref (null: the zxid
    orders and names a txn's row; `partition_log.logged_changes` gives a line's), leader, isr, replicas,
    adding, removing, queued (its topic marked for deletion), deleting (its deletion begun), registered (its
    leader), min_isr, refused_by and refused_at (the line of the leader's refusal to lead, `acting`) and
    counted_as (what it adds to the counts)."""
    watched = views(bundle).watched_history
    assert watched is not None, "partition_changes needs ZooKeeper's txn logs"
    raw = _partition_rows(watched.txns, watched.before, watched.before_zxid, deletions_started(bundle))
    # per txn (a moment between txns, where the controller's line times a deletion's begin, is a row of
    # its own: the last txn before it, and its time)
    per_txn = raw.groupBy("topic", "partition", "zxid", "time").agg(
        *[F.last(c, ignorenulls=True).alias(c) for c in FILLED],
    )
    w = Window.partitionBy("topic", "partition").orderBy("zxid", "time")
    filled = per_txn.select(
        "topic",
        "partition",
        "zxid",
        "time",
        *[F.last(c, ignorenulls=True).over(w).alias(c) for c in FILLED],
    ).withColumn("next_zxid", F.lead("zxid").over(w))
    regs = views(bundle).registrations.select(
        F.col("broker_id").alias("broker"), "czxid", "registered", "ended_zxid", "ended"
    )
    # A leader's registration beginning or ending is a change for every partition it leads then.
    moves = regs.select(
        "broker", F.col("czxid").alias("at"), F.col("registered").alias("at_time"), F.lit(True).alias("up")
    ).unionByName(
        regs.where(F.col("ended_zxid").isNotNull()).select(
            "broker",
            F.col("ended_zxid").alias("at"),
            F.col("ended").alias("at_time"),
            F.lit(False).alias("up"),
        )
    )
    f, m, r = filled.alias("f"), moves.alias("m"), regs.alias("r")
    by_registration = f.join(
        m,
        (F.col("f.st.leader") == F.col("m.broker"))
        & (F.col("m.at") > F.col("f.zxid"))
        & (F.col("f.next_zxid").isNull() | (F.col("m.at") < F.col("f.next_zxid"))),
    ).select(
        "f.topic",
        "f.partition",
        F.col("m.at").alias("zxid"),
        F.col("m.at_time").alias("time"),
        "f.st",
        "f.asg",
        "f.queued",
        "f.deleting",
        F.col("m.up").alias("registered"),
    )
    # Not registered at a txn: no registration of its leader then. Over a tree not known (the history
    # starts after a gap or a purge, without a snapshot, that may have made or ended registrations), that
    # is known only once one of its registrations was seen to end; before that, it is unknown (null).
    first_end = regs.groupBy("broker").agg(F.min("ended_zxid").alias("first_end")).alias("e")
    unregistered = F.lit(False)
    if not views(bundle).brokers_known:
        unregistered = F.when(F.col("e.first_end") <= F.col("f.zxid"), False)
    at_own_txn = (
        f.join(
            r,
            (F.col("f.st.leader") == F.col("r.broker"))
            & (F.col("r.czxid") <= F.col("f.zxid"))
            & (F.col("r.ended_zxid").isNull() | (F.col("f.zxid") < F.col("r.ended_zxid"))),
            "left",
        )
        .join(first_end, F.col("f.st.leader") == F.col("e.broker"), "left")
        .select(
            *[f"f.{c}" for c in filled.columns if c != "next_zxid"],
            F.when(F.col("r.broker").isNotNull(), True).otherwise(unregistered).alias("registered"),
        )
    )
    registered = at_own_txn.unionByName(by_registration)
    overrides, default = min_isr(bundle)
    out = registered.join(overrides, "topic", "left").withColumn(
        "min_isr", F.coalesce("override", F.lit(default).cast("int"))
    )
    flat = out.select(
        "*",
        F.lit(None).cast("long").alias("seq"),
        F.col("st.leader").alias("leader"),
        F.col("st.leader_epoch").alias("leader_epoch"),
    )
    return acting.mark(bundle, flat, skew_ms(bundle), views(bundle).history_base[1]).select(
        "topic",
        "partition",
        "zxid",
        "time",
        "seq",
        F.lit(None).cast("string").alias("ref"),
        "leader",
        "leader_epoch",
        F.col("st.isr").alias("isr"),
        F.col("asg.replicas").alias("replicas"),
        F.col("asg.adding").alias("adding"),
        F.col("asg.removing").alias("removing"),
        F.coalesce("queued", F.lit(False)).alias("queued"),
        F.coalesce("deleting", F.lit(False)).alias("deleting"),
        "registered",
        "min_isr",
        "refused_by",
        "refused_at",
        counted_as().alias("counted_as"),
    )


def _leader_known() -> Column:
    """Whether a change tells if the partition had a live leader: no leader (-1), or one whose
    registration is known either way."""
    return F.col("leader").isNotNull() & ((F.col("leader") < 0) | F.col("registered").isNotNull())


def stretches(changes: DataFrame, on: Column) -> DataFrame:
    """The changes while `on` holds (a partition offline, under-replicated, being reassigned ...), each
    with `stretch`, its run's number within the partition, and next_zxid / next_time / next_led (its
    leader, leader epoch and whether registered), the change after it: on a run's last row, the change
    that ended the run (null: it lasted to the capture);
    `first_seen` marks a change before which whether the partition had a live leader was not known (its
    state not yet seen, or its leader's registration unknown); `before`, the last leader named before it.
    Rows order by zxid, then time, then seq (`service.counted` adds rows between txns; a line's rows have
    no zxid)."""
    w = Window.partitionBy("topic", "partition").orderBy(*ORDER)
    flagged = changes.withColumn("on", F.coalesce(on, F.lit(False)))
    starts = F.col("on") & ~F.coalesce(F.lag("on").over(w), F.lit(False))
    named = F.when(F.col("leader") >= 0, F.col("leader"))
    before = w.rowsBetween(Window.unboundedPreceding, -1)
    return (
        flagged.select(
            "*",
            starts.alias("starts"),
            F.lead("zxid").over(w).alias("next_zxid"),
            F.lead("time").over(w).alias("next_time"),
            F.lead("ref").over(w).alias("next_ref"),
            F.lead(F.struct("leader", "leader_epoch", "registered", "isr")).over(w).alias("next_led"),
            F.last(named, ignorenulls=True).over(before).alias("before"),
            (~F.coalesce(F.lag(_leader_known()).over(w), F.lit(False))).alias("first_seen"),
        )
        .withColumn("stretch", F.sum(F.col("starts").cast("int")).over(w))
        .where("on")
    )


def _partition_rows(
    h: DataFrame, base: DataFrame | None, base_zxid: int, started: DataFrame | None
) -> DataFrame:
    """State (st), assignment (asg), deletion-marker (queued) and deletion-begun (deleting: `started`'s
    rows) rows per partition and zxid; a null column says nothing, st/asg with present=false say the
    znode is gone. The base tree's rows come at its zxid, as if written then."""
    ops = h.where(F.col("op").isin(*CREATES, "setData", *DELETES)).select(
        "zxid",
        "time",
        "path",
        "data",
        F.col("op").isin(*CREATES).alias("created"),
        F.col("op").isin(*DELETES).alias("gone"),
    )
    if base is not None:
        ops = ops.unionByName(
            base.select(
                F.lit(base_zxid).cast("long").alias("zxid"),
                F.lit(None).cast("timestamp").alias("time"),
                "path",
                "data",
                F.lit(True).alias("created"),
                F.lit(False).alias("gone"),
            )
        )
    written = ~F.col("gone")
    state = F.from_json("data", PARTITION_STATE)
    states = ops.where(F.col("path").rlike(STATE_PATH)).select(
        F.regexp_extract("path", STATE_PATH, 1).alias("topic"),
        F.regexp_extract("path", STATE_PATH, 2).try_cast("int").alias("partition"),
        "zxid",
        "time",
        F.struct(
            written.alias("present"),
            F.when(written, state["leader"]).alias("leader"),
            F.when(written, state["leader_epoch"]).alias("leader_epoch"),
            F.when(written, state["isr"]).alias("isr"),
        ).alias("st"),
    )
    # The topic znode and the deletion marker speak for every partition the topic ever had: a partition
    # missing from a written topic znode, or a topic znode deleted, is no longer assigned.
    topic_level = ops.select(
        F.coalesce(
            F.nullif(F.regexp_extract("path", TOPIC_PATH, 1), F.lit("")),
            F.nullif(F.regexp_extract("path", DELETE_MARKER_PATH, 1), F.lit("")),
        ).alias("topic"),
        "zxid",
        "time",
        F.col("path").rlike(TOPIC_PATH).alias("is_topic"),
        F.when(~F.col("gone"), F.from_json("data", TOPIC_ZNODE)).alias("z"),
        F.when(F.col("created"), True).when(F.col("gone"), False).alias("marked"),
    ).where(F.col("topic").isNotNull())
    known = (
        topic_level.where("is_topic")
        .select("topic", F.explode(F.map_keys("z.partitions")).alias("p"))
        .distinct()
    )
    replicas = F.col("z.partitions")[F.col("p")]
    per_partition = topic_level.join(known, "topic").select(
        "topic",
        F.col("p").cast("int").alias("partition"),
        "zxid",
        "time",
        F.when(
            F.col("is_topic"),
            F.struct(
                replicas.isNotNull().alias("present"),
                replicas.alias("replicas"),
                *[
                    F.when(replicas.isNotNull(), F.coalesce(F.col(f"z.{k}_replicas")[F.col("p")], F.array()))
                    .cast("array<int>")
                    .alias(k)
                    for k in ("adding", "removing")
                ],
            ),
        ).alias("asg"),
        F.when(~F.col("is_topic"), F.col("marked")).alias("queued"),
        F.lit(None).cast("boolean").alias("deleting"),
    )
    if started is not None:
        per_partition = per_partition.unionByName(
            started.join(known, "topic").select(
                "topic",
                F.col("p").cast("int").alias("partition"),
                "zxid",
                "time",
                F.lit(None).cast(per_partition.schema["asg"].dataType).alias("asg"),
                F.lit(None).cast("boolean").alias("queued"),
                F.col("started").alias("deleting"),
            )
        )
    return states.select(
        "*",
        F.lit(None).cast(per_partition.schema["asg"].dataType).alias("asg"),
        F.lit(None).cast("boolean").alias("queued"),
        F.lit(None).cast("boolean").alias("deleting"),
    ).unionByName(per_partition.select("*", F.lit(None).cast(states.schema["st"].dataType).alias("st")))


def recounted() -> Column:
    """`counted_as` again from a change's own columns (`partition_changes`' rows), for a row whose
    `registered` or `refused_by` was read anew."""
    st = F.struct(F.col("leader").isNotNull().alias("present"), "leader", "isr")
    asg = F.struct(F.col("replicas").isNotNull().alias("present"), "replicas", "adding")
    return counted_as(st, asg)


def counted_as(st: Column | None = None, asg: Column | None = None) -> Column:
    """What a partition adds to the counts at one change: (count, broker) pairs. Each partition is in at
    most one of offline (no leader, or one not registered: OfflinePartitionsCount), no_acting_leader (a
    registered leader that refused to lead, `acting`) and under_replicated / under_min_isr (its acting
    leader's ISR); `leaders` counts ZooKeeper's leader. Counted as Kafka counts: offline and without an
    acting leader leave out only the topics whose deletion had begun (facts
    `offline_count_leaves_out_deletions_started`), the controller's imbalance (preferred, not_leading)
    every topic queued (`auto_rebalance_leaves_topics_queued_for_deletion`), the rest nothing
    (`under_replicated_counts_every_partition_led`)."""
    st = F.col("st") if st is None else st
    asg = F.col("asg") if asg is None else asg
    assigned = F.coalesce(asg["present"], F.lit(False))
    begun = F.coalesce(F.col("deleting"), F.lit(False))
    queued = F.coalesce(F.col("queued"), F.lit(False))
    has_state = F.coalesce(st["present"], F.lit(False))
    first, leader = asg["replicas"][0], st["leader"]
    online = has_state & (leader >= 0) & F.col("registered")
    acting = online & F.col("refused_by").isNull()
    isr = F.size(st["isr"])
    items = [
        F.when(first.isNotNull() & ~queued, count("preferred", first)),
        F.when(has_state & (leader != first) & ~queued, count("not_leading", first)),
        F.when(has_state & ~online & ~begun, count("offline")),
        F.when(online & ~acting & ~begun, count("no_acting_leader")),
        F.when(online, count("leaders", leader)),
        F.when(acting & (isr < F.size(asg["replicas"]) - F.size(asg["adding"])), count("under_replicated")),
        F.when(acting & (isr < F.col("min_isr")), count("under_min_isr")),
    ]
    return F.filter(F.array(*items), lambda x: x.isNotNull() & assigned)


def count(name: str, broker: Column | None = None) -> Column:
    b = broker if broker is not None else F.lit(WHOLE_CLUSTER)
    return F.struct(F.lit(name).alias("count"), b.cast("int").alias("broker"))


def min_isr(bundle: Bundle) -> tuple[DataFrame, int | None]:
    """min.insync.replicas per topic: its override in `/config/topics/<t>`, and the brokers' default from
    server.properties (Kafka's 1 where a file does not set it); None when no broker's file is in the
    bundle, or the files disagree."""
    config = F.from_json("data", "config map<string,string>")["config"]
    overrides = bundle.znodes.where(F.col("path").rlike(TOPIC_CONFIG_PATH)).select(
        F.regexp_extract("path", TOPIC_CONFIG_PATH, 1).alias("topic"),
        config["min.insync.replicas"].cast("int").alias("override"),
    )
    values = set(views(bundle).evidence.config("min.insync.replicas", "1").values())
    default = int(values.pop()) if len(values) == 1 and next(iter(values)).strip().isdigit() else None
    return overrides.where(F.col("override").isNotNull()), default
