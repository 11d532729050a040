"""The reassignment analysis's findings half (`judge`), from hand-written facts: no Spark. Its facts half is
checked on simulated stories by the truth tests (test_triage_must_find: reassignment-blocks-deletion), and
with and without the txn logs in test_balance."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone

from workbench.analysis.contract import NO_TXN
from workbench.analysis.findings import Coverage
from workbench.analysis.reassignment import SHOWN, STUCK_AFTER_MS, Facts, UnderWay, judge

BEGAN = datetime(2024, 3, 12, 9, 0, tzinfo=timezone.utc)
BEGAN_MS = int(BEGAN.timestamp() * 1000)


def checked() -> Coverage:
    """Coverage as the runner leaves it before `judge` (contract.Analysis.findings)."""
    coverage = Coverage()
    coverage.record("reassignment", ["ZooKeeper history"])
    return coverage


def moving(partition: int, target: list[int], in_isr: int = 2) -> UnderWay:
    written = BEGAN + timedelta(seconds=1)  # its topic znode, written again as another partition's began
    return UnderWay(
        "clickstream",
        partition,
        [1, 2, 3],
        target,
        BEGAN,
        0x200000010 + partition,
        written,
        0x200000020,
        in_isr,
    )


def test_a_target_broker_not_registered_is_stuck_at_once() -> None:
    facts = Facts([moving(0, [1, 2, 4])], 0, frozenset({1, 2, 3}), BEGAN_MS + 60_000)
    (found,) = judge(facts, checked())
    assert found.kind == "reassignment.stuck"
    assert found.subject == {"topic": "clickstream", "partition": 0, "target": [1, 2, 4], "brokers_down": [4]}
    assert "broker(s) 4 of its target are not registered" in found.summary
    assert "with 2 of 3 target replicas in the ISR" in found.summary
    assert found.evidence == ("zk:txn@0x200000010",)  # the txn a person opens (refs.txn_ref)


def test_a_long_copy_is_stuck_only_after_its_time() -> None:
    live = frozenset({1, 2, 3, 4})
    young = Facts([moving(1, [1, 2, 4])], 0, live, BEGAN_MS + STUCK_AFTER_MS - 1)
    assert judge(young, checked()) == []  # under way, every target broker up: nothing to say yet
    old = Facts([moving(1, [1, 2, 4])], 0, live, BEGAN_MS + STUCK_AFTER_MS + 5 * 60_000)
    (found,) = judge(old, checked())
    assert found.subject["brokers_down"] == [] and "it has run for 35 min" in found.summary


def test_without_the_txn_logs_its_topic_znode_bounds_its_start() -> None:
    """A capture without ZooKeeper's history: the topic znode's last write (the controller writes it as a
    reassignment begins) is the latest it can have begun, said so and cited; an age from it is a lower
    bound; a request no controller took up says no origin."""
    bounded = replace(moving(1, [1, 2, 4]), started=None, started_zxid=None)
    old = Facts([bounded], 0, frozenset({1, 2, 3, 4}), BEGAN_MS + STUCK_AFTER_MS + 5 * 60_000)
    (found,) = judge(old, checked())
    assert "begun at or before 2024-03-12 09:00:01 ZooKeeper time (its topic znode's last write)" in (
        found.summary
    )
    assert "it has run for at least 35 min" in found.summary
    assert found.evidence == ("zk:/brokers/topics/clickstream@mzxid=0x200000020",)
    asked = replace(bounded, origin=None, written=None, written_zxid=None)
    (found,) = judge(Facts([asked], 0, frozenset({1, 2, 3}), BEGAN_MS), checked())
    assert "The reassignment of clickstream-1 to [1, 2, 4], begun at a moment the evidence does not hold" in (
        found.summary
    )
    assert found.evidence == ()


def test_what_was_not_examined_is_said_in_coverage() -> None:
    coverage = checked()
    facts = Facts([moving(q, [1, 2, 3]) for q in range(SHOWN)], 7, frozenset({1, 2, 3}), BEGAN_MS)
    assert judge(facts, coverage) == []
    assert f"7 reassignments under way beyond the first {SHOWN}" in coverage["reassignment"].missing[0]
    coverage = checked()
    unread = Facts([], 0, frozenset({1, 2, 3}), BEGAN_MS, unread=True)
    assert judge(unread, coverage) == [] and coverage["reassignment"].missing == [NO_TXN]
