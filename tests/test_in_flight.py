"""The in-flight analysis's findings half (`judge`), from hand-written facts: no Spark. Its facts half is
checked on the samples (test_golden) and on the story where a reassignment holds a queued deletion
(test_triage_must_find: reassignment-blocks-deletion)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from workbench.analysis.findings import Coverage
from workbench.analysis.in_flight import Facts, Moving, judge

BEGAN = datetime(2024, 3, 12, 8, 0, tzinfo=timezone.utc)
NOW = int((BEGAN + timedelta(minutes=42)).timestamp() * 1000)


def checked() -> Coverage:
    """Coverage as the runner leaves it before `judge` (contract.Analysis.findings)."""
    coverage = Coverage()
    coverage.record("in_flight", ["ZooKeeper state"])
    return coverage


def moving(started: bool = True) -> Moving:
    """clickstream 0 moving from broker 3 to 4; 4 not yet in the ISR; 1 moving with its target in it."""
    written = BEGAN - timedelta(minutes=5)
    since, zxid = (BEGAN, 0x200000010) if started else (None, None)
    return Moving(
        "clickstream", 2, since, zxid, written, 0x20000000A, [(0, [1, 2, 4], [4]), (1, [2, 4, 1], [])]
    )


def test_nothing_in_flight() -> None:
    assert judge(Facts(NOW, [], {}, None, False), checked()) == []


def test_a_reassignment_that_holds_a_queued_deletion_and_the_rebalance() -> None:
    facts = Facts(NOW, [moving()], {"clickstream": BEGAN + timedelta(minutes=2)}, None, True)
    found = {f.kind: f for f in judge(facts, checked())}
    moved = found["in_flight.reassignment"]
    assert moved.severity.value == "warning"
    assert moved.subject == {"topic": "clickstream", "partitions": [0, 1], "waiting": ["0@4"]}
    assert moved.summary == (
        "The reassignment of clickstream partition(s) 0-1 (2) was under way at the capture (42 min, since "
        "2024-03-12 08:00:00 ZooKeeper time): 0 -> [1, 2, 4]; 1 -> [2, 4, 1]; target replicas not yet in "
        "the ISR: 0@4. Meanwhile the deletion of clickstream, queued, waits until it ends; the controller's "
        "automatic leader rebalance elects nothing anywhere while it runs."
    )
    assert moved.evidence == ("zk:txn@0x200000010",)
    queued = found["in_flight.deletion"]
    assert queued.subject == {"topics": ["clickstream"]} and "clickstream (40 min," in queued.summary
    assert queued.evidence == ("zk:/admin/delete_topics/clickstream",)


def test_without_the_history_the_age_is_a_bound_and_an_unknown_version_is_said() -> None:
    (moved,) = judge(Facts(NOW, [moving(started=False)], {}, None, None), checked())
    assert moved.severity.value == "info"
    assert "(at least 47 min, since 2024-03-12 07:55:00 ZooKeeper time)" in moved.summary
    assert (
        "before Kafka 3.4 the automatic leader rebalance also waits for it (version unknown)" in moved.summary
    )
    assert moved.evidence == ("zk:/brokers/topics/clickstream@mzxid=0x20000000a",)
    (after,) = judge(Facts(NOW, [moving()], {}, None, False), checked())
    assert "Meanwhile" not in after.summary


def test_a_preferred_election_nobody_took_up_and_a_marker_of_unknown_age() -> None:
    facts = Facts(None, [], {"old": None}, (BEGAN, 0x200000020), False)
    found = {f.kind: f for f in judge(facts, checked())}
    election = found["in_flight.preferred_election"]
    assert "(since 2024-03-12 08:00:00 ZooKeeper time) was still waiting" in election.summary
    assert election.evidence == ("zk:/admin/preferred_replica_election@czxid=0x200000020",)
    assert "old (since a moment not known)" in found["in_flight.deletion"].summary
