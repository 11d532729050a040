"""Kafka's znode paths in ZooKeeper (apache/kafka `core/src/main/scala/kafka/zk/ZkData.scala`), and which
znode a path is, so that a tree walked from ZooKeeper can be read znode by znode."""

from __future__ import annotations

import re

CONTROLLER = "/controller"
CONTROLLER_EPOCH = "/controller_epoch"
BROKER_IDS = "/brokers/ids"
BROKER_SEQID = "/brokers/seqid"
TOPICS = "/brokers/topics"
DELETE_TOPICS = "/admin/delete_topics"
REASSIGN_PARTITIONS = "/admin/reassign_partitions"
PREFERRED_REPLICA_ELECTION = "/admin/preferred_replica_election"
CONFIG = "/config"
CONFIG_CHANGES = "/config/changes"
ISR_CHANGE_NOTIFICATION = "/isr_change_notification"
LOG_DIR_EVENT_NOTIFICATION = "/log_dir_event_notification"
CLUSTER_ID = "/cluster/id"
FEATURE = "/feature"
LATEST_PRODUCER_ID_BLOCK = "/latest_producer_id_block"
MIGRATION = "/migration"  # 3.4.0+
# The znodes Kafka makes at its root (ZkData.scala 2.8.2: l.55-851; /migration from 3.4): a path that
# reaches one of them below other names was shown without Kafka's chroot (`/kafka/brokers/ids`).
ROOTS = (
    "admin",
    "brokers",
    "cluster",
    "config",
    "consumers",
    "controller",
    "controller_epoch",
    "delegation_token",
    "feature",
    "isr_change_notification",
    "kafka-acl",
    "kafka-acl-changes",
    "kafka-acl-extended",
    "kafka-acl-extended-changes",
    "latest_producer_id_block",
    "log_dir_event_notification",
    "migration",
)
_ROOT = "(?:" + "|".join(re.escape(r) for r in ROOTS) + ")(?:/|$)"
# The chroot before Kafka's root: names none of which is one of Kafka's, then one that is
CHROOT = r"^((?:/(?!" + _ROOT + r")[^/]+)+?)/" + _ROOT
CONFIG_CHANGE_PREFIX, ISR_CHANGE_PREFIX, LOG_DIR_EVENT_PREFIX = (
    "config_change_",
    "isr_change_",
    "log_dir_event_",
)


def sequential_name(prefix: str, cversion: int) -> str:
    """ZooKeeper's PERSISTENT_SEQUENTIAL child name: the parent's cversion as %010d."""
    return f"{prefix}{cversion:010d}"


def broker_path(broker_id: int | str) -> str:
    return f"{BROKER_IDS}/{broker_id}"


def topic_path(topic: str) -> str:
    return f"{TOPICS}/{topic}"


def partition_state_path(topic: str, partition: int | str) -> str:
    return f"{TOPICS}/{topic}/partitions/{partition}/state"


def delete_topic_path(topic: str) -> str:
    return f"{DELETE_TOPICS}/{topic}"


def config_path(entity_type: str, entity: str) -> str:
    """`/config/<topics|clients|users|brokers|ips>/<sanitized name>`."""
    return f"{CONFIG}/{entity_type}/{entity}"


_NAME = r"([^/]+)"
_SOURCES: dict[str, str] = dict(
    [
        ("controller", CONTROLLER),
        ("controller_epoch", CONTROLLER_EPOCH),
        ("broker", BROKER_IDS + r"/(\d+)"),
        ("broker_seqid", BROKER_SEQID),
        ("topic", TOPICS + "/" + _NAME),
        ("partitions", TOPICS + "/" + _NAME + "/partitions(?:/(\\d+))?"),
        ("partition_state", TOPICS + "/" + _NAME + r"/partitions/(\d+)/state"),
        ("delete_topic", DELETE_TOPICS + "/" + _NAME),
        ("reassign_partitions", REASSIGN_PARTITIONS),
        ("preferred_replica_election", PREFERRED_REPLICA_ELECTION),
        ("config_change", CONFIG_CHANGES + "/" + CONFIG_CHANGE_PREFIX + r"(-?\d+)"),
        ("config", CONFIG + r"/(topics|clients|users|brokers|ips)/" + _NAME),
        ("isr_change", ISR_CHANGE_NOTIFICATION + "/" + ISR_CHANGE_PREFIX + r"(-?\d+)"),
        ("log_dir_event", LOG_DIR_EVENT_NOTIFICATION + "/" + LOG_DIR_EVENT_PREFIX + r"(-?\d+)"),
        ("cluster_id", CLUSTER_ID),
        ("feature", FEATURE),
        ("producer_id_block", LATEST_PRODUCER_ID_BLOCK),
        ("migration", MIGRATION),
    ]
)
_KINDS = [(kind, re.compile(pattern + "$")) for kind, pattern in _SOURCES.items()]


def path_pattern(kind: str) -> str:
    """The anchored regex of one kind of znode, its names and numbers as groups; plain enough for Python's
    `re` and Java's (Spark's `rlike`, `regexp_extract`)."""
    return "^" + _SOURCES[kind] + "$"


TOPIC_PATH = path_pattern("topic")
STATE_PATH = path_pattern("partition_state")
BROKER_PATH = path_pattern("broker")
DELETE_MARKER_PATH = path_pattern("delete_topic")
TOPIC_CONFIG_PATH = "^" + CONFIG + "/topics/" + _NAME + "$"
# A path at or under a topic's znode (a prefix): the topic, and the partition where the path is one's.
UNDER_TOPIC_PATH = "^" + TOPICS + "/" + _NAME + r"(?:/partitions/(\d+))?"
# The znodes whose every write is a milestone of a postmortem's timeline (followed by a space and the data).
MILESTONE_PATH = (
    f"^({CONTROLLER}|{BROKER_IDS}/\\d+|{TOPICS}/[^/]+"
    f"|({DELETE_TOPICS}/[^/]+|{REASSIGN_PARTITIONS}|{PREFERRED_REPLICA_ELECTION}))( |$)"
)


def kind_of(path: str, chroot: str = "") -> tuple[str, tuple[str, ...]] | None:
    """Which Kafka znode a path is (`"topic", ("orders",)`), below an optional chroot; None if not one."""
    if chroot:
        if not path.startswith(chroot.rstrip("/") + "/"):
            return None
        path = path[len(chroot.rstrip("/")) :]
    for kind, pattern in _KINDS:
        m = pattern.match(path)
        if m:
            return kind, tuple(g for g in m.groups() if g is not None)
    return None
