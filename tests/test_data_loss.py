"""The data-loss analysis's findings half (`data_loss.judge`), from hand-written facts: no Spark. Its facts
half meets the simulated truth in test_triage_must_find (an unclean election, a hung or cut-off controller
that truncates what it appended alone) and must find nothing in every other story and sample."""

from __future__ import annotations

from datetime import datetime, timezone

from workbench.analysis.contract import NO_TXN
from workbench.analysis.data_loss import Facts, Truncation, UncleanElection, _unseen, judge
from workbench.analysis.findings import TP, Coverage
from workbench.model.partition_log import OfflineElection

AT = datetime(2024, 3, 12, 9, 41, 5, tzinfo=timezone.utc)


def checked() -> Coverage:
    """Coverage as the runner leaves it before `judge` (contract.Analysis.findings)."""
    coverage = Coverage()
    coverage.record("data_loss", ["ZooKeeper history", "broker logs"])
    return coverage


def elected(line: tuple[str, int] | None) -> UncleanElection:
    file, line_no = line or (None, None)
    return UncleanElection(
        "payments", 2, 0x50000003A, AT, 3, 7, [1], 0x500000031, "1200" if line else None, file, line_no
    )


def cut(high_watermark: int | None, led_before: bool = False) -> Truncation:
    return Truncation(1, "payments", 2, AT, 1200, high_watermark, led_before, "brokers/1/logs/server.log:88")


def test_an_unclean_election_is_critical_and_cites_the_txns_and_the_leaders_line() -> None:
    (found,) = judge(Facts([elected(("brokers/3/logs/server.log", 412))], [], False), checked())
    assert found.kind == "data_loss.unclean_election" and found.severity.name == "CRITICAL"
    assert found.subject == {"topic": "payments", "partition": 2, "broker": 3, "zxid": "0x50000003a"}
    assert "broker 3, not in the ISR [1], was elected leader at zxid 0x50000003a" in found.summary
    assert "leader epoch 7 from offset 1200): an unclean election" in found.summary
    assert found.evidence == ("zk:txn@0x500000031", "zk:txn@0x50000003a", "broker-3:logs/server.log:412")
    (without_log,) = judge(Facts([elected(None)], [], False), checked())
    assert "leader epoch 7): an unclean election" in without_log.summary and len(without_log.evidence) == 2


def test_a_truncation_below_the_high_watermark_counts_what_is_gone() -> None:
    (found,) = judge(Facts([], [cut(1250)], False), checked())
    assert found.severity.name == "CRITICAL" and found.subject["below_hw"] is True
    assert "to offset 1200, below its high watermark 1250" in found.summary
    assert "at least 50 committed record(s) are gone" in found.summary
    assert found.evidence == ("brokers/1/logs/server.log:88",)


def test_a_former_leaders_truncation_warns_and_nothing_is_invented() -> None:
    (found,) = judge(Facts([], [cut(None, led_before=True)], False), checked())
    assert found.severity.name == "WARNING" and found.subject["below_hw"] is False
    assert "Broker 1, which had led payments-2, truncated it to offset 1200" in found.summary
    coverage = checked()
    assert judge(Facts([], [], True), coverage) == []
    assert coverage["data_loss"].missing == [NO_TXN]


def test_a_truncation_counts_what_it_dropped_where_the_followers_line_gives_its_log_end() -> None:
    said = "brokers/1/logs/state-change.log:40"
    former = Truncation(1, "payments", 2, AT, 1200, 1180, True, "brokers/1/logs/server.log:88", 1250, said)
    (found,) = judge(Facts([], [former], False), checked())
    assert found.severity.name == "WARNING" and found.subject["records"] == 50
    assert "the 50 record(s) it held beyond that offset (its log ended at 1250) are dropped" in found.summary
    assert "high watermark 1180, so no producer with acks=all was told" in found.summary
    assert found.evidence == (said, "brokers/1/logs/server.log:88")
    below = Truncation(1, "payments", 2, AT, 1200, 1250, False, "brokers/1/logs/server.log:88", 1300, said)
    (found,) = judge(Facts([], [below], False), checked())
    assert found.severity.name == "CRITICAL" and found.subject["records"] == 100
    assert "at least 50 committed record(s)" in found.summary and "100 record(s) in all" in found.summary


def test_a_followers_truncation_no_line_judges_is_said_in_coverage() -> None:
    tps = [TP("payments", 2), TP("payments", 3)]
    assert _unseen([], 0, "2.5.1") is None
    said = _unseen(tps, 2, "2.5.1") or ""
    assert "whether 2 partition(s)' truncations by replicas that had not led them (payments 2-3)" in said
    assert "(Kafka 2.5.1 logs neither the fetcher's warning nor a follower's log end)" in said
    assert "Kafka" not in (_unseen(tps, 2, "2.8.2") or "") and "Kafka" not in (_unseen(tps, 2, None) or "")
    coverage = checked()
    judge(Facts([], [], False, unseen=said), coverage)
    assert coverage["data_loss"].missing == [said]


# -- without ZooKeeper's history: the controller's own lines (model/partition_log.py) -----------------------
def alone(
    isr_printed: list[int] | None,
    went: tuple[int, ...] = (),
    *,
    leader: int = 3,
    said: bool = False,
    recovering: bool = False,
) -> OfflineElection:
    """Broker `leader` elected from OfflinePartition with an ISR of itself, after the ISR a line printed
    and the replicas taken offline since (folded as the query folds them)."""
    before = None
    if isr_printed is not None:
        before = list(isr_printed)
        for r in went:
            if len(before) > 1 and r in before:
                before.remove(r)
    isr_line = ("brokers/1/logs/state-change.log", 40) if isr_printed is not None else (None, None)
    return OfflineElection(
        "payments", 2, leader, 7, AT, "brokers/1/logs/state-change.log", 84, recovering, said,
        isr_printed, *isr_line, list(went), before, "1200",
    )  # fmt: skip


def test_from_the_controllers_lines_a_leader_outside_the_isr_before_is_unclean() -> None:
    (found,) = judge(Facts([], [], False, [alone([2, 3], (3, 2))], 1), checked())
    assert found.kind == "data_loss.unclean_election" and found.severity.name == "CRITICAL"
    assert found.subject == {"topic": "payments", "partition": 2, "broker": 3, "leader_epoch": 7}
    assert (
        "leader epoch 7 from offset 1200), though it was not in the ISR [2] (the ISR [2, 3]" in found.summary
    )
    assert found.evidence == ("broker-1:logs/state-change.log:40", "broker-1:logs/state-change.log:84")


def test_from_the_controllers_lines_its_words_and_recovering_need_no_isr() -> None:
    said, marked = judge(
        Facts([], [], False, [alone(None, said=True), alone(None, recovering=True)], 2), checked()
    )
    assert "There's potential data loss" in said.summary and "RECOVERING" in marked.summary
    assert said.evidence == ("broker-1:logs/state-change.log:84",)


def test_from_the_controllers_lines_a_clean_election_is_nothing_and_an_unknown_isr_is_said() -> None:
    coverage = checked()
    clean = [alone([4, 3], (4,)), alone([3]), alone([3, 4], (4, 3))]  # 3 stayed in; the last member is kept
    assert judge(Facts([], [], False, clean, 3), coverage) == []
    assert coverage["data_loss"].status.value == "done"
    # what was read: the lines' elections no txn holds, said in `used` (not promised by a want)
    assert coverage["data_loss"].used[-1] == (
        "the controller's lines: 3 election(s) from OfflinePartition no txn holds"
    )
    assert judge(Facts([], [], False, [alone(None)], 4), coverage) == []
    assert coverage["data_loss"].status.value == "partial"
    (untold, more) = coverage["data_loss"].missing
    assert (
        untold.startswith("the ISR before 1 leader election(s) from OfflinePartition")
        and "payments 2" in untold
    )
    assert more == "3 more offline elections in the logs, not examined"
