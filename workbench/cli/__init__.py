"""The `workbench` command: the same answers as the notebooks, without Jupyter.

One module per command, each with `add_arguments(parser)` and `run(args) -> exit code`; what they print
is rendered in `render.py`. Adding a command is its module and one line in `COMMANDS`.
"""

from __future__ import annotations

import argparse
import importlib
from typing import Any

# name, help, and the module that adds its arguments and runs it (each imports Spark only when it runs)
COMMANDS = (
    ("load", "load a bundle and summarise what it holds", ".load"),
    ("triage", "findings with their evidence, then coverage and bad records", ".triage"),
    ("timeline", "every broker's events, ZooKeeper's txns and file times, in order", ".timeline"),
    ("whatif", "what a change would do, computed on the evidence, never run", ".whatif"),
    ("remediate", "write the topic-id repair plan: reviewed scripts, never run", ".remediate"),
    ("report", "the postmortem report: the template notebook run on a bundle, as HTML", ".report"),
    ("capture", "collect evidence into a bundle (read-only)", ".capture"),
    ("bundle", "assemble a bundle from pasted outputs and copied logs", ".bundle"),
    ("zk", "ZooKeeper's own history, from its txn logs", ".zk"),
    ("simulate", "replay an incident into a bundle with its truth.json", "workbench.simulate.run"),
)  # fmt: skip


def parser() -> argparse.ArgumentParser:
    """Every command's arguments (a test parses with it to run a command's body on a bundle it holds)."""
    top = argparse.ArgumentParser(prog="workbench", description=__doc__.split("\n\n")[0])
    sub = top.add_subparsers(dest="command", required=True)
    for name, text, module in COMMANDS:
        command = sub.add_parser(name, help=text)
        command.set_defaults(command_module=module)
        _module(module).add_arguments(command)
    return top


def _module(name: str) -> Any:
    return importlib.import_module(name, __name__)  # ".load": this package's


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    return int(_module(args.command_module).run(args))
