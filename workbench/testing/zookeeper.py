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

JARS = Path(os.environ.get("WORKBENCH_ZK_JARS", "/usr/share/java"))
INSTALL_HINT = "On Debian/Ubuntu: sudo apt-get install zookeeper (it puts zookeeper.jar in /usr/share/java)"


class ZooKeeperMissing(RuntimeError):
    """ZooKeeper's jar or Java is not installed."""


def classpath() -> str:
    """zookeeper.jar (its manifest names the jars it needs) plus a silent slf4j binding."""
    jar = JARS / "zookeeper.jar"
    if not jar.is_file():
        raise ZooKeeperMissing(f"{jar} not found. {INSTALL_HINT}")
    if shutil.which("java") is None:
        raise ZooKeeperMissing("java is not on the PATH (apt-get install openjdk-17-jre-headless)")
    return f"{jar}:{JARS / 'slf4j-nop.jar'}"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


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
        self.port = _free_port()
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

    def stop(self) -> None:
        if self._process is not None:
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


def _run_tool(main_class: str, *args: str) -> str:
    cmd = ["java", "-Duser.timezone=UTC", "-Duser.language=en", "-cp", classpath(), main_class, *args]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300, errors="surrogateescape")
    if done.returncode != 0:
        raise RuntimeError(f"{main_class} failed on {args}: {done.stderr or done.stdout}")
    return done.stdout


def txn_log_toolkit(path: str | os.PathLike[str]) -> str:
    """ZooKeeper's own dump of a txn log (`TxnLogToolkit -d`)."""
    return _run_tool("org.apache.zookeeper.server.persistence.TxnLogToolkit", "-d", str(path))


def snapshot_formatter(path: str | os.PathLike[str]) -> str:
    """ZooKeeper's own dump of a snapshot, data in base64 (`SnapshotFormatter -d`)."""
    return _run_tool("org.apache.zookeeper.server.SnapshotFormatter", "-d", str(path))
