"""Our parse of ZooKeeper's files, printed the way ZooKeeper's own tools print them, so a test can hold
the two side by side: TxnLogToolkit (persistence/TxnLogToolkit.java, jute's ToStringOutputArchive) and
SnapshotFormatter -d (server/SnapshotFormatter.java), release-3.8.4.
"""

from __future__ import annotations

import base64
from datetime import datetime, timezone
from typing import Any

from workbench.zookeeper import txns as op
from workbench.zookeeper.files import Snapshot
from workbench.zookeeper.txns import ACL, Txn

_ESCAPES = {"\0": "%00", "\n": "%0A", "\r": "%0D", ",": "%2C", "}": "%7D", "%": "%25"}


def _s(v: str | None) -> str:
    return "" if v is None else "'" + "".join(_ESCAPES.get(c, c) for c in v)


def _text(b: bytes | None) -> str:
    return "" if not b else b.decode("utf-8", "replace")


def _acl_record(a: ACL) -> str:
    return f"{a.perms},s{{{_s(a.scheme)},{_s(a.id)}}}"


def _acl_list(acls: list[ACL] | None) -> str:
    return "[" + ", ".join(_acl_record(a) + "\n" for a in acls or []) + "]"


def _to_string(t: Txn) -> str:
    """jute's Record.toString (ToStringOutputArchive) of the records TxnLogToolkit prints that way."""
    if t.type in op.DELETES:
        return _s(t.path) + "\n"
    if t.type == op.SET_ACL:
        acls = ",".join(f"s{{{_acl_record(a)}}}" for a in t.acl or [])
        return f"{_s(t.path)},v{{{acls}}},{t.version}\n"
    if t.type == op.CREATE_SESSION:
        return f"{t.timeout}\n"
    if t.type == op.ERROR:
        return f"{t.err}\n"
    if t.type == op.CLOSE_SESSION:
        return "" if t.paths is None else "v{" + ",".join(_s(p) for p in t.paths) + "}\n"
    raise AssertionError(f"no toString form for {t.op}")


def toolkit_entry(t: Txn) -> str:
    when = datetime.fromtimestamp(t.time / 1000, timezone.utc)
    hour = when.hour % 12 or 12
    stamp = f"{when.month}/{when.day}/{when.year % 100:02d}, {hour}:{when:%M:%S} {when:%p} UTC"
    if t.type in (op.CREATE, op.CREATE2):
        body = f"{t.path},{_text(t.data)},{_acl_list(t.acl)},{str(t.ephemeral).lower()},{t.parent_cversion}"
    elif t.type in (op.SET_DATA, op.RECONFIG):
        body = f"{t.path},{_text(t.data)},{t.version}"
    elif t.type == op.CREATE_CONTAINER:
        body = f"{t.path},{_text(t.data)},{_acl_list(t.acl)},{t.parent_cversion}"
    elif t.type == op.CREATE_TTL:
        body = f"{t.path},{_text(t.data)},{_acl_list(t.acl)},{t.parent_cversion},{t.ttl}"
    elif t.type == op.MULTI:
        body = ";".join(f"{s.op}:{_text(s.raw)}" for s in t.ops)
    else:
        body = _to_string(t)
    who = f"session {t.session_id & 2**64 - 1:#x} cxid {t.cxid & 2**32 - 1:#x} zxid {t.zxid:#x}"
    line = f"{stamp} {who} {t.op} {body}"
    return line if line.endswith("\n") else line + "\n"


def toolkit_dump(txns: list[Txn], dbid: int = 0) -> str:
    head = f"ZooKeeper Transactional Log File with dbid {dbid} txnlog format version 2\n"
    return head + "".join(toolkit_entry(t) for t in txns) + f"EOF reached after {len(txns)} txns.\n"


def _hex(v: int) -> str:
    return f"{v & 2**64 - 1:#016x}"


def _date(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, timezone.utc).strftime("%a %b %d %H:%M:%S UTC %Y")


def snapshot_nodes(snap: Snapshot) -> dict[str, dict[str, str]]:
    """Our snapshot as SnapshotFormatter -d prints each znode, keyed by path."""
    out = {}
    for n in snap.nodes:
        s = n.stat
        out[n.path or "/"] = {
            "cZxid": _hex(s.czxid),
            "ctime": _date(s.ctime),
            "mZxid": _hex(s.mzxid),
            "mtime": _date(s.mtime),
            "pZxid": _hex(s.pzxid),
            "cversion": str(s.cversion),
            "dataVersion": str(s.version),
            "aclVersion": str(s.aversion),
            "ephemeralOwner": _hex(s.ephemeralOwner),
            "data": "" if n.data is None else base64.b64encode(n.data).decode(),
        }
    return out


def parse_snapshot_formatter(text: str) -> dict[str, Any]:
    """SnapshotFormatter -d output -> {"count", "nodes": {path: {field: value}}, "sessions", "last_zxid"}."""
    lines = text.splitlines()
    count = int(lines[0].split("count=")[1].rstrip("):"))
    nodes: dict[str, dict[str, str]] = {}
    sessions: list[str] = []
    last_zxid = None
    i, path = 1, None
    while i < len(lines):
        line = lines[i]
        if line.startswith("Session Details"):
            i += 1
            while i < len(lines) and lines[i] != "----":
                sessions.append(lines[i])
                i += 1
            continue
        if line.startswith("Last zxid:"):
            last_zxid = int(line.split(":")[1].strip(), 16)
        elif line.startswith("  ") and path is not None:
            key, _, value = line.strip().partition(" =")
            nodes[path][key] = value.strip()
        elif line not in ("----",) and not line.startswith("Target zxid digest"):
            path = line
            nodes[path] = {}
        i += 1
    return {"count": count, "nodes": nodes, "sessions": sessions, "last_zxid": last_zxid}


def tree_diff(ours: dict[str, Any], theirs: dict[str, Any]) -> list[str]:
    """The paths where two trees ({path: anything}) differ, each with both sides cut to 200 characters:
    a failure says what is wrong without printing a 900 KB znode."""

    def short(path: str, tree: dict[str, Any]) -> str:
        return repr(tree[path])[:200] if path in tree else "absent"

    return [
        f"{path}: {short(path, ours)} != {short(path, theirs)}"
        for path in sorted(ours.keys() | theirs.keys())
        if ours.get(path) != theirs.get(path)
    ]
