"""The brokers' lives: each stretch a broker was not registered, and each it was registered and did no work.

Not registered: from its registration's end (a shutdown, a crash, a lost session) to its next
registration, from ZooKeeper's registrations where its history holds them, and from the controllers' lines
where it does not (`offline_windows`). The active controller handles each change of `/brokers/ids`: a
broker gone ("Broker failure callback for N", KafkaController.onBrokerFailure) and one new ("New broker
startup callback for N", onBrokerStartup), both logged at INFO in every release (1.1.1:346/399,
2.5.1:348/411, 2.8.2:519/582, 3.6.2:573/636); from 2.5 a broker that registered anew before the
controller saw it gone is both at once (a "bounced" broker, 2.8.2:1594-1610). A controller that starts
names the brokers then live ("Currently active brokers in the cluster"), so a broker gone before it and
back by then is closed there. The lines time these on the controller's clock (ZooKeeper's where its skew
is known), when the controller handled the change: a little after the registration ended or began. What
no controller logged (a broker gone while no controller's log is held, or before a new controller started
without it) is not in them. Each row names its source: ZooKeeper's account where its history holds the
registration's end, the lines' where it does not (the two meet within CLOCKS_APART_MS, as a lost
session's do in `sessions`).

Registered and silent (`silent_windows`): a broker that went silent (crashed, halted, stood still, cut off)
before ZooKeeper expired its session, from when the expiry, its own client's time-out line or its halt line
proves it (`acting.silent_leaders`), and one that stood still and ran on in its session, which its
client's lines alone tell (`pauses`), or whose expired session the next controller took back as live
(`taken_back`).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from workbench.kafka import printed
from workbench.model import acting
from workbench.model.history.sessions import CLOCKS_APART_MS
from workbench.model.pauses import Paused, paused
from workbench.model.refs import file_ref_col, hex_col
from workbench.model.skew import skew_col, skew_ms
from workbench.model.views import views

if TYPE_CHECKING:
    from workbench.frames import Bundle

FROM_TXNS, FROM_LINES = "ZooKeeper's registrations", "the controllers' lines"
FROM_BROKERS = "the brokers' own lines"
GONE, NEW, LIVE = "controller.broker_failure", "controller.broker_startup", "controller.live_brokers"
SILENT = "session_expired"  # went silent, and ZooKeeper expired its session
PAUSED = "paused"  # stood still and ran on in its session


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


def registrations(bundle: Bundle) -> DataFrame:
    """Each registration of a broker: broker, at (when its znode was made), zxid (the txn that made it,
    its broker epoch, where ZooKeeper's history or tree tells it), source and ref. ZooKeeper's
    registrations where it holds them, else the broker's own "Registered broker" line, which
    KafkaZkClient.registerBroker writes once the create returned (behaviour
    `registered_broker_line_prints_its_epoch`), on ZooKeeper's clock where the broker's skew is known. A
    line is ZooKeeper's registration where it prints that registration's epoch, or prints none and one of
    that broker's is within CLOCKS_APART_MS."""
    regs = views(bundle).registrations.select(
        F.col("broker_id").alias("broker"),
        F.col("registered").alias("at"),
        F.col("czxid").alias("zxid"),
        F.lit(FROM_TXNS).alias("source"),
        F.concat(F.lit("zk:txn@"), hex_col("czxid")).alias("ref"),
    )
    skew = F.coalesce(skew_col(skew_ms(bundle)), F.lit(0))
    lines = bundle.cluster_events.where(F.col("event") == "broker.registered").select(
        F.col("broker_id").alias("broker"),
        F.timestamp_millis(F.unix_millis("ts") - skew).alias("at"),
        F.col("attrs")["broker_epoch"].try_cast("long").alias("epoch"),
        file_ref_col("file", "line_no").alias("ref"),
    )
    z = regs.select(F.col("broker").alias("b"), F.col("at").alias("t"), F.col("zxid").alias("z"))
    same = (F.col("broker") == F.col("b")) & F.when(
        F.col("epoch").isNotNull(), F.col("epoch") == F.col("z")
    ).otherwise(F.abs(F.unix_millis("at") - F.unix_millis("t")) <= CLOCKS_APART_MS)
    told = lines.join(z, same, "left_anti").select(
        "broker", "at", F.lit(None).cast("long").alias("zxid"), F.lit(FROM_BROKERS).alias("source"), "ref"
    )
    return regs.unionByName(told)


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


def listed_live(bundle: Bundle, controller: int | None, when: datetime | None) -> tuple[int, ...] | None:
    """The brokers `controller` last listed live in its lines up to `when` (None: all of them), as it
    starts ("Currently active brokers") and at each change of /brokers/ids ("all live brokers", before
    2.x); None where it listed none."""
    ev = bundle.cluster_events.where(
        F.col("event").isin(LIVE, "controller.broker_change") & (F.col("broker_id") == F.lit(controller))
    )
    if when is not None:
        ev = ev.where(F.col("ts") <= F.lit(when))
    order = F.struct("ts", "line_no", "file")
    listed = ev.agg(F.max_by(printed.ints(F.col("attrs")["brokers"]), order).alias("b")).first()
    return None if listed is None or listed.b is None else tuple(sorted(listed.b))


def pauses(bundle: Bundle) -> list[Paused]:
    """The pauses brokers' clients logged, those their sessions survived and those taken back
    (`Paused.taken_back`), on the brokers' clocks with the partitions each led; made once per bundle (the
    health series, `state_at` and leaderless read them)."""
    return views(bundle).memo("pauses", lambda: paused(bundle, skew_ms(bundle), taken_back=True))


def taken_back(bundle: Bundle) -> list[tuple[int, int, int]]:
    """broker, ended_zxid, back_zxid: each registration ZooKeeper ended (its session expired) whose broker
    ran again and registered anew (back_zxid) before any controller saw it gone (`Paused.taken_back`).
    Made once per bundle: one query over the registrations, where a pause was taken back."""
    return views(bundle).memo("taken_back", lambda: _taken_back(bundle))


def _taken_back(bundle: Bundle) -> list[tuple[int, int, int]]:
    sessions = {p.session for p in pauses(bundle) if p.taken_back is not None}
    if not sessions:
        return []
    regs = (
        views(bundle).registrations.select("broker_id", "session_id", "czxid", "ended_zxid").collect()
    )  # one row per registration
    out = []
    for r in regs:
        if r.session_id in sessions and r.ended_zxid is not None:
            again = [x.czxid for x in regs if x.broker_id == r.broker_id and x.czxid > r.ended_zxid]
            if again:
                out.append((r.broker_id, r.ended_zxid, min(again)))
    return out


def silent_windows(bundle: Bundle) -> DataFrame | None:
    """broker, since (ZooKeeper's clock), since_zxid (the last txn at or before it), until (a pause's end:
    its time-out line, on ZooKeeper's clock; null: to `until_zxid`) with until_last (the last txn at or
    before it), until_zxid (the end of its registration; null for a pause) and why (SILENT, PAUSED): each
    stretch a registered broker surely did no work. None when there is none."""
    return views(bundle).memo("silent_windows", lambda: _silent_windows(bundle))


def _silent_windows(bundle: Bundle) -> DataFrame | None:
    expired = acting.silent_leaders(bundle)
    if expired is not None:
        # a registration taken back: its broker's pause is its outage (below), not the expiry
        for broker, ended, _ in taken_back(bundle):
            expired = expired.where((F.col("broker") != broker) | (F.col("until_zxid") != ended))
        expired = expired.select(
            "broker",
            "since",
            "since_zxid",
            F.lit(None).cast("timestamp").alias("until"),
            F.lit(None).cast("long").alias("until_last"),
            "until_zxid",
            F.lit(SILENT).alias("why"),
        )
    stood = pauses(bundle)
    if not stood:
        return expired
    skews = skew_ms(bundle)
    rows = []
    for p in stood:
        skew = timedelta(milliseconds=skews.get(p.broker, 0))
        lower, _ = p.bounds_ms
        rows.append((p.broker, p.said.ts - timedelta(milliseconds=lower) - skew, p.said.ts - skew))
    windows = bundle.spark.createDataFrame(rows, "broker int, since timestamp, until timestamp")
    txns = views(bundle).history.select("zxid", F.col("time").alias("t"))
    ran = (
        windows.join(txns, F.col("t") <= F.col("until"), "left")
        .groupBy("broker", "since", "until")
        .agg(
            F.max(F.when(F.col("t") <= F.col("since"), F.col("zxid"))).alias("since_zxid"),
            F.max("zxid").alias("until_last"),
        )
        .select(
            "broker",
            "since",
            F.coalesce("since_zxid", F.lit(0)).alias("since_zxid"),
            "until",
            F.coalesce("until_last", F.lit(0)).alias("until_last"),
            F.lit(None).cast("long").alias("until_zxid"),
            F.lit(PAUSED).alias("why"),
        )
    )
    return ran if expired is None else expired.unionByName(ran)
