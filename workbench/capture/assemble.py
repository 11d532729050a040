"""`workbench bundle assemble OUT FILE... [--broker N]`: a bundle from what the incident channel holds.

Each file is recognised by its content, not its name: a broker's log4j log, a listing of its log dir
(`ls -l`/`-lR`, `find -ls`, `du -a`, `stat`; docs/pasted-evidence.md), `kafka-topics --describe`, a
ZooKeeper shell's (a zkCli/zookeeper-shell transcript, zk_shell's tree or export) or a broker's
server.properties (its secret values redacted). It is copied where a
bundle keeps that kind, and the manifest says when it was taken and the host's zone, where given. What a
file needs and was not given (a broker's id for its logs and listings) and what could not be recognised
is said, and nothing of it is copied. Run it once per host: each run adds to OUT, and never replaces a
different file already there under the same name (two hosts' `server.log` given to one run).
"""

from __future__ import annotations

import argparse
import filecmp
import shutil
from collections.abc import Iterable
from pathlib import Path

from workbench.bundle import LISTING, PASTED
from workbench.capture.broker import copy_server_properties
from workbench.capture.redact import redact_properties
from workbench.manifest import FORMAT, update_manifest
from workbench.recognise import recognise


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
        kind, why = recognise(path)
        if kind is None:
            said["not placed"].append(f"{path}: {why}")
            continue
        if kind in ("log", "listing", "properties") and broker is None:
            said["not placed"].append(f"{path}: a broker's {kind}; say whose with --broker N")
            continue
        if kind == "properties":  # its secrets redacted, as a capture copies it
            dest = Path("brokers", str(broker), "server.properties")
            text, _ = redact_properties(path.read_bytes().decode("latin-1"))
            if (out / dest).exists() and (out / dest).read_bytes() != text.encode("latin-1"):
                said["not placed"].append(f"{path}: {dest} already holds another config of broker {broker}")
                continue
            _, redacted = copy_server_properties(path, out / dest)
            said["placed"].append(f"{path} -> {dest} ({kind}, {redacted} secret value(s) redacted)")
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
