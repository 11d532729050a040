"""Files a bundle holds outside the places it keeps each kind of evidence (DESIGN.md, "Evidence bundle").

People put files where they like: a zkCli session copied into zk/, an `ls -lR` under a name of their own
beside a broker's data dirs, a describe in the broker's folder. Each file no place claims is recognised by
its content (recognise.py, as `bundle assemble` does) and read as what it is wherever that is known; what
cannot be read is named with why. Nothing in a bundle is silently ignored. Standard library only.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.kafka import logdir as kafka_logdir
from workbench.manifest import LISTING, MANIFEST
from workbench.recognise import recognise
from workbench.zookeeper import files as zk_files

# What a Kafka log dir holds besides the metadata files copied (kafka/logdir.py): listed, never read
_LOG_DIR_ROOT = re.compile(r"^(?:\.lock|\.kafka_cleanshutdown|.*checkpoint(?:\.tmp)?|meta\.properties\.tmp)$")
_PARTITION_DIR = re.compile(f"{kafka_logdir.LIVE_DIR}|{kafka_logdir.SUFFIXED_DIR}")
_ZK_BOOKKEEPING = re.compile(r"^(?:acceptedEpoch|currentEpoch|.*\.tmp)$")  # a dataDir's, no txns in them


@dataclass(frozen=True)
class Stray:
    """A file outside its kind's place, recognised and read as that kind."""

    path: Path
    file: str  # bundle-relative
    kind: str  # 'log', 'listing', 'describe', 'zookeeper' or 'properties' (recognise.py)
    broker_id: int | None = None  # whose log or listing: the brokers/<id>/ it lies under
    broker_dir: str = ""  # that folder's name
    log_dir: str = ""  # the log dir a listing is of: its datadirs/<n>/, else the file's own name


@dataclass(frozen=True)
class NotRead:
    """A file of the bundle no reader takes, and why. `known`: a file of the bundle's own making that is
    not evidence (the simulator's answers, a capture's leftovers), not worth a reader's attention."""

    file: str
    why: str
    known: bool = False


def find(
    root: Path, manifest: dict[str, Any], leave_out: tuple[str, ...] = ()
) -> tuple[list[Stray], list[NotRead]]:
    """Every regular file under root that no place claims: recognised (strays) or not read; none under
    the top folders named in `leave_out`."""
    strays: list[Stray] = []
    not_read: list[NotRead] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if dirpath != str(root) or d not in leave_out)
        for name in sorted(filenames):
            path = Path(dirpath, name)
            if path.is_symlink() or not path.is_file():
                continue
            parts = path.relative_to(root).parts
            file = "/".join(parts)
            claimed = _claimed(parts, manifest)
            if claimed is True:
                continue
            if claimed:
                not_read.append(NotRead(file, claimed, known=True))
                continue
            kind, why = recognise(path)
            stray = _placed(path, file, parts, kind) if kind else None
            if isinstance(stray, Stray):
                strays.append(stray)
            else:
                not_read.append(NotRead(file, stray or why))
    return strays, sorted(not_read, key=lambda n: n.file)


def _claimed(parts: tuple[str, ...], manifest: dict[str, Any]) -> bool | str:
    """True where a reader takes the file by its place, why not where the bundle's own making is no
    evidence, False for a file to recognise by its content."""
    top, rest = parts[0], parts[1:]
    if parts == (MANIFEST,):
        return True
    if parts == ("truth.json",) and manifest.get("simulated"):
        return "the simulator's answers, kept for its tests: not evidence"
    if top.startswith(".capture-broker-") or parts == (MANIFEST + ".tmp",):
        return "left by a capture that did not finish"
    if top == "pasted":
        return True  # sources/pasted.py reads every file there, and says which it could not
    if top == "zk" and rest == ("znodes.jsonl",):
        return True
    if top == "zk" and rest == ("capture.json",):
        return "the ZooKeeper capture's record of itself (when, which server); the manifest says the same"
    if top == "zk" and rest[:1] == ("txnlog",):
        if zk_files.FILE_NAME.match(parts[-1]):
            return True
        return "ZooKeeper's own bookkeeping, no txns" if _ZK_BOOKKEEPING.match(parts[-1]) else False
    if top != "brokers" or len(rest) < 2:
        return False
    broker, where, below = rest[0], rest[1], rest[2:]
    if where == "logs" and below:
        return True  # sources/logs.py reads every file there, and says which it could not
    if where == "server.properties" and not below:
        return re.fullmatch(r"-?\d+", broker) is not None
    if where != "datadirs" or len(below) < 2:
        return False
    in_dir = below[1:]
    if len(in_dir) == 1:
        name = in_dir[0]
        return (
            name == LISTING
            or name.startswith("listing.")
            or name in kafka_logdir.ROOT_METADATA_FILES
            or _LOG_DIR_ROOT.match(name) is not None
        )
    return len(in_dir) == 2 and _PARTITION_DIR.match(in_dir[0]) is not None  # a partition's own files


def _placed(path: Path, file: str, parts: tuple[str, ...], kind: str) -> Stray | str:
    """The stray read as its kind, or why it cannot be: a broker's log or listing outside brokers/<id>/."""
    if kind in ("describe", "zookeeper"):
        return Stray(path, file, kind)
    if parts[0] != "brokers" or len(parts) < 3:
        what, where = {
            "log": ("Kafka log", "under brokers/<id>/logs/"),
            "properties": ("server.properties", "at brokers/<id>/server.properties"),
        }.get(kind, ("log dir listing", "under brokers/<id>/datadirs/<n>/"))
        return f"a broker's {what}, but whose? Put it {where}"
    broker = parts[1]
    broker_id = int(broker) if re.fullmatch(r"-?\d+", broker) else None
    in_datadir = len(parts) >= 5 and parts[2] == "datadirs"
    log_dir = parts[3] if in_datadir else Path(parts[-1]).stem
    return Stray(path, file, kind, broker_id, broker, log_dir if kind == "listing" else "")
