"""Find the evidence in a bundle: a directory, the same tree as .tar.gz, or a bare Kafka log dir.

This module is the file layer and uses only the standard library, so that the broker-side collector can
share it. The Spark layer (`sources/`) asks it which files exist; `frames.Bundle` joins the two.
Layout: DESIGN.md, "Evidence bundle (format version 1)".
"""

from __future__ import annotations

import atexit
import base64
import json
import os
import re
import shutil
import stat
import tarfile
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.kafka import logdir as kafka_logdir
from workbench.manifest import FORMAT, LISTING, MANIFEST, BundleError, pasted_entries, read_manifest
from workbench.strays import NotRead, Stray
from workbench.strays import find as find_strays
from workbench.zookeeper import files as zk_files

ZNODES_JSONL = "zk/znodes.jsonl"
PASTED = "pasted"  # what an SRE pasted about the whole cluster: kafka-topics --describe, ...
# A .tar.gz is unpacked to a temporary directory; these bound what it may hold.
MAX_BUNDLE_BYTES = int(os.environ.get("WORKBENCH_MAX_BUNDLE_BYTES", 64 * 2**30))
MAX_BUNDLE_MEMBERS = int(os.environ.get("WORKBENCH_MAX_BUNDLE_MEMBERS", 2_000_000))

# Broker log files by their log4j appender (config/log4j.properties), with DailyRollingFileAppender's
# '.yyyy-MM-dd-HH' suffix, other rotation suffixes ('.1') and '.gz'.
LOG_NAMES = (
    "server",
    "controller",
    "state-change",
    "log-cleaner",
    "kafka-request",
    "kafka-authorizer",
)
LOG_FILE = re.compile(r"^(?P<stem>.*?)\.log(?:\.[0-9][0-9.-]*)?(?:\.gz)?$")


def log_kind(name: str) -> str:
    """The appender a log file belongs to, from its name: 'state-change.log.2021-05-03-18.gz' ->
    'state-change'; a copy named 'b1-controller.log' is still 'controller'."""
    m = LOG_FILE.match(name)
    stem = m.group("stem") if m else name
    for kind in sorted(LOG_NAMES, key=len, reverse=True):
        if stem == kind or stem.endswith(("-" + kind, "_" + kind, "." + kind)):
            return kind
    return stem


@dataclass(frozen=True)
class LogFile:
    """One broker log file (possibly rotated, possibly gzipped)."""

    path: Path
    file: str  # as shown in output and evidence refs: bundle-relative, or the path given
    broker_id: int | None
    log: str  # the appender's file name: server, controller, state-change, ...

    @property
    def compressed(self) -> bool:
        return self.path.name.endswith(".gz")


@dataclass(frozen=True)
class Pasted:
    """Output an SRE pasted (a listing, a CLI's output, a shell transcript) and what the manifest's
    "pasted" entry for it says: when it was taken and the host's time zone, each None when unknown."""

    path: Path
    file: str  # bundle-relative
    taken_at: str | None = None  # ISO-8601 instant
    timezone: str | None = None  # the host's zone: an IANA name or an offset (+01:00)


@dataclass(frozen=True)
class LogDir:
    """One `log.dirs` entry of one broker: where its metadata files are and its file listings."""

    root: Path
    name: str  # the bundle's folder name for it ("0", "1", ...) or the bare dir's name
    broker_id: int | None
    listing: Path | None  # listing.tsv as `find -type f -printf '%P\t%s\t%T@\n'` writes it
    file_prefix: str  # prefix of every `file` value that comes from this log dir
    pasted: tuple[Pasted, ...] = ()  # listing.* other than listing.tsv: ls -lR, find -ls, du -a, stat


@dataclass(frozen=True)
class ZkFile:
    """A txn log or snapshot from a ZooKeeper dataDir's version-2/."""

    path: Path
    file: str
    kind: str  # "log" or "snapshot"
    zxid: int  # from the name: first txn of a log, last txn applied when a snapshot began


def zk_data_files(paths: list[Path], prefix: Path | None = None) -> list[ZkFile]:
    """Txn logs and snapshots among files and directories (searched recursively), by zxid.
    `file` is relative to `prefix`'s parent when given (bundle-relative), else the path as found."""
    found: list[ZkFile] = []
    for p in paths:
        candidates = sorted(x for x in p.rglob("*") if x.is_file()) if p.is_dir() else [p]
        for c in candidates:
            m = zk_files.FILE_NAME.match(c.name)
            if m and not c.is_symlink():
                shown = c.relative_to(prefix).as_posix() if prefix and c.is_relative_to(prefix) else str(c)
                found.append(ZkFile(c, shown, m.group(1), int(m.group(2), 16)))
    return sorted(found, key=lambda f: (f.zxid, f.kind))


@dataclass
class Evidence:
    """What a bundle holds, as files on this machine."""

    root: Path
    manifest: dict[str, Any]
    log_files: list[LogFile] = field(default_factory=list)
    log_dirs: list[LogDir] = field(default_factory=list)
    zk_files: list[ZkFile] = field(default_factory=list)  # zk/txnlog/
    znodes_jsonl: Path | None = None  # zk/znodes.jsonl
    pasted: list[Pasted] = field(default_factory=list)  # pasted/: CLI outputs about the whole cluster
    server_properties: dict[int, Path] = field(default_factory=dict)  # each broker's, wherever it lies
    not_read: list[NotRead] = field(default_factory=list)  # files no reader takes, and why
    origin: str = ""  # what the user opened

    def size_bytes(self) -> int:
        """What Spark will read, roughly: the logs (a `.gz` counted as ten times its size, about what
        log4j text packs into), the ZooKeeper files and the log dirs' listings; files gone count 0."""

        def size(p: Path, times: int = 1) -> int:
            try:
                return p.stat().st_size * times
            except OSError:
                return 0

        logs = sum(size(f.path, 10 if f.compressed else 1) for f in self.log_files)
        listings = [d.listing for d in self.log_dirs if d.listing] + [
            p.path for d in self.log_dirs for p in d.pasted
        ]
        return logs + sum(size(f.path) for f in self.zk_files) + sum(size(p) for p in listings)

    @classmethod
    def open(cls, path: str | os.PathLike[str], without_zookeeper: bool = False) -> Evidence:
        """Open a bundle directory, a .tar.gz bundle or a bare Kafka log dir; `without_zookeeper`: as if its
        zk/ had not been captured (`frames.WithoutZooKeeper`)."""
        p = Path(path).expanduser().resolve()
        if not p.exists():
            raise BundleError(p, "no such file or directory", f"an evidence bundle ({FORMAT})")
        if p.is_file():
            if not p.name.endswith((".tar.gz", ".tgz")):
                raise BundleError(p, "not a directory or .tar.gz", f"an evidence bundle ({FORMAT})")
            root = _extract(p)
        else:
            root = p
        if not (root / MANIFEST).exists() and looks_like_log_dir(root):
            return _bare_log_dir(root)
        ev = cls(root=root, manifest=read_manifest(root), origin=str(path))
        strays, ev.not_read = find_strays(root, ev.manifest, ("zk",) if without_zookeeper else ())
        logs = [
            LogFile(s.path, s.file, s.broker_id, log_kind(s.path.name)) for s in strays if s.kind == "log"
        ]
        ev.log_files = sorted([*_bundle_logs(root), *logs], key=lambda f: f.file)
        listings = [s for s in strays if s.kind == "listing"]
        ev.log_dirs = sorted(_bundle_log_dirs(root, ev.manifest, listings), key=lambda d: d.file_prefix)
        if not without_zookeeper:
            txnlog = root / "zk" / "txnlog"
            ev.zk_files = zk_data_files([txnlog], root) if txnlog.is_dir() else []
            jsonl = root / ZNODES_JSONL
            ev.znodes_jsonl = jsonl if jsonl.is_file() else None
        said = pasted_entries(ev.manifest)
        pasted = [p for p in (root / PASTED).rglob("*") if p.is_file() and not p.is_symlink()]
        pasted += [s.path for s in strays if s.kind in ("describe", "zookeeper")]  # wherever they lie
        ev.pasted = sorted((_pasted(root, p, said) for p in pasted), key=lambda p: p.file)
        ev.server_properties = _server_properties(root, strays, ev.not_read)
        return ev


def _server_properties(root: Path, strays: list[Stray], not_read: list[NotRead]) -> dict[int, Path]:
    """Each broker's server.properties: brokers/<id>/server.properties, else one recognised under its
    folder by another name; a second is named in `not_read`, with the one read."""
    out: dict[int, Path] = {}
    brokers = root / "brokers"
    for p in sorted(brokers.glob("*/server.properties")) if brokers.is_dir() else []:
        if re.fullmatch(r"-?\d+", p.parent.name) and p.is_file():
            out[int(p.parent.name)] = p
    for s in strays:
        if s.kind != "properties" or s.broker_id is None:
            continue
        if s.broker_id in out:
            read = out[s.broker_id].relative_to(root).as_posix()
            why = f"a second server.properties of broker {s.broker_id}: {read} is read"
            not_read.append(NotRead(s.file, why))
        else:
            out[s.broker_id] = s.path
    not_read.sort(key=lambda n: n.file)
    return out


def znode_json(path: str, data: bytes | None, stat: dict[str, int], redacted: bool = False) -> str:
    """A line of zk/znodes.jsonl (DESIGN.md): data as utf-8 text, as base64 when it is not, null kept."""
    line: dict[str, Any] = {"path": path, "data": None, "encoding": "utf-8"}
    if data is not None:
        try:
            line["data"] = data.decode("utf-8")
        except UnicodeDecodeError:
            line["data"], line["encoding"] = base64.b64encode(data).decode("ascii"), "base64"
    line["stat"] = stat
    if redacted:
        line["redacted"] = True
    return json.dumps(line, ensure_ascii=False, separators=(",", ":"))


def log_files(paths: list[str | os.PathLike[str]], broker_id: int | None = None) -> list[LogFile]:
    """Loose log files (not in a bundle), e.g. copied from a broker by hand."""
    out = []
    for p in map(Path, paths):
        out.append(LogFile(p.resolve(), str(p), broker_id, log_kind(p.name)))
    return out


def looks_like_log_dir(root: Path) -> bool:
    """A Kafka log dir has meta.properties or checkpoint files at its root."""
    return any((root / name).is_file() for name in kafka_logdir.ROOT_METADATA_FILES)


def walk_listing(root: Path) -> Iterator[tuple[str, int, str]]:
    """Regular files under root as `find root -type f -printf '%P\\t%s\\t%T@\\n'` lists them."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            full = os.path.join(dirpath, name)
            try:
                st = os.lstat(full)
            except FileNotFoundError:  # a segment deleted by retention between listing and lstat
                continue
            if not stat.S_ISREG(st.st_mode):
                continue
            rel = os.path.relpath(full, root).replace(os.sep, "/")
            ns = st.st_mtime_ns
            yield rel, st.st_size, f"{ns // 10**9}.{ns % 10**9:09d}0"


def metadata_files(root: Path) -> Iterator[str]:
    """Relative paths of the small metadata files of a log dir (never segment data)."""
    for rel, _size, _mtime in walk_listing(root):
        if kafka_logdir.is_metadata_file(rel):
            yield rel


def write_listing(root: Path, out: Path) -> int:
    """Write listing.tsv for a log dir; returns the number of files listed."""
    n = 0
    # surrogateescape: a file name that is not UTF-8 is written back as the bytes it had on disk
    with open(out, "w", encoding="utf-8", errors="surrogateescape", newline="\n") as f:
        for rel, size, mtime in walk_listing(root):
            f.write(f"{rel}\t{size}\t{mtime}\n")
            n += 1
    return n


def _bundle_logs(root: Path) -> Iterator[LogFile]:
    brokers = root / "brokers"
    if not brokers.is_dir():
        return
    for bdir in sorted(brokers.iterdir()):
        logs = bdir / "logs"
        if not logs.is_dir():
            continue
        broker_id = _broker_id(bdir)
        for path in sorted(logs.rglob("*")):
            if not path.is_file() or path.is_symlink():
                continue
            yield LogFile(path, path.relative_to(root).as_posix(), broker_id, log_kind(path.name))


def _bundle_log_dirs(root: Path, manifest: dict[str, Any], strays: list[Stray]) -> Iterator[LogDir]:
    """Each `brokers/<id>/datadirs/<n>/`. Without listing.tsv the copies are listed, unless a pasted
    listing (`listing.*`, or a stray one) stands in for it: the copies' own sizes and times are not the
    broker's. A listing elsewhere under brokers/<id>/ is a log dir of its own, named after the file."""
    said = pasted_entries(manifest)
    by_dir: dict[tuple[str, str], list[Path]] = {}
    for s in strays:
        by_dir.setdefault((s.broker_dir, s.log_dir), []).append(s.path)
    for ddir in sorted((root / "brokers").glob("*/datadirs/*")):
        if ddir.is_dir():
            rel = ddir.relative_to(root).as_posix()
            pastes = [
                p for p in ddir.glob("listing.*") if p.name != LISTING and p.is_file() and not p.is_symlink()
            ]
            pastes += by_dir.pop((ddir.parent.parent.name, ddir.name), [])
            pasted = tuple(_pasted(root, p, said) for p in sorted(pastes))
            listing: Path | None = ddir / LISTING
            if not ddir.joinpath(LISTING).is_file():
                listing = None if pasted else _temp_listing(ddir)
            yield LogDir(ddir, ddir.name, _broker_id(ddir.parent.parent), listing, rel + "/", pasted)
    for (broker, name), paths in sorted(by_dir.items()):  # no copies of its files: nothing to list
        ddir = root / "brokers" / broker / "datadirs" / name
        pasted = tuple(_pasted(root, p, said) for p in sorted(paths))
        yield LogDir(ddir, name, _broker_id(ddir.parent.parent), None, pasted[0].file + ":", pasted)


def _pasted(root: Path, path: Path, said: dict[str, dict[str, Any]]) -> Pasted:
    file = path.relative_to(root).as_posix()
    entry = said.get(file, {})

    def text(key: str) -> str | None:
        value = entry.get(key)
        return value if isinstance(value, str) and value else None

    return Pasted(path, file, text("taken_at"), text("timezone"))


def _bare_log_dir(root: Path) -> Evidence:
    """A log dir opened directly: its listing is made on the fly, its broker id read from
    meta.properties when that file says it."""
    broker_id = _broker_id_from_meta(root / kafka_logdir.META_PROPERTIES)
    manifest = {"format": FORMAT, "source": "log.dir", "brokers": [broker_id] if broker_id else []}
    d = LogDir(root, root.name, broker_id, _temp_listing(root), str(root).rstrip("/") + "/")
    return Evidence(root=root, manifest=manifest, log_dirs=[d], origin=str(root))


def _broker_id(bdir: Path) -> int | None:
    return int(bdir.name) if re.fullmatch(r"-?\d+", bdir.name) else None


def _broker_id_from_meta(path: Path) -> int | None:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    m = re.search(r"^(?:broker|node)\.id\s*[=:]\s*(-?\d+)\s*$", text, re.M)
    return int(m.group(1)) if m else None


_tempdirs: list[str] = []


def _remove_tempdirs() -> None:
    for d in _tempdirs:
        shutil.rmtree(d, ignore_errors=True)


def _tempdir(prefix: str) -> Path:
    if not _tempdirs:
        atexit.register(_remove_tempdirs)
    d = tempfile.mkdtemp(prefix=prefix, dir=os.environ.get("WORKBENCH_TMP"))
    _tempdirs.append(d)
    return Path(d)


def _temp_listing(root: Path) -> Path:
    out = _tempdir("workbench-listing-") / LISTING
    write_listing(root, out)
    return out


def _extract(archive: Path) -> Path:
    """Unpack a .tar.gz bundle after checking every member: no absolute paths, no '..', no links or
    devices, bounded size and count. The checks run before anything is written."""
    expected = "a .tar.gz of regular files and directories inside the bundle"
    try:
        with tarfile.open(archive, "r:gz") as tar:
            members = tar.getmembers()
    except (OSError, tarfile.TarError, EOFError) as e:
        raise BundleError(archive, f"not a readable .tar.gz ({e})", expected) from e
    if len(members) > MAX_BUNDLE_MEMBERS:
        raise BundleError(archive, f"{len(members)} members", f"at most {MAX_BUNDLE_MEMBERS}")
    total = 0
    for m in members:
        name = m.name
        parts = Path(name).parts
        if name.startswith(("/", "\\")) or Path(name).is_absolute() or ".." in parts:
            raise BundleError(archive, f"member {name!r} points outside the bundle", expected)
        if not (m.isfile() or m.isdir()):
            raise BundleError(archive, f"member {name!r} is a link or device", expected)
        total += max(m.size, 0)
        if total > MAX_BUNDLE_BYTES:
            raise BundleError(archive, "unpacks to more than the limit", f"at most {MAX_BUNDLE_BYTES} bytes")
    dest = _tempdir("workbench-bundle-")
    with tarfile.open(archive, "r:gz") as tar:
        if hasattr(tarfile, "data_filter"):
            tar.extractall(dest, members=members, filter="data")
        else:  # Python < 3.10.12: the checks above already refused what the filter would
            tar.extractall(dest, members=members)
    # A bundle packed as a single top folder is opened inside that folder.
    entries = [e for e in dest.iterdir()]
    if len(entries) == 1 and entries[0].is_dir() and not (dest / MANIFEST).exists():
        return entries[0]
    return dest
