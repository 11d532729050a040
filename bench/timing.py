"""What the benches share: the best of several timed runs, and a command's wall time and peak memory."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path


def best(fn: Callable[[], int], repeat: int) -> tuple[float, int]:
    """The fastest of `repeat` runs of `fn`, in seconds, and what it counted."""
    times, n = [], 0
    for _ in range(repeat):
        start = time.perf_counter()
        n = fn()
        times.append(time.perf_counter() - start)
    return min(times), n


@dataclass(frozen=True)
class Run:
    """One command's wall time and the peak resident memory of its processes, by kind."""

    seconds: float
    peak_mb: dict[str, float]  # 'driver' (the command's own Python), 'jvm', 'python workers'
    returncode: int


def run_with_peaks(
    command: list[str],
    every: float = 0.2,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> Run:
    """Run a command, sampling the resident memory of it and its descendants from /proc. Python
    workers are summed (there is one per core); the driver and the JVM are one process each."""
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, cwd=cwd)
    peaks: dict[str, float] = {}
    while proc.poll() is None:
        now: dict[str, float] = {}
        for pid, kind in _tree(proc.pid).items():
            now[kind] = now.get(kind, 0.0) + _rss_mb(pid)
        peaks = {k: max(peaks.get(k, 0.0), now.get(k, 0.0)) for k in {*peaks, *now}}
        time.sleep(every)
    return Run(time.perf_counter() - start, peaks, proc.returncode)


def _tree(root: int) -> dict[int, str]:
    """root ('driver') and its descendants that are a JVM ('jvm') or Python ('python workers')."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(parent, []).append(int(stat.parent.name))
    kinds, todo = {root: "driver"}, list(children.get(root, []))
    while todo:
        pid = todo.pop()
        try:
            exe = Path(os.readlink(f"/proc/{pid}/exe")).name
        except OSError:
            continue
        if exe == "java":
            kinds[pid] = "jvm"
        elif exe.startswith("python"):
            kinds[pid] = "python workers"
        todo += children.get(pid, [])
    return kinds


def _rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def alternated(ways: dict[str, tuple[Path, list[str]]], rounds: int, what: str) -> dict[str, list[Run]]:
    """Each way's command (run in its checkout, whose workbench it imports before the venv's own), one
    way after the other, `rounds` times, so that all see the same machine; exits on a failed run."""
    runs: dict[str, list[Run]] = {way: [] for way in ways}
    for _ in range(rounds):
        for way, (repo, command) in ways.items():
            run = run_with_peaks(command, env={**os.environ, "PYTHONPATH": str(repo)}, cwd=repo)
            if run.returncode:
                sys.exit(f"{way}: {what} failed (exit {run.returncode}): {' '.join(command)}")
            runs[way].append(run)
            time.sleep(2)
    return runs


def print_ratios(runs: dict[str, list[Run]]) -> None:
    """Each way's wall seconds, best, peak memory (all its processes) and ratio to the first way's best."""
    base = min(r.seconds for r in next(iter(runs.values())))
    print(f"{'way':<16} {'runs (s)':<28} {'best':>8} {'peak MB':>8} {'ratio':>7}")
    for way, done in runs.items():
        shown = ", ".join(f"{r.seconds:.1f}" for r in done)
        best = min(r.seconds for r in done)
        peak = max(sum(r.peak_mb.values()) for r in done)
        print(f"{way:<16} {shown:<28} {best:>8.1f} {peak:>8.0f} {best / base:>7.2f}")
