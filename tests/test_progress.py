"""Progress of long work (Spark jobs, simulation): shown on a terminal, silent elsewhere or when asked."""

from __future__ import annotations

import io
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from workbench.progress import Progress


def _job(spark: SparkSession) -> None:
    spark.range(0, 60_000_000, numPartitions=24).selectExpr("sum(id * id % 7)").collect()


@pytest.mark.slow
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


@pytest.mark.slow
def test_progress_is_quiet_when_stderr_is_no_terminal(spark: SparkSession) -> None:
    out = io.StringIO()  # isatty() is False, as for a pipe or a file
    with Progress(spark, "3 log files", every=0.05, out=out):
        _job(spark)
    assert out.getvalue() == ""


def _simulate_stderr(out: Path, *flags: str) -> str:
    """`workbench simulate` with its stderr on a terminal (a pseudo-terminal here)."""
    leader, follower = pty.openpty()
    command = [str(Path(sys.executable).parent / "workbench"), "simulate", "deletion-stuck"]
    small = ["--brokers", "3", "--topics", "2", "--partitions", "2", "--hours", "3", "--noise-rate", "0"]
    subprocess.run([*command, "--out", str(out), *small, *flags], stderr=follower, check=True, timeout=300)
    os.close(follower)
    shown = b""
    while select.select([leader], [], [], 0)[0]:
        try:
            data = os.read(leader, 1 << 16)
        except OSError:
            break
        if not data:
            break
        shown += data
    os.close(leader)
    return shown.decode()


@pytest.mark.slow
def test_simulate_shows_its_progress_on_a_terminal_unless_quiet(tmp_path: Path) -> None:
    shown = _simulate_stderr(tmp_path / "a")
    assert "deletion-stuck: 1 of ~3 h simulated" in shown, shown
    assert "s left" in shown
    assert _simulate_stderr(tmp_path / "b", "--quiet") == ""
