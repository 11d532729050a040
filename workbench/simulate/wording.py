"""Log lines in the exact wording of a Kafka version, taken from the catalog (`kafka/messages/`).

The catalog is the one place that states what Kafka writes; the simulator renders its templates rather
than keeping a second copy of the texts. A template is chosen by event kind and by the listing of Kafka's
own source at the version's release line (`kafka/messages/listing.py`): of the templates that release
writes, the one with the fields given, or else the most of them, so a story passes every field it knows
and each version prints what its source prints: `say("controller.elected", "2.8.2", broker=1, epoch=5,
epoch_zk_version=4)` states the epoch, at 1.1.1 the same call does not. A line the release does not
write raises NotWritten, which the story takes as silence.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache

from workbench.kafka.jvm_order import default_scala, scala_set_order
from workbench.kafka.messages import CATALOG, listing
from workbench.kafka.templates import Template

_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")
VERSIONS = ("2.5.1", "2.8.2", "3.6.2")  # the tags the catalog cites most, and the simulator's own rules


@cache
def tag(version: str) -> str:
    """'2.8' or '2.8.1' -> the cited tag of that line ('2.8.2'); 3.x -> '3.6.2'."""
    major_minor = tuple(int(x) for x in re.findall(r"\d+", version)[:2])
    if major_minor >= (3, 0):
        return "3.6.2"
    return "2.8.2" if major_minor >= (2, 8) else "2.5.1"


def zk_client(version: str) -> str:
    """The ZooKeeper client a Kafka version bundles (gradle/dependencies.gradle; 2.5.1's 3.5.8 writes
    the same lines as 3.5.9)."""
    return "release-3.8.4" if tag(version) == "3.6.2" else "release-3.5.9"


def release_line(version: str) -> str:
    """'1.1.1' -> '1.1', '0.10.2.2' -> '0.10.2': the release line the listing (messages/listing.py) names."""
    for line in sorted(listing.RELEASES, key=len, reverse=True):
        if version == line or version.startswith(line + "."):
            return line
    raise ValueError(f"Kafka {version} is not a release line on ZooKeeper ({', '.join(listing.RELEASES)})")


_SAMPLES = ("7", "some-value-7")  # a listed message's values, as test_catalog_source fills them


def written_by(t: Template) -> dict[str, str]:
    """Release line -> the logger that writes this template's line there, by the listing of Kafka's (and
    its ZooKeeper client's) source; empty where the listing does not hold the line at all (the group
    coordinator's, say), whose wording is then chosen by the tag its source cites."""
    return _written(t.text, t.loggers)


@cache
def _written(text: str, loggers: tuple[str, ...]) -> dict[str, str]:
    t = Template("", text, loggers, "")
    lines: dict[str, str] = {}
    for entry in listing.load():
        logger, below = entry["logger"], set(entry.get("subclasses", ()))
        if logger and loggers and logger not in loggers and not below & set(loggers):
            continue
        fragments = entry["fragments"]
        if listing.typed_by(fragments, [text], strict=True) or any(
            t.match(v.join(fragments)) for v in _SAMPLES
        ):
            # the concrete class is the logger (Logging.loggerName is getClass.getName), else the caller's
            own = [name for name in loggers if name == logger]
            mine = [name for name in loggers if name in below] or own
            for line in entry["releases"]:
                subclassed = line in entry.get("subclassed_in", entry["releases"])
                lines.setdefault(line, ((mine if subclassed else own) or list(loggers))[0])
    return lines


def cites(t: Template, version: str) -> bool:
    """Whether the template's citation names the tag of this version's release line, or its ZooKeeper
    client's (a message Kafka passes to a helper that logs it is not in the listing)."""
    tags = (listing.RELEASES[release_line(version)], zk_client(version))
    return any(re.search(rf"(?<![\w.]){re.escape(cited)}(?!\w|\.\d)", t.source) for cited in tags)


class NotWritten(KeyError):
    """Kafka at this version writes no line of this kind with these fields (it came later, or went)."""


@cache
def template(kind: str, version: str, names: frozenset[str], pick: str = "") -> Template:
    """The template Kafka `version` writes for this kind, with these fields or else the most of them: one
    the listing of its source at that release line holds; else one whose citation names that release
    (a message Kafka passes through a helper is not in the listing); else, for lines the listing does
    not hold at all, by the tag its source cites, ZooKeeper client lines by the client that version
    bundles. `pick` is text the template must contain, where one kind has several lines with the same
    fields. NotWritten where Kafka at that version writes no such line."""
    line = release_line(version)
    found = [t for t in CATALOG if t.kind == kind and pick in t.text and not t.loose]
    if not found:  # a story's mistake, not a version's silence
        raise KeyError(f"no catalog template of kind {kind!r} containing {pick!r}")
    fields = [set(_PLACEHOLDER.findall(t.text)) - {"_"} for t in found]
    listed = [(f == names, len(f), -i) for i, (t, f) in enumerate(zip(found, fields, strict=True))
              if line in written_by(t) and f <= names]  # fmt: skip
    if listed:
        return found[-max(listed)[2]]
    exact = [t for t, f in zip(found, fields, strict=True) if f == names]
    chosen = [t for t in exact if cites(t, version)]
    if chosen:
        return chosen[0]
    unlisted = [t for t in exact if not written_by(t)]
    for cited in (tag(version), zk_client(version), ""):
        chosen = [t for t in unlisted if cited in t.source]
        if chosen:
            return chosen[0]
    raise NotWritten(f"Kafka {version} writes no {kind!r} line with fields {sorted(names)} {pick!r}")


def say(kind: str, version: str, /, _: str = "", pick: str = "", **fields: object) -> str:
    """The message text (without time, level and logger) Kafka `version` writes for this event."""
    t = template(kind, version, frozenset(fields), pick)

    def fill(m: re.Match[str]) -> str:
        name = m.group(1)
        return _ if name == "_" else str(fields[name])

    return _PLACEHOLDER.sub(fill, t.text)


def logger_of(kind: str, version: str, /, pick: str = "", **fields: object) -> str:
    """The logger (%c) the chosen template is written by."""
    t = template(kind, version, frozenset(fields), pick)
    return written_by(t).get(release_line(version), t.loggers[0])


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
