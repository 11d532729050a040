"""Capture a live ZooKeeper tree into a bundle's zk/ part: read-only, fast, secrets redacted.

- Read-only by construction: the client only calls get, get_children and exists (auth rides on the
  connection). A session still costs ZooKeeper two txns, createSession and closeSession; capture.json
  names our session id so that an analyst can tell them apart in the txn log.
- Fast: kazoo's async calls keep a bounded window of requests in flight, and only znodes whose stat
  counts children are listed. ZooKeeper answers one session's requests in order, so answers are taken in
  the order asked: a breadth-first walk with sorted siblings, the same output order every time.
- Honest: ZooKeeper has no snapshot read, so each znode is as of its own read. capture.json bounds that
  with zxids and lists every znode that vanished, could not be read, or was lost with the connection.
- Null and empty data differ: kazoo reads ZooKeeper's buffer length -1 as None (Kafka's createRecursive
  writes null) and 0 as b"". Stat.dataLength is 0 for both, so only the data value tells them apart.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import select
import sys
import time
from collections import deque
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import (
    AuthFailedError,
    ConnectionClosedError,
    ConnectionLoss,
    KazooException,
    NoAuthError,
    NoNodeError,
    OperationTimeoutError,
    SessionExpiredError,
)
from kazoo.handlers.threading import KazooTimeoutError, SequentialThreadingHandler
from kazoo.interfaces import IAsyncResult
from kazoo.protocol.states import KazooState, ZnodeStat
from kazoo.retry import KazooRetry, RetryFailedError

from workbench.bundle import znode_json
from workbench.capture.redact import redact_znode
from workbench.errors import WorkbenchError
from workbench.manifest import record_part

WINDOW = 200  # requests in flight; must stay well below what kazoo can queue while disconnected (_Walk.run)
# Waiting on each answer hands the GIL to and fro with kazoo's thread for every reply; a short nap lets it
# read a batch first. 20k znodes, 2 CPUs: 4,700/s without, 6,300-7,100/s with it (plain kazoo: 2,300/s).
NAP = 0.002
PROGRESS_EVERY = 1000
RETRIES = 10  # attempts to read one znode again after a lost connection, within `timeout` seconds
RETRYABLE = (ConnectionLoss, SessionExpiredError, OperationTimeoutError)
Progress = Callable[[int], object]


class ZkCaptureError(WorkbenchError):
    """Nothing could be captured (no connection, no such root): says what to check."""


class _Lost(Exception):
    """The connection did not come back within the timeout."""


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class PollHandler(SequentialThreadingHandler):
    """kazoo's select (handlers/utils.py selector_select, 2.11) makes and closes an epoll object per call,
    about four calls per request; one poll() does the same for any fd number and doubles a walk's speed."""

    def select(
        self, rlist: list[Any], wlist: list[Any], xlist: list[Any], timeout: float | None = None
    ) -> tuple[list[Any], list[Any], list[Any]]:
        poller, files = select.poll(), {f.fileno(): f for f in [*rlist, *wlist]}  # kazoo passes sockets
        for f, events in [(f, select.POLLIN) for f in rlist] + [(f, select.POLLOUT) for f in wlist]:
            poller.register(f, events)  # ValueError for a closed socket, as kazoo's own select raises
        ready = poller.poll(None if timeout is None else timeout * 1000)
        readable = [files[fd] for fd, ev in ready if ev & ~select.POLLOUT]  # also hangup, error
        return readable, [files[fd] for fd, ev in ready if ev & ~select.POLLIN], []


def _get(result: IAsyncResult, timeout: float) -> Any:
    """An async answer, waited for at most `timeout` s; no answer is a (retryable) OperationTimeoutError."""
    try:
        return result.get(timeout=timeout)
    except KazooTimeoutError as e:
        raise OperationTimeoutError(f"no answer within {timeout:g} s") from e


class _Walk:
    """One breadth-first walk over a started client, writing lines as znodes arrive."""

    def __init__(self, client: KazooClient, root: str, out: Any, progress: Progress | None, timeout: float):
        self.client, self.root, self.out, self.progress, self.timeout = client, root, out, progress, timeout
        self.count = self.bytes = self.redacted = self.last_zxid = 0
        self.problems: list[dict[str, Any]] = []
        self.brokers: list[int] = []
        self.cluster: str | None = None
        self.complete = True
        self.closing = False
        self._prefix = root.rstrip("/")

    def on_state(self, state: str) -> None:
        """kazoo's connection listener (its own thread): note each loss and when it was regained."""
        if self.closing:
            return
        if state in (KazooState.SUSPENDED, KazooState.LOST):
            kind = "connection_lost" if state == KazooState.SUSPENDED else "session_lost"
            self.problems.append({"kind": kind, "at": _now(), "after_znodes": self.count})
        elif state == KazooState.CONNECTED:
            session = f"0x{self.client.client_id[0]:x}" if self.client.client_id else None
            for p in self.problems:
                if p["kind"] in ("connection_lost", "session_lost") and "regained_at" not in p:
                    p.update(regained_at=_now(), session_id=session)  # a new one if the old expired

    def run(self) -> None:
        """Data is asked in queue order; a znode is listed only when its stat says it has children, which
        saves a request per leaf. ZooKeeper answers in the order asked, so the oldest question is the
        one to wait for, and the output order does not depend on timing."""
        queue: deque[str] = deque([self.root])
        gets: deque[tuple[int, str, IAsyncResult]] = deque()
        lists: deque[tuple[int, str, IAsyncResult | None]] = deque()  # None: to be asked when connected
        asked = 0
        last_tick = time.monotonic()
        while queue or gets or lists:
            # kazoo wakes its thread with a byte per request on a socketpair that is read only while
            # connected; ~278 one-byte sends fill it on Linux and the next one would block us for good.
            # Hence a WINDOW well below that, and nothing new asked while disconnected.
            while queue and len(gets) + len(lists) < WINDOW:
                if (gets or lists) and not self.client.connected:
                    break
                path = queue.popleft()
                gets.append((asked, path, self.client.get_async(path)))
                asked += 1
            use_get = bool(gets) and (not lists or gets[0][0] < lists[0][0])
            pending = gets if use_get else lists
            if pending[0][2] is not None and not pending[0][2].ready():
                time.sleep(NAP)
            try:
                answer = self._answer(pending[0][1], pending[0][2], "get" if use_get else "list")
            except _Lost:
                self.complete = False
                unread, unlisted = len(queue) + len(gets), len(lists)
                detail = f"no answer within {self.timeout:g} s; not read: {unread} znodes and their subtrees"
                detail += f", not listed: the children of {unlisted} znodes"
                self.problems.append({"kind": "gave_up", "at": _now(), "detail": detail})
                self.problems[-1].update(not_read=unread, not_listed=unlisted)
                return
            _, path, _ = pending.popleft()
            if answer is None:
                continue
            if not use_get:
                base = "" if path == "/" else path
                queue.extend(f"{base}/{name}" for name in sorted(answer))
                continue
            data, stat = answer
            self._write(path, data, stat)
            if stat.numChildren:
                ask = self.client.get_children_async(path) if self.client.connected else None
                lists.append((asked, path, ask))
                asked += 1
            now = time.monotonic()
            if self.progress and (self.count % PROGRESS_EVERY == 0 or now - last_tick >= 1.0):
                last_tick = now
                self.progress(self.count)

    def _answer(self, path: str, result: IAsyncResult | None, what: str) -> Any:
        """The answer to get or list `path`, or None when there is none (noted in problems). After a lost
        connection it is asked again (KazooRetry, within `timeout`); _Lost if the connection stays lost."""
        ask = self.client.get_async if what == "get" else self.client.get_children_async
        try:
            try:
                if result is None:
                    raise ConnectionLoss("not asked while disconnected")
                return _get(result, self.timeout)
            except RETRYABLE:
                deadline = time.monotonic() + self.timeout
                retry = KazooRetry(max_tries=RETRIES, delay=0.1, max_delay=1.0, deadline=self.timeout)
                try:
                    return retry(lambda: _get(ask(path), max(0.1, deadline - time.monotonic())))
                except (RetryFailedError, ConnectionClosedError) as e:
                    raise _Lost(path) from e
        except NoNodeError:
            gone = "listed by its parent, then gone" if what == "get" else "read, then gone before listing"
            self.problems.append({"kind": "vanished", "path": path, "detail": gone})
        except NoAuthError:
            self.problems.append({"kind": "no_auth", "path": path, "stat": self._stat_only(path)})
        except KazooException as e:
            self.problems.append({"kind": "error", "path": path, "detail": f"{what}: {type(e).__name__} {e}"})
        return None

    def _stat_only(self, path: str) -> dict[str, int] | None:
        """exists() is not subject to ACLs, so an unreadable znode still shows its zxids and versions."""
        with contextlib.suppress(KazooException):
            stat = _get(self.client.exists_async(path), self.timeout)
            return None if stat is None else stat._asdict()
        return None

    def _write(self, path: str, data: bytes | None, stat: ZnodeStat) -> None:
        raw = data
        data, was_redacted = redact_znode(path, data)
        self.out.write(znode_json(path, data, stat._asdict(), was_redacted) + "\n")
        self.count += 1
        self.bytes += len(raw or b"")
        self.redacted += was_redacted
        self.last_zxid = max(self.last_zxid, stat.czxid, stat.mzxid, stat.pzxid)
        if path == f"{self._prefix}/cluster/id":
            try:
                self.cluster = str(json.loads(data or b"")["id"])
            except (ValueError, KeyError, TypeError):
                self.problems.append({"kind": "unparsed", "path": path, "detail": "not Kafka's cluster id"})
        elif path.rpartition("/")[0] == f"{self._prefix}/brokers/ids" and path.rpartition("/")[2].isdigit():
            self.brokers.append(int(path.rpartition("/")[2]))


def connect(hosts: str, auth: tuple[str, str] | None, timeout: float) -> KazooClient:
    """A started read-only client that reconnects for ever (capture_zk bounds the wait per answer)."""
    try:
        client = KazooClient(
            hosts=hosts,
            timeout=10.0,
            handler=PollHandler() if hasattr(select, "poll") else SequentialThreadingHandler(),
            read_only=True,  # also reads a server that lost quorum, if it runs readonlymode.enabled
            auth_data=[auth] if auth else None,
            connection_retry=KazooRetry(max_tries=-1, delay=0.1, max_delay=1.0),
            logger=logging.getLogger(f"{__name__}.kazoo"),
        )
    except ValueError as e:
        raise ZkCaptureError(f"--hosts {hosts!r}: {e}; expected H:P[,H:P]") from e
    try:
        client.start(timeout=timeout)
    except KazooTimeoutError as e:
        client.stop()
        client.close()
        raise ZkCaptureError(f"cannot connect to ZooKeeper at {hosts} within {timeout:g} s") from e
    return client


def capture_zk(
    hosts: str,
    out: Path,
    root: str = "/",
    auth: tuple[str, str] | None = None,
    progress: Progress | None = None,
    timeout: float = 30.0,
) -> dict[str, Any]:
    """Walk ZooKeeper from `root` into `out`/zk/ and complete `out`'s manifest; returns capture.json.

    `hosts` is kazoo's (and Kafka's zookeeper.connect) form; a chroot there is folded into `root`, so
    the paths written are ZooKeeper's own. `auth` is (scheme, credential), e.g. ("digest", "user:pass").
    `timeout` bounds connecting, each answer, and regaining a lost connection.
    """
    hosts, _, chroot = hosts.partition("/")
    root = "/" + "/".join(part for part in (chroot.strip("/"), root.strip("/")) if part)
    started = _now()
    client = connect(hosts, auth, timeout)
    zk_dir = Path(out) / "zk"
    zk_dir.mkdir(parents=True, exist_ok=True)
    tmp = zk_dir / "znodes.jsonl.tmp"
    try:
        if _get(client.exists_async(root), timeout) is None:
            raise ZkCaptureError(f"{root} does not exist on {hosts}")
        session_id = client.client_id[0] if client.client_id else None
        with open(tmp, "w", encoding="utf-8", newline="\n") as f:
            walk = _Walk(client, root, f, progress, timeout)
            client.add_listener(walk.on_state)
            walk.run()
            walk.closing = True
        server_zxid = client.last_zxid if client.connected else None
        tmp.replace(zk_dir / "znodes.jsonl")
    except AuthFailedError as e:
        raise ZkCaptureError(f"ZooKeeper at {hosts} refused the {auth and auth[0]} authentication") from e
    except KazooException as e:
        raise ZkCaptureError(f"ZooKeeper at {hosts} failed: {type(e).__name__} {e}") from e
    finally:
        tmp.unlink(missing_ok=True)
        client.stop()
        client.close()
    capture = {
        "tool": "workbench capture zk",
        "hosts": hosts,
        "root": root,
        "auth": f"{auth[0]}:{auth[1].partition(':')[0]}" if auth else None,  # never the password
        "session_id": f"0x{session_id:x}" if session_id is not None else None,
        "started": started,
        "finished": _now(),
        "complete": walk.complete,
        "last_zxid": walk.last_zxid,  # the newest czxid/mzxid/pzxid among the znodes read
        "server_zxid": server_zxid,  # the server's last zxid in its last answer (counts our createSession)
        "counts": {"znodes": walk.count, "bytes": walk.bytes, "redacted": walk.redacted},
        "problems": walk.problems,
    }
    tmp = zk_dir / "capture.json.tmp"
    tmp.write_text(json.dumps(capture, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(zk_dir / "capture.json")
    zk_part = {"part": "zk", "files": ["zk/capture.json", "zk/znodes.jsonl"]}
    brokers = sorted(walk.brokers) or None
    record_part(
        Path(out),
        zk_part,
        ("part",),
        redacted=True,
        captured_at=started,
        cluster=walk.cluster,
        brokers=brokers,
    )
    return capture


class StderrProgress:
    """`walked 12,345 znodes` on stderr: one rewritten line on a terminal, a line a second otherwise."""

    def __init__(self) -> None:
        self.tty, self.start, self.last = sys.stderr.isatty(), time.monotonic(), 0.0

    def __call__(self, walked: int, end: str = "") -> None:
        now = time.monotonic()
        if self.tty or now - self.last >= 1.0 or end:
            self.last, rate = now, walked / max(now - self.start, 1e-6)
            text = f"walked {walked:,} znodes ({rate:,.0f}/s)"
            sys.stderr.write((f"\r{text}\x1b[K" if self.tty else text + "\n") + (end if self.tty else ""))
            sys.stderr.flush()


def _root(value: str) -> str:
    if not value.startswith("/"):
        raise argparse.ArgumentTypeError(f"{value!r} is not a ZooKeeper path (it must start with /)")
    return value


def _auth(value: str) -> tuple[str, str]:
    scheme, _, credential = value.partition(":")
    if not scheme or not credential:
        raise argparse.ArgumentTypeError("expected SCHEME:CREDENTIAL, e.g. digest:USER:PASS")
    return scheme, credential


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--hosts", required=True, help="ZooKeeper H:P[,H:P][/chroot], as zookeeper.connect")
    parser.add_argument("--out", required=True, type=Path, help="bundle directory (created or completed)")
    parser.add_argument("--root", type=_root, default="/", help="znode to walk from (default /)")
    parser.add_argument(
        "--auth",
        type=_auth,
        default=os.environ.get("WORKBENCH_ZK_AUTH"),
        help="digest:USER:PASS for znodes with ACLs (default $WORKBENCH_ZK_AUTH, which keeps it out of ps)",
    )
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds to wait for ZooKeeper (30)")


def run(args: argparse.Namespace) -> int:
    """`workbench capture zk`: 0 when complete, 1 when the connection was lost (what was walked is
    written), 2 when nothing could be captured."""
    auth = _auth(args.auth) if isinstance(args.auth, str) else args.auth
    if logging.getLogger(f"{__name__}.kazoo").level == logging.NOTSET:  # we report losses ourselves
        logging.getLogger(f"{__name__}.kazoo").setLevel(logging.ERROR)
    progress = StderrProgress()
    try:
        capture = capture_zk(args.hosts, args.out, args.root, auth, progress, args.timeout)
    except (ZkCaptureError, OSError) as e:
        print(f"workbench: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\nworkbench: interrupted; nothing written to zk/", file=sys.stderr)
        return 130
    counts = capture["counts"]
    progress(counts["znodes"], end="\n")
    print(
        f"captured {counts['znodes']:,} znodes ({counts['bytes']:,} bytes, {counts['redacted']} redacted) "
        f"into {args.out}/zk/; problems: {len(capture['problems'])}"
    )
    for p in capture["problems"]:
        print(f"  {p['kind']}: {p.get('path') or p.get('detail') or p.get('at')}")
    if not capture["complete"]:
        print("INCOMPLETE: the connection to ZooKeeper was lost; see zk/capture.json", file=sys.stderr)
        return 1
    return 0
