"""The simulator's ZooKeeper writes files a real ZooKeeper server restores to the very same tree."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient

from workbench.simulate import zookeeper as zk
from workbench.simulate.zookeeper import KeeperError, SimZooKeeper, znode_lines
from workbench.testing.zookeeper import ZooKeeperServer, txn_log_toolkit
from workbench.zookeeper.files import read_txn_log

T0 = 1_710_230_400_000  # 2024-03-12T08:00:00Z


def kafka_like(sim: SimZooKeeper) -> None:
    """The writes of a controller and two brokers: ephemerals, fenced multis, a failed multi, recursive
    creates with null parents, deletes, and a session that expires with its ephemerals."""
    now = T0
    b1, b2 = sim.create_session(now), sim.create_session(now + 5)
    for path in ("/brokers/ids", "/brokers/topics", "/admin/delete_topics", "/config/topics"):
        sim.create_recursive(now, b1, path)
    for broker, session in ((1, b1), (2, b2)):
        sim.multi(now, session, [zk.create(f"/brokers/ids/{broker}", None, True)])
        sim.set_data(now + 1, session, f"/brokers/ids/{broker}", b'{"version":5}', 0)
    sim.create(now + 10, b1, "/controller_epoch", b"0")
    sim.multi(
        now + 11,
        b1,
        [zk.create("/controller", b'{"brokerid":1}', True), zk.set_data("/controller_epoch", b"1", 0)],
    )
    for p in range(3):
        sim.create_recursive(now + 20, b1, f"/brokers/topics/orders/partitions/{p}/state", b'{"leader":1}')
    sim.multi(now + 30, b1, [zk.check("/controller_epoch", 1), zk.set_data("/brokers/topics/orders", b"{}")])
    with pytest.raises(KeeperError) as stale:
        sim.multi(now + 31, b2, [zk.check("/controller_epoch", 0), zk.delete("/brokers/topics/orders")])
    assert stale.value.code == zk.BAD_VERSION
    with pytest.raises(KeeperError):
        sim.create(now + 32, b2, "/controller", b"{}", ephemeral=True)
    sim.create_recursive(now + 40, b1, "/admin/delete_topics/orders")
    sim.delete_recursive(now + 50, b1, "/brokers/topics/orders")
    sim.delete(now + 51, b1, "/admin/delete_topics/orders")
    assert sim.close_session(now + 60, b1) == ["/brokers/ids/1", "/controller"]


def test_a_real_server_restores_the_simulated_tree(zk_tools: None, tmp_path: Path) -> None:
    sim = SimZooKeeper(T0, tmp_path / "version-2", snap_count=7)
    kafka_like(sim)
    sim.close()
    files = sorted(p.name for p in (tmp_path / "version-2").iterdir())
    assert len([f for f in files if f.startswith("log.")]) >= 3 and "snapshot.0" in files
    server = ZooKeeperServer(tmp_path / "server")
    shutil.copytree(tmp_path / "version-2", server.txn_dir)
    server.start()
    try:
        client = KazooClient(hosts=server.hosts)
        client.start(timeout=30)
        served: dict[str, tuple[bytes | None, Any]] = {}
        todo = ["/"]
        while todo:
            path = todo.pop()
            data, stat = client.get(path)
            served[path] = (data, stat)
            todo += [f"{path.rstrip('/')}/{c}" for c in client.get_children(path)]
        client.stop()
        client.close()
    finally:
        server.stop()
    ours = [json.loads(line) for line in znode_lines(sim.tree)]
    assert set(served) == {z["path"] for z in ours}
    for z in ours:
        data, stat = served[z["path"]]
        assert data == (None if z["data"] is None else z["data"].encode()), z["path"]
        assert stat._asdict() == z["stat"], z["path"]


def test_zookeepers_own_tool_reads_every_txn(zk_tools: None, tmp_path: Path) -> None:
    sim = SimZooKeeper(T0, tmp_path, snap_count=1000)
    kafka_like(sim)
    sim.close()
    (log,) = sorted(tmp_path.glob("log.*"))
    ours = list(read_txn_log(log))
    assert len(ours) == sim.zxid and all(not hasattr(t, "reason") for t in ours)
    dump = txn_log_toolkit(log)
    assert "CRC ERROR" not in dump and f"zxid 0x{sim.zxid:x} closeSession" in dump
    assert dump.count(" multi ") == 5  # 2 registrations, the election, a fenced write, a failed one
    assert "error" in dump  # the refused create and the failed multi are logged, as ZooKeeper does


def test_children_come_in_the_order_a_real_server_lists_them(zookeeper: Any) -> None:
    """getChildren answers in a DataNode's HashSet<String>(8) order, which Kafka keeps in the topic
    sets it logs. Names are created in name order (the model's assumption); a few fit the 8 bins, many
    resize them."""
    words = ("orders", "payments", "Aa", "BB", "__consumer_offsets")
    few = sorted(f"{w}-x" for w in words)
    many = sorted({f"{w}-{n}" for w in words for n in range(9)})
    sim = SimZooKeeper(T0)
    session = sim.create_session(T0)
    client = KazooClient(hosts=zookeeper.hosts)
    client.start(timeout=15)
    for parent, names in (("/few", few), ("/many", many)):
        for n in names:
            sim.create_recursive(T0, session, f"{parent}/{n}")
            client.create(f"{parent}/{n}", makepath=True)
        served = client.get_children(parent)
        assert served != names and sim.children(parent) == served, parent
    client.stop()
