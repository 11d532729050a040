"""Broker logs at incident scale: the loader against grep and a Python loop, side by side, per size.

    .venv/bin/python bench/load_logs.py                      # 0.1 and 1 GB bundles
    .venv/bin/python bench/load_logs.py --sizes 0.1,1,10     # and 10 GB (simulating it takes ~15 min)
    .venv/bin/python bench/load_logs.py --bundle DIR         # or an existing bundle
    BENCH_DATA=DIR .venv/bin/python bench/load_logs.py       # keep the simulated bundles in DIR, reuse them

Each bundle comes from `workbench simulate` (30 brokers, 10,000 partitions, a controller failover);
its size follows the background lines' rate. On the same files: `LC_ALL=C grep -c` of the log4j header
(what reading costs, the ceiling), a single-process Python loop doing the loader's work
(`python_loop.py`, the baseline), Spark's JVM alone taking each event's time stamp, level, logger and
logIdent with `regexp_extract` ("jvm header"), and `log_events` with kinds and fields, every column
computed (Spark's `noop` sink), parsed in the Python workers ("log_events py") and as shipped (files in
Kafka's layout parsed in the JVM by jvm/); the best of --repeat runs, the two slowest baselines once.
Prints physical lines/s and MB/s and each one's ratio to the Python loop. Then one broker's server logs
as a single rotated `.gz`: the loader on it read as it is (on one core, the way before), the loader's
way (unpacked for Spark to split it when larger than spark.sql.files.maxPartitionBytes), and on the
plain file. Then `workbench triage` on the bundle, end
to end in its own process: wall time and peak resident memory of the driver, the JVM and the Python
workers (with the default driver memory).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

from python_loop import python_loop
from timing import best, run_with_peaks

from workbench.simulate.run import simulate
from workbench.simulate.scenarios import Scale

# What "jvm header" takes from each event with Spark's regexp_extract: time stamp, level, logger, logIdent.
JVM_HEADER = (
    r"^\[?(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\]",
    r"^\[?[^\]]*\] (\w+) ",
    r"\(([A-Za-z_$][\w$.-]*)\)\s*$",
    r"^\[?[^\]]*\] \w+ \[([^\[\]]+)\] ",
)
# 30 brokers' logs: the story's own lines, then per background line a second per broker and hour
# (measured: 0.10 GB at 2.8 lines/s for 1 h, 0.61 GB at 27.8).
GB_STORY, GB_PER_RATE_HOUR = 0.04, 0.0204


def generate(out: Path, gigabytes: float) -> None:
    hours = 1.0 if gigabytes <= 1 else 6.0
    rate = max(0.1, gigabytes - GB_STORY) / GB_PER_RATE_HOUR / hours
    start = time.perf_counter()
    scale = Scale(brokers=30, topics=100, partitions=100, hours=hours)
    simulate("controller-failover", out, seed=1, scale=scale, noise_rate=rate)
    secs = time.perf_counter() - start
    size = _size(_logs(out))
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"simulated {size / 1e9:.2f} GB of logs in {secs:.0f} s, peak RSS {peak:.0f} MB", flush=True)


def _logs(bundle: Path) -> list[Path]:
    return sorted(f for f in bundle.glob("brokers/*/logs/*") if f.is_file())


def _size(files: list[Path]) -> int:
    return sum(f.stat().st_size for f in files)


def triage(bundle: Path) -> None:
    run = run_with_peaks([str(Path(sys.executable).parent / "workbench"), "triage", str(bundle)])
    peaks = ", ".join(f"{kind} {mb:,.0f} MB" for kind, mb in sorted(run.peak_mb.items()))
    # exit 1 is triage's own: a critical finding
    outcome = "completed" if run.returncode in (0, 1) else f"FAILED (exit {run.returncode})"
    print(f"workbench triage: {outcome} in {run.seconds:.1f} s; peak resident memory: {peaks}", flush=True)


def rotated_gzip(bundle: Path, repeat: int) -> None:
    """The broker with the most server log, its files joined into one `.gz` as a daily rotation leaves it."""
    from workbench.bundle import log_files
    from workbench.sources import logs
    from workbench.spark import spark_session

    spark = spark_session()
    brokers = {d: sorted(d.glob("server.log*")) for d in bundle.glob("brokers/*/logs")}
    broker, parts = max(brokers.items(), key=lambda kv: _size(kv[1]))
    with tempfile.TemporaryDirectory(prefix="bench-gzip-") as tmp:
        plain, packed = Path(tmp) / "server.log.2024-03-12", Path(tmp) / "server.log.2024-03-12.gz"
        with plain.open("wb") as out:
            for part in parts:
                out.write(part.read_bytes())
        with packed.open("wb") as out:
            subprocess.run(["gzip", "-1", "-c", str(plain)], stdout=out, check=True)
        physical = int(subprocess.check_output(["wc", "-l", str(plain)]).split()[0])
        mb = plain.stat().st_size / 1e6, packed.stat().st_size / 1e6
        print(f"one rotated .gz: broker {broker.parent.name}'s {len(parts)} server logs joined,", end=" ")
        print(f"{mb[0]:.0f} MB ({mb[1]:.0f} MB packed), {physical:,} lines", flush=True)
        broker_id = int(broker.parent.name)

        def loader(path: Path) -> Callable[[], int]:
            def load() -> int:
                events = logs.read_logs(spark, log_files([path], broker_id))[0]
                events.write.format("noop").mode("overwrite").save()
                return physical

            return load

        worth_unpacking = logs._worth_unpacking
        try:
            logs._worth_unpacking = lambda spark, files: frozenset()  # the loader before it unpacked
            as_it_is = best(loader(packed), repeat)[0]
        finally:
            logs._worth_unpacking = worth_unpacking
        results = {
            ".gz read as it is": as_it_is,
            ".gz, loader's way": best(loader(packed), repeat)[0],
            "plain file": best(loader(plain), repeat)[0],
        }
    print(f"{'':<20}{'seconds':>9}{'lines/s':>12}{'vs as it is':>13}")
    for name, secs in results.items():
        print(f"{name:<20}{secs:>9.1f}{physical / secs:>12,.0f}{as_it_is / secs:>13.2f}", flush=True)


def run(bundle: Path, repeat: int) -> None:
    files = _logs(bundle)
    if not files:
        sys.exit(f"{bundle}: no broker logs under brokers/*/logs/")
    plain = [str(f) for f in files if not f.name.endswith(".gz")]
    env = {**os.environ, "LC_ALL": "C"}

    def grep() -> int:
        out = subprocess.run(
            ["grep", "-chE", r"^\[[0-9]{4}-", *plain], capture_output=True, text=True, check=True, env=env
        )
        return sum(int(x) for x in out.stdout.split())

    def lines() -> int:
        out = subprocess.run(["wc", "-l", *plain], capture_output=True, text=True, check=True, env=env)
        return int(out.stdout.split()[-2])

    from pyspark.sql import functions as F

    from workbench.frames import open_bundle
    from workbench.sources import jvm_logs
    from workbench.sources.logs import read_logs
    from workbench.spark import spark_session

    spark = spark_session()
    log_files = open_bundle(bundle, spark).evidence.log_files
    physical = lines()

    def loader() -> int:  # read_logs itself: the Bundle would cache the frame
        read_logs(spark, log_files)[0].write.format("noop").mode("overwrite").save()
        return physical

    def in_python() -> int:  # the same with every file parsed in the Python workers (no jar)
        available = jvm_logs.available
        try:
            jvm_logs.available = lambda _spark: False
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # the fallback's notice
                return loader()
        finally:
            jvm_logs.available = available

    def jvm_header() -> int:  # Spark's JVM alone: the files in events, their header's parts taken
        events = (
            spark.read.option("lineSep", "\n[")
            .text(plain)
            .select(*(F.regexp_extract("value", pattern, 1) for pattern in JVM_HEADER))
        )
        events.write.format("noop").mode("overwrite").save()
        return physical

    def loop() -> int:
        return python_loop(files)[0]

    size = _size(files)
    print(f"{len(files)} log files, {size / 1e9:.2f} GB, {physical:,} lines", flush=True)
    results = {}
    steps = [
        ("grep -c", grep),
        ("python loop", loop),
        ("jvm header", jvm_header),
        ("log_events py", in_python),
        ("log_events", loader),
    ]
    for name, fn in steps:
        results[name] = best(fn, 1 if name in ("python loop", "log_events py") else repeat)
        print(f"  {name}: {results[name][0]:.1f} s", flush=True)
    base = physical / results["python loop"][0]
    print(f"{'':<14}{'seconds':>9}{'lines/s':>12}{'MB/s':>8}{'vs loop':>9}")
    for name, (secs, _) in results.items():
        rate = physical / secs
        print(f"{name:<14}{secs:>9.1f}{rate:>12,.0f}{size / 1e6 / secs:>8.1f}{rate / base:>9.2f}")


def main() -> None:
    raw = argparse.RawDescriptionHelpFormatter
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=raw)
    parser.add_argument("--bundle", type=Path)
    parser.add_argument("--sizes", default="0.1,1", help="GB of logs per simulated bundle")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    if args.bundle:
        run(args.bundle, args.repeat)
        rotated_gzip(args.bundle, args.repeat)
        triage(args.bundle)
        return
    kept = os.environ.get("BENCH_DATA")
    for gigabytes in (float(x) for x in args.sizes.split(",")):
        print(f"== {gigabytes:g} GB", flush=True)
        with tempfile.TemporaryDirectory(prefix="bench-logs-") as tmp:
            bundle = Path(kept or tmp) / f"logs-{gigabytes:g}GB"
            if not (bundle / ".complete").exists():
                shutil.rmtree(bundle, ignore_errors=True)
                generate(bundle, gigabytes)
                (bundle / ".complete").touch()
            run(bundle, args.repeat)
            rotated_gzip(bundle, args.repeat)
            triage(bundle)


if __name__ == "__main__":
    main()
