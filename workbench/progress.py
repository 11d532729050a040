"""Progress of long Spark work, for a person waiting on it: the stage running, its tasks done, the time
spent and an estimate of the time left, with the size of what is being read.

A thread polls Spark's status tracker (what Spark's own console bar reads) and redraws one line on a
terminal's stderr, or one output in a notebook. Quiet when stderr is no terminal, or when asked.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from types import TracebackType
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


class Progress:
    """`with Progress(spark, "92 log files, 930 MB"):` around work that runs Spark jobs."""

    def __init__(
        self,
        spark: SparkSession,
        reading: str = "",
        enabled: bool | None = None,
        every: float = 0.5,
        out: TextIO | None = None,
    ) -> None:
        self.spark = spark
        self.reading = reading
        self.out = out or sys.stderr
        self.every = every
        self.enabled = self._wanted() if enabled is None else enabled
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._show: Callable[[str], None] = self._terminal
        self._handle = None
        self._width = 0
        self._start = 0.0
        self._seen: dict[int, float] = {}  # stage id -> when it was first seen running

    def _wanted(self) -> bool:
        return _in_notebook() or bool(getattr(self.out, "isatty", lambda: False)())

    def __enter__(self) -> Progress:
        if self.enabled:
            self._start = time.monotonic()
            if _in_notebook():
                from IPython.display import display

                self._handle = display("", display_id=True)
                self._show = self._notebook
            self._thread = threading.Thread(target=self._run, name="workbench-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._thread is None:
            return
        self._stop.set()
        self._thread.join()
        self._show(f"done in {_duration(time.monotonic() - self._start)}" if kind is None else "")

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            line = self.line()
            if line:
                self._show(line)

    def line(self) -> str:
        """'12 s · stage 3 (mapInArrow at ...): 14/46 tasks, ~28 s left · reading 92 log files, 930 MB'."""
        tracker = self.spark.sparkContext.statusTracker()
        stages = [s for s in (tracker.getStageInfo(i) for i in tracker.getActiveStageIds()) if s is not None]
        now = time.monotonic()
        parts = [_duration(now - self._start)]
        if stages:
            stage = max(stages, key=lambda s: s.numTasks)
            done, total = stage.numCompletedTasks, stage.numTasks
            spent = now - self._seen.setdefault(stage.stageId, now)
            left = f", ~{_duration(spent / done * (total - done))} left" if done else ""
            parts.append(f"stage {stage.stageId} ({stage.name.split(' at ')[0]}): {done}/{total} tasks{left}")
        if self.reading:
            parts.append(f"reading {self.reading}")
        return " · ".join(parts)

    def _terminal(self, line: str) -> None:
        pad = max(0, self._width - len(line))
        self.out.write("\r" + line + " " * pad + ("\n" if line.startswith("done") else ""))
        self.out.flush()
        self._width = len(line)

    def _notebook(self, line: str) -> None:
        if self._handle is not None:
            self._handle.update(line)


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def _in_notebook() -> bool:
    shell = sys.modules.get("IPython")
    if shell is None:
        return False
    ip = shell.get_ipython()
    return ip is not None and type(ip).__name__ == "ZMQInteractiveShell"
