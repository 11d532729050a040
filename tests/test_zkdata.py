"""Kafka's znode codecs, held against the bytes real Kafka wrote: every Kafka znode in the ZooKeeper
snapshots of a Kafka 3.1.0 cluster (built for Scala 2.12, run on JDK 8) is decoded and encoded again byte
for byte; Scala 2.13 output is held against goldens made on a JVM and, where a JDK is at hand, against
scala-library 2.13 itself."""

from __future__ import annotations

import json
import random
import re
import shutil
import string
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from workbench.kafka import jvm_order, znodes
from workbench.kafka import zkdata as zk
from workbench.kafka import zkdata_decode as zkd
from workbench.zookeeper.files import read_snapshot

# ---- the real snapshots --------------------------------------------------------------------------------

# GroupCoordinator.offsetsTopicConfigs (@3.1.0 l.89) puts these in this order; AutoTopicCreationManager
# copies them with Properties.forEach (l.256) and ZkAdminManager.createTopics puts them into a new
# Properties in that order (l.190-191), which ConfigEntityZNode.encode writes.
OFFSETS_TOPIC_CONFIG_PUTS = ["cleanup.policy", "segment.bytes", "compression.type"]


@pytest.fixture(scope="module")
def real_znodes(real_evidence: Path) -> list[tuple[str, str, bytes | None]]:
    """(snapshot, path, data) of every Kafka znode in the five real snapshots."""
    out = []
    for f in sorted((real_evidence / "zk-snapshots-3.6.3").glob("snapshot.*[0-9a-f]")):
        snap = read_snapshot(f)
        assert not snap.problems
        out += [(f.name, n.path, n.data) for n in snap.nodes if znodes.kind_of(n.path)]
    assert len(out) > 300
    return out


def _as_kafka_3_1_wrote_it(path: str, value: Any) -> Any:
    """Put back the insertion orders Kafka had when it wrote the znode (JSON shows only the result)."""
    _, args = znodes.kind_of(path) or ("", ())
    if isinstance(value, zk.TopicZNode):  # a new topic's assignment, AdminZkClient
        order = jvm_order.topic_assignment_order(args[0], list(value.partitions), "2.12")
        return replace(value, partitions={p: value.partitions[p] for p in order})
    if isinstance(value, zk.ConfigEntityZNode) and set(value.config) == set(OFFSETS_TOPIC_CONFIG_PUTS):
        puts = jvm_order.java_properties_order(OFFSETS_TOPIC_CONFIG_PUTS, jdk=8, for_each=True)
        return replace(value, config={k: value.config[k] for k in puts})
    return value


def test_every_real_znode_is_encoded_again_byte_for_byte(real_znodes: list) -> None:
    seen: dict[str, int] = {}
    for snapshot, path, data in real_znodes:
        value = zkd.decode(path, data)
        if value is None:  # parents, /brokers/seqid, the empty /latest_producer_id_block
            assert data is None, path
            continue
        if isinstance(value, int):
            again = zk.encode_controller_epoch(value)
        else:
            again = zk.encode(_as_kafka_3_1_wrote_it(path, value), "3.1.0", scala="2.12", jdk=8)
        assert again == data, f"{snapshot} {path}"
        kind = (znodes.kind_of(path) or ("",))[0]
        seen[kind] = seen.get(kind, 0) + 1
    assert seen == {
        "partition_state": 121, "topic": 11, "config": 11, "cluster_id": 4, "controller_epoch": 4,
        "feature": 4, "controller": 3, "broker": 3,
    }  # fmt: skip


def _real(real_znodes: list, snapshot: str, path: str) -> bytes:
    return next(d for s, p, d in real_znodes if s == snapshot and p == path)


def test_real_values_decode_as_formats_md_shows_them(real_znodes: list) -> None:
    state = zkd.decode_partition_state(
        _real(real_znodes, "snapshot.32f", znodes.partition_state_path("design2", 0))
    )
    assert state == zk.PartitionStateZNode(1, leader=0, leader_epoch=0, controller_epoch=5, isr=(0,))
    topic = zkd.decode_topic(_real(real_znodes, "snapshot.32f", "/brokers/topics/design2"), "design2")
    assert topic == zk.TopicZNode(3, {0: (0,)}, {}, {}, "fp0I2sNQST-mA8JQMWpPQg")
    offsets = zkd.decode_topic(_real(real_znodes, "snapshot.f7", "/brokers/topics/__consumer_offsets"))
    assert sorted(offsets.partitions) == list(range(50)) and set(offsets.partitions.values()) == {(0,)}
    assert zkd.decode_controller(_real(real_znodes, "snapshot.f7", "/controller")) == zk.ControllerZNode(
        1, 0, 1650897815992
    )
    assert zkd.decode_controller_epoch(_real(real_znodes, "snapshot.f7", "/controller_epoch")) == 4
    broker = zkd.decode_broker(_real(real_znodes, "snapshot.f7", "/brokers/ids/0"), 0)
    assert (broker.version, broker.port, broker.jmx_port, broker.rack) == (5, 9092, -1, None)
    assert broker.host == "cu-tcom-3-10.203.21.58.int.colorado.edu"
    assert broker.endpoints == ("PLAINTEXT://cu-tcom-3-10.203.21.58.int.colorado.edu:9092",)
    assert broker.listener_security_protocol_map == {"PLAINTEXT": "PLAINTEXT"} and broker.features == {}
    assert zkd.decode("/cluster/id", _real(real_znodes, "snapshot.f7", "/cluster/id")) == zk.ClusterIdZNode(
        "1", "4fi2MkU0Ql2L0cPRncY20Q"
    )
    assert zkd.decode("/feature", _real(real_znodes, "snapshot.f7", "/feature")) == zk.FeatureZNode(1, 1, {})
    # topic `design1` in the last snapshot has another id than its partition.metadata (FORMATS.md Part B)
    design1 = zkd.decode(
        "/brokers/topics/design1", _real(real_znodes, "snapshot.32f", "/brokers/topics/design1")
    )
    assert isinstance(design1, zk.TopicZNode) and design1.topic_id == "m2GaXl4TSyaBZB5R8-wtaA"


def test_real_bytes_need_the_right_scala_jdk_and_insertion_order(real_znodes: list) -> None:
    """The other choices give other bytes, so the test above really tells them apart."""
    path = "/brokers/topics/__consumer_offsets"
    data = _real(real_znodes, "snapshot.f7", path)
    topic = zkd.decode_topic(data, "__consumer_offsets")
    kafka_order = _as_kafka_3_1_wrote_it(path, topic)
    assert zk.encode(kafka_order, "3.1.0", scala="2.12") == data
    ascending = replace(topic, partitions={p: topic.partitions[p] for p in range(50)})
    assert zk.encode(ascending, "3.1.0", scala="2.12") != data  # buckets shared by 6/28 and 0/9/43
    assert zk.encode(kafka_order, "3.1.0", scala="2.13") != data
    broker = zkd.decode_broker(_real(real_znodes, "snapshot.f7", "/brokers/ids/0"))
    as_2_13 = json.loads(zk.encode(broker, "3.1.0", scala="2.13"))
    # the order public `get /brokers/ids/0` pastes of kafka_2.13 builds show
    assert list(as_2_13) == [
        "features", "listener_security_protocol_map", "endpoints", "jmx_port", "port", "host", "version",
        "timestamp",
    ]  # fmt: skip
    config_path = "/config/topics/__consumer_offsets"
    config = _as_kafka_3_1_wrote_it(
        config_path, zkd.decode(config_path, _real(real_znodes, "snapshot.f7", config_path))
    )
    assert zk.encode(config, "3.1.0", jdk=8) == _real(real_znodes, "snapshot.f7", config_path)
    assert zk.encode(config, "3.1.0", jdk=11) == (
        b'{"version":1,"config":{"compression.type":"producer","cleanup.policy":"compact",'
        b'"segment.bytes":"104857600"}}'
    )


# ---- Scala 2.13 builds: goldens printed by scala-library 2.13.18 + jackson-databind 2.21 -------------------
# Made by running, on a JVM, the same collection expressions ZkData.scala @3.6.2 hands to Jackson (our own
# harness, not Kafka's code). Public `zookeeper-shell` pastes of kafka_2.13 clusters show the same orders.

EPS = [
    ("CLIENT://h1:9092", "CLIENT", "SSL"), ("REPLICATION://h1:9093", "REPLICATION", "PLAINTEXT"),
    ("INTERNAL://h1:9094", "INTERNAL", "SASL_PLAINTEXT"), ("EXTERNAL://h1:9095", "EXTERNAL", "SASL_SSL"),
    ("PLAINTEXT://h1:9096", "PLAINTEXT", "PLAINTEXT"),
]  # fmt: skip
REASSIGNING = list(reversed(range(40)))
GOLDEN_2_13: list[tuple[Any, str]] = [
    (zk.ControllerZNode(2, 1, 1704032949256, -1),
     '{"version":2,"brokerid":1,"timestamp":"1704032949256","kraftControllerEpoch":-1}'),
    (zk.PartitionStateZNode(1, 2, 7, 12, (2, 3, 1)),
     '{"controller_epoch":12,"leader":2,"version":1,"leader_epoch":7,"isr":[2,3,1]}'),
    (zk.PartitionStateZNode(1, 2, 7, 12, (2,), leader_recovery_state=1),
     '{"controller_epoch":12,"leader":2,"version":1,"leader_recovery_state":1,"leader_epoch":7,"isr":[2]}'),
    (zk.TopicZNode(3, {p: (1, 2, 3) for p in range(3)}, topic_id="cMr3GpVESX2L3byPGf93lQ"),
     '{"partitions":{"0":[1,2,3],"1":[1,2,3],"2":[1,2,3]},"topic_id":"cMr3GpVESX2L3byPGf93lQ",'
     '"adding_replicas":{},"removing_replicas":{},"version":3}'),
    (zk.TopicZNode(3, {p: (1, 2, 3) for p in range(3)}),
     '{"partitions":{"0":[1,2,3],"1":[1,2,3],"2":[1,2,3]},"adding_replicas":{},"removing_replicas":{},'
     '"version":3}'),
    (zk.TopicZNode(3, {p: (1, 2, 3) for p in REASSIGNING}, {p: (3,) for p in REASSIGNING if p in (5, 17, 33)},
                   {p: (1,) for p in REASSIGNING if p in (5, 17, 33)}, "cMr3GpVESX2L3byPGf93lQ"),
     '{"partitions":{' + ",".join(f'"{p}":[1,2,3]' for p in [
         22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 10, 32, 11, 33, 12, 34, 13, 35, 14, 36, 15, 37, 16, 38,
         17, 39, 18, 19, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 20, 21,
     ]) + '},"topic_id":"cMr3GpVESX2L3byPGf93lQ","adding_replicas":{"33":[3],"5":[3],"17":[3]},'
     '"removing_replicas":{"33":[1],"5":[1],"17":[1]},"version":3}'),
    (zk.BrokerIdZNode(5, "h1", 9096, tuple(e[0] for e in EPS), 9999, 1700000000000, "rack-a",
                      {e[1]: e[2] for e in EPS},
                      {f: {"min_version": 1, "max_version": 14}
                       for f in ["metadata.version", "kraft.version", "group.version"]}),
     '{"features":{"group.version":{"min_version":1,"max_version":14},"kraft.version":{"min_version":1,'
     '"max_version":14},"metadata.version":{"min_version":1,"max_version":14}},"listener_security_protocol_map":'
     '{"REPLICATION":"PLAINTEXT","CLIENT":"SSL","INTERNAL":"SASL_PLAINTEXT","EXTERNAL":"SASL_SSL",'
     '"PLAINTEXT":"PLAINTEXT"},"endpoints":["CLIENT://h1:9092","REPLICATION://h1:9093","INTERNAL://h1:9094",'
     '"EXTERNAL://h1:9095","PLAINTEXT://h1:9096"],"rack":"rack-a","jmx_port":9999,"port":9096,"host":"h1",'
     '"version":5,"timestamp":"1700000000000"}'),
    (zk.BrokerIdZNode(4, None, -1, ("SSL://h2:9093",), -1, 1600000000000, None, {"SSL": "SSL"}),
     '{"listener_security_protocol_map":{"SSL":"SSL"},"endpoints":["SSL://h2:9093"],"jmx_port":-1,"port":-1,'
     '"host":null,"version":4,"timestamp":"1600000000000"}'),
    (zk.FeatureZNode(1, 1, {"metadata.version": {"max_version_level": 14, "min_version_level": 14},
                            "zk.version": {"max_version_level": 1, "min_version_level": 1}}),
     '{"features":{"metadata.version":{"max_version_level":14,"min_version_level":14},"zk.version":'
     '{"max_version_level":1,"min_version_level":1}},"version":1,"status":1}'),
    (zk.FeatureZNode(2, 1, {"metadata.version": {"max_version_level": 14}}),
     '{"features":{"metadata.version":{"max_version_level":14}},"version":2,"status":1}'),
    (zk.MigrationZNode(0, 3000, 5, 123456789012, 4),
     '{"version":0,"kraft_metadata_offset":123456789012,"kraft_controller_id":3000,"kraft_metadata_epoch":4,'
     '"kraft_controller_epoch":5}'),
    (zk.ReassignPartitionsZNode(1, ((zk.TopicPartition("orders", 0), (1, 2)),
                                    (zk.TopicPartition("orders", 1), (2, 3)))),
     '{"version":1,"partitions":[{"topic":"orders","partition":0,"replicas":[1,2]},'
     '{"topic":"orders","partition":1,"replicas":[2,3]}]}'),
    (zk.IsrChangeNotificationZNode(1, (zk.TopicPartition("orders", 0),)),
     '{"version":1,"partitions":[{"topic":"orders","partition":0}]}'),
    (zk.ClusterIdZNode("1", "eQzK4lYlQ9y8P21IScOl_g"), '{"version":"1","id":"eQzK4lYlQ9y8P21IScOl_g"}'),
    (zk.ProducerIdBlockZNode(1, 2, 1000, 1999),
     '{"version":1,"broker":2,"block_start":"1000","block_end":"1999"}'),
    (zk.ConfigChangeZNode(2, 'topics/\x01"\\/é\t😀'),
     '{"version":2,"entity_path":"topics/\\u0001\\"\\\\/é\\t\\uD83D\\uDE00"}'),
]  # fmt: skip


@pytest.mark.parametrize(("value", "jvm"), GOLDEN_2_13, ids=[type(v).__name__ for v, _ in GOLDEN_2_13])
def test_scala_2_13_builds_write_what_the_jvm_wrote(value: Any, jvm: str) -> None:
    assert zk.encode(value, "3.6.2") == jvm.encode("utf-8")
    assert zk.encode(value, "3.6.2", scala="2.13") == jvm.encode("utf-8")
    path = {
        zk.ControllerZNode: "/controller", zk.PartitionStateZNode: "/brokers/topics/t/partitions/0/state",
        zk.TopicZNode: "/brokers/topics/t", zk.BrokerIdZNode: "/brokers/ids/1", zk.FeatureZNode: "/feature",
        zk.MigrationZNode: "/migration", zk.ReassignPartitionsZNode: "/admin/reassign_partitions",
        zk.IsrChangeNotificationZNode: "/isr_change_notification/isr_change_0000000000",
        zk.ClusterIdZNode: "/cluster/id", zk.ProducerIdBlockZNode: "/latest_producer_id_block",
        zk.ConfigChangeZNode: "/config/changes/config_change_0000000007",
    }[type(value)]  # fmt: skip
    decoded = zkd.decode(path, jvm.encode("utf-8"))
    if isinstance(value, zk.TopicZNode):  # JSON keeps the output order, not the insertion order
        decoded = replace(decoded, partitions={p: decoded.partitions[p] for p in value.partitions})
    assert decoded == value


def test_config_properties_on_jdk_9_and_later() -> None:
    keys = ["retention.ms", "cleanup.policy", "segment.bytes", "min.insync.replicas", "max.message.bytes",
            "compression.type"]  # fmt: skip
    z = zk.ConfigEntityZNode(1, {k: "1" for k in keys})
    assert zk.encode(z, "3.6.2", jdk=17) == (
        b'{"version":1,"config":{"compression.type":"1","cleanup.policy":"1","max.message.bytes":"1",'
        b'"min.insync.replicas":"1","retention.ms":"1","segment.bytes":"1"}}'
    )  # printed by a JDK 17 Properties through Jackson
    with pytest.raises(ValueError, match="depends on the broker's JDK"):
        zk.encode(z, "3.6.2")
    assert zk.encode(zk.ConfigEntityZNode(1, {"retention.ms": "1"}), "2.5.1") == (
        b'{"version":1,"config":{"retention.ms":"1"}}'
    )


# ---- what changes between Kafka versions --------------------------------------------------------------


def test_topic_znode_per_version() -> None:
    z2 = zk.TopicZNode(2, {0: (1,), 1: (1,), 2: (1,)})
    # 2.5.1: an immutable Map of 4 (insertion order); its default build is Scala 2.12
    assert zk.encode(z2, "2.5.1") == (
        b'{"version":2,"partitions":{"2":[1],"1":[1],"0":[1]},"adding_replicas":{},"removing_replicas":{}}'
    )
    assert zk.encode(z2, "2.5.1", scala="2.13") == (
        b'{"version":2,"partitions":{"0":[1],"1":[1],"2":[1]},"adding_replicas":{},"removing_replicas":{}}'
    )
    with pytest.raises(ValueError, match="writes topic znode version 3, not 2"):
        zk.encode(z2, "2.8.2")
    with pytest.raises(ValueError, match="has no topic ids"):
        zk.encode(replace(z2, topic_id="fp0I2sNQST-mA8JQMWpPQg"), "2.7.2")
    z3 = replace(z2, version=3)  # 2.8+ with IBP < 2.8: version 3, no topic_id
    assert json.loads(zk.encode(z3, "2.8.2")) == {
        "partitions": {"0": [1], "1": [1], "2": [1]}, "adding_replicas": {}, "removing_replicas": {},
        "version": 3,
    }  # fmt: skip
    assert b"topic_id" not in zk.encode(z3, "2.8.2")
    with pytest.raises(ValueError, match="not in partitions"):
        zk.encode(replace(z3, adding_replicas={7: (2,)}), "2.8.2")
    # 1.1-2.3: version 1, the partitions an immutable Map (Map1-Map4 keep order, more hash their String
    # keys in Scala 2.12's trie, which 2.11 shares); Scala 2.11 builds (1.1-2.1) write as 2.12 ones
    z1 = zk.TopicZNode(1, {2: (1,), 0: (1,), 1: (1,)})
    assert (
        zk.encode(z1, "2.3.1")
        == zk.encode(z1, "1.1.1")
        == b'{"version":1,"partitions":{"2":[1],"0":[1],"1":[1]}}'
    )
    six = zk.TopicZNode(1, {p: (1, 2) for p in range(6)})
    assert zk.encode(six, "1.1.1") == (
        b'{"version":1,"partitions":{"4":[1,2],"5":[1,2],"1":[1,2],"0":[1,2],"2":[1,2],"3":[1,2]}}'
    )
    with pytest.raises(ValueError, match="writes topic znode version 1, not 2"):
        zk.encode(z2, "2.3.1")
    with pytest.raises(ValueError, match="no adding_replicas or removing_replicas"):
        zk.encode(replace(z1, adding_replicas={0: (2,)}), "2.3.1")
    # a topic written by Kafka 2.3 or older (version 1) still decodes
    old = zkd.decode_topic(b'{"version":1,"partitions":{"1":[2,3],"0":[3,2]}}')
    assert old == zk.TopicZNode(1, {1: (2, 3), 0: (3, 2)})


def test_broker_controller_state_feature_per_version() -> None:
    b = zk.BrokerIdZNode(5, "h", 9092, ("PLAINTEXT://h:9092",), -1, 1, "r1", {"PLAINTEXT": "PLAINTEXT"}, {})
    with pytest.raises(ValueError, match=r"version \(2, 4\), not 5"):
        zk.encode(b, "2.5.1")
    assert list(json.loads(zk.encode(b, "2.8.2"))) == [
        "features", "listener_security_protocol_map", "endpoints", "rack", "jmx_port", "port", "host",
        "version", "timestamp",
    ]  # fmt: skip
    v2 = json.loads(zk.encode(replace(b, version=2), "2.5.1"))
    assert set(v2) == {"version", "host", "port", "endpoints", "jmx_port", "timestamp"}  # v2 drops the rest

    c = zk.ControllerZNode(1, 3, 1650897815992)
    assert zk.encode(c, "2.8.2") == b'{"version":1,"brokerid":3,"timestamp":"1650897815992"}'
    with pytest.raises(ValueError, match="/controller version 2, not 1"):
        zk.encode(c, "3.6.2")
    assert zk.encode(replace(c, version=2), "3.6.2") == (
        b'{"version":2,"brokerid":3,"timestamp":"1650897815992","kraftControllerEpoch":-1}'
    )
    with pytest.raises(ValueError, match="no kraftControllerEpoch"):
        zk.encode(replace(c, kraft_controller_epoch=4), "3.3.2")

    recovering = zk.PartitionStateZNode(1, 1, 4, 9, (1,), leader_recovery_state=1)
    with pytest.raises(ValueError, match="no leader_recovery_state"):
        zk.encode(recovering, "3.1.0")
    assert b'"leader_recovery_state":1' in zk.encode(recovering, "3.2.0")
    assert b"leader_recovery_state" not in zk.encode(replace(recovering, leader_recovery_state=0), "3.6.2")

    f = zk.FeatureZNode(1, 1, {"feature_a": {"min_version_level": 1, "max_version_level": 2}})
    with pytest.raises(ValueError, match="no /feature znode"):
        zk.encode(f, "2.6.3")
    assert zk.encode(f, "2.8.2", scala="2.12") == (  # real 3.1.0 order; Features.toMap inner LinkedHashMap
        b'{"features":{"feature_a":{"min_version_level":1,"max_version_level":2}},"status":1,"version":1}'
    )
    assert zk.encode(f, "2.8.2") == (
        b'{"features":{"feature_a":{"min_version_level":1,"max_version_level":2}},"version":1,"status":1}'
    )
    with pytest.raises(ValueError, match="min_version_level = max_version_level"):
        zk.encode(f, "3.6.2")  # 3.3+ V1 writes one level as both
    with pytest.raises(ValueError, match="no /migration znode"):
        zk.encode(zk.MigrationZNode(0, 1, 1, 1, 1), "3.3.2")
    with pytest.raises(ValueError, match="ConfigChangeZNode version 2, not 1"):
        zk.encode(zk.ConfigChangeZNode(1, "topics/t"), "2.8.2")


def test_kafka_versions_and_scala_builds() -> None:
    assert jvm_order.default_scala("2.5.1") == "2.12"  # gradle.properties scalaVersion=2.12.10
    assert jvm_order.default_scala("2.6.0") == "2.13"
    assert jvm_order.default_scala("3.6.2") == "2.13"
    assert jvm_order.default_scala("1.1.1") == jvm_order.default_scala("2.1.1") == "2.11"  # 2.11.12
    assert jvm_order.default_scala("2.2.2") == "2.12"  # 2.12.8
    for bad in ("1.0.2", "0.11.0.3", "3.7.0", "4.0.0", "latest"):
        with pytest.raises(ValueError):
            zk.encode(zk.ClusterIdZNode("1", "x"), bad)
    with pytest.raises(ValueError, match=r"Scala 2\.11, 2\.12 or 2\.13"):
        zk.encode(zk.PartitionStateZNode(1, 1, 1, 1, (1,)), "2.8.2", scala="2.10")


# ---- decoders -------------------------------------------------------------------------------------------


def test_decoders_do_not_care_about_key_order() -> None:
    a = zkd.decode_partition_state(
        b'{"version":1,"leader":0,"leader_epoch":2,"controller_epoch":3,"isr":[0,1]}'
    )
    b = zkd.decode_partition_state(
        b'{"isr":[0,1],"controller_epoch":3,"leader_epoch":2,"leader":0,"version":1}'
    )
    assert a == b == zk.PartitionStateZNode(1, 0, 2, 3, (0, 1))
    broker = b'{"version":1,"host":"h","port":9092,"jmx_port":-1,"timestamp":"5"}'
    assert zkd.decode_broker(broker, 7) == zk.BrokerIdZNode(1, "h", 9092, (), -1, 5)


@pytest.mark.parametrize(
    ("path", "data", "message"),
    [
        ("/brokers/topics/orders", b'{"version":3}',
         "/brokers/topics/orders: expected key 'partitions', found ['version']"),
        ("/brokers/topics/orders", b'{"version":3,"partitions":{"x":[1]}}',
         "/brokers/topics/orders: expected partition numbers as keys, got 'x'"),
        ("/brokers/topics/orders", b'{"version":3,"partitions":{"0":[1]},"topic_id":"shor"}',
         "/brokers/topics/orders: expected topic_id to be a Kafka Uuid: Input string `shor` decoded as "
         "3 bytes, which is not equal to the expected 16 bytes of a base64-encoded UUID"),
        ("/brokers/topics/orders", b'{"version":3,"partitions":{"0":["1"]}}',
         "/brokers/topics/orders: expected '0' to be an int, got '1'"),
        ("/brokers/topics/t/partitions/3/state", None,
         "/brokers/topics/t/partitions/3/state: expected a JSON object, got null data"),
        ("/brokers/topics/t/partitions/3/state", b"[1]",
         "/brokers/topics/t/partitions/3/state: expected a JSON object, got [1]"),
        ("/brokers/topics/t/partitions/3/state",
         b'{"version":1,"leader":true,"leader_epoch":0,"controller_epoch":1,"isr":[]}',
         "/brokers/topics/t/partitions/3/state: expected 'leader' to be an int, got True"),
        ("/brokers/topics/t/partitions/3/state",
         b'{"version":1,"leader":2147483648,"leader_epoch":0,"controller_epoch":1,"isr":[]}',
         "/brokers/topics/t/partitions/3/state: expected 'leader' to be an int, got 2147483648"),
        ("/brokers/topics/t/partitions/3/state",
         b'{"version":1,"leader":1,"leader_epoch":0,"controller_epoch":1,"isr":[],"leader_recovery_state":2}',
         "/brokers/topics/t/partitions/3/state: Value 2 is not a valid leader recovery state"),
        ("/controller", b"not json", "/controller: expected a JSON object, got b'not json'"),
        ("/controller", b'{"version":1,"brokerid":NaN}', "/controller: expected a JSON object"),
        ("/controller", b'{"version":1,"brokerid":1,"timestamp":1}',
         "/controller: expected 'timestamp' to be a long written as a JSON string, got 1"),
        ("/controller_epoch", b"x", "/controller_epoch: expected a decimal int, got 'x'"),
        ("/controller_epoch", b" 5", "/controller_epoch: expected a decimal int, got ' 5'"),
        ("/brokers/ids/3", b'{"version":0,"jmx_port":-1}',
         "/brokers/ids/3: Unsupported version of broker registration: 0"),
        ("/brokers/ids/3", b'{"version":4,"jmx_port":-1,"host":"h","port":1}',
         "/brokers/ids/3: expected key 'endpoints', found ['host', 'jmx_port', 'port', 'version']"),
        ("/feature", b'{"version":1,"status":2,"features":{}}',
         "/feature: expected status 0 (disabled) or 1 (enabled), got 2"),
        ("/cluster/id", b'{"version":1,"id":"x"}', "/cluster/id: expected 'version' to be a string, got 1"),
        ("/config/topics/t", b'{"version":1,"config":{"retention.ms":86400000}}',
         "/config/topics/t: expected 'retention.ms' to be a string, got 86400000"),
        ("/admin/preferred_replica_election", b'{"version":1,"partitions":{"t":0}}',
         "/admin/preferred_replica_election: expected 'partitions' to be a list of {topic, partition} "
         "objects"),
        ("/latest_producer_id_block", b'{"version":1,"broker":1,"block_start":"0","block_end":"x"}',
         "/latest_producer_id_block: expected 'block_end' to be a long written as a JSON string, got 'x'"),
        ("/kafka-acl/Topic/t", b"{}", "/kafka-acl/Topic/t: not a Kafka znode"),
    ],
)  # fmt: skip
def test_bad_data_is_refused_naming_the_znode(path: str, data: bytes | None, message: str) -> None:
    with pytest.raises(zkd.ZkDataError) as e:
        zkd.decode(path, data)
    assert str(e.value).startswith(message)
    assert isinstance(e.value, ValueError)


def test_paths_and_kinds() -> None:
    assert znodes.partition_state_path("orders", 4) == "/brokers/topics/orders/partitions/4/state"
    assert znodes.sequential_name(znodes.ISR_CHANGE_PREFIX, 0) == "isr_change_0000000000"
    assert znodes.sequential_name(znodes.CONFIG_CHANGE_PREFIX, 12345) == "config_change_0000012345"
    assert znodes.kind_of(znodes.partition_state_path("orders", 4)) == ("partition_state", ("orders", "4"))
    assert znodes.kind_of("/brokers/topics/orders/partitions/4") == ("partitions", ("orders", "4"))
    assert znodes.kind_of("/brokers/topics/orders/partitions") == ("partitions", ("orders",))
    assert znodes.kind_of(znodes.delete_topic_path("orders")) == ("delete_topic", ("orders",))
    assert znodes.kind_of(znodes.config_path("topics", "orders")) == ("config", ("topics", "orders"))
    assert znodes.kind_of("/config/changes/config_change_0000000003") == ("config_change", ("0000000003",))
    assert znodes.kind_of("/log_dir_event_notification/log_dir_event_0000000001") == (
        "log_dir_event", ("0000000001",)
    )  # fmt: skip
    assert znodes.kind_of("/kafka/brokers/ids/2", chroot="/kafka") == ("broker", ("2",))
    assert znodes.kind_of("/brokers/ids/2", chroot="/kafka") is None
    assert znodes.kind_of("/brokers/ids/x") is None
    assert znodes.kind_of("/brokers/topics/a/b") is None
    # the patterns Spark's queries use are kind_of's own, anchored, for Python's re and Java's alike
    path = znodes.partition_state_path("a.b-c", 12)
    state = re.fullmatch(znodes.STATE_PATH, path)
    assert state is not None and state.groups() == ("a.b-c", "12")
    assert not re.match(znodes.TOPIC_PATH, path) and re.match(znodes.TOPIC_PATH, "/brokers/topics/a.b-c")
    assert re.match(znodes.BROKER_PATH, "/brokers/ids/7") and not re.match(
        znodes.BROKER_PATH, "/brokers/ids/x"
    )
    assert re.match(znodes.DELETE_MARKER_PATH, znodes.delete_topic_path("t"))
    assert re.match(znodes.TOPIC_CONFIG_PATH, znodes.config_path("topics", "t"))
    # the timeline's: a topic and its partition from any path under the topic; a milestone's znode
    under = re.match(znodes.UNDER_TOPIC_PATH, path)
    assert under is not None and under.groups() == ("a.b-c", "12")
    assert re.match(znodes.UNDER_TOPIC_PATH, "/brokers/topics/t").groups() == ("t", None)  # type: ignore[union-attr]
    for said in ("/controller {}", "/brokers/ids/3", "/brokers/topics/t {}", "/admin/delete_topics/t"):
        assert re.match(znodes.MILESTONE_PATH, said), said
    for said in ("/controller_epoch 3", "/brokers/topics/t/partitions/0/state {}", "/admin/delete_topics"):
        assert not re.match(znodes.MILESTONE_PATH, said), said
    assert zkd.decode("/admin/delete_topics/orders", None) is None  # presence is the message
    assert zkd.decode("/kafka/controller_epoch", b"7", chroot="/kafka") == 7
    log_dir = zkd.decode(
        "/log_dir_event_notification/log_dir_event_0000000001", b'{"version":1,"broker":2,"event":1}'
    )
    assert log_dir == zk.LogDirEventNotificationZNode(1, 2, 1)
    assert zk.encode(log_dir, "2.8.2") == b'{"version":1,"broker":2,"event":1}'


# ---- the JVM's hashes and iteration orders ------------------------------------------------------------


def test_java_hashes() -> None:
    assert jvm_order.java_string_hash("") == 0
    assert jvm_order.java_string_hash("version") == 351608024  # "version".hashCode() on a JDK
    assert jvm_order.java_string_hash("__consumer_offsets") == -970371369
    assert jvm_order.java_string_hash("😀") == 31 * 0xD83D + 0xDE00  # two UTF-16 units
    assert jvm_order.topic_partition_hash("__consumer_offsets", 0) == 31 * 31 - 970371369


def test_topic_partition_sets_print_as_a_real_2_8_broker_did(real_evidence: Path) -> None:
    """A real 2.8.0 (Scala 2.13) broker's `Removed fetcher for partitions HashSet(...)`: 4 partitions
    printed as a HashSet are a mutable set; 25 are an immutable HashSet. TopicPartition.hashCode orders
    both. Only the partitions are taken from the lines."""
    text = "".join(f.read_text() for f in sorted((real_evidence / "logs").glob("*.log")))
    printed = re.findall(r"Removed fetcher for partitions HashSet\((.*?)\) \(kafka", text)
    assert sorted(len(p.split(", ")) for p in printed) == [4, 25]
    for shown in printed:
        tps = sorted(shown.split(", "))
        hashes = [jvm_order.topic_partition_hash(t, int(p)) for t, _, p in (tp.rpartition("-") for tp in tps)]
        order = jvm_order.scala_set_order(tps, "2.13", mutable=len(tps) <= 4, hashes=hashes)
        assert order == shown.split(", ")


def test_scala_2_12_and_2_13_hash_maps_differ() -> None:
    keys = ["version", "partitions", "adding_replicas", "removing_replicas", "topic_id"]
    assert jvm_order.scala_mutable_map_order(keys, "2.12", applied=4) == [
        "removing_replicas", "partitions", "topic_id", "adding_replicas", "version"
    ]  # fmt: skip
    assert jvm_order.scala_mutable_map_order(keys, "2.13", applied=4) == [
        "partitions", "topic_id", "adding_replicas", "removing_replicas", "version"
    ]  # fmt: skip
    state = ["version", "leader", "leader_epoch", "controller_epoch", "isr"]
    assert jvm_order.scala_map_order(state[:4], "2.13") == state[:4]  # Map4 keeps insertion order
    assert jvm_order.scala_map_order(state, "2.12") == [
        "controller_epoch",
        "leader",
        "version",
        "leader_epoch",
        "isr",
    ]
    # 2.12 lists a node's leaves and sub-tries together by fragment; 2.13 puts a node's leaves first
    parts = [str(p) for p in range(40)]
    assert jvm_order.scala_hashmap_order(parts, "2.12") != jvm_order.scala_hashmap_order(parts, "2.13")
    assert sorted(jvm_order.scala_hashmap_order(parts, "2.12")) == sorted(parts)


JVM_ORDER_JAVA = """
import java.io.*;
import java.util.*;
import scala.Tuple2;
import scala.collection.immutable.ArraySeq;

@SuppressWarnings({"unchecked", "rawtypes"})
public class JvmOrder {
  static final class TopicPartition {  // kafka-clients' TopicPartition: its hashCode and equals
    final String topic; final int partition;
    TopicPartition(String topic, int partition) { this.topic = topic; this.partition = partition; }
    public int hashCode() { return 31 * (31 + partition) + topic.hashCode(); }
    public boolean equals(Object o) {
      return o instanceof TopicPartition && ((TopicPartition) o).partition == partition
          && ((TopicPartition) o).topic.equals(topic);
    }
  }
  static scala.collection.Iterator keysOf(Object map) {
    return ((scala.collection.Map) map).keysIterator();
  }
  static ArraySeq pairs(List<String> keys) {
    Tuple2[] arr = new Tuple2[keys.size()];
    for (int i = 0; i < arr.length; i++) arr[i] = new Tuple2(keys.get(i), 0);
    return ArraySeq.unsafeWrapArray(arr);
  }
  static void drain(scala.collection.Iterator it, List<String> out) {
    while (it.hasNext()) out.add((String) it.next());
  }
  public static void main(String[] args) throws IOException {
    System.out.println(System.getProperty("java.specification.version"));
    BufferedReader r = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
    for (String line; (line = r.readLine()) != null; ) {
      String[] w = line.split(" ", -1);
      int applied = Integer.parseInt(w[1]);
      List<String> keys = Arrays.asList(w).subList(2, w.length);
      List<String> out = new ArrayList<>();
      switch (w[0]) {
        case "scala_map":  // Map(k1 -> v1, ...): Map.apply is Map.from of the varargs
          drain(scala.collection.immutable.Map$.MODULE$.from(pairs(keys)).keysIterator(), out); break;
        case "scala_mutable": {  // mutable.Map(<applied pairs>), then += each other key
          scala.collection.mutable.Map m =
              (scala.collection.mutable.Map) scala.collection.mutable.Map$.MODULE$.from(
                  pairs(keys.subList(0, applied)));
          for (String k : keys.subList(applied, keys.size())) m.addOne(new Tuple2(k, 0));
          drain(m.keysIterator(), out); break;
        }
        case "controller": {  // partitionFullReplicaAssignmentForTopic, then mutable.Map() ++= (2.6+)
          String topic = keys.get(0);
          scala.collection.mutable.Map ints = scala.collection.mutable.HashMap$.MODULE$.empty();
          for (String k : keys.subList(1, keys.size())) ints.addOne(new Tuple2(Integer.valueOf(k), 0));
          scala.collection.mutable.Builder mapped = scala.collection.mutable.HashMap$.MODULE$.newBuilder();
          scala.collection.Iterator it = ints.keysIterator();  // .map: a builder fed in iteration order
          while (it.hasNext()) mapped.addOne(new Tuple2(new TopicPartition(topic, (Integer) it.next()), 0));
          Object full = scala.collection.immutable.Map$.MODULE$.from(
              (scala.collection.IterableOnce) mapped.result());
          scala.collection.mutable.Map copy = scala.collection.mutable.HashMap$.MODULE$.empty();
          copy.addAll((scala.collection.IterableOnce) full);
          scala.collection.Iterator keys2 = keysOf(applied == 1 ? copy : full);
          while (keys2.hasNext()) out.add(String.valueOf(((TopicPartition) keys2.next()).partition));
          break;
        }
        case "scala_set":
          drain(scala.collection.immutable.Set$.MODULE$.from(ArraySeq.unsafeWrapArray(keys.toArray())).iterator(),
                out); break;
        case "scala_mutable_set": {
          scala.collection.mutable.Set m = scala.collection.mutable.Set$.MODULE$.empty();
          for (String k : keys) m.addOne(k);
          drain(m.iterator(), out); break;
        }
        case "java_hashset8": { Set<String> h = new HashSet<>(8); h.addAll(keys); out.addAll(h); break; }
        case "java_hashmap": { Map<String, Object> m = new HashMap<>(); for (String k : keys) m.put(k, 0);
          out.addAll(m.keySet()); break; }
        case "properties": { Properties p = new Properties(); for (String k : keys) p.put(k, "v");
          for (Map.Entry e : p.entrySet()) out.add((String) e.getKey()); break; }
        case "hashtable": { Hashtable<Object, Object> h = new Hashtable<>();
          for (String k : keys) h.put(k, "v");
          for (Map.Entry e : h.entrySet()) out.add((String) e.getKey()); break; }
        case "hashtable_foreach": { Hashtable<Object, Object> h = new Hashtable<>();
          for (String k : keys) h.put(k, "v");
          h.forEach((k, v) -> out.add((String) k)); break; }
      }
      System.out.println(String.join(" ", out));
    }
  }
}
"""


def _scala_library() -> Path | None:
    import pyspark

    jars = sorted((Path(pyspark.__file__).parent / "jars").glob("scala-library-2.13.*.jar"))
    return jars[-1] if jars else None


def test_orders_agree_with_scala_2_13_and_the_jdk(tmp_path: Path) -> None:
    """Random key sets through scala-library 2.13 (the jar PySpark ships) and the JDK's own maps.
    JDK 8's Properties is a plain Hashtable, whose algorithm any JDK's Hashtable still runs."""
    java, javac, jar = shutil.which("java"), shutil.which("javac"), _scala_library()
    if not (java and javac and jar):
        pytest.skip("needs java, javac and PySpark's scala-library 2.13 jar")
    (tmp_path / "JvmOrder.java").write_text(JVM_ORDER_JAVA)
    subprocess.run([javac, "-nowarn", "-cp", str(jar), "-d", str(tmp_path), str(tmp_path / "JvmOrder.java")],
                   check=True, capture_output=True)  # fmt: skip
    rng = random.Random(11)
    names = [
        "version",
        "partitions",
        "adding_replicas",
        "removing_replicas",
        "topic_id",
        "host",
        "port",
        "endpoints",
        "jmx_port",
        "timestamp",
        "rack",
        "listener_security_protocol_map",
        "features",
        "cleanup.policy",
        "segment.bytes",
        "compression.type",
        "retention.ms",
        "Aa",
        "BB",
        "AaAa",
        "BBBB",
    ]
    kinds = ["scala_map", "scala_mutable", "java_hashmap", "properties", "hashtable", "hashtable_foreach",
             "scala_set", "scala_mutable_set", "java_hashset8"]  # fmt: skip
    cases = []
    for i in range(600):
        pick = rng.random()
        if pick < 0.3:
            keys = [str(p) for p in range(rng.randint(1, 200))]
            rng.shuffle(keys)
        elif pick < 0.6:
            keys = rng.sample(names, rng.randint(1, len(names)))
        else:
            chars = string.ascii_letters + string.digits + "._-"
            keys = list(
                dict.fromkeys(
                    "".join(rng.choices(chars, k=rng.randint(1, 12))) for _ in range(rng.randint(1, 99))
                )
            )
        kind = kinds[i % len(kinds)]
        cases.append((kind, rng.randint(0, len(keys)) if kind == "scala_mutable" else 0, keys))
    for i in range(60):  # a reassigned topic's assignment as the controller iterates it (1: from 2.6)
        topic = "".join(rng.choices(string.ascii_letters + "._-", k=rng.randint(1, 20)))
        count = rng.choice([1, 2, 3, 4, 12, 24, rng.randint(5, 200)])  # <= 4: Map1-4; 12, 24: ++= sizes
        cases.append(("controller", i % 2, [topic, *map(str, range(count))]))
    run = subprocess.run(
        [java, "-cp", f"{tmp_path}:{jar}", "JvmOrder"], capture_output=True, text=True, check=True,
        input="".join(f"{k} {n} {' '.join(keys)}\n" for k, n, keys in cases),
    )  # fmt: skip
    spec, *answers = run.stdout.splitlines()
    jdk = int(spec.split(".")[-1]) if spec.startswith("1.") else int(spec)
    assert len(answers) == len(cases)
    for (kind, applied, keys), answer in zip(cases, answers, strict=True):
        assert " ".join(_our_order(kind, applied, keys, jdk)) == answer, (kind, applied, keys)


def _our_order(kind: str, applied: int, keys: list[str], jdk: int) -> list[str]:
    if kind == "controller":
        version = "2.8.2" if applied else "2.5.1"
        order = jvm_order.controller_assignment_order(keys[0], [int(k) for k in keys[1:]], version, "2.13")
        return [str(p) for p in order]
    if kind == "scala_map":
        return jvm_order.scala_map_order(keys, "2.13")
    if kind == "scala_mutable":
        return jvm_order.scala_mutable_map_order(keys, "2.13", applied=applied)
    if kind == "java_hashmap":
        return jvm_order.java_hashmap_order(keys)
    if kind == "java_hashset8":
        return jvm_order.java_hashmap_order(keys, capacity=8)
    if kind in ("scala_set", "scala_mutable_set"):
        return jvm_order.scala_set_order(keys, "2.13", mutable=kind == "scala_mutable_set") or []
    if kind == "properties":
        return jvm_order.java_properties_order(keys, jdk)
    return jvm_order.java_properties_order(keys, 8, for_each=kind == "hashtable_foreach")
