"""Capture one broker's part of an evidence bundle, on the broker host, with the standard library only.

Writes `brokers/<id>/` as DESIGN.md ("Evidence bundle") lays it out: per `log.dirs` entry a listing.tsv
and copies of the small metadata files (never segment data), the broker's log4j files, and a redacted
server.properties; then records the part in manifest.json. Kafka keeps running meanwhile, so files that
vanish between listing and copying (-delete dirs removed, logs rolled) are recorded, not fatal.

Which files of the logs dir are taken: the log4j appenders of config/log4j.properties (bundle.LOG_NAMES,
rotated and .gz names included). Not taken, but named in the part entry: kafkaServer.out (stdout copy of
the same log4j lines), GC logs and anything else; copy those by hand when the JVM died before log4j ran.

Usable as `python -m workbench.capture.broker ...` from a copy of the package, without installing it.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import stat
import sys
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from workbench.bundle import LISTING, LOG_FILE, LOG_NAMES, log_kind, looks_like_log_dir, write_listing
from workbench.capture.redact import redact_properties
from workbench.kafka.logdir import is_metadata_file
from workbench.manifest import MANIFEST, BundleError, read_manifest, record_part

VANISHED = "vanished before it could be copied (Kafka deleted or rolled it)"
LOGS_ATTEMPTS = 3  # the logs dir is read again after copying, for files rolled meanwhile
SPACE_RESERVE = 1 << 30  # leave this much free (or 5% of the disk if less): logs may share Kafka's disk


def is_kafka_log(name: str) -> bool:
    """A broker log4j file by its name, rotated or gzipped: server.log.2024-03-12-10.gz, controller.log."""
    return bool(LOG_FILE.match(name)) and log_kind(name) in LOG_NAMES


def list_log_dir(root: Path, dest: Path) -> int:
    """Write dest/listing.tsv for one log dir; files Kafka deletes during the walk are left out."""
    dest.mkdir(parents=True, exist_ok=True)
    return write_listing(root, dest / LISTING)


def copy_metadata(root: Path, dest: Path, skipped: list[dict[str, str]]) -> tuple[int, int]:
    """Copy the metadata files named in dest/listing.tsv from root to the same relative paths.

    Driven by the listing rather than a second walk, so that copies and listing describe the same files.
    Returns (files copied, bytes copied); files gone or unreadable are appended to skipped.
    """
    copied = size = 0
    with open(dest / LISTING, encoding="utf-8", errors="surrogateescape") as listing:
        for line in listing:
            rel = line.split("\t", 1)[0]
            if not is_metadata_file(rel):
                continue
            n = _copy(root / rel, dest / rel, skipped)
            if n is not None:
                copied, size = copied + 1, size + n
    return copied, size


def copy_logs(logs: Path, dest: Path, skipped: list[dict[str, str]]) -> tuple[int, int, list[str]]:
    """Copy the broker's log4j files; returns (files, bytes, names left out as not Kafka's logs).

    The directory is read again after copying, so that a file rolled meanwhile is taken under its new name.
    """
    dest.mkdir(parents=True, exist_ok=True)
    seen: set[str] = set()
    ignored: list[str] = []
    copied = size = 0
    for _ in range(LOGS_ATTEMPTS):
        names = sorted(set(os.listdir(logs)) - seen)
        if not names:
            break
        seen.update(names)
        for name in names:
            if not is_kafka_log(name):
                ignored.append(name)
                continue
            n = _copy(logs / name, dest / name, skipped)
            if n is not None:
                copied, size = copied + 1, size + n
    return copied, size, sorted(ignored)


def _copy(src: Path, dst: Path, skipped: list[dict[str, str]]) -> int | None:
    """Copy one regular file with its mtime; None (and a skipped entry) when it cannot be."""
    try:
        if not stat.S_ISREG(os.lstat(src).st_mode):
            skipped.append({"path": str(src), "reason": "not a regular file (links are not followed)"})
            return None
        dst.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dst)
    except FileNotFoundError:
        skipped.append({"path": str(src), "reason": VANISHED})
        return None
    except PermissionError as e:
        skipped.append({"path": str(src), "reason": f"unreadable: {e.strerror}"})
        return None
    return dst.stat().st_size


def copy_server_properties(src: Path, dst: Path) -> tuple[int, int]:
    """Copy server.properties with secret values replaced; returns (bytes written, values redacted).

    Read as ISO-8859-1, as java.util.Properties.load(InputStream) does, so other bytes pass unchanged.
    """
    text, count = redact_properties(src.read_bytes().decode("latin-1"))
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_bytes(text.encode("latin-1"))
    st = src.stat()
    os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns))
    return dst.stat().st_size, count


def capture_broker(
    broker_id: int,
    log_dirs: list[Path],
    logs: Path | None,
    out: Path,
    server_properties: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Capture broker `broker_id` into the bundle at `out` and return the manifest part entry.

    Everything is built in a staging folder and then put in place of an earlier capture of the same
    broker (its datadirs, logs and server.properties), so a re-run replaces and a failure leaves the
    earlier capture whole. Other brokers' parts and the zk part are not touched.
    """
    say = progress or (lambda _: None)
    captured_at = datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    roots = _check_inputs(broker_id, log_dirs, logs, out, server_properties)
    out = Path(out)
    staging = out / f".capture-broker-{broker_id}.partial"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    skipped: list[dict[str, str]] = []
    part: dict[str, Any] = dict(part="broker", broker=broker_id, host=socket.gethostname())
    part.update(captured_at=captured_at, log_dirs=len(roots), files_listed=0, metadata_files=0, log_files=0)
    part.update(bytes_copied=0, dirs=[], logs_not_taken=[], skipped=skipped)
    try:
        for n, root in enumerate(roots):
            dest = staging / "datadirs" / str(n)
            listed = list_log_dir(root, dest)
            copied, size = copy_metadata(root, dest, skipped)
            part["dirs"].append(
                {"dir": str(n), "path": str(root), "files_listed": listed, "metadata": copied}
            )
            part["files_listed"] += listed
            part["metadata_files"] += copied
            part["bytes_copied"] += size
            say(f"broker {broker_id}: log dir {root} -> datadirs/{n}: {listed} files listed, {copied} copied")
        if logs is not None:
            count, size, part["logs_not_taken"] = copy_logs(Path(logs), staging / "logs", skipped)
            part["log_files"], part["bytes_copied"] = count, part["bytes_copied"] + size
            say(f"broker {broker_id}: logs {logs}: {count} log files ({size} bytes)")
        if server_properties is not None:
            size, count = copy_server_properties(Path(server_properties), staging / "server.properties")
            part.update(server_properties=str(server_properties), secrets_redacted=count)
            part["bytes_copied"] += size
        _install(staging, out / "brokers" / str(broker_id))
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    record_part(out, part, ("part", "broker"), brokers=[broker_id], redacted=True, captured_at=captured_at)
    return part


def _check_inputs(
    broker_id: int, log_dirs: list[Path], logs: Path | None, out: Path, server_properties: Path | None
) -> list[Path]:
    """Refuse, before anything is written, what would make a wrong or harmful capture."""
    if broker_id < 0:
        raise ValueError(f"broker id {broker_id}: expected a broker.id >= 0")
    if not log_dirs:
        raise ValueError("no log dirs given: expected the broker's log.dirs entries")
    roots = []
    for given in log_dirs:
        root = Path(given).resolve()
        roots.append(root)
        if not root.is_dir():
            raise BundleError(given, "no such directory", "a Kafka log dir (an entry of log.dirs)")
        if not looks_like_log_dir(root):
            raise BundleError(given, "has no meta.properties or *-checkpoint file", "a Kafka log dir")
    if len(set(roots)) != len(roots):
        raise BundleError(", ".join(map(str, log_dirs)), "a log dir is named twice", "distinct log dirs")
    if logs is not None and not Path(logs).is_dir():
        raise BundleError(logs, "no such directory", "Kafka's log4j directory (kafka.logs.dir)")
    if server_properties is not None and not Path(server_properties).is_file():
        raise BundleError(server_properties, "no such file", "the broker's server.properties")
    target = Path(out).resolve()
    for root in roots:
        if target == root or root in target.parents:
            raise BundleError(out, f"is inside log dir {root}", "a bundle folder outside Kafka's log dirs")
    if target.exists():
        if not target.is_dir():
            raise BundleError(out, "is not a directory", "a bundle directory")
        if (target / MANIFEST).exists():
            read_manifest(target)
        elif any(not p.name.startswith(".capture-broker-") for p in target.iterdir()):
            raise BundleError(out, "is not empty and has no manifest.json", "a new or existing bundle")
    _check_space(target, logs)
    return roots


def _check_space(target: Path, logs: Path | None) -> None:
    """Refuse to fill the disk: the bundle may be on the disk Kafka writes its logs to."""
    needed = 0
    if logs is not None:
        for entry in os.scandir(logs):
            if is_kafka_log(entry.name) and entry.is_file(follow_symlinks=False):
                needed += entry.stat(follow_symlinks=False).st_size
    existing = target
    while not existing.exists():
        existing = existing.parent
    usage = shutil.disk_usage(existing)
    reserve = min(SPACE_RESERVE, usage.total // 20)
    if needed + reserve > usage.free:
        raise BundleError(
            target, f"{usage.free} bytes free", f"room for {needed} bytes of logs plus {reserve} to spare"
        )


def _install(staging: Path, target: Path) -> None:
    """Put the staged capture in place of the earlier one, one entry at a time."""
    target.mkdir(parents=True, exist_ok=True)
    old = staging.with_name(staging.name.replace(".partial", ".old"))
    shutil.rmtree(old, ignore_errors=True)
    old.mkdir()
    for name in ("datadirs", "logs", "server.properties"):
        if (target / name).exists() or (target / name).is_symlink():
            (target / name).rename(old / name)
        if (staging / name).exists():
            (staging / name).rename(target / name)
    shutil.rmtree(old)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `workbench capture broker` (and of `python -m workbench.capture.broker`)."""
    parser.add_argument("--broker-id", type=int, required=True, help="this broker's broker.id")
    parser.add_argument(
        "--log-dirs", required=True, help="the broker's log.dirs, comma-separated as in server.properties"
    )
    parser.add_argument(
        "--logs", type=Path, help="Kafka's log4j directory (kafka.logs.dir), e.g. /opt/kafka/logs"
    )
    parser.add_argument("--out", type=Path, required=True, help="bundle directory to create or add to")
    parser.add_argument(
        "--server-properties", type=Path, help="server.properties; copied with secrets redacted"
    )


def run(args: argparse.Namespace) -> int:
    """Run a capture from parsed options; 0 on success, 2 on evidence that cannot be captured."""
    log_dirs = [Path(d.strip()) for d in args.log_dirs.split(",") if d.strip()]

    def progress(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    try:
        part = capture_broker(
            args.broker_id, log_dirs, args.logs, args.out, args.server_properties, progress=progress
        )
    except (BundleError, ValueError) as e:
        print(f"workbench: {e}", file=sys.stderr)
        return 2
    for s in part["skipped"]:
        print(f"skipped {s['path']}: {s['reason']}", file=sys.stderr)
    print(
        f"broker {args.broker_id} captured into {args.out}: {part['files_listed']} files listed, "
        f"{part['metadata_files']} metadata and {part['log_files']} log files copied "
        f"({part['bytes_copied']} bytes), {len(part['skipped'])} skipped",
        file=sys.stderr,
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m workbench.capture.broker", description=__doc__)
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
