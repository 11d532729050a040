"""The log calls in Kafka's (and ZooKeeper's) source, read without running it: for each call its logger,
level and message, the message kept as its literal fragments with a hole between each two where the
source interpolates a value (`s"...$x..."`, `"..." + x`, `"%d".format(x)`, Java's `{}`), and what it
interpolates there. Our reading of the source, not its code; messages/listing.py runs it over every
release line.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

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
    """One log call: its logger (the class, state.change.logger, or "" where the source does not say),
    level and message fragments."""

    logger: str
    level: str
    fragments: tuple[str, ...]
    file: str
    line: int
    holes: tuple[str, ...] = ()  # what Kafka interpolates at each hole, "" where the source does not say

    @property
    def dynamic(self) -> bool:
        """A message with no literal text of its own (`info(msg)`): nothing to type it by."""
        return not "".join(self.fragments).strip()


def calls(source: str, file: str) -> Iterator[Call]:
    """The log calls in one Scala or Java file, with the logger each writes to: the innermost class or
    object whose body holds the call (an object's name ends in $, a nested class's joins with $)."""
    text = _without_comments(source)
    bodies = [
        (start, end, full, bool(_LOGGING.search(header))) for start, end, full, header in _classes(text)
    ]
    for m in _CALL.finditer(text):
        if _DEF.search(text[max(0, m.start() - 8) : m.start()]):
            continue
        java = file.endswith(".java")
        marked = _first_argument(text, m.end(), java)
        if marked is None:
            continue
        if java:  # slf4j's {} are filled by the arguments after the message
            marked = _named(marked, _arguments(text, m.end() - 1)[0][1:])
        inside = [b for b in bodies if b[0] < m.start() < b[1]]
        # Logging's methods are the innermost class's that has them (an event object inside the
        # controller logs as the controller), else the outermost's.
        logging = [b for b in inside if b[3]] or inside[:1]
        owner = logging[-1][2] if logging else Path(file).stem
        recv = m.group("recv") or ""
        logger = "state.change.logger" if recv.startswith("stateChange") else owner
        if recv == "log" and (file.endswith(".scala") or not _OWN_LOG.search(text)):
            # Scala's Logging has no `log`: a Log's (or another object's) logger; a Java `log` not made
            # for its own class (`getLogger(getClass())`, a parameter) is the caller's: unknown here
            logger = ""
        line = text.count("\n", 0, m.start()) + 1
        fragments, holes = _unmark(marked)
        yield Call(logger, m.group("level"), fragments, file, line, holes)


_OWN_LOG = re.compile(r"\bLogger\s+log\s*=\s*LoggerFactory\.getLogger\(\s*\w+\.class\s*\)")


def _classes(text: str) -> list[tuple[int, int, str, str]]:
    """Each class, object or trait with a body: where its body starts and ends, its full name (an
    object's ends in $, a nested class's joins with $) and its header (what it extends)."""
    package = m.group(1) if (m := _PACKAGE.search(text)) else ""
    out: list[tuple[int, int, str, str]] = []
    for decl in _OWNER.finditer(text):
        span = _body(text, decl.end())
        if span is None:
            continue
        outer = [b for b in out if b[0] < decl.start() < b[1]]
        parent = outer[-1][2] if outer else (f"{package}." if package else "")
        name = decl.group(1) + ("$" if re.search(r"\bobject\s+\w+$", decl.group(0)) else "")
        full = parent + name if not outer or parent.endswith("$") else f"{parent}${name}"
        out.append((*span, full, text[decl.start() : span[0]]))
    return out


def extensions(source: str) -> Iterator[tuple[str, str]]:
    """(class, the simple name of a class it extends or mixes in) for the classes of one file: a class's
    inherited log calls write under the concrete class's name (Logging names its logger by getClass)."""
    for _, _, full, header in _classes(_without_comments(source)):
        for parent in re.findall(r"\b(?:extends|with)\s+([A-Z]\w*)\b(?!\.)", header):
            yield full, parent


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


# Inside the reader a message is one string, each hole marked as OPEN + what Kafka interpolates + CLOSE.
OPEN, CLOSE = "\x01", "\x02"
_MARK = re.compile(f"{OPEN}([^{CLOSE}]*){CLOSE}")


def _hole(expr: str) -> str:
    return OPEN + " ".join(expr.replace(OPEN, "").replace(CLOSE, "").split()) + CLOSE


def _unmark(marked: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A marked message as its literal fragments and the expressions at the holes between them."""
    parts = _MARK.split(marked)
    return tuple(parts[::2]), tuple(parts[1::2])


def _first_argument(text: str, i: int, java: bool) -> str | None:
    """The first argument of a call whose '(' ends at i, as a marked message."""
    pieces: list[str] = []
    expr, depth, n = "", 0, len(text)
    while i < n:
        c = text[i]
        if depth == 0 and c in ",)":
            break
        wrapped = _STRING_FORMAT.match(text, i) if not expr.strip() else None
        if wrapped is not None:  # String.format("...%s...", x): its format's text, each specifier a hole
            inner = _first_argument(text, wrapped.end(), java=False)
            names, i = _arguments(text, wrapped.end() - 1)
            pieces.append(_split_format(inner, names[1:]) if inner is not None else _hole(""))
            continue
        literal = _string_at(text, i)
        if literal is not None and not expr.strip():
            marked, i = literal
            pieces.append(marked)
            continue
        if literal is not None:  # a string inside an expression (an argument of a call in it)
            i = literal[1]
            expr += '""'
            continue
        if depth == 0 and c == "+":
            if expr.strip():
                pieces.append(_hole(expr))
            expr = ""
            i += 1
            continue
        if depth == 0 and c == "." and pieces and not expr.strip():
            called = re.compile(r"\.\s*format\s*(?=\()").match(text, i)
            if called is not None:  # "...%d...".format(x): each specifier a hole, named by its argument
                names, i = _arguments(text, called.end())
                pieces[-1] = _split_format(pieces[-1], names)
                continue
            i = _skip_call(text, i)  # .stripMargin, .trim: the literal's own text stands
            continue
        depth += c in "([{"
        depth -= c in ")]}"
        expr += c
        i += 1
    if expr.strip():
        pieces.append(_hole(expr))
    if not pieces:
        return None
    out = "".join(pieces)
    return out.replace("{}", _hole("")) if java else out  # slf4j's {} placeholders


def _split_format(marked: str, names: list[str] | tuple[str, ...] = ()) -> str:
    """Each printf specifier (%d, %s, %.2f) a hole, named by the format's arguments in order; %% is a
    literal %."""
    return _named(_FORMAT.sub(_hole(""), marked.replace("%%", "\0")).replace("\0", "%"), names)


def _named(marked: str, names: list[str] | tuple[str, ...]) -> str:
    """The unnamed holes of a marked message named by the arguments that fill them, in order."""
    left = iter(names)
    return re.sub(OPEN + CLOSE, lambda _: _hole(next(left, "")), marked)


def _skip_call(text: str, i: int) -> int:
    """Past `.name` and its parenthesised arguments, if any."""
    m = re.compile(r"\.\s*\w+\s*").match(text, i)
    j = m.end() if m else i + 1
    return _arguments(text, j)[1] if j < len(text) and text[j] == "(" else j


def _arguments(text: str, i: int) -> tuple[list[str], int]:
    """The arguments of a call whose '(' is at i, as source text, and where the call ends."""
    args, depth, j, start = [], 0, i, i + 1
    while j < len(text):
        literal = _string_at(text, j) if text[j] in 'sfr"' else None
        if literal is not None:
            j = literal[1]
            continue
        c = text[j]
        depth += c in "([{"
        depth -= c in ")]}"
        if (depth == 1 and c == ",") or depth == 0:
            args.append(text[start:j].strip())
            start = j + 1
        j += 1
        if depth == 0:
            break
    return [a for a in args if a], j


def _string_at(text: str, i: int) -> tuple[str, int] | None:
    """A string literal starting at i (plain, s/f/raw-interpolated, triple-quoted) as a marked message
    (a hole where it interpolates), and where it ends."""
    m = re.compile(r'(s|f|raw)?("""|")').match(text, i)
    if m is None or (m.group(1) and i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_")):
        return None
    interpolated, quote = m.group(1) is not None, m.group(2)
    j, out = m.end(), ""
    while j < len(text):
        if text.startswith(quote, j):
            j += len(quote)
            break
        c = text[j]
        if quote == '"' and c == "\\" and j + 1 < len(text):
            out += {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}.get(text[j + 1], text[j + 1])
            j += 2
        elif interpolated and c == "$" and text.startswith("$$", j):
            out += "$"
            j += 2
        elif interpolated and c == "$" and j + 1 < len(text) and text[j + 1] == "{":
            depth, start = 0, j + 2
            j += 1
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
            out += _hole(text[start : j - 1])
        elif (
            interpolated and c == "$" and j + 1 < len(text) and (text[j + 1].isalpha() or text[j + 1] == "_")
        ):
            start = j = j + 1
            while j < len(text) and (text[j].isalnum() or text[j] == "_"):
                j += 1
            out += _hole(text[start:j])
        else:
            out += c
            j += 1
    if m.group(1) == "f":  # f"$x%.2f": the specifier formats the hole before it
        return _split_format(re.sub(CLOSE + _FORMAT.pattern, CLOSE, out)), j
    return out, j
