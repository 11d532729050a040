"""The test suite side by side: `pytest` in an earlier checkout (the baseline) and here, alternated so that
both see the same machine, each with its own tests and workbench. Wall seconds, peak memory and the ratio
to the baseline (issue 74's target: the whole suite at most half of the main it started from).

The baseline is a checkout of an earlier commit (`git worktree add DIR COMMIT`); both run with this
checkout's virtualenv and JVM helper jar (built from jvm/: rebuild it where jvm/ differs). Any pytest
arguments after `--` select what runs in both (default: the whole suite, as CI runs it).

    .venv/bin/python bench/suite.py --against DIR [--rounds 2] [-- -m "not slow" tests/test_triage.py]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from timing import alternated, print_ratios

REPO = Path(__file__).resolve().parent.parent


def pytest(repo: Path, selection: list[str]) -> list[str]:
    """The suite of `repo`, as `make test` runs it there (its pyproject's options)."""
    return [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "no:cacheprovider",
        "--rootdir",
        str(repo),
        *selection,
    ]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--against", type=Path, required=True, help="a checkout of an earlier commit")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("selection", nargs="*", help="pytest arguments, after --")
    args = parser.parse_args()
    ways = {
        way: (repo, pytest(repo, args.selection))
        for way, repo in (("there", args.against.resolve()), ("here", REPO))
    }
    print_ratios(alternated(ways, args.rounds, "pytest"))


if __name__ == "__main__":
    main()
