"""Progress of Spark work: drawn while a job runs when asked, silent when stderr is no terminal."""

from __future__ import annotations

import io

from pyspark.sql import SparkSession

from workbench.progress import Progress


def _job(spark: SparkSession) -> None:
    spark.range(0, 60_000_000, numPartitions=24).selectExpr("sum(id * id % 7)").collect()


def test_progress_shows_the_running_stage_and_ends_with_the_time(spark: SparkSession) -> None:
    out = io.StringIO()
    with Progress(spark, "3 log files, 12 MB", enabled=True, every=0.05, out=out):
        _job(spark)
    lines = [line.strip() for line in out.getvalue().split("\r") if line.strip()]
    running = [line for line in lines if "tasks" in line]
    assert running, lines
    assert all("reading 3 log files, 12 MB" in line for line in running)
    assert any("/24 tasks" in line for line in running)
    assert lines[-1].startswith("done in ")


def test_progress_is_quiet_when_stderr_is_no_terminal(spark: SparkSession) -> None:
    out = io.StringIO()  # isatty() is False, as for a pipe or a file
    with Progress(spark, "3 log files", every=0.05, out=out):
        _job(spark)
    assert out.getvalue() == ""
