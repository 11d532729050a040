"""A bundle's logs-only twin as the tests triage it: a copy without zk/ opened and parsed on its own (the
baseline) against `frames.WithoutZooKeeper`, a view of the whole bundle sharing its parsed logs and data
dirs. One warm process, the whole bundle triaged first (as the suite has it), then each twin triaged both
ways, alternated, with their answers checked equal.

    .venv/bin/python bench/logs_only_twin.py [--rounds 2] [BUNDLE ...]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from workbench.analysis.triage import triage
from workbench.frames import Bundle, WithoutZooKeeper, open_bundle
from workbench.spark import spark_session

REPO = Path(__file__).resolve().parents[1]
SAMPLES = ("healthy-3.6", "deletion-stuck-2.8", "topicid-mismatch-2.8", "controller-failover-2.5")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("bundles", nargs="*", type=Path)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    paths = args.bundles or [REPO / "sample_data" / s for s in SAMPLES]
    spark = spark_session()
    wholes = {p: open_bundle(p, spark) for p in paths}
    for whole in wholes.values():
        triage(whole)  # the JVM warmed, the whole's parse made
    took: dict[str, list[float]] = {"copy": [], "view": []}
    for n in range(args.rounds):
        for p, whole in wholes.items():
            copy = Path(tempfile.mkdtemp()) / p.name
            shutil.copytree(p, copy, ignore=shutil.ignore_patterns("zk"))
            got: dict[str, object] = {}
            for way in ("copy", "view") if n % 2 == 0 else ("view", "copy"):
                began = time.perf_counter()
                twin: Bundle = open_bundle(copy, spark) if way == "copy" else WithoutZooKeeper(whole)
                got[way] = triage(twin).as_dict()
                took[way].append(time.perf_counter() - began)
                twin.release()
            shutil.rmtree(copy.parent)
            assert got["copy"] == got["view"], f"{p.name}: the view's answers are not the copy's"
    copy, view = (statistics.median(took[w]) for w in ("copy", "view"))
    print(f"{len(paths)} bundles x {args.rounds} rounds, median seconds per twin triage:")
    print(f"  copy without zk/ (baseline) {copy:.2f}, view (WithoutZooKeeper) {view:.2f}: {copy / view:.2f}x")


if __name__ == "__main__":
    main()
