"""The floor of a triage whose analyses read the one history collected once (issue 74, item 5's design)
against a whole triage: what no analysis's own query could take below.

The floor is every view the analyses declare (`Analysis.reads`) made as triage makes them (in its threads,
beside what it asks across the analyses) and each DataFrame among them collected whole, as if the
analyses then reasoned over those rows in Python alone, at no cost. Two measures, on one bundle:

- warm: one process, two triages to warm the JVM, then `--rounds` pairs of a triage and the floor, each on
  a fresh open of the bundle; seconds and the ratio.
- cold (`--cold`): a process per run, alternated: Spark's start-up, then a triage or the floor; each
  against that start-up (issue 74's target: a cold triage at most 3x it).

    .venv/bin/python bench/history_floor.py sample_data/topicid-mismatch-2.8 [--rounds 3] [--cold]
"""

from __future__ import annotations

import argparse
import functools
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame

REPO = Path(__file__).resolve().parents[1]


def floor(bundle: Any) -> int:
    """Make the declared views of every analysis that runs on the bundle and collect each DataFrame
    among them (a view, or a DataFrame field of one); the rows collected."""
    from workbench.analysis.registry import ANALYSES
    from workbench.analysis.triage import _inheriting, asked_across
    from workbench.model.reads import MADE_BY
    from workbench.model.views import views

    v = views(bundle)
    names = list(dict.fromkeys(r for a in ANALYSES if a.runs_on(v.evidence) for r in a.reads))

    def made(name: str) -> int:
        got = getattr(v, name) if name not in MADE_BY else MADE_BY[name](bundle)
        items = got if isinstance(got, (tuple, list)) else [got]
        frames = [x for x in items if isinstance(x, DataFrame)]
        frames += [
            y for x in items if hasattr(x, "__dict__") for y in vars(x).values() if isinstance(y, DataFrame)
        ]
        return sum(len(f.collect()) for f in frames)

    with ThreadPoolExecutor(8, thread_name_prefix="floor") as pool:
        rows = [pool.submit(_inheriting(bundle, functools.partial(made, n))) for n in names]
        aside = pool.submit(_inheriting(bundle, lambda: asked_across(bundle)))
        total = sum(r.result() for r in rows)
        aside.result()
    return total


def warm(path: Path, rounds: int) -> None:
    from workbench.analysis.triage import triage
    from workbench.frames import open_bundle
    from workbench.spark import spark_session

    spark = spark_session()
    for _ in range(2):
        with open_bundle(path, spark) as b:
            triage(b)
    for r in range(rounds):
        began = time.perf_counter()
        with open_bundle(path, spark) as b:
            triage(b)
        whole = time.perf_counter() - began
        began = time.perf_counter()
        with open_bundle(path, spark) as b:
            rows = floor(b)
        least = time.perf_counter() - began
        print(f"round {r + 1}: triage {whole:.2f} s, floor {least:.2f} s ({rows} rows), {least / whole:.2f}x")


def once(path: Path, what: str) -> None:
    """A fresh process's start-up, then a triage or the floor."""
    began = time.perf_counter()
    from workbench.frames import open_bundle
    from workbench.spark import spark_session

    spark = spark_session()
    up = time.perf_counter() - began
    began = time.perf_counter()
    with open_bundle(path, spark) as b:
        if what == "triage":
            from workbench.analysis.triage import triage

            triage(b)
        else:
            floor(b)
    took = time.perf_counter() - began
    print(f"{what}: start-up {up:.1f} s, then {took:.1f} s, {took / up:.1f}x the start-up")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("bundle", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cold", action="store_true", help="a fresh process per run, alternated")
    parser.add_argument("--once", choices=("triage", "floor"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.once:
        once(args.bundle, args.once)
    elif args.cold:
        for _ in range(args.rounds):
            for what in ("triage", "floor"):
                cmd = [sys.executable, __file__, str(args.bundle), "--once", what]
                out = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, check=True)
                print(out.stdout.strip().splitlines()[-1], flush=True)
    else:
        warm(args.bundle, args.rounds)


if __name__ == "__main__":
    main()
