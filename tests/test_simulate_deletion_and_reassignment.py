"""A topic deleted while a reassignment moves it off a dead broker (KafkaController.processTopicDeletion,
onPartitionReassignment, onControllerFailover and onBrokerStartup, 2.8.2): the deletion starts at once,
halts on the dead broker's replicas, is halted again by the reassignment once a new controller resumes it,
and completes only when the dead broker returns. The bundle must say so in its logs, ZooKeeper and truth.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from workbench.frames import open_bundle
from workbench.simulate import deletion, reassignment, story
from workbench.simulate.cluster import Cluster
from workbench.simulate.run import simulate
from workbench.simulate.scenarios import SCENARIOS, Scale

TOPIC = "events"
REASSIGNING = "topic reassignment in progress"


def delete_while_reassigning(c: Cluster, s: Scale) -> None:
    """An SRE moves a topic off a broker that died, then deletes the topic before the copies finish (and
    tries the move once more); the controller is restarted to unstick it; the dead broker comes back."""
    story.create_topic(c, TOPIC, s.partitions, s.replication)
    story.produce(c, 10, s.per_second)
    hosts = {r for p in c.topics[TOPIC].partitions.values() for r in p.replicas}
    lost = max(hosts - {c.controller})
    story.crash(c, lost)
    story.produce(c, 1, s.per_second)  # its session expires; its partitions get new leaders
    moves = []
    for p in c.topics[TOPIC].partitions.values():
        if lost in p.replicas:
            spare = [b for b in sorted(c.brokers) if b not in p.replicas and b != lost]
            moves.append((p, [spare[p.partition % len(spare)] if r == lost else r for r in p.replicas]))
    reassignment.reassign(c, moves)
    c.tick(c.jitter(2_000, 5_000))
    deletion.request(c, TOPIC)
    reassignment.reassign(c, moves[:1])  # tried again: refused, the topic is queued for deletion
    story.produce(c, 5, s.per_second)
    story.controller_failover(c)
    story.produce(c, 10, s.per_second)
    story.start_again(c, lost)
    story.produce(c, 5, s.per_second)


@pytest.fixture(scope="module")
def bundle(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    path = tmp_path_factory.mktemp("sim") / "delete-while-reassigning"
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(SCENARIOS, "delete-while-reassigning", delete_while_reassigning)
        truth = simulate(
            "delete-while-reassigning", path, seed=3, scale=Scale(brokers=5, topics=1, partitions=4)
        )
    return path, truth


@pytest.mark.slow
def test_a_reassignment_halts_a_queued_deletion_only_once_a_controller_resumes_it(
    spark: SparkSession, bundle: tuple[Path, dict[str, Any]]
) -> None:
    path, truth = bundle
    b = open_bundle(path, spark)
    assert b.bad_records.count() == 0
    assert b.log_events.where(F.col("event").isNull()).count() == 0
    d = truth["deletions"][TOPIC]
    (lost,) = truth["broker_failures"]
    first, second, *_ = truth["controllers"]
    moves = truth["reassignments"]
    assert moves and all(m["started_ms"] < d["requested_ms"] < second["elected_ms"] for m in moves)
    refused = b.log_events.where("event = 'reassignment.skipped_for_deletion'").select("topic", "partition")
    assert [(r.topic, r.partition) for r in refused.collect()] == [(TOPIC, moves[0]["partition"])]
    # Asked for during the reassignment, the deletion started at once (the mark comes before the
    # enqueue) and halted on the dead broker's replicas; only the new controller halted it for the
    # reassignment it resumed, once per partition.
    reasons = [(h["reason"], h["at_ms"] >= second["elected_ms"]) for h in d["halted"]]
    assert reasons[0] == ("offline replicas", False)
    assert (REASSIGNING, False) not in reasons
    assert reasons.count((REASSIGNING, True)) >= len(moves)
    halted = b.log_events.where("event = 'deletion.halted'").orderBy("ts")
    logged = [(r.broker_id, r.attrs["reason"]) for r in halted.select("broker_id", "attrs").collect()]
    assert [reason for _, reason in logged] == [h["reason"] for h in d["halted"]]
    assert logged[0] == (first["broker"], "offline replicas")
    assert {broker for broker, reason in logged if reason == REASSIGNING} == {second["broker"]}
    ineligible = b.log_events.where("event = 'controller.topics_ineligible_for_deletion'")
    by_second = ineligible.where(F.col("broker_id") == second["broker"]).select("attrs").first()
    assert by_second is not None and TOPIC in by_second.attrs["topics"].split(",")
    # It completed only after the dead broker returned; the moves it interrupted never did.
    assert d["completed_ms"] is not None and d["completed_ms"] >= lost["started_ms"]
    assert all(m["completed_ms"] is None and m["abandoned_ms"] == d["completed_ms"] for m in moves)
    assert b.znodes.where(F.col("path").contains(f"/{TOPIC}")).count() == 0
    # The new controller's LeaderAndIsr made the live brokers recreate logs they had renamed; every one
    # of them was renamed for deletion again.
    created = b.log_events.where((F.col("event") == "log.created") & (F.col("topic") == TOPIC))
    renamed = b.log_events.where((F.col("event") == "log.renamed_for_deletion") & (F.col("topic") == TOPIC))
    again = created.where(F.unix_millis("ts") >= second["elected_ms"]).count()
    assert again > 0
    assert renamed.count() == created.count()
