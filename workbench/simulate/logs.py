"""Broker log files as Kafka's log4j config writes them, streamed to disk in time order.

Layout `[%d] %p %m (%c)%n` and the appenders of config/log4j.properties (2.5.1, 2.8.2, 3.6.2; LOG_TEMPLATES.md
section 1): `state.change.logger` -> state-change.log, `kafka.controller.*` -> controller.log,
`kafka.log.LogCleaner` -> log-cleaner.log, the rest -> server.log. DailyRollingFileAppender rolls a file
at the first line of a new hour and names the old one `<file>.yyyy-MM-dd-HH`; rolled files may be gzipped
(as a cron job does). Lines may be scheduled ahead of the clock; `advance(t)` writes everything up to t, so
each file is in time order and memory holds only what is scheduled ahead.
"""

from __future__ import annotations

import gzip
import heapq
import os
import shutil
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import IO, Protocol


def appender(logger: str) -> str:
    """The file a logger's lines go to (log4j.properties, additivity=false)."""
    if logger == "state.change.logger":
        return "state-change"
    if logger.startswith("kafka.controller."):
        return "controller"
    if logger == "kafka.log.LogCleaner":
        return "log-cleaner"
    return "server"


def log4j_time(ms: int) -> str:
    """log4j 1.x ISO8601DateFormat: '2024-03-12 08:00:00,123' (UTC here)."""
    return f"{_second(ms // 1000)},{ms % 1000:03d}"


@lru_cache(maxsize=4096)
def _second(s: int) -> str:
    return f"{datetime.fromtimestamp(s, tz=timezone.utc):%Y-%m-%d %H:%M:%S}"


@dataclass
class _File:
    """One appender's file of one broker, rolled by the hour."""

    path: Path
    gzip_rolled: bool
    hour: int | None = None
    out: IO[str] | None = None

    def write(self, ms: int, text: str) -> None:
        hour = ms // 3_600_000
        if self.out is not None and hour != self.hour:
            self.roll()
        if self.out is None:
            self.out = open(self.path, "a", encoding="utf-8", newline="\n")  # noqa: SIM115 (kept open)
            self.hour = hour
        self.out.write(text)

    def roll(self) -> None:
        """Close and rename to the hour the file covered, as DailyRollingFileAppender.rollOver does."""
        assert self.out is not None and self.hour is not None
        self.out.close()
        self.out = None
        stamp = datetime.fromtimestamp(self.hour * 3600, tz=timezone.utc).strftime("%Y-%m-%d-%H")
        rolled = self.path.with_name(f"{self.path.name}.{stamp}")
        os.replace(self.path, rolled)
        if self.gzip_rolled:
            with (
                open(rolled, "rb") as src,
                gzip.GzipFile(rolled.with_name(rolled.name + ".gz"), "wb", mtime=0) as dst,
            ):
                shutil.copyfileobj(src, dst)
            rolled.unlink()

    def close(self) -> None:
        if self.out is not None:
            self.out.close()
            self.out = None


class Background(Protocol):
    """A broker's background lines (noise.py): when the next may be, and the lines due then."""

    def next_ms(self) -> int: ...

    def lines(self, ms: int) -> list[tuple[str, str, str]]: ...


@dataclass(order=True)
class _Line:
    ms: int
    seq: int
    broker: int = field(compare=False)
    level: str = field(compare=False)
    logger: str = field(compare=False)
    message: str = field(compare=False)
    thrown: str = field(compare=False, default="")


class BrokerLogs:
    """All brokers' log files under `<bundle>/brokers/<id>/logs/`.

    `skew_ms` shifts the times a broker prints (its clock is off); the order of lines stays true time.
    """

    def __init__(self, bundle: Path, gzip_rolled: bool = False) -> None:
        self.bundle = bundle
        self.gzip_rolled = gzip_rolled
        self.skew_ms: dict[int, int] = {}
        self._files: dict[tuple[int, str], _File] = {}
        self._heap: list[_Line] = []
        self._seq = 0
        self._noise: list[tuple[int, int, Background]] = []
        self.lines = 0

    def add_background(self, broker: int, source: Background) -> None:
        """Background lines for a broker, made only when the clock reaches them."""
        heapq.heappush(self._noise, (source.next_ms(), broker, source))

    def log(self, ms: int, broker: int, level: str, logger: str, message: str, thrown: str = "") -> None:
        """Schedule one line at `ms` (true time); `thrown` is the exception log4j prints after it."""
        self._seq += 1
        heapq.heappush(self._heap, _Line(ms, self._seq, broker, level, logger, message, thrown))

    def advance(self, until_ms: int) -> None:
        """Write every line scheduled at or before `until_ms`, story and noise merged by time."""
        while True:
            story = self._heap[0].ms if self._heap else None
            noise = self._noise[0][0] if self._noise else None
            if noise is not None and noise <= until_ms and (story is None or noise < story):
                ms, broker, source = heapq.heappop(self._noise)
                for level, logger, message in source.lines(ms):
                    self._write(ms, broker, level, logger, message)
                heapq.heappush(self._noise, (source.next_ms(), broker, source))
            elif story is not None and story <= until_ms:
                line = heapq.heappop(self._heap)
                self._write(line.ms, line.broker, line.level, line.logger, line.message, line.thrown)
            else:
                return

    def _write(self, ms: int, broker: int, level: str, logger: str, message: str, thrown: str = "") -> None:
        kind = appender(logger)
        f = self._files.get((broker, kind))
        if f is None:
            logs = self.bundle / "brokers" / str(broker) / "logs"
            logs.mkdir(parents=True, exist_ok=True)
            f = self._files[(broker, kind)] = _File(logs / f"{kind}.log", self.gzip_rolled)
        shown = ms + self.skew_ms.get(broker, 0)  # the broker's own clock also decides when to roll
        f.write(
            shown, f"[{log4j_time(shown)}] {level} {message} ({logger})\n" + (f"{thrown}\n" if thrown else "")
        )
        self.lines += 1

    def close(self, at_ms: int) -> None:
        """Flush everything up to `at_ms` (the capture time); later lines were never written."""
        self.advance(at_ms)
        self._heap.clear()
        self._noise.clear()
        for f in self._files.values():
            f.close()
