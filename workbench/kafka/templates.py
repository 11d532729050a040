"""How a catalog entry is written: Kafka's own message text with `{field}` placeholders.

`Template("controller.elected", "{broker} successfully elected as the controller. ...", KC, "...")` reads
like the Scala source it cites. Placeholders become regex groups by name (FIELD_PATTERNS); `{_}` is text
we do not keep; a template ending in `{_}` allows trailing text. The resulting pattern is plain enough
for both Python's `re` and RE2 (Arrow's compute functions, where the loader types events).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from types import MappingProxyType

from workbench.kafka.logdir import TOPIC_CHARS

_INT = r"-?\d+"
_LIST = r"[-\d,]*"  # an ISR or replica list as mkString(",") prints it
FIELD_PATTERNS: Mapping[str, str] = MappingProxyType(
    {
        "tp": rf"(?P<topic>{TOPIC_CHARS}+)-(?P<partition>\d+)",
        "topic": rf"{TOPIC_CHARS}+",
        "session": r"0x[0-9a-fA-F]+",
        "topic_id": r"\S+",
        "ratio": r"[-+0-9.Ee]+|NaN|Infinity",
        "isr": _LIST,
        "from_isr": _LIST,
        "to_isr": _LIST,
        "adding_replicas": _LIST,
        "removing_replicas": _LIST,
        **{
            name: _INT
            for name in (
                "broker",
                "controller",
                "epoch",
                "controller_epoch",
                "last_controller_epoch",
                "latest_epoch",
                "epoch_zk_version",
                "zk_version",
                "leader",
                "preferred",
                "leader_epoch",
                "current_leader_epoch",
                "previous_leader_epoch",
                "partition_epoch",
                "replica",
                "correlation_id",
                "count",
                "added",
                "deleted",
                "become_leader",
                "become_follower",
                "offset",
                "last_offset",
                "high_watermark",
                "end_offset",
                "ms",
                "generation",
                "members",
                "static_members",
                "idle_ms",
                "timeout_ms",
                "broker_epoch",
                "bytes",
                "retries",
                "czxid",
                "mzxid",
                "pzxid",
                "ctime",
                "mtime",
                "version",
                "cversion",
                "aversion",
                "ephemeral_owner",
                "data_length",
                "num_children",
            )
        },
    }
)
_ANY = ".*?"
_PLACEHOLDER = re.compile(r"\{([a-z_][a-z0-9_]*)\}")


@dataclass(frozen=True)
class Template:
    """One log line Kafka (or its ZooKeeper client) writes, and the event kind it is."""

    kind: str
    text: str
    loggers: tuple[str, ...]
    source: str  # file and versions (tag:line) in apache/kafka or apache/zookeeper
    consts: Mapping[str, str] = field(default_factory=dict)
    loose: bool = False  # every field any text (a template made from Kafka's source, messages/source.py)

    @cached_property
    def pattern(self) -> str:
        """Anchored regex with named groups (Python syntax)."""
        out, pos = ["^"], 0
        for m in _PLACEHOLDER.finditer(self.text):
            literal, name = self.text[pos : m.start()], m.group(1)
            # A last field printed empty leaves the line ending in the space before it, which the
            # loader trims ("List of topics to be deleted: "): that space and the field are optional.
            trailing = m.end() == len(self.text) and name not in ("_", "tp") and literal.endswith(" ")
            out.append(re.escape(literal.rstrip(" ") if trailing else literal))
            if name == "_":
                out.append(".*" if m.end() == len(self.text) else _ANY)
            elif name == "tp":
                out.append(FIELD_PATTERNS["tp"])
            else:
                group = f"(?P<{name}>{_ANY if self.loose else FIELD_PATTERNS.get(name, _ANY)})"
                out.append(f"(?: +{group})?" if trailing else group)
            pos = m.end()
        out.append(re.escape(self.text[pos:]))
        out.append(r"\s*$")
        return "".join(out)

    @cached_property
    def plan(self) -> tuple[str, tuple[tuple[str, str, str], ...]] | None:
        """The pattern as its opening text and then (field, kind, text after it) steps, where a matcher
        needs no regex to match it as the regex does: each field is any text (`.*?`, the shortest that
        lets the rest match, or a last `{_}`, all that is left) or an integer (`-?\\d+`) followed by text
        that cannot open with a digit. None where the pattern has more (a topic-partition, a field of
        another pattern, an optional last field, two fields side by side)."""
        parts = _PLACEHOLDER.split(self.text)
        texts, names = parts[0::2], parts[1::2]
        steps = []
        for k, name in enumerate(names):
            after, last = texts[k + 1], k == len(names) - 1
            field = _ANY if name == "_" or self.loose else FIELD_PATTERNS.get(name, _ANY)
            if name == "tp" or field not in (_ANY, _INT) or (not after and not last):
                return None
            if last and not after and name != "_" and texts[k].endswith(" "):
                return None  # an optional last field (pattern's `trailing`)
            if field == _INT and (not after or after[0].isdigit()):
                return None
            steps.append((name, "int" if field == _INT else "any", after))
        return texts[0], tuple(steps)

    @cached_property
    def re2_pattern(self) -> str:
        """The same pattern for RE2 (Arrow's regex engine), with (?s) for multi-line messages."""
        return "(?s)" + self.pattern

    @cached_property
    def regex(self) -> re.Pattern[str]:
        return re.compile(self.pattern, re.S)

    @cached_property
    def fields(self) -> dict[str, int]:
        """Field name -> group number."""
        return dict(self.regex.groupindex)

    @cached_property
    def literal(self) -> str:
        """The longest fixed text of the template: a cheap test before the regex (without the
        whitespace a trimmed message may have lost)."""
        return max(_PLACEHOLDER.split(self.text)[::2], key=len).strip()

    def match(self, message: str) -> dict[str, str] | None:
        """Python-side match, for tests and documentation."""
        m = self.regex.match(message)
        return None if m is None else {k: v for k, v in m.groupdict().items() if v is not None}
