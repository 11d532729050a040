"""The notebooks' CI step (`make test`'s nbval): one notebook after another (the baseline) against two at a
time (pytest-xdist, `--dist loadfile`: each notebook's cells stay in order in one kernel), alternated so
that both see the same machine. Wall seconds and the ratio to the baseline.

With --against DIR (a checkout of an earlier commit: `git worktree add DIR COMMIT`) it compares instead the
step as `make test` runs it there (the baseline, its own notebooks and workbench) and here.

    .venv/bin/python bench/notebooks_ci.py --rounds 2 [--against DIR]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from timing import alternated, print_ratios

REPO = Path(__file__).resolve().parent.parent


def nbval(repo: Path) -> list[str]:
    sanitize = str(repo / "notebooks" / "sanitize.cfg")
    plugins = ["--nbval", "--nbval-current-env", "--nbval-sanitize-with", sanitize, "-p", "no:cacheprovider"]
    return [sys.executable, "-m", "pytest", "-q", *plugins, "--rootdir", str(repo), str(repo / "notebooks")]


TWO = ["-n", "2", "--dist", "loadfile"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--against", type=Path, help="a checkout of an earlier commit")
    args = parser.parse_args()
    ways = {"one at a time": (REPO, nbval(REPO)), "two at a time": (REPO, [*nbval(REPO), *TWO])}
    if args.against:
        there = args.against.resolve()
        ways = {"there": (there, [*nbval(there), *TWO]), "here": (REPO, [*nbval(REPO), *TWO])}
    print_ratios(alternated(ways, args.rounds, "nbval"))


if __name__ == "__main__":
    main()
