"""Where one triage's Spark jobs come from: every DataFrame action is wrapped to record the workbench lines
that asked for it (the caller and the one before) and the jobs Spark's status store lists while it runs;
the analyses run one after another (`triage(threads=1)`) so that each job has one caller. The place to
start when the jobs per triage creep up (issue 74: at most half of 82; `tests/test_triage.py` holds the
ceiling). An action inside another (first -> head -> take -> collect) is counted by each.

    .venv/bin/python bench/jobs_by_caller.py sample_data/topicid-mismatch-2.8
"""

from __future__ import annotations

import argparse
import collections
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pyspark.sql.classic.dataframe import DataFrame

from workbench.analysis.triage import triage
from workbench.frames import open_bundle
from workbench.spark import spark_session

ACTIONS = ("collect", "first", "count", "toPandas", "isEmpty", "head", "take", "toLocalIterator")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("bundle", type=Path)
    args = parser.parse_args()
    spark = spark_session()
    status = spark.sparkContext._jsc.sc().statusStore()  # type: ignore[union-attr]

    def jobs() -> int:
        return int(status.jobsList(None).size())

    by_caller: collections.Counter[str] = collections.Counter()

    def counted(name: str, action: Callable[..., Any]) -> Callable[..., Any]:
        def run(self: DataFrame, *args: Any, **kwargs: Any) -> Any:
            ours = [f for f in traceback.extract_stack()[:-1] if "/workbench/" in f.filename]
            caller = " <- ".join(f"{f.filename.split('/workbench/')[-1]}:{f.lineno}" for f in ours[-2:])
            caller = caller or "(no workbench line: a task of triage's pool)"
            before = jobs()
            try:
                return action(self, *args, **kwargs)
            finally:
                by_caller[f"{name} {caller}"] += jobs() - before

        return run

    for name in ACTIONS:
        setattr(DataFrame, name, counted(name, getattr(DataFrame, name)))
    bundle = open_bundle(args.bundle, spark)
    before = jobs()
    triage(bundle, threads=1)
    print(f"{jobs() - before} jobs, {sum(by_caller.values())} counted by caller (nested actions twice)")
    for caller, n in sorted(by_caller.items(), key=lambda x: (-x[1], x[0])):
        if n:
            print(f"{n:>4}  {caller}")
    spark.stop()


if __name__ == "__main__":
    main()
