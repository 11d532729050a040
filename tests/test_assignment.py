"""Replica assignment gives the assignments Kafka's own tests assert, and the spread its tests check.

Vectors are copied from apache/kafka tests (file, tag, test named beside each); they are the same at
2.5.1, 2.8.2 and 3.6.2 unless said. Where Kafka's test draws a random start, the check runs over many seeds.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, Sequence

import pytest

from workbench.kafka.assignment import (
    AdminOperationException,
    BrokerMetadata,
    InvalidPartitionsException,
    InvalidReplicaAssignmentException,
    InvalidReplicationFactorException,
    RackAwareMode,
    assign_replicas_to_brokers,
    create_new_partitions_assignment,
    default_assignment_could_give,
    get_broker_metadatas,
    get_rack_alternated_broker_list,
    new_partitions_as_kafka_would,
    replica_index,
    validate_topic_create_assignment,
)

SEEDS = range(300)
RACKS_6 = {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1"}


def _brokers(rack_map: Mapping[int, str]) -> list[BrokerMetadata]:
    """RackAwareTest.toBrokerMetadata."""
    return [BrokerMetadata(b, rack) for b, rack in rack_map.items()]


def _unracked(ids: Sequence[int]) -> list[BrokerMetadata]:
    return [BrokerMetadata(b) for b in ids]


def check_replica_distribution(
    assignment: Mapping[int, Sequence[int]],
    broker_rack_mapping: Mapping[int, str],
    num_brokers: int,
    num_partitions: int,
    replication_factor: int,
    verify_rack_aware: bool = True,
    verify_leader_distribution: bool = True,
    verify_replicas_distribution: bool = True,
) -> None:
    """Port of RackAwareTest.checkReplicaDistribution (core/src/test/scala/unit/kafka/admin, all tags)."""
    for replicas in assignment.values():
        assert len(set(replicas)) == len(replicas), "More than one replica on the same broker"
    if verify_rack_aware:
        racks = [len({broker_rack_mapping[b] for b in r}) for r in assignment.values()]
        assert racks == [replication_factor] * num_partitions, "Two replicas of a partition on one rack"
    if verify_leader_distribution:
        leaders = Counter(r[0] for r in assignment.values())
        assert list(leaders.values()) == [num_partitions // num_brokers] * num_brokers, "Uneven leaders"
    if verify_replicas_distribution:
        counts = Counter(b for r in assignment.values() for b in r)
        expected = [num_partitions * replication_factor // num_brokers] * num_brokers
        assert list(counts.values()) == expected, "Uneven replicas"


# AdminRackAwareTest.scala @2.5.1/@2.8.2/@3.6.2, testGetRackAlternatedBrokerListAndAssignReplicasToBrokers
def test_rack_alternated_broker_list_and_assignment() -> None:
    rack_map = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}
    assert get_rack_alternated_broker_list(rack_map) == [0, 3, 1, 5, 4, 2]
    assert get_rack_alternated_broker_list({b: r for b, r in rack_map.items() if b != 5}) == [0, 3, 1, 4, 2]
    expected = {
        0: [0, 3, 1],
        1: [3, 1, 5],
        2: [1, 5, 4],
        3: [5, 4, 2],
        4: [4, 2, 0],
        5: [2, 0, 3],
        6: [0, 4, 2],
    }
    assert assign_replicas_to_brokers(_brokers(rack_map), 7, 3, 0, 0) == expected


# AdminRackAwareTest.scala (all tags), testReplicaAssignment
def test_replica_assignment_rack_unaware() -> None:
    brokers = _unracked(range(5))
    rng = random.Random(1)
    with pytest.raises(InvalidReplicationFactorException):
        assign_replicas_to_brokers(brokers, 10, 0, rng=rng)
    with pytest.raises(InvalidReplicationFactorException):
        assign_replicas_to_brokers(brokers, 10, 6, rng=rng)
    expected = {
        0: [0, 1, 2],
        1: [1, 2, 3],
        2: [2, 3, 4],
        3: [3, 4, 0],
        4: [4, 0, 1],
        5: [0, 2, 3],
        6: [1, 3, 4],
        7: [2, 4, 0],
        8: [3, 0, 1],
        9: [4, 1, 2],
    }
    assert assign_replicas_to_brokers(brokers, 10, 3, 0) == expected


# AdminRackAwareTest.scala: testAssignmentWithRackAware (fixed start 2), testAssignmentWithRackAware-
# WithUnevenReplicas (fixed start 0, rack check only), testSkipBrokerWithReplicaAlreadyAssigned (fixed 2).
def test_rack_aware_fixed_start() -> None:
    check_replica_distribution(assign_replicas_to_brokers(_brokers(RACKS_6), 6, 3, 2, 0), RACKS_6, 6, 6, 3)
    uneven = assign_replicas_to_brokers(_brokers(RACKS_6), 13, 3, 0, 0)
    check_replica_distribution(
        uneven, RACKS_6, 6, 13, 3, verify_leader_distribution=False, verify_replicas_distribution=False
    )
    rack_info = {0: "a", 1: "b", 2: "c", 3: "a", 4: "a"}
    skip = assign_replicas_to_brokers(_brokers(rack_info), 6, 4, fixed_start_index=2)
    assert sorted(skip) == list(range(6)) and all(len(r) == 4 for r in skip.values())
    check_replica_distribution(
        skip, rack_info, 5, 6, 4, False, verify_leader_distribution=False, verify_replicas_distribution=False
    )


# AdminRackAwareTest.scala tests with a random start index: (name, racks, partitions, rf, flags);
# RackAwareAutoTopicCreationTest.scala (integration, all tags): 4 brokers on racks "0","0","1","1", 8 x 2.
RANDOM_CASES = [
    ("testAssignmentWithRackAwareWithRandomStartIndex", RACKS_6, 6, 3, {}),
    (
        "testAssignmentWithRackAwareWithUnevenRacks",
        {0: "rack1", 1: "rack1", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1"},
        12,
        3,
        {"verify_replicas_distribution": False},
    ),
    ("testAssignmentWith2ReplicasRackAware", RACKS_6, 12, 2, {}),
    ("testAssignmentWith2ReplicasRackAwareWith6Partitions", RACKS_6, 6, 2, {}),
    (
        "testAssignmentWith2ReplicasRackAwareWith6PartitionsAnd3Brokers",
        {0: "rack1", 1: "rack2", 4: "rack3"},
        3,
        2,
        {},
    ),
    (
        "testLargeNumberPartitionsAssignment",
        {**RACKS_6, 6: "rack1", 7: "rack2", 8: "rack2", 9: "rack3", 10: "rack1", 11: "rack3"},
        96,
        3,
        {},
    ),
    ("RackAwareAutoTopicCreationTest.testAutoCreateTopic", {0: "0", 1: "0", 2: "1", 3: "1"}, 8, 2, {}),
]


@pytest.mark.parametrize(
    ("name", "racks", "partitions", "rf", "flags"), RANDOM_CASES, ids=[c[0] for c in RANDOM_CASES]
)
def test_rack_aware_random_start(
    name: str, racks: dict[int, str], partitions: int, rf: int, flags: dict[str, bool]
) -> None:
    for seed in SEEDS:
        assignment = assign_replicas_to_brokers(_brokers(racks), partitions, rf, rng=random.Random(seed))
        assert sorted(assignment) == list(range(partitions))
        check_replica_distribution(assignment, racks, len(racks), partitions, rf, **flags)


# AdminRackAwareTest.scala, testRackAwareExpansion: new ids start at startPartitionId.
def test_rack_aware_expansion() -> None:
    racks = {6: "rack1", 7: "rack2", 8: "rack2", 9: "rack3", 10: "rack3", 11: "rack1"}
    for seed in SEEDS:
        assignment = assign_replicas_to_brokers(_brokers(racks), 12, 2, -1, 12, rng=random.Random(seed))
        assert sorted(assignment) == list(range(12, 24))
        check_replica_distribution(assignment, racks, 6, 12, 2)


# AdminRackAwareTest.scala: testMoreReplicasThanRacks (3), testLessReplicasThanRacks (2), testSingleRack (1).
@pytest.mark.parametrize(
    ("rf", "racks", "distinct"),
    [
        (5, {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack2"}, 3),
        (2, {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack2"}, 2),
        (3, dict.fromkeys(range(6), "rack1"), 1),
    ],
)
def test_racks_per_partition(rf: int, racks: dict[int, str], distinct: int) -> None:
    for seed in SEEDS:
        assignment = assign_replicas_to_brokers(_brokers(racks), 6, rf, rng=random.Random(seed))
        assert [len(r) for r in assignment.values()] == [rf] * 6
        assert all(len({racks[b] for b in r}) == distinct for r in assignment.values())
        if distinct == 1:  # testSingleRack: one leader per broker
            assert Counter(r[0] for r in assignment.values()) == Counter(range(6))


def test_rack_coverage_on_random_topologies() -> None:
    """AdminUtils doc (2.8.2 L93-96): rf >= racks puts a replica on every rack, else at most one per rack."""
    for seed in SEEDS:
        rng = random.Random(seed)
        racks = {b: f"r{rng.randrange(1, 5)}" for b in rng.sample(range(40), rng.randrange(1, 12))}
        rf = rng.randrange(1, len(racks) + 1)
        assignment = assign_replicas_to_brokers(_brokers(racks), rng.randrange(1, 40), rf, rng=rng)
        num_racks = len(set(racks.values()))
        for replicas in assignment.values():
            assert len(set(replicas)) == rf
            assert len({racks[b] for b in replicas}) == min(rf, num_racks)


def test_rack_unaware_spread_over_seeds() -> None:
    """AdminUtils goals (2.8.2 L31-44): whole rounds of partitions spread leaders and replicas evenly."""
    for seed in SEEDS:
        rng = random.Random(seed)
        ids = rng.sample(range(100), rng.randrange(1, 9))
        rounds, rf = rng.randrange(1, 5), rng.randrange(1, len(ids) + 1)
        assignment = assign_replicas_to_brokers(_unracked(ids), rounds * len(ids), rf, rng=rng)
        rack_of = {b: str(b) for b in ids}  # every broker its own rack: rack check = no two replicas alike
        check_replica_distribution(assignment, rack_of, len(ids), rounds * len(ids), rf)


def test_randomness_is_the_callers() -> None:
    brokers = _unracked([3, 1, 4, 0, 5])
    with pytest.raises(ValueError):
        assign_replicas_to_brokers(brokers, 4, 2)
    for seed in range(50):
        first = assign_replicas_to_brokers(brokers, 9, 3, rng=random.Random(seed))
        assert first == assign_replicas_to_brokers(brokers, 9, 3, rng=random.Random(seed))
        start = random.Random(seed).randrange(len(brokers))  # Kafka's first draw is the start index
        assert [r[0] for r in first.values()] == [brokers[(p + start) % 5].id for p in range(9)]
    rng = random.Random(7)
    state = rng.getstate()
    assign_replicas_to_brokers(brokers, 9, 3, 2, rng=rng)
    assert rng.getstate() == state, "a fixed start index draws nothing"
    with pytest.raises(InvalidReplicationFactorException):
        assign_replicas_to_brokers(brokers, 9, 6, rng=rng)
    assert rng.getstate() == state, "arguments are checked before any draw"
    # The second draw (the replica shift) varies the followers of a partition with the same leader.
    followers = set()
    for seed in range(200):
        replicas = assign_replicas_to_brokers(brokers, 1, 3, rng=random.Random(seed))[0]
        if replicas[0] == 3:
            followers.add(tuple(replicas[1:]))
    assert len(followers) > 1


def test_replica_index_never_the_leader() -> None:
    for n in range(2, 9):
        for first in range(n):
            for shift in range(3 * n):
                assert all(replica_index(first, shift, j, n) != first for j in range(n))


# Messages: AdminUtils.scala 2.8.2 L108-119 / AdminUtils.java 3.6.2 L123-134; asserted in part by
# ReassignPartitionsUnitTest.scala (2.8.2, 3.6.2) and CreateTopicsRequestWithPolicyTest.scala (2.8.2, 3.6.2).
def test_errors_in_kafkas_words() -> None:
    brokers = _unracked(range(3))
    with pytest.raises(InvalidPartitionsException, match=r"^Number of partitions must be larger than 0\.$"):
        assign_replicas_to_brokers(brokers, 0, 1, 0)
    with pytest.raises(
        InvalidReplicationFactorException, match=r"^Replication factor must be larger than 0\.$"
    ):
        assign_replicas_to_brokers(brokers, 1, 0, 0)
    with pytest.raises(InvalidReplicationFactorException) as e:
        assign_replicas_to_brokers(brokers, 3, 4, 0)
    assert str(e.value) == "Replication factor: 4 larger than available brokers: 3."
    with pytest.raises(
        InvalidReplicationFactorException, match=r"^Replication factor: 3 larger than available brokers: 2"
    ):
        assign_replicas_to_brokers(brokers[:2], 3, 3, 0)
    mixed = [BrokerMetadata(0, "rack0"), BrokerMetadata(1, "rack1"), BrokerMetadata(2)]
    with pytest.raises(AdminOperationException) as e2:
        assign_replicas_to_brokers(mixed, 3, 2, 0)
    assert str(e2.value) == "Not all brokers have rack information for replica rack aware assignment."


def test_get_broker_metadatas_modes() -> None:
    # RackAwareAutoTopicCreationTest.scala: getBrokerMetadatas(Enforced) keeps each broker's rack.
    registered = [
        BrokerMetadata(3, "1"),
        BrokerMetadata(0, "0"),
        BrokerMetadata(2, "1"),
        BrokerMetadata(1, "0"),
    ]
    got = get_broker_metadatas(registered, RackAwareMode.Enforced)
    assert {b.id: b.rack for b in got} == {0: "0", 1: "0", 2: "1", 3: "1"}
    assert [b.id for b in got] == sorted(b.id for b in registered)
    mixed = [*registered[:3], BrokerMetadata(1)]
    with pytest.raises(
        AdminOperationException, match=r"^Not all brokers have rack information\. Add --disable"
    ):
        get_broker_metadatas(mixed)
    for mode in (RackAwareMode.Safe, RackAwareMode.Disabled):
        assert all(b.rack is None for b in get_broker_metadatas(mixed, mode))
    assert get_broker_metadatas(registered, RackAwareMode.Safe) == got
    assert all(b.rack is None for b in get_broker_metadatas(registered, RackAwareMode.Disabled))
    assert [b.id for b in get_broker_metadatas(mixed, RackAwareMode.Enforced, broker_list=[3, 2])] == [2, 3]


# AddPartitionsTest.scala (2.5.1, 2.8.2 via adminZkClient.addPartitions; 3.6.2 via createPartitions, zk):
# 4 brokers, leader and replica set of each partition after the topic grows.
@pytest.mark.parametrize(
    ("name", "existing", "count", "expected"),
    [
        (
            "testReplicaPlacementAllServers",
            {0: [2, 3, 0, 1]},
            7,
            [
                (2, {2, 3, 0, 1}),
                (3, {3, 2, 0, 1}),
                (0, {0, 3, 1, 2}),
                (1, {1, 0, 2, 3}),
                (2, {2, 3, 0, 1}),
                (3, {3, 0, 1, 2}),
                (0, {0, 1, 2, 3}),
            ],
        ),
        ("testReplicaPlacementPartialServers", {0: [1, 2]}, 3, [(1, {1, 2}), (2, {0, 2}), (3, {1, 3})]),
    ],
)
def test_add_partitions_placement(
    name: str, existing: dict[int, list[int]], count: int, expected: list[tuple[int, set[int]]]
) -> None:
    new = create_new_partitions_assignment("new-topic", existing, _unracked(range(4)), count)
    combined = {**existing, **new}
    assert sorted(combined) == list(range(count))
    assert [(r[0], set(r)) for _, r in sorted(combined.items())] == expected


def test_add_partitions_checks() -> None:
    brokers = _unracked(range(4))
    # AddPartitionsTest.testIncrementPartitions: new-topic1 {0: [0, 1]} grows to 3, each with 2 replicas.
    new = create_new_partitions_assignment("new-topic1", {0: [0, 1]}, brokers, 3)
    assert sorted(new) == [1, 2] and all(len(set(r)) == 2 for r in new.values())
    # AddPartitionsTest.testManualAssignmentOfReplicas: the given assignment is taken as it is.
    manual = {0: [1, 2], 1: [0, 1], 2: [2, 3]}
    assert set(create_new_partitions_assignment("new-topic2", {0: [1, 2]}, brokers, 3, manual)[1]) == {0, 1}
    # AddPartitionsTest.testWrongReplicaCount (2.5.1, 2.8.2)
    with pytest.raises(InvalidReplicaAssignmentException, match=r"^Inconsistent replication factor"):
        create_new_partitions_assignment("new-topic1", {0: [0, 1]}, brokers, 2, {0: [0, 1], 1: [0, 1, 2]})
    # AddPartitionsTest.testMissingPartition0 (2.5.1, 2.8.2) / testMissingPartitionsInCreatePartitions (3.6.2)
    with pytest.raises(AdminOperationException) as e:
        create_new_partitions_assignment("new-topic5", {1: [0, 1]}, brokers, 2, {1: [0, 1], 2: [0, 1, 2]})
    assert "Unexpected existing replica assignment for topic 'new-topic5', partition id 0 is missing" in str(
        e.value
    )
    with pytest.raises(
        InvalidPartitionsException, match=r"can only be increased\. Topic t currently has 2 partitions"
    ):
        create_new_partitions_assignment("t", {0: [0], 1: [1]}, brokers, 2)
    # A partition 0 led by a broker above every live id starts at index 0, like a leader on the first broker.
    assert create_new_partitions_assignment("t", {0: [9, 1]}, brokers, 5) == create_new_partitions_assignment(
        "t", {0: [0, 1]}, brokers, 5
    )


# AdminZkClientTest.scala (2.5.1, 2.8.2, 3.6.2), testManualReplicaAssignment: refused, then the good one.
@pytest.mark.parametrize(
    "assignment",
    [
        {0: [0, 0]},  # duplicate brokers
        {0: [0, 1], 1: [0]},  # inconsistent replication factor
        {1: [1, 2], 2: [1, 2]},  # partitions should be 0-based
        {0: [1, 2], 3: [1, 2]},  # Map(0->.., 0->.., 3->..): 0-based and consecutive
        {-1: [1, 2], 1: [1, 2], 2: [1, 2], 4: [1, 2]},
    ],
)
def test_manual_replica_assignment_refused(assignment: dict[int, list[int]]) -> None:
    with pytest.raises(InvalidReplicaAssignmentException):
        validate_topic_create_assignment(assignment)


def test_manual_replica_assignment_good() -> None:
    validate_topic_create_assignment({0: [0, 1, 2], 1: [1, 2, 3]})


def test_could_kafka_have_made_it() -> None:
    """Every assignment Kafka draws, in any broker order and rack aware or not, is recognised; a
    made-up one, a shifted one and one over an unregistered broker are not."""
    rng = random.Random(7)
    for _ in range(200):
        n = rng.randint(1, 9)
        racked = rng.random() < 0.5
        brokers = [
            BrokerMetadata(b, f"r{rng.randrange(3)}" if racked else None) for b in rng.sample(range(20), n)
        ]
        rf, parts = rng.randint(1, n), rng.randint(1, 3 * n)
        made = assign_replicas_to_brokers(brokers, parts, rf, rng=rng)
        assert default_assignment_could_give(made, brokers), (brokers, made)
        assert not default_assignment_could_give(made, brokers[1:]) or all(
            brokers[0].id not in r for r in made.values()
        )
    six = _unracked(range(1, 7))
    assert not default_assignment_could_give({p: [1, 2, 3] for p in range(6)}, six)  # leaders repeat early
    by_hand = {0: [1, 2], 1: [2, 3], 2: [3, 1]}  # a ring over 3 of 6: partition 1's follower breaks the shift
    assert not default_assignment_could_give(by_hand, six)
    assert default_assignment_could_give(by_hand, six[:3])  # over 3 brokers Kafka can draw it
    assert not default_assignment_could_give({0: [1, 9]}, six)  # broker 9 not registered
    assert not default_assignment_could_give({1: [1, 2]}, six)  # partitions not from 0


def test_added_partitions_as_kafka_would() -> None:
    brokers = _unracked(range(1, 6))
    existing = {0: [3, 4], 1: [4, 5]}
    added = create_new_partitions_assignment("t", existing, brokers, 5)
    assert new_partitions_as_kafka_would(existing, added, brokers)
    assert not new_partitions_as_kafka_would(existing, {2: [1, 2], 3: [1, 2], 4: [1, 2]}, brokers)
