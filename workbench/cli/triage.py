"""`workbench triage`: findings with their evidence, then coverage and bad records."""

from __future__ import annotations

import argparse

from workbench.cli import render
from workbench.cli.common import add_bundle, open_or_say, progress


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_bundle(parser)
    parser.add_argument("--format", choices=("text", "json", "markdown"), default="text")


def run(args: argparse.Namespace) -> int:
    """Exit 0 when nothing is critical, 1 when something is, 2 when the bundle cannot be opened."""
    from workbench.analysis.triage import triage

    bundle = open_or_say(args.bundle, "Triaging")
    if bundle is None:
        return 2
    with progress(bundle, args.quiet):
        result = triage(bundle)
    shown = {"json": result.json, "markdown": lambda: render.triage_markdown(result)}
    print(shown.get(args.format, lambda: render.triage_text(result))())
    return 1 if result.critical else 0
