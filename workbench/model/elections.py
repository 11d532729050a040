"""Controller elections as views (read by the controller analysis, the cluster's state, the topic-id
causes, the report and the notebooks): each election from ZooKeeper's history, the controllers' own log
lines, and each new controller's steps from election to 'Ready to serve'.

From 2.1 an election is one multi in ZooKeeper: create the ephemeral `/controller` and bump
`/controller_epoch` (KafkaZkClient.registerControllerAndIncrementControllerEpoch @2.1.1 l.97); before, the
new controller's session writes `/controller_epoch` in a transaction of its own after creating
`/controller` (KafkaController.incrementControllerEpoch @1.1.1 l.612). So ZooKeeper's history orders
elections by zxid and times the gap without a controller on one clock (the ZooKeeper leader's).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from workbench.kafka.znode_frames import controller_of, epoch_of
from workbench.kafka.znodes import CONTROLLER, CONTROLLER_EPOCH
from workbench.model.reads import view
from workbench.model.views import views

if TYPE_CHECKING:
    from workbench.frames import Bundle

SCHEDULER_STEPS = ("starting_controller_scheduler",)  # the failover's last step after ready, from 0.11
EPOCH_LINE_WITHIN_S = 60  # an election line before 2.1 and its "incremented epoch" line: milliseconds apart


@view
def elected(bundle: Bundle) -> DataFrame:
    """Every /controller a broker created in ZooKeeper's history: zxid, time, session_id, broker, and the
    epoch that election wrote: its own session's first write of /controller_epoch from the create's zxid
    (the same zxid in a multi) until the next /controller create."""
    h = views(bundle).history.where(F.col("applied"))
    created = h.where((F.col("path") == CONTROLLER) & (F.col("op") == "create")).select(
        "zxid", "time", "session_id", controller_of(F.col("data")).alias("broker")
    )
    after = Window.partitionBy(F.lit(0)).orderBy("zxid")  # elections are few
    bounded = created.withColumn("next_zxid", F.lead("zxid").over(after))
    writes = h.where((F.col("path") == CONTROLLER_EPOCH) & F.col("op").isin("setData", "create")).select(
        F.col("zxid").alias("epoch_zxid"),
        F.col("session_id").alias("writer"),
        epoch_of(F.col("data")).alias("v"),
    )
    epochs = (
        bounded.join(
            writes,
            (F.col("writer") == F.col("session_id"))
            & (F.col("epoch_zxid") >= F.col("zxid"))
            & (F.col("next_zxid").isNull() | (F.col("epoch_zxid") < F.col("next_zxid"))),
        )
        .groupBy("zxid")
        .agg(F.min_by("v", "epoch_zxid").alias("epoch"))
    )
    return created.join(epochs, "zxid", "left")


@view
def elections(bundle: Bundle) -> DataFrame:
    """Every election in ZooKeeper's history (`elected`), with the previous controller's end (gone_zxid,
    gone_time, gone_by: 'session' or the session that deleted /controller)."""
    h = views(bundle).history.where(F.col("applied"))
    e = elected(bundle)
    closed = h.where(F.col("op") == "closeSession").select(
        F.col("session_id").alias("owner"), F.col("zxid").alias("gone_zxid"), F.col("time").alias("gone_time")
    )
    deleted = h.where((F.col("path") == CONTROLLER) & (F.col("op") == "delete")).select(
        F.col("zxid").alias("gone_zxid"),
        F.col("time").alias("gone_time"),
        F.col("session_id").alias("gone_by"),
    )
    # The znode each election created ends at the first delete of /controller or close of its session.
    by_close = e.join(closed, (F.col("owner") == F.col("session_id")) & (F.col("gone_zxid") > F.col("zxid")))
    by_close = by_close.select("zxid", "gone_zxid", "gone_time", F.lit(None).cast("long").alias("gone_by"))
    by_delete = e.join(deleted, F.col("gone_zxid") > F.col("zxid")).select(
        "zxid", "gone_zxid", "gone_time", "gone_by"
    )
    ends = (
        by_close.unionByName(by_delete)
        .groupBy("zxid")
        .agg(F.min_by(F.struct("gone_zxid", "gone_time", "gone_by"), "gone_zxid").alias("g"))
        .select("zxid", "g.*")
    )
    return e.join(ends, "zxid", "left")


@view
def elected_lines(bundle: Bundle) -> DataFrame:
    """Each election a broker logged: broker_id, epoch, ts, file, line_no, and `failover_file`, where its
    onControllerFailover lines are. From 2.1 the election line states the epoch; before, the epoch is on
    the broker's next "incremented epoch" line (KafkaController 0.10.2.2:731, 1.0.2:693, 2.0.1:647,
    logged within the same election), which at 0.10 is in controller.log while the elector's line is in
    server.log (ZookeeperLeaderElector 0.10.2.2:83 logs under kafka.server)."""
    ev = bundle.cluster_events
    lines = ev.where(F.col("event") == "controller.elected").select(
        "broker_id", "file", "line_no", "ts", F.col("attrs")["epoch"].cast("int").alias("epoch")
    )
    bumps = ev.where(F.col("event") == "controller.epoch_incremented").select(
        F.col("broker_id").alias("b_broker"),
        F.col("file").alias("b_file"),
        F.col("line_no").alias("b_line"),
        F.col("ts").alias("b_ts"),
        F.col("attrs")["epoch"].cast("int").alias("b_epoch"),
    )
    within = F.expr(f"INTERVAL {EPOCH_LINE_WITHIN_S} SECONDS")
    paired = (
        lines.where(F.col("epoch").isNull())
        .join(
            bumps,
            (F.col("b_broker") == F.col("broker_id"))
            & (F.col("b_ts") >= F.col("ts"))
            & (F.col("b_ts") <= F.col("ts") + within),
            "left",
        )
        .groupBy("broker_id", "file", "line_no", "ts")
        .agg(F.min_by(F.struct("b_epoch", "b_file"), F.struct("b_ts", "b_line", "b_file")).alias("b"))
        .select(
            "broker_id",
            "file",
            "line_no",
            "ts",
            F.col("b.b_epoch").alias("epoch"),
            F.coalesce("b.b_file", "file").alias("failover_file"),
        )
    )
    stated = lines.where(F.col("epoch").isNotNull()).withColumn("failover_file", F.col("file"))
    return stated.unionByName(paired)


@view
def failover_steps(bundle: Bundle) -> DataFrame:
    """The new controllers' own lines from election to 'Ready to serve', and on to the start of its
    scheduler where logged (between them it resumed reassignments, deletions and preferred elections:
    onControllerFailover 0.11.0.2:275-280, 1.1.1:251-256, 2.5.1:248-254, 3.6.2:319-325): broker_id,
    epoch, event, step, ts, file, line_no. Steps are the lines onControllerFailover logs (LOG_TEMPLATES.md
    section 5), the replica and partition state machines' startup among them (e.g.
    replica_state_machine_initializing)."""
    ev = bundle.cluster_events.where(
        F.col("event").startswith("controller.")
        | F.col("event").startswith("deletion.")
        | F.col("event").startswith("state_machine.")
    )
    lines = elected_lines(bundle)
    elected = lines.select(
        "broker_id", F.col("failover_file").alias("file"), "epoch", F.col("ts").alias("elected")
    )
    ready = ev.where(F.col("event") == "controller.ready").select(
        "broker_id", F.col("attrs")["epoch"].cast("int").alias("epoch"), F.col("ts").alias("ready")
    )
    # after ready, it resumes reassignments, deletions and preferred elections, then starts its
    # scheduler: the first such line after ready, before the broker's next election
    scheduler = ev.where(F.col("attrs")["step"].isin(*SCHEDULER_STEPS)).select(
        F.col("broker_id").alias("s_broker"), F.col("file").alias("s_file"), F.col("ts").alias("scheduler")
    )
    later = Window.partitionBy("broker_id", "file").orderBy("elected")
    timed = elected.join(ready, ["broker_id", "epoch"], "left").withColumn(
        "next_elected", F.lead("elected").over(later)
    )
    span = (
        timed.join(
            scheduler,
            (F.col("s_broker") == F.col("broker_id"))
            & (F.col("s_file") == F.col("file"))
            & (F.col("scheduler") >= F.col("ready"))
            & (F.col("next_elected").isNull() | (F.col("scheduler") < F.col("next_elected"))),
            "left",
        )
        .groupBy("broker_id", "file", "epoch", "elected", "ready")
        .agg(F.min("scheduler").alias("scheduler"))
    )
    elsewhere = lines.where(F.col("file") != F.col("failover_file")).select(  # 0.10's elector line
        "broker_id",
        "epoch",
        F.lit("controller.elected").alias("event"),
        F.lit(None).cast("string").alias("step"),
        "ts",
        "file",
        "line_no",
    )
    return elsewhere.unionByName(
        ev.join(span, ["broker_id", "file"])
        .where(
            (F.col("ts") >= F.col("elected"))
            & (F.col("ts") <= F.coalesce("scheduler", "ready", F.col("elected")))
        )
        .select(
            "broker_id",
            "epoch",
            "event",
            F.when(
                F.col("event").startswith("state_machine."),
                F.concat(
                    F.regexp_extract("event", r"\.(\w+)$", 1),
                    F.lit("_state_machine_"),
                    F.col("attrs")["step"],
                ),
            )
            .otherwise(F.col("attrs")["step"])
            .alias("step"),
            "ts",
            "file",
            "line_no",
        )
    )
