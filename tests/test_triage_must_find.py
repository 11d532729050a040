"""Findings no stock scenario provokes, each on a small story of its own where triage must find it (and
nothing the truth lacks): a deletion dropped by delete.topic.enable=false, a topic created again under
a deleted name, a controller that moves three times in a few minutes, a reassignment still copying at
the capture that holds a queued deletion, an unclean election whose old leader truncates committed
records when it returns, and a controller that stands still (a pause) or is cut off (a network
partition) past its session, then truncates what it appended alone."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from truth_facts import check

from workbench.simulate import deletion, story
from workbench.simulate.cluster import Cluster
from workbench.simulate.run import simulate
from workbench.simulate.scenarios import (
    SCENARIOS,
    Scale,
    controller_hang,
    controller_partitioned,
    reassignment_blocks_deletion,
    unclean_election,
)

TOPIC = "payments"


def deletion_disabled(c: Cluster, s: Scale) -> None:
    """kafka-topics.sh --delete with delete.topic.enable=false: the marker goes, the topic stays."""
    c.delete_topic_enable = False
    story.create_topic(c, TOPIC, s.partitions, s.replication)
    story.produce(c, 5, s.per_second)
    deletion.request(c, TOPIC)
    story.produce(c, 5, s.per_second)


def recreated(c: Cluster, s: Scale) -> None:
    """A topic deleted (to completion) and created again under the same name."""
    story.create_topic(c, TOPIC, s.partitions, s.replication)
    story.produce(c, 5, s.per_second)
    deletion.request(c, TOPIC)
    story.produce(c, 5, s.per_second)
    story.create_topic(c, TOPIC, s.partitions, s.replication)
    story.produce(c, 5, s.per_second)


def flapping(c: Cluster, s: Scale) -> None:
    """The controller's broker restarted three times a few minutes apart: three failovers in 10 minutes."""
    story.create_topic(c, TOPIC, s.partitions, s.replication)
    story.produce(c, 20, s.per_second)
    for _ in range(3):
        story.controller_failover(c)
        story.produce(c, 2, s.per_second)
    story.produce(c, 10, s.per_second)


# name -> (story, Kafka version, the finding it must give); the versions differ in the controller's wording
STORIES: dict[str, tuple[Callable[[Cluster, Scale], None], str, str]] = {
    "deletion-disabled": (deletion_disabled, "2.5.1", "deletion.refused"),
    "recreated": (recreated, "3.6.2", "deletion.recreated"),
    "flapping": (flapping, "2.8.2", "controller.flapping"),
    "reassignment-blocks-deletion": (reassignment_blocks_deletion, "3.6.2", "in_flight.reassignment"),
    "unclean-election": (unclean_election, "2.5.1", "data_loss.unclean_election"),
    # the failover's cause (hang, network_partition) and the truncation are checked against the truth
    "controller-hang": (controller_hang, "2.8.2", "data_loss.truncation"),
    "controller-hang@3.6.2": (controller_hang, "3.6.2", "data_loss.truncation"),
    "controller-partitioned": (controller_partitioned, "3.6.2", "data_loss.truncation"),
    "controller-partitioned@2.5.1": (controller_partitioned, "2.5.1", "data_loss.truncation"),
}


@pytest.mark.parametrize("name", sorted(STORIES))
def test_triage_finds_what_only_this_story_provokes(spark: SparkSession, tmp_path: Path, name: str) -> None:
    scenario, version, kind = STORIES[name]
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(SCENARIOS, name, scenario)
        truth = simulate(name, tmp_path / name, 7, version, Scale(brokers=4, partitions=3), noise_rate=0.0)
    findings = check(spark, tmp_path / name, truth)
    assert kind in {f.kind for f in findings}
