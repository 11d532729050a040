"""Triage of each sample bundle in one process: Spark's start-up, then per bundle the Spark jobs triage
runs (Spark's status tracker) and its in-process time, then the jobs of each analysis (`registry.ANALYSES`)
from a second triage of it, one analysis after another.

Issue 28's targets, both measured in this one run: at most 25 jobs a sample triage, and its time no more
than Spark's own start-up (the ratio column). The jobs show where the time goes on a small bundle: each
costs tens of milliseconds of scheduling whatever the data's size.

With --logs-only it triages each sample's logs-only twin instead (`frames.WithoutZooKeeper`: what an SRE
holds who has only the brokers' logs, data dirs and pastes); with --captured, each sample as `workbench
capture` holds it (`frames.WithoutTxnLogs`: ZooKeeper's tree through its client, no txn logs).

With --fresh SAMPLE it measures instead what an SRE waits for: `workbench triage SAMPLE` in a process of
its own, against a process that only starts Spark and runs one job (the baseline), alternated --runs
times (issue 50's target: under 30 s for topicid-mismatch-2.8).

    .venv/bin/python bench/triage_jobs.py [--samples sample_data] [--logs-only | --captured]
        [--fresh SAMPLE [--runs 3]]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from pyspark.sql import SparkSession

from workbench.analysis.findings import Coverage
from workbench.analysis.registry import ANALYSES
from workbench.analysis.triage import checked_across, triage
from workbench.frames import Bundle, WithoutTxnLogs, WithoutZooKeeper, open_bundle
from workbench.model.views import release
from workbench.spark import spark_session

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--samples", type=Path, default=REPO / "sample_data")
    parser.add_argument("--fresh", type=Path, help="a bundle to triage in fresh processes")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--logs-only", action="store_true", help="triage each sample's logs-only twin")
    parser.add_argument("--captured", action="store_true", help="triage each sample without its txn logs")
    args = parser.parse_args()
    if args.fresh:
        fresh(args.fresh, args.runs)
        return
    start = time.perf_counter()
    spark = spark_session()
    spark.range(1).count()  # the first job pays the JVM's and the Python workers' start
    started = time.perf_counter() - start
    print(f"Spark start-up: {started:.1f} s")
    tracker = spark.sparkContext.statusTracker()
    names = [a.name for a in ANALYSES]
    print(f"{'bundle':<24}{'jobs':>6}{'seconds':>9}{'vs start-up':>13}  jobs by analysis:")
    print(f"{'':<52}{', '.join(names)}, the rest")
    for path in sorted(p for p in args.samples.iterdir() if (p / "manifest.json").is_file()):
        group = f"triage-{path.name}"
        spark.sparkContext.setJobGroup(group, group)

        def jobs(group: str = group) -> int:
            return len(tracker.getJobIdsForGroup(group))

        bundle = opened(path, spark, args.logs_only, args.captured)
        began = time.perf_counter()
        triage(bundle)  # as shipped: on small evidence, the analyses side by side in threads
        took, total = time.perf_counter() - began, jobs()
        release(bundle)
        spark.sparkContext.setJobGroup(f"{group}-each", f"{group}-each")
        bundle, coverage, per = opened(path, spark, args.logs_only, args.captured), Coverage(), []
        for analysis in ANALYSES:  # again, one after another, to count each analysis's jobs
            before = jobs(f"{group}-each")
            analysis.findings(bundle, coverage)
            per.append(jobs(f"{group}-each") - before)
        before = jobs(f"{group}-each")
        checked_across(bundle, coverage)
        per.append(jobs(f"{group}-each") - before)
        print(f"{path.name:<24}{total:>6}{took:>9.1f}{took / started:>13.1f}  {' '.join(map(str, per))}")
        release(bundle)
    spark.stop()


def opened(path: Path, spark: SparkSession, logs_only: bool, captured: bool = False) -> Bundle:
    """The sample, its logs-only twin, or the sample as a capture holds it."""
    bundle = open_bundle(path, spark)
    if captured:
        return WithoutTxnLogs(bundle)
    return WithoutZooKeeper(bundle) if logs_only else bundle


def fresh(bundle: Path, runs: int) -> None:
    """Wall seconds of `workbench triage BUNDLE` in its own process, beside a process that only starts
    Spark (the same session settings) and runs one job, alternated."""
    start_only = [
        sys.executable,
        "-c",
        "from workbench.spark import spark_session; spark_session().range(1).count()",
    ]
    triage_cmd = [sys.executable, "-m", "workbench.cli", "triage", str(bundle), "--quiet"]
    seconds: dict[str, list[float]] = {"Spark start-up": [], "workbench triage": []}
    for _ in range(runs):
        for name, cmd in (("Spark start-up", start_only), ("workbench triage", triage_cmd)):
            began = time.perf_counter()
            done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
            seconds[name].append(time.perf_counter() - began)
            if done.returncode not in (0, 1):  # triage: 1 says a finding is critical; 2, no bundle
                raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stderr.decode(errors='replace')}")
    base = min(seconds["Spark start-up"])
    for name, took in seconds.items():
        shown = ", ".join(f"{t:.1f}" for t in took)
        print(f"{name:<18} {shown} s (best {min(took):.1f} s, {min(took) / base:.1f}x the start-up)")


if __name__ == "__main__":
    main()
