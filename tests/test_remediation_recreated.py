"""A replica holding a deleted topic's id is never repaired by removing its partition.metadata: the plan
leaves it out and says why, from ZooKeeper's history (the ids the deleted topic held) or, without it, the
controllers' lines (the topic deleted and created again)."""

from __future__ import annotations

import shutil
from datetime import datetime
from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from stories import MUST_FIND, Stories

from workbench import remediation
from workbench.frames import WithoutZooKeeper, open_bundle
from workbench.model.history.topics import Recreation
from workbench.model.refs import Said
from workbench.remediation.planner import RepairPlan, StaleReplica
from workbench.remediation.recreated import Recreated, recreated, told

STORY = next(n for n in MUST_FIND if n.startswith("recreated+"))


def test_the_ids_a_deleted_topic_held_are_those_before_its_deletion() -> None:
    at = datetime(2024, 3, 12, 8, 0)
    logged = Said(at, "brokers/1/logs/controller.log", 9)
    found = [
        Recreation("orders", at, 0x30, 0x40, frozenset({"A"})),
        Recreation("orders", at, 0x70, 0x80, frozenset({"B"}), logged, logged),  # the lines tell it too
        Recreation("audit", at, deleted=logged, created=logged),  # only the lines
    ]
    got = told(found, ["orders", "audit", "never-deleted"])
    r = got["orders"]
    assert r == Recreated("orders", frozenset({"A", "B"}), "its znode deleted at zxid 0x70")
    assert got["audit"] == Recreated("audit", None, "the controller's lines, broker-1:logs/controller.log:9")
    assert "never-deleted" not in got
    # C, minted by the new topic and then replaced (a tool's rewrite), is the new topic's own: repaired
    assert r.holds_old("A") and not r.holds_old("C")
    assert got["audit"].holds_old("C")  # ids not known: any


def test_replicas_of_a_deleted_topic_are_left_out_and_said() -> None:
    old = [StaleReplica(2, "0", "orders", p, "A", "C", True, False) for p in (0, 1)]
    note = Recreated("orders", frozenset({"A"}), "its znode deleted at zxid 0x30").note(old)
    assert "broker 2: 0-1" in note and "move the whole partition dir" in note
    plan = RepairPlan("b", {}, recreated=[note])
    assert remediation.summary(plan).startswith("Nothing this plan can repair: orders was deleted")
    assert note in plan.markdown()


def test_a_topic_deleted_and_created_again_is_found_with_the_ids_it_held(stories: Stories) -> None:
    truth = stories.truth(STORY)
    bundle = stories.bundle(STORY)
    (topic,) = [t for t in truth["deletions"] if t.endswith("-payments") or t == "payments"]
    found = recreated(bundle, [topic, "never-deleted"])
    assert list(found) == [topic] and found[topic].old_ids
    assert found[topic].where.startswith("its znode deleted at zxid 0x")
    assert not found[topic].holds_old(truth["topics"][topic]["topic_id"])


def test_without_zookeeper_the_controllers_lines_show_it(stories: Stories) -> None:
    truth = stories.truth(STORY)
    (topic,) = [t for t in truth["deletions"] if t.endswith("-payments") or t == "payments"]
    with WithoutZooKeeper(stories.bundle(STORY)) as bundle:
        found = recreated(bundle, [topic])
    assert found[topic].old_ids is None and "the controller's lines, broker-" in found[topic].where


@pytest.mark.parametrize("held", ["deleted", "other"])
def test_the_plan_leaves_out_a_replica_of_the_deleted_topic_and_repairs_another(
    stories: Stories, spark: SparkSession, tmp_path: Path, held: str
) -> None:
    """One replica of the re-created topic made to hold the deleted topic's id (a broker that kept the
    old log) is left out and said; made to hold an id the topic never had before its deletion, it is
    planned."""
    truth = stories.truth(STORY)
    (topic,) = [t for t in truth["deletions"] if t.endswith("-payments") or t == "payments"]
    bundle = tmp_path / "bundle"
    shutil.copytree(stories.path(STORY), bundle)
    with open_bundle(stories.path(STORY), spark) as whole:
        (old,) = recreated(whole, [topic])[topic].old_ids or frozenset()
    meta = sorted(bundle.glob(f"brokers/*/datadirs/*/{topic}-0/partition.metadata"))[0]
    disk_id = old if held == "deleted" else "Nc3Xi0ynQ4GqYnJbq1mWrw"
    meta.write_text(f"version: 0\ntopic_id: {disk_id}\n")
    with open_bundle(bundle, spark) as opened:
        plan = remediation.plan(opened)
    planned = {(r.topic, r.partition, r.disk_topic_id) for s in plan.steps for r in s.replicas}
    if held == "deleted":
        assert not planned and len(plan.recreated) == 1 and topic in plan.recreated[0]
        assert "hold the deleted topic's records" in remediation.summary(plan)
    else:
        assert planned == {(topic, 0, disk_id)} and not plan.recreated
