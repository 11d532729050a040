"""The unclean elections in the one history (`model/history/unclean.py`): ZooKeeper's where its history
holds them, the controller's lines' where it does not (it began late, or is not held), never told twice."""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from stories import Stories

from workbench.analysis.data_loss import verdict
from workbench.frames import Bundle, View, WithoutZooKeeper
from workbench.model.history.unclean import unclean
from workbench.once import once
from workbench.together import answer

UNCLEAN = "unclean-election@2.5.1"


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
