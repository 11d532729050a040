"""The notebooks' CI step (`make test`'s nbval): one notebook after another (the baseline) against two at a
time (pytest-xdist, `--dist loadfile`: each notebook's cells stay in order in one kernel), alternated so
that both see the same machine. Wall seconds and the ratio to the baseline.

    .venv/bin/python bench/notebooks_ci.py --rounds 2
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from timing import run_with_peaks

REPO = Path(__file__).resolve().parent.parent
NBVAL = [
    sys.executable,
    "-m",
    "pytest",
    "-q",
    "--nbval",
    "--nbval-current-env",
    "--nbval-sanitize-with",
    str(REPO / "notebooks" / "sanitize.cfg"),
    "-p",
    "no:cacheprovider",
    str(REPO / "notebooks"),
]
WAYS = {"one at a time": NBVAL, "two at a time": [*NBVAL, "-n", "2", "--dist", "loadfile"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    seconds: dict[str, list[float]] = {way: [] for way in WAYS}
    for _ in range(args.rounds):
        for way, command in WAYS.items():
            run = run_with_peaks(command)
            if run.returncode:
                sys.exit(f"{way}: nbval failed (exit {run.returncode}): {' '.join(command)}")
            seconds[way].append(run.seconds)
            time.sleep(2)
    base = min(seconds["one at a time"])
    print(f"{'way':<16} {'runs (s)':<24} {'best':>7} {'ratio':>7}")
    for way, runs in seconds.items():
        shown = ", ".join(f"{s:.1f}" for s in runs)
        print(f"{way:<16} {shown:<24} {min(runs):>7.1f} {min(runs) / base:>7.2f}")


if __name__ == "__main__":
    main()
