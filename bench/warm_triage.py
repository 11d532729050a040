"""Warm triage, this checkout against a baseline checkout, side by side: what the test suite and a notebook
pay per bundle once Spark is up.

Each round runs one process per checkout (this one, then `--baseline`, alternated), which starts Spark,
triages every bundle once to warm the JVM, then triages each again and prints the seconds of those
second triages. Simulated stories are written once under `--stories` (tests/stories.py names them).

    .venv/bin/python bench/warm_triage.py --baseline ../old-checkout [--rounds 3] \
        [--story deletion-stuck@2.8.2#4 ...] [BUNDLE ...]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

CHILD = """
import sys, time
from pathlib import Path
from workbench.analysis.triage import triage
from workbench.frames import open_bundle
from workbench.spark import spark_session

spark = spark_session()
paths = [Path(p) for p in sys.argv[1:]]
for p in paths:
    with open_bundle(p, spark) as b:
        triage(b)
for p in paths:
    began = time.perf_counter()
    with open_bundle(p, spark) as b:
        triage(b)
    print(time.perf_counter() - began)
"""


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("bundles", nargs="*", type=Path)
    parser.add_argument("--baseline", type=Path, required=True, help="another checkout of the workbench")
    parser.add_argument("--story", action="append", default=[], help="a story of tests/stories.py")
    parser.add_argument("--stories", type=Path, default=Path(tempfile.gettempdir()) / "bench-stories")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    bundles = [str(b) for b in args.bundles] + [str(simulated(args.stories, s)) for s in args.story]
    took: dict[str, list[list[float]]] = {"this checkout": [], "baseline": []}
    for _ in range(args.rounds):
        for name, tree in (("this checkout", REPO), ("baseline", args.baseline.resolve())):
            env = {**os.environ, "PYTHONPATH": str(tree)}
            out = subprocess.run(
                [sys.executable, "-c", CHILD, *bundles], env=env, capture_output=True, text=True, check=True
            ).stdout
            took[name].append([float(line) for line in out.split()])
    for i, bundle in enumerate(bundles):
        print(Path(bundle).name)
        base = statistics.median(r[i] for r in took["baseline"])
        for name, rounds in took.items():
            seconds = [r[i] for r in rounds]
            shown = ", ".join(f"{s:.1f}" for s in seconds)
            print(f"  {name:<14} {shown} s ({statistics.median(seconds) / base:.2f}x)")


def simulated(root: Path, name: str) -> Path:
    """The story as tests/stories.py tells it, written once under root."""
    sys.path.insert(0, str(REPO / "tests"))
    from stories import ALL, OWN  # type: ignore[import-not-found]

    from workbench.simulate.run import simulate
    from workbench.simulate.scenarios import SCENARIOS

    s = ALL[name]
    out = root / name.replace("@", "-").replace("#", "-")
    if not (out / "truth.json").is_file():
        SCENARIOS.update(OWN)
        simulate(s.scenario, out, s.seed, s.version, s.scale, clock_skew_ms=s.clock_skew_ms, noise_rate=0.0)
    return out


if __name__ == "__main__":
    main()
