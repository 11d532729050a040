"""Every log call of the classes whose lines tell the controller's, the replicas' and the logs' story, read
from a Kafka checkout at each release line that runs on ZooKeeper: the listing the catalog is checked
against (tests/test_catalog_source.py), so that a version's wording cannot go missing unnoticed.

Run on a checkout (the search tool's `fetch` brings apache/kafka):

    python -m workbench.kafka.log_calls /path/to/kafka > workbench/kafka/messages/log_calls.json

(each release line's ref in RELEASES must be in the checkout)

A call's message is kept as its literal fragments, a hole between each two where Kafka interpolates a
value (`s"...$x..."`, `"..." + x`, `"%d".format(x)`, Java's `{}`): our reading of the source, not its
code. Each distinct message of a logger keeps its level, the release lines whose source has it and the
file and line at the newest of them.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# The last patch of each release line; a branch head where the mirror has no final tag of the line.
RELEASES = {
    "0.10.2": "0.10.2.2", "0.11.0": "0.11.0.2", "1.0": "1.0.2", "1.1": "1.1.1", "2.0": "2.0.1",
    "2.1": "2.1.1", "2.2": "2.2.2", "2.3": "2.3.1", "2.4": "2.4.1", "2.5": "2.5.1", "2.6": "2.6.3",
    "2.7": "2.7.2", "2.8": "2.8.2", "3.0": "3.0.2", "3.1": "3.1.2", "3.2": "3.2.3", "3.3": "3.3.2",
    "3.4": "3.4.1", "3.5": "3.5.2", "3.6": "3.6.2", "3.7": "refs/heads/3.7", "3.8": "refs/heads/3.8",
    "3.9": "refs/heads/3.9",
}  # fmt: skip

# The classes that matter (file names, in core/ or storage/ and server-common/ in later releases).
CLASSES = {
    "KafkaController", "ControllerEventManager", "ReplicaStateMachine", "PartitionStateMachine",
    "TopicDeletionManager", "ControllerChannelManager", "Partition", "ReplicaManager",
    "AbstractFetcherThread", "ReplicaFetcherThread", "AbstractFetcherManager", "ReplicaFetcherManager",
    "Log", "UnifiedLog", "LogLoader", "LocalLog", "LogManager", "KafkaZkClient", "ZkUtils",
    "ZooKeeperClient", "KafkaServer", "ZookeeperLeaderElector", "KafkaHealthcheck",
}  # fmt: skip

LEVELS = ("trace", "debug", "info", "warn", "error", "fatal")
_RECEIVER = (
    r"(?:(?:this\.)?(?P<recv>logger|log|LOG|stateChangeLogger|stateChangeLog)"
    r"(?:\.withControllerEpoch\((?:[^()]|\([^()]*\))*\))?\s*\.\s*)"
)
_CALL = re.compile(rf"(?<![\w.$]){_RECEIVER}?(?P<level>{'|'.join(LEVELS)})\s*\(")
_DEF = re.compile(r"\bdef\s*$")
_OWNER = re.compile(r"^\s*(?:[\w\[\]]+\s+)*(?:class|object|trait|interface|enum)\s+(\w+)", re.M)
_PACKAGE = re.compile(r"^\s*package\s+([\w.]+)", re.M)
_STRING_FORMAT = re.compile(r"String\.format\s*\(")
_FORMAT = re.compile(r"%(?:\d+\$)?[-#+ 0,(]*\d*(?:\.\d+)?[a-zA-Z%]")


@dataclass(frozen=True)
class Call:
    """One log call: its logger (the class, or state.change.logger), level and message fragments."""

    logger: str
    level: str
    fragments: tuple[str, ...]
    file: str
    line: int

    @property
    def dynamic(self) -> bool:
        """A message with no literal text of its own (`info(msg)`): nothing to type it by."""
        return not "".join(self.fragments).strip()


def calls(source: str, file: str) -> Iterator[Call]:
    """The log calls in one Scala or Java file, with the logger each writes to: the innermost class or
    object whose body holds the call (an object's name ends in $, a nested class's joins with $)."""
    text = _without_comments(source)
    package = m.group(1) if (m := _PACKAGE.search(text)) else ""
    bodies: list[tuple[int, int, str, bool]] = []  # start, end, class name, whether it has a logger
    for decl in _OWNER.finditer(text):
        span = _body(text, decl.end())
        if span is None:
            continue
        outer = [b for b in bodies if b[0] < decl.start() < b[1]]
        parent = outer[-1][2] if outer else (f"{package}." if package else "")
        name = decl.group(1) + ("$" if re.search(r"\bobject\s+\w+$", decl.group(0)) else "")
        full = parent + name if not outer or parent.endswith("$") else f"{parent}${name}"
        bodies.append((*span, full, bool(_LOGGING.search(text[decl.start() : span[0]]))))
    for m in _CALL.finditer(text):
        if _DEF.search(text[max(0, m.start() - 8) : m.start()]):
            continue
        parsed = _first_argument(text, m.end(), file.endswith(".java"))
        if parsed is None:
            continue
        inside = [b for b in bodies if b[0] < m.start() < b[1]]
        # Logging's methods are the innermost class's that has them (an event object inside the
        # controller logs as the controller), else the outermost's.
        logging = [b for b in inside if b[3]] or inside[:1]
        owner = logging[-1][2] if logging else Path(file).stem
        logger = "state.change.logger" if (m.group("recv") or "").startswith("stateChange") else owner
        yield Call(logger, m.group("level"), parsed, file, text.count("\n", 0, m.start()) + 1)


# Classes whose instances log under their own name: those mixing Logging in, or extending a class that does.
_LOGGING = re.compile(
    r"\b(?:Logging|ShutdownableThread|KafkaMetricsGroup|AbstractFetcherThread|AbstractFetcherManager"
    r"|PartitionStateMachine|ReplicaStateMachine|AbstractControllerBrokerRequestBatch|Logger)\b"
)
_CONTINUES = re.compile(r"\s*(?:extends|with|\(|\)|:|=>|,)", re.M)


def _body(text: str, i: int) -> tuple[int, int] | None:
    """Where the body of a declaration whose name ends at i starts and ends, or None for one without a
    body (`case class X(a: Int)`): the header runs to the first brace outside parentheses, unless a line
    ends it first."""
    parens, n = 0, len(text)
    while i < n:
        literal = _string_at(text, i) if text[i] in 'sfr"' else None
        if literal is not None:
            i = max(literal[1], i + 1)
            continue
        c = text[i]
        if c in "([":
            parens += 1
        elif c in ")]":
            parens -= 1
        elif c == "{" and parens == 0:
            return i, _closing(text, i)
        elif c == "\n" and parens == 0:
            line_end = text.rstrip()[:i].rstrip()
            if not line_end.endswith(("extends", "with", ",", "=>", "(")) and not _CONTINUES.match(
                text, i + 1
            ):
                return None
        i += 1
    return None


def _closing(text: str, i: int) -> int:
    """The position of the brace closing the one at i, strings skipped."""
    depth, n = 0, len(text)
    while i < n:
        literal = _string_at(text, i) if text[i] in 'sfr"' else None
        if literal is not None:
            i = max(literal[1], i + 1)
            continue
        depth += text[i] == "{"
        depth -= text[i] == "}"
        if depth == 0:
            return i
        i += 1
    return n


def _without_comments(source: str) -> str:
    """Comments blanked (newlines kept, so line numbers hold), strings left alone."""
    out, i, n = [], 0, len(source)
    while i < n:
        c = source[i]
        if source.startswith('"""', i):
            j = source.find('"""', i + 3)
            j = n if j < 0 else j + 3
            out.append(source[i:j])
            i = j
        elif c == '"':
            j = i + 1
            while j < n and source[j] != '"' and source[j] != "\n":
                j += 2 if source[j] == "\\" else 1
            out.append(source[i : j + 1])
            i = j + 1
        elif c == "'" and i + 2 < n and (source[i + 2] == "'" or source[i + 1] == "\\"):
            j = source.find("'", i + 2) + 1 or n
            out.append(source[i:j])
            i = j
        elif source.startswith("//", i):
            j = source.find("\n", i)
            i = n if j < 0 else j
        elif source.startswith("/*", i):
            j = source.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", source[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _first_argument(text: str, i: int, java: bool) -> tuple[str, ...] | None:
    """The first argument of a call whose '(' ends at i, as literal fragments with holes between."""
    pieces: list[tuple[str, ...] | None] = []  # a literal's fragments, or None for an expression
    expr, depth, n = "", 0, len(text)
    while i < n:
        c = text[i]
        if depth == 0 and c in ",)":
            break
        wrapped = _STRING_FORMAT.match(text, i) if not expr.strip() else None
        if wrapped is not None:  # String.format("...%s...", x): its format's text, each specifier a hole
            inner = _first_argument(text, wrapped.end(), java=False)
            pieces.append(_split_format(inner) if inner is not None else None)
            i = _skip_call(text, wrapped.start() + len("String"))
            continue
        literal = _string_at(text, i)
        if literal is not None and not expr.strip():
            fragments, i = literal
            pieces.append(fragments)
            continue
        if literal is not None:  # a string inside an expression (an argument of a call in it)
            i = literal[1]
            expr += '""'
            continue
        if depth == 0 and c == "+":
            if expr.strip():
                pieces.append(None)
            expr = ""
            i += 1
            continue
        if depth == 0 and c == "." and pieces and pieces[-1] is not None and not expr.strip():
            rest = text[i:]
            if rest.startswith(".format"):  # "...%d...".format(x): each specifier a hole
                pieces[-1] = _split_format(pieces[-1])
            # .format(...), .stripMargin, .trim: the literal's own text stands
            end = _skip_call(text, i)
            i = end
            continue
        depth += c in "([{"
        depth -= c in ")]}"
        expr += c
        i += 1
    if expr.strip():
        pieces.append(None)
    if not pieces:
        return None
    out = [""]
    for p in pieces:
        if p is None:
            out.append("")
            continue
        out[-1] += p[0]
        out.extend(p[1:])
    if java:  # slf4j's {} placeholders
        out = [bit for f in out for bit in f.split("{}")]
    return tuple(out)


def _split_format(fragments: tuple[str, ...]) -> tuple[str, ...]:
    """Each printf specifier (%d, %s, %.2f) a hole; %% is a literal %."""
    return tuple(b.replace("\0", "%") for f in fragments for b in _FORMAT.split(f.replace("%%", "\0")))


def _skip_call(text: str, i: int) -> int:
    """Past `.name` and its parenthesised arguments, if any."""
    m = re.compile(r"\.\s*\w+\s*").match(text, i)
    j = m.end() if m else i + 1
    if j < len(text) and text[j] == "(":
        depth = 0
        while j < len(text):
            literal = _string_at(text, j)
            if literal is not None:
                j = literal[1]
                continue
            depth += text[j] == "("
            depth -= text[j] == ")"
            j += 1
            if depth == 0:
                break
    return j


def _string_at(text: str, i: int) -> tuple[tuple[str, ...], int] | None:
    """A string literal starting at i (plain, s/f/raw-interpolated, triple-quoted): its fragments, holes
    where it interpolates, and where it ends."""
    m = re.compile(r'(s|f|raw)?("""|")').match(text, i)
    if m is None or (m.group(1) and i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")):
        return None
    interpolated, quote = m.group(1) is not None, m.group(2)
    j, fragments = m.end(), [""]
    while j < len(text):
        if text.startswith(quote, j):
            j += len(quote)
            break
        c = text[j]
        if quote == '"' and c == "\\" and j + 1 < len(text):
            fragments[-1] += {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}.get(text[j + 1], text[j + 1])
            j += 2
        elif interpolated and c == "$" and text.startswith("$$", j):
            fragments[-1] += "$"
            j += 2
        elif interpolated and c == "$" and j + 1 < len(text) and text[j + 1] == "{":
            depth, j = 0, j + 1
            while j < len(text):
                inner = _string_at(text, j) if text[j] in 'sfr"' else None
                if inner is not None:
                    j = inner[1]
                    continue
                depth += text[j] == "{"
                depth -= text[j] == "}"
                j += 1
                if depth == 0:
                    break
            fragments.append("")
        elif (
            interpolated and c == "$" and j + 1 < len(text) and (text[j + 1].isalpha() or text[j + 1] == "_")
        ):
            j += 1
            while j < len(text) and (text[j].isalnum() or text[j] == "_"):
                j += 1
            fragments.append("")
        else:
            fragments[-1] += c
            j += 1
    if m.group(1) == "f":
        return _split_format(tuple(fragments)), j
    return tuple(fragments), j


def listing(repo: Path, releases: dict[str, str] = RELEASES) -> list[dict[str, Any]]:
    """Every distinct (logger, level, message) of the classes that matter at each release line."""
    seen: dict[tuple[str, str, tuple[str, ...]], dict[str, Any]] = {}
    for line, ref in releases.items():
        names = _git(repo, "ls-tree", "-r", "--name-only", ref).splitlines()
        for path in names:
            stem, _, ext = Path(path).name.rpartition(".")
            if stem not in CLASSES or ext not in ("scala", "java") or "/src/main/" not in path:
                continue
            for call in calls(_git(repo, "show", f"{ref}:{path}"), path):
                if call.dynamic:
                    continue
                key = (call.logger, call.level, call.fragments)
                entry = seen.setdefault(
                    key,
                    {"logger": call.logger, "level": call.level, "fragments": list(call.fragments)},
                )
                entry.setdefault("releases", []).append(line)
                entry["at"] = f"{path} {line}:{call.line}"
    return sorted(seen.values(), key=lambda e: (str(e["logger"]), str(e["at"])))


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def typed_by(fragments: list[str] | tuple[str, ...], texts: list[str]) -> list[int]:
    """Which of the catalog's template texts type a listed message: those whose literal text fills the
    message's fragments in order, each of their fields standing where Kafka interpolates a value (a
    template that splits one of Kafka's values into constants still fits)."""
    holes = re.compile(r"^\s*" + _HOLE.join(re.escape(f.strip()) for f in fragments) + r"\s*$", re.S)
    return [i for i, text in enumerate(texts) if holes.match(_FIELD.sub("\0", text))]


# Where Kafka interpolates one value, a template has one field, or constants it split the value into, or
# both around one field; never several fields with text between (that is a longer message than Kafka's).
_HOLE = "[^\0]*?(?:\0[^\0]*?)?"


_FIELD = re.compile(r"\{[a-z_]+\}")


def dumps(entries: list[dict[str, Any]]) -> str:
    """The listing as JSON, an entry a line, so that a diff shows what a release changed."""
    return "[\n" + ",\n".join(json.dumps(e, ensure_ascii=False) for e in entries) + "\n]\n"


LISTING = Path(__file__).parent / "messages" / "log_calls.json"


def load() -> list[dict[str, Any]]:
    """The committed listing (made by this module's __main__ from a Kafka checkout)."""
    entries: list[dict[str, Any]] = json.loads(LISTING.read_text(encoding="utf-8"))
    return entries


if __name__ == "__main__":
    sys.stdout.write(dumps(listing(Path(sys.argv[1]))))
