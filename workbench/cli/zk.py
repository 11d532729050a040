"""`workbench zk history`: ZooKeeper's own history, from its txn logs (`zk_history.py`)."""

from __future__ import annotations

import argparse

from workbench.cli.common import zxid


def add_arguments(parser: argparse.ArgumentParser) -> None:
    zk_sub = parser.add_subparsers(dest="zk_command", required=True)
    history = zk_sub.add_parser("history", help="every change, one line per txn or multi op")
    history.add_argument("inputs", nargs="+", help="a bundle, a dataDir (version-2/) or log.* files")
    history.add_argument("--path", help="only znodes whose path starts with this")
    history.add_argument("--since", type=zxid, help="only txns with a zxid at or after this (0x1a or 26)")
    history.add_argument("--format", choices=("text", "jsonl"), default="text")


def run(args: argparse.Namespace) -> int:
    from workbench.cli.zk_history import run_history

    return run_history(args)
