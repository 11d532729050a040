"""What wraps Kafka's log4j lines on the way to the evidence, and files next to them that are not Kafka's.

A line of Kafka's layout (`[%d] %p %m (%c)%n`) may reach us behind a prefix every line of the file has:
`docker compose logs` (`kafka-1  | `), the Kubernetes CRI log format kubelet writes under /var/log/pods
(`2024-03-12T10:00:00.123456789Z stdout F `; `P` marks a line the runtime cut, its rest in the next
record), a collector's own time stamp (`2024-03-12T10:00:00.123Z ` from Fluent Bit, Vector or a Loki
export) or syslog's (`Mar 12 10:00:00 host kafka[812]: `). The prefix is sniffed per file from its first
64 KiB and taken off every physical line before the layout is read; lines and their numbers stay the
file's own.

Next to the logs a broker host often has `kafkaServer.out` (the console appender: the same root-logger
lines as server.log, plus what the JVM prints) and `kafkaServer-gc.log`. Neither is read where it would
only repeat or is not Kafka's; each is reported as a whole-file bad record with the reason.
"""

from __future__ import annotations

import gzip
import re
import zlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

DATE = r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[,.]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?"
_ISO = r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:[.,]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?"
# Each prefix as a regex with no groups, matched at a line's start.
PREFIXES = {
    "docker_compose": r"[A-Za-z0-9_.@-]+\s*\|\s?",
    "cri": rf"{_ISO} (?:stdout|stderr) [FP] ",
    "collector": rf"{_ISO}\s+",
    "syslog": r"(?:<\d{1,3}>)?[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \S+ [^\s:\[]+(?:\[\d+\])?: ",
}
_HEADER_AFTER = re.compile(r"\[" + DATE + r"\]")
PEEK = 1 << 16


@dataclass(frozen=True)
class Layout:
    """How a file's lines are wrapped: the prefix every line has (a PREFIXES key, or None), and what opens
    a header line in the file as it is (Spark's line separator is '\\n' + this; '' where the prefix varies
    from line to line, so every line is its own chunk)."""

    prefix: str | None
    reopen: str

    @property
    def pattern(self) -> str:
        return "" if self.prefix is None else "^(?:" + PREFIXES[self.prefix] + ")"


def sniff(path: str) -> Layout:
    """The file's layout, from the lines of its first 64 KiB that hold a log4j header: the prefix most of
    them have (none if most have none)."""
    try:
        with gzip.open(path) if path.endswith(".gz") else open(path, "rb") as raw:
            head = raw.read(PEEK).decode("utf-8", "replace")
    except (OSError, EOFError, zlib.error):
        return Layout(None, "[")
    seen: Counter[tuple[str | None, str]] = Counter()
    for line in head.splitlines():
        found = _HEADER_AFTER.search(line, 0, 120)
        if found is None:
            continue
        before = line[: found.start()]
        kind = next((k for k, p in PREFIXES.items() if re.fullmatch(p, before)), None) if before else None
        if before and kind is None:
            continue
        # docker compose's prefix is the same on every line of one container: a fixed separator
        seen[kind, before if kind == "docker_compose" else ""] += 1
    if not seen:
        return Layout(None, "[")
    (kind, fixed), _ = seen.most_common(1)[0]
    if kind is None or kind == "docker_compose":
        return Layout(kind, fixed + "[")
    return Layout(kind, "")


# Where the runtime cut a line (a CRI `P` record), the line is marked at its end, and the mark with the
# line break after it is taken out once the event's lines are joined (`join_cut`).
CUT = "\ue000"
_CRI_CUT = rf"^{_ISO} (?:stdout|stderr) P "


def strip(values: pa.Array, patterns: pa.Array) -> pa.Array:
    """Each value without the prefix its row's pattern (Layout.pattern, '' for none) matches; a line the
    container runtime cut marked with CUT."""
    kinds = pc.dictionary_encode(patterns)
    names = kinds.dictionary.to_pylist()
    codes = kinds.indices.to_numpy(zero_copy_only=False)
    out = values
    for code, pattern in enumerate(names):
        if not pattern:
            continue
        mine = pa.array(codes == code)
        bare = pc.replace_substring_regex(out, pattern, "", max_replacements=1)
        if pattern == Layout("cri", "").pattern:
            cut = pc.fill_null(pc.match_substring_regex(out, _CRI_CUT), False)
            bare = pc.if_else(cut, pc.binary_join_element_wise(bare, CUT, ""), bare)
        out = pc.if_else(mine, bare, out)
    return out


def join_cut(text: pa.Array) -> pa.Array:
    """Lines the runtime cut, whole again."""
    return pc.replace_substring(pc.replace_substring(text, CUT + "\n", ""), CUT, "")


def rows_of(codes: np.ndarray, per_file: list[str]) -> pa.Array:
    """The pattern of each row, from its file's code."""
    return pa.array(per_file, pa.string()).take(pa.array(codes))


# Files next to the logs that are not (only) Kafka's log4j output: name -> why they are not read.
GC_LOG = re.compile(r"(?:^|[-_.])gc\.log(?:\.\d+)?(?:\.current)?(?:\.gz)?$")
CONSOLE = re.compile(r"^kafkaServer\.out(?:\.\d+)?(?:\.gz)?$")
NOT_READ = {
    "gc": "a JVM garbage-collection log (kafkaServer-gc.log), not Kafka's log4j output: not read",
    "console": "the console appender's output (kafkaServer.out): the same root-logger lines as this "
    "broker's server.log, which is read instead",
}


def not_read(names_by_broker: dict[int | None, list[str]], name: str, broker: int | None) -> str | None:
    """Why a file is left unread (NOT_READ), or None: a GC log always; kafkaServer.out where the broker's
    server.log is there too (with none, the console output is all there is, and it is read)."""
    base = Path(name).name
    if GC_LOG.search(base):
        return NOT_READ["gc"]
    if CONSOLE.match(base) and any(
        Path(n).name.startswith("server.log") for n in names_by_broker.get(broker, [])
    ):
        return NOT_READ["console"]
    return None
