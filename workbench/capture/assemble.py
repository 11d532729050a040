"""`workbench bundle assemble OUT FILE... [--broker N]`: a bundle from what the incident channel holds.

Each file is recognised by its content, not its name: a broker's log4j log, a listing of its log dir
(`ls -l`/`-lR`, `find -ls`, `du -a`, `stat`; docs/pasted-evidence.md), `kafka-topics --describe` or a
ZooKeeper shell's (a zkCli/zookeeper-shell transcript, zk_shell's tree or export). It is copied where a
bundle keeps that kind, and the manifest says when it was taken and the host's zone, where given. What a
file needs and was not given (a broker's id for its logs and listings) and what could not be recognised
is said, and nothing of it is copied. Run it once per host: each run adds to OUT, and never replaces a
different file already there under the same name (two hosts' `server.log` given to one run).
"""

from __future__ import annotations

import argparse
import filecmp
import gzip
import json
import re
import shutil
import zlib
from collections.abc import Iterable
from pathlib import Path

from workbench.bundle import LISTING, PASTED
from workbench.manifest import FORMAT, update_manifest
from workbench.sources.kafka_log_dirs import JSON_LINE
from workbench.sources.kafka_log_dirs import STRUCTURE as LOG_DIRS_LINE
from workbench.sources.kafka_topics import PARTITION_LINE, TOPIC_LINE
from workbench.sources.listings import DU, ENTRY, STAT_FILE
from workbench.sources.zk_shell import ABSENT, BARE, CHILDREN, ONE_SHOT, PROMPT, STAT, TREE_NODE, ZS_PROMPT

HEAD_BYTES = 1 << 16
_LISTING = [re.compile(p) for p in (ENTRY, DU, STAT_FILE)]
_DESCRIBE = [re.compile(p) for p in (TOPIC_LINE, PARTITION_LINE, JSON_LINE, LOG_DIRS_LINE)]
_ZK_NOISE = r"^(?:WATCHER::|WatchedEvent state:|Connecting to |Welcome to ZooKeeper!|JLine support is )"
_ZOOKEEPER = [
    re.compile(p) for p in (PROMPT, ONE_SHOT, BARE, STAT, ZS_PROMPT, TREE_NODE, ABSENT, CHILDREN, _ZK_NOISE)
]
_EXPORT_OPENING = re.compile(r'\s*\{\s*"/[^"]*"\s*:\s*\{\s*"content"\s*:')
_LOG_HEADER = re.compile(r"\[\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}[,.]\d{3}\]\s?[A-Z]+\s")


def kind_of(path: Path) -> str | None:
    """'log', 'listing', 'describe' or 'zookeeper' (a shell transcript, a zk_shell export) from the first
    64 KiB: the kind with the most lines, when at least a quarter of the non-blank lines are of it (a paste
    holds prompts, notes and other commands too)."""
    try:
        with gzip.open(path) if path.name.endswith(".gz") else open(path, "rb") as f:
            head = f.read(HEAD_BYTES).decode("utf-8", "replace")
    except (OSError, EOFError, zlib.error):
        return None
    if _is_export(head):
        return "zookeeper"
    lines = head.splitlines()
    lines = [line for line in lines if line.strip()]
    counts = {
        "log": sum(_LOG_HEADER.search(line[:200]) is not None for line in lines),
        "listing": sum(any(p.match(line) for p in _LISTING) for line in lines),
        "describe": sum(any(p.match(line) for p in _DESCRIBE) for line in lines),
        "zookeeper": sum(any(p.match(line) for p in _ZOOKEEPER) for line in lines),
    }
    kind, count = max(counts.items(), key=lambda kv: kv[1])
    return kind if count and count * 4 >= len(lines) else None


def _is_export(head: str) -> bool:
    """zk_shell's `cp ... json://` export: a JSON object keyed by znode paths (copy_util.JSONProxy)."""
    try:
        tree = json.loads(head)
    except ValueError:  # more than the head: it opens as one does
        return _EXPORT_OPENING.match(head) is not None
    return isinstance(tree, dict) and bool(tree) and all(k.startswith("/") for k in tree)


def assemble(
    out: Path,
    files: Iterable[Path],
    broker: int | None = None,
    log_dir: str = "0",
    taken_at: str | None = None,
    timezone: str | None = None,
) -> dict[str, list[str]]:
    """Copy each file where its kind belongs in `out`; returns what was placed where, and what was not."""
    said: dict[str, list[str]] = {"placed": [], "not placed": []}
    pasted = []
    for path in files:
        kind = kind_of(path)
        if kind is None:
            said["not placed"].append(
                f"{path}: not a Kafka log, a log dir listing, kafka-topics --describe or a ZooKeeper shell's"
            )
            continue
        if kind in ("log", "listing") and broker is None:
            said["not placed"].append(f"{path}: a broker's {kind}; say whose with --broker N")
            continue
        if kind == "log":
            dest = Path("brokers", str(broker), "logs", path.name)
        elif kind == "listing":
            name = path.name if path.name.startswith("listing.") else f"listing.{path.name}"
            dest = Path(
                "brokers", str(broker), "datadirs", log_dir, name if name != LISTING else name + ".txt"
            )
        else:
            dest = Path(PASTED, path.name)
        if (out / dest).exists() and not filecmp.cmp(path, out / dest, shallow=False):
            said["not placed"].append(f"{path}: {dest} already holds another file; rename one of them")
            continue
        (out / dest).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, out / dest)
        said["placed"].append(f"{path} -> {dest} ({kind})")
        if kind != "log":
            entry = {"file": dest.as_posix(), "taken_at": taken_at, "timezone": timezone}
            pasted.append({k: v for k, v in entry.items() if v})
    update_manifest(
        out, format=FORMAT, brokers=[broker] if broker is not None else None, pasted=pasted or None
    )
    return said


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("out", type=Path, help="the bundle to create or add to")
    parser.add_argument("files", type=Path, nargs="+", help="pasted outputs and copied logs, any names")
    parser.add_argument("--broker", type=int, help="the broker the logs and listings are from")
    parser.add_argument("--log-dir", default="0", help="the log dir's folder in the bundle (default 0)")
    parser.add_argument("--taken-at", help="when the pastes were taken: ISO-8601 with its offset")
    parser.add_argument("--timezone", help="the host's zone for the times a listing prints (IANA or +01:00)")


def run(args: argparse.Namespace) -> int:
    """Exit 0 when every file was placed, 1 when some could not be."""
    said = assemble(args.out, args.files, args.broker, args.log_dir, args.taken_at, args.timezone)
    for line in said["placed"]:
        print(line)
    for line in said["not placed"]:
        print(f"not placed: {line}")
    return 1 if said["not placed"] else 0
