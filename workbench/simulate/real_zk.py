"""`--zk HOST:PORT`: the story's ZooKeeper requests sent, one by one, to a real server through kazoo.

Each session of the story (a broker's, an admin tool's) is a kazoo client of its own, so the server logs
the same txns the model logs: createSession, the creates, setDatas and deletes (and the error txns of
refused ones), multis, closeSession. The server must be fresh (zxid 0) so that its zxids are the
story's; the model takes the server's session ids, so ephemeral owners agree too. What the server
answers is checked against what the model expected, and any difference stops the run: the model is
wrong. The txn times are the server's clock, not the story's (hours of story pass in seconds).
"""

from __future__ import annotations

import contextlib
import logging
import shutil
import socket
from pathlib import Path
from typing import TYPE_CHECKING

from kazoo.client import KazooClient
from kazoo.exceptions import (
    BadVersionError,
    KazooException,
    NoChildrenForEphemeralsError,
    NodeExistsError,
    NoNodeError,
    NotEmptyError,
    RolledBackError,
)
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.protocol.serialization import CheckVersion, Create, Delete, SetData
from kazoo.security import OPEN_ACL_UNSAFE

from workbench.errors import WorkbenchError
from workbench.zookeeper import txns as op

if TYPE_CHECKING:
    from workbench.simulate.zookeeper import Op

# KeeperException.Code of the kazoo errors the model predicts (zookeeper.py's KeeperError codes).
CODES: dict[type[Exception], int] = {
    NoNodeError: -101,
    NodeExistsError: -110,
    BadVersionError: -103,
    NotEmptyError: -111,
    NoChildrenForEphemeralsError: -108,
    RolledBackError: -2,
}


class RealZooKeeperError(WorkbenchError, RuntimeError):
    """The real server could not be used, or answered other than the model expected."""


def server_zxid(hosts: str, timeout: float = 10.0) -> int:
    """The server's last zxid from the `srvr` four-letter word (whitelisted by default), without
    opening a session, which would cost txns."""
    host, _, port = hosts.split(",")[0].rpartition(":")
    try:
        with socket.create_connection((host, int(port)), timeout=timeout) as s:
            s.sendall(b"srvr")
            answer = b"".join(iter(lambda: s.recv(4096), b"")).decode("utf-8", "replace")
    except (OSError, ValueError) as e:
        raise RealZooKeeperError(f"--zk {hosts}: cannot ask the server for its zxid ({e})") from e
    for line in answer.splitlines():
        if line.startswith("Zxid:"):
            return int(line.split(":", 1)[1].strip(), 16)
    raise RealZooKeeperError(f"--zk {hosts}: the server did not answer srvr with its Zxid: {answer[:200]!r}")


class RealZooKeeper:
    """The real server the story's requests are mirrored to; `data_dir` holds its version-2/."""

    def __init__(self, hosts: str, data_dir: Path) -> None:
        self.hosts, self.data_dir = hosts, data_dir
        if self.txn_dir is None:
            raise RealZooKeeperError(
                f"--zk-data-dir {data_dir}: no version-2/ there; expected the server's dataDir"
            )
        zxid = server_zxid(hosts)
        if zxid != 0:
            raise RealZooKeeperError(
                f"--zk {hosts}: the server's last zxid is 0x{zxid:x}; expected a fresh server (zxid 0), "
                "so that its zxids are the story's"
            )
        self.clients: dict[int, KazooClient] = {}

    @property
    def txn_dir(self) -> Path | None:
        for d in (self.data_dir / "version-2", self.data_dir):
            if d.name == "version-2" and d.is_dir():
                return d
        return None

    def create_session(self, timeout_ms: int) -> int:
        client = KazooClient(
            hosts=self.hosts, timeout=timeout_ms / 1000, logger=logging.getLogger(f"{__name__}.kazoo")
        )
        try:
            client.start(timeout=15)
        except KazooTimeoutError as e:
            client.close()
            raise RealZooKeeperError(f"--zk {self.hosts}: cannot connect within 15 s") from e
        session = client.client_id[0]
        self.clients[session] = client
        return session

    def close_session(self, session: int) -> None:
        client = self.clients.pop(session)
        client.stop()
        client.close()

    def request(self, session: int, ops: list[Op], multi: bool, expected: int | None) -> None:
        """One request (a single op, or a multi of them); `expected` is the error code the model
        predicts for it (None: success). A failed multi answers with its first failing op's error."""
        client = self.clients[session]
        what = f"multi of {len(ops)}" if multi else f"{op.OP_NAMES[ops[0].type]} {ops[0].path}"
        try:
            if multi:
                t = client.transaction()
                for o in ops:  # kazoo's TransactionRequest.create refuses the null data Kafka's multis
                    t._add(_multi_op(o))  # write, so the transaction gets the requests themselves
                results = t.commit()
                failed = [
                    r for r in results if isinstance(r, Exception) and not isinstance(r, RolledBackError)
                ]
                if failed:
                    raise failed[0]
            else:
                _send(client, ops[0])
            got = None
        except KazooException as e:
            got = _code(e)
        if expected != got:
            said = {c: "OK" if c is None else op.ERROR_NAMES.get(c, str(c)) for c in (expected, got)}
            answer = f"ZooKeeper at {self.hosts} answered {said[got]} to {what}"
            raise RealZooKeeperError(f"{answer}; the model expected {said[expected]}")

    def copy_txn_files(self, into: Path) -> list[str]:
        """The server's version-2/ files (txn logs and snapshots) as they are now."""
        assert self.txn_dir is not None
        into.mkdir(parents=True, exist_ok=True)
        names = sorted(f.name for f in self.txn_dir.iterdir() if f.name.startswith(("log.", "snapshot.")))
        for name in names:
            shutil.copyfile(self.txn_dir / name, into / name)
        return names

    def close(self) -> None:
        """Close the sessions still open (after the copy: their closeSession txns are not evidence)."""
        for session in list(self.clients):
            with contextlib.suppress(KazooException):
                self.close_session(session)


def _code(e: Exception) -> int:
    for cls, code in CODES.items():
        if isinstance(e, cls):
            return code
    raise RealZooKeeperError(f"ZooKeeper answered {type(e).__name__}: {e}") from e


def _send(client: KazooClient, o: Op) -> None:
    if o.type == op.CREATE:
        client.create(o.path, o.data, ephemeral=o.ephemeral)
    elif o.type == op.SET_DATA:
        client.set(o.path, o.data, o.version)
    elif o.type == op.DELETE:
        client.delete(o.path, o.version)
    else:
        raise RealZooKeeperError(f"{op.OP_NAMES.get(o.type, o.type)} is not mirrored")


def _multi_op(o: Op) -> Create | SetData | Delete | CheckVersion:
    if o.type == op.CREATE:
        return Create(o.path, o.data, OPEN_ACL_UNSAFE, 1 if o.ephemeral else 0)  # flags: EPHEMERAL = 1
    if o.type == op.SET_DATA:
        return SetData(o.path, o.data, o.version)
    if o.type == op.DELETE:
        return Delete(o.path, o.version)
    if o.type == op.CHECK:
        return CheckVersion(o.path, o.version)
    raise RealZooKeeperError(f"{op.OP_NAMES.get(o.type, o.type)} is not mirrored")
