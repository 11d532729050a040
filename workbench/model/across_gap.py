"""An outage the history shows going on when it stops at a gap, and again where it resumes, is one outage
where the gap cannot have ended it: the partition's state znode was not written inside the gap
(`views.znodes_carried`), so no leader was elected for it there (an election writes the state before any
broker hears of it: PartitionStateMachine.doElectLeaderForPartitions, 2.8.2:428-436, 3.6.2:437-445), and,
where it was offline because its leader was not registered, no broker registered or left inside the gap
(`views.registrations_carried`). Its stretch after the gap is then counted from its start before it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from workbench.kafka.znodes import STATE_PATH
from workbench.model.views import views

if TYPE_CHECKING:
    from workbench.frames import Bundle

T = TypeVar("T")
U = TypeVar("U")

BEFORE = ("off_zxid", "off_began", "off_leader", "off_registered")


def offline_at_gap(bundle: Bundle) -> DataFrame | None:
    """The partitions offline when the history stops at the gap the analyses read on from, with how that
    began (`pre_` + BEFORE), whose state the gap did not write; None where there is nothing to carry (no
    gap over a tree not known, no state carried, or none offline then)."""
    from workbench.frames import Until
    from workbench.model.service import outages  # (whose outages carry on what this returns)

    v = views(bundle)
    gap = v.resumed_after
    if gap is None or gap.after is None or v.znodes_carried is None:
        return None
    carried = v.znodes_carried.where(F.col("path").rlike(STATE_PATH)).select(
        F.regexp_extract("path", STATE_PATH, 1).alias("topic"),
        F.regexp_extract("path", STATE_PATH, 2).cast("int").alias("partition"),
    )
    part = Until(bundle, gap.after)
    try:
        stretch = outages(part)
        rows = (
            []
            if stretch is None
            else stretch.where(F.col("ended_zxid").isNull() & F.col("off_zxid").isNotNull())
            .join(carried, ["topic", "partition"], "left_semi")
            .select("topic", "partition", *[F.col(c).alias(f"pre_{c}") for c in BEFORE])
            .collect()
        )
    finally:
        part.release()
    if not rows:
        return None
    schema = (
        "topic string, partition int, pre_off_zxid long, pre_off_began timestamp, pre_off_leader int, "
        "pre_off_registered boolean"
    )
    return bundle.spark.createDataFrame(rows, schema)


def carried_on(stretch: DataFrame, bundle: Bundle) -> DataFrame:
    """`stretch` (`service.unserved`'s rows) with `across`: True for a stretch first seen after the gap
    that goes on one offline at the gap (`offline_at_gap`), its start (`off_*`) then that one's and its
    `off_ms` from it; registrations must be carried where its leader then was one not registered."""
    at_gap = offline_at_gap(bundle)
    if at_gap is None:
        return stretch.withColumn("across", F.lit(False))
    registered_known = views(bundle).registrations_carried is not None
    joined = stretch.join(at_gap, ["topic", "partition"], "left")
    across = (
        F.col("first_seen")
        & F.col("pre_off_zxid").isNotNull()
        & F.col("leader").eqNullSafe(F.col("pre_off_leader"))
        & (F.lit(registered_known) | (F.coalesce("pre_off_leader", F.lit(-1)) < 0))
    )
    joined = joined.withColumn("across", F.coalesce(across, F.lit(False)))
    for c in BEFORE:
        joined = joined.withColumn(c, F.when(F.col("across"), F.col(f"pre_{c}")).otherwise(F.col(c)))
    return joined.withColumn(
        "off_ms", F.when(F.col("across"), F.lit(None).cast("long")).otherwise(F.col("off_ms"))
    ).withColumn("first_seen", F.col("first_seen") & ~F.col("across"))


def before_gap(bundle: Bundle, read: Callable[[Bundle, list[T]], dict[int, U]], of: list[T]) -> dict[int, U]:
    """`read` of the outages `of` (carried across the gap) in the evidence as it stood before the gap,
    where what began them is (a leader's registration that ended there, how its session ended)."""
    from workbench.frames import Until

    gap = views(bundle).resumed_after
    if not of or gap is None or gap.after is None:
        return {}
    part = Until(bundle, gap.after)
    try:
        return read(part, of)
    finally:
        part.release()
