"""`workbench simulate --zk`: a real ZooKeeper gets the story's requests and logs the txns the model logs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession

from workbench.frames import open_bundle
from workbench.simulate.real_zk import RealZooKeeperError
from workbench.simulate.run import simulate
from workbench.simulate.scenarios import Scale
from workbench.zookeeper.files import read_txn_log
from workbench.zookeeper.txns import CLOSE_SESSION, CREATE_SESSION, Txn

FOUR_BROKERS = Scale(brokers=4, topics=2, partitions=3, hours=0.5)


def _txns(txnlog: Path) -> list[Txn]:
    found = [t for f in sorted(txnlog.glob("log.*")) for t in read_txn_log(f)]
    assert all(isinstance(t, Txn) for t in found), [t for t in found if not isinstance(t, Txn)][:3]
    return found  # type: ignore[return-value]


def _what(t: Txn) -> tuple[Any, ...]:
    """What a txn did, without who (session ids are the server's) and when (its clock)."""
    ops = tuple((s.type, s.path, s.data, s.err, s.version, s.ephemeral) for s in t.ops)
    return (t.zxid, t.type, t.path, t.data, t.err, t.version, t.parent_cversion, t.ephemeral, t.timeout, ops)


@pytest.mark.slow
def test_the_real_server_logs_the_txns_the_model_logs(
    spark: SparkSession, tmp_path: Path, own_zookeeper: Any
) -> None:
    real, model = tmp_path / "real", tmp_path / "model"
    args: dict[str, Any] = {"seed": 4, "kafka_version": "2.8.2", "scale": FOUR_BROKERS}
    truth = simulate(
        "controller-failover", real, zk=own_zookeeper.hosts, zk_data_dir=own_zookeeper.data_dir, **args
    )
    assert simulate("controller-failover", model, **args)["last_zxid"] == truth["last_zxid"]

    got, expected = _txns(real / "zk" / "txnlog"), _txns(model / "zk" / "txnlog")
    assert len(expected) == truth["last_zxid"] > 100
    assert [_what(t) for t in got[: len(expected)]] == [_what(t) for t in expected]
    assert any(s.type == 13 for t in got for s in t.ops)  # fenced multis (check /controller_epoch)
    assert any(t.err for t in got)  # and refused requests, logged as error txns
    # After the story, only the capture's own session: it names its session id in capture.json.
    capture = json.loads((real / "zk" / "capture.json").read_text())
    after = got[len(expected) :]
    assert [t.type for t in after] == [CREATE_SESSION, CLOSE_SESSION]
    assert {f"0x{t.session_id:x}" for t in after} == {capture["session_id"]}

    # The model took the server's session ids: the broker registrations' owners are real sessions.
    sessions = {t.session_id for t in got if t.type == CREATE_SESSION}
    znodes = [json.loads(line) for line in (real / "zk" / "znodes.jsonl").read_text().splitlines()]
    owners = {z["stat"]["ephemeralOwner"] for z in znodes if z["path"].startswith("/brokers/ids/")}
    assert len(owners) == 4 and owners <= sessions
    # The server's tree is the model's, but for the times and session ids.
    mine = [json.loads(line) for line in (model / "zk" / "znodes.jsonl").read_text().splitlines()]
    assert sorted(map(_tree, znodes)) == sorted(map(_tree, mine))

    b = open_bundle(real, spark)
    assert b.bad_records.count() == 0
    assert b.znode_history.count() >= len(got)
    # The tree replayed from the server's txn files is the tree its clients read (the capture).
    replayed, bad = b.znodes_at(None)
    assert bad.count() == 0
    stats = "path", "data", "czxid", "mzxid", "pzxid", "version", "cversion", "aversion", "num_children"
    assert sorted(replayed.select(*stats).collect()) == sorted(b.znodes.select(*stats).collect())


def _tree(z: dict[str, Any]) -> tuple[Any, ...]:
    stat = {k: v for k, v in z["stat"].items() if k not in ("ctime", "mtime", "ephemeralOwner")}
    return (z["path"], z["data"], sorted(stat.items()))


def test_a_server_that_is_not_fresh_is_refused(tmp_path: Path, own_zookeeper: Any) -> None:
    from kazoo.client import KazooClient

    client = KazooClient(hosts=own_zookeeper.hosts)
    client.start(timeout=15)
    client.create("/someone-elses", b"data")
    client.stop()
    with pytest.raises(RealZooKeeperError, match=r"expected a fresh server"):
        simulate("healthy", tmp_path / "x", zk=own_zookeeper.hosts, zk_data_dir=own_zookeeper.data_dir)
    with pytest.raises(ValueError, match=r"needs --zk-data-dir"):
        simulate("healthy", tmp_path / "y", zk=own_zookeeper.hosts)
