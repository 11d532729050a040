"""A fact about Kafka's behaviour: a claim, the versions it holds for, and where Kafka's source shows it
(`behaviour.py` states them; `behaviour_log.py` those about the replicas' logs)."""

from __future__ import annotations

import re
from dataclasses import dataclass

Version = tuple[int, ...]


@dataclass(frozen=True)
class Source:
    """Where a fact is shown: a tag of apache/kafka (or apache/zookeeper), a file and its lines there."""

    tag: str
    path: str
    lines: str

    def __str__(self) -> str:
        return f"{self.tag}: {self.path}:{self.lines}"


@dataclass(frozen=True)
class Fact:
    """A claim about Kafka that holds from `since` (inclusive) until `until` (exclusive); None: no bound
    among the ZooKeeper-mode versions the workbench reads."""

    key: str
    claim: str
    since: Version | None
    until: Version | None
    sources: tuple[Source, ...]

    def holds(self, version: str | Version | None) -> bool | None:
        """Whether it holds at a Kafka version; None when the version is not known."""
        v = parse(version) if isinstance(version, str) or version is None else version
        if v is None:
            return None
        return (self.since is None or v >= self.since) and (self.until is None or v < self.until)


def parse(version: str | None) -> Version | None:
    """'2.8.2' -> (2, 8, 2); '3.1' -> (3, 1, 0); None when there is no version to read."""
    m = re.match(r"^\s*(\d+)\.(\d+)(?:\.(\d+))?", version or "")
    return (int(m[1]), int(m[2]), int(m[3] or 0)) if m else None


K = "core/src/main/scala/kafka"
CLIENTS = "clients/src/main/java/org/apache/kafka"
ZK = "zookeeper-server/src/main/java/org/apache/zookeeper"  # apache/zookeeper
