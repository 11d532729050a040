"""The partitions' leaders in the one history (`model/history/partitions.py`): ZooKeeper's states where its
history holds them, the lines' where it does not, each answer naming which told it, and what ZooKeeper
holds never told twice."""

from __future__ import annotations

from datetime import timedelta, timezone

from pyspark.sql import functions as F
from stories import MUST_FIND, Stories

from workbench.frames import WithoutZooKeeper
from workbench.model.history.partitions import FROM_LINES, FROM_TXNS, printed_at
from workbench.model.pauses import paused
from workbench.model.skew import skew_ms
from workbench.model.state import state_at

PAUSED = next(n for n in MUST_FIND if "leader-pause" in n and n.endswith("@3.6.2"))


def test_a_pauses_partitions_are_those_zookeepers_states_or_else_the_lines_give_its_broker(
    stories: Stories,
) -> None:
    whole = stories.bundle(PAUSED)
    zk = [p for p in paused(whole, skew_ms(whole)) if p.led]
    assert zk and {p.led_from for p in zk} == {FROM_TXNS}
    lines = paused(WithoutZooKeeper(whole), {})
    assert {p.led_from for p in lines} == {FROM_LINES}
    told = [(p.broker, p.session, p.led) for p in zk]
    assert [(p.broker, p.session, p.led) for p in lines if p.led] == told


def test_the_lines_tell_a_recreated_topics_partitions_by_their_last_life(stories: Stories) -> None:
    """A topic deleted and created again starts its leader epochs at 0 again: just after it is created
    again, the lines' state of each of its partitions (`printed_at`) is its new life's, as ZooKeeper's
    history holds it then, though its old life reached higher epochs."""
    whole = stories.bundle(PAUSED)
    ev = whole.cluster_events.where(F.col("topic") == "s1-payments")
    done = ev.where(F.col("event") == "deletion.completed").agg(F.max("ts")).first()[0]
    born = (
        ev.where((F.col("event") == "partition.state_change") & (F.col("ts") > F.lit(done)))
        .agg(F.min("ts"))
        .first()[0]
    )
    assert done is not None and born is not None
    then = born + timedelta(seconds=5)
    exact = state_at(whole, then.replace(tzinfo=timezone.utc)).partitions.alias("z")
    lines = printed_at(WithoutZooKeeper(whole), then).alias("l")
    pairs = exact.join(lines, ["topic", "partition"], "full").where(F.col("topic") == "s1-payments")
    differ = pairs.where(
        ~F.col("z.leader").eqNullSafe(F.col("l.leader"))
        | ~F.col("z.leader_epoch").eqNullSafe(F.col("l.leader_epoch"))
    )
    assert pairs.count() > 0 and differ.count() == 0, differ.collect()[:3]
