"""`workbench capture zk` against a real ZooKeeper: what it writes must be what the server holds, byte for
byte and stat for stat, without secrets, and without writing to ZooKeeper. Each test has a server of its
own (`own_zookeeper`), not a chroot of the shared one: a capture walks the whole server and writes
ZooKeeper's own paths (a chroot would be folded into them), and some tests stop, restart or expire it."""

from __future__ import annotations

import argparse
import base64
import json
import os
import random
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kazoo.client import KazooClient
from kazoo.security import make_digest_acl

from workbench.capture import zk as zk_capture
from workbench.capture.zk import add_arguments, capture_zk, connect, run
from workbench.manifest import FORMAT, read_manifest, update_manifest
from workbench.testing.zookeeper import txn_log_toolkit

# ZooKeeper's own Stat field names (own_zookeeper.jute, `class Stat`); the capture must use exactly these.
STAT = {"czxid", "mzxid", "pzxid", "ctime", "mtime", "version", "cversion", "aversion"}
STAT |= {"ephemeralOwner", "dataLength", "numChildren"}
CLUSTER_ID = "4fi2MkU0Ql2L0cPRncY20Q"
SCRAM = (  # ScramCredentialUtils.credentialToString
    "salt=c2FsdEFsaWNlMTIz,stored_key=U3RvcmVkS2V5QWxpY2UxMjM0NTY=,server_key=U2VydmVyS2V5QWxpY2U5ODc=,iterations=4096"
)
SCRAM_CAROL = "salt=Y2Fyb2xTYWx0,stored_key=Q2Fyb2xTdG9yZWQ=,server_key=Q2Fyb2xTZXJ2ZXI=,iterations=8192"


@pytest.fixture
def zk(own_zookeeper: Any) -> Iterator[KazooClient]:
    """A writing client for setting up the server (the capture has its own, read-only session)."""
    client = KazooClient(hosts=own_zookeeper.hosts, auth_data=[("digest", "admin:s3cret")])
    client.start(timeout=30)
    yield client
    client.stop()
    client.close()


def jsonb(doc: Any) -> bytes:
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def create_many(zk: KazooClient, nodes: list[tuple[str, bytes]], batch: int = 1000) -> None:
    """Create persistent znodes fast: one multi per batch (parents before children). kazoo's transactions
    refuse None, so these carry empty data where Kafka would write null."""
    for i in range(0, len(nodes), batch):
        tx = zk.transaction()
        for path, data in nodes[i : i + batch]:
            tx.create(path, data)
        results = tx.commit()
        assert all(isinstance(r, str) for r in results), results[:3]


def topics_tree(root: str, topics: int, partitions: int) -> list[tuple[str, bytes]]:
    """Kafka's shape: /brokers/topics/<t> -> partitions -> <p> -> state."""
    nodes = [(root, b"")]
    for t in range(topics):
        topic = f"{root}/topic-{t:04d}"
        assignment = {str(p): [1, 2, 3] for p in range(partitions)}
        nodes += [
            (topic, jsonb({"version": 3, "partitions": assignment, "topic_id": "fp0I2sNQST-mA8JQMWpPQg"}))
        ]
        nodes += [(f"{topic}/partitions", b"")]
        for p in range(partitions):
            state = {"controller_epoch": 3, "leader": 1, "version": 1, "leader_epoch": 0, "isr": [1, 2, 3]}
            nodes += [(f"{topic}/partitions/{p}", b""), (f"{topic}/partitions/{p}/state", jsonb(state))]
    return nodes


def server_tree(zk: KazooClient, root: str = "/") -> dict[str, tuple[bytes | None, dict[str, int]]]:
    """Every znode under root as the server holds it, read with kazoo's plain sync API."""
    tree, todo = {}, [root]
    while todo:
        path = todo.pop()
        data, stat = zk.get(path)
        tree[path] = (data, stat._asdict())
        todo += [f"{path.rstrip('/')}/{c}" for c in zk.get_children(path)]
    return tree


def server_nodes(zk: KazooClient, paths: list[str]) -> dict[str, tuple[bytes | None, dict[str, int]]]:
    """The given znodes as the server holds them, asked all at once (big trees)."""
    asked = [(p, zk.get_async(p)) for p in paths]
    return {p: (r.get()[0], r.get()[1]._asdict()) for p, r in asked}


def within(seconds: float, fn: Any, *args: Any, **kwargs: Any) -> Any:
    """fn's result, failing the test (not hanging it) when fn does not return in time."""
    done: list[Any] = []
    thread = threading.Thread(target=lambda: done.append(fn(*args, **kwargs)), daemon=True)
    thread.start()
    thread.join(seconds)
    assert done, f"{fn.__name__} did not return within {seconds} s"
    return done[0]


def lines(bundle: Path) -> dict[str, dict[str, Any]]:
    text = (bundle / "zk" / "znodes.jsonl").read_text(encoding="utf-8")
    out = {}
    for raw in text.splitlines():
        line = json.loads(raw)
        assert line["path"] not in out, f"{line['path']} written twice"
        out[line["path"]] = line
    return out


def data_of(line: dict[str, Any]) -> bytes | None:
    if line["data"] is None:
        return None
    if line["encoding"] == "base64":
        return base64.b64decode(line["data"])
    assert line["encoding"] == "utf-8"
    return str(line["data"]).encode("utf-8")


def assert_same(line: dict[str, Any], data: bytes | None, stat: dict[str, int]) -> None:
    assert set(line["stat"]) == STAT, line["path"]
    assert line["stat"] == stat, line["path"]
    assert data_of(line) == data, line["path"]


def kafka_tree(zk: KazooClient) -> None:
    """A small Kafka 2.8-like tree with corner cases: ephemeral, null, empty, non-utf-8, big, sequential."""
    zk.create("/cluster/id", jsonb({"version": "1", "id": CLUSTER_ID}), makepath=True)
    zk.create("/controller_epoch", b"5")
    zk.create(
        "/controller", jsonb({"version": 1, "brokerid": 1, "timestamp": "1650897815992"}), ephemeral=True
    )
    zk.create("/brokers/seqid", b"", makepath=True)  # empty, not null
    zk.create("/brokers/ids", None)  # createRecursive writes null data
    for broker in (1, 2):
        info = {
            "version": 5,
            "host": f"b{broker}",
            "port": 9092,
            "endpoints": [f"PLAINTEXT://b{broker}:9092"],
        }
        zk.create(f"/brokers/ids/{broker}", jsonb(info), ephemeral=True)
    zk.create("/brokers/topics", None)
    for topic in ("orders", "payments"):
        assignment = {
            "version": 3,
            "partitions": {"0": [1, 2], "1": [2, 1]},
            "topic_id": "m2GaXl4TSyaBZB5R8-wtaA",
        }
        zk.create(f"/brokers/topics/{topic}", jsonb(assignment))
        zk.create(f"/brokers/topics/{topic}/partitions", None)
        for p in (0, 1):
            zk.create(f"/brokers/topics/{topic}/partitions/{p}", None)
            state = {"controller_epoch": 5, "leader": 1, "version": 1, "leader_epoch": 3, "isr": [1, 2]}
            zk.create(f"/brokers/topics/{topic}/partitions/{p}/state", jsonb(state))
            zk.set(f"/brokers/topics/{topic}/partitions/{p}/state", jsonb({**state, "leader_epoch": 4}))
    zk.create("/admin/delete_topics/payments", None, makepath=True)  # marked for deletion: null data
    zk.create(
        "/config/topics/orders", jsonb({"version": 1, "config": {"retention.ms": "86400000"}}), makepath=True
    )
    zk.create(
        "/config/clients/clïent-日本",
        jsonb({"version": 1, "config": {"note": "Grüße, 日本 ✓"}}),
        makepath=True,
    )
    for _ in range(3):
        zk.create(
            "/config/changes/config_change_",
            jsonb({"version": 2, "entity_path": "topics/orders"}),
            sequence=True,
            makepath=True,
        )
    zk.create("/isr_change_notification/isr_change_", b"{}", sequence=True, makepath=True)
    zk.create("/binary", b"\xff\xfe\x00\x80not utf-8\xc3")
    zk.create("/big", os.urandom(900 * 1024))
    zk.create("/big_text", ("é" * 450_000).encode("utf-8"))  # 900 KB of two-byte utf-8


def test_round_trip_equals_server_and_writes_nothing(
    own_zookeeper: Any, zk: KazooClient, tmp_path: Path
) -> None:
    """Every znode on the server is one line with the same path, data bytes (null kept apart from empty)
    and every stat field; the capture's session is the only thing in the txn log, and the output order
    is stable."""
    kafka_tree(zk)
    before = own_zookeeper.last_zxid()
    capture = capture_zk(own_zookeeper.hosts, tmp_path / "b")
    after = own_zookeeper.last_zxid()

    server = server_tree(zk)
    got = lines(tmp_path / "b")
    assert set(got) == set(server)
    for path, (data, stat) in server.items():
        assert_same(got[path], data, stat)
    assert got["/admin/delete_topics/payments"]["data"] is None
    assert got["/brokers/seqid"]["data"] == ""
    assert (
        got["/admin/delete_topics/payments"]["stat"]["dataLength"]
        == got["/brokers/seqid"]["stat"]["dataLength"]
        == 0
    )
    assert got["/binary"]["encoding"] == got["/big"]["encoding"] == "base64"
    assert got["/big_text"]["encoding"] == "utf-8"
    assert got["/config/clients/clïent-日本"]["data"].endswith('"Grüße, 日本 ✓"}}')
    assert got["/controller"]["stat"]["ephemeralOwner"] == zk.client_id[0] != 0
    assert sorted(p for p in got if p.startswith("/config/changes/")) == [
        f"/config/changes/config_change_{i:010d}" for i in range(3)
    ]
    assert not any(line.get("redacted") for line in got.values())

    assert capture["complete"] is True and capture["problems"] == []
    assert capture["counts"]["znodes"] == len(server)
    assert capture["counts"]["bytes"] == sum(len(d or b"") for d, _ in server.values())
    assert capture["last_zxid"] == max(max(s["czxid"], s["mzxid"], s["pzxid"]) for _, s in server.values())
    assert capture == json.loads((tmp_path / "b" / "zk" / "capture.json").read_text())

    # Reads make no txns; the session does: createSession (the server's zxid in our answers) and closeSession.
    assert after == before + 2
    assert capture["server_zxid"] == before + 1
    txns = []
    for log in sorted(own_zookeeper.txn_dir.glob("log.*")):
        for m in re.finditer(
            r"session (0x[0-9a-f]+) cxid \S+ zxid (0x[0-9a-f]+) (\w+)", txn_log_toolkit(log)
        ):
            if int(m.group(2), 16) > before:
                txns.append((m.group(1), m.group(3)))
    assert txns == [(capture["session_id"], "createSession"), (capture["session_id"], "closeSession")]

    first = (tmp_path / "b" / "zk" / "znodes.jsonl").read_bytes()
    capture_zk(own_zookeeper.hosts, tmp_path / "again")
    assert (tmp_path / "again" / "zk" / "znodes.jsonl").read_bytes() == first
    order = list(got)  # breadth-first, siblings sorted
    assert [p.count("/") for p in order[1:]] == sorted(p.count("/") for p in order[1:])
    for parent in order:
        children = [p for p in order if p != "/" and p.rsplit("/", 1)[0] == parent.rstrip("/")]
        assert children == sorted(children), parent


def test_secrets_never_leave_the_cluster(own_zookeeper: Any, zk: KazooClient, tmp_path: Path) -> None:
    """SCRAM credentials and PASSWORD-type broker configs are replaced everywhere in the bundle (also below
    a chroot), non-secret values survive, and equal secrets share a fingerprint."""
    secrets = [SCRAM, SCRAM_CAROL, "S3cretKeyst0rePass", "TrustM3-pass!", "adminpw-jaas", "secret-garbage"]
    secrets += [kv.split("=", 1)[1] for scram in (SCRAM, SCRAM_CAROL) for kv in scram.split(",")[:3]]
    users = {
        "alice": {"SCRAM-SHA-256": SCRAM, "producer_byte_rate": "1024"},
        "bob": {"SCRAM-SHA-256": SCRAM},
        "carol": {"SCRAM-SHA-512": SCRAM_CAROL, "consumer_byte_rate": "2048"},
    }
    jaas = 'org.apache.kafka.common.security.plain.PlainLoginModule required password="adminpw-jaas";'
    brokers = {
        "1": {
            "listener.name.internal.ssl.keystore.password": "S3cretKeyst0rePass",
            "log.cleaner.threads": "2",
        },
        "<default>": {
            "ssl.truststore.password": "TrustM3-pass!",
            "sasl.jaas.config": jaas,
            "log.retention.ms": "1",
        },
    }
    secret_paths = []
    for chroot in ("", "/kafka"):
        for name, config in users.items():
            zk.create(f"{chroot}/config/users/{name}", jsonb({"version": 1, "config": config}), makepath=True)
        for name, config in brokers.items():
            zk.create(
                f"{chroot}/config/brokers/{name}", jsonb({"version": 1, "config": config}), makepath=True
            )
        zk.create(f"{chroot}/config/users/mallory", b"\xffsecret-garbage\x00")  # not JSON: replaced whole
        secret_paths += [
            f"{chroot}/config/{kind}/{n}" for kind, d in (("users", users), ("brokers", brokers)) for n in d
        ]
        secret_paths += [f"{chroot}/config/users/mallory"]
    zk.create(
        "/config/topics/t", jsonb({"version": 1, "config": {"cleanup.policy": "compact"}}), makepath=True
    )

    capture = capture_zk(own_zookeeper.hosts, tmp_path / "b")
    got = lines(tmp_path / "b")

    blob = b"".join(p.read_bytes() for p in sorted((tmp_path / "b").rglob("*")) if p.is_file())
    decoded = b"".join(data_of(line) or b"" for line in got.values() if line["encoding"] == "base64")
    for secret in secrets:
        for form in (secret.encode(), base64.b64encode(secret.encode()), json.dumps(secret)[1:-1].encode()):
            assert form not in blob, secret
        assert secret.encode() not in decoded
    for path in secret_paths:
        assert base64.b64encode(zk.get(path)[0]) not in blob
        assert got[path]["redacted"] is True, path
    assert capture["counts"]["redacted"] == len(secret_paths)
    assert "redacted" not in got["/config/topics/t"]

    configs = {p: json.loads(got[p]["data"])["config"] for p in secret_paths if "mallory" not in p}
    assert configs["/config/users/alice"]["producer_byte_rate"] == "1024"
    assert configs["/config/users/carol"]["consumer_byte_rate"] == "2048"
    assert configs["/config/brokers/1"]["log.cleaner.threads"] == "2"
    assert configs["/config/brokers/<default>"]["log.retention.ms"] == "1"
    alice = configs["/config/users/alice"]["SCRAM-SHA-256"]
    bob = configs["/config/users/bob"]["SCRAM-SHA-256"]
    assert re.fullmatch(r"\[redacted:[0-9a-f]{12}\]", alice)
    assert alice == bob == configs["/kafka/config/users/alice"]["SCRAM-SHA-256"]
    assert alice != configs["/config/users/carol"]["SCRAM-SHA-512"]
    assert re.fullmatch(r"\[redacted:[0-9a-f]{12}\]", got["/config/users/mallory"]["data"])


def test_no_auth_is_a_problem_and_auth_reads_it(own_zookeeper: Any, zk: KazooClient, tmp_path: Path) -> None:
    """A znode whose ACL shuts us out is listed in capture.json (with its stat, which exists() still
    gives) and the walk goes on; with the digest credentials it is read. The password is never written."""
    acl = [make_digest_acl("admin", "s3cret", all=True)]
    zk.create("/secure", b"locked data", acl=acl)
    zk.create("/secure/inner", b"inner data", acl=acl)
    zk.create("/open/child", b"open data", makepath=True)

    capture = capture_zk(own_zookeeper.hosts, tmp_path / "anon")
    got = lines(tmp_path / "anon")
    assert "/secure" not in got and "/secure/inner" not in got
    assert data_of(got["/open/child"]) == b"open data"
    assert capture["complete"] is True
    [problem] = capture["problems"]
    assert problem["kind"] == "no_auth" and problem["path"] == "/secure"
    assert problem["stat"] == zk.exists("/secure")._asdict()
    assert problem["stat"]["numChildren"] == 1

    capture = capture_zk(own_zookeeper.hosts, tmp_path / "admin", auth=("digest", "admin:s3cret"))
    got = lines(tmp_path / "admin")
    assert data_of(got["/secure"]) == b"locked data" and data_of(got["/secure/inner"]) == b"inner data"
    assert capture["problems"] == [] and capture["auth"] == "digest:admin"
    assert b"s3cret" not in (tmp_path / "admin" / "zk" / "capture.json").read_bytes()


def test_vanished_znodes_are_problems(own_zookeeper: Any, zk: KazooClient, tmp_path: Path) -> None:
    """A subtree deleted while the walk runs (after its parent listed it, before it was read) is recorded
    as vanished; everything written is what the server held."""
    nodes = topics_tree("/t", topics=300, partitions=4)
    create_many(zk, nodes)
    before = server_nodes(zk, [p for p, _ in nodes])
    doomed = "/t/topic-0299"

    def delete_ahead(walked: int) -> None:  # BFS: at 1,000 the walk is reading /t/*/partitions/<p>
        if walked >= 1000 and zk.exists(doomed):
            zk.delete(doomed, recursive=True)

    capture = capture_zk(own_zookeeper.hosts, tmp_path / "b", progress=delete_ahead)
    got = lines(tmp_path / "b")
    vanished = sorted(p["path"] for p in capture["problems"] if p["kind"] == "vanished")
    assert vanished == [f"{doomed}/partitions/{p}" for p in range(4)]
    assert doomed in got and f"{doomed}/partitions" in got and f"{doomed}/partitions/0" not in got
    assert capture["complete"] is True
    for path, line in got.items():
        if path.startswith("/t"):
            assert_same(line, *before[path])
    assert len([p for p in got if p.startswith("/t")]) == len(nodes) - 8


@pytest.mark.slow
def test_lost_connection_keeps_what_was_walked(own_zookeeper: Any, zk: KazooClient, tmp_path: Path) -> None:
    """The server stops mid-walk for good: the capture returns within its timeout with complete=false,
    says so, and keeps every znode it had read."""
    nodes = topics_tree("/t", topics=600, partitions=2)
    create_many(zk, nodes)
    before = server_nodes(zk, [p for p, _ in nodes])
    zk.stop()

    def stop_server(walked: int) -> None:
        if walked >= 1000 and own_zookeeper.running:
            own_zookeeper.stop()

    capture = within(30, capture_zk, own_zookeeper.hosts, tmp_path / "b", progress=stop_server, timeout=2)
    assert capture["complete"] is False
    kinds = [p["kind"] for p in capture["problems"]]
    assert "connection_lost" in kinds and kinds[-1] == "gave_up"
    assert capture["problems"][-1]["not_read"] > 0
    got = lines(tmp_path / "b")
    assert 1000 <= len(got) == capture["counts"]["znodes"] < len(nodes)
    for path, line in got.items():
        if path.startswith("/t"):
            assert_same(line, *before[path])
    on_disk = json.loads((tmp_path / "b" / "zk" / "capture.json").read_text())
    assert on_disk["complete"] is False
    assert [p["part"] for p in read_manifest(tmp_path / "b")["parts"]] == ["zk"]


@pytest.mark.slow
def test_restarted_server_walk_completes(own_zookeeper: Any, zk: KazooClient, tmp_path: Path) -> None:
    """The server restarts mid-walk: the capture reconnects (KazooRetry), notes the loss and when it
    was regained, and still holds every znode, equal to the server."""
    nodes = topics_tree("/t", topics=600, partitions=2)
    create_many(zk, nodes)
    before = server_nodes(zk, [p for p, _ in nodes])
    zk.stop()
    restarted: list[int] = []

    def restart_server(walked: int) -> None:
        if walked >= 1000 and not restarted:
            restarted.append(walked)
            own_zookeeper.restart()

    capture = within(60, capture_zk, own_zookeeper.hosts, tmp_path / "b", progress=restart_server, timeout=20)
    assert restarted and capture["complete"] is True
    lost = [p for p in capture["problems"] if p["kind"] == "connection_lost"]
    assert lost and all("regained_at" in p for p in lost)
    got = lines(tmp_path / "b")
    assert {p for p in got if p.startswith("/t")} == set(before)
    for path, (data, stat) in before.items():
        assert_same(got[path], data, stat)


@pytest.mark.slow
def test_expired_session_walk_goes_on_in_a_new_session(
    own_zookeeper: Any, zk: KazooClient, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The capture's session expires mid-walk: kazoo opens a new session and the walk carries on from
    where it was; the loss is noted with the new session's id and every znode is still equal."""
    nodes = topics_tree("/t", topics=600, partitions=2)
    create_many(zk, nodes)
    before = server_nodes(zk, [p for p, _ in nodes])
    clients: list[KazooClient] = []
    monkeypatch.setattr(zk_capture, "connect", lambda *a: clients.append(connect(*a)) or clients[-1])
    expired: list[int] = []

    def expire_session(walked: int) -> None:
        """kazoo's own harness way (testing/harness.py, expire_session): a second client joins the session
        with its id and password and closes it, so the server expires it for the capture's client."""
        if walked >= 1000 and not expired:
            expired.append(clients[0].client_id[0])
            twin = KazooClient(hosts=own_zookeeper.hosts, client_id=clients[0].client_id)
            twin.start(timeout=10)
            twin.stop()
            twin.close()

    capture = within(60, capture_zk, own_zookeeper.hosts, tmp_path / "b", progress=expire_session, timeout=20)
    assert expired and capture["complete"] is True and capture["session_id"] == f"0x{expired[0]:x}"
    lost = [p for p in capture["problems"] if p["kind"] == "session_lost"]
    assert len(lost) == 1 and lost[0]["session_id"] not in (None, capture["session_id"])
    got = lines(tmp_path / "b")
    assert {p for p in got if p.startswith("/t")} == set(before)
    for path, (data, stat) in before.items():
        assert_same(got[path], data, stat)


@pytest.mark.slow
def test_znode_gone_between_its_read_and_its_listing(
    own_zookeeper: Any, zk: KazooClient, tmp_path: Path
) -> None:
    """A znode read (its stat says it has children) and deleted before its children are listed: it is
    written as read, its children are not, and the problem says what happened."""
    nodes = topics_tree("/t", topics=600, partitions=2)
    create_many(zk, nodes)
    order, todo = [], ["/"]  # the walk's order: breadth first, siblings sorted
    while todo:
        order.append(todo.pop(0))
        todo += [f"{order[-1].rstrip('/')}/{c}" for c in sorted(zk.get_children(order[-1]))]
    target = order[1002]  # among the reads in flight when the 1,000th znode is written
    data, stat = zk.get(target)
    assert stat.numChildren > 0

    def delete_after_its_read(walked: int) -> None:
        if walked >= 1000 and zk.exists(target):
            time.sleep(0.5)  # the reads already asked are answered meanwhile; their listings are not asked
            zk.delete(target, recursive=True)

    capture = capture_zk(own_zookeeper.hosts, tmp_path / "b", progress=delete_after_its_read)
    got = lines(tmp_path / "b")
    assert {"kind": "vanished", "path": target, "detail": "read, then gone before listing"} in capture[
        "problems"
    ]
    assert_same(got[target], data, stat._asdict())
    assert not [p for p in got if p.startswith(target + "/")] and capture["complete"] is True


def test_manifest_is_completed_not_replaced(own_zookeeper: Any, zk: KazooClient, tmp_path: Path) -> None:
    """A bundle started elsewhere keeps its fields; the zk part adds the cluster id and live brokers."""
    zk.create("/cluster/id", jsonb({"version": "1", "id": CLUSTER_ID}), makepath=True)
    zk.create("/brokers/ids/1", b"{}", makepath=True, ephemeral=True)
    zk.create("/brokers/ids/2", b"{}", ephemeral=True)
    bundle = tmp_path / "b"
    update_manifest(
        bundle,
        kafka_version="2.8.2",
        brokers=[3],
        captured_at="2024-01-01T00:00:00.000Z",
        parts=[{"part": "broker", "broker": 3}],
    )

    capture_zk(own_zookeeper.hosts, bundle)
    capture_zk(own_zookeeper.hosts, bundle)  # again: the part is not listed twice
    manifest = read_manifest(bundle)
    assert manifest["format"] == FORMAT and manifest["kafka_version"] == "2.8.2"
    assert manifest["brokers"] == [1, 2, 3] and manifest["cluster"] == CLUSTER_ID
    assert manifest["captured_at"] == "2024-01-01T00:00:00.000Z" and manifest["redacted"] is True
    assert [p["part"] for p in manifest["parts"]] == ["broker", "zk"]

    capture = capture_zk(own_zookeeper.hosts, tmp_path / "fresh")
    fresh = read_manifest(tmp_path / "fresh")
    assert fresh["captured_at"] == capture["started"] and fresh["brokers"] == [1, 2]


def test_cli(
    own_zookeeper: Any, zk: KazooClient, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: Any
) -> None:
    """`capture zk` as the lead wires it: arguments, a chroot in --hosts, credentials from the environment,
    exit codes, messages, no traceback."""
    monkeypatch.delenv("WORKBENCH_ZK_AUTH", raising=False)
    zk.create("/kafka/brokers/ids/7", b"{}", makepath=True, ephemeral=True)
    zk.create("/kafka/secure", b"x", acl=[make_digest_acl("admin", "s3cret", all=True)])
    zk.create("/elsewhere", b"not under the chroot")
    parser = argparse.ArgumentParser(prog="workbench capture zk")
    add_arguments(parser)

    args = parser.parse_args(
        [
            "--hosts",
            f"{own_zookeeper.hosts}/kafka",
            "--out",
            str(tmp_path / "b"),
            "--auth",
            "digest:admin:s3cret",
        ]
    )
    assert run(args) == 0
    out, err = capsys.readouterr()
    assert "captured 5 znodes" in out and "walked 5 znodes" in err
    kafka = {"/kafka", "/kafka/brokers", "/kafka/brokers/ids", "/kafka/brokers/ids/7", "/kafka/secure"}
    assert set(lines(tmp_path / "b")) == kafka
    assert read_manifest(tmp_path / "b")["brokers"] == [7]

    args = parser.parse_args(
        ["--hosts", own_zookeeper.hosts, "--out", str(tmp_path / "c"), "--root", "/kafka/"]
    )
    assert run(args) == 0
    out, _ = capsys.readouterr()
    assert "problems: 1" in out and "no_auth: /kafka/secure" in out

    monkeypatch.setenv("WORKBENCH_ZK_AUTH", "digest:admin:s3cret")  # keeps the password out of `ps`
    with_env = argparse.ArgumentParser()
    add_arguments(with_env)
    args = with_env.parse_args(
        ["--hosts", own_zookeeper.hosts, "--out", str(tmp_path / "f"), "--root", "/kafka"]
    )
    assert run(args) == 0
    assert "problems: 0" in capsys.readouterr().out

    args = parser.parse_args(
        ["--hosts", own_zookeeper.hosts, "--out", str(tmp_path / "d"), "--root", "/nope"]
    )
    assert run(args) == 2
    assert "/nope does not exist" in capsys.readouterr().err
    assert not (tmp_path / "d" / "zk" / "znodes.jsonl").exists()

    args = parser.parse_args(["--hosts", "127.0.0.1:1", "--out", str(tmp_path / "e"), "--timeout", "1"])
    assert run(args) == 2
    err = capsys.readouterr().err
    assert "cannot connect to ZooKeeper at 127.0.0.1:1 within 1 s" in err and "Traceback" not in err

    with pytest.raises(SystemExit):
        parser.parse_args(["--hosts", own_zookeeper.hosts, "--out", "x", "--root", "kafka"])


@pytest.mark.slow
def test_large_tree_rate(own_zookeeper: Any, zk: KazooClient, tmp_path: Path) -> None:
    """~20k znodes: all captured, a sample equal to the server; the rate is printed (run with -s)."""
    nodes = topics_tree("/brokers/topics", topics=2000, partitions=4)
    started = time.monotonic()
    create_many(zk, [("/brokers", b""), *nodes])
    created = time.monotonic() - started
    started = time.monotonic()
    capture = capture_zk(own_zookeeper.hosts, tmp_path / "b")
    took = time.monotonic() - started
    print(
        f"\ncreated {len(nodes):,} znodes in {created:.2f} s; captured {capture['counts']['znodes']:,} "
        f"in {took:.2f} s = {capture['counts']['znodes'] / took:,.0f} znodes/s"
    )
    got = lines(tmp_path / "b")
    assert {p for p, _ in nodes} <= set(got)
    assert (
        capture["counts"]["znodes"] == len(got) == len(nodes) + 5
    )  # /, /brokers, /zookeeper{,/config,/quota}
    sample = random.Random(7).sample([p for p, _ in nodes], 300)
    for path, (data, stat) in server_nodes(zk, sample).items():
        assert_same(got[path], data, stat)
