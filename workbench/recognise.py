"""What a file is, from its content: the lines each kind of evidence is recognised by.

A bundle keeps each kind of evidence in its place (DESIGN.md), but people put files where they like: a
zkCli session copied into zk/, an `ls -lR` under a name of their own beside a broker's data dirs. The
lines here are those the tools print (the sources that read them cite each format); this module is the
standard library only, so that the bundle layer can recognise a file when it opens a bundle, and
`bundle assemble` and the Spark readers use the same patterns.
"""

from __future__ import annotations

import gzip
import json
import re
import zlib
from pathlib import Path

HEAD_BYTES = 1 << 16

# A log4j line of Kafka's layout `[%d] %p %m (%c)%n`, its time as any layout the logs layer reads
# prints it, behind whatever prefix a collector added (sources/layouts.py).
DATE = r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[,.]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?"

# ZooKeeper's shells (sources/zk_shell.py)
_STATES = r"(?:CONNECTING|ASSOCIATING|CONNECTED|CONNECTEDREADONLY|CLOSED|AUTH_FAILED|NOT_CONNECTED)"
ZK_PROMPT = r"^\[zk: [^\]]*\(" + _STATES + r"\) \d+\] ?(.*?)\s*$"  # ZooKeeperMain.getPrompt
ONE_SHOT = (  # zookeeper-shell.sh HOST CMD..., zkCli.sh -server HOST CMD... at the shell's prompt
    r"^(?:.*?[$#%>] +)?\S*(?:zookeeper-shell|zkCli)(?:\.sh|\.cmd)?\s+(?:-server\s+)?[^\s-]\S*"
    r"(?:\s+-(?:zk-tls-config-file|client-configuration|timeout)\s+\S+)*(?:\s+-r)?(?:\s+(.*?))?\s*$"
)
READS = "get|ls|ls2|stat"
WRITES = "create|set|delete|deleteall|rmr|setAcl|setquota|delquota|sync|addauth"
BARE = (  # a command echoed by the terminal, no prompt before it
    r"^((?:" + READS + "|" + WRITES + r"|getAcl|getEphemerals|getAllChildrenNumber|listquota|addWatch"
    r"|removewatches)(?:\s+-[a-zA-Z]+)*\s+/\S*(?:\s+\S+)*|quit|history|close)\s*$"
)
ZS_PROMPT = r"^\([A-Z_]+(?: \[[^\]]*\])?\) (/\S*)> ?(.*?)\s*$"  # zk_shell: (STATE [hosts]) /cwd>
ZK_STAT = (
    r"^(cZxid|ctime|mZxid|mtime|pZxid|cversion|dataVersion|aclVersion|ephemeralOwner|dataLength|numChildren)"
    r" = (.*?)\s*$"
)
CHILDREN = r"^\[(.*)\]\s*$"
ABSENT = (
    r"^(?:Node does not exist: |org\.apache\.zookeeper\.KeeperException\$NoNodeException: "
    r"KeeperErrorCode = NoNode for |Path )(/\S*)(?: doesn't exist)?\s*$"
)
TREE_NODE = r"^((?:│   )*)├── (.+?)\s*$"

# kafka-topics --describe (sources/kafka_topics.py)
_IDS = r"([\d,]*)"
TOPIC_LINE = (
    r"^Topic:\s*(\S+)\s+(?:TopicId:\s*(\S+)\s+)?PartitionCount:\s*(\d+)\s+ReplicationFactor:\s*(\d+)"
    r"\s+Configs:\s*(\S*)(\s+MarkedForDeletion:\s*true)?\s*$"  # configs: name=value,... (no spaces)
)
PARTITION_LINE = (
    r"^\s+Topic:\s*(\S+)\s+Partition:\s*(\d+)\s+Leader:\s*(-?\d+|none)\s+Replicas:\s*"
    + _IDS
    + r"\s+Isr:\s*"
    + _IDS
    + r"(?:\s+Adding Replicas:\s*"
    + _IDS
    + r"\s+Removing Replicas:\s*"
    + _IDS
    + r")?"
    r"(?:\s+Elr:\s*([\d,]*|N/A)\s+LastKnownElr:\s*([\d,]*|N/A))?(\s+MarkedForDeletion:\s*true)?\s*$"
)

# kafka-log-dirs --describe (sources/kafka_log_dirs.py)
JSON_LINE = (
    r'^\s*\{.*"brokers"\s*:\s*\[\s*(?:\{\s*"(?:broker|logDirs)"\s*:|\])'  # not a topic znode's {"version":..
)
LOG_DIRS_STRUCTURE = (
    r"^(?:Querying brokers for log directories information|Received log directory information from brokers)"
)

# log dir listings (sources/listings.py)
# `ls -l` and `find -ls`: [inode] [blocks] mode nlink owner group size date name [-> target]
_DATE = (
    r"[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}"  # BusyBox -e (ctime)
    r"|[A-Z][a-z]{2} +\d{1,2} +(?:\d{1,2}:\d\d|\d{4})"  # default: recent | older (or in the future)
    r"|\d{4}-\d\d-\d\d \d\d:\d\d(?::\d\d(?:\.\d{1,9})? [+-]\d{4})?"  # long-iso | full-iso
    r"|\d\d-\d\d \d\d:\d\d|\d{4}-\d\d-\d\d"  # iso: recent | older
)
ENTRY = (
    r"^\s*(\d+\s+)?(?:\d+(?:[.,]\d)?[KMGTPEZYk]?\s+)?([-dlcbpsD?])[-rwxsStTlL?]{9}[.+]?\s+\d+\s+\S+\s+\S+"
    r"\s+(\d+(?:[.,]\d+)?[KMGTPEZYk]?|\d+,\s*\d+)\s+(" + _DATE + r") (.*?)(?: -> .*)?$"
)
DU = r"^(\d+(?:[.,]\d+)?[KMGTPEZYk]?)\t(?:(\d{4}-\d\d-\d\d \d\d:\d\d)\t)?(.+)$"
STAT_FILE = r"^\s*File: (?:'(.*)'|(.*?))(?: -> .*)?$"

_LEVELS = r"(?:TRACE|DEBUG|INFO|WARN|WARNING|ERROR|FATAL)"
_HEADER = re.compile(r"\[" + DATE + r"\]\s?" + _LEVELS + r"\s")
# Who logged it: Kafka's own loggers, the ZooKeeper client's in the broker, the state-change logger
_KAFKA_LOGGER = r"(?:kafka|state\.change\.logger|org\.apache\.(?:kafka|zookeeper))\b[\w.$]*"
_KAFKA_LINE = re.compile(r"\(" + _KAFKA_LOGGER + r"\)")
_KAFKA_JSON = re.compile(r'"(?:logger_name|loggerName|log\.logger|logger)"\s*:\s*"' + _KAFKA_LOGGER + '"')
# A line that continues the event above it: a stack trace, the settings `logAll` writes after "KafkaConfig
# values:" (a tab each, then the logger on a line of its own: AbstractConfig.java 3.6.2:357-370)
_CONTINUED = re.compile(
    r"^(?:\s|\.\.\. \d+ more|Caused by: |(?:[a-zA-Z_$][\w$]*\.)+[A-Z][\w$]*(?:Exception|Error)\b)"
)
_LISTING = [re.compile(p) for p in (ENTRY, DU, STAT_FILE)]
_DESCRIBE = [re.compile(p) for p in (TOPIC_LINE, PARTITION_LINE, JSON_LINE, LOG_DIRS_STRUCTURE)]
_ZK_NOISE = r"^(?:WATCHER::|WatchedEvent state:|Connecting to |Welcome to ZooKeeper!|JLine support is )"
_ZOOKEEPER = [
    re.compile(p)
    for p in (ZK_PROMPT, ONE_SHOT, BARE, ZK_STAT, ZS_PROMPT, TREE_NODE, ABSENT, CHILDREN, _ZK_NOISE)
]
_EXPORT_OPENING = re.compile(r'\s*\{\s*"/[^"]*"\s*:\s*\{\s*"content"\s*:')
# A broker's server.properties (java.util.Properties: key, then "=", ":" or white space, then the value;
# comments open with # or !), told from other properties files (log4j's, a log dir's meta.properties)
# by settings only a broker's config holds (KafkaConfig's names).
_PROPERTY = re.compile(r"^\s*(?:[#!].*|[A-Za-z][\w.-]*\s*[=:].*)$")
_BROKER_SETTINGS = re.compile(
    r"^\s*(?:zookeeper\.connect|log\.dirs?|listeners|advertised\.listeners|num\.network\.threads"
    r"|socket\.send\.buffer\.bytes|num\.partitions|log\.retention\.hours)\s*[=:\s]"
)
KINDS = (
    "a Kafka log, a log dir listing, kafka-topics or kafka-log-dirs --describe, a ZooKeeper shell's, or a "
    "broker's server.properties"
)


def kind_of(path: Path) -> str | None:
    """'log', 'listing', 'describe', 'zookeeper' (a shell transcript, a zk_shell export) or
    'properties' (a broker's server.properties); None when the file is none of these (`recognise` says
    why)."""
    return recognise(path)[0]


def recognise(path: Path) -> tuple[str | None, str]:
    """The file's kind from its first 64 KiB, or None and why not. The kind is the one with the most
    lines, when at least a quarter of the lines are of it (a paste holds prompts, notes and other
    commands too). A Kafka log is one whose log4j headers name Kafka's loggers, counted against the
    lines that open an event: a broker's start-up writes hundreds of settings under one header."""
    try:
        with gzip.open(path) if path.name.endswith(".gz") else open(path, "rb") as f:
            raw = f.read(HEAD_BYTES)
    except (OSError, EOFError, zlib.error) as e:
        return None, f"unreadable ({type(e).__name__})"
    if not raw.strip():
        return None, "empty"
    # NUL runs are what a crash leaves in a log (blocks allocated, never written): read around them
    decoded = raw.decode("utf-8", "replace")
    head = re.sub("\x00+", "\n", decoded)
    if _is_export(head):
        return "zookeeper", ""
    lines = [line for line in head.splitlines() if line.strip()]
    headers = [line for line in lines if _HEADER.search(line, 0, 120) or _KAFKA_JSON.search(line)]
    kafkas = any(_KAFKA_LINE.search(line) or _KAFKA_JSON.search(line) for line in headers)
    events = sum(_CONTINUED.match(line) is None for line in lines)
    counts = {
        "log": len(headers) if kafkas else 0,
        "listing": sum(any(p.match(line) for p in _LISTING) for line in lines),
        "describe": sum(any(p.match(line) for p in _DESCRIBE) for line in lines),
        "zookeeper": sum(any(p.match(line) for p in _ZOOKEEPER) for line in lines),
    }
    kind, count = max(counts.items(), key=lambda kv: kv[1])
    if count and count * 4 >= (events if kind == "log" else len(lines)):
        return kind, ""
    if _is_server_properties(lines):
        return "properties", ""
    odd = sum(c == "\ufffd" or not (c.isprintable() or c in "\t\r\n") for c in decoded)
    return None, "binary" if odd * 10 > len(decoded) else f"no known format (not {KINDS})"


def _is_server_properties(lines: list[str]) -> bool:
    """Every line a comment, a `key=value` (or `key: value`) or the continuation of a value ending in a
    backslash, and one of them a setting only a broker's config holds."""
    continued = False
    for line in lines:
        if not continued and not _PROPERTY.match(line):
            return False
        continued = line.rstrip().endswith("\\") and not line.lstrip().startswith(("#", "!"))
    return any(_BROKER_SETTINGS.match(line) for line in lines)


def _is_export(head: str) -> bool:
    """zk_shell's `cp ... json://` export: a JSON object keyed by znode paths (copy_util.JSONProxy)."""
    try:
        tree = json.loads(head)
    except ValueError:  # more than the head: it opens as one does
        return _EXPORT_OPENING.match(head) is not None
    return isinstance(tree, dict) and bool(tree) and all(k.startswith("/") for k in tree)
