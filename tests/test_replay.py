"""The repair plan proved by replaying it: the simulator runs each step on the cluster the bundle came from
(stop, files removed, start, the controller's reaction) with producers writing and the automatic leader
rebalance on, and the plan must end with every partition led by a replica that accepts it, no stale id
left, nothing under-replicated, no wait that could not be met, and no partition without an acting leader
beyond what the forecast says. Fresh bundles at 2.8.2 and 3.6.2 cover partitions whose every replica is
stale or none, and the controller among the restarted brokers or not."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from workbench import remediation
from workbench.frames import open_bundle
from workbench.remediation.forecast import PartitionNow, best, forecast
from workbench.simulate.cluster import Cluster
from workbench.simulate.replay import cluster_of, replay
from workbench.simulate.run import simulate
from workbench.simulate.scenarios import Scale

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data" / "topicid-mismatch-2.8"

# (Kafka version, seed, brokers, partitions per topic) -> (a partition has every replica stale, the
# controller is among the restarted brokers): what each case is there to cover.
CASES = {
    ("2.8.2", 1, 3, 6): (True, True),
    ("2.8.2", 2, 4, 6): (True, True),
    ("2.8.2", 4, 3, 6): (True, True),
    ("2.8.2", 5, 5, 6): (True, True),
    ("2.8.2", 1, 6, 1): (False, False),
    ("2.8.2", 3, 8, 2): (False, True),
    ("3.6.2", 1, 3, 6): (True, True),
    ("3.6.2", 3, 4, 6): (True, True),
    ("3.6.2", 2, 5, 6): (True, True),
    ("3.6.2", 2, 6, 1): (True, True),
    ("3.6.2", 4, 6, 1): (True, False),
}


def _replayed(bundle: Path, spark: SparkSession, scratch: Path) -> tuple[remediation.RepairPlan, list[str]]:
    """The plan and everything wrong with how its replay ended."""
    plan = remediation.plan(open_bundle(bundle, spark))
    assert plan.forecast is not None and plan.steps
    r = replay(cluster_of(bundle, scratch), plan)
    wrong = [f"stalled: {s}" for s in r.stalled]
    wrong += [f"not foreseen without an acting leader: {u}" for u in r.unforeseen(plan)]
    wrong += [f"no acting leader at the end: {t}-{p}" for t, p in r.unserved]
    wrong += [f"under-replicated at the end: {t}-{p}" for t, p in r.short]
    wrong += [f"broker {b}: {t}-{p} holds {i}" for b, (t, p), i in r.stale]
    return plan, wrong


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(CASES), ids=lambda c: "-".join(map(str, c)))
def test_a_fresh_bundles_plan_replays_to_a_repaired_cluster_within_its_forecast(
    case: tuple[str, int, int, int], spark: SparkSession, tmp_path: Path
) -> None:
    version, seed, brokers, partitions = case
    bundle = tmp_path / "bundle"
    scale = Scale(brokers=brokers, topics=2, partitions=partitions, hours=0.3)
    simulate("topicid-mismatch", bundle, seed=seed, kafka_version=version, scale=scale)
    plan, wrong = _replayed(bundle, spark, tmp_path / "retold")
    assert wrong == []
    every_replica_stale = any(set(p.stale) >= set(p.replicas) for p in plan.partitions)
    assert (every_replica_stale, any(s.controller for s in plan.steps)) == CASES[case]


@pytest.mark.slow
def test_the_samples_plan_replays_to_a_repaired_cluster_within_its_forecast(
    spark: SparkSession, tmp_path: Path
) -> None:
    plan, wrong = _replayed(SAMPLE, spark, tmp_path / "retold")
    assert wrong == []
    # orders-2 and -5 have every replica stale: offline only while their last ISR member restarts
    windows = {(w.tp, w.start, w.end) for w in plan.forecast.windows} if plan.forecast else set()
    last = len(plan.steps)
    assert {(("orders", q), (last, "stopped"), (last, "started")) for q in (2, 5)} <= windows


@pytest.mark.slow
@pytest.mark.parametrize("version", ["2.8.2", "3.6.2"])
def test_a_step_whose_broker_would_halt_as_it_starts_stops_before_it_until_that_is_put_right(
    version: str, spark: SparkSession, tmp_path: Path
) -> None:
    """Broker 4 holds stale replicas and halted when it could not remove a deleted topic's '-delete' dirs
    (their files another user's): started as they are, it queues them again and halts once more,
    file.delete.delay.ms after its step said done. Its step stops before starting it; put right (the
    dirs its user's again), the plan repairs the cluster and the dirs go."""
    bundle = tmp_path / "bundle"
    scale = Scale(brokers=4, topics=2, partitions=4, hours=0.3)
    simulate("topicid-mismatch+deletion-denied", bundle, seed=1, kafka_version=version, scale=scale)
    plan = remediation.plan(open_bundle(bundle, spark))
    (down,) = [s for s in plan.steps if not s.registered]
    assert {h.kind for h in plan.hazards if h.broker == down.broker} == {
        "deletion.lingering_dir",
        "log_dir.offline",
    }

    def told_again() -> tuple[Cluster, int]:
        c = cluster_of(bundle, tmp_path / "retold")
        return c, len(c.truth["broker_failures"])

    c, failed = told_again()
    r = replay(c, plan)
    n = plan.steps.index(down) + 1
    assert r.refused and r.refused[0].startswith(f"step {n}: broker {down.broker}'s user may not write in")
    assert not c.brokers[down.broker].alive and c.truth["broker_failures"][failed:] == []

    c, failed = told_again()  # the plan without the check: done, then the broker halts again
    r = replay(c, replace(plan, hazards=[]))
    assert r.stalled == [] and not c.brokers[down.broker].alive
    assert [f["broker"] for f in c.truth["broker_failures"][failed:]] == [down.broker]

    c, failed = told_again()  # put right: the dirs are its user's again
    c.brokers[down.broker].log_dir.denied.clear()
    r = replay(c, plan)
    assert (r.refused, r.stalled, r.unforeseen(plan), r.unserved, r.short, r.stale) == (
        [],
        [],
        [],
        [],
        [],
        [],
    )
    assert not [d for d in c.brokers[down.broker].log_dir.replicas.values() if d.delete_dir]


@pytest.mark.slow
def test_a_deletion_halted_by_a_broker_the_plan_starts_ends_there_and_the_replay_agrees(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Broker 4, down, holds stale replicas and replicas of a topic whose deletion it halted: its step's
    registration resumes the deletion, which completes (every other replica's broker is live), so those
    partitions' outage ends at its step, not "after the plan"; the simulator, playing the plan, agrees."""
    bundle = tmp_path / "bundle"
    scale = Scale(brokers=4, topics=2, partitions=4, hours=0.3)
    simulate("topicid-mismatch+deletion-stuck", bundle, seed=1, kafka_version="2.8.2", scale=scale)
    plan, wrong = _replayed(bundle, spark, tmp_path / "retold")
    assert wrong == []
    assert plan.forecast is not None
    n = next(n for n, s in enumerate(plan.steps, 1) if not s.registered)
    doomed = [w for w in plan.forecast.windows if w.tp[0].endswith("clickstream-old")]
    assert doomed and all(w.deleted and w.end == (n, "started") for w in doomed)
    assert "when its topic's deletion resumes and completes" in plan.markdown()


# -- the forecast alone ---------------------------------------------------------------------------
def _p(q: int, replicas: tuple[int, ...], isr: tuple[int, ...], leader: int, stale: set[int]) -> PartitionNow:
    return PartitionNow("t", q, replicas, isr, leader, frozenset(stale), True, leader not in stale)


def test_a_stale_follower_is_repaired_before_its_leader_restarts() -> None:
    """Restarting the leader first would hand the partition to broker 2, which would refuse it."""
    f = best([_p(0, (1, 2, 3), (1, 2, 3), 1, {2})], [1, 2], controller=3)
    assert f.order == [2, 1] and f.windows == []
    wrong = best([_p(0, (1, 2, 3), (1, 2, 3), 1, {2})], [1], controller=3)
    assert [(w.tp, w.start) for w in wrong.windows] == [(("t", 0), (1, "stopped"))]


def test_every_replica_stale_costs_one_restart_of_its_leader_done_last() -> None:
    f = best([_p(0, (1, 2, 3), (1, 2, 3), 2, {1, 2, 3})], [1, 2, 3], controller=None)
    assert f.order[-1] == 2
    assert [(w.start, w.end) for w in f.windows] == [((3, "stopped"), (3, "started"))]
    assert f.never_whole == [] and f.steps[-1].whole == [("t", 0)]


def test_a_follower_of_a_leader_at_an_older_epoch_waits_for_it() -> None:
    """A stale leader serving at an older epoch: a repaired follower cannot fetch until it is repaired."""
    p = PartitionNow("t", 0, (1, 2), (1,), 1, frozenset({1, 2}), True, False)
    f = forecast([p], [2, 1], controller=None)
    assert f.steps[0].later == {("t", 0): 2} and f.steps[0].rejoins == []
    assert f.steps[1].elected == [("t", 0)] and f.steps[1].whole == [("t", 0)]


def test_a_partition_of_a_topic_queued_for_deletion_is_not_elected_and_goes_once_every_replica_is_back() -> (
    None
):
    """Offline at the capture, its last ISR member down: that broker's return elects nobody (the topic is
    queued, `deletion_blocks_election`) but resumes the deletion, which completes only once no replica's
    broker is down (`offline_replicas_halt_deletion`)."""
    doomed = PartitionNow("d", 0, (3, 1), (3,), -1, frozenset(), False, False, frozenset({1, 3, 4}))
    stale = _p(0, (1, 2), (1, 2), 1, {2})
    f = forecast([doomed, stale], [2, 3], controller=None, unregistered=frozenset({3, 4}))
    assert f.steps[1].elected == [] and [(w.tp, w.end) for w in f.windows if w.tp[0] == "d"] == [
        (("d", 0), None)
    ]
    f = forecast([doomed, stale], [2, 3], controller=None, unregistered=frozenset({3}))
    (w,) = [w for w in f.windows if w.tp[0] == "d"]
    assert (w.start, w.end, w.deleted) == ((0, "capture"), (2, "started"), True) and (
        "d",
        0,
    ) not in f.never_whole
