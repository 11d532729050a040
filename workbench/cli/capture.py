"""`workbench capture zk|broker|zk-files`: collect evidence into a bundle, read-only (`capture/`)."""

from __future__ import annotations

import argparse
import importlib
from typing import Any

PARTS = (
    ("zk", "zk", "a live ZooKeeper tree via kazoo, read-only, secrets redacted"),
    ("broker", "broker", "a broker's log dir listings, metadata files and logs (standard library only)"),
    ("zk-files", "zk_files", "a ZooKeeper dataDir's txn logs and snapshots, secrets redacted"),
)


def _collector(name: str) -> Any:
    return importlib.import_module(f"workbench.capture.{name}")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parts = parser.add_subparsers(dest="part", required=True)
    for name, module, text in PARTS:
        part = parts.add_parser(name, help=text)
        part.set_defaults(module=module)
        _collector(module).add_arguments(part)


def run(args: argparse.Namespace) -> int:
    return int(_collector(args.module).run(args))
