"""Every log call of the code whose lines tell the controller's, the replicas', the logs' and the ZooKeeper
session's story, at each Kafka release line that runs on ZooKeeper: the listing the catalog is checked
against (tests/test_catalog_source.py) and the source of the templates made for what the curated catalog
does not type (source.py), so that no release's wording goes missing unnoticed.

Made from checkouts of apache/kafka and apache/zookeeper (the search tool's `fetch` brings both):

    python -m workbench.kafka.messages.listing /path/to/kafka /path/to/zookeeper /path/to/zkclient \\
        > workbench/kafka/messages/log_calls.json

(apache/kafka, apache/zookeeper, sgroschupf/zkclient)

Each distinct message of a logger keeps its level, the Kafka release lines whose source (or bundled
ZooKeeper client, as gradle/dependencies.gradle names it at that release) has it, what each hole
interpolates and the file and line at the newest of them.
"""

from __future__ import annotations

import functools
import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from workbench.kafka.log_calls import calls, extensions

# The last patch of each release line; a branch head where the mirror has no final tag of the line.
RELEASES = {
    "0.10.2": "0.10.2.2", "0.11.0": "0.11.0.2", "1.0": "1.0.2", "1.1": "1.1.1", "2.0": "2.0.1",
    "2.1": "2.1.1", "2.2": "2.2.2", "2.3": "2.3.1", "2.4": "2.4.1", "2.5": "2.5.1", "2.6": "2.6.3",
    "2.7": "2.7.2", "2.8": "2.8.2", "3.0": "3.0.2", "3.1": "3.1.2", "3.2": "3.2.3", "3.3": "3.3.2",
    "3.4": "3.4.1", "3.5": "3.5.2", "3.6": "3.6.2", "3.7": "refs/heads/3.7", "3.8": "refs/heads/3.8",
    "3.9": "refs/heads/3.9",
}  # fmt: skip

# Kafka's code that matters: whole packages (the controller, partitions, logs, the ZooKeeper clients,
# checkpoints and leader epochs) and the broker's classes that act on partitions and its own lifecycle.
PACKAGES = (
    "/scala/kafka/controller/", "/scala/kafka/cluster/", "/scala/kafka/log/", "/scala/kafka/zk/",
    "/scala/kafka/zookeeper/", "/scala/kafka/server/checkpoints/", "/scala/kafka/server/epoch/",
    "/java/org/apache/kafka/storage/internals/log/", "/java/org/apache/kafka/storage/internals/checkpoint/",
    "/java/org/apache/kafka/storage/internals/epoch/",
)  # fmt: skip
CLASSES = {
    "ReplicaManager", "AbstractFetcherThread", "ReplicaFetcherThread", "AbstractFetcherManager",
    "ReplicaFetcherManager", "ReplicaAlterLogDirsThread", "ReplicaAlterLogDirsManager",
    "ReplicaFetcherBlockingSend", "KafkaServer", "KafkaHealthcheck", "ZookeeperLeaderElector", "ZkUtils",
    "AlterIsrManager", "ZkIsrManager", "AlterPartitionManager", "LogDirFailureChannel", "MetadataCache",
    "ZkMetadataCache", "BrokerMetadataCheckpoint", "AdminUtils", "AdminManager", "ZkAdminManager",
    "DynamicConfigManager", "KafkaApis", "AppInfoParser", "Logging",
}  # fmt: skip
# The ZooKeeper clients Kafka bundles (their session, connection and SASL lines): ZooKeeper's own, and
# until 2.1 101tec's zkclient around it (ZkUtils' sessions, 0.10-1.x). Each is read at the version
# gradle/dependencies.gradle names at the release, from its repository's tag for that version.
BUNDLED = {
    "zookeeper": ("release-{}", "/org/apache/zookeeper/", {
        "ClientCnxn", "ClientCnxnSocket", "ClientCnxnSocketNIO", "ClientCnxnSocketNetty", "ZooKeeper",
        "ZooKeeperSaslClient", "Login", "StaticHostProvider", "Environment", "X509Util", "ClientX509Util",
    }),
    "zkclient": ("{}", "/org/I0Itec/zkclient/", {"ZkClient", "ZkConnection", "ZkEventThread"}),
}  # fmt: skip


def _kafka_file(path: str) -> bool:
    stem, _, ext = Path(path).name.rpartition(".")
    return (
        ext in ("scala", "java")
        and "/src/main/" in path
        and (stem in CLASSES or any(p in path for p in PACKAGES))
    )


def _client_file(package: str, classes: set[str]) -> Callable[[str], bool]:
    def wanted(path: str) -> bool:
        stem, _, ext = Path(path).name.rpartition(".")
        return ext == "java" and "/main/" in path and package in path and stem in classes

    return wanted


def listing(
    kafka: Path, clients: dict[str, Path], releases: dict[str, str] = RELEASES
) -> list[dict[str, Any]]:
    """Every distinct (logger, level, message) of the code that matters at each release line, Kafka's
    and its bundled clients' (`clients`: a checkout per name in BUNDLED)."""
    seen: dict[tuple[str, str, tuple[str, ...]], dict[str, Any]] = {}

    subclasses: dict[str, dict[str, set[str]]] = {}  # line -> a class's simple name -> classes extending it

    def read(repo: Path, ref: str, wanted: Callable[[str], bool], line: str, at: str) -> None:
        for path in _git(repo, "ls-tree", "-r", "--name-only", ref).splitlines():
            if not wanted(path):
                continue
            source = _git(repo, "show", f"{ref}:{path}")
            for child, parent in extensions(source):
                subclasses.setdefault(line, {}).setdefault(parent, set()).add(child)
            for call in calls(source, path):
                if call.dynamic:
                    continue
                entry = seen.setdefault(
                    (call.logger, call.level, call.fragments),
                    {"logger": call.logger, "level": call.level, "fragments": list(call.fragments)},
                )
                if line not in entry.setdefault("releases", []):
                    entry["releases"].append(line)
                entry["holes"] = list(call.holes)  # as the newest release writes them
                entry["at"] = f"{path} {at}:{call.line}"

    for line, ref in releases.items():
        read(kafka, ref, _kafka_file, line, line)
        gradle = _git(kafka, "show", f"{ref}:gradle/dependencies.gradle")
        for name, (tag, package, classes) in BUNDLED.items():
            version = re.search(rf'^\s*{name}:\s*"(\d[\d.]*)"', gradle, re.M)
            if version is not None:
                wanted = _client_file(package, classes)
                read(clients[name], tag.format(version.group(1)), wanted, line, f"{name}-{version.group(1)}")
    for entry in seen.values():  # an abstract class's calls write under its concrete classes' names
        scala = entry["at"].split()[0].endswith(".scala")  # Java's static loggers keep their class's name
        if not (entry["logger"] and scala):
            continue
        name = entry["logger"].rsplit(".", 1)[-1]
        below = {line: _below(name, subclasses.get(line, {})) for line in entry["releases"]}
        if any(below.values()):  # where a line has none, the class logs under its own name
            entry["subclasses"] = sorted(set().union(*below.values()))
            entry["subclassed_in"] = [line for line in entry["releases"] if below[line]]
    return sorted(seen.values(), key=lambda e: (str(e["logger"]), str(e["at"])))


def _below(name: str, subclasses: dict[str, set[str]]) -> set[str]:
    found: set[str] = set()
    todo = [name]
    while todo:
        for child in subclasses.get(todo.pop(), set()) - found:
            found.add(child)
            todo.append(child.rsplit(".", 1)[-1])
    return found


@functools.lru_cache(maxsize=64)
def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def typed_by(fragments: list[str] | tuple[str, ...], texts: list[str], strict: bool = False) -> list[int]:
    """Which of the catalog's template texts type a listed message: those whose literal text fills the
    message's fragments in order, each of their fields standing where Kafka interpolates a value (a
    template that splits one of Kafka's values into constants still fits, unless `strict`: then each
    value is fields only, as where a template must be the very message a release writes)."""
    hole = r"\s*\0(?:[,;:= ]\0)*\s*" if strict else _HOLE
    holes = re.compile(r"^\s*" + hole.join(re.escape(f.strip()) for f in fragments) + r"\s*$", re.S)
    return [i for i, text in enumerate(_blanked(tuple(texts))) if holes.match(text)]


@functools.lru_cache(maxsize=4)
def _blanked(texts: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(_FIELD.sub("\0", text) for text in texts)


# Where Kafka interpolates one value, a template has one field, or constants it split the value into, or
# both around one field; never several fields with text between (that is a longer message than Kafka's).
_HOLE = "[^\0]*?(?:\0(?:[,;:= ]\0)*[^\0]*?)?"  # a value, or fields split from it by punctuation
_FIELD = re.compile(r"\{[a-z_][a-z0-9_]*\}")


def dumps(entries: list[dict[str, Any]]) -> str:
    """The listing as JSON, an entry a line, so that a diff shows what a release changed."""
    return "[\n" + ",\n".join(json.dumps(e, ensure_ascii=False) for e in entries) + "\n]\n"


LISTING = Path(__file__).parent / "log_calls.json"


def load() -> list[dict[str, Any]]:
    """The committed listing (made by this module's __main__ from the checkouts)."""
    entries: list[dict[str, Any]] = json.loads(LISTING.read_text(encoding="utf-8"))
    return entries


if __name__ == "__main__":
    kafka_checkout, *client_checkouts = map(Path, sys.argv[1:])
    sys.stdout.write(dumps(listing(kafka_checkout, dict(zip(BUNDLED, client_checkouts, strict=True)))))
