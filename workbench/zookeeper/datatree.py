"""ZooKeeper's tree rebuilt from a snapshot plus the txns after it, the way a server restores itself.

DataTree.processTxn / createNode / deleteNode / setData / setACL / killSession and
FileTxnSnapLog.processTransaction (release-3.8.4) are followed, including the parts that make replay
onto a fuzzy snapshot idempotent (a create of an existing node only raises the parent's cversion). The
tree digest is DigestCalculator's, so a replayed tree can be checked against the digest ZooKeeper logged
with each txn (3.6+).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import replace

from workbench.zookeeper import txns as op
from workbench.zookeeper.files import Node, Snapshot, Stat
from workbench.zookeeper.txns import ACL, Txn

CONTAINER_OWNER = -(2**63)  # EphemeralType.CONTAINER_EPHEMERAL_OWNER = Long.MIN_VALUE
TTL_OWNER = -(2**56)  # EphemeralType EXTENDED_MASK 0xff00000000000000 as a signed long
OPEN_ACL = [ACL(31, "world", "anyone")]  # ReferenceCountedACLCache.OPEN_UNSAFE_ACL_ID = -1
READ_ACL = [ACL(1, "world", "anyone")]  # ZooDefs.Ids.READ_ACL_UNSAFE
_DIGEST_STAT = struct.Struct(">qqqqqiiiq")


class DataTree:
    """Znodes by path, children by parent path, sessions by id."""

    def __init__(self) -> None:
        self.nodes: dict[str, Node] = {}
        self.children: dict[str, set[str]] = {}
        self.acls: dict[str, list[ACL] | None] = {}
        self.sessions: dict[int, int] = {}
        self.last_zxid = 0

    @classmethod
    def from_snapshot(cls, snap: Snapshot) -> DataTree:
        tree = cls()
        tree.sessions = dict(snap.sessions)
        tree.last_zxid = snap.zxid
        for n in snap.nodes:
            tree._add(
                n.path, replace(n, stat=replace(n.stat)), OPEN_ACL if n.acl == -1 else snap.acls.get(n.acl)
            )
        return tree

    @classmethod
    def empty(cls) -> DataTree:
        """A new server's tree, as DataTree's constructor makes it since 3.5: the root, /zookeeper,
        /zookeeper/quota, and /zookeeper/config (addConfigNode: READ_ACL_UNSAFE, aversion -1)."""
        tree = cls()
        for path in ("", "/zookeeper", "/zookeeper/quota"):
            tree._add(path, Node(path, b"", -1, Stat(0, 0, 0, 0, 0, 0, 0, 0, 0)), OPEN_ACL)
        config = "/zookeeper/config"
        tree._add(config, Node(config, b"", -1, Stat(0, 0, 0, 0, 0, 0, -1, 0, 0)), READ_ACL)
        return tree

    def _add(self, path: str, node: Node, acl: list[ACL] | None) -> None:
        self.nodes[path] = node
        self.acls[path] = acl
        self.children.setdefault(path, set())
        if path:
            parent, _, name = path.rpartition("/")
            self.children.setdefault(parent, set()).add(name)

    def apply(self, t: Txn) -> int:
        """Apply one txn as ZooKeeper restores it; returns ZooKeeper's error code (0 = applied)."""
        if t.type == op.CREATE_SESSION:
            self.sessions[t.session_id] = t.timeout or 0
        elif t.type == op.CLOSE_SESSION:
            self.sessions.pop(t.session_id, None)
            owned = {p for p, n in self.nodes.items() if n.stat.ephemeralOwner == t.session_id}
            for path in [*(p for p in (t.paths or []) if p is not None), *sorted(owned - set(t.paths or []))]:
                self._delete(path, t.zxid)
        err = self._process(t)
        if t.type in op.CREATES and t.multi_index is None and err == -110 and t.path:
            self._raise_cversion(t.path.rpartition("/")[0], t.parent_cversion or -1, t.zxid)
        self.last_zxid = max(self.last_zxid, t.zxid)
        return err

    def _process(self, t: Txn) -> int:
        kind = t.type
        if kind == op.MULTI:
            if t.failed:
                return next((s.err or 0 for s in t.ops if s.type == op.ERROR and s.err), -2)
            errs = [self._process(s) for s in t.ops]
            return next((e for e in errs if e), 0)
        if kind in op.CREATES:
            owner = {op.CREATE_CONTAINER: CONTAINER_OWNER}.get(kind, 0)
            if kind == op.CREATE_TTL:
                owner = TTL_OWNER | (t.ttl or 0)
            elif kind in (op.CREATE, op.CREATE2) and t.ephemeral:
                owner = t.session_id
            return self._create(t, owner)
        if kind in op.DELETES:
            return self._delete(t.path or "", t.zxid)
        if kind in (op.SET_DATA, op.RECONFIG):
            n = self.nodes.get(t.path or "")
            if n is None:
                return -101
            n.data = t.data
            n.stat.mtime, n.stat.mzxid, n.stat.version = t.time, t.zxid, t.version or 0
            return 0
        if kind == op.SET_ACL:
            n = self.nodes.get(t.path or "")
            if n is None:
                return -101
            n.stat.aversion = t.version or 0
            self.acls[n.path] = t.acl
            return 0
        if kind == op.ERROR:
            return t.err or 0
        return 0

    def _create(self, t: Txn, owner: int) -> int:
        path = t.path or ""
        parent_path, _, name = path.rpartition("/")
        parent = self.nodes.get(parent_path)
        if parent is None:
            return -101
        if name in self.children[parent_path]:
            return -110
        cversion = parent.stat.cversion + 1 if t.parent_cversion in (None, -1) else t.parent_cversion
        if cversion > parent.stat.cversion:
            parent.stat.cversion, parent.stat.pzxid = cversion, t.zxid
        stat = Stat(t.zxid, t.zxid, t.time, t.time, 0, 0, 0, owner, t.zxid)
        self._add(path, Node(path, t.data, 0, stat), t.acl)
        return 0

    def _delete(self, path: str, zxid: int) -> int:
        parent_path, _, name = path.rpartition("/")
        parent = self.nodes.get(parent_path)
        if parent is None:
            return -101
        self.children[parent_path].discard(name)
        if zxid > parent.stat.pzxid:
            parent.stat.pzxid = zxid
        if path not in self.nodes:
            return -101
        del self.nodes[path], self.acls[path]
        self.children.pop(path, None)
        return 0

    def _raise_cversion(self, path: str, cversion: int, zxid: int) -> None:
        node = self.nodes.get(path)
        if node is None:
            return
        if cversion == -1:
            cversion = node.stat.cversion + 1
        if cversion > node.stat.cversion:
            node.stat.cversion, node.stat.pzxid = cversion, zxid

    def walk(self) -> Iterator[Node]:
        """Nodes in pre-order from the root, children sorted (the snapshot's own order is a HashSet's)."""
        stack = [""]
        while stack:
            path = stack.pop()
            yield self.nodes[path]
            base = "" if path == "" else path
            stack.extend(f"{base}/{c}" for c in sorted(self.children.get(path, ()), reverse=True))

    def newest_change(self) -> int:
        """The newest zxid the tree shows: a create (czxid), a setData (mzxid), a child created or deleted
        (the parent's pzxid). Above a snapshot's name, it is a fuzzy snapshot's change made while writing."""
        return max((max(n.stat.czxid, n.stat.mzxid, n.stat.pzxid) for n in self.nodes.values()), default=0)

    def digest(self) -> int:
        """DataTree's tree digest: the sum of every node's DigestCalculator CRC32, as a signed long."""
        total = sum(node_digest(n) for n in self.nodes.values())
        total &= 2**64 - 1
        return total - 2**64 if total >= 2**63 else total


def node_digest(n: Node) -> int:
    """DigestCalculator.calculateDigest: CRC32 of path, data and stat; nodes under /zookeeper/ count 0."""
    if n.path.startswith("/zookeeper/"):
        return 0
    s = n.stat
    crc = zlib.crc32(n.path.encode("utf-8"))
    if n.data is not None:
        crc = zlib.crc32(n.data, crc)
    stat = (s.czxid, s.mzxid, s.pzxid, s.ctime, s.mtime, s.version, s.cversion, s.aversion, s.ephemeralOwner)
    return zlib.crc32(_DIGEST_STAT.pack(*stat), crc)


def replay(tree: DataTree, txns: Iterable[Txn], upto: int | None = None) -> DataTree:
    """Apply txns newer than the tree, in zxid order, up to and including zxid `upto`."""
    start = tree.last_zxid
    for t in sorted((t for t in txns if t.zxid > start and (upto is None or t.zxid <= upto)), key=_zxid):
        tree.apply(t)
    return tree


def _zxid(t: Txn) -> int:
    return t.zxid
