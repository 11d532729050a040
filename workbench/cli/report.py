"""`workbench report`: the postmortem template run on a bundle, as one HTML file."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from workbench.cli.common import BUNDLE_HELP


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("bundle", help=BUNDLE_HELP)
    parser.add_argument(
        "--out",
        required=True,
        help="folder for postmortem.html, the executed notebook, findings.json and, where a repair applies, "
        "the repair plan (repair-plan/)",
    )


def run(args: argparse.Namespace) -> int:
    """Exit 0 with the HTML's path, 2 when the bundle is missing, the notebooks extra is not installed or
    the template failed on the bundle."""
    from workbench import report

    try:
        from papermill.exceptions import PapermillExecutionError
    except ImportError:
        print("workbench: report needs pip install 'kafka-forensic-workbench[notebooks]'", file=sys.stderr)
        return 2
    if not Path(args.bundle).exists():
        print(f"workbench: {args.bundle}: no such bundle", file=sys.stderr)
        return 2
    print(
        f"Running the postmortem template on {args.bundle} (a kernel and Spark start: about a minute) ...",
        file=sys.stderr,
    )
    try:
        html = report.write(args.bundle, args.out)
    except PapermillExecutionError as e:
        print(
            f"workbench: the postmortem template failed on {args.bundle}: {e.ename}: {e.evalue}",
            file=sys.stderr,
        )
        print(f"  the executed notebook is {Path(args.out) / 'postmortem.ipynb'}", file=sys.stderr)
        return 2
    print(html)
    return 0
