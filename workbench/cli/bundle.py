"""`workbench bundle assemble`: a bundle from loose files, each recognised by its content."""

from __future__ import annotations

import argparse

from workbench.capture import assemble


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="action", required=True)
    assemble.add_arguments(actions.add_parser("assemble", help="sort pasted outputs and logs into a bundle"))


def run(args: argparse.Namespace) -> int:
    return assemble.run(args)
