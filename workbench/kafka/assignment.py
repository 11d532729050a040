"""Kafka's replica assignment when a topic is created or partitions are added (ZooKeeper mode).

Sources, apache/kafka (the algorithm and its messages are the same at all three tags):
- `core/src/main/scala/kafka/admin/AdminUtils.scala` @2.5.1 = @2.8.2 (identical files):
  assignReplicasToBrokers L103-123, assignReplicasToBrokersRackUnaware L125-146, ...RackAware L148-195,
  getRackAlternatedBrokerList L212-226, getInverseMap L228-232, replicaIndex L234-237.
- @3.6.2 the same code is Java: `server-common/src/main/java/org/apache/kafka/admin/AdminUtils.java` L118-138,
  L140-161, L163-212, L229-243, L245-250, L252-255 (and `BrokerMetadata.java` beside it).
- `core/src/main/scala/kafka/zk/AdminZkClient.scala`: getBrokerMetadatas (2.5.1 L66-82, 2.8.2 L69-85,
  3.6.2 L73-89); validateTopicCreate (2.5.1 L102-136, 2.8.2 L124-158, 3.6.2 L128-166); the new partitions'
  assignment in addPartitions @2.5.1 L183-222, moved to createNewPartitionsAssignment @2.8.2 L244-275 and
  @3.6.2 L252-283; validateReplicaAssignment (2.5.1 L224-254, 2.8.2 L300-330, 3.6.2 L308-338).
- `core/src/main/scala/kafka/admin/RackAwareMode.scala` (all three tags).

Broker order matters to the rack-unaware assignment: getBrokerMetadatas sorts by id (TopicCommand with
--zookeeper, CreatePartitions), while a CreateTopics request (ZkAdminManager.createTopics, 2.8.2 L155) passes
the metadata cache's alive brokers in the cache's own map order, without a RackAwareMode. Callers pass the
brokers in the order Kafka had them. Kafka draws from an unseeded java.util.Random; here the caller's
random.Random draws instead (randrange(n) for nextInt(n)), in Kafka's order: start index, then replica shift.
"""

from __future__ import annotations

import enum
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any


class InvalidPartitionsException(ValueError):
    """org.apache.kafka.common.errors.InvalidPartitionsException."""


class InvalidReplicationFactorException(ValueError):
    """org.apache.kafka.common.errors.InvalidReplicationFactorException."""


class InvalidReplicaAssignmentException(ValueError):
    """org.apache.kafka.common.errors.InvalidReplicaAssignmentException."""


class BrokerNotAvailableException(ValueError):
    """org.apache.kafka.common.errors.BrokerNotAvailableException."""


class AdminOperationException(RuntimeError):
    """kafka.admin.AdminOperationException @2.x; in org.apache.kafka.server.common @3.6.2."""


@dataclass(frozen=True)
class BrokerMetadata:
    """A broker as the assignment sees it: its id and its rack (broker.rack), None when it has none."""

    id: int
    rack: str | None = None


class RackAwareMode(enum.Enum):
    """How racks are used: Enforced by default in tools, Safe in auto topic creation, Disabled on request."""

    Disabled = "disabled"
    Enforced = "enforced"
    Safe = "safe"


def get_broker_metadatas(
    brokers: Iterable[BrokerMetadata],
    rack_aware_mode: RackAwareMode = RackAwareMode.Enforced,
    broker_list: Iterable[int] | None = None,
) -> list[BrokerMetadata]:
    """AdminZkClient.getBrokerMetadatas: the brokers, racks kept or dropped per mode, sorted by id."""
    chosen = list(brokers)
    if broker_list is not None:
        wanted = set(broker_list)
        chosen = [b for b in chosen if b.id in wanted]
    with_rack = [b for b in chosen if b.rack is not None]
    if rack_aware_mode is RackAwareMode.Enforced and with_rack and len(with_rack) < len(chosen):
        raise AdminOperationException(
            "Not all brokers have rack information. Add --disable-rack-aware in command line"
            " to make replica assignment without rack information."
        )
    drop = rack_aware_mode is RackAwareMode.Disabled or (
        rack_aware_mode is RackAwareMode.Safe and len(with_rack) < len(chosen)
    )
    if drop:
        chosen = [BrokerMetadata(b.id, None) for b in chosen]
    return sorted(chosen, key=lambda b: b.id)


def assign_replicas_to_brokers(
    broker_metadatas: Sequence[BrokerMetadata],
    n_partitions: int,
    replication_factor: int,
    fixed_start_index: int = -1,
    start_partition_id: int = -1,
    *,
    rng: random.Random | None = None,
) -> dict[int, list[int]]:
    """AdminUtils.assignReplicasToBrokers: partition id -> replicas, the first one the preferred leader.

    With fixed_start_index >= 0 the result is deterministic (Kafka uses it as start index and replica shift);
    otherwise both are drawn from `rng`, which is then required.
    """
    if n_partitions <= 0:
        raise InvalidPartitionsException("Number of partitions must be larger than 0.")
    if replication_factor <= 0:
        raise InvalidReplicationFactorException("Replication factor must be larger than 0.")
    if replication_factor > len(broker_metadatas):
        n = len(broker_metadatas)
        raise InvalidReplicationFactorException(
            f"Replication factor: {replication_factor} larger than available brokers: {n}."
        )
    if all(b.rack is None for b in broker_metadatas):
        broker_list = [b.id for b in broker_metadatas]
        return _rack_unaware(
            n_partitions, replication_factor, broker_list, fixed_start_index, start_partition_id, rng
        )
    if any(b.rack is None for b in broker_metadatas):
        raise AdminOperationException(
            "Not all brokers have rack information for replica rack aware assignment."
        )
    return _rack_aware(
        n_partitions, replication_factor, broker_metadatas, fixed_start_index, start_partition_id, rng
    )


def _start_index_and_replica_shift(
    fixed_start_index: int, n_brokers: int, rng: random.Random | None
) -> tuple[int, int]:
    """Kafka's two draws, start index first; a fixed start index stands for both."""
    if fixed_start_index >= 0:
        return fixed_start_index, fixed_start_index
    if rng is None:
        raise ValueError("a random.Random is needed when fixed_start_index < 0 (Kafka draws at random)")
    start_index = rng.randrange(n_brokers)
    return start_index, rng.randrange(n_brokers)


def replica_index(
    first_replica_index: int, second_replica_shift: int, replica_index: int, n_brokers: int
) -> int:
    """AdminUtils.replicaIndex: a follower's position, never the leader's (shift is in 1..n_brokers-1)."""
    shift = 1 + (second_replica_shift + replica_index) % (n_brokers - 1)
    return (first_replica_index + shift) % n_brokers


def _rack_unaware(
    n_partitions: int,
    replication_factor: int,
    broker_list: Sequence[int],
    fixed_start_index: int,
    start_partition_id: int,
    rng: random.Random | None,
) -> dict[int, list[int]]:
    """assignReplicasToBrokersRackUnaware: leaders round-robin, followers at a shift that grows each round."""
    n = len(broker_list)
    start_index, next_replica_shift = _start_index_and_replica_shift(fixed_start_index, n, rng)
    current_partition_id = max(0, start_partition_id)
    ret: dict[int, list[int]] = {}
    for _ in range(n_partitions):
        if current_partition_id > 0 and current_partition_id % n == 0:
            next_replica_shift += 1
        first_replica_index = (current_partition_id + start_index) % n
        replicas = [broker_list[first_replica_index]]
        for j in range(replication_factor - 1):
            replicas.append(broker_list[replica_index(first_replica_index, next_replica_shift, j, n)])
        ret[current_partition_id] = replicas
        current_partition_id += 1
    return ret


def _rack_aware(
    n_partitions: int,
    replication_factor: int,
    broker_metadatas: Sequence[BrokerMetadata],
    fixed_start_index: int,
    start_partition_id: int,
    rng: random.Random | None,
) -> dict[int, list[int]]:
    """assignReplicasToBrokersRackAware: round-robin over the rack-alternated list; a follower skips racks and
    brokers that already hold a replica until every rack (resp. broker) holds one."""
    broker_rack_map = {b.id: b.rack for b in broker_metadatas if b.rack is not None}
    num_racks = len(set(broker_rack_map.values()))
    arranged = get_rack_alternated_broker_list(broker_rack_map)
    num_brokers = len(arranged)
    start_index, next_replica_shift = _start_index_and_replica_shift(fixed_start_index, num_brokers, rng)
    current_partition_id = max(0, start_partition_id)
    ret: dict[int, list[int]] = {}
    for _ in range(n_partitions):
        if current_partition_id > 0 and current_partition_id % num_brokers == 0:
            next_replica_shift += 1
        first_replica_index = (current_partition_id + start_index) % num_brokers
        leader = arranged[first_replica_index]
        replicas = [leader]
        racks_with_replicas = {broker_rack_map[leader]}
        brokers_with_replicas = {leader}
        k = 0
        for _ in range(replication_factor - 1):
            while True:
                index = replica_index(first_replica_index, next_replica_shift * num_racks, k, num_brokers)
                broker = arranged[index]
                rack = broker_rack_map[broker]
                k += 1
                if (rack not in racks_with_replicas or len(racks_with_replicas) == num_racks) and (
                    broker not in brokers_with_replicas or len(brokers_with_replicas) == num_brokers
                ):
                    replicas.append(broker)
                    racks_with_replicas.add(rack)
                    brokers_with_replicas.add(broker)
                    break
        ret[current_partition_id] = replicas
        current_partition_id += 1
    return ret


def _java_string_order(s: str) -> bytes:
    """Java's String.compareTo order (UTF-16 code units), which Scala's `sorted` and Arrays.sort use."""
    return s.encode("utf-16-be", "surrogatepass")


def get_inverse_map(broker_rack_map: Mapping[int, str]) -> dict[str, list[int]]:
    """AdminUtils.getInverseMap: rack -> its broker ids, ascending."""
    inverse: dict[str, list[int]] = {}
    for broker, rack in broker_rack_map.items():
        inverse.setdefault(rack, []).append(broker)
    return {rack: sorted(ids) for rack, ids in inverse.items()}


def get_rack_alternated_broker_list(broker_rack_map: Mapping[int, str]) -> list[int]:
    """AdminUtils.getRackAlternatedBrokerList: one broker per rack in turn, racks sorted."""
    by_rack = {rack: iter(ids) for rack, ids in get_inverse_map(broker_rack_map).items()}
    racks = sorted(by_rack, key=_java_string_order)
    result: list[int] = []
    rack_index = 0
    while len(result) < len(broker_rack_map):
        broker = next(by_rack[racks[rack_index]], None)
        if broker is not None:
            result.append(broker)
        rack_index = (rack_index + 1) % len(racks)
    return result


def validate_replica_assignment(
    replica_assignment: Mapping[int, Sequence[int]],
    expected_replication_factor: int,
    available_broker_ids: set[int],
) -> None:
    """AdminZkClient.validateReplicaAssignment: a manual assignment for new partitions (ids print sorted)."""
    for partition_id, replicas in replica_assignment.items():
        if not replicas:
            raise InvalidReplicaAssignmentException(
                f"Cannot have replication factor of 0 for partition id {partition_id}."
            )
        shown = ", ".join(str(r) for r in replicas)
        if len(set(replicas)) != len(replicas):
            raise InvalidReplicaAssignmentException(
                f"Duplicate brokers not allowed in replica assignment: {shown} "
                f"for partition id {partition_id}."
            )
        if not set(replicas) <= available_broker_ids:
            available = ", ".join(str(b) for b in sorted(available_broker_ids))
            raise BrokerNotAvailableException(
                f"Some brokers specified for partition id {partition_id} are not available. "
                f"Specified brokers: {shown}, available brokers: {available}."
            )
    bad = sorted((p, len(r)) for p, r in replica_assignment.items() if len(r) != expected_replication_factor)
    if bad:
        raise InvalidReplicaAssignmentException(
            "Inconsistent replication factor between partitions, "
            f"partition 0 has {expected_replication_factor} while partitions "
            f"[{', '.join(str(p) for p, _ in bad)}] have replication factors "
            f"[{', '.join(str(rf) for _, rf in bad)}], respectively."
        )


def create_new_partitions_assignment(
    topic: str,
    existing_assignment: Mapping[int, Sequence[int]],
    all_brokers: Sequence[BrokerMetadata],
    num_partitions: int = 1,
    replica_assignment: Mapping[int, Sequence[int]] | None = None,
) -> dict[int, list[int]]:
    """The new partitions' replicas when a topic grows to num_partitions (AdminZkClient, see module doc).

    Deterministic: the start index is the position in all_brokers of the first broker whose id is >= partition
    0's first replica (0 if none), and new ids start at len(existing_assignment).
    """
    if 0 not in existing_assignment:
        shown = ", ".join(
            f"{p} -> ReplicaAssignment(replicas={','.join(map(str, r))}, addingReplicas=, removingReplicas=)"
            for p, r in existing_assignment.items()
        )
        raise AdminOperationException(
            f"Unexpected existing replica assignment for topic '{topic}', partition id 0 is missing. "
            f"Assignment: Map({shown})"
        )
    partition0 = existing_assignment[0]
    partitions_to_add = num_partitions - len(existing_assignment)
    if partitions_to_add <= 0:
        raise InvalidPartitionsException(
            "The number of partitions for a topic can only be increased. "
            f"Topic {topic} currently has {len(existing_assignment)} partitions, "
            f"{num_partitions} would not be an increase."
        )
    if replica_assignment is not None:
        validate_replica_assignment(replica_assignment, len(partition0), {b.id for b in all_brokers})
        return {p: list(r) for p, r in replica_assignment.items()}
    found = next((i for i, b in enumerate(all_brokers) if b.id >= partition0[0]), -1)
    return assign_replicas_to_brokers(
        all_brokers, partitions_to_add, len(partition0), max(0, found), len(existing_assignment)
    )


def validate_topic_create_assignment(partition_replica_assignment: Mapping[int, Sequence[int]]) -> None:
    """The replica checks of AdminZkClient.validateTopicCreate, run after the name checks (names.py).

    As in Kafka, "consecutive 0-based" is checked by the sum of the non-negative ids only, so e.g. {-1, 1}
    passes. Kafka prints the map with its runtime Scala types; here it is always Map(... -> List(...)).
    """
    if len({len(r) for r in partition_replica_assignment.values()}) != 1:
        raise InvalidReplicaAssignmentException("All partitions should have the same number of replicas")
    for replicas in partition_replica_assignment.values():
        if len(replicas) != len(set(replicas)):
            shown = ", ".join(
                f"{p} -> List({', '.join(map(str, r))})" for p, r in partition_replica_assignment.items()
            )
            raise InvalidReplicaAssignmentException(f"Duplicate replica assignment found: Map({shown})")
    size = len(partition_replica_assignment)
    if sum(p for p in partition_replica_assignment if p >= 0) != size * (size - 1) // 2:
        raise InvalidReplicaAssignmentException("partitions should be a consecutive 0-based integer sequence")


# -- could Kafka have made it? ----------------------------------------------------------------------------


class _Draws(random.Random):
    """Kafka's two draws fixed in advance (start index, then replica shift), to try each in turn."""

    def __init__(self, *draws: int) -> None:
        super().__init__(0)
        self._draws = list(draws)

    def randrange(self, *args: Any, **kwargs: Any) -> int:
        return self._draws.pop(0)


def default_assignment_could_give(
    assignment: Mapping[int, Sequence[int]], brokers: Sequence[BrokerMetadata]
) -> bool:
    """Whether AdminUtils.assignReplicasToBrokers could have given this new topic's assignment, over the
    brokers then registered, for some start index and replica shift (Kafka draws both at random): rack
    aware when every broker has a rack, and rack unaware in any broker order (a CreateTopics request
    passes the metadata cache's own order, a tool the ids sorted)."""
    n, ids = len(brokers), {b.id for b in brokers}
    p_count = len(assignment)
    if sorted(assignment) != list(range(p_count)) or not p_count:
        return False
    rf = len(assignment[0])
    if any(len(r) != rf or len(set(r)) != rf or not set(r) <= ids for r in assignment.values()) or rf > n:
        return False
    wanted = {p: list(r) for p, r in assignment.items()}
    if all(b.rack is not None for b in brokers):
        for start in range(n):
            for shift in range(n):
                if _rack_aware(1, rf, brokers, -1, 0, _Draws(start, shift))[0] != wanted[0]:
                    continue  # partition 0 alone rules most draws out
                if _rack_aware(p_count, rf, brokers, -1, 0, _Draws(start, shift)) == wanted:
                    return True
    return _rack_unaware_in_some_order(wanted, n)


def _rack_unaware_in_some_order(assignment: Mapping[int, Sequence[int]], n: int) -> bool:
    """assignReplicasToBrokersRackUnaware over some order of n brokers: with the order rotated so that
    partition 0's leader comes first, partition p's leader sits at p % n and its j-th follower at
    replicaIndex(p % n, shift + p // n, j, n); true when one shift places every broker consistently."""
    if n == 1:
        return all(len(r) == 1 for r in assignment.values())
    for shift in range(n - 1):
        at: dict[int, int] = {}
        where: dict[int, int] = {}
        consistent = True
        for p, replicas in assignment.items():
            first = p % n
            positions = [first] + [
                replica_index(first, shift + p // n, j, n) for j in range(len(replicas) - 1)
            ]
            for pos, broker in zip(positions, replicas, strict=True):
                if at.setdefault(pos, broker) != broker or where.setdefault(broker, pos) != pos:
                    consistent = False
                    break
            if not consistent:
                break
        if consistent:
            return True
    return False


def new_partitions_as_kafka_would(
    existing: Mapping[int, Sequence[int]],
    added: Mapping[int, Sequence[int]],
    brokers: Sequence[BrokerMetadata],
) -> bool:
    """Whether partitions added to a topic are what createNewPartitionsAssignment gives over the brokers
    then registered (sorted by id, rack aware when all have racks), which draws nothing at random."""
    if not existing or not added:
        return False
    try:
        mode = RackAwareMode.Enforced
        metadata = get_broker_metadatas(brokers, mode)
        grown = create_new_partitions_assignment("t", existing, metadata, len(existing) + len(added))
    except (ValueError, AdminOperationException):
        return False
    return grown == {p: list(r) for p, r in added.items()}
