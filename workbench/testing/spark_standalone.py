"""A real Spark standalone cluster (one master, one worker) from the installed pyspark, on loopback.

Started with pyspark's own `bin/spark-class` and Spark's Master and Worker classes, as `sbin/start-master.sh`
and `start-worker.sh` do (pip's pyspark ships bin/ but not those scripts). Each runs as a child JVM we start
and stop, like the ZooKeeper harness; the worker's executors run this interpreter for Python.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pyspark

from workbench.testing import free_port


def _spark_class() -> Path:
    return Path(pyspark.__file__).parent / "bin" / "spark-class"


class SparkStandalone:
    """A master and one worker with `cores` cores and `memory` for executors."""

    def __init__(self, base_dir: Path, cores: int = 2, memory: str = "2g") -> None:
        self.base_dir = Path(base_dir)
        self.port = free_port()
        self.cores = cores
        self.memory = memory
        self._processes: list[subprocess.Popen[bytes]] = []

    @property
    def url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def _start(self, name: str, args: list[str]) -> subprocess.Popen[bytes]:
        env = {**os.environ, "SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable}
        env.setdefault("SPARK_HOME", str(_spark_class().parent.parent))
        env["SPARK_WORKER_DIR"] = str(self.base_dir / "work")
        log = open(self.base_dir / f"{name}.out", "ab")  # noqa: SIM115 - the child keeps it
        process = subprocess.Popen(
            [str(_spark_class()), *args], stdout=log, stderr=subprocess.STDOUT, env=env
        )
        self._processes.append(process)
        return process

    def start(self, timeout: float = 60.0) -> None:
        """Start the master, wait until it listens, start the worker, wait until it has registered."""
        self.base_dir.mkdir(parents=True, exist_ok=True)
        master = "org.apache.spark.deploy.master.Master"
        worker = "org.apache.spark.deploy.worker.Worker"
        ui = ["--webui-port", str(free_port())]
        self._start("master", [master, "--host", "127.0.0.1", "--port", str(self.port), *ui])
        self._wait(self._listening, timeout, "the master to listen")
        self._start(
            "worker",
            [
                worker,
                self.url,
                "--host",
                "127.0.0.1",
                "--cores",
                str(self.cores),
                "--memory",
                self.memory,
                *ui,
            ],
        )
        self._wait(self._worker_registered, timeout, "the worker to register with the master")

    def _listening(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                return True
        except OSError:
            return False

    def _worker_registered(self) -> bool:
        log = self.base_dir / "worker.out"
        return log.exists() and "Successfully registered with master" in log.read_text(errors="replace")

    def _wait(self, ready: Callable[[], bool], timeout: float, what: str) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if any(p.poll() is not None for p in self._processes):
                self.stop()
                raise RuntimeError(
                    f"a Spark daemon exited while waiting for {what}; see {self.base_dir}/*.out"
                )
            if ready():
                return
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"timed out after {timeout} s waiting for {what}; see {self.base_dir}/*.out")

    def stop(self) -> None:
        for p in reversed(self._processes):
            p.terminate()
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self._processes = []
