"""Broker logs at scale: our loader (typed events in Spark) against grep over the same files, side by side.

    .venv/bin/python bench/load_logs.py                    # simulates a ~1 GB bundle first
    .venv/bin/python bench/load_logs.py --noise-rate 25    # ~5 GB (30 brokers, 6 h of logs)
    .venv/bin/python bench/load_logs.py --bundle DIR       # or times an existing bundle

The bundle comes from `workbench simulate` (30 brokers, 10,000 partitions; the size follows the
background lines' rate and the hours), whose time and memory are printed too. Baseline: `grep -c` of
the lines that look like log4j lines, as an SRE counts them; then `log_events` (every line parsed to
an event) and the typed ones (each matched against the catalog), each a count in Spark. Prints lines/s
and each one's ratio to grep. Best of --repeat runs.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from timing import best

from workbench.simulate.run import simulate
from workbench.simulate.scenarios import Scale


def generate(out: Path, args: argparse.Namespace) -> None:
    scale = Scale(brokers=args.brokers, topics=100, partitions=args.partitions // 100, hours=args.hours)
    start = time.perf_counter()
    simulate("controller-failover", out, seed=1, scale=scale, noise_rate=args.noise_rate)
    secs = time.perf_counter() - start
    size = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    rate = f"{size / 1e6 / secs:.1f} MB/s"
    print(f"simulated {size / 1e9:.2f} GB in {secs:.0f} s ({rate}), peak RSS {peak:.0f} MB")


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("--bundle", type=Path)
    parser.add_argument("--brokers", type=int, default=30)
    parser.add_argument("--partitions", type=int, default=10_000)
    parser.add_argument("--hours", type=float, default=6)
    parser.add_argument("--noise-rate", type=float, default=5.0)
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-logs-") as tmp:
        bundle = args.bundle or Path(tmp) / "bundle"
        if args.bundle is None:
            generate(bundle, args)
        files = sorted(str(f) for f in bundle.glob("brokers/*/logs/*") if not f.name.endswith(".gz"))
        if not files:
            sys.exit(f"{bundle}: no uncompressed broker logs under brokers/*/logs/")

        def grep() -> int:
            out = subprocess.run(
                ["grep", "-chE", r"^\[[0-9]{4}-", *files], capture_output=True, text=True, check=True
            )
            return sum(int(x) for x in out.stdout.split())

        from workbench.frames import open_bundle
        from workbench.sources.logs import read_logs
        from workbench.spark import spark_session

        spark = spark_session()
        log_files = open_bundle(bundle, spark).evidence.log_files

        def events() -> int:  # read_logs itself: the Bundle would cache the frame in memory
            return read_logs(spark, log_files)[0].count()

        def typed() -> int:
            return read_logs(spark, log_files)[0].where("event is not null").count()

        runs = [("grep -c", grep), ("log_events", events), ("typed events", typed)]
        results = {name: best(fn, args.repeat) for name, fn in runs}
        base_rate = results["grep -c"][1] / results["grep -c"][0]
        print(f"{len(files)} log files")
        print(f"{'':<16}{'seconds':>10}{'lines':>12}{'lines/s':>12}{'ratio':>8}")
        for name, (secs, n) in results.items():
            print(f"{name:<16}{secs:>10.2f}{n:>12,}{n / secs:>12,.0f}{n / secs / base_rate:>8.3f}")


if __name__ == "__main__":
    main()
