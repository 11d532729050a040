"""Kafka's znode data read back: any key order, as Kafka's own decoders accept it, and a `ZkDataError`
that names the znode and what was expected, so that a damaged or foreign znode is reported, not guessed at.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from workbench.errors import WorkbenchError
from workbench.kafka import topic_id as uuids
from workbench.kafka.zkdata import (
    BrokerIdZNode,
    ClusterIdZNode,
    ConfigChangeZNode,
    ConfigEntityZNode,
    ControllerZNode,
    FeatureZNode,
    IsrChangeNotificationZNode,
    LogDirEventNotificationZNode,
    MigrationZNode,
    PartitionStateZNode,
    PreferredReplicaElectionZNode,
    ProducerIdBlockZNode,
    ReassignPartitionsZNode,
    Replicas,
    TopicPartition,
    TopicZNode,
    ZNode,
    _dump,
)
from workbench.kafka.znodes import (
    CONFIG,
    CONTROLLER,
    CONTROLLER_EPOCH,
    FEATURE,
    ISR_CHANGE_NOTIFICATION,
    PREFERRED_REPLICA_ELECTION,
    REASSIGN_PARTITIONS,
    broker_path,
    kind_of,
    partition_state_path,
    topic_path,
)


class ZkDataError(WorkbenchError, ValueError):
    """A znode's data is not what Kafka writes there."""


_REQUIRED = object()
_INT = (-(2**31), 2**31 - 1)
_LONG = (-(2**63), 2**63 - 1)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _load(data: bytes | None, znode: str) -> dict[str, Any]:
    if data is None:
        raise ZkDataError(f"{znode}: expected a JSON object, got null data")
    try:
        obj = json.loads(bytes(data).decode("utf-8"), parse_constant=_no_constant)
    except ValueError as e:
        raise ZkDataError(f"{znode}: expected a JSON object, got {bytes(data)[:80]!r} ({e})") from None
    if not isinstance(obj, dict):
        raise ZkDataError(f"{znode}: expected a JSON object, got {_dump(obj)[:80]}")
    return obj


def _int(value: Any, znode: str, key: str, bounds: tuple[int, int] = _INT) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not bounds[0] <= value <= bounds[1]:
        what = "a long" if bounds == _LONG else "an int"
        raise ZkDataError(f"{znode}: expected {key!r} to be {what}, got {value!r}")
    return value


def _num_str(value: Any, znode: str, key: str) -> int:
    if (
        not isinstance(value, str)
        or not re.fullmatch(r"[+-]?[0-9]+", value)
        or not -(2**63) <= int(value) < 2**63
    ):
        raise ZkDataError(f"{znode}: expected {key!r} to be a long written as a JSON string, got {value!r}")
    return int(value)


def _get(obj: Mapping[str, Any], key: str, znode: str, kind: str, default: Any = _REQUIRED) -> Any:
    """obj[key] checked as `kind`: int, long, str, str?, ints, object, numstr."""
    if key not in obj:
        if default is _REQUIRED:
            raise ZkDataError(f"{znode}: expected key {key!r}, found {sorted(obj)}")
        return default
    v = obj[key]
    if kind in ("int", "long"):
        return _int(v, znode, key, _LONG if kind == "long" else _INT)
    if kind == "numstr":
        return _num_str(v, znode, key)
    if kind == "ints":
        if not isinstance(v, list):
            raise ZkDataError(f"{znode}: expected {key!r} to be a list of ints, got {v!r}")
        return tuple(_int(x, znode, key) for x in v)
    ok = {"str": isinstance(v, str), "str?": v is None or isinstance(v, str), "object": isinstance(v, dict)}
    if not ok[kind]:
        what = "a JSON object" if kind == "object" else "a string"
        raise ZkDataError(f"{znode}: expected {key!r} to be {what}, got {v!r}")
    return v


def _partition_key(key: str, znode: str) -> int:
    if not re.fullmatch(r"[+-]?[0-9]{1,10}", key) or not _INT[0] <= int(key) <= _INT[1]:
        raise ZkDataError(f"{znode}: expected partition numbers as keys, got {key!r}")
    return int(key)


def decode_controller_epoch(data: bytes | None) -> int:
    """ControllerEpochZNode.decode: the UTF-8 text as a Java int."""
    text = (data or b"").decode("utf-8", errors="replace")
    if not re.fullmatch(r"[+-]?[0-9]{1,10}", text) or not _INT[0] <= int(text) <= _INT[1]:
        raise ZkDataError(f"{CONTROLLER_EPOCH}: expected a decimal int, got {text[:40]!r}")
    return int(text)


def decode_controller(data: bytes | None) -> ControllerZNode:
    o, z = _load(data, CONTROLLER), CONTROLLER
    ts = _get(o, "timestamp", z, "numstr", None)
    return ControllerZNode(
        _get(o, "version", z, "int"),
        _get(o, "brokerid", z, "int"),
        ts,
        _get(o, "kraftControllerEpoch", z, "int", None),
    )


def decode_broker(data: bytes | None, broker_id: int | str = "<id>") -> BrokerIdZNode:
    """As BrokerIdZNode.decode: v1 has host and port only, v2+ endpoints; the rest optional."""
    z = broker_path(broker_id)
    o = _load(data, z)
    version = _get(o, "version", z, "int")
    if version < 1:
        raise ZkDataError(f"{z}: Unsupported version of broker registration: {version}")
    if version >= 2 and "endpoints" not in o:
        raise ZkDataError(f"{z}: expected key 'endpoints', found {sorted(o)}")
    endpoints = o.get("endpoints", [])
    if not (isinstance(endpoints, list) and all(isinstance(e, str) for e in endpoints)):
        raise ZkDataError(f"{z}: expected 'endpoints' to be a list of strings, got {endpoints!r}")
    lspm = _get(o, "listener_security_protocol_map", z, "object", None)
    if lspm is not None and not all(isinstance(v, str) for v in lspm.values()):
        raise ZkDataError(f"{z}: expected listener_security_protocol_map values to be strings, got {lspm!r}")
    feats = _get(o, "features", z, "object", None)
    if feats is not None:
        feats = {n: {k: _int(x, z, n) for k, x in _get(feats, n, z, "object").items()} for n in feats}
    return BrokerIdZNode(
        version,
        _get(o, "host", z, "str?", _REQUIRED if version == 1 else None),
        _get(o, "port", z, "int", _REQUIRED if version == 1 else -1),
        tuple(endpoints),
        _get(o, "jmx_port", z, "int"),
        _get(o, "timestamp", z, "numstr", None),
        _get(o, "rack", z, "str?", None),
        lspm,
        feats,
    )


def decode_topic(data: bytes | None, topic: str = "<topic>") -> TopicZNode:
    """v1 (up to 2.3) has only partitions; v2 adds adding/removing_replicas; v3 (2.8+) topic_id."""
    z = topic_path(topic)
    o = _load(data, z)

    def assignment(key: str, default: Any) -> dict[int, Replicas]:
        m = _get(o, key, z, "object", default)
        return {_partition_key(p, z): _get(m, p, z, "ints") for p in m}

    tid = _get(o, "topic_id", z, "str", None)
    if tid is not None:
        try:
            tid = uuids.to_string(uuids.from_string(tid))
        except ValueError as e:
            raise ZkDataError(f"{z}: expected topic_id to be a Kafka Uuid: {e}") from None
    return TopicZNode(
        _get(o, "version", z, "int"),
        assignment("partitions", _REQUIRED),
        assignment("adding_replicas", {}),
        assignment("removing_replicas", {}),
        tid,
    )


def decode_partition_state(
    data: bytes | None, topic: str = "<topic>", partition: int | str = "<p>"
) -> PartitionStateZNode:
    z = partition_state_path(topic, partition)
    o = _load(data, z)
    lrs = _get(o, "leader_recovery_state", z, "int", 0)
    if lrs not in (0, 1):
        raise ZkDataError(f"{z}: Value {lrs} is not a valid leader recovery state")
    return PartitionStateZNode(
        _get(o, "version", z, "int"),
        _get(o, "leader", z, "int"),
        _get(o, "leader_epoch", z, "int"),
        _get(o, "controller_epoch", z, "int"),
        _get(o, "isr", z, "ints"),
        lrs,
    )


def decode_config(data: bytes | None, path: str = CONFIG + "/<type>/<name>") -> ConfigEntityZNode:
    o = _load(data, path)
    config = _get(o, "config", path, "object")
    return ConfigEntityZNode(
        _get(o, "version", path, "int"), {k: _get(config, k, path, "str") for k in config}
    )


def _tps(o: Mapping[str, Any], z: str) -> tuple[TopicPartition, ...]:
    parts = o.get("partitions")
    if not isinstance(parts, list) or not all(isinstance(p, dict) for p in parts):
        raise ZkDataError(
            f"{z}: expected 'partitions' to be a list of {{topic, partition}} objects, got {parts!r}"
        )
    return tuple(TopicPartition(_get(p, "topic", z, "str"), _get(p, "partition", z, "int")) for p in parts)


def decode_isr_change(data: bytes | None, path: str = ISR_CHANGE_NOTIFICATION) -> IsrChangeNotificationZNode:
    o = _load(data, path)
    return IsrChangeNotificationZNode(_get(o, "version", path, "int"), _tps(o, path))


def decode_preferred_replica_election(data: bytes | None) -> PreferredReplicaElectionZNode:
    o, z = _load(data, PREFERRED_REPLICA_ELECTION), PREFERRED_REPLICA_ELECTION
    return PreferredReplicaElectionZNode(_get(o, "version", z, "int"), _tps(o, z))


def decode_reassign_partitions(data: bytes | None) -> ReassignPartitionsZNode:
    o, z = _load(data, REASSIGN_PARTITIONS), REASSIGN_PARTITIONS
    tps = _tps(o, z)
    replicas = [_get(p, "replicas", z, "ints") for p in o["partitions"]]
    return ReassignPartitionsZNode(_get(o, "version", z, "int"), tuple(zip(tps, replicas, strict=True)))


def decode_feature(data: bytes | None) -> FeatureZNode:
    o, z = _load(data, FEATURE), FEATURE
    feats = _get(o, "features", z, "object")
    ranges = {n: {k: _int(x, z, n) for k, x in _get(feats, n, z, "object").items()} for n in feats}
    status = _get(o, "status", z, "int")
    if status not in (0, 1):
        raise ZkDataError(f"{z}: expected status 0 (disabled) or 1 (enabled), got {status}")
    return FeatureZNode(_get(o, "version", z, "int"), status, ranges)


def _simple(cls: type, data: bytes | None, z: str, kinds: Mapping[str, str]) -> Any:
    o = _load(data, z)
    return cls(*(_get(o, k, z, kind) for k, kind in kinds.items()))


def decode(path: str, data: bytes | None, chroot: str = "") -> ZNode | int | None:
    """Decode any Kafka znode by its path; None for those Kafka leaves without data (parents, delete
    markers, /brokers/seqid, a /latest_producer_id_block no producer id was allocated from yet).
    Raises ZkDataError for bad data and for a path that is not Kafka's."""
    found = kind_of(path, chroot)
    if found is None:
        raise ZkDataError(f"{path}: not a Kafka znode")
    kind, args = found
    if kind in ("partitions", "delete_topic", "broker_seqid"):
        return None
    if kind == "producer_id_block" and not data:  # created empty at startup (ZkData.PersistentZkPaths)
        return None
    if kind == "controller_epoch":
        return decode_controller_epoch(data)
    if kind == "controller":
        return decode_controller(data)
    if kind == "broker":
        return decode_broker(data, args[0])
    if kind == "topic":
        return decode_topic(data, args[0])
    if kind == "partition_state":
        return decode_partition_state(data, args[0], args[1])
    if kind == "config":
        return decode_config(data, path)
    if kind == "isr_change":
        return decode_isr_change(data, path)
    if kind == "preferred_replica_election":
        return decode_preferred_replica_election(data)
    if kind == "reassign_partitions":
        return decode_reassign_partitions(data)
    if kind == "feature":
        return decode_feature(data)
    simple: dict[str, tuple[type, dict[str, str]]] = {
        "config_change": (ConfigChangeZNode, {"version": "int", "entity_path": "str"}),
        "log_dir_event": (LogDirEventNotificationZNode, {"version": "int", "broker": "int", "event": "int"}),
        "cluster_id": (ClusterIdZNode, {"version": "str", "id": "str"}),
        "producer_id_block": (
            ProducerIdBlockZNode,
            {"version": "long", "broker": "int", "block_start": "numstr", "block_end": "numstr"},
        ),
        "migration": (
            MigrationZNode,
            {k: "long" if "offset" in k else "int" for k in MigrationZNode.__dataclass_fields__},
        ),
    }
    cls, kinds = simple[kind]
    return _simple(cls, data, path, kinds)
