"""ZooKeeper as a simulated cluster's writes reach it: every write becomes the txn ZooKeeper would log.

Each request is checked the way `PrepRequestProcessor` checks it (zookeeper release-3.8.4: parent exists,
node exists, version matches, a multi fails whole), turned into a `Txn` and applied to a `DataTree`, so
zxids, versions, cversions, pzxids and ephemeral owners come out as ZooKeeper's own. The txns are
streamed into `version-2/log.<zxid>` files in ZooKeeper 3.5's format (no TxnDigest; Kafka 2.5-2.8
bundle the 3.5 client and most of their ensembles ran 3.5), rolled with a snapshot every
`snap_count` txns as `SyncRequestProcessor` does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from workbench.bundle import znode_json
from workbench.kafka.jvm_order import java_hashmap_order
from workbench.zookeeper import txns as op
from workbench.zookeeper.datatree import OPEN_ACL, DataTree
from workbench.zookeeper.files import TXNLOG_MAGIC, Snapshot, write_snapshot, write_txn_entry
from workbench.zookeeper.jute import Writer
from workbench.zookeeper.txns import Txn, write_txn

if TYPE_CHECKING:
    from workbench.simulate.real_zk import RealZooKeeper

NO_NODE, NODE_EXISTS, BAD_VERSION, NOT_EMPTY, RUNTIME_INCONSISTENCY = -101, -110, -103, -111, -2
_INTERNAL = ("", "/zookeeper", "/zookeeper/quota")  # created by DataTree itself, ACL index -1


class KeeperError(Exception):
    """A request ZooKeeper refused; `code` is KeeperException.Code (NONODE = -101, ...)."""

    def __init__(self, code: int, path: str) -> None:
        self.code, self.path = code, path
        super().__init__(f"{op.ERROR_NAMES.get(code, code)} for {path}")


@dataclass(frozen=True)
class Op:
    """One operation of a multi (kazoo/ZooKeeper's Op.create, Op.setData, Op.delete, Op.check)."""

    type: int
    path: str
    data: bytes | None = None
    version: int = -1
    ephemeral: bool = False


def create(path: str, data: bytes | None, ephemeral: bool = False) -> Op:
    return Op(op.CREATE, path, data, ephemeral=ephemeral)


def set_data(path: str, data: bytes | None, version: int = -1) -> Op:
    return Op(op.SET_DATA, path, data, version)


def delete(path: str, version: int = -1) -> Op:
    return Op(op.DELETE, path, version=version)


def check(path: str, version: int) -> Op:
    return Op(op.CHECK, path, version=version)


class SimZooKeeper:
    """A standalone ZooKeeper server (server id 0) for one simulated run."""

    def __init__(
        self,
        start_ms: int,
        txnlog: Path | None = None,
        snap_count: int = 100_000,
        mirror: RealZooKeeper | None = None,
    ) -> None:
        self.tree = DataTree.empty()
        self.mirror = mirror  # a real server that gets the same requests (real_zk.py)
        self.listeners: list[Callable[[Txn], None]] = []  # told each txn once the tree applied it
        self.zxid = 0
        # SessionTrackerImpl.initializeNextSessionId: (elapsed ms << 24) >>> 8, server id in the top byte.
        self._next_session = ((start_ms % 2**40) << 24) >> 8
        self._cxid: dict[int, int] = {}
        self._dir = txnlog
        self._snap_count = snap_count
        self._in_log = 0
        self._log: IO[bytes] | None = None
        if txnlog is not None:
            txnlog.mkdir(parents=True, exist_ok=True)
            self._snapshot()

    # -- sessions --------------------------------------------------------------------------------
    def create_session(self, now: int, timeout_ms: int = 18_000) -> int:
        self._next_session += 1
        sid = self.mirror.create_session(timeout_ms) if self.mirror else self._next_session
        self._log_txn(Txn(op.CREATE_SESSION, time=now, session_id=sid, timeout=timeout_ms))
        return sid

    def close_session(self, now: int, session: int) -> list[str]:
        """A client's close, or the server expiring the session: its ephemerals go. Returns their paths."""
        gone = sorted(p for p, n in self.tree.nodes.items() if n.stat.ephemeralOwner == session)
        if self.mirror:
            self.mirror.close_session(session)
        self._log_txn(Txn(op.CLOSE_SESSION, time=now, session_id=session))
        return gone

    # -- reads -----------------------------------------------------------------------------------
    def exists(self, path: str) -> bool:
        return path in self.tree.nodes

    def get(self, path: str) -> tuple[bytes | None, Any]:
        n = self.tree.nodes.get(path)
        if n is None:
            raise KeeperError(NO_NODE, path)
        return n.data, n.stat

    def children(self, path: str) -> list[str]:
        """In the server's order: a DataNode's `new HashSet<String>(8)` (children taken as added in name
        order, which shows only where names share a bin)."""
        if path not in self.tree.nodes:
            raise KeeperError(NO_NODE, path)
        return java_hashmap_order(sorted(self.tree.children.get(path, ())), capacity=8)

    # -- writes ----------------------------------------------------------------------------------
    def create(self, now: int, session: int, path: str, data: bytes | None, ephemeral: bool = False) -> str:
        return self.single(now, session, create(path, data, ephemeral))

    def create_recursive(self, now: int, session: int, path: str, data: bytes | None = None) -> None:
        """KafkaZkClient.createRecursive (2.8.2 l.1696): try the create; on NONODE create the parents
        (null data, an existing one is fine) and try again. The failed tries are in the txn log too."""
        try:
            self.create(now, session, path, data)
        except KeeperError as e:
            if e.code != NO_NODE:
                raise
            self._create_parent(now, session, path.rpartition("/")[0])
            self.create(now, session, path, data)

    def _create_parent(self, now: int, session: int, path: str) -> None:
        try:
            self.create(now, session, path, None)
        except KeeperError as e:
            if e.code == NO_NODE:
                self._create_parent(now, session, path.rpartition("/")[0])
                self._create_parent(now, session, path)
            elif e.code != NODE_EXISTS:
                raise

    def set_data(self, now: int, session: int, path: str, data: bytes | None, version: int = -1) -> int:
        self.single(now, session, set_data(path, data, version))
        return self.tree.nodes[path].stat.version

    def delete(self, now: int, session: int, path: str, version: int = -1) -> None:
        self.single(now, session, delete(path, version))

    def delete_recursive(self, now: int, session: int, path: str) -> None:
        """KafkaZkClient.deleteRecursive: children first, each its own request."""
        for child in self.children(path):
            self.delete_recursive(now, session, f"{path}/{child}")
        self.delete(now, session, path)

    def multi(self, now: int, session: int, ops: list[Op]) -> None:
        """All or nothing. A failed multi is still logged (PrepRequestProcessor @3.8.4 l.840-895): ops
        before the failing one as they were, the failing one as its error, later ones RUNTIMEINCONSISTENCY."""
        cxid = self._next_cxid(session)
        subs: list[Txn] = []
        failed: KeeperError | None = None
        pending = _Pending(self.tree)
        for i, o in enumerate(ops):
            if failed is not None:
                subs.append(Txn(op.ERROR, err=RUNTIME_INCONSISTENCY, multi_index=i))
                continue
            try:
                subs.append(pending.prepare(o, now, session, i))
            except KeeperError as e:
                failed = e
                subs.append(Txn(op.ERROR, err=e.code, multi_index=i))
        txn = Txn(op.MULTI, time=now, session_id=session, cxid=cxid, ops=subs)
        if self.mirror:
            self.mirror.request(session, ops, True, failed.code if failed else None)
        self._log_txn(txn)
        if failed is not None:
            raise failed

    def single(self, now: int, session: int, o: Op) -> str:
        """One operation as its own transaction (a multi of one is not the same txn)."""
        cxid = self._next_cxid(session)
        try:
            t = _Pending(self.tree).prepare(o, now, session, None)
        except KeeperError as e:
            if self.mirror:
                self.mirror.request(session, [o], False, e.code)
            self._log_txn(Txn(op.ERROR, time=now, session_id=session, cxid=cxid, err=e.code))
            raise
        if self.mirror:
            self.mirror.request(session, [o], False, None)
        t.time, t.session_id, t.cxid = now, session, cxid
        self._log_txn(t)
        return o.path

    def _next_cxid(self, session: int) -> int:
        self._cxid[session] = self._cxid.get(session, 0) + 1
        return self._cxid[session]

    def _log_txn(self, t: Txn) -> None:
        self.zxid += 1
        t.zxid = self.zxid
        for s in t.ops:
            s.zxid, s.time, s.session_id = t.zxid, t.time, t.session_id
        self.tree.apply(t)
        for listener in self.listeners:
            listener(t)
        if self._dir is None:
            return
        if self._log is None:
            self._log = open(self._dir / f"log.{self.zxid:x}", "wb")  # noqa: SIM115 (open across txns)
            w = Writer()
            w.int32(TXNLOG_MAGIC)
            w.int32(2)
            w.int64(0)
            self._log.write(w.getvalue())
        self._log.write(write_txn_entry(write_txn(t)))
        self._in_log += 1
        if self._in_log >= self._snap_count:
            self._log.close()
            self._log, self._in_log = None, 0
            self._snapshot()

    def _snapshot(self) -> None:
        assert self._dir is not None
        (self._dir / f"snapshot.{self.zxid:x}").write_bytes(write_snapshot(snapshot_of(self.tree, self.zxid)))

    def close(self) -> None:
        if self._log is not None:
            self._log.close()
            self._log = None

    def znodes_jsonl(self, out: Path) -> int:
        """zk/znodes.jsonl as `workbench capture zk` writes it (DESIGN.md), in the walk's order."""
        n = 0
        with open(out, "w", encoding="utf-8", newline="\n") as f:
            for line in znode_lines(self.tree):
                f.write(line + "\n")
                n += 1
        return n


class _Pending:
    """PrepRequestProcessor's checks against the tree as it would be after the ops prepared so far."""

    def __init__(self, tree: DataTree) -> None:
        self.tree = tree
        self.created: set[str] = set()
        self.deleted: set[str] = set()
        self.versions: dict[str, int] = {}
        self.cversions: dict[str, int] = {}

    def _exists(self, path: str) -> bool:
        return path in self.created or (path in self.tree.nodes and path not in self.deleted)

    def _version(self, path: str) -> int:
        return self.versions.get(path, self.tree.nodes[path].stat.version if path in self.tree.nodes else 0)

    def prepare(self, o: Op, now: int, session: int, index: int | None) -> Txn:
        parent = o.path.rpartition("/")[0]
        if o.type == op.CREATE:
            if self._exists(o.path):
                raise KeeperError(NODE_EXISTS, o.path)
            if not self._exists(parent):
                raise KeeperError(NO_NODE, o.path)
            pnode = self.tree.nodes.get(parent)
            if parent not in self.created and pnode is not None and pnode.stat.ephemeralOwner:
                raise KeeperError(-108, o.path)  # NOCHILDRENFOREPHEMERALS
            cversion = self.cversions.get(parent, pnode.stat.cversion if pnode else 0) + 1
            self.cversions[parent] = cversion
            self.created.add(o.path)
            self.deleted.discard(o.path)
            return Txn(
                op.CREATE,
                path=o.path,
                data=o.data,
                acl=list(OPEN_ACL),
                ephemeral=o.ephemeral,
                parent_cversion=cversion,
                multi_index=index,
            )
        if not self._exists(o.path):
            raise KeeperError(NO_NODE, o.path)
        if o.version not in (-1, self._version(o.path)):
            raise KeeperError(BAD_VERSION, o.path)
        if o.type == op.SET_DATA:
            self.versions[o.path] = self._version(o.path) + 1
            version = self.versions[o.path]
            return Txn(op.SET_DATA, path=o.path, data=o.data, version=version, multi_index=index)
        if o.type == op.DELETE:
            kids = {f"{o.path}/{c}" for c in self.tree.children.get(o.path, ())} | {
                p for p in self.created if p.rpartition("/")[0] == o.path
            }
            if kids - self.deleted:
                raise KeeperError(NOT_EMPTY, o.path)
            self.deleted.add(o.path)
            self.created.discard(o.path)
            return Txn(op.DELETE, path=o.path, multi_index=index)
        if o.type == op.CHECK:  # CheckVersionTxn holds checkAndIncVersion's answer: the version + 1
            version = self._version(o.path) + 1
            return Txn(op.CHECK, path=o.path, version=version, multi_index=index)
        raise ValueError(f"op {o.type} is not modelled")


def snapshot_of(tree: DataTree, zxid: int) -> Snapshot:
    """The tree as FileSnap.serialize writes it (3.5 form: no digest); other ACLs are numbered from 1
    in order of first use (/zookeeper/config's READ_ACL_UNSAFE is 1)."""
    snap = Snapshot(file=f"snapshot.{zxid:x}", zxid=zxid, sessions=dict(tree.sessions))
    index: dict[str, int] = {}
    for n in tree.walk():
        acl = tree.acls.get(n.path)
        if n.path in _INTERNAL:
            n_acl = -1
        else:
            key = repr(acl)
            if key not in index:
                index[key] = len(index) + 1
                snap.acls[index[key]] = list(acl or [])
            n_acl = index[key]
        snap.nodes.append(type(n)(n.path, n.data, n_acl, n.stat))
    return snap


def znode_lines(tree: DataTree) -> Iterator[str]:
    """One JSON line per znode, root first, siblings sorted, with ZooKeeper's stat names."""
    for n in tree.walk():
        path = n.path or "/"
        s = n.stat
        kids = len(tree.children.get(n.path, ()))
        stat = {
            "czxid": s.czxid,
            "mzxid": s.mzxid,
            "ctime": s.ctime,
            "mtime": s.mtime,
            "version": s.version,
            "cversion": 2 * s.cversion - kids,  # DataNode.copyStat: clients see changes, not creates
            "aversion": s.aversion,
            "ephemeralOwner": s.ephemeralOwner,
            "dataLength": len(n.data or b""),
            "numChildren": kids,
            "pzxid": s.pzxid,
        }
        yield znode_json(path, n.data, stat)
