"""The log calls in Kafka's (and ZooKeeper's) source, read without running it: for each call its logger,
level and message, the message kept as its literal fragments with a hole between each two where the
source interpolates a value (`s"...$x..."`, `"..." + x`, `"%d".format(x)`, `("..." + "...").format(x)`,
Java's `{}`), and what it interpolates there. A message passed by name is read where it is written: a val
of the method, or what the file's own calls pass for a parameter (`info(message)`); one passed from another
file stays without text of its own (`Call.dynamic`). Our reading of the source, not its code;
messages/listing.py runs it over every release line.
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
        for message in _resolved(text, m.start(), marked, java):
            fragments, holes = _unmark(message)
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
        if c == "(" and depth == 0 and not expr.strip() and _string_at(text, _after_space(text, i + 1)):
            # ("..." + "...").format(x): the parenthesised message is one piece, formatted as a whole
            inner = _first_argument(text, i + 1, java=False)
            pieces.append(inner if inner is not None else _hole(""))
            i = _arguments(text, i)[1]
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


def _after_space(text: str, i: int) -> int:
    while i < len(text) and text[i].isspace():
        i += 1
    return i


def _resolved(text: str, at: int, marked: str, java: bool) -> list[str]:
    """A message passed by name (`info(message)`, the call at `at`): the value of the val of that name in
    the method around the call, else what the file's own calls of that method pass for the parameter of
    that name (one message each); the marked message itself where neither says (a value from another
    file, a method's result)."""
    fragments, holes = _unmark(marked)
    if "".join(fragments).strip() or len(holes) != 1 or not _IDENT.fullmatch(holes[0]):
        return [marked]
    name, (method, start) = holes[0], _method(text, at, java)
    declared = [*re.finditer(rf"\b(?:val|var|String)\s+{name}\s*(?::\s*String\s*)?=(?!=)\s*", text[start:at])]
    if declared:
        value_at = start + declared[-1].end()
        values = [text[value_at : _statement_end(text, value_at, at)]]
    else:
        values = _passed(text, method, start, name)
    found = [v for v in (_first_argument(f"{value})", 0, java=False) for value in values) if v]
    return list(dict.fromkeys(v for v in found if "".join(_unmark(v)[0]).strip())) or [marked]


_IDENT = re.compile(r"[A-Za-z_]\w*")
_SCALA_DEF = re.compile(r"\bdef\s+(\w+)\s*(?:\[[^\]]*\])?\s*(?=\()")
_JAVA_METHOD = re.compile(
    r"^[ \t]*(?:(?:public|private|protected|static|final|synchronized)\s+)+[\w<>\[\],.? ]+?\s+(\w+)\s*(?=\()",
    re.M,
)


def _method(text: str, at: int, java: bool) -> tuple[str, int]:
    """The name of the method whose body holds position `at`, and where its declaration starts (the last
    declared before it: a nested method's)."""
    declared = [*(_JAVA_METHOD if java else _SCALA_DEF).finditer(text, 0, at)]
    return (declared[-1].group(1), declared[-1].start()) if declared else ("", 0)


def _passed(text: str, method: str, start: int, name: str) -> list[str]:
    """What the file's calls of `method` (declared at `start`) pass for its parameter `name`."""
    paren = text.find("(", start)
    params, _ = _arguments(text, paren)
    words = [re.findall(r"\w+", p.split(":")[0].split("=")[0]) for p in params]
    index = next((i for i, w in enumerate(words) if w and w[-1] == name), None)
    if not method or index is None:
        return []
    passed, declaration = [], text.find(method, start)
    for call in re.finditer(rf"(?<![\w$]){method}\s*\(", text):
        if call.start() == declaration:
            continue
        args, _ = _arguments(text, call.end() - 1)
        named = [a.split("=", 1)[1] for a in args if re.match(rf"{name}\s*=(?!=)", a)]
        positional = [a for a in args if not re.match(r"\w+\s*=(?!=)", a)]
        passed += named or positional[index : index + 1]
    return passed


def _statement_end(text: str, i: int, limit: int) -> int:
    """Where the statement from i ends (before `limit`): a line break outside brackets, unless the line ends
    with an operator or the next begins with one; or a semicolon."""
    depth = 0
    while i < limit:
        literal = _string_at(text, i) if text[i] in 'sfr"' else None
        if literal is not None:
            i = literal[1]
            continue
        c = text[i]
        depth += c in "([{"
        depth -= c in ")]}"
        if depth == 0 and (c == ";" or c == "\n"):
            before, after = text[max(0, i - 200) : i].rstrip(), text[_after_space(text, i) :][:1]
            if c == ";" or not (before.endswith(("+", "(", ",", ".", "=")) or after.startswith(("+", "."))):
                return i
        i += 1
    return limit


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
