"""Templates made from the listing of Kafka's own log calls (log_calls.json), for every listed message the
curated catalog does not type: the line is then known as the message of one call in Kafka's source, its
kind names the class and the message's opening words, and each value Kafka interpolates becomes a field
named after what the source interpolates (`${partition.topicPartition}` -> `topic_partition`).

The curated templates come first and say what a line means to the analyses; these only make sure that
no line of the classes that matter is left as bare text. A message with almost no fixed text of its own
(`s"$a: $b"`) would match any line and is left untyped (UNTYPED says why).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

from workbench.kafka.messages import listing
from workbench.kafka.templates import Template

AREA = "source"
MIN_FIXED = 4  # letters and digits of fixed text a message needs before it can be told from others
UNTYPED = {
    "too_little_fixed_text": f"fewer than {MIN_FIXED} letters or digits of fixed text: it would match "
    "lines of other calls",
}
# Loggers whose lines the listing does not hold (listing.py reads the controller, partitions, logs, replica
# manager, fetchers, lifecycle and ZooKeeper clients), by family, with why an untyped line of theirs is
# expected: what `workbench load` and the coverage test say of what stays untyped.
UNLISTED = {
    "kafka.network.": "requests and connections (SocketServer, Processor, RequestChannel): not the "
    "cluster's state",
    "kafka.coordinator.": "consumer groups and transactions: typed where the catalog's background says so",
    "org.apache.kafka.clients.": "the clients inside the broker (fetch sessions, the controller channel)",
    "org.apache.kafka.common.": "the network and security layers shared with clients",
    "kafka.request.logger": "the request log: one line a request",
    "kafka.authorizer.logger": "the authorizer's decisions",
    "org.apache.zookeeper.server.": "a ZooKeeper server logging into the same file: only its session lines "
    "are read",
    "kafka.log.LogCleaner": "the log cleaner (compaction): its statistics are one message spread over "
    "several lines, each a line of the log (LogCleaner.scala recordStats 2.8.2:401-418)",
    "kafka.server.": "a broker class outside the listing (quotas, dynamic config, delegation tokens, "
    "features)",
}


def why_untyped(logger: str | None) -> str | None:
    """Why a line of this logger may stay untyped (UNLISTED), or None where it should not."""
    return next((why for family, why in UNLISTED.items() if (logger or "").startswith(family)), None)


# What a hole's expression is called, by its last member once calls that only format it are dropped.
_FORMATTING = {
    "mkString", "toString", "toSet", "toSeq", "toList", "toBuffer", "toArray", "toMap", "asScala",
    "asJava", "sorted", "get", "getOrElse", "keys", "keySet", "values", "getAbsolutePath", "getPath",
    "getName", "trim", "head", "distinct", "getAbsoluteFile",
}  # fmt: skip
_RENAMED = {
    "topicPartition": "topic_partition", "tp": "topic_partition", "topicAndPartition": "topic_partition",
    "partition": "topic_partition", "e": "error", "t": "error", "exception": "error", "getCause": "error",
    "getMessage": "error", "size": "count", "length": "count",
}  # fmt: skip
_ARGUMENTS = re.compile(r"\([^()]*\)|\[[^\[\]]*\]|\{[^{}]*\}")
_MEMBER = re.compile(r"[A-Za-z_]\w*")


def field_name(expr: str) -> str:
    """A field's name from the expression Kafka interpolates: its last member in snake case (of the
    argument, for a static call that only formats it: `Long.toHexString(sessionId)`)."""
    static = re.fullmatch(r"[A-Z]\w*(?:\.\w+)+\(([^,()]+)(?:,.*)?\)", expr.strip())
    if static is not None:
        expr = static.group(1)
    while (bare := _ARGUMENTS.sub("", expr)) != expr:
        expr = bare
    members = [
        m
        for m in _MEMBER.findall(expr.replace('""', ""))
        if m not in _FORMATTING and not re.fullmatch(r"_\d+", m)
    ]  # a tuple's _1 is named by the tuple
    if not members or expr.lstrip().startswith(("if", "(")):
        return "value"
    last = members[-1]
    if last in ("size", "length") and len(members) > 1:
        return _snake(members[-2]) + "_count"
    name = _RENAMED.get(last) or _snake(last)
    return name if re.fullmatch(r"[a-z][a-z0-9_]*", name) else "value"


def _snake(name: str) -> str:
    return (
        re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower().lstrip("_") or "value"
    )


def kind_of(entry: dict[str, Any]) -> str:
    """`source.<class>.<first words>`: the logger's class in snake case and the message's opening words."""
    words = re.findall(r"[a-z0-9]+", " ".join(entry["fragments"]).lower())[:6]
    logger = entry["logger"] or Path(entry["at"].split()[0]).stem  # the file, where the logger is not known
    owner = "state_change" if logger == "state.change.logger" else _snake(logger.rsplit(".", 1)[-1])
    return f"{AREA}.{owner.replace('$', '_').strip('_')}.{'_'.join(words)}"


def template(entry: dict[str, Any], kind: str) -> Template:
    """The listed message as a template: its fragments, a named field at each hole, every field loose."""
    holes = entry.get("holes") or [""] * (len(entry["fragments"]) - 1)
    names: list[str] = []
    seen: Counter[str] = Counter()
    for expr in holes:
        name = field_name(expr)
        seen[name] += 1
        names.append(name if seen[name] == 1 else f"{name}_{seen[name]}")
    text = entry["fragments"][0] + "".join(
        "{" + n + "}" + f for n, f in zip(names, entry["fragments"][1:], strict=True)
    )
    loggers = (entry["logger"], *entry.get("subclasses", ())) if entry["logger"] else ()
    return Template(kind, text, loggers, entry["at"], loose=True)


def fixed_text(entry: dict[str, Any]) -> int:
    return len(re.findall(r"[A-Za-z0-9]", "".join(entry["fragments"])))


def templates(curated: list[Template], entries: list[dict[str, Any]] | None = None) -> list[Template]:
    """A template for each listed message no curated template types, the most fixed text first (a longer
    message is tried before a shorter one it contains)."""
    texts = [t.text for t in curated]
    left = [
        e
        for e in (listing.load() if entries is None else entries)
        if fixed_text(e) >= MIN_FIXED and not listing.typed_by(e["fragments"], texts)
    ]
    kinds: Counter[str] = Counter()
    before: list[Template] = list(curated)  # what a line meets first, in the loader's order
    made_here: list[Template] = []
    for entry in sorted(left, key=lambda e: (-fixed_text(e), e["logger"], e["at"])):
        mine = [t for t in before if not t.loggers or not entry["logger"] or entry["logger"] in t.loggers]
        if all(any(t.regex.match(v.join(entry["fragments"])) for t in mine) for v in ("7", "x")):
            continue  # templates before it take its lines, whatever their values: a wildcard, a longer one
        kind = kind_of(entry)
        kinds[kind] += 1
        made = template(entry, kind if kinds[kind] == 1 else f"{kind}_{kinds[kind]}")
        before.append(made)
        made_here.append(made)
    return made_here
