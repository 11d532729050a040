"""Kafka's log4j lines as patterns: the layout `[%d] %p %m (%c)%n` (config/log4j.properties at 2.5.1,
2.8.2, 3.6.2), a header's parts, the lines a throwable adds, a logIdent's context and the logging broker's
own id in it, and the reasons a line is no event's. Both parsers match these: `log4j.py` on Arrow
batches in Python, `jvm_logs.py` in the JVM."""

from __future__ import annotations

from workbench.recognise import DATE
from workbench.sources import layouts

_LEVEL = r"TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL"
# A `name | ` prefix is what `docker compose logs` adds: allowed on a header line of any file (a file
# whose every line has it has it taken off first, layouts.py).
PREFIX = layouts.PREFIXES["docker_compose"]
# A header line's opening; matching it stops after a few dozen bytes, so it is cheap on every line.
HEAD = rf"^(?:{PREFIX})?\[(?P<ts>{DATE})\]\s?(?P<level>{_LEVEL})\s"
HEADER = HEAD + r"(?P<rest>.*)$"
# What looks like a header but is not one (a cut or pasted line) is quarantined, never a continuation.
BROKEN_HEADER = r"^\s*\[?\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}"
# ` (%c)` or ` (%c:%L)` at the end of an event's last message line.
LOGGER_AT_END = r" \((?P<logger>[A-Za-z_$][A-Za-z0-9_$.-]*)(?::(?:\d+|\?))?\)\s*$"
# Lines log4j prints for a throwable: 'pkg.Class: message', '\tat ...', 'Caused by: ...', '... 5 more'.
EXCEPTION_LINE = r"^(?:[a-z_$][A-Za-z0-9_$]*\.)+[A-Z][A-Za-z0-9_$]*(?::\s.*|:)?\s*$"
TRACE_LINE = r"^(?:\s+at\s\S|\s*\.\.\.\s\d+\s(?:more|common frames omitted)|\s*Caused by:\s|\s*Suppressed:\s)"
CONTROL_CHARS = r"[\x00-\x08\x0B\x0C\x0E-\x1F\x7F]"
# The logIdent: `[Controller id=1] `; to 0.11 `[Controller 1]: ` (KafkaController 0.11.0.2:150), to 2.0
# `[Topic Deletion Manager 1], ` (TopicDeletionManager 2.0.1:61); before 2.5 `Partition [t,0] on broker 1: `.
CONTEXT = r"^(?:\[(?P<bracketed>[^\[\]]+)\][:,]?\s|(?P<bare>Partition \[[^\[\]]*\] on broker -?\d+):\s)"
# The logging broker's own id in a context, where its logIdent names it (at 2.8.2: KafkaController.scala:83
# `Controller id=`, StateChangeLogger.scala:42 `Broker id=`, Partition.scala:259 and ReplicaManager.scala:263
# `broker=`, the state machines' and RequestSendThread's `controllerId=`, MetadataCache.scala:128
# `brokerId=`, ReplicaFetcherThread's `replicaId=`, KafkaApis.scala:118 `KafkaApi-`, the `on Broker N`
# of the request handlers and fetcher managers; the older `Controller N`, `Topic Deletion Manager N`,
# `GroupCoordinator N`, `Partition [t,0] on broker N`). What a shared logs folder is sorted by.
OWN_ID = (
    r"(?:(?:^|[\s,])(?:id|broker|brokerId|controllerId|replicaId)=|\bon [Bb]roker |\bon controller "
    r"|^(?:Controller|Topic Deletion Manager|GroupCoordinator|Transaction State Manager|ProducerId Manager) "
    r"|^KafkaApi-)(?P<id>\d{1,9})\b"
)
# The logger, in what follows the last ' (' of an event's text.
LOGGER = r"^(?P<logger>[A-Za-z_$][A-Za-z0-9_$.-]*)(?::(?:\d+|\?))?\)\s*$"
LAYOUT = "'[yyyy-MM-dd HH:mm:ss,SSS] LEVEL message (logger)'"

NO_EVENT = f"no log event before this line; expected {LAYOUT}"
SPLIT_ORPHAN = (
    "continues an event read in an earlier split of this file (the line opens with '[' but is not a "
    f"log4j header, right where Spark split the file); expected {LAYOUT}"
)
REASONS = (
    "binary or non-text data",
    f"malformed log line header; expected {LAYOUT}",
    "text after a complete log event that is not a stack trace",
)
