"""Who served each partition: ZooKeeper's partition states (`partition_history`) with what ZooKeeper never
shows, the stretches a leader it names did not act.

- a leader that refused the LeaderAndIsr making it leader (`acting.mark`: `refused_by`);
- a leader whose broker did no work while registered (the brokers' lives, `history.brokers.silent_windows`):
  it went silent before ZooKeeper expired its session, from the moment the expiry (or its own client's
  time-out line) proves it silent, where its finding's outage begins at the shortest, until the expiry; or
  it stood still and ran on in its session, which ZooKeeper never notices, so its partitions look led
  throughout, yet nobody served them from at most a ping interval after its client was last heard until
  its time-out line, written as it ran again;
- the same where ZooKeeper expired its session but the broker registered anew before any controller saw
  it gone (`history.brokers.taken_back`): no leader was elected for what it led, and the process that ran
  again served it (`expired_session_keeps_leaderships`), so its registration's gap counts as the
  controller that took it back counts it, registered, and the pause alone as the outage.

The health series, `state_at`, the plots and the report read the same rows (`served`), and each stretch
nobody served a partition is one outage (`unserved`), kept once per bundle (`outages`) for the leaderless
analysis, the report's impact and its plot, so that a number is the same everywhere.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from workbench.model.across_gap import carried_on
from workbench.model.history.brokers import silent_windows, taken_back
from workbench.model.partition_history import ORDER, count, recounted, stretches
from workbench.model.partition_log import logged_changes
from workbench.model.reads import declare
from workbench.model.views import views
from workbench.spark import kept

if TYPE_CHECKING:
    from workbench.frames import Bundle


def served(bundle: Bundle) -> DataFrame | None:
    """The partitions' changes the service timeline is made of, made once per bundle and kept (the
    outages, the health series, `state_at` and the plots read it): ZooKeeper's as `counted` reads them,
    else, where its history is absent, the controller's lines' (`partition_log.logged_changes`, no leader
    known to be silent); None with neither."""
    changes = views(bundle).partition_changes
    if changes is not None:
        return views(bundle).memo("served", lambda: kept(counted(bundle, changes)))
    if not views(bundle).evidence.with_logs:
        return None
    silent = F.lit(None).cast("string").alias("silent")
    return views(bundle).memo("served", lambda: kept(logged_changes(bundle).select("*", silent)))


def outages(bundle: Bundle) -> DataFrame | None:
    """Each stretch nobody served a partition (`unserved` of `served` to the capture, from ZooKeeper's
    history or the controller's lines), carried on from before
    the gap the history read resumes after (`across_gap.carried_on`: `across`), with `ended_from`, the
    start (czxid) of the registration the leader that ended it held as it was elected (null: still, or
    not found): made once per bundle and kept, the one outage model the leaderless analysis and, with
    ZooKeeper's history, the report's impact and its plot read; None with neither ZooKeeper's history nor
    the brokers' lines."""
    rows = served(bundle)
    if rows is None:
        return None
    ms = views(bundle).as_of_ms
    captured = datetime.fromtimestamp(ms / 1000, tz=timezone.utc) if ms is not None else None
    regs = views(bundle).registrations.select(
        F.col("broker_id").alias("r_broker"),
        F.col("czxid").alias("ended_from"),
        F.col("ended_zxid").alias("r_to"),
    )

    def made() -> DataFrame:
        stretch = carried_on(unserved(rows, captured), bundle)
        held = (
            (F.col("r_broker") == F.col("ended_leader"))
            & (F.col("ended_from") < F.col("ended_zxid"))
            & (F.col("r_to").isNull() | (F.col("r_to") > F.col("ended_zxid")))
        )
        return kept(stretch.join(F.broadcast(regs), held, "left").drop("r_broker", "r_to"))

    return views(bundle).memo("outages", made, "outages")


declare(outages)  # a view the analyses read (`Analysis.reads`)


def elected_at_once() -> Column:
    """Whether an outage (`outages`' row) ended with a leader elected in the event in which the controller
    learned its leader was gone: in its ISR and registered since before it went offline, with no refusal
    within (`leader_is_first_live_isr_replica`), so Kafka's OfflinePartitionsCount never held it
    (`offline_count_set_after_each_event`); one outside the ISR may have waited for a change of config (an
    unclean election). False where the leader's registration is not known."""
    return F.coalesce(
        (F.col("ended_from") < F.col("off_zxid"))
        & ~F.array_contains("out_of_isr", F.col("ended_leader"))
        & ~F.array_contains("whys", "refused"),
        F.lit(False),
    )


def counted(bundle: Bundle, changes: DataFrame) -> DataFrame:
    """`changes` as the counts and the service timeline read them, with `silent` (why its leader did no
    work, SILENT or PAUSED of `history.brokers`; null where it did, or where ZooKeeper and the refusals
    show why not): a partition whose leader went silent counts as without an acting leader while it was,
    not as under-replicated or healthy. One more row begins that for each partition the broker then led,
    at the moment it is proven (`time`; `zxid` the last txn before it), and for a pause one more ends it,
    at its time-out line. Rows order by zxid, then time. A registration's gap that was taken back
    (`taken_back`) counts as registered."""
    changes = _registered_as_taken_back(changes, taken_back(bundle))
    silent = silent_windows(bundle)
    if silent is None:
        return changes.withColumn("silent", F.lit(None).cast("string"))
    w = F.broadcast(silent).alias("w")
    c = changes.alias("c")
    columns = [x for x in changes.columns if x != "counted_as"]
    led = (F.col("c.leader") == F.col("w.broker")) & F.coalesce(F.col("c.registered"), F.lit(False))
    inside = (
        (F.col("c.zxid") > F.col("w.since_zxid"))
        & (F.col("w.until_zxid").isNull() | (F.col("c.zxid") < F.col("w.until_zxid")))
        & (F.col("w.until_last").isNull() | (F.col("c.zxid") <= F.col("w.until_last")))
    )
    flagged = c.join(w, led & inside, "left").select(
        *[F.col(f"c.{x}") for x in columns],
        F.when(F.col("w.why").isNotNull(), _not_acting(F.col("c.counted_as")))
        .otherwise(F.col("c.counted_as"))
        .alias("counted_as"),
        F.col("w.why").alias("silent"),
    )
    begun = _in_effect(c, w, "since_zxid").select(
        *_at(columns, "since_zxid", "since"),
        _not_acting(F.col("r.counted_as")).alias("counted_as"),
        F.col("why").alias("silent"),
    )
    ended = _in_effect(c, w.where(F.col("w.until").isNotNull()), "until_last").select(
        *_at(columns, "until_last", "until"),
        F.col("r.counted_as").alias("counted_as"),
        F.lit(None).cast("string").alias("silent"),
    )
    return flagged.unionByName(begun).unionByName(ended)


def _registered_as_taken_back(changes: DataFrame, gaps: list[tuple[int, int, int]]) -> DataFrame:
    """`changes` with each row of a taken-back registration's gap whose leader is its broker counted as
    registered: the controller that took it back never saw it gone, and it still led."""
    if not gaps:
        return changes
    inside: Column = F.lit(False)
    for broker, ended, again in gaps:
        inside = inside | ((F.col("leader") == broker) & F.col("zxid").between(ended, again - 1))
    back = F.col("_back")
    return (
        changes.withColumn("_back", inside & ~F.coalesce(F.col("registered"), F.lit(True)))
        .withColumn("registered", F.when(back, F.lit(True)).otherwise(F.col("registered")))
        .withColumn("counted_as", F.when(back, recounted()).otherwise(F.col("counted_as")))
        .drop("_back")
    )


def _in_effect(c: DataFrame, w: DataFrame, upto: str) -> DataFrame:
    """Per window and partition, the change in effect at the window's txn `upto` (r), where its leader is
    the window's broker and registered."""
    return (
        c.join(w, F.col("c.zxid") <= F.col(f"w.{upto}"))
        .groupBy("c.topic", "c.partition", *[F.col(f"w.{x}") for x in w.columns])
        .agg(F.max_by(F.struct(*[F.col(f"c.{x}") for x in c.columns]), "c.zxid").alias("r"))
        .where((F.col("r.leader") == F.col("broker")) & F.coalesce(F.col("r.registered"), F.lit(False)))
    )


def _at(columns: list[str], zxid: str, time: str) -> list[Column]:
    """A change's columns as of a moment between txns: its zxid the last txn before, its time the moment."""
    return [
        (F.col(zxid) if x == "zxid" else F.col(time) if x == "time" else F.col(f"r.{x}")).alias(x)
        for x in columns
    ]


def _not_acting(counted_as: Column) -> Column:
    """A counted_as whose leader is not acting: no_acting_leader instead of the ISR's counts."""
    kept = F.filter(
        counted_as, lambda x: ~x["count"].isin("under_replicated", "under_min_isr", "no_acting_leader")
    )
    return F.when(
        F.exists(counted_as, lambda x: x["count"] == "leaders"),
        F.array_union(kept, F.array(count("no_acting_leader"))),
    ).otherwise(counted_as)


# the first row of an outage that names a leader (the leader its election named, where it refused)
NAMED = ("time", "ref", "leader", "leader_epoch", "isr", "refused_by", "refused_at")


def unserved(rows: DataFrame, captured: Any) -> DataFrame:
    """Each stretch a partition had no acting leader, whatever the reason and however it changed within
    (a silent leader's partitions go offline when its session expires; a partition whose returning leader
    refuses it runs on): one episode, one outage. `rows`: `counted`, or `partition_log.logged_changes`.
    topic, partition, began/began_zxid/began_ref, ended/ended_zxid/ended_ref (null: still at the capture;
    a ref where a line, not a txn, tells it), lasted_ms (to the capture when still), count (offline or
    no_acting_leader, as it began), whys (why nobody served it, in order: offline, refused, SILENT,
    PAUSED); at its start the leader, its epoch, whether it was registered, who had refused it
    (`refused_by`, a line), the replicas out of its ISR, `first_seen` and `before`, the leader named
    before it (`stretches`); `named`, its first row naming a leader (NAMED; null: none); where it went
    offline, the first such change (off_zxid, off_began, off_leader, off_registered, off_queued: its topic
    marked for deletion; null: never), off_ms from then to its end, and off_run_ms, its longest run
    counted offline (OfflinePartitionsCount held it, whatever the leader that ended the run did); `back`:
    that leader ended it, registered anew at the same leader epoch (no leader was elected:
    `new_controller_takes_registrations_as_it_finds_them`); `ended_leader` and `ended_isr`, the leader and
    ISR of the change that ended it (null: still); `refusers`, the leaders that refused it within, in
    order, and `refusals`, their lines (the first five)."""
    off = F.exists("counted_as", lambda x: x["count"] == "offline")
    nobody = F.exists("counted_as", lambda x: x["count"].isin("offline", "no_acting_leader"))
    why = (
        F.when(off, F.lit("offline"))
        .when(F.col("refused_by").isNotNull(), F.lit("refused"))
        .otherwise(F.coalesce("silent", F.lit("refused")))
    )
    ended_at = F.coalesce(F.col("ended"), F.lit(captured).cast("timestamp"))
    order = F.struct(*ORDER)
    out_of_isr = F.sort_array(
        F.array_except(F.array_except("replicas", "adding"), F.coalesce("isr", F.array()))
    )

    def in_order(c: Column) -> Column:
        """`c` over the stretch's rows, in their order."""
        return F.transform(
            F.array_sort(F.collect_list(F.struct(order.alias("o"), c.alias("v")))), lambda x: x["v"]
        )

    start = [
        *("zxid", "time", "ref", "leader", "leader_epoch", "registered"),
        *("refused_by", "refused_at", "first_seen", "before"),
    ]
    refused = F.col("why") == "refused"
    # an offline run: the stretch's rows counted offline since its last row that was not
    within = Window.partitionBy("topic", "partition", "stretch").orderBy(*ORDER)
    run = Window.partitionBy("topic", "partition", "stretch", "run")
    until = F.coalesce(F.col("next_time"), F.lit(captured).cast("timestamp"))
    off_row_ms = F.when(off, F.unix_millis(until) - F.unix_millis("time"))
    return (
        stretches(rows, nobody)
        .withColumn("why", why)
        .withColumn("run", F.sum((~off).cast("int")).over(within))
        .withColumn("run_ms", F.sum(off_row_ms).over(run))
        .groupBy("topic", "partition", "stretch")
        .agg(
            F.min_by(F.struct(*start, out_of_isr.alias("out"), off.alias("off")), order).alias("s"),
            F.max_by(F.struct("next_zxid", "next_time", "next_ref", "next_led"), order).alias("e"),
            F.min_by(F.struct(*NAMED), F.when(F.col("leader") >= 0, order)).alias("n"),
            F.min_by(
                F.struct("zxid", "time", "leader", "leader_epoch", "registered", "queued"), F.when(off, order)
            ).alias("o"),
            in_order(F.col("why")).alias("all_whys"),
            in_order(F.when(refused, F.col("leader"))).alias("all_refusers"),
            F.slice(F.sort_array(F.collect_set("refused_by")), 1, 5).alias("refusals"),
            F.max("run_ms").alias("off_run_ms"),
        )
        .select(
            "topic",
            "partition",
            F.col("s.zxid").alias("began_zxid"),
            F.col("s.time").alias("began"),
            F.col("s.ref").alias("began_ref"),
            F.col("e.next_zxid").alias("ended_zxid"),
            F.col("e.next_time").alias("ended"),
            F.col("e.next_ref").alias("ended_ref"),
            F.when(F.col("s.off"), F.lit("offline")).otherwise(F.lit("no_acting_leader")).alias("count"),
            F.array_distinct("all_whys").alias("whys"),
            *[F.col(f"s.{x}").alias(x) for x in start[3:]],
            F.col("s.out").alias("out_of_isr"),
            F.col("o.zxid").alias("off_zxid"),
            F.col("o.time").alias("off_began"),
            F.col("o.leader").alias("off_leader"),
            F.col("o.registered").alias("off_registered"),
            F.col("o.queued").alias("off_queued"),
            (
                (F.col("e.next_led.leader") == F.col("o.leader"))
                & (F.col("e.next_led.leader_epoch") == F.col("o.leader_epoch"))
                & F.coalesce(F.col("e.next_led.registered"), F.lit(False))
            ).alias("back"),
            F.col("e.next_led.leader").alias("ended_leader"),
            F.col("e.next_led.isr").alias("ended_isr"),
            F.when(F.col("n.time").isNotNull(), F.col("n")).alias("named"),
            F.array_distinct(F.filter("all_refusers", lambda x: x.isNotNull())).alias("refusers"),
            "refusals",
            "off_run_ms",
        )
        .withColumn("lasted_ms", F.unix_millis(ended_at) - F.unix_millis("began"))
        .withColumn("off_ms", F.unix_millis(ended_at) - F.unix_millis("off_began"))
    )
