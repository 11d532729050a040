"""The notebooks' CI step (`make test`'s nbval): one notebook after another (the baseline) against two at a
time (pytest-xdist, `--dist loadfile`: each notebook's cells stay in order in one kernel), alternated so
that both see the same machine. Wall seconds and the ratio to the baseline.

With --against DIR (a checkout of an earlier commit: `git worktree add DIR COMMIT`) it compares instead the
step as `make test` runs it there (the baseline, its own notebooks and workbench) and here.

    .venv/bin/python bench/notebooks_ci.py --rounds 2 [--against DIR]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from timing import run_with_peaks

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
    seconds: dict[str, list[float]] = {way: [] for way in ways}
    for _ in range(args.rounds):
        for way, (repo, command) in ways.items():
            # the kernels import the workbench of the checkout they run in (before the venv's own)
            run = run_with_peaks(command, env={**os.environ, "PYTHONPATH": str(repo)}, cwd=repo)
            if run.returncode:
                sys.exit(f"{way}: nbval failed (exit {run.returncode}): {' '.join(command)}")
            seconds[way].append(run.seconds)
            time.sleep(2)
    base = min(next(iter(seconds.values())))
    print(f"{'way':<16} {'runs (s)':<24} {'best':>7} {'ratio':>7}")
    for way, runs in seconds.items():
        shown = ", ".join(f"{s:.1f}" for s in runs)
        print(f"{way:<16} {shown:<24} {min(runs):>7.1f} {min(runs) / base:>7.2f}")


if __name__ == "__main__":
    main()
