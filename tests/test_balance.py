"""ISR churn and reassignments from ZooKeeper's history against the simulator's truth: every ISR departure
the truth records is seen; a broker restarted three times in ten minutes flaps, one restarted once does not;
each reassignment's steps match the truth; one waiting for a broker that never returns is stuck."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

import pytest
from conftest import REPO
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from workbench.analysis import balance, reassignment
from workbench.analysis.findings import Coverage
from workbench.frames import Bundle, open_bundle
from workbench.simulate import story
from workbench.simulate.cluster import Cluster
from workbench.simulate.run import simulate
from workbench.simulate.scenarios import SCENARIOS, Scale, controller_failover


def _ms(t: datetime) -> int:
    return int(t.replace(tzinfo=timezone.utc).timestamp() * 1000)


def restarted_thrice(c: Cluster, s: Scale) -> None:
    """A broker restarted three times within a few minutes: its replicas leave and rejoin each ISR."""
    for i in range(s.topics):
        story.create_topic(c, f"topic-{i}", s.partitions, s.replication)
    story.produce(c, 5, s.per_second)
    victim = max(b for b in c.brokers if b != c.controller)
    for _ in range(3):
        story.restart(c, victim)
        story.produce(c, 1, s.per_second)
    story.produce(c, 10, s.per_second)


@pytest.mark.slow
def test_isr_departures_of_the_truth_are_seen_and_one_restart_does_not_flap(
    sample: Callable[[str], Bundle],
) -> None:
    for name in ("topicid-mismatch-2.8", "healthy-3.6"):
        truth = json.loads((REPO / "sample_data" / name / "truth.json").read_text())
        bundle = sample(name)
        changes = balance.isr_changes(bundle)
        assert changes is not None
        left = {
            (r.topic, r.partition, r.broker): _ms(r.time)
            for r in changes.where(F.col("change") == "left").collect()  # a few dozen: small samples
        }
        for d in truth["isr_departures"]:
            assert abs(left[(d["topic"], d["partition"], d["broker"])] - d["at_ms"]) < 1_000, d
        churn = balance.isr_churn(bundle)
        assert churn is not None
        assert churn.agg(F.sum("left")).first()[0] == changes.where(F.col("change") == "left").count() > 0
        assert [f for f in balance.findings(bundle, Coverage()) if f.kind == "isr.flapping"] == []
    assert truth["broker_restarts"]  # healthy: one restart, its replicas left and rejoined once


@pytest.mark.slow
def test_a_broker_restarted_three_times_in_minutes_flaps(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(SCENARIOS, "restarted-thrice", restarted_thrice)
    truth = simulate(
        "restarted-thrice", tmp_path / "b", 2, "2.8.2", Scale(topics=2, partitions=4), noise_rate=0
    )
    (victim,) = {r["broker"] for r in truth["broker_restarts"]}
    found = [
        f
        for f in balance.findings(open_bundle(tmp_path / "b", spark), Coverage())
        if f.kind == "isr.flapping"
    ]
    assert [f.subject["broker"] for f in found] == [victim]
    hosted = sum(t["partitions"] for t in truth["topics"].values())  # 3 brokers, replication 3: all
    assert found[0].subject["partitions"] == hosted
    assert len(found[0].evidence) >= 3 and all(e.startswith("zk:txn@") for e in found[0].evidence)


@pytest.mark.slow
def test_reassignment_steps_equal_the_truth(sample: Callable[[str], Bundle]) -> None:
    truth = json.loads((REPO / "sample_data" / "controller-failover-2.5" / "truth.json").read_text())
    bundle = sample("controller-failover-2.5")
    got = reassignment.reassignments(bundle)
    assert got is not None
    rows = {(r.topic, r.partition): r for r in got.collect()}  # one per moved partition
    assert len(rows) == len(truth["reassignments"]) > 0
    for m in truth["reassignments"]:
        r = rows[(m["topic"], m["partition"])]
        assert (r.origin, r.target) == (m["from"], m["to"])
        assert abs(_ms(r.started) - m["started_ms"]) < 1_000
        assert abs(_ms(r.completed) - m["completed_ms"]) < 1_000
        assert r.started_zxid < r.caught_up_zxid < r.completed_zxid and r.in_isr == len(m["to"])
    assert reassignment.findings(bundle, Coverage()) == []


@pytest.mark.slow
def test_a_reassignment_waiting_for_a_broker_that_never_returns_is_stuck(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def never_returns(c: Cluster, s: Scale) -> None:
        """controller-failover without the dead controller's return: moves onto it wait for ever."""
        monkeypatch.setattr(story, "start_again", lambda c, broker: None)
        controller_failover(c, s)

    monkeypatch.setitem(SCENARIOS, "never-returns", never_returns)
    truth = simulate("never-returns", tmp_path / "b", 1, "2.8.2", Scale(brokers=4, hours=0.5), noise_rate=0)
    (dead,) = [f["broker"] for f in truth["broker_failures"]]
    waiting = {(m["topic"], m["partition"]) for m in truth["reassignments"] if m["completed_ms"] is None}
    assert waiting and all(dead in m["to"] for m in truth["reassignments"] if m["completed_ms"] is None)
    coverage = Coverage()
    found = reassignment.findings(open_bundle(tmp_path / "b", spark), coverage)
    assert {(f.subject["topic"], f.subject["partition"]) for f in found} == waiting
    assert (
        all(f.subject["brokers_down"] == [dead] for f in found) and coverage["reassignment"].status == "done"
    )
