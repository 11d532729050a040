"""The partitions' leaders in the one history (`model/history/partitions.py`): ZooKeeper's states where its
history holds them, the lines' where it does not, each answer naming which told it, and what ZooKeeper
holds never told twice."""

from __future__ import annotations

from datetime import timedelta, timezone

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from stories import MUST_FIND, Stories

from workbench.analysis.data_loss import verdict
from workbench.frames import Bundle, View, WithoutZooKeeper
from workbench.model.history.partitions import FROM_LINES, FROM_TXNS, printed_at, unclean
from workbench.model.pauses import paused
from workbench.model.skew import skew_ms
from workbench.model.state import state_at
from workbench.once import once
from workbench.together import answer

UNCLEAN = "unclean-election@2.5.1"
PAUSED = next(n for n in MUST_FIND if "leader-pause" in n and n.endswith("@3.6.2"))


def test_an_unclean_election_is_zookeepers_where_its_history_holds_it_else_the_lines(
    stories: Stories,
) -> None:
    whole = stories.bundle(UNCLEAN)
    said = stories.truth(UNCLEAN)["unclean_elections"]
    truth = [(u["topic"], u["partition"], u["leader"], u["leader_epoch"]) for u in said]
    assert truth
    both = answer(unclean(whole, 100))
    assert [(e.topic, e.partition, e.leader, e.leader_epoch) for e in both.txns] == truth
    # the controller's lines print the same elections at the epochs the txns hold: not told again
    assert (both.lines, both.lines_total, both.lacking, both.unread) == ([], 0, [], False)
    alone = answer(unclean(WithoutZooKeeper(whole), 100))
    assert alone.txns == [] and not alone.unread
    told = [(e.topic, e.partition, e.leader, e.leader_epoch) for e in alone.lines if verdict(e) == "unclean"]
    assert told == truth


class Since(View):
    """The bundle with its txn logs begun late, at zxid `first` (as after ZooKeeper purged the older ones):
    its brokers' lines whole."""

    def __init__(self, whole: Bundle, first: int) -> None:
        super().__init__(whole, whole.evidence)
        self.first = first

    @once
    def _zk_history(self) -> tuple[DataFrame, DataFrame]:
        txns, damage = self.whole._zk_history
        return txns.where(F.col("zxid") >= self.first), damage


def test_where_zookeepers_history_begins_late_the_lines_tell_the_elections_before_it(
    stories: Stories,
) -> None:
    whole = stories.bundle(UNCLEAN)
    [first] = answer(unclean(whole, 100)).txns
    # begun before the election: ZooKeeper's account, and the lines' of the same epoch left out
    held = answer(unclean(Since(whole, first.before_zxid), 100))
    assert [(e.topic, e.partition, e.leader_epoch) for e in held.txns] == [
        (first.topic, first.partition, first.leader_epoch)
    ]
    assert (first.topic, first.partition, first.leader_epoch) not in {
        (e.topic, e.partition, e.leader_epoch) for e in held.lines
    }
    # begun after it: only the controller's lines tell it, and tell it unclean
    late = answer(unclean(Since(whole, first.zxid + 1), 100))
    assert late.txns == []
    assert [
        (e.topic, e.partition, e.leader, e.leader_epoch) for e in late.lines if verdict(e) == "unclean"
    ] == [(first.topic, first.partition, first.leader, first.leader_epoch)]


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
