"""The data-loss analysis's findings half (`data_loss.judge`), from hand-written facts: no Spark. Its facts
half meets the simulated truth in test_triage_must_find (an unclean election, a hung or cut-off controller
that truncates what it appended alone) and must find nothing in every other story and sample."""

from __future__ import annotations

from datetime import datetime, timezone

from workbench.analysis.contract import NO_TXN
from workbench.analysis.data_loss import Facts, Truncation, UncleanElection, judge
from workbench.analysis.findings import Coverage

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
