"""The baseline the loader must beat: one Python process, line by line, doing the loader's work.

Per line: the log4j header, the continuation lines joined to their event, the logger at the end, the
context, and the catalog's typing (the templates of the event's logger in catalog order, literal text
first, then the regex with its fields). Gzipped files are read through `gzip`. Returns (physical lines,
events, typed events).
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterable
from pathlib import Path

from workbench.kafka.messages import CATALOG
from workbench.sources import log4j_lines

HEADER = re.compile(log4j_lines.HEADER)
LOGGER = re.compile(log4j_lines.LOGGER_AT_END, re.S)
CONTEXT = re.compile(log4j_lines.CONTEXT)
PATTERNS = [(t.literal, re.compile(t.pattern, re.S)) for t in CATALOG]
FREE = [i for i, t in enumerate(CATALOG) if not t.loggers]
BY_LOGGER: dict[str, list[int]] = {}
for _i, _t in enumerate(CATALOG):
    for _name in _t.loggers:
        BY_LOGGER.setdefault(_name, list(FREE)).append(_i)


def _type(rest: str) -> bool:
    found = LOGGER.search(rest)
    logger = found.group("logger") if found else None
    body = rest[: found.start()] if found else rest
    context = CONTEXT.match(body)
    message = body[context.end() :] if context else body
    for i in BY_LOGGER.get(logger, FREE) if logger else range(len(PATTERNS)):
        literal, pattern = PATTERNS[i]
        if literal in message and (m := pattern.match(message)) is not None:
            m.groupdict()
            return True
    return False


def python_loop(files: Iterable[Path]) -> tuple[int, int, int]:
    lines = events = typed = 0
    for path in files:
        opener = gzip.open if path.name.endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8", errors="replace") as f:
            rest: str | None = None
            closed = False
            for line in f:
                lines += 1
                text = line.rstrip("\r\n")
                header = HEADER.match(text)
                if header is None:
                    if rest is not None and not closed:  # after the logger: a stack trace
                        rest += "\n" + text
                        closed = LOGGER.search(text) is not None
                    continue
                if rest is not None:
                    typed += _type(rest)
                events += 1
                rest = header.group("rest")
                closed = LOGGER.search(rest) is not None
            if rest is not None:
                typed += _type(rest)
    return lines, events, typed
