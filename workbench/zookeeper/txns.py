"""ZooKeeper transactions: op codes, the records each one carries, and how to read and write them.

Op codes: ZooDefs.OpCode; names: Request.op2String; record per type: SerializeUtils.deserializeTxn (top
level) and DataTree.processTxn's multi case (sub-ops); records: zookeeper.jute (all release-3.8.4).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from workbench.zookeeper.jute import JuteError, Reader, Writer

CREATE, DELETE, SET_DATA, SET_ACL, CHECK, MULTI, CREATE2, RECONFIG = 1, 2, 5, 7, 13, 14, 15, 16
CREATE_CONTAINER, DELETE_CONTAINER, CREATE_TTL = 19, 20, 21
CREATE_SESSION, CLOSE_SESSION, ERROR = -10, -11, -1


def hex_zxid(zxid: int) -> str:
    """A zxid (or session id) as ZooKeeper prints it: '0x8f'."""
    return f"0x{zxid:x}"


OP_NAMES = {
    CREATE: "create",
    DELETE: "delete",
    SET_DATA: "setData",
    SET_ACL: "setACL",
    CHECK: "check",
    MULTI: "multi",
    CREATE2: "create2",
    RECONFIG: "reconfig",
    CREATE_CONTAINER: "createContainer",
    DELETE_CONTAINER: "deleteContainer",
    CREATE_TTL: "createTtl",
    CREATE_SESSION: "createSession",
    CLOSE_SESSION: "closeSession",
    ERROR: "error",
}
CREATES = (CREATE, CREATE2, CREATE_CONTAINER, CREATE_TTL)
DELETES = (DELETE, DELETE_CONTAINER)
SUB_OPS = (*CREATES, *DELETES, SET_DATA, CHECK, ERROR)  # what a multi may hold
# KeeperException.Code values seen in error txns (KeeperException.java).
ERROR_NAMES = {
    -2: "RUNTIMEINCONSISTENCY",
    -101: "NONODE",
    -102: "NOAUTH",
    -103: "BADVERSION",
    -108: "NOCHILDRENFOREPHEMERALS",
    -110: "NODEEXISTS",
    -111: "NOTEMPTY",
    -114: "INVALIDACL",
}


def op_name(op: int) -> str:
    return OP_NAMES.get(op, f"unknown {op}")


@dataclass(frozen=True)
class ACL:
    perms: int
    scheme: str | None
    id: str | None


@dataclass
class Txn:
    """One transaction, or one sub-op of a multi (then zxid/time/session come from the multi).

    Only the fields of the record its type carries are set. `offset` is the byte position of the log
    entry (its checksum) in the file; `multi_index` the sub-op's position in its multi.
    """

    type: int
    zxid: int = 0
    time: int = 0
    session_id: int = 0
    cxid: int = 0
    path: str | None = None
    data: bytes | None = None
    acl: list[ACL] | None = None
    ephemeral: bool | None = None
    parent_cversion: int | None = None
    ttl: int | None = None
    version: int | None = None
    timeout: int | None = None
    paths: list[str | None] | None = None  # closeSession: ephemerals deleted (3.6+)
    err: int | None = None
    ops: list[Txn] = field(default_factory=list)  # multi sub-ops
    multi_index: int | None = None
    digest: tuple[int, int] | None = None  # TxnDigest (version, treeDigest), 3.6+
    v0: bool = False  # a CreateTxnV0 (no parentCVersion)
    raw: bytes = b""  # the record's own bytes (a multi sub-op's Txn.data)
    offset: int = 0

    @property
    def op(self) -> str:
        return op_name(self.type)

    @property
    def failed(self) -> bool:
        """An error txn, or a multi with an error sub-op: ZooKeeper applied none of it."""
        return self.type == ERROR or any(o.type == ERROR for o in self.ops)


def _acls(r: Reader) -> list[ACL] | None:
    n = r.vector_len("acl")
    if n == -1:
        return None
    return [ACL(r.int32("perms"), r.ustring("scheme"), r.ustring("id")) for _ in range(n)]


def _write_acls(w: Writer, acls: list[ACL] | None) -> None:
    if acls is None:
        w.int32(-1)
        return
    w.int32(len(acls))
    for a in acls:
        w.int32(a.perms)
        w.ustring(a.scheme)
        w.ustring(a.id)


def read_record(t: Txn, r: Reader) -> None:
    """Fill `t` from the record its type carries. EOFError when the bytes end early."""
    op = t.type
    if op in (CREATE, CREATE2):
        t.path, t.data, t.acl, t.ephemeral = r.ustring("path"), r.buffer("data"), _acls(r), r.boolean()
        if op == CREATE and t.multi_index is None and r.remaining() < 4:
            t.v0, t.parent_cversion = True, -1  # CreateTxnV0, as deserializeTxn falls back to it
        else:
            t.parent_cversion = r.int32("parentCVersion")
    elif op == CREATE_TTL:
        t.path, t.data, t.acl = r.ustring("path"), r.buffer("data"), _acls(r)
        t.parent_cversion, t.ttl = r.int32("parentCVersion"), r.int64("ttl")
    elif op == CREATE_CONTAINER:
        t.path, t.data, t.acl, t.parent_cversion = r.ustring("path"), r.buffer("data"), _acls(r), r.int32()
    elif op in DELETES:
        t.path = r.ustring("path")
    elif op in (SET_DATA, RECONFIG):
        t.path, t.data, t.version = r.ustring("path"), r.buffer("data"), r.int32("version")
    elif op == CHECK:
        t.path, t.version = r.ustring("path"), r.int32("version")
    elif op == SET_ACL:
        t.path, t.acl, t.version = r.ustring("path"), _acls(r), r.int32("version")
    elif op == CREATE_SESSION:
        t.timeout = r.int32("timeOut")
    elif op == CLOSE_SESSION:
        if r.remaining() >= 4:  # 3.6+ CloseSessionTxn; older logs carry no record
            n = r.vector_len("paths2Delete")
            t.paths = None if n == -1 else [r.ustring("path") for _ in range(n)]
    elif op == ERROR:
        t.err = r.int32("err")
    elif op == MULTI:
        n = r.vector_len("txns")
        for i in range(max(n, 0)):
            sub_type = r.int32("type")
            raw = r.buffer("data") or b""
            if sub_type not in SUB_OPS:
                raise JuteError(f"multi sub-op {i} has type {sub_type}, not one a multi may hold", r.pos)
            sub = Txn(sub_type, t.zxid, t.time, t.session_id, t.cxid, multi_index=i, raw=raw)
            read_record(sub, Reader(raw))
            t.ops.append(sub)
    else:
        raise JuteError(f"txn type {op} is not one ZooKeeper logs", r.pos)


def write_record(t: Txn, w: Writer) -> None:
    """The inverse of read_record."""
    op = t.type
    if op in (CREATE, CREATE2):
        w.ustring(t.path)
        w.buffer(t.data)
        _write_acls(w, t.acl)
        w.boolean(bool(t.ephemeral))
        if not t.v0:
            w.int32(_int(t.parent_cversion))
    elif op == CREATE_TTL:
        w.ustring(t.path)
        w.buffer(t.data)
        _write_acls(w, t.acl)
        w.int32(_int(t.parent_cversion))
        w.int64(_int(t.ttl))
    elif op == CREATE_CONTAINER:
        w.ustring(t.path)
        w.buffer(t.data)
        _write_acls(w, t.acl)
        w.int32(_int(t.parent_cversion))
    elif op in DELETES:
        w.ustring(t.path)
    elif op in (SET_DATA, RECONFIG):
        w.ustring(t.path)
        w.buffer(t.data)
        w.int32(_int(t.version))
    elif op == CHECK:
        w.ustring(t.path)
        w.int32(_int(t.version))
    elif op == SET_ACL:
        w.ustring(t.path)
        _write_acls(w, t.acl)
        w.int32(_int(t.version))
    elif op == CREATE_SESSION:
        w.int32(_int(t.timeout))
    elif op == CLOSE_SESSION:
        if t.paths is not None:
            w.int32(len(t.paths))
            for p in t.paths:
                w.ustring(p)
    elif op == ERROR:
        w.int32(_int(t.err))
    elif op == MULTI:
        w.int32(len(t.ops))
        for sub in t.ops:
            sw = Writer()
            write_record(sub, sw)
            w.int32(sub.type)
            w.buffer(sw.getvalue())


def read_txn(buf: bytes, offset: int = 0) -> Txn:
    """A txn log entry's payload: TxnHeader, the record, and (3.6+) a TxnDigest."""
    r = Reader(buf)
    session_id, cxid, zxid = r.int64("clientId"), r.int32("cxid"), r.int64("zxid")
    time, op = r.int64("time"), r.int32("type")
    t = Txn(op, zxid, time, session_id, cxid, offset=offset)
    read_record(t, r)
    if r.remaining() >= 12:
        t.digest = (r.int32("digest version"), r.int64("treeDigest"))
    if r.remaining():
        raise JuteError(f"{r.remaining()} bytes left after the {t.op} txn", r.pos)
    return t


def write_txn(t: Txn) -> bytes:
    w = Writer()
    w.int64(t.session_id)
    w.int32(t.cxid)
    w.int64(t.zxid)
    w.int64(t.time)
    w.int32(t.type)
    write_record(t, w)
    if t.digest is not None:
        w.int32(t.digest[0])
        w.int64(t.digest[1])
    return w.getvalue()


def _int(v: int | None) -> int:
    return 0 if v is None else v
