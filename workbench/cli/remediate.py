"""`workbench remediate`: the topic-id repair plan, written as reviewed scripts, never run."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from workbench.cli.common import add_bundle, open_or_say, progress


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_bundle(parser)
    parser.add_argument("--out", required=True, help="folder for PLAN.md and one script per broker")


def run(args: argparse.Namespace) -> int:
    """Exit 0 when the plan is written (an empty one says why), 2 when the bundle or --out is unusable."""
    from workbench import remediation
    from workbench.remediation.planner import writable

    try:
        writable(Path(args.out))
    except OSError as e:
        print(f"workbench: {e}", file=sys.stderr)
        return 2
    bundle = open_or_say(args.bundle, "Planning the repair of")
    if bundle is None:
        return 2
    with progress(bundle, args.quiet):
        plan = remediation.plan(bundle)
    try:
        written = plan.write(args.out)
    except (FileExistsError, OSError) as e:
        print(f"workbench: {e}", file=sys.stderr)
        return 2
    print(remediation.summary(plan))
    for path in written:
        print(f"  {path}")
    return 0
