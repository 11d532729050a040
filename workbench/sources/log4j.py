"""Kafka's log4j layout on Arrow batches: chunks of a log file -> events, and lines that are no event's.

Kafka's layout is `[%d] %p %m (%c)%n` (its patterns: log4j_lines.py). An event is a
header line, then the lines that continue its message until one ends with `(logger)` (KafkaZkClient's
"Stat of the created znode ..." ends with a newline, so its logger lands on the next line), then any
throwable log4j prints after it. Anything else is quarantined with a reason.

Spark reads each file in *chunks*: its text reader splits at the separator `\\n[` (`\\nname | [` for a
`docker compose logs` file; `\\n` where a container runtime or collector puts a varying prefix before
every line, taken off first: layouts.py), so a chunk is a header line with its continuation lines, and a
split of a large file never cuts an event. Everything here is vectorised over a whole batch (numpy, and
Arrow's RE2 kernels); a partition's batches come in file order, so line numbers are a running count,
carried from batch to batch, plus the lines of the file's earlier splits (`offsets`, counted beforehand).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import unquote

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from workbench import schemas
from workbench.sources import layouts
from workbench.sources.catalog import type_batch
from workbench.sources.log4j_lines import (
    BROKEN_HEADER,
    CONTEXT,
    CONTROL_CHARS,
    EXCEPTION_LINE,
    HEAD,
    LOGGER,
    LOGGER_AT_END,
    NO_EVENT,
    OWN_ID,
    REASONS,
    SPLIT_ORPHAN,
    TRACE_LINE,
)

# In a parse's `offsets`, (path, LAST_SPLIT) holds the start of the file's last split that has chunks.
LAST_SPLIT = -1
CHUNKS = "value string, path string, block long, block_length long"  # path: Spark's _metadata.file_path
EVENTS = (
    "broker_id int, file string, log string, line_no long, lines int, ts_raw string, level string, "
    "logger string, context string, message string, event string, topic string, partition int, "
    "attrs map<string,string>, stack_trace string"
)
# What the parser yields: events, and the lines that are no event's (reason and raw set, the rest null
# but for the file and line_no), in one frame so that the logs are parsed once for both.
PARSED = EVENTS + ", reason string, raw string"


@dataclass(frozen=True)
class FileInfo:
    """What the parser needs to know of each file Spark reads, by its path."""

    file: str
    broker_id: int | None
    log: str
    size: int
    reopen: str  # what the separator took from the start of every chunk but the file's first: '['
    wrap: str = ""  # what wraps each of its lines (layouts.Layout.wrap), '' for nothing


class _SparkPaths(dict[str, FileInfo]):
    """FileInfo by Spark's `_metadata.file_path` ('file:/a%20b/c'): decoded once per file here rather
    than on every chunk in Spark."""

    def __init__(self, by_local_path: dict[str, FileInfo]) -> None:
        super().__init__()
        self.by_local_path = by_local_path

    def __missing__(self, file_path: str) -> FileInfo:
        info = self.by_local_path[unquote(file_path.removeprefix("file:"))]
        self[file_path] = info
        return info


@dataclass
class _Split:
    """Where this partition's previous slice stopped: its split and the next line's number."""

    key: tuple[str, int] | None = None
    next_line: int = 1


def parse(
    batches: Iterator[pa.RecordBatch],
    files: dict[str, FileInfo],
    offsets: dict[tuple[str, int], int],
) -> Iterator[pa.RecordBatch]:
    """mapInArrow body: chunks (CHUNKS, in file order) -> events and bad lines (PARSED).

    The chunks from the last one that opens an event to the end of a batch wait for the next batch,
    which may continue that event and tells whether the last chunk ends its split."""
    files = _SparkPaths(files)
    state, waiting = _Split(), None
    for batch in batches:
        table = pa.Table.from_batches([batch])
        chunks = table if waiting is None else pa.concat_tables([waiting, table])
        chunks = chunks.combine_chunks()
        text, first = _reopened(chunks, files, state)
        opens = first | _test(text, HEAD) | _test(text, r"^\{")  # a JSON layout's chunk is one record
        cut = int(np.flatnonzero(opens)[-1]) if opens.any() else 0
        waiting = chunks.slice(cut)
        if cut > 0:
            done = chunks.slice(0, cut)
            yield from _parse(done, text.slice(0, cut), first[: cut + 1], files, offsets, state)
    if waiting is not None and waiting.num_rows:
        text, first = _reopened(waiting, files, state)
        yield from _parse(waiting, text, np.append(first, True), files, offsets, state)


def _reopened(chunks: pa.Table, files: dict[str, FileInfo], state: _Split) -> tuple[pa.Array, np.ndarray]:
    """Each chunk's text with what the separator took back in front (except at a file's start), and
    whether the chunk is the first of its split in this partition."""
    paths = pc.dictionary_encode(chunks["path"].combine_chunks())
    codes, block = paths.indices.to_numpy(zero_copy_only=False), chunks["block"].to_numpy()
    first = np.ones(len(codes), dtype=bool)
    first[1:] = (codes[1:] != codes[:-1]) | (block[1:] != block[:-1])
    if len(codes) and state.key is not None:
        first[0] = (paths.dictionary[codes[0]].as_py(), int(block[0])) != state.key
    known = [files[p] for p in paths.dictionary.to_pylist()]
    reopen = pa.array([f.reopen for f in known], pa.string())
    lead = pc.if_else(pa.array(first & (block == 0)), "", reopen.take(pa.array(codes)))
    text = pc.binary_join_element_wise(lead, chunks["value"].combine_chunks(), "")
    prefixed = [f.wrap if f.wrap in layouts.PREFIXES else "" for f in known]  # JSON: in _parse, line by line
    if any(prefixed):
        text = layouts.unwrap(text, pa.array(prefixed, pa.string()).take(pa.array(codes)))
    return text, first


def _by_path(chunks: pa.Table, files: dict[str, FileInfo], attr: str, kind: pa.DataType) -> pa.Array:
    paths = pc.dictionary_encode(chunks["path"].combine_chunks())
    values = pa.array([getattr(files[p], attr) for p in paths.dictionary.to_pylist()], kind)
    return values.take(paths.indices)


def _parse(
    chunks: pa.Table,
    text: pa.Array,
    first: np.ndarray,
    files: dict[str, FileInfo],
    offsets: dict[tuple[str, int], int],
    state: _Split,
) -> Iterator[pa.RecordBatch]:
    """One slice of chunks that starts where an event or split opens. `first` has one more entry than
    there are chunks: whether the chunk after each is the first of its split."""
    block = chunks["block"].to_numpy()
    ends_split = first[1:]
    size = _by_path(chunks, files, "size", pa.int64()).to_numpy()
    paths = pc.dictionary_encode(chunks["path"].combine_chunks())
    lasts = [offsets.get((p, LAST_SPLIT), -1) for p in paths.dictionary.to_pylist()]
    last_split = np.asarray(lasts, dtype=np.int64)[paths.indices.to_numpy(zero_copy_only=False)]
    ends_file = ends_split & ((block + chunks["block_length"].to_numpy() >= size) | (block == last_split))
    # The chunk's last line terminator is the file's own at its end, and a CR before the separator's LF.
    split = _lines(text)
    chunk_of = pc.list_parent_indices(split).to_numpy()
    line = split.flatten()
    drop = np.where(ends_file, _test(text, r"[\r\n]$"), np.asarray(pc.ends_with(text, "\r")))
    if drop.any():
        last = np.cumsum(pc.list_value_length(split).to_numpy()) - 1
        keep = np.ones(len(line), dtype=bool)
        keep[last[drop]] = False
        line, chunk_of = line.filter(pa.array(keep)), chunk_of[keep]
    wraps = _by_path(chunks, files, "wrap", pa.string())
    if pc.any(pc.not_equal(wraps, "")).as_py():
        line = layouts.unwrap(line, wraps.take(pa.array(chunk_of)))
    n = len(line)
    line_no = _line_numbers(chunks, first[:-1], chunk_of, files, offsets, state)

    is_header = _test(line, HEAD)
    opens = is_header.copy()
    starts_split = np.zeros(n, dtype=bool)
    chunk_start = np.flatnonzero(np.diff(chunk_of, prepend=-1) != 0)
    starts_split[chunk_start] = first[:-1][chunk_of[chunk_start]]
    opens |= starts_split
    opens[:1] = True
    group = np.cumsum(opens) - 1
    head = np.flatnonzero(opens)
    has_header = is_header[head]
    follows = ~opens  # lines after the first of their group
    part, reason = _classify(line, group, head, has_header, follows, block[chunk_of[head]] > 0)

    bad = np.flatnonzero(reason >= 0)
    if len(bad):
        names = pa.array([*REASONS, NO_EVENT, SPLIT_ORPHAN], pa.string())
        owner = pa.array(chunk_of[bad])
        yield _batch(
            len(bad),
            broker_id=_by_path(chunks, files, "broker_id", pa.int32()).take(owner),
            file=_by_path(chunks, files, "file", pa.string()).take(owner),
            log=_by_path(chunks, files, "log", pa.string()).take(owner),
            line_no=pa.array(line_no[bad], pa.int64()),
            reason=names.take(pa.array(reason[bad])),
            raw=pc.utf8_slice_codeunits(line.take(pa.array(bad)), 0, schemas.RAW_CUT),
        )
    heads = head[has_header]
    if len(heads):
        yield _events(chunks, files, line, line_no, chunk_of, group, heads, part)


_ARROW = {
    "int": pa.int32(),
    "long": pa.int64(),
    "string": pa.string(),
    "map<string,string>": pa.map_(pa.string(), pa.string()),
}
_PARSED_TYPES = [(name, _ARROW[kind]) for name, kind in (f.split() for f in PARSED.split(", "))]


def _batch(n: int, **columns: pa.Array) -> pa.RecordBatch:
    """A PARSED batch of n rows with these columns, null in the others."""
    return pa.RecordBatch.from_arrays(
        [columns.get(name, pa.nulls(n, kind)) for name, kind in _PARSED_TYPES],
        names=[name for name, _ in _PARSED_TYPES],
    )


def _lines(text: pa.Array) -> pa.ListArray:
    """Each chunk's physical lines, split where Spark's line reader ends a line: '\\r\\n', '\\r', '\\n'."""
    if b"\r" in (text.buffers()[2] or pa.py_buffer(b"")).to_pybytes():
        return pc.split_pattern_regex(text, r"\r\n|\r|\n")
    return pc.split_pattern(text, "\n")


def _test(values: pa.Array, pattern: str) -> np.ndarray:
    return np.asarray(pc.fill_null(pc.match_substring_regex(values, pattern), False))


def _line_numbers(
    chunks: pa.Table,
    first: np.ndarray,
    chunk_of: np.ndarray,
    files: dict[str, FileInfo],
    offsets: dict[tuple[str, int], int],
    state: _Split,
) -> np.ndarray:
    """1-based line number in its file of every line: a running count within each split, which starts
    at the lines of the file's earlier splits (or goes on from the previous slice)."""
    n_chunks = chunks.num_rows
    block = chunks["block"].to_numpy()
    per_chunk = np.bincount(chunk_of, minlength=n_chunks)
    chunk_start = np.concatenate([[0], np.cumsum(per_chunk)[:-1]])
    starts = np.flatnonzero(first)
    bases = [state.next_line] if not first[0] else []
    for c in starts:
        path, at = chunks["path"][int(c)].as_py(), int(block[c])
        if at == 0:
            bases.append(1)
        elif (path, at) in offsets:
            bases.append(offsets[path, at] + 1)
        else:
            raise ValueError(
                f"{files[path].file}: Spark split it at byte {at}, but its lines before that byte were "
                "not counted (workbench.sources.logs.split_offsets did not expect this split)"
            )
    if not first[0]:
        starts = np.concatenate([[0], starts])
    seg = np.searchsorted(starts, np.arange(n_chunks), side="right") - 1
    first_line = chunk_start[starts]
    line_seg = seg[chunk_of]
    numbers = np.asarray(bases, dtype=np.int64)[line_seg] + (np.arange(len(chunk_of)) - first_line[line_seg])
    state.key = (chunks["path"][n_chunks - 1].as_py(), int(block[-1]))
    state.next_line = int(numbers[-1]) + 1
    return numbers


def _classify(
    line: pa.Array,
    group: np.ndarray,
    head: np.ndarray,
    has_header: np.ndarray,
    follows: np.ndarray,
    later_split: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Per line: its part (0 header, 1 message, 2 trace) and its reason to be quarantined (an index
    into REASONS + [NO_EVENT, SPLIT_ORPHAN], -1 if it is not)."""
    n = len(line)
    part, reason = np.zeros(n, dtype=np.int8), np.full(n, -1, dtype=np.int8)
    headerless = ~has_header[group]
    size = np.bincount(group, minlength=len(head))
    long = (size > 1)[group] & ~headerless
    look = np.flatnonzero(follows | headerless | long)
    if not len(look):
        return part, reason
    sub = line.take(pa.array(look))
    odd = pc.count_substring(sub, "\ufffd").to_numpy(zero_copy_only=False) * 4
    binary = _test(sub, CONTROL_CHARS) | (odd > pc.utf8_length(sub).to_numpy(zero_copy_only=False))
    broken = _test(sub, BROKEN_HEADER)
    ends = np.zeros(n, dtype=np.int64)
    throws = np.zeros(n, dtype=np.int64)
    ends[look] = _test(sub, LOGGER_AT_END)
    throws[look] = _test(sub, EXCEPTION_LINE)
    trace_shaped = throws[look].astype(bool) | _test(sub, TRACE_LINE)
    empty = np.asarray(pc.equal(pc.utf8_trim(sub, characters=" "), ""))

    def before(flags: np.ndarray) -> np.ndarray:
        """Whether any earlier line of the same group has the flag."""
        prior = np.cumsum(flags) - flags
        return (prior - prior[head[group]]) > 0

    closed = before(ends)[look]
    in_trace = before(throws)[look]
    orphan = headerless[look]
    mine = np.full(len(look), -1, dtype=np.int8)
    mine[orphan] = np.where(later_split[group[look[orphan]]], 4, 3)
    mine[~orphan & closed & ~empty & ~trace_shaped & ~in_trace] = 2
    mine[broken & (orphan | follows[look])] = 1
    mine[binary & (orphan | follows[look])] = 0
    reason[look] = mine
    is_follow = follows[look] & ~orphan
    part[look[is_follow]] = np.where(closed[is_follow], 2, 1)
    part[reason >= 0] = -1
    return part, reason


def _joined(line: pa.Array, rows: np.ndarray, owner: np.ndarray, n: int) -> tuple[pa.Array, np.ndarray]:
    """The given lines joined with '\\n' per owner (rows in order; null for none), and how many each
    owner has."""
    count = np.bincount(owner, minlength=n)
    offsets = np.concatenate([[0], np.cumsum(count)]).astype(np.int32)
    lines = line.take(pa.array(rows, pa.int64()))
    lists = pa.ListArray.from_arrays(pa.array(offsets), lines, mask=pa.array(count == 0))
    return pc.binary_join(lists, "\n"), count


def own_id(context: pa.Array) -> pa.Array:
    """The logging broker's id where its context names it (OWN_ID): a line of a folder several brokers
    write to is its writer's, whatever folder it was found in."""
    return pc.cast(pc.struct_field(pc.extract_regex(pc.fill_null(context, ""), OWN_ID), "id"), pa.int32())


def _element_or_null(lists: pa.Array, i: int) -> pa.Array:
    return pc.list_slice(lists, i, i + 1, return_fixed_size_list=True).flatten()


def _matched(group: pa.Array) -> pa.Array:
    """A group of an `extract_regex` match: '' where it took no part, made null."""
    return pc.if_else(pc.equal(group, ""), pa.scalar(None, pa.string()), group)


def _events(
    chunks: pa.Table,
    files: dict[str, FileInfo],
    line: pa.Array,
    line_no: np.ndarray,
    chunk_of: np.ndarray,
    group: np.ndarray,
    heads: np.ndarray,
    part: np.ndarray,
) -> pa.RecordBatch:
    """One row per event: the header's fields, the message with its continuation lines, the logger,
    the context, the stack trace, and what the catalog makes of it."""
    n = len(heads)
    event_of_group = np.full(group[-1] + 1, -1, dtype=np.int64)
    event_of_group[group[heads]] = np.arange(n)
    first = line.take(pa.array(heads))
    header = pc.extract_regex(first, HEAD)
    rest = pc.replace_substring_regex(first, HEAD, "", max_replacements=1)
    message_rows = np.flatnonzero(part == 1)
    trace_rows = np.flatnonzero(part == 2)
    more, n_more = _joined(line, message_rows, event_of_group[group[message_rows]], n)
    trace, n_trace = _joined(line, trace_rows, event_of_group[group[trace_rows]], n)
    full = pc.binary_join_element_wise(rest, more, "\n", null_handling="skip")
    wraps = {f.wrap for f in files.values()}
    if "cri" in wraps:
        full = layouts.join_cut(full)
    # The logger follows the last ' (' (a logger's name has none).
    parts = pc.split_pattern(full, " (", max_splits=1, reverse=True)
    after = pc.list_slice(parts, 1, 2, return_fixed_size_list=True).flatten()
    # null where no logger closes the event (a struct's field ignores the struct's own nulls: '' there)
    logger = _matched(pc.extract_regex(after, LOGGER).field("logger"))
    if logger.null_count < len(logger):
        cut = pc.list_element(parts, 0)
        full = cut if logger.null_count == 0 else pc.if_else(pc.is_null(logger), full, cut)
    stack = None
    if "json" in wraps:  # a JSON record's stack trace, before its logger
        parts = pc.split_pattern(full, layouts.STACK, max_splits=1)
        full, stack = pc.list_element(parts, 0), _element_or_null(parts, 1)
        trace = pc.coalesce(trace, stack)
    body = pc.utf8_rtrim(full, characters=" ")
    found = pc.extract_regex(body, CONTEXT)  # '[] text' has none
    context = pc.coalesce(_matched(found.field("bracketed")), _matched(found.field("bare")))
    message = body
    if context.null_count < len(context):
        message = pc.replace_substring_regex(body, CONTEXT, "", max_replacements=1)
    throws = trace_rows[_test(line.take(pa.array(trace_rows, pa.int64())), EXCEPTION_LINE)]
    owners, first_throw = np.unique(event_of_group[group[throws]], return_index=True)
    at = np.full(n, -1, dtype=np.int64)
    at[owners] = throws[first_throw]
    exception = line.take(pa.array(at, mask=at < 0))
    if stack is not None:
        exception = pc.coalesce(exception, pc.list_element(pc.split_pattern(stack, "\n", max_splits=1), 0))
    level = header.field("level")
    typed = type_batch(logger, message, context, exception)
    owner_chunk = pa.array(chunk_of[heads])
    return _batch(
        n,
        broker_id=pc.coalesce(
            own_id(context), _by_path(chunks, files, "broker_id", pa.int32()).take(owner_chunk)
        ),
        file=_by_path(chunks, files, "file", pa.string()).take(owner_chunk),
        log=_by_path(chunks, files, "log", pa.string()).take(owner_chunk),
        line_no=pa.array(line_no[heads], pa.int64()),
        lines=pa.array(1 + n_more + n_trace, pa.int32()),
        ts_raw=header.field("ts"),
        level=pc.if_else(pc.equal(level, "WARNING"), "WARN", level),
        logger=logger,
        context=context,
        message=message,
        event=typed.event,
        topic=typed.topic,
        partition=typed.partition,
        attrs=typed.attrs,
        stack_trace=trace,
    )
