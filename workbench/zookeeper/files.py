"""The files of a ZooKeeper dataDir's version-2/: txn logs (`log.<zxid>`) and snapshots
(`snapshot.<zxid>`), read entry by entry with every checksum checked.

Txn log: FileTxnLog, Util.readTxnBytes, FilePadding; snapshot: FileSnap, SnapStream, SerializeUtils,
DataTree.serialize, ReferenceCountedACLCache (release-3.8.4; 3.5 snapshots lack the digest section).
Damage never raises: it is a Problem naming the byte offset, and what came before it is kept.
"""

from __future__ import annotations

import gzip
import mmap
import os
import re
import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from workbench.zookeeper.jute import MAX_BUFFER, JuteError, Reader, Writer
from workbench.zookeeper.txns import ACL, Txn, _acls, _write_acls, read_txn

TXNLOG_MAGIC = 0x5A4B4C47  # "ZKLG"
SNAP_MAGIC = 0x5A4B534E  # "ZKSN"
VERSION = 2
EOR = 0x42  # 'B', written after every txn entry
FILE_NAME = re.compile(r"^(log|snapshot)\.([0-9a-fA-F]+)(\.gz|\.snappy)?$")  # Util.makeLogName
_ENTRY = struct.Struct(">qi")


@dataclass(frozen=True)
class Problem:
    """Damage found in a file: where (byte offset) and what; `raw` shows the bytes there in hex.
    `fatal`: ZooKeeper would refuse the file for it (bytes after a snapshot's last seal it never reads)."""

    file: str
    offset: int
    reason: str
    raw: str = ""
    fatal: bool = True


@dataclass
class Stat:
    """StatPersisted, in ZooKeeper's field names."""

    czxid: int
    mzxid: int
    ctime: int
    mtime: int
    version: int
    cversion: int
    aversion: int
    ephemeralOwner: int  # ZooKeeper's own name
    pzxid: int


@dataclass
class Node:
    path: str
    data: bytes | None
    acl: int  # index into the snapshot's ACL cache; -1 = world:anyone with all permissions
    stat: Stat


@dataclass
class Snapshot:
    file: str
    zxid: int  # from the file name: the last zxid applied when the snapshot began (it is fuzzy)
    sessions: dict[int, int] = field(default_factory=dict)  # session id -> timeout ms
    acls: dict[int, list[ACL]] = field(default_factory=dict)
    nodes: list[Node] = field(default_factory=list)
    digest: tuple[int, int, int] | None = None  # ZxidDigest (zxid, digestVersion, digest), 3.6+
    problems: list[Problem] = field(default_factory=list)

    @property
    def restorable(self) -> bool:
        """Whether ZooKeeper would restore from it: FileSnap.deserialize skips a snapshot that fails to
        read or to check its seals, and tries the next older one (release-3.8.4, FileSnap.java)."""
        return not any(p.fatal for p in self.problems)


def zxid_of(name: str) -> int | None:
    """The zxid in a dataDir file name (`log.1e`, `snapshot.32f`), or None for other names."""
    m = FILE_NAME.match(name)
    return int(m.group(2), 16) if m else None


def kind_of(name: str) -> str | None:
    m = FILE_NAME.match(name)
    return m.group(1) if m else None


def _hex(data: bytes | memoryview | mmap.mmap, offset: int, n: int = 32) -> str:
    return bytes(data[offset : offset + n]).hex(" ", 4)


def _map(path: Path) -> bytes | mmap.mmap:
    with open(path, "rb") as f:
        if os.fstat(f.fileno()).st_size == 0:
            return b""
        return mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)


def read_txn_log(path: str | os.PathLike[str], name: str | None = None) -> Iterator[Txn | Problem]:
    """Every txn of a txn log, in file order, and a Problem where the file is damaged.

    Like FileTxnIterator, reading ends at a zero length (the zero preallocation after the last txn) or a
    file cut inside an entry. Where ZooKeeper would stop at damage inside the file (a bad checksum, an
    impossible length, a missing end-of-record byte, a txn that does not decode), this goes on from the
    next intact entry (`_next_intact`), so the txns after the damage are kept and only the damaged ones
    are missing: a gap in the zxids that the analyses see (`model.history_gaps`).
    """
    name = name or str(path)
    data = _map(Path(path))
    try:
        yield from _txn_entries(data, name)
    finally:
        if isinstance(data, mmap.mmap):
            data.close()


def _txn_entries(data: bytes | mmap.mmap, name: str) -> Iterator[Txn | Problem]:
    view = memoryview(data)
    try:
        if len(data) < 16:
            yield Problem(name, 0, f"truncated file header: {len(data)} bytes, a txn log starts with 16")
            return
        r = Reader(view)
        magic, version = r.int32(), r.int32()
        r.int64("dbid")
        if magic != TXNLOG_MAGIC or version != VERSION:
            yield Problem(
                name, 0, f"not a ZooKeeper txn log: magic {magic:#x} version {version}", _hex(data, 0)
            )
            return
        pos, end, last_zxid = 16, len(data), -1
        while pos < end:
            if end - pos < _ENTRY.size:
                if any(data[pos:end]):
                    yield Problem(name, pos, "partial txn: file ends inside an entry header", _hex(data, pos))
                return
            checksum, length = _ENTRY.unpack_from(data, pos)
            if length == 0:
                return  # preallocated zeros: end of the log
            body = pos + _ENTRY.size
            if 0 < length <= MAX_BUFFER and body + length + 1 > end:
                yield Problem(name, pos, "partial txn: file ends inside the last txn", _hex(data, pos))
                return
            damage = _damage(view, pos, checksum, length)
            if damage is None:
                try:
                    txn = read_txn(bytes(view[body : body + length]), pos)
                except (JuteError, EOFError) as e:
                    damage = f"undecodable txn: {e}"
                else:
                    last_zxid = txn.zxid
                    yield txn
                    pos = body + length + 1
                    continue
            resume = _next_intact(view, pos + 1, last_zxid)
            where = f"; the next intact txn is at byte {resume}" if resume else "; no intact txn after it"
            yield Problem(name, pos, damage + where, _hex(data, pos))
            if resume is None:
                return
            pos = resume
    finally:
        view.release()


def _damage(view: memoryview, pos: int, checksum: int, length: int) -> str | None:
    """What is wrong with the entry framed at `pos` (None: intact framing and checksum)."""
    if length < 0 or length > MAX_BUFFER:
        return f"impossible txn length {length}"
    body = pos + _ENTRY.size
    if zlib.adler32(view[body : body + length]) != checksum & 0xFFFFFFFF:
        return "bad checksum: Adler32 of the txn does not match"
    if view[body + length] != EOR:
        return "partial txn: no end-of-record byte 'B'"
    return None


def _next_intact(view: memoryview, start: int, after_zxid: int) -> int | None:
    """The first offset from `start` where an intact entry begins: a sane length, its end-of-record
    byte, a matching Adler32, a payload that decodes, and a zxid after the last one read. Adler32 and the
    end-of-record byte together make a false start vanishingly unlikely."""
    end = len(view)
    for pos in range(start, end - _ENTRY.size):
        checksum, length = _ENTRY.unpack_from(view, pos)
        body = pos + _ENTRY.size
        if length <= 0 or length > MAX_BUFFER or body + length >= end or view[body + length] != EOR:
            continue
        if _damage(view, pos, checksum, length) is not None:
            continue
        try:
            if read_txn(bytes(view[body : body + length]), pos).zxid > after_zxid:
                return pos
        except (JuteError, EOFError):
            continue
    return None


def write_txn_entry(payload: bytes) -> bytes:
    """One txn log entry around a payload, as FileTxnLog.append writes it."""
    return _ENTRY.pack(zlib.adler32(payload), len(payload)) + payload + bytes((EOR,))


def read_snapshot(path: str | os.PathLike[str], name: str | None = None) -> Snapshot:
    """A CHECKED snapshot (plain or .gz); both Adler32 seals and the end marker are checked."""
    p = Path(path)
    name = name or str(path)
    snap = Snapshot(name, zxid_of(p.name) or 0)
    if p.name.endswith(".snappy"):
        snap.problems.append(Problem(name, 0, "snappy-compressed snapshots are not supported; unpack it"))
        return snap
    data: bytes | mmap.mmap
    try:
        data = gzip.decompress(p.read_bytes()) if p.name.endswith(".gz") else _map(p)
    except (OSError, EOFError, zlib.error) as e:
        snap.problems.append(Problem(name, 0, f"unreadable gzip: {e}"))
        return snap
    try:
        _snapshot_body(memoryview(data), snap)
    finally:
        if isinstance(data, mmap.mmap):
            data.close()
    return snap


def _snapshot_body(view: memoryview, snap: Snapshot) -> None:
    name = snap.file
    r = Reader(view)
    try:
        magic, version = r.int32(), r.int32()
        r.int64("dbid")
        if magic != SNAP_MAGIC or version != VERSION:
            snap.problems.append(
                Problem(name, 0, f"not a ZooKeeper snapshot: magic {magic:#x}", _hex(view, 0))
            )
            return
        for _ in range(r.int32("session count")):
            sid = r.int64("session id")
            snap.sessions[sid] = r.int32("timeout")
        for _ in range(r.int32("acl cache size")):
            index = r.int64("acl index")
            snap.acls[index] = _acls(r) or []
        while True:
            at = r.pos
            path = r.ustring("path")
            if path == "/":
                break
            data, acl = r.buffer("data"), r.int64("acl")
            stat = _read_stat(r)
            if path is None:
                raise JuteError("null node path", at)
            snap.nodes.append(Node(path, data, acl, stat))
        _seal(view, r, snap, "first")
        if r.remaining():
            zxid, digest_version = r.int64("digest zxid"), r.int32("digest version")
            digest = int(r.ustring("digest") or "0", 16) if digest_version < 2 else r.int64("digest")
            snap.digest = (zxid, digest_version, digest)
            _seal(view, r, snap, "second")
        if r.remaining():
            snap.problems.append(
                Problem(name, r.pos, f"{r.remaining()} bytes after the last seal", _hex(view, r.pos), False)
            )
    except (JuteError, EOFError) as e:
        at = e.offset if isinstance(e, JuteError) else r.pos
        snap.problems.append(Problem(name, at, f"truncated or damaged snapshot: {e}", _hex(view, at)))


def _read_stat(r: Reader) -> Stat:
    czxid, mzxid, ctime, mtime = r.int64(), r.int64(), r.int64(), r.int64()
    version, cversion, aversion = r.int32(), r.int32(), r.int32()
    return Stat(czxid, mzxid, ctime, mtime, version, cversion, aversion, r.int64(), r.int64())


def _seal(view: memoryview, r: Reader, snap: Snapshot, which: str) -> None:
    """SnapStream.sealStream: Adler32 of every byte so far, then the string "/"."""
    at = r.pos
    expected = zlib.adler32(view[:at])
    found = r.int64("checksum")
    if found & 0xFFFFFFFF != expected or found >> 32:
        snap.problems.append(
            Problem(snap.file, at, f"bad checksum: {which} Adler32 seal does not match", _hex(view, at))
        )
    if r.ustring("seal end") != "/":
        raise JuteError(f"{which} seal is not followed by '/'", r.pos)


def write_snapshot(snap: Snapshot) -> bytes:
    """A CHECKED snapshot from its parts, seals recomputed: the inverse of read_snapshot."""
    w = Writer()
    w.int32(SNAP_MAGIC)
    w.int32(VERSION)
    w.int64(-1)
    w.int32(len(snap.sessions))
    for sid, timeout in snap.sessions.items():
        w.int64(sid)
        w.int32(timeout)
    w.int32(len(snap.acls))
    for index, acls in snap.acls.items():
        w.int64(index)
        _write_acls(w, acls)
    for n in snap.nodes:
        s = n.stat
        w.ustring(n.path)
        w.buffer(n.data)
        w.int64(n.acl)
        for v in (s.czxid, s.mzxid, s.ctime, s.mtime):
            w.int64(v)
        for v in (s.version, s.cversion, s.aversion):
            w.int32(v)
        w.int64(s.ephemeralOwner)
        w.int64(s.pzxid)
    w.ustring("/")
    out = _sealed(w.getvalue())
    if snap.digest is not None:
        zxid, digest_version, digest = snap.digest
        d = Writer()
        d.int64(zxid)
        d.int32(digest_version)
        if digest_version < 2:
            d.ustring(f"{digest:x}")
        else:
            d.int64(digest)
        out = _sealed(out + d.getvalue())
    return out


def _sealed(body: bytes) -> bytes:
    w = Writer()
    w.int64(zlib.adler32(body))
    w.ustring("/")
    return body + w.getvalue()
