"""The brokers-down analysis's findings half (`judge`), from hand-written facts: no Spark. Its facts half
is held to the simulated truth (every story's brokers down at the capture: the truth tests), and here to
ZooKeeper's account where the txn logs are left out."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

import pytest
from stories import Stories

from workbench.analysis import down
from workbench.analysis.down import Down, Facts, judge
from workbench.analysis.findings import TP, Coverage
from workbench.frames import WithoutTxnLogs
from workbench.model.history import partitions

ENDED = datetime(2024, 3, 12, 8, 10, 29)
CAPTURED_MS = round(ENDED.timestamp() * 1000) + 35 * 60_000
REFUSED = "topicid-restart-refused+reassignment-blocks-deletion@2.8.2"


def checked() -> Coverage:
    coverage = Coverage()
    coverage.record("brokers_down", ["ZooKeeper state"])
    return coverage


def test_nothing_where_every_broker_is_registered() -> None:
    assert judge(Facts([], CAPTURED_MS), checked()) == []


def test_a_broker_down_with_the_last_replica_of_partitions_is_critical_with_since_when_and_the_way_out() -> (
    None
):
    crashed = Down(
        3, ENDED, 0x73, "crash", None, None, "broker-3:logs/server.log:90", 6, [TP("orders", 0)], 1, 5
    )
    (found,) = judge(Facts([crashed], CAPTURED_MS), checked())
    assert (found.kind, found.severity.value) == ("broker.down", "critical")
    assert found.subject == {
        "broker": 3,
        "zxid": "0x73",
        "since": "2024-03-12 08:10:29",
        "partitions": 6,
        "last_in_isr": 1,
    }
    assert "its registration ended at zxid 0x73 (2024-03-12 08:10:29 ZooKeeper time, 35 min before" in (
        found.summary
    )
    assert "1 (orders 0) have it as their last in-sync replica" in found.summary
    assert "5 are under-replicated without it" in found.summary
    assert found.summary.endswith("Start broker 3 again; its log's last lines say why it stopped.")
    assert found.evidence == ("zk:/brokers/ids", "zk:txn@0x73", "broker-3:logs/server.log:90")


def test_a_broker_leaving_partitions_under_replicated_is_a_warning_and_one_hosting_nothing_info() -> None:
    shut = Down(2, hosts=4, under=4)
    gone = Down(5)
    under, idle = judge(Facts([shut, gone], None), checked())
    assert under.severity.value == "warning" and "since when, the evidence does not say" in under.summary
    assert "last in-sync" not in under.summary and "4 are under-replicated without it" in under.summary
    assert idle.severity.value == "info" and idle.subject == {"broker": 5, "partitions": 0}


def test_a_broker_down_that_the_tree_still_names_leader_leaves_them_unserved() -> None:
    """No controller has acted on its loss: ZooKeeper's tree still names it the leader of 3 partitions,
    which Kafka counts offline (`offline_in_the_tree`): critical, though each has another in-sync replica."""
    stale = Down(0, hosts=5, under=5, leads=3)
    (found,) = judge(Facts([stale], None), checked())
    assert (found.severity.value, found.subject["leads"], found.subject["last_in_isr"]) == ("critical", 3, 0)
    assert "ZooKeeper's tree still names it the leader of 3: no controller has acted on its loss" in (
        found.summary
    )
    assert "leads" not in judge(Facts([replace(stale, leads=0)], None), checked())[0].subject
    # the partitions it is the last in-sync replica of beyond the first named are counted, not dropped
    many = replace(stale, only=61, last_in_isr=[TP("orders", p) for p in range(down.SHOWN)])
    (said,) = judge(Facts([many], None), checked())
    assert "; 61 (orders 0-59, and 1 more) have it as their last in-sync replica" in said.summary


def test_a_broker_that_halted_for_its_failed_log_dir_says_so_and_to_repair_it_first() -> None:
    halted = Down(
        4, ENDED, 0x76, "halted", "broker-4:logs/server.log:73", None, "broker-4:logs/server.log:73", 7,
        under=7, halted_for="/var/lib/kafka/data", halted_ref="broker-4:logs/server.log:73",
    )  # fmt: skip
    (found,) = judge(Facts([halted], CAPTURED_MS), checked())
    assert "broker 4 halted for failed log dirs (at once, without a shutdown" in found.summary
    assert "a crash or hang" not in found.summary
    assert "It halted because its log dir /var/lib/kafka/data failed (log_dir.offline)" in found.summary
    assert found.summary.endswith("before starting broker 4 again, or it fails the same way.")
    assert "its log's last lines say why" not in found.summary


def test_a_broker_down_that_refused_what_only_it_holds_is_not_told_a_start_brings_them_back() -> None:
    """Elected again as it returns, a broker whose log holds another topic id refuses again
    (`first_leader_and_isr_refused`): the way out says to repair the id, not only to start it."""
    refused = Down(
        4, ENDED, 0x106, "crash", None, None, None, 18, [TP("orders", 1)], 1, 17, refused=[TP("orders", 1)],
        refused_told=partitions.FROM_TXNS,
    )  # fmt: skip
    (found,) = judge(Facts([refused], CAPTURED_MS), checked())
    assert "it refused to lead orders 1 the last time ZooKeeper named it their leader" in found.summary
    assert "repair their topic id (topic_id.refused), or they stay unserved" in found.summary
    # started as it is, it would refuse again: its step of the repair plan removes the stale files first
    assert found.summary.endswith(
        "Start broker 4 again, once its stale partition.metadata is gone: its step of the repair plan "
        "(`workbench remediate`) removes them while it is stopped, then starts it."
    )
    (plain,) = judge(Facts([replace(refused, refused=[])], CAPTURED_MS), checked())
    assert plain.summary.endswith("Start broker 4 again.")
    # without ZooKeeper's history, its own lines tell it, and the finding says so
    told = replace(refused, refused_told=partitions.FROM_OWN_LINES)
    (found,) = judge(Facts([told], CAPTURED_MS), checked())
    assert "it refused to lead orders 1 the last time it was told to, as its own lines show" in found.summary


@pytest.mark.slow
def test_the_partitions_a_broker_down_refused_are_told_by_its_lines_without_the_txn_logs(
    stories: Stories,
) -> None:
    """The 2.8.2 story whose restarted broker refuses the partition only it holds, then crashes: from a
    capture without the txn logs, its own lines (its last refusal, no "starts at leader epoch" after)
    name the same partitions ZooKeeper's states do; a broker that refused nothing has none."""
    whole = stories.bundle(REFUSED)
    by_txns = {d.broker: (d.refused, d.refused_told) for d in down.facts(whole).down}
    by_lines = {d.broker: (d.refused, d.refused_told) for d in down.facts(WithoutTxnLogs(whole)).down}
    assert any(r for r, _ in by_txns.values())
    assert {b: r for b, (r, _) in by_lines.items()} == {b: r for b, (r, _) in by_txns.items()}
    assert {t for r, t in by_txns.values() if r} == {partitions.FROM_TXNS}
    assert {t for r, t in by_lines.values() if r} == {partitions.FROM_OWN_LINES}
    assert all(t is None for r, t in by_lines.values() if not r)
