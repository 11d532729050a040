"""Producers held back by a follower (`analysis/held_back.py`, `model.isr.held_high_watermarks`): the
leaders' 'Shrinking ISR' lines as Kafka 2.8 and 3.6 print them, a broker printing its local time, and the
judge from hand-written facts. The slow-follower stories hold it to the simulator's truth both ways
(tests/stories.py MUST_FIND, tests/truth_facts.py)."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from pyspark.sql import SparkSession

from workbench.analysis.findings import TP, Coverage
from workbench.analysis.held_back import Facts, HeldBy, judge
from workbench.bundle import log_files
from workbench.model.isr import held_high_watermarks
from workbench.sources.logs import read_logs

CAUGHT_UP = int(datetime(2024, 3, 12, 8, 3, 30, 701000, tzinfo=timezone.utc).timestamp() * 1000)


def _shrink(at: str, tp: str, hw: int, end: int, dropped: str) -> str:
    return (
        f"[{at}] INFO [Partition {tp} broker=1] Shrinking ISR from 1,4,2 to 1. Leader: (highWatermark: {hw}, "
        f"endOffset: {end}). Out of sync replicas: {dropped}. (kafka.cluster.Partition)\n"
    )


def test_the_replica_at_the_high_watermark_held_it_and_36_says_how_long(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Broker 1 prints its time an hour ahead of UTC (+01:00): the wait is the line's time less the
    replica's lastCaughtUpTimeMs, the zone's whole hour taken out. Of two replicas dropped at once only
    the one at the high watermark held it; a drop with nothing beyond the high watermark held nothing."""
    log = tmp_path / "server.log"
    log.write_text(
        _shrink(
            "2024-03-12 09:04:05,706",
            "orders-1",
            3678,
            4522,
            f"(brokerId: 4, endOffset: 3678, lastCaughtUpTimeMs: {CAUGHT_UP}) "
            f"(brokerId: 2, endOffset: 4000, lastCaughtUpTimeMs: {CAUGHT_UP + 20_000})",
        )
        + _shrink("2024-03-12 09:05:00,000", "orders-2", 500, 500, "(brokerId: 4, endOffset: 500)")
        + _shrink("2024-03-12 09:06:00,000", "orders-3", 700, 900, "(brokerId: 4, endOffset: 700)"),
        encoding="utf-8",
    )
    events, _ = read_logs(spark, log_files([log], broker_id=1))
    made = held_high_watermarks.__wrapped__  # the view's query, on the lines alone
    rows = made(SimpleNamespace(cluster_events=events)).orderBy("ts").collect()
    got = [(r.topic, r.partition, r.leader, r.broker, r.records, r.waited_ms) for r in rows]
    assert got == [("orders", 1, 1, 4, 844, 35_005), ("orders", 3, 1, 4, 200, None)]


def _held(waited: tuple[int, int] | None, timed: int, past: int) -> HeldBy:
    at = datetime(2024, 3, 12, 8, 4, 5)
    refs = ["broker-1:logs/server.log:12"]
    return HeldBy(4, 3, 2, [TP("orders", 1), TP("orders", 3)], [1], 844, waited, timed, past, at, at, refs)


def test_the_finding_says_what_acks_all_producers_waited_and_whether_they_timed_out() -> None:
    (found,) = judge(Facts([_held((35_005, 45_000), 3, 2)], "3.6.2", 30_000), Coverage())
    assert found.kind == "isr.high_watermark_held" and found.subject == {
        "broker": 4,
        "partitions": 2,
        "times": 3,
        "waited_ms": [35_005, 45_000],
    }
    assert "3 times, between 2024-03-12 08:04:05 and 08:04:05 (leader 1's clock)" in found.summary
    assert "waited up to 35.0 s to 45.0 s each time" in found.summary
    assert "2 of those waits ran past the producers' default request.timeout.ms (30.0 s)" in found.summary
    assert found.summary.endswith("Producers with acks=0 or 1 were not held.")
    (short,) = judge(Facts([_held((12_000, 14_000), 3, 0)], "3.6.2", 10_000), Coverage())
    assert "none ran past" in short.summary


def test_before_36_the_wait_is_bounded_by_the_lag_setting_it_was_dropped_at() -> None:
    facts: dict[str, Any] = {"version": "2.8.2"}
    (found,) = judge(Facts([_held(None, 0, 0)], lag_ms=30_000, **facts), Coverage())
    assert "waited_ms" not in found.subject
    assert "more than replica.lag.time.max.ms (30000 ms) at each drop" in found.summary
    once = HeldBy(
        4, 1, 1, [TP("orders", 1)], [1, 2], 9, None, 0, 0, datetime(2024, 3, 12), datetime(2024, 3, 12), ["r"]
    )
    (one,) = judge(Facts([once], lag_ms=30_000, **facts), Coverage())
    assert (
        "(orders 1) once, at 2024-03-12 00:00:00 (the clocks of leaders 1, 2): its leader's high watermark"
        in one.summary
    )
    assert "9 record(s) short" in one.summary and "at the drop" in one.summary
    assert "Kafka 2.8.2's line does not say how much more" in found.summary
    assert "past the producers' default request.timeout.ms (30.0 s)" in found.summary
    (short,) = judge(Facts([_held(None, 0, 0)], lag_ms=10_000, **facts), Coverage())
    assert "a request still waiting at its request.timeout.ms" in short.summary


def test_no_follower_held_a_high_watermark_no_finding() -> None:
    assert judge(Facts([], "3.6.2", 30_000), Coverage()) == []
