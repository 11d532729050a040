"""Kafka's znode data: what each znode holds, and the exact bytes Kafka writes there.

Sources, apache/kafka `core/src/main/scala/kafka/zk/ZkData.scala` @2.5.1, @2.8.2 and @3.6.2 (line numbers
below are @2.8.2 unless another tag is named); `kafka/utils/Json.scala` (a default Jackson `ObjectMapper`:
compact, UTF-8). The JSON key order is the iteration order of the map Kafka hands Jackson (`jvm_order`).
Version thresholds, from the tags where the code first appears: topic znode v2 2.4.0, broker v5 and
`/feature` 2.7.0, topic znode v3 2.8.0, `leader_recovery_state` 3.2.0, `/feature` V2 3.3.0, controller v2
and `/migration` 3.4.0. Paths are in `znodes`; `zkdata_decode` reads the bytes back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from workbench.kafka import topic_id as uuids
from workbench.kafka.jvm_order import (
    _scala,
    _v,
    java_hashmap_order,
    java_properties_order,
    scala_map_order,
    scala_mutable_map_order,
)

# ---- what the znodes hold -------------------------------------------------------------------------------

Replicas = tuple[int, ...]


class TopicPartition(NamedTuple):
    topic: str
    partition: int


@dataclass(frozen=True)
class ControllerZNode:
    """`/controller` (ControllerZNode l.56): version 1; 3.4+ version 2 with kraftControllerEpoch (-1)."""

    version: int
    brokerid: int
    timestamp: int | None  # epoch ms, written as a JSON string
    kraft_controller_epoch: int | None = None


@dataclass(frozen=True)
class BrokerIdZNode:
    """`/brokers/ids/<id>` (BrokerIdZNode.encode l.134; Kafka decodes it to BrokerInfo)."""

    version: int
    host: str | None  # the first PLAINTEXT endpoint's, null if none
    port: int  # -1 if no PLAINTEXT endpoint
    endpoints: tuple[str, ...]
    jmx_port: int
    timestamp: int | None
    rack: str | None = None
    listener_security_protocol_map: dict[str, str] | None = None  # v4+, in advertised.listeners order
    features: dict[str, dict[str, int]] | None = None  # v5+: {name: {"min_version": a, "max_version": b}}


@dataclass(frozen=True)
class TopicZNode:
    """`/brokers/topics/<t>` (TopicZNode.encode l.286). `partitions` in the order Kafka iterated its
    assignment (see `topic_assignment_order`); adding/removing hold only non-empty lists."""

    version: int
    partitions: dict[int, Replicas]
    adding_replicas: dict[int, Replicas] = field(default_factory=dict)
    removing_replicas: dict[int, Replicas] = field(default_factory=dict)
    topic_id: str | None = None


@dataclass(frozen=True)
class PartitionStateZNode:
    """`.../partitions/<p>/state` (TopicPartitionStateZNode l.352; Kafka: LeaderIsrAndControllerEpoch)."""

    version: int
    leader: int  # -1: no leader
    leader_epoch: int
    controller_epoch: int
    isr: Replicas
    leader_recovery_state: int = 0  # 3.2+, LeaderRecoveryState: 0 RECOVERED (not written), 1 RECOVERING


@dataclass(frozen=True)
class ConfigEntityZNode:
    """`/config/<type>/<name>` (ConfigEntityZNode l.377): a java.util.Properties, in its put order."""

    version: int
    config: dict[str, str]


@dataclass(frozen=True)
class ConfigChangeZNode:
    """`/config/changes/config_change_<seq>` (ConfigEntityChangeNotificationSequenceZNode l.399)."""

    version: int
    entity_path: str  # "topics/<t>", "brokers/<id>", ...


@dataclass(frozen=True)
class IsrChangeNotificationZNode:
    """`/isr_change_notification/isr_change_<seq>` (l.410); `partitions` in Kafka's Set order."""

    version: int
    partitions: tuple[TopicPartition, ...]


@dataclass(frozen=True)
class PreferredReplicaElectionZNode:
    """`/admin/preferred_replica_election` (l.504); `partitions` in Kafka's Set order."""

    version: int
    partitions: tuple[TopicPartition, ...]


@dataclass(frozen=True)
class LogDirEventNotificationZNode:
    """`/log_dir_event_notification/log_dir_event_<seq>` (l.437); event 1 = LogDirFailureEvent."""

    version: int
    broker: int
    event: int


@dataclass(frozen=True)
class ReassignPartitionsZNode:
    """`/admin/reassign_partitions` (l.485): a Jackson bean, properties in constructor order."""

    version: int
    partitions: tuple[tuple[TopicPartition, Replicas], ...]


@dataclass(frozen=True)
class ClusterIdZNode:
    """`/cluster/id` (ClusterIdZNode.toJson l.753); its version is the JSON string "1"."""

    version: str
    id: str


@dataclass(frozen=True)
class FeatureZNode:
    """`/feature` (FeatureZNode.encode l.869). V1 ranges are min/max_version_level; 3.3+ V2 only max."""

    version: int
    status: int  # FeatureZNodeStatus: 0 Disabled, 1 Enabled
    features: dict[str, dict[str, int]]


@dataclass(frozen=True)
class ProducerIdBlockZNode:
    """`/latest_producer_id_block` (ProducerIdManager.scala l.38; @3.6.2 ZkData.scala l.811)."""

    version: int
    broker: int
    block_start: int  # longs, written as JSON strings
    block_end: int


@dataclass(frozen=True)
class MigrationZNode:
    """`/migration` (MigrationZNode.encode @3.6.2 l.1043): ZK-to-KRaft migration state, 3.4+."""

    version: int
    kraft_controller_id: int
    kraft_controller_epoch: int
    kraft_metadata_offset: int
    kraft_metadata_epoch: int


ZNode = (
    ControllerZNode
    | BrokerIdZNode
    | TopicZNode
    | PartitionStateZNode
    | ConfigEntityZNode
    | ConfigChangeZNode
    | IsrChangeNotificationZNode
    | PreferredReplicaElectionZNode
    | LogDirEventNotificationZNode
    | ReassignPartitionsZNode
    | ClusterIdZNode
    | FeatureZNode
    | ProducerIdBlockZNode
    | MigrationZNode
)


# ---- JSON as Jackson writes it -------------------------------------------------------------------------

_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def _char(c: str) -> str:
    """Jackson's UTF8JsonGenerator: short escapes, other controls as \\u00XX, and characters outside
    the BMP as escaped UTF-16 surrogates (jackson-core issue 223), hex in upper case; the rest raw."""
    if c in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[c]
    code = ord(c)
    if code < 0x20 or 0xD800 <= code <= 0xDFFF:
        return f"\\u{code:04X}"
    if code > 0xFFFF:
        return f"\\u{0xD800 + ((code - 0x10000) >> 10):04X}\\u{0xDC00 + (code & 0x3FF):04X}"
    return c


def _dump(value: Any) -> str:
    """Compact JSON as Kafka's Jackson `ObjectMapper` writes it: no spaces, UTF-8."""
    if isinstance(value, str):
        return '"' + "".join(_char(c) for c in value) + '"'
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Mapping):
        return "{" + ",".join(f"{_dump(str(k))}:{_dump(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(_dump(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} as Kafka JSON")


def _json(pairs: Mapping[str, Any], order: Sequence[str]) -> bytes:
    return _dump({k: pairs[k] for k in order}).encode("utf-8")


# ---- encoders: the bytes Kafka writes -------------------------------------------------------------------


def _expect(what: str, got: object, wanted: object, kafka_version: str) -> None:
    if got != wanted:
        raise ValueError(f"Kafka {kafka_version} writes {what} {wanted!r}, not {got!r}")


def _levels(ranges: Mapping[str, Mapping[str, int]], name: str, labels: Sequence[str]) -> dict[str, int]:
    missing = [label for label in labels if label not in ranges[name]]
    if missing:
        raise ValueError(f"feature {name!r} needs {list(labels)}, lacks {missing}")
    return {label: ranges[name][label] for label in labels}


def _ms(timestamp: int | None) -> str:
    if timestamp is None:
        raise ValueError("Kafka always writes a timestamp (epoch ms); got None")
    return str(timestamp)


def encode_controller_epoch(epoch: int) -> bytes:
    """`/controller_epoch` (ControllerEpochZNode l.66): the epoch in decimal."""
    return str(epoch).encode("ascii")


def encode_controller(z: ControllerZNode, kafka_version: str) -> bytes:
    """Map of 3 (4 since 3.4.0): insertion order."""
    new = _v(kafka_version) >= (3, 4, 0)
    _expect("/controller version", z.version, 2 if new else 1, kafka_version)
    pairs: dict[str, Any] = {"version": z.version, "brokerid": z.brokerid, "timestamp": _ms(z.timestamp)}
    if new:
        pairs["kraftControllerEpoch"] = -1 if z.kraft_controller_epoch is None else z.kraft_controller_epoch
    elif z.kraft_controller_epoch is not None:
        raise ValueError(f"Kafka {kafka_version} writes no kraftControllerEpoch")
    return _json(pairs, list(pairs))


def encode_broker(z: BrokerIdZNode, kafka_version: str, scala: str | None = None) -> bytes:
    """`mutable.Map` of 6, then `+=` rack (v3+), listener map (v4+), features (v5+): hash order.

    BrokerInfo.apply (l.97) picks 5 if IBP >= 2.7-IV0, 4 if >= 0.10.0-IV1, else 2; 2.5.x has no v5.
    """
    allowed = (2, 4, 5) if _v(kafka_version) >= (2, 7, 0) else (2, 4)
    if z.version not in allowed:
        raise ValueError(
            f"Kafka {kafka_version} writes broker registration version {allowed}, not {z.version}"
        )
    pairs: dict[str, Any] = {"version": z.version, "host": z.host, "port": z.port}
    pairs |= {"endpoints": list(z.endpoints), "jmx_port": z.jmx_port, "timestamp": _ms(z.timestamp)}
    scala = _scala(scala, kafka_version)
    if z.rack is not None and z.version >= 3:
        pairs["rack"] = z.rack
    if z.version >= 4:
        listeners = dict(z.listener_security_protocol_map or {})  # `.toMap` of the endpoints
        pairs["listener_security_protocol_map"] = {
            k: listeners[k] for k in scala_map_order(list(listeners), scala)
        }
    if z.version >= 5:  # Features.toMap: Collectors.toMap (HashMap) of Utils.mkMap (LinkedHashMap)
        feats = z.features or {}
        labels = ("min_version", "max_version")
        pairs["features"] = {n: _levels(feats, n, labels) for n in java_hashmap_order(list(feats))}
    return _json(pairs, scala_mutable_map_order(list(pairs), scala, applied=6))


def encode_topic(z: TopicZNode, kafka_version: str, scala: str | None = None) -> bytes:
    """1.1-2.3: `Map("version" -> 1, "partitions" -> ...)`, the partitions the immutable map `.map` makes
    of the assignment in `z.partitions`' order (@1.1.1 l.234). 2.4-2.7: `Map` of 4 (insertion order),
    version 2. 2.8+: `mutable.Map` of 4 `+=` topic_id, version 3. From 2.4 the three inner maps are
    `mutable.Map()` filled in the order of `z.partitions`.
    """
    v = _v(kafka_version)
    v3 = v >= (2, 8, 0)
    _expect("topic znode version", z.version, 3 if v3 else 2 if v >= (2, 4, 0) else 1, kafka_version)
    if z.topic_id is not None and not v3:
        raise ValueError(f"Kafka {kafka_version} has no topic ids")
    scala = _scala(scala, kafka_version)
    if not set(z.adding_replicas) | set(z.removing_replicas) <= set(z.partitions):
        raise ValueError("adding_replicas/removing_replicas name partitions that are not in partitions")
    if z.version == 1:
        if z.adding_replicas or z.removing_replicas:
            raise ValueError(f"Kafka {kafka_version} writes no adding_replicas or removing_replicas")
        keys = [str(p) for p in z.partitions]
        ordered = {k: list(z.partitions[int(k)]) for k in scala_map_order(keys, scala)}
        return _json({"version": 1, "partitions": ordered}, ["version", "partitions"])

    def inner(source: Mapping[int, Replicas]) -> dict[str, list[int]]:
        filled = {str(p): list(source[p]) for p in z.partitions if source.get(p)}
        return {k: filled[k] for k in scala_mutable_map_order(list(filled), scala)}

    pairs: dict[str, Any] = {"version": z.version, "partitions": inner(z.partitions)}
    pairs |= {"adding_replicas": inner(z.adding_replicas), "removing_replicas": inner(z.removing_replicas)}
    if not v3:
        return _json(pairs, list(pairs))
    if z.topic_id is not None:
        pairs["topic_id"] = uuids.to_string(uuids.from_string(z.topic_id))
    return _json(pairs, scala_mutable_map_order(list(pairs), scala, applied=4))


def encode_partition_state(z: PartitionStateZNode, kafka_version: str, scala: str | None = None) -> bytes:
    """`Map` of 5 (hash order), `++ leader_recovery_state` when not RECOVERED (3.2+, @3.6.2 l.376)."""
    _expect("partition state version", z.version, 1, kafka_version)
    pairs: dict[str, Any] = {"version": 1, "leader": z.leader, "leader_epoch": z.leader_epoch}
    pairs |= {"controller_epoch": z.controller_epoch, "isr": list(z.isr)}
    if z.leader_recovery_state != 0:
        if _v(kafka_version) < (3, 2, 0):
            raise ValueError(f"Kafka {kafka_version} writes no leader_recovery_state")
        pairs["leader_recovery_state"] = z.leader_recovery_state
    return _json(pairs, scala_map_order(list(pairs), _scala(scala, kafka_version)))


def encode_config(z: ConfigEntityZNode, jdk: int | None = None) -> bytes:
    """`Map("version" -> 1, "config" -> Properties)`; the Properties order depends on the JDK (8 or 9+)."""
    if len(z.config) > 1 and jdk is None:
        raise ValueError("the key order of a config znode depends on the broker's JDK: pass jdk=8 or jdk=11")
    order = java_properties_order(list(z.config), jdk or 11)
    return _json({"version": z.version, "config": {k: z.config[k] for k in order}}, ["version", "config"])


def encode_feature(z: FeatureZNode, kafka_version: str, scala: str | None = None) -> bytes:
    """`mutable.Map` of 3. Up to 3.2: features via `Features.toMap` (HashMap of min/max_version_level).
    3.3+ (`FeatureZNode.encode` @3.6.2 l.951): a Scala map of `Map(max, min)` (V1) or `Map(max)` (V2)."""
    v = _v(kafka_version)
    if v < (2, 7, 0):
        raise ValueError(f"Kafka {kafka_version} has no /feature znode")
    scala = _scala(scala, kafka_version)
    if v < (3, 3, 0):
        _expect("/feature version", z.version, 1, kafka_version)
        labels = ("min_version_level", "max_version_level")  # FinalizedVersionRange.toMap, a LinkedHashMap
        feats = {n: _levels(z.features, n, labels) for n in java_hashmap_order(list(z.features))}
    else:
        if z.version not in (1, 2):
            raise ValueError(f"Kafka {kafka_version} writes /feature version 1 or 2, not {z.version}")
        feats = {}
        for n in scala_map_order(list(z.features), scala):
            level = z.features[n]["max_version_level"]
            if z.version == 1 and z.features[n].get("min_version_level", level) != level:
                raise ValueError(f"Kafka {kafka_version} writes min_version_level = max_version_level")
            feats[n] = {"max_version_level": level} | ({"min_version_level": level} if z.version == 1 else {})
    pairs = {"version": z.version, "status": z.status, "features": feats}
    return _json(pairs, scala_mutable_map_order(list(pairs), scala, applied=3))


def encode_migration(z: MigrationZNode, kafka_version: str, scala: str | None = None) -> bytes:
    """`Map` of 5: hash order."""
    if _v(kafka_version) < (3, 4, 0):
        raise ValueError(f"Kafka {kafka_version} has no /migration znode")
    pairs = {k: getattr(z, k) for k in MigrationZNode.__dataclass_fields__}
    return _json(pairs, scala_map_order(list(pairs), _scala(scala, kafka_version)))


def _partition_list(z: IsrChangeNotificationZNode | PreferredReplicaElectionZNode) -> bytes:
    parts = [{"topic": tp.topic, "partition": tp.partition} for tp in z.partitions]
    return _json({"version": z.version, "partitions": parts}, ["version", "partitions"])


# The version field of znodes whose layout never changed in 2.5-3.6: each has one writer and one version.
_ONE_VERSION: dict[type, object] = {
    ConfigEntityZNode: 1, ConfigChangeZNode: 2, IsrChangeNotificationZNode: 1, MigrationZNode: 0,
    PreferredReplicaElectionZNode: 1, LogDirEventNotificationZNode: 1, ReassignPartitionsZNode: 1,
    ClusterIdZNode: "1", ProducerIdBlockZNode: 1,
}  # fmt: skip


def encode(z: ZNode, kafka_version: str, scala: str | None = None, jdk: int | None = None) -> bytes:
    """The bytes Kafka `kafka_version` (built with `scala`, default its own build's) writes for `z`."""
    _v(kafka_version)
    if type(z) in _ONE_VERSION:
        _expect(f"{type(z).__name__} version", z.version, _ONE_VERSION[type(z)], kafka_version)
    if isinstance(z, ControllerZNode):
        return encode_controller(z, kafka_version)
    if isinstance(z, BrokerIdZNode):
        return encode_broker(z, kafka_version, scala)
    if isinstance(z, TopicZNode):
        return encode_topic(z, kafka_version, scala)
    if isinstance(z, PartitionStateZNode):
        return encode_partition_state(z, kafka_version, scala)
    if isinstance(z, ConfigEntityZNode):
        return encode_config(z, jdk)
    if isinstance(z, FeatureZNode):
        return encode_feature(z, kafka_version, scala)
    if isinstance(z, MigrationZNode):
        return encode_migration(z, kafka_version, scala)
    if isinstance(z, (IsrChangeNotificationZNode, PreferredReplicaElectionZNode)):
        return _partition_list(z)
    if isinstance(z, ReassignPartitionsZNode):  # bean properties in constructor order
        parts = [
            {"topic": tp.topic, "partition": tp.partition, "replicas": list(r)} for tp, r in z.partitions
        ]
        return _json({"version": z.version, "partitions": parts}, ["version", "partitions"])
    pairs: dict[str, Any] = dict(z.__dict__)  # maps of 2 to 4 entries: insertion order
    if isinstance(z, ProducerIdBlockZNode):
        pairs |= {"block_start": str(z.block_start), "block_end": str(z.block_end)}
    return _json(pairs, list(pairs))
