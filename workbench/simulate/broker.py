"""A broker's life: start and register, stop, crash (what it does with the controller's requests is
`replica_manager.py`).

Sequences and texts follow KafkaServer.startup/shutdown, KafkaZkClient.registerBroker and
LogManager.loadLogs (2.5.1, 2.8.2, 3.6.2; LOG_TEMPLATES.md).
"""

from __future__ import annotations

from typing import Any

from workbench.kafka.zkdata import BrokerIdZNode, ClusterIdZNode, encode, encode_broker
from workbench.simulate import wording
from workbench.simulate.cluster import (
    ZK_CONNECT,
    ZK_SERVER,
    Broker,
    Cluster,
)
from workbench.simulate.log_manager import load_logs
from workbench.simulate.zookeeper import NODE_EXISTS, KeeperError, create, set_data

# KafkaZkClient.createTopLevelPaths: ZkData.PersistentZkPaths (2.8.2), each created if missing.
TOP_LEVEL = (
    "/consumers",
    "/admin/delete_topics",
    "/brokers/ids",
    "/brokers/topics",
    "/config/changes",
    "/config/topics",
    "/config/clients",
    "/config/users",
    "/config/brokers",
    "/isr_change_notification",
    "/latest_producer_id_block",
    "/log_dir_event_notification",
)


def start(c: Cluster, b: Broker) -> None:
    """KafkaServer.startup up to `started`: ZooKeeper session, cluster id, logs loaded, registration."""
    c.say(b.id, "broker.starting", ident="")
    c.say(b.id, "broker.zk_connecting", ident="", zk_connect=ZK_CONNECT)
    c.say(b.id, "zk.client_reinitializing", zk_connect=ZK_CONNECT)
    c.tick(c.jitter(5, 40))
    b.session = c.zk.create_session(c.now, c.session_timeout_ms)
    c.say(
        b.id,
        "zk.session_established",
        server=ZK_SERVER,
        session=f"0x{b.session:x}",
        timeout_ms=c.session_timeout_ms,
    )
    c.say(b.id, "zk.client_connected")
    for path in TOP_LEVEL:  # createRecursive(path, throwIfPathExists = false): NODEEXISTS is logged too
        try:
            c.zk.create_recursive(c.now, b.session, path)
        except KeeperError as e:
            if e.code != NODE_EXISTS:
                raise
    if not c.zk.exists("/cluster/id"):  # KafkaZkClient.getOrGenerateClusterId
        cluster_id = encode(ClusterIdZNode("1", c.cluster_id), c.version)
        c.zk.create_recursive(c.now, b.session, "/cluster/id", cluster_id)
    b.log_dir.cluster_id = c.cluster_id
    c.tick(c.jitter(20, 80))
    c.say(b.id, "broker.cluster_id", cluster_id=c.cluster_id)
    load_logs(c, b)
    register(c, b)
    b.alive = True
    c.tick(c.jitter(50, 300))
    c.say(b.id, "broker.started")


def register(c: Cluster, b: Broker) -> None:
    """KafkaZkClient.registerBroker: from 2.2 the checked ephemeral is one multi (create with null data,
    then setData version 0), so the znode's version is 1 and its czxid is the broker epoch."""
    assert b.session is not None
    path = f"/brokers/ids/{b.id}"
    data = broker_json(c, b)
    c.say(b.id, "zk.ephemeral_creating", path=path, secure="false")
    if not c.version_at_least(
        2, 2
    ):  # no broker epoch yet: one create, its result code logged (@1.1.1 l.1479)
        c.zk.create(c.now, b.session, path, data, ephemeral=True)
        b.epoch = c.zk.get(path)[1].czxid
        c.say(b.id, "zk.ephemeral_created", path=path, result="OK")
        # the endpoints a Scala 2.11/2.12 Seq prints (a real 2.x broker without broker epochs wrote this)
        endpoints = f"ArrayBuffer(EndPoint(kafka-{b.id},9092,ListenerName(PLAINTEXT),PLAINTEXT))"
        c.say(b.id, "broker.registered", broker=b.id, path=path, endpoints=endpoints)
        return
    c.zk.multi(c.now, b.session, [create(path, None, ephemeral=True), set_data(path, data, 0)])
    _, stat = c.zk.get(path)
    b.epoch = stat.czxid
    c.say(b.id, "zk.ephemeral_created", path=path, suffix="\n", **_stat_fields(c, path))
    endpoints = b.endpoint
    if wording.tag(c.version) == "2.5.1":
        endpoints = f"ArraySeq(EndPoint(kafka-{b.id},9092,ListenerName(PLAINTEXT),PLAINTEXT))"
    c.say(b.id, "broker.registered", broker=b.id, path=path, endpoints=endpoints, broker_epoch=b.epoch)


def _stat_fields(c: Cluster, path: str) -> dict[str, Any]:
    names = ("czxid", "mzxid", "ctime", "mtime", "version", "cversion", "aversion", "ephemeral_owner")
    values = c.stat_line(path).split(",")
    fields = dict(zip((*names, "data_length", "num_children", "pzxid"), values, strict=True))
    return fields


def broker_json(c: Cluster, b: Broker) -> bytes:
    """BrokerIdZNode.encode (kafka/zkdata.py): version 5 with features (IBP >= 2.7), 4 before (2.5.1)."""
    v5 = wording.tag(c.version) != "2.5.1"
    z = BrokerIdZNode(
        5 if v5 else 4,
        f"kafka-{b.id}",
        9092,
        (b.endpoint,),
        -1,
        c.now,
        b.rack or None,
        {"PLAINTEXT": "PLAINTEXT"},
        {} if v5 else None,
    )
    return encode_broker(z, c.version)


def stop(c: Cluster, b: Broker, clean: bool) -> None:
    """The end of KafkaServer.shutdown: the session is closed, so the ephemeral registration goes."""
    c.tick(c.jitter(50, 400))
    if b.session is not None:
        if clean:
            c.zk.close_session(c.now, b.session)
        b.session = None
    b.alive = False
    b.leading.clear()
    c.not_acting_ended(broker=b.id)  # its registration is gone: the partitions are offline instead
    b.log_dir.clean_shutdown = clean
    b.log_dir.checkpointed_ms = c.now
    if clean:
        c.say(b.id, "broker.shut_down")


def crash(c: Cluster, b: Broker) -> int | None:
    """The process dies (kill -9, OOM, a lost host): no more lines, no clean-shutdown marker, and its
    ZooKeeper session lives on until the server expires it. Returns that session."""
    session, b.session, b.alive = b.session, None, False
    b.leading.clear()
    b.log_dir.clean_shutdown = False
    return session
