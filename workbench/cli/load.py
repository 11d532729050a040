"""`workbench load`: what a bundle holds (`model.summary`), as text or JSON."""

from __future__ import annotations

import argparse
import json

from workbench.cli import render
from workbench.cli.common import add_bundle, open_or_say, progress


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_bundle(parser)
    parser.add_argument("--format", choices=("text", "json"), default="text")


def run(args: argparse.Namespace) -> int:
    from workbench.model.summary import load_summary

    bundle = open_or_say(args.bundle, "Loading")
    if bundle is None:
        return 2
    with progress(bundle, args.quiet):
        summary = load_summary(bundle)
    print(json.dumps(summary, indent=2) if args.format == "json" else render.summary(summary))
    return 0
