"""partition.offline where ZooKeeper's history is absent, over time: the outages of the one service
timeline (`service.outages`) made of the controller's lines that began when they left a partition without
a leader, grouped in Spark as ZooKeeper's are (`logged_groups`: by the second and the leader lost, as
`leaderless._offline` groups by the txn), into the one `offline.Offline` group that `offline.py` words
whichever source told it. Those begun by a leader named that refused are `not_acting.py`'s, whichever
source names it; what one moment shows is in `leaderless_moment.py`."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Row, Window
from pyspark.sql import functions as F

from workbench.analysis.findings import TP
from workbench.analysis.lost_leader import Elected
from workbench.analysis.offline import Lined, Offline, Went
from workbench.model.health import grouped
from workbench.together import Ask, given


def logged_groups(stretch: DataFrame | None, tree: DataFrame | None, paused: set[int]) -> Ask[list[Offline]]:
    """The outages of the controller's lines that began without a leader (`stretch`), grouped into
    `Offline`s (`Lined`) in one query, with what ZooKeeper's tree at the capture shows of those still
    without one when the lines end (`tree`: `counts.tree_leaders`), and each partition of a group whose
    leader lost is in `paused` (brokers that stood still)."""
    if stretch is None:
        return given([])
    n = F.col("named")
    refused = F.coalesce(n["refused_by"].isNotNull(), F.lit(False))
    led = F.coalesce(F.col("ended_leader") >= 0, F.lit(False))
    known = F.col("began_ref").isNotNull()
    leader = F.when(refused, n["leader"]).when(led, F.col("ended_leader"))
    isr = F.when(refused, n["isr"]).otherwise(F.col("ended_isr"))
    ended = F.when(refused, n["time"]).when(led, F.col("ended"))
    went = F.coalesce(F.when(known, F.col("began")), ended, F.col("began"))
    rows = stretch.where(F.col("count") == "offline").select(
        "topic",
        "partition",
        F.date_trunc("second", went).alias("at"),
        F.coalesce("before", F.lit(-1)).alias("lost"),
        refused.alias("ran_on"),
        known.alias("known"),
        went.alias("began"),
        F.when(known, F.struct(F.col("began").alias("t"), F.col("began_ref").alias("r"))).alias("opening"),
        ended.alias("ended"),
        F.when(refused, n["ref"]).when(led, F.col("ended_ref")).alias("ended_ref"),
        leader.alias("leader"),
        F.when(isr.isNotNull() & leader.isNotNull(), (F.size(isr) == 1) & (isr[0] == leader)).alias("alone"),
        F.when(refused, n["refused_at"]).alias("refused"),
        F.when(refused, n["refused_by"]).alias("refused_ref"),
        F.when(refused & led, F.col("ended")).alias("led_again"),
        F.when(refused & led, F.col("ended_ref")).alias("led_again_ref"),
        # no txn tells a line's stretch (`grouped` asks for them)
        F.lit(None).cast("long").alias("began_zxid"),
        F.lit(None).cast("long").alias("ended_zxid"),
    )
    still = F.when(F.col("ran_on"), F.col("led_again").isNull()).otherwise(F.col("ended").isNull())
    if tree is not None:
        rows = rows.join(tree, ["topic", "partition"], "left")
    else:
        rows = rows.select(
            "*", F.lit(None).cast("int").alias("led_by"), F.lit(None).cast("boolean").alias("offline")
        )
    registered, offline = F.col("led_by").isNotNull(), F.coalesce(F.col("offline"), F.lit(False))
    keys = ["at", "lost", "ran_on"]
    unseen = ~F.col("known") & ~F.col("ran_on")
    same = F.count("*").over(Window.partitionBy(*keys, "leader", "alone", "ended"))
    tp = F.struct("topic", "partition")
    rows = rows.select(
        "*",
        # from its own start (0 where it is not in the lines: elected at once)
        (F.unix_millis("ended") - F.unix_millis("began")).alias("lasted_ms"),
        F.when(unseen, F.struct("leader", "alone", F.col("ended").alias("at"), same.alias("n"))).alias("e"),
        F.when(still & registered, tp).alias("led_tp"),
        F.when(still & registered, F.col("led_by")).alias("led_leader"),
        F.when(still & offline, tp).alias("offline_tp"),
    )

    def listed(c: str | Column, first: int | None = None) -> Column:
        got = F.sort_array(F.collect_list(c))
        return F.slice(got, 1, first) if first else got

    extra = (
        F.count_if("known").alias("known"),
        F.min("opening").alias("opening"),
        F.count_if(F.col("ended").isNotNull()).alias("ended_n"),
        F.max("ended").alias("last_ended"),
        F.slice(F.sort_array(F.array_distinct(F.collect_list("ended_ref"))), 1, 2).alias("ended_refs"),
        F.array_distinct(F.collect_list("e")).alias("elected"),
        F.count("led_tp").alias("led_now"),
        listed("led_tp", 60).alias("led_tps"),
        F.sort_array(F.array_distinct(F.collect_list("led_leader"))).alias("led_by"),
        listed("offline_tp").alias("offline_now"),
        listed(
            F.when(
                F.col("lost").isin(*sorted(paused)),
                F.struct("topic", "partition", F.col("began").alias("at")),
            )
            if paused
            else F.lit(None)
        ).alias("went"),
        F.sort_array(F.array_distinct(F.collect_list(F.when(F.col("ran_on"), F.col("leader"))))).alias("by"),
        F.min(
            F.when(
                F.col("ran_on"),
                F.struct(
                    F.coalesce("refused", "at").alias("t"),
                    F.col("refused_ref"),
                    F.col("refused"),
                    "ended_ref",
                ),
            )
        ).alias("first"),
        F.count_if(F.col("led_again").isNotNull()).alias("led_again"),
        F.max("led_again").alias("last_led"),
        F.min("led_again_ref").alias("led_ref"),
    )
    return Ask(grouped(rows, keys, *extra), _logged)


def _logged(groups: list[Row]) -> list[Offline]:
    """`logged_groups`' rows, in the order the lines tell them: by second, then leader lost, a group that
    ran on into a refusal before the rest."""
    out = []
    for g in sorted(groups, key=lambda g: (g.at, g.lost, not g.ran_on)):
        first = g.first
        ended = g.led_again if g.ran_on else g.ended_n  # those a broker led again
        lines = Lined(
            g.opening.r if g.opening else None,
            list(g.ended_refs),
            g.last_led if g.ran_on else g.last_ended,
            elected=[Elected(e.leader, e.alone, e.at, e.n) for e in g.elected],
            led_now=g.led_now,
            led_tps=_tps(g.led_tps),
            led_by=list(g.led_by),
            offline_now=_tps(g.offline_now),
            went=[Went(w.topic, w.partition, w.at) for w in g.went],
            first_refused=first.refused if first else None,
            refused_ref=first.refused_ref if first else None,
            named_ref=first.ended_ref if first else None,
            led_ref=g.led_ref,
        )
        out.append(
            Offline(
                g.n,
                _tps(g.tps),
                int(g.longest or 0),
                g.n - ended,
                g.began,
                None,
                None,
                leader=None if g.lost < 0 else g.lost,
                known_start=g.known > 0,
                refused=g.n if g.ran_on else 0,
                refused_by=list(g.by) if g.ran_on else [],
                at_once=g.n - g.known if g.known else None,
                lines=lines,
            )
        )
    return out


def _tps(rows: list[Row]) -> list[TP]:
    return [TP(r.topic, r.partition) for r in rows]
