"""The cluster at any moment (`workbench.state_at`) against the simulator's truth: at the capture's zxid it is
the captured tree; at each election, reassignment and deletion it shows what the truth says; without
ZooKeeper's history it is rebuilt from the logs and says so."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from conftest import SAMPLE_DATA, samples
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import workbench
from workbench.frames import Bundle, WithoutZooKeeper, open_bundle
from workbench.model.service import outages
from workbench.model.state import ClusterState, diff

SAMPLES = samples()


def _truth(name: str) -> dict[str, Any]:
    return json.loads((SAMPLE_DATA / name / "truth.json").read_text())


def _at(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, timezone.utc)


def _moving(state: ClusterState) -> dict[tuple[str, int], list[int]]:
    return {(r.topic, r.partition): r.target for r in state.reassignments.collect()}


@pytest.mark.parametrize("name", SAMPLES)
def test_at_the_capture_zxid_the_state_is_the_captured_tree(
    sample: Callable[[str], Bundle], name: str
) -> None:
    bundle = sample(name)
    replayed = workbench.state_at(bundle, _truth(name)["last_zxid"])
    captured = workbench.state_at(bundle)
    assert (
        replayed.exact
        and captured.exact
        and "txns to" in replayed.source
        and "znodes.jsonl" in captured.source
    )
    for scalar in ("controller", "controller_epoch", "live_brokers", "delete_markers"):
        assert getattr(replayed, scalar) == getattr(captured, scalar), scalar
    assert replayed.partitions.count() == captured.partitions.count()  # none left after deletion-complete
    assert replayed.partitions.exceptAll(captured.partitions).count() == 0
    assert diff(replayed, captured).partitions.count() == 0 and not diff(replayed, captured).changes


def test_the_counts_at_a_moment_are_the_health_series_counts(sample: Callable[[str], Bundle]) -> None:
    """One definition of offline, without an acting leader and under-replicated: a moment's summary
    counts what the health series counts at the end of that minute (the truth's, from the model)."""
    name = "topicid-mismatch-2.8"
    bundle = sample(name)
    minutes = _truth(name)["health"]["minutes"]
    counts = ("offline", "no_acting_leader", "under_replicated")
    firsts = [next((m for m in minutes if m[c]), minutes[-1]) for c in counts]
    moments = {m["minute_ms"]: m for m in [*firsts, minutes[-1]]}
    assert any(m["no_acting_leader"] for m in moments.values())
    for m in moments.values():
        got = workbench.state_at(bundle, _at(m["minute_ms"] + 59_999)).summary()
        assert {c: got[c] for c in counts} == {c: m[c] for c in counts}, m["minute_ms"]


@pytest.mark.slow
@pytest.mark.parametrize("name", SAMPLES)
def test_at_each_election_the_state_has_the_truths_controller(
    sample: Callable[[str], Bundle], name: str
) -> None:
    bundle = sample(name)
    for c in _truth(name)["controllers"]:
        state = workbench.state_at(bundle, _at(c["elected_ms"]))
        assert (state.controller, state.controller_epoch) == (c["broker"], c["epoch"])
        before = workbench.state_at(bundle, _at(c["elected_ms"] - 1))
        assert before.controller_epoch != c["epoch"]


@pytest.mark.slow
def test_reassignments_are_in_progress_between_start_and_completion(sample: Callable[[str], Bundle]) -> None:
    name = "controller-failover-2.5"
    bundle = sample(name)
    moves = _truth(name)["reassignments"]
    # the first and the last to complete (each call replays ZooKeeper's tree: not all of them)
    picked = [min(moves, key=lambda m: m["completed_ms"]), max(moves, key=lambda m: m["completed_ms"])]
    for m in picked:
        key = (m["topic"], m["partition"])
        assert _moving(workbench.state_at(bundle, _at(m["started_ms"]))).get(key) == m["to"]
        assert _moving(workbench.state_at(bundle, _at(m["completed_ms"] - 1))).get(key) == m["to"]
        done = workbench.state_at(bundle, _at(m["completed_ms"]))
        assert key not in _moving(done)
        row = done.partitions.where((F.col("topic") == key[0]) & (F.col("partition") == key[1])).first()
        assert row is not None and sorted(row.replicas) == sorted(m["to"])


@pytest.mark.slow
@pytest.mark.parametrize("name", ["deletion-complete-3.6", "deletion-stuck-2.8"])
def test_deletion_markers_live_from_request_to_completion(sample: Callable[[str], Bundle], name: str) -> None:
    bundle = sample(name)
    deletions = _truth(name)["deletions"]
    assert deletions
    for topic, d in deletions.items():
        assert topic not in (workbench.state_at(bundle, _at(d["requested_ms"] - 1)).delete_markers or ())
        assert topic in (workbench.state_at(bundle, _at(d["requested_ms"])).delete_markers or ())
        if d["completed_ms"] is None:
            assert topic in (workbench.state_at(bundle).delete_markers or ())
        else:
            gone = workbench.state_at(bundle, _at(d["completed_ms"]))
            assert topic not in (gone.delete_markers or ())
            assert gone.partitions.where(F.col("topic") == topic).count() == 0


def test_diff_across_a_failover_names_the_new_controller(sample: Callable[[str], Bundle]) -> None:
    name = "controller-failover-2.5"
    bundle = sample(name)
    first, second = _truth(name)["controllers"]
    failure = _truth(name)["broker_failures"][0]
    assert failure["broker"] == first["broker"]
    d = diff(
        workbench.state_at(bundle, _at(failure["crashed_ms"])),
        workbench.state_at(bundle, _at(second["ready_ms"])),
    )
    assert d.changes["controller"] == (first["broker"], second["broker"])
    assert d.changes["controller_epoch"] == (first["epoch"], second["epoch"])
    moved = d.partitions.where(F.col("what") == "leader").collect()
    assert moved and all(r.before == str(failure["broker"]) for r in moved)  # the dead broker's leaders
    assert failure["broker"] not in (d.after.live_brokers or ()) and failure["broker"] in (
        d.before.live_brokers or ()
    )


def test_without_zookeeper_history_the_state_is_rebuilt_from_the_logs(
    sample: Callable[[str], Bundle], spark: SparkSession, tmp_path: Path
) -> None:
    name = "controller-failover-2.5"
    shutil.copytree(SAMPLE_DATA / name, tmp_path / name, ignore=shutil.ignore_patterns("zk"))
    bundle = open_bundle(tmp_path / name, spark)
    truth = _truth(name)
    with pytest.raises(ValueError, match="no ZooKeeper txn logs"):
        workbench.state_at(bundle, 5)
    with pytest.raises(ValueError, match=r"expected a zxid .* or an ISO time"):
        workbench.state_at(bundle, "yesterday")
    for c in truth["controllers"]:
        state = workbench.state_at(bundle, _at(c["ready_ms"]))
        assert not state.exact and "logs" in state.source and "assignments" in state.unknown
        assert (state.controller, state.controller_epoch) == (c["broker"], c["epoch"])
    exact = workbench.state_at(sample(name)).partitions
    rebuilt = workbench.state_at(bundle, _at(truth["captured_ms"])).partitions
    pairs = exact.alias("z").join(rebuilt.alias("l"), ["topic", "partition"])
    assert pairs.count() == exact.count()
    assert pairs.where(F.col("z.leader") != F.col("l.leader")).count() == 0
    assert pairs.where(F.sort_array("z.isr") != F.sort_array("l.isr")).count() == 0


@pytest.mark.parametrize("name", SAMPLES)
def test_the_lines_rebuild_every_partitions_leader_epoch_and_isr_at_the_capture(
    sample: Callable[[str], Bundle], name: str
) -> None:
    """Without ZooKeeper, each partition's state at the capture is the one history's from the lines
    (`history.partitions.printed_at`): ZooKeeper's tree says the same leader and leader epoch, and the
    same ISR where a line printed the one at that epoch (unknown, never an older one, where none did)."""
    whole = sample(name)
    alone = WithoutZooKeeper(whole)
    state = workbench.state_at(alone, _at(_truth(name)["captured_ms"]))
    assert not state.exact and "assignments" in state.unknown
    exact = workbench.state_at(whole).partitions.alias("z")
    pairs = exact.join(state.partitions.alias("l"), ["topic", "partition"], "left")
    differ = pairs.where(
        ~F.col("z.leader").eqNullSafe(F.col("l.leader"))
        | ~F.col("z.leader_epoch").eqNullSafe(F.col("l.leader_epoch"))
        | (F.col("l.isr").isNotNull() & (F.sort_array("z.isr") != F.sort_array("l.isr")))
    )
    assert differ.count() == 0, differ.collect()[:3]
    gone = state.partitions.join(exact, ["topic", "partition"], "left_anti")  # a deleted topic's, say
    assert gone.count() == 0, gone.collect()[:3]


@pytest.mark.parametrize("name", ["topicid-mismatch-2.8", "healthy-3.6"])
def test_from_the_lines_a_moments_counts_are_the_outages_going_on(
    sample: Callable[[str], Bundle], name: str
) -> None:
    """Without ZooKeeper, a moment's offline and without-an-acting-leader counts are the outages the
    leaderless findings read (`service.outages` of the controller's lines) going on then: the refused
    leaders of topicid-mismatch-2.8 among them, none at all in healthy-3.6; under-replicated is not known
    without the assignments."""
    alone = WithoutZooKeeper(sample(name))
    stretch = outages(alone)
    assert stretch is not None
    rows = stretch.select("began", "ended", "count").orderBy("began").collect()
    spans = [(r.began, r.ended) for r in rows]
    ms = timedelta(milliseconds=1)
    firsts = {r["count"]: r.began + ms for r in reversed(rows) if r.ended is None or r.ended > r.began + ms}
    moments = list(firsts.values())  # the first outage of each kind, a millisecond in
    moments.append(_at(_truth(name)["captured_ms"]).replace(tzinfo=None))  # naive UTC, as Spark's rows
    counted = []
    for t in moments:
        got = workbench.state_at(alone, t.replace(tzinfo=timezone.utc)).summary()
        going = sum(b <= t and (e is None or t < e) for b, e in spans)
        assert (got["offline"] + got["no_acting_leader"], got["under_replicated"]) == (going, None), t
        counted.append(got["no_acting_leader"])
    assert any(counted) == (name == "topicid-mismatch-2.8")
    assert bool(spans) == (name == "topicid-mismatch-2.8")


@pytest.mark.parametrize("name", ["deletion-complete-3.6", "deletion-stuck-2.8"])
def test_deletions_pending_from_the_logs_alone(spark: SparkSession, tmp_path: Path, name: str) -> None:
    shutil.copytree(SAMPLE_DATA / name, tmp_path / name, ignore=shutil.ignore_patterns("zk"))
    bundle = open_bundle(tmp_path / name, spark)
    truth = _truth(name)
    pending = sorted(t for t, d in truth["deletions"].items() if d["completed_ms"] is None)
    assert workbench.state_at(bundle, _at(truth["captured_ms"])).delete_markers == tuple(pending)
    for topic, d in truth["deletions"].items():
        if d["completed_ms"] is not None:
            assert topic in (workbench.state_at(bundle, _at(d["completed_ms"] - 1)).delete_markers or ())
