"""The brokers' lives: each stretch a broker was not registered, from its registration's end (a shutdown,
a crash, a lost session) to its next registration, from ZooKeeper's registrations where its history holds
them, and from the controllers' lines where it does not.

The active controller handles each change of `/brokers/ids`: a broker gone ("Broker failure callback for
N", KafkaController.onBrokerFailure) and one new ("New broker startup callback for N", onBrokerStartup),
both logged at INFO in every release (1.1.1:346/399, 2.5.1:348/411, 2.8.2:519/582, 3.6.2:573/636); from
2.5 a broker that registered anew before the controller saw it gone is both at once (a "bounced" broker,
2.8.2:1594-1610). A controller that starts names the brokers then live ("Currently active brokers in the
cluster"), so a broker gone before it and back by then is closed there. The lines time these on the
controller's clock (ZooKeeper's where its skew is known), when the controller handled the change: a little
after the registration ended or began. What no controller logged (a broker gone while no controller's log
is held, or before a new controller started without it) is not in them.

Each row names its source: ZooKeeper's account where its history holds the registration's end, the lines'
where it does not (the two meet within CLOCKS_APART_MS, as a lost session's do in `sessions`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from workbench.kafka import printed
from workbench.model.history.sessions import CLOCKS_APART_MS
from workbench.model.refs import file_ref_col, hex_col
from workbench.model.skew import skew_col, skew_ms
from workbench.model.views import views

if TYPE_CHECKING:
    from workbench.frames import Bundle

FROM_TXNS, FROM_LINES = "ZooKeeper's registrations", "the controllers' lines"
GONE, NEW, LIVE = "controller.broker_failure", "controller.broker_startup", "controller.live_brokers"


def offline_windows(bundle: Bundle) -> DataFrame:
    """Each broker's time without a registration: broker, down (its registration ended) with down_zxid, up
    (its next registration; null: still down at the capture, or, from the lines, no line says it came
    back) with up_zxid, source (FROM_TXNS, FROM_LINES) and down_ref (the txn or the line that tells its
    end); on ZooKeeper's clock where the history or a broker's skew gives it. The zxids are null where the
    lines alone tell it: a stretch is ZooKeeper's where its history holds the registration's end, the
    lines' where no end of that broker's is within CLOCKS_APART_MS of theirs (before the history begins,
    in a gap, after it stops, or without it)."""
    if views(bundle).history_span is None:
        return _from_lines(bundle, {})
    txns = _from_registrations(bundle)
    told = txns.select(F.col("broker").alias("b"), F.col("down").alias("d"))
    near = (F.col("broker") == F.col("b")) & (
        F.abs(F.unix_millis("down") - F.unix_millis("d")) <= CLOCKS_APART_MS
    )
    return txns.unionByName(_from_lines(bundle, skew_ms(bundle)).join(told, near, "left_anti"))


def _from_registrations(bundle: Bundle) -> DataFrame:
    regs = views(bundle).registrations
    w = Window.partitionBy("broker_id").orderBy("czxid")
    nxt = F.lead(F.struct(F.col("czxid").alias("zxid"), F.col("registered").alias("time"))).over(w)
    return (
        regs.select("broker_id", "ended_zxid", "ended", nxt.alias("next"))
        .where(F.col("ended_zxid").isNotNull())
        .select(
            F.col("broker_id").alias("broker"),
            F.col("ended").alias("down"),
            F.col("ended_zxid").alias("down_zxid"),
            F.col("next.time").alias("up"),
            F.col("next.zxid").alias("up_zxid"),
            F.lit(FROM_TXNS).alias("source"),
            F.concat(F.lit("zk:txn@"), hex_col("ended_zxid")).alias("down_ref"),
        )
    )


def _from_lines(bundle: Bundle, skews: dict[int, int]) -> DataFrame:
    """The stretches the controllers' lines tell, on ZooKeeper's clock where `skews` give it: a broker is
    down from the first line saying it gone to the next saying it registered or live. A broker is gone at
    a "failure" line naming it, or at a starting controller's "active brokers" line that leaves it out when
    it had run before (its own lines, or a controller's naming it, began earlier): gone by then, the lost
    controller's own case, whose loss no controller logs. The same change logged twice (an old controller
    not yet resigned) is one."""
    skew = F.coalesce(skew_col(skews), F.lit(0))
    at = F.timestamp_millis(F.unix_millis("ts") - skew).alias("at")
    ev = bundle.cluster_events
    lines = ev.where(F.col("event").isin(GONE, NEW, LIVE)).select(
        "event", at, "file", "line_no", printed.ints(F.col("attrs")["brokers"]).alias("brokers")
    )
    named = lines.select(
        F.explode("brokers").alias("broker"), "at", (F.col("event") == GONE).alias("gone"), "file", "line_no"
    )
    ran = (
        ev.select(F.col("broker_id").alias("broker"), at)
        .unionByName(named.select("broker", "at"))
        .where(F.col("broker").isNotNull())
        .groupBy("broker")
        .agg(F.min("at").alias("since"))
    )  # one row per broker: its first sign of life
    left_out = (
        lines.where(F.col("event") == LIVE)
        .crossJoin(ran)
        .where((F.col("since") < F.col("at")) & ~F.array_contains("brokers", F.col("broker")))
        .select("broker", "at", F.lit(True).alias("gone"), "file", "line_no")
    )
    said = named.unionByName(left_out).distinct()
    w = Window.partitionBy("broker").orderBy("at", "file", "line_no")
    back = F.first(F.when(~F.col("gone"), F.col("at")), ignorenulls=True).over(
        w.rowsBetween(1, Window.unboundedFollowing)
    )
    return (
        said.select(
            "broker",
            "at",
            "gone",
            F.lag("gone").over(w).alias("was_gone"),
            back.alias("up"),
            file_ref_col("file", "line_no").alias("down_ref"),
        )
        .where(F.col("gone") & ~F.coalesce("was_gone", F.lit(False)))
        .select(
            "broker",
            F.col("at").alias("down"),
            F.lit(None).cast("long").alias("down_zxid"),
            "up",
            F.lit(None).cast("long").alias("up_zxid"),
            F.lit(FROM_LINES).alias("source"),
            "down_ref",
        )
    )
