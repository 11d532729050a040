"""Triage of each sample bundle in one process: Spark's start-up, then per bundle the Spark jobs triage
runs (Spark's status tracker) and its in-process time, then the jobs of each analysis (`registry.ANALYSES`)
from a second triage of it, one analysis after another.

Issue 28's targets, both measured in this one run: at most 25 jobs a sample triage, and its time no more
than Spark's own start-up (the ratio column). The jobs show where the time goes on a small bundle: each
costs tens of milliseconds of scheduling whatever the data's size.

    .venv/bin/python bench/triage_jobs.py [--samples sample_data]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from workbench.analysis.findings import Coverage
from workbench.analysis.registry import ANALYSES
from workbench.analysis.triage import finish, triage
from workbench.frames import open_bundle
from workbench.model.views import release
from workbench.spark import spark_session

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--samples", type=Path, default=REPO / "sample_data")
    args = parser.parse_args()
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

        bundle = open_bundle(path, spark)
        began = time.perf_counter()
        triage(bundle)  # as shipped: on small evidence, the analyses side by side in threads
        took, total = time.perf_counter() - began, jobs()
        release(bundle)
        spark.sparkContext.setJobGroup(f"{group}-each", f"{group}-each")
        bundle, coverage, per = open_bundle(path, spark), Coverage(), []
        for analysis in ANALYSES:  # again, one after another, to count each analysis's jobs
            before = jobs(f"{group}-each")
            analysis.findings(bundle, coverage)
            per.append(jobs(f"{group}-each") - before)
        before = jobs(f"{group}-each")
        finish(bundle, coverage)
        per.append(jobs(f"{group}-each") - before)
        print(f"{path.name:<24}{total:>6}{took:>9.1f}{took / started:>13.1f}  {' '.join(map(str, per))}")
        release(bundle)
    spark.stop()


if __name__ == "__main__":
    main()
