"""What wraps Kafka's log4j lines on the way to the evidence, and files next to them that are not Kafka's.

A line of Kafka's layout (`[%d] %p %m (%c)%n`) may reach us behind a prefix every line of the file has:
`docker compose logs` (`kafka-1  | `), the Kubernetes CRI log format kubelet writes under /var/log/pods
(`2024-03-12T10:00:00.123456789Z stdout F `; `P` marks a line the runtime cut, its rest in the next
record), a collector's own time stamp (`2024-03-12T10:00:00.123Z ` from Fluent Bit, Vector or a Loki
export) or syslog's (`Mar 12 10:00:00 host kafka[812]: `). The prefix is sniffed per file from its first
64 KiB and taken off every physical line before the layout is read; lines and their numbers stay the
file's own. A file of JSON records, one a line, is either docker's json-file driver (Kafka's own line in
"log") or a JSON layout (log4j 1's logstash layout, ECS, log4j2's JsonLayout): each record is made the
log4j line it stands for, its stack trace kept; a line that is no record is quarantined.

Next to the logs a broker host often has `kafkaServer.out` (the console appender: the same root-logger
lines as server.log, plus what the JVM prints) and `kafkaServer-gc.log`. Neither is read where it would
only repeat or is not Kafka's; each is reported as a whole-file bad record with the reason.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import os
import re
import zlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from workbench.recognise import DATE

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

# One JSON object a line: docker's json-file driver (Kafka's own line in "log"), or a JSON layout (the
# logstash layout of log4j 1, ECS's, log4j2's JsonLayout), the event's parts under the names below.
DOCKER_JSON = r'^\{"log":"(?P<log>(?:[^"\\]|\\.)*)"'
_STRING = r'"(?:{names})"\s*:\s*"(?P<{group}>(?:[^"\\]|\\.)*)"'
JSON_FIELDS = {
    "ts": ("@timestamp", "timestamp", "time", "date"),
    "level": ("level", "log.level", "log_level", "severity"),
    "logger": ("logger_name", "loggerName", "log.logger", "logger"),
    "message": ("message", "msg"),
    "stack": ("error.stack_trace", "stack_trace", "stacktrace", "extendedStackTrace", "exception"),
}
_EPOCH_MS = r'"timeMillis"\s*:\s*(?P<ms>\d{10,})'
_EPOCH_S = r'"epochSecond"\s*:\s*(?P<s>\d{9,})\s*,\s*"nanoOfSecond"\s*:\s*(?P<ns>\d+)'
# What opens a JSON event's stack trace in the log4j line made of it (log4j.py takes it apart again).
STACK = "\ue001"


@dataclass(frozen=True)
class Layout:
    """How a file's lines are wrapped (a PREFIXES key, "docker_json" or "json"; None for Kafka's lines as
    they are), and what opens a header line in the file as it is (Spark's line separator is '\\n' + this;
    '' where every line is its own chunk)."""

    wrap: str | None
    reopen: str


def sniff(path: str) -> Layout:
    """The file's layout, from the lines of its first 64 KiB: JSON where most lines are JSON objects,
    else the prefix most of its log4j header lines have (none if most have none)."""
    try:
        with gzip.open(path) if path.endswith(".gz") else open(path, "rb") as raw:
            head = raw.read(PEEK).decode("utf-8", "replace")
    except (OSError, EOFError, zlib.error):
        return Layout(None, "[")
    lines = head.splitlines()[:-1] or head.splitlines()  # the last may be cut at 64 KiB
    objects = [line for line in lines if line.startswith("{")]
    if lines and len(objects) * 2 > len(lines):
        docker = sum(re.match(DOCKER_JSON, line) is not None for line in objects)
        return Layout("docker_json" if docker * 2 > len(objects) else "json", "")
    seen: Counter[tuple[str | None, str]] = Counter()
    for line in lines:
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


def unwrap(values: pa.Array, wraps: pa.Array) -> pa.Array:
    """Each line as Kafka's layout wrote it: without the prefix of its row's wrap ('' for none), a CRI line
    the runtime cut marked with CUT, a JSON line made a log4j line (its stack trace after STACK)."""
    kinds = pc.dictionary_encode(wraps)
    codes = kinds.indices.to_numpy(zero_copy_only=False)
    out = values
    for code, wrap in enumerate(kinds.dictionary.to_pylist()):
        if not wrap:
            continue
        mine = pa.array(codes == code)
        if wrap == "json":
            bare = _from_json(out)
        elif wrap == "docker_json":
            log = _group(out, DOCKER_JSON, "log")
            bare = pc.if_else(pc.is_null(log), out, pc.utf8_rtrim(_unescape(log), characters="\n"))
        else:
            bare = pc.replace_substring_regex(out, "^(?:" + PREFIXES[wrap] + ")", "", max_replacements=1)
        if wrap == "cri":
            cut = pc.fill_null(pc.match_substring_regex(out, _CRI_CUT), False)
            bare = pc.if_else(cut, pc.binary_join_element_wise(bare, CUT, ""), bare)
        out = pc.if_else(mine, bare, out)
    return out


def join_cut(text: pa.Array) -> pa.Array:
    """Lines the runtime cut, whole again."""
    return pc.replace_substring(pc.replace_substring(text, CUT + "\n", ""), CUT, "")


def _group(values: pa.Array, pattern: str, name: str) -> pa.Array:
    """A named group of a regex, null where the regex does not match."""
    return pc.struct_field(pc.extract_regex(values, pattern), name)


def _field(values: pa.Array, name: str) -> pa.Array:
    pattern = _STRING.format(names="|".join(re.escape(n) for n in JSON_FIELDS[name]), group="v")
    return _unescape(_group(values, pattern, "v"))


def _from_json(values: pa.Array) -> pa.Array:
    """`[ts] LEVEL message (logger)` for each JSON record with a time, a level and a message, its stack
    trace (if any) after STACK before the logger; other lines as they are (quarantined by the reader)."""
    ts = _field(values, "ts")
    epoch_ms = pc.cast(_group(values, _EPOCH_MS, "ms"), pa.int64())
    seconds = pc.cast(_group(values, _EPOCH_S, "s"), pa.int64())
    nanos = pc.cast(_group(values, _EPOCH_S, "ns"), pa.int64())
    millis = pc.cast(
        pc.coalesce(epoch_ms, pc.add(pc.multiply(seconds, 1000), pc.divide(nanos, 1_000_000))),
        pa.timestamp("ms"),
    )
    ts = pc.coalesce(ts, pc.strftime(millis, "%Y-%m-%dT%H:%M:%SZ"))  # %S has the milliseconds
    level, logger = pc.utf8_upper(_field(values, "level")), _field(values, "logger")
    stack = pc.if_else(
        pc.is_null(_field(values, "stack")),
        "",
        pc.binary_join_element_wise(STACK, _field(values, "stack"), ""),
    )
    line = pc.binary_join_element_wise(
        "[", ts, "] ", level, " ", _field(values, "message"), stack, " (", pc.coalesce(logger, "?"), ")", ""
    )
    return pc.if_else(pc.is_null(line), values, line)


def _unescape(values: pa.Array) -> pa.Array:
    """A JSON string's escapes decoded (\\uXXXX left as it is: JSON writers keep non-ASCII text as is)."""
    out = pc.replace_substring(values, "\\\\", "\ue002")
    for escaped, plain in (('\\"', '"'), ("\\n", "\n"), ("\\t", "\t"), ("\\r", "\r"), ("\\/", "/")):
        out = pc.replace_substring(out, escaped, plain)
    return pc.replace_substring(out, "\ue002", "\\")


# Files next to the logs that are not (only) Kafka's log4j output: name -> why they are not read.
GC_LOG = re.compile(r"(?:^|[-_.])gc\.log(?:\.\d+)?(?:\.current)?(?:\.gz)?$")
CONSOLE = re.compile(r"^kafkaServer\.out(?:\.\d+)?(?:\.gz)?$")
NOT_READ = {
    "gc": "a JVM garbage-collection log (kafkaServer-gc.log), not Kafka's log4j output: not read",
    "console": "the console appender's output (kafkaServer.out): the same root-logger lines as this "
    "broker's server.log, which is read instead",
}


def copies(paths: dict[str, str]) -> dict[str, str]:
    """Files that are byte for byte another (a logs folder several brokers share, captured once for each):
    file -> the one read instead. Compared by size, then by a hash of their first and last MiB."""
    by_size: dict[int, list[str]] = {}
    for file, path in sorted(paths.items()):
        with contextlib.suppress(OSError):
            by_size.setdefault(os.path.getsize(path), []).append(file)
    out: dict[str, str] = {}
    for size, files in by_size.items():
        if len(files) < 2 or size == 0:
            continue
        seen: dict[bytes, str] = {}
        for file in files:
            try:
                digest = _ends_digest(paths[file], size)
            except OSError:
                continue
            if digest in seen:
                out[file] = seen[digest]
            else:
                seen[digest] = file
    return out


def _ends_digest(path: str, size: int, span: int = 1 << 20) -> bytes:
    with open(path, "rb") as f:
        h = hashlib.blake2b(f.read(span))
        if size > span:
            f.seek(max(span, size - span))
            h.update(f.read(span))
    return h.digest()


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
