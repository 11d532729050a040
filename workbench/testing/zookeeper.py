"""A standalone ZooKeeper from the Debian package `zookeeper`, on a free loopback port with its own
dataDir, and ZooKeeper's own decoders (TxnLogToolkit, SnapshotFormatter) as oracles.

Like kazoo's test harness (kazoo/testing/common.py), the server is a child JVM we start and stop; the
tests and bench/ use it. Nothing here needs Spark.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

from workbench.errors import WorkbenchError
from workbench.testing import free_port

JARS = Path(os.environ.get("WORKBENCH_ZK_JARS", "/usr/share/java"))
INSTALL_HINT = "On Debian/Ubuntu: sudo apt-get install zookeeper (it puts zookeeper.jar in /usr/share/java)"


class ZooKeeperMissing(WorkbenchError, RuntimeError):
    """ZooKeeper's jar or Java is not installed."""


# A JVM that lives for one test (a server) or one command (a client, a tool): the C1 compiler alone and
# the serial collector start it in about two thirds of the time (a `get` 0.86 s -> 0.55 s here); the work
# it does is too small for C2 to pay off.
SHORT_LIVED_JVM = ("-XX:TieredStopAtLevel=1", "-XX:CICompilerCount=1", "-XX:+UseSerialGC")


def classpath() -> str:
    """zookeeper.jar (its manifest names the jars it needs) plus a silent slf4j binding."""
    jar = JARS / "zookeeper.jar"
    if not jar.is_file():
        raise ZooKeeperMissing(f"{jar} not found. {INSTALL_HINT}")
    if shutil.which("java") is None:
        raise ZooKeeperMissing("java is not on the PATH (apt-get install openjdk-17-jre-headless)")
    return f"{jar}:{JARS / 'slf4j-nop.jar'}"


def _four_letter(port: int, word: bytes) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
        s.sendall(word)
        chunks = []
        while chunk := s.recv(4096):
            chunks.append(chunk)
        return b"".join(chunks)


class ZooKeeperServer:
    """One standalone server. `settings` are extra zoo.cfg lines; `jvm_properties` become -D flags
    (e.g. {"zookeeper.snapCount": "10"} to force snapshots and roll txn logs)."""

    def __init__(
        self,
        base_dir: Path,
        settings: dict[str, str] | None = None,
        jvm_properties: dict[str, str] | None = None,
    ) -> None:
        self.base_dir = Path(base_dir)
        self.data_dir = self.base_dir / "data"
        self.port = free_port()
        self.settings = settings or {}
        self.jvm_properties = jvm_properties or {}
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def hosts(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def txn_dir(self) -> Path:
        """version-2/, where the txn logs and snapshots are."""
        return self.data_dir / "version-2"

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def _write_config(self) -> Path:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        cfg = {
            "tickTime": "2000",
            "dataDir": str(self.data_dir),
            "clientPort": str(self.port),
            "clientPortAddress": "127.0.0.1",
            "admin.enableServer": "false",
            "4lw.commands.whitelist": "ruok,srvr,stat,mntr",
            **self.settings,
        }
        path = self.base_dir / "zoo.cfg"
        path.write_text("".join(f"{k}={v}\n" for k, v in cfg.items()))
        return path

    def start(self, timeout: float = 30.0) -> None:
        """Start the JVM and wait until `srvr` answers (it answers once sessions can be served)."""
        if self.running:
            return
        cfg = self._write_config()
        props = [f"-D{k}={v}" for k, v in self.jvm_properties.items()]
        cmd = [
            "java",
            "-Xmx256m",
            *SHORT_LIVED_JVM,
            *props,
            "-cp",
            classpath(),
            "org.apache.zookeeper.server.ZooKeeperServerMain",
        ]
        self._log = open(self.base_dir / "server.out", "ab")  # noqa: SIM115 - closed in stop()
        self._process = subprocess.Popen([*cmd, str(cfg)], stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not self.running:
                raise RuntimeError(f"ZooKeeper exited at start; see {self.base_dir / 'server.out'}")
            try:
                if b"Zookeeper version" in _four_letter(self.port, b"srvr"):
                    return
            except OSError:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"ZooKeeper did not answer on {self.hosts} within {timeout} s")

    def last_zxid(self) -> int:
        """The server's last zxid, from `srvr` ('Zxid: 0x...')."""
        for line in _four_letter(self.port, b"srvr").decode().splitlines():
            if line.startswith("Zxid:"):
                return int(line.split(":", 1)[1].strip(), 16)
        raise RuntimeError("srvr did not report a Zxid")

    def _writing_snapshot(self) -> bool:
        """A snapshot still being written in the background: it does not yet end with the seal's "/"
        (SnapStream.isValidSnapshot). Stopping then would leave it cut short."""
        snaps = sorted(self.txn_dir.glob("snapshot.*"), key=lambda p: p.stat().st_mtime)
        if not snaps:
            return False
        with open(snaps[-1], "rb") as f:
            f.seek(0, os.SEEK_END)
            if f.tell() < 5:
                return True
            f.seek(-5, os.SEEK_END)
            return f.read() != b"\x00\x00\x00\x01/"

    def stop(self) -> None:
        """Stop the JVM once no snapshot is being written (at most 10 s), as an operator would."""
        if self._process is not None:
            deadline = time.monotonic() + 10
            while self.running and self._writing_snapshot() and time.monotonic() < deadline:
                time.sleep(0.05)
            self._process.terminate()
            try:
                self._process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            self._process = None
            self._log.close()

    def restart(self) -> None:
        self.stop()
        self.start()


class Chroot:
    """One test's own subtree of a server the tests share (kazoo's testing/harness.py: one server per test
    session, a chroot per test): a client given `hosts` sees `path` as the whole tree. The server's zxids
    and txn logs are the whole server's; a test that stops or restarts it, expires a session or reads its
    files as its own takes a server of its own instead."""

    def __init__(self, server: ZooKeeperServer, path: str) -> None:
        self.server = server
        self.path = path

    @property
    def hosts(self) -> str:
        return f"{self.server.hosts}{self.path}"

    @property
    def txn_dir(self) -> Path:
        return self.server.txn_dir

    def last_zxid(self) -> int:
        return self.server.last_zxid()

    def make(self) -> None:
        """Create the chroot (a client of it finds its root there)."""
        from kazoo.client import KazooClient

        client = KazooClient(hosts=self.server.hosts)
        client.start(timeout=30)
        try:
            client.ensure_path(self.path)
        finally:
            client.stop()
            client.close()

    def remove(self, auth: list[tuple[str, str]] | None = None) -> None:
        """Delete the chroot and all below it (`auth`: what its ACLs ask for), so the shared server holds
        only the running test's tree."""
        from kazoo.client import KazooClient
        from kazoo.exceptions import NoAuthError

        client = KazooClient(hosts=self.server.hosts, auth_data=auth)
        client.start(timeout=30)
        try:
            client.delete(self.path, recursive=True)
        except NoAuthError as e:
            raise NoAuthError(
                f"chroot {self.path} of {self.server.hosts} could not be removed: a znode under it has an "
                f"ACL the auth given ({[scheme for scheme, _ in auth or []]}) does not satisfy; pass its auth"
            ) from e
        finally:
            client.stop()
            client.close()


def _run_tool(main_class: str, *args: str) -> str:
    """Run one of ZooKeeper's tools; its output as UTF-8 text, line ends untouched (data may hold \r)."""
    flags = ["-Duser.timezone=UTC", "-Duser.language=en", "-Dfile.encoding=UTF-8"]
    flags.append("-Dsun.stdout.encoding=UTF-8")
    cmd = ["java", *SHORT_LIVED_JVM, *flags, "-cp", classpath(), main_class, *args]
    done = subprocess.run(cmd, capture_output=True, timeout=300)
    out = done.stdout.decode("utf-8", "surrogateescape")
    if done.returncode != 0:
        raise RuntimeError(f"{main_class} failed on {args}: {done.stderr.decode(errors='replace') or out}")
    return out


def txn_log_toolkit(path: str | os.PathLike[str]) -> str:
    """ZooKeeper's own dump of a txn log (`TxnLogToolkit -d`)."""
    return _run_tool("org.apache.zookeeper.server.persistence.TxnLogToolkit", "-d", str(path))


def snapshot_formatter(path: str | os.PathLike[str]) -> str:
    """ZooKeeper's own dump of a snapshot, data in base64 (`SnapshotFormatter -d`)."""
    return _run_tool("org.apache.zookeeper.server.SnapshotFormatter", "-d", str(path))


def kafka_like_writes(hosts: str, topics: int = 3, partitions: int = 2, isr_changes: int = 3) -> None:
    """Drive a server with the writes a ZooKeeper-mode Kafka cluster makes, through kazoo, so that its
    txn logs and snapshots hold what real ones do (FORMATS.md B and C.5; KafkaZkClient @2.8.2):
    top-level paths with null data, ephemeral broker registration as create(null)+setData, controller
    election as one multi, fenced controller writes (multi with a check on /controller_epoch), a failed
    fenced write, topic creation, ISR changes, a pre-2.8 tool dropping topic_id, topic deletion, sequential
    notification znodes, setACL, a large znode, non-ASCII and binary data, and session close."""
    import json

    from kazoo.client import KazooClient
    from kazoo.protocol.serialization import Create
    from kazoo.security import OPEN_ACL_UNSAFE, make_digest_acl

    admin = KazooClient(hosts=hosts)
    admin.start(timeout=15)
    for path in (
        "/brokers/ids",
        "/brokers/topics",
        "/brokers/seqid",
        "/config/changes",
        "/config/topics",
        "/config/users",
        "/config/brokers",
        "/admin/delete_topics",
        "/isr_change_notification",
    ):
        admin.create(path, None, makepath=True)
    admin.create("/cluster/id", b'{"version":"1","id":"4fi2MkU0Ql2L0cPRncY20Q"}', makepath=True)
    brokers = []
    for broker_id in (1, 2):
        zk = KazooClient(hosts=hosts)
        zk.start(timeout=15)
        info = {
            "features": {},
            "host": f"broker{broker_id}",
            "port": 9092,
            "version": 5,
            "jmx_port": -1,
            "endpoints": [f"PLAINTEXT://broker{broker_id}:9092"],
            "timestamp": "1650897815948",
        }
        tx = zk.transaction()
        # kazoo's transaction API refuses null data, which Kafka sends; its request class takes it
        tx._add(Create(f"/brokers/ids/{broker_id}", None, OPEN_ACL_UNSAFE, 1))  # 1 = EPHEMERAL
        tx.set_data(f"/brokers/ids/{broker_id}", json.dumps(info).encode(), version=0)
        assert not any(isinstance(r, Exception) for r in tx.commit())
        brokers.append(zk)

    def elect(zk: KazooClient, broker_id: int) -> int:
        if not zk.exists("/controller_epoch"):
            zk.create("/controller_epoch", b"0")
        data, stat = zk.get("/controller_epoch")
        tx = zk.transaction()
        tx.create(
            "/controller",
            json.dumps({"version": 1, "brokerid": broker_id, "timestamp": "1"}).encode(),
            ephemeral=True,
        )
        tx.set_data("/controller_epoch", str(int(data) + 1).encode(), version=stat.version)
        tx.commit()
        return int(zk.exists("/controller_epoch").version)

    def fenced(zk: KazooClient, epoch_version: int, *ops: tuple) -> list:
        tx = zk.transaction()
        tx.check("/controller_epoch", epoch_version)
        for name, *args in ops:
            if name == "create":  # null data, as Kafka's createRecursive writes it
                tx._add(Create(args[0], args[1], OPEN_ACL_UNSAFE, 0))
            else:
                getattr(tx, name)(*args)
        return list(tx.commit())

    controller = brokers[0]
    epoch_version = elect(controller, 1)
    names = [f"topic-{i}" for i in range(topics)] + ["orders-é日本"]
    for t in names:
        assignment = {str(p): [1 + (p % 2), 1 + ((p + 1) % 2)] for p in range(partitions)}
        admin.create(f"/config/topics/{t}", b'{"version":1,"config":{}}')
        admin.create(
            f"/brokers/topics/{t}",
            json.dumps(
                {
                    "partitions": assignment,
                    "topic_id": "JWzPWgOsTDqCV2TLEX2N3g",
                    "adding_replicas": {},
                    "removing_replicas": {},
                    "version": 3,
                }
            ).encode(),
        )
        fenced(controller, epoch_version, ("create", f"/brokers/topics/{t}/partitions", None))
        for p in range(partitions):
            fenced(controller, epoch_version, ("create", f"/brokers/topics/{t}/partitions/{p}", None))
            state = {"controller_epoch": 1, "leader": 1, "version": 1, "leader_epoch": 0, "isr": [1, 2]}
            fenced(
                controller,
                epoch_version,
                ("create", f"/brokers/topics/{t}/partitions/{p}/state", json.dumps(state).encode()),
            )
    for i in range(isr_changes):
        path = f"/brokers/topics/{names[0]}/partitions/0/state"
        version = admin.exists(path).version
        state = {"controller_epoch": 1, "leader": 1, "version": 1, "leader_epoch": i + 1, "isr": [1]}
        fenced(controller, epoch_version, ("set_data", path, json.dumps(state).encode(), version))
        admin.create("/isr_change_notification/isr_change_", b'{"version":1,"partitions":[]}', sequence=True)
    # a fenced write with a stale epoch version: logged as a failed multi
    fenced(controller, epoch_version + 5, ("set_data", f"/brokers/topics/{names[0]}", b"{}"))
    # a pre-2.8 tool adding a partition through ZooKeeper: version 1, no topic_id
    admin.set(f"/brokers/topics/{names[1]}", b'{"version":1,"partitions":{"0":[1,2],"1":[2,1],"2":[1,2]}}')
    admin.set("/cluster/id", "caf\u00e9 \u65e5\u672c \U0001f600".encode())
    admin.create("/binary", bytes(range(256)))
    admin.create("/large", b"x" * 900_000)
    admin.set_acls("/binary", [make_digest_acl("admin", "secret", all=True)])
    admin.create("/empty", b"")
    # deletion: marker with null data, then the controller's fenced deletes (TopicDeletionManager)
    doomed = names[-1]
    admin.create(f"/admin/delete_topics/{doomed}", None)
    for p in range(partitions):
        fenced(controller, epoch_version, ("delete", f"/brokers/topics/{doomed}/partitions/{p}/state"))
        fenced(controller, epoch_version, ("delete", f"/brokers/topics/{doomed}/partitions/{p}"))
    for path in (
        f"/brokers/topics/{doomed}/partitions",
        f"/brokers/topics/{doomed}",
        f"/config/topics/{doomed}",
        f"/admin/delete_topics/{doomed}",
    ):
        fenced(controller, epoch_version, ("delete", path))
    # the controller's session ends (closeSession deletes /controller and /brokers/ids/1); broker 2 takes over
    controller.stop()
    controller.close()
    elect(brokers[1], 2)
    brokers[1].stop()
    brokers[1].close()
    admin.stop()
    admin.close()
