"""Log lines in the exact wording of a Kafka version, taken from the catalog (`kafka/messages/`).

The catalog is the one place that states what Kafka writes; the simulator renders its templates rather
than keeping a second copy of the texts. A template is chosen by event kind, by the fields given (its
placeholders) and by the version its source cites, so `say("controller.elected", "2.8.2", broker=1,
epoch=5, epoch_zk_version=4)` is the line KafkaController.elect writes at 2.8.2.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache

from workbench.kafka.jvm_order import default_scala, scala_set_order
from workbench.kafka.messages import CATALOG
from workbench.kafka.templates import Template

_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")
VERSIONS = ("2.5.1", "2.8.2", "3.6.2")  # the tags the catalog cites


@cache
def tag(version: str) -> str:
    """'2.8' or '2.8.1' -> the cited tag of that line ('2.8.2'); 3.x -> '3.6.2'."""
    major_minor = tuple(int(x) for x in re.findall(r"\d+", version)[:2])
    if major_minor >= (3, 0):
        return "3.6.2"
    return "2.8.2" if major_minor >= (2, 8) else "2.5.1"


@cache
def _candidates(kind: str, names: frozenset[str]) -> list[Template]:
    found = [t for t in CATALOG if t.kind == kind and set(_PLACEHOLDER.findall(t.text)) - {"_"} == names]
    if not found:
        raise KeyError(f"no catalog template of kind {kind!r} with fields {sorted(names)}")
    return found


def zk_client(version: str) -> str:
    """The ZooKeeper client a Kafka version bundles (gradle/dependencies.gradle; 2.5.1's 3.5.8 writes
    the same lines as 3.5.9)."""
    return "release-3.8.4" if tag(version) == "3.6.2" else "release-3.5.9"


@cache
def template(kind: str, version: str, names: frozenset[str], pick: str = "") -> Template:
    """The template Kafka `version` writes; ZooKeeper client lines by the client that version bundles.
    `pick` is text the template must contain, where one kind has several lines with the same fields."""
    found = [t for t in _candidates(kind, names) if pick in t.text]
    if not found:
        raise KeyError(f"no catalog template of kind {kind!r} containing {pick!r}")
    for cited in (tag(version), zk_client(version)):
        chosen = [t for t in found if cited in t.source]
        if chosen:
            return chosen[0]
    return found[0]


def say(kind: str, version: str, /, _: str = "", pick: str = "", **fields: object) -> str:
    """The message text (without time, level and logger) Kafka `version` writes for this event."""
    t = template(kind, version, frozenset(fields), pick)

    def fill(m: re.Match[str]) -> str:
        name = m.group(1)
        return _ if name == "_" else str(fields[name])

    return _PLACEHOLDER.sub(fill, t.text)


def logger_of(kind: str, version: str, /, pick: str = "", **fields: object) -> str:
    """The logger (%c) the chosen template is written by."""
    return template(kind, version, frozenset(fields), pick).loggers[0]


def set_order(items: Sequence[str], version: str, mutable: bool = False,
              hashes: Sequence[int] | None = None) -> list[str]:  # fmt: skip
    """The order a Scala set of these elements (added in this order) iterates, which is the order
    Kafka's `mkString` prints; sorted for 2.12's mutable.HashSet, which jvm_order does not model."""
    order = scala_set_order(list(items), default_scala(version), mutable, hashes)
    return sorted(items) if order is None else order


def scala_set(items: Sequence[str], version: str, mutable: bool = False,
              hashes: Sequence[int] | None = None) -> str:  # fmt: skip
    """A Scala set's toString: `Set(...)` under Scala 2.12 and for 2.13's Set1-Set4, `HashSet(...)` for
    2.13's larger and mutable ones."""
    big = mutable or len(items) > 4
    prefix = "HashSet" if big and default_scala(version) == "2.13" else "Set"
    return f"{prefix}({', '.join(set_order(items, version, mutable, hashes))})"
