"""Every story the tests simulate beyond sample_data/, in one place: each is simulated once per test session
(and triaged once, when a test asks), whichever test files read it (`conftest.stories`).

A story is a scenario of `workbench.simulate.scenarios` (or one of the stories below, registered while it
is simulated) on a Kafka version, with a seed, a scale and the brokers' clock skew."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from workbench.analysis.triage import Triage
from workbench.frames import Bundle
from workbench.simulate import deletion, story
from workbench.simulate.cluster import Cluster
from workbench.simulate.run import simulate
from workbench.simulate.scenarios import SCENARIOS, Scale


# -- stories no stock scenario tells ----------------------------------------------------------------------
def deletion_disabled(c: Cluster, s: Scale) -> None:
    """kafka-topics.sh --delete with delete.topic.enable=false: the marker goes, the topic stays."""
    c.delete_topic_enable = False
    story.create_topic(c, s.topic("payments"), s.partitions, s.replication)
    story.produce(c, 5, s.per_second)
    deletion.request(c, s.topic("payments"))
    story.produce(c, 5, s.per_second)


def recreated(c: Cluster, s: Scale) -> None:
    """A topic deleted (to completion) and created again under the same name."""
    story.create_topic(c, s.topic("payments"), s.partitions, s.replication)
    story.produce(c, 5, s.per_second)
    deletion.request(c, s.topic("payments"))
    story.produce(c, 5, s.per_second)
    story.create_topic(c, s.topic("payments"), s.partitions, s.replication)
    story.produce(c, 5, s.per_second)


def flapping(c: Cluster, s: Scale) -> None:
    """The controller's broker restarted three times a few minutes apart: three failovers in 10 minutes."""
    story.create_topic(c, s.topic("payments"), s.partitions, s.replication)
    story.produce(c, 20, s.per_second)
    for _ in range(3):
        story.controller_failover(c)
        story.produce(c, 2, s.per_second)
    story.produce(c, 10, s.per_second)


def two_lives(c: Cluster, s: Scale) -> None:
    """A topic whose ISR changes, deleted and created again, whose ISR changes again: its state znodes'
    versions restart, so the same version is written in both lives."""
    for life in range(2):
        story.create_topic(c, s.topic("again"), s.partitions, s.replication)
        story.produce(c, s.hours * 10, s.per_second)
        story.restart(c, max(b for b in c.brokers if b != c.controller))
        story.produce(c, s.hours * 10, s.per_second)
        if not life:
            deletion.request(c, s.topic("again"))
            story.produce(c, s.hours * 10, s.per_second)


OWN: dict[str, Callable[[Cluster, Scale], None]] = {
    "deletion-disabled": deletion_disabled,
    "recreated": recreated,
    "flapping": flapping,
    "two-lives": two_lives,
}


@dataclass(frozen=True)
class Story:
    scenario: str
    version: str
    seed: int
    scale: Scale
    clock_skew_ms: int = 0


# -- the truth tests' stories (test_triage): each stock scenario on each version ----------------------------
VERSIONS = ("2.5.1", "2.8.2", "3.6.2")
SCENARIOS_TRIAGED = (
    "healthy",
    "topicid-mismatch",
    "deletion-stuck",
    "deletion-complete",
    "controller-failover",
)
# The stories of one version that set no cluster-wide flag are told in one cluster (scenarios.lookup: a+b),
# the one that leaves a broker down last; controller-failover (auto.leader.rebalance.enable=false) alone.
CHAINED = ("healthy", "topicid-mismatch", "deletion-complete", "deletion-stuck")
FRESH: dict[str, Story] = {}
# The seed alternates, and with it the scale and racks (brokers 3 or 4, 3 or 4 partitions a topic, no racks
# or two), so every scenario also meets both shapes; the 2.8.2 chain's brokers' clocks are off by up to 4 s.
for _v, _version in enumerate(VERSIONS):
    for _k, _scenario in enumerate(("+".join(CHAINED), "controller-failover")):
        if _version == "2.5.1":  # topic ids came with 2.8
            _scenario = _scenario.replace("+topicid-mismatch", "")
        _seed = 3 + (_v + _k) % 2
        _brokers = 4 if _scenario == "controller-failover" else 3 + (_seed % 2)
        _scale = Scale(brokers=_brokers, topics=2, partitions=3 + _seed % 2, hours=0.4, racks=_seed % 2 * 2)
        _skew = 4000 if _version == "2.8.2" and not _k else 0
        _name = f"{_scenario}@{_version}#{_seed}{'-skewed' if _skew else ''}"
        FRESH[_name] = Story(_scenario, _version, _seed, _scale, _skew)
# Older wordings, each line the listing of its release's source holds (test_simulate), and their znodes
# (kafka/jvm_order.SUPPORTED): 2.4.1 as 2.5.1; 1.1.1 elects in two transactions, writes version 1 topic
# znodes, fences nothing and words many lines its own way.
OLDER = ("2.4.1", "1.1.1")
for _scenario in ("deletion-stuck", "controller-failover"):
    _scale = Scale(brokers=4 if _scenario == "controller-failover" else 3, topics=2, partitions=3, hours=0.4)
    for _version in OLDER:
        FRESH[f"{_scenario}@{_version}#3"] = Story(_scenario, _version, 3, _scale)

# -- clocks off by up to 5 s, each broker's skew recovered (test_timeline) -----------------------------------
SKEW_SCALE = Scale(brokers=4, topics=2, partitions=4, hours=0.4)
SKEWED = {
    "topicid-mismatch@2.8.2#5s": Story("topicid-mismatch", "2.8.2", 5, SKEW_SCALE, 5000),
    "deletion-stuck@3.6.2#5s": Story("deletion-stuck", "3.6.2", 6, SKEW_SCALE, 5000),
    "controller-failover@2.5.1#5s": Story("controller-failover", "2.5.1", 7, SKEW_SCALE, 5000),
    "two-lives@2.8.2#5s": Story("two-lives", "2.8.2", 8, SKEW_SCALE, 5000),
}

# -- findings no stock scenario provokes (test_triage_must_find): the story and the findings it must give;
# the stories of one version that set no cluster-wide flag told in one cluster (scenarios.lookup), the one
# that ends with a broker down and its work in flight last -------------------------------------------------
MUST_FIND: dict[str, tuple[Story, tuple[str, ...]]] = {}
for _parts, _version in (
    ((("deletion-disabled", "deletion.refused"),), "2.5.1"),
    ((("unclean-election", "data_loss.unclean_election"),), "2.5.1"),
    # the failover's cause (hang, network_partition) and the truncation are checked against the truth
    ((("controller-partitioned", "data_loss.truncation"),), "2.5.1"),
    # an offline episode whose returning leader refuses (3.x checks the id on disk; 2.8 accepts the
    # LeaderAndIsr that makes it a replica again and refuses the election's): one outage, one finding; at
    # 2.8.2 with a reassignment that holds a deletion, its broker's crash taking a refused partition
    # offline again within the same outage
    ((("topicid-restart-refused", "partition.offline"),), "3.6.2"),
    (
        (
            ("topicid-restart-refused", "partition.offline"),
            ("topicid-restart-refused", "partition.no_acting_leader"),
            ("reassignment-blocks-deletion", "in_flight.reassignment"),
            ("reassignment-blocks-deletion", "deletion.stuck"),
        ),
        "2.8.2",
    ),
    # a controller that runs again just before ZooKeeper expires it logs before its session's end
    (
        (
            ("flapping", "controller.flapping"),
            ("controller-hang", "data_loss.truncation"),
            ("controller-hang-woke-first", "data_loss.truncation"),
            ("leader-pause", "partition.leader_paused"),
            # back before the controller elected in its place read /brokers/ids: its leaderships stay
            ("controller-hang-back-before-read", "partition.offline"),
            # a '-delete' dir whose removal fails takes the broker's only log dir offline: it halts
            ("deletion-denied", "deletion.lingering_dir"),
            ("deletion-denied", "log_dir.offline"),
        ),
        "2.8.2",
    ),
    (
        (("deletion-denied", "deletion.lingering_dir"), ("deletion-denied", "log_dir.offline")),
        "3.6.2",
    ),
    # a follower whose fetchers stall holds its partitions' high watermark until it is dropped from the
    # ISR: acks=all producers wait (how long, 3.6's line prints); three times in ten minutes, it flaps
    ((("slow-follower", "isr.high_watermark_held"), ("slow-follower", "isr.flapping")), "2.8.2"),
    ((("slow-follower", "isr.high_watermark_held"), ("slow-follower", "isr.flapping")), "3.6.2"),
    (
        (
            ("recreated", "deletion.recreated"),
            ("controller-hang-woke-first", "data_loss.truncation"),
            ("leader-pause", "partition.leader_paused"),
            ("controller-hang-back-before-read", "partition.offline"),
            ("controller-partitioned", "data_loss.truncation"),
            ("reassignment-blocks-deletion", "in_flight.reassignment"),
        ),
        "3.6.2",
    ),
):
    _name = "+".join(dict.fromkeys(n for n, _ in _parts))  # a story proving two kinds is told once
    _story = Story(_name, _version, 7, Scale(brokers=4, partitions=3))
    MUST_FIND[f"{_name}@{_version}"] = (_story, tuple(sorted({k for _, k in _parts})))

# -- the health series' other seeds, versions and sizes (test_health) ----------------------------------------
HEALTH = {
    "controller-failover@2.8.2#7": Story(
        "controller-failover", "2.8.2", 7, Scale(brokers=5, partitions=5, racks=2)
    ),
    "deletion-stuck@3.6.2#8": Story(
        "deletion-stuck", "3.6.2", 8, Scale(brokers=4, topics=2, partitions=7, hours=0.5)
    ),
    # a hung controller's leaderships: without an acting leader from when its expiry proves it silent
    "controller-hang@2.5.1#4": Story(
        "controller-hang", "2.5.1", 4, Scale(brokers=4, topics=2, partitions=5, hours=0.7)
    ),
}

ALL: dict[str, Story] = {
    **FRESH,
    **SKEWED,
    **{n: s for n, (s, _) in MUST_FIND.items()},
    **HEALTH,
}


class Stories:
    """The session's simulated stories: each simulated on first use into `root`, its bundle and its triage
    shared (conftest.shared, conftest.shared_triage)."""

    def __init__(self, root: Path, spark: SparkSession) -> None:
        self.root, self.spark = root, spark
        self._truths: dict[str, dict[str, Any]] = {}

    def path(self, name: str) -> Path:
        return self.root / name.replace("@", "-").replace("#", "-")

    def truth(self, name: str) -> dict[str, Any]:
        """Simulated on first use (noise-free: the truth tests compare every finding); its truth.json."""
        if name not in self._truths:
            s = ALL[name]
            with pytest.MonkeyPatch.context() as mp:
                for part in s.scenario.split("+"):  # a chain (scenarios.lookup) may tell our own
                    if part in OWN:
                        mp.setitem(SCENARIOS, part, OWN[part])
                self._truths[name] = simulate(
                    s.scenario,
                    self.path(name),
                    s.seed,
                    s.version,
                    s.scale,
                    clock_skew_ms=s.clock_skew_ms,
                    noise_rate=0.0,
                )
        return self._truths[name]

    def bundle(self, name: str) -> Bundle:
        from conftest import shared

        self.truth(name)
        return shared(self.spark, self.path(name))

    def triage(self, name: str) -> Triage:
        from conftest import shared_triage

        self.truth(name)
        return shared_triage(self.spark, self.path(name))
