"""A partition's leader and ISR as Kafka prints them in its log lines, read by Spark column functions.

The same state is printed four ways across the releases the workbench reads:
- `LeaderAndIsr(leader=1, leaderEpoch=4, isr=List(1, 2), zkVersion=7)` (LeaderAndIsr.toString 1.1.1:44,
  2.8.2:60), from 3.5 `isrWithBrokerEpoch=List(BrokerState(brokerId=1, brokerEpoch=-1), ...)` and
  `leaderRecoveryState=RECOVERED` (3.6.2:102);
- `(Leader:1,ISR:1,2,LeaderEpoch:4,ZkVersion:7,ControllerEpoch:5)` (LeaderIsrAndControllerEpoch.toString,
  KafkaController 2.8.2:2580; `LeaderRecoveryState:` before the epoch at 3.6.2:2771);
- `{"leader":1,"leader_epoch":4,"isr":[1,2]}` (LeaderAndIsr.toString until 1.0, 0.10.2.2:36);
- a request's partition state, `LeaderAndIsrPartitionState(... leader=1, leaderEpoch=4, isr=[1, 2], ...)`.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F

_LEADER = r"(?:\bleader=|\(Leader:|\"leader\":)(-?\d+)"
_EPOCH = r"(?:\bleaderEpoch=|LeaderEpoch:|\"leader_epoch\":)(-?\d+)"
# the partition state znode's version the state was written at (its partition epoch from 3.x's KIP-841 names)
_VERSION = r"(?:\bzkVersion=|ZkVersion:|\bpartitionEpoch=)(-?\d+)"
# the ISR's members as printed: a List(...), a [...], ISR:1,2 up to the next field, or BrokerStates
# a partition of a printed replica assignment: `t-0 -> ReplicaAssignment(replicas=1,2, addingReplicas=, ...)`
# from 2.4 (ControllerContext's ReplicaAssignment.toString), `t-0 -> List(1, 2)` (a Seq) before it
# (the topic as printed, whatever it holds: a name Kafka refuses may still be in ZooKeeper)
_ASSIGNED = r"(?:\(|, )([^(),]+?)-(\d+) -> (?:ReplicaAssignment\(replicas=|[A-Za-z]+\()([\d, ]*)"
_ISR = r"(?:\bisr=List\(([^)]*)\)|\bisr=\[([^\]]*)\]|ISR:([\d,]*)|\"isr\":\[([^\]]*)\])"


def ints(text: Column) -> Column:
    """Every integer in a printed list (`2,3`, `[2, 3]`, `List(2, 3)`) as array<int>, in order."""
    return F.transform(F.regexp_extract_all(text, F.lit(r"(-?\d+)"), 1), lambda x: x.cast("int"))


def _int(text: Column, pattern: str) -> Column:
    found = F.regexp_extract(text, pattern, 1)
    return F.when(found != "", found.cast("int"))


def leader(text: Column) -> Column:
    """The leader a printed state names (-1: none), or null."""
    return _int(text, _LEADER)


def leader_epoch(text: Column) -> Column:
    """The leader epoch a printed state names, or null."""
    return _int(text, _EPOCH)


def version(text: Column) -> Column:
    """The state znode's version a printed state names (`zkVersion=`, `ZkVersion:`, 3.x's
    `partitionEpoch=`), or null (1.0's JSON form prints none)."""
    return _int(text, _VERSION)


def isr(text: Column) -> Column:
    """The ISR a printed state names, as array<int>, or null where it names none."""
    with_epochs = F.regexp_extract(text, r"isrWithBrokerEpoch=List\((.*?)\), leaderRecoveryState", 1)
    members = F.regexp_extract_all(with_epochs, F.lit(r"brokerId=(-?\d+)"), 1)
    plain = F.concat_ws("", *[F.regexp_extract(text, _ISR, k) for k in range(1, 5)])
    return (
        F.when(with_epochs != "", F.transform(members, lambda x: x.cast("int")))
        .when(text.rlike(_ISR), ints(plain))
        .otherwise(F.lit(None).cast("array<int>"))
    )


def recovering(text: Column) -> Column:
    """Whether the state is marked RECOVERING: an unclean election's, from 3.2 (Election.scala 3.6.2:45-47,
    behaviour `unclean_election_marks_recovering`)."""
    return text.rlike(r"(?:leaderRecoveryState=|LeaderRecoveryState:)RECOVERING")


def assignment(text: Column) -> Column:
    """Each partition a printed replica assignment names, in order: array<struct<topic, partition (a
    string, as a topic znode's keys), replicas array<int>>>; empty where it names none."""
    topics = F.regexp_extract_all(text, F.lit(_ASSIGNED), 1)
    partitions = F.regexp_extract_all(text, F.lit(_ASSIGNED), 2)
    replicas = F.regexp_extract_all(text, F.lit(_ASSIGNED), 3)
    return F.transform(
        topics,
        lambda t, i: F.struct(
            t.alias("topic"), partitions[i].alias("partition"), ints(replicas[i]).alias("replicas")
        ),
    )
