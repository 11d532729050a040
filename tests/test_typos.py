"""The typo analysis's findings half (`typos.judge`), from hand-written facts: no Spark. Its facts half runs
on a story with typos in it (tests/test_lifecycle.py) and on every sample and story triaged, where no
typo may be found."""

from __future__ import annotations

from datetime import datetime, timezone

from workbench.analysis.findings import Coverage
from workbench.analysis.typos import Facts, Pair, judge

CREATED = datetime(2024, 3, 12, 9, 30, tzinfo=timezone.utc)


def checked() -> Coverage:
    """Coverage as the runner leaves it before `judge` (contract.Analysis.findings)."""
    coverage = Coverage()
    coverage.record("topic_typos", ["ZooKeeper state"])
    return coverage


def pair(typo: str, shape: tuple[int, int], by: int | None = None, swapped: bool = False) -> Pair:
    return Pair(typo, "payments", *shape, 12, 3, CREATED, 0x300000042, swapped, by)


def test_a_slip_auto_created_by_a_broker_is_a_likely_typo() -> None:
    (found,) = judge(Facts([pair("paymetns", (12, 3), by=2, swapped=True)], (1, 1)), checked())
    assert found.kind == "topic.likely_typo" and found.subject == {"topic": "paymetns", "sibling": "payments"}
    assert "(two letters swapped): broker 2's own ZooKeeper session created it" in found.summary
    assert "created 2024-03-12 09:30:00 ZooKeeper time" in found.summary
    assert found.evidence == ("zk:/brokers/topics/paymetns@czxid=0x300000042", "zk:/brokers/topics/payments")


def test_the_brokers_defaults_where_the_sibling_has_others_are_a_sign() -> None:
    (found,) = judge(Facts([pair("payment", (1, 1))], (1, 1)), checked())
    assert "(one letter apart): it has the brokers' defaults, 1 partition(s) and replication factor 1, " in (
        found.summary
    )
    assert "where payments has 12 and 3" in found.summary


def test_a_name_with_no_sign_is_someone_s_choice_and_unknown_defaults_are_said() -> None:
    chosen = Facts([pair("payment", (12, 3))], (1, 1))  # the sibling's shape: made on purpose
    assert judge(chosen, checked()) == []
    coverage = checked()
    unknown = Facts([pair("payment", (1, 1))], None)  # the brokers' defaults not known: no sign from them
    assert judge(unknown, coverage) == []
    assert coverage["topic_typos"].missing == [
        "server.properties: num.partitions and default.replication.factor"
    ]
