"""Type log events with the catalog of Kafka's messages, on Arrow arrays (vectorised, RE2).

For each event the first template whose loggers, literal text and regex all match wins; only the
templates of the event's logger are tried (all of them when the logger is unknown), each first by its
literal text (a plain substring search) and only then by its regex, one template at a time over every
event of that logger in the batch. The winner's fields come from one `extract_regex` per template.
`topic` and `partition` become columns, the other fields and the template's constants go to `attrs`.
Events about a partition's log (`[Log partition=t-0, ...]`) or a Partition object
(`[Partition t-0 broker=1]`, `Partition [t,0] on broker 1`) get their topic-partition from the context.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from workbench.kafka.messages import CATALOG
from workbench.kafka.templates import Template

CONTEXT_TP = (
    r"(?:^Partition |partition=)(?P<topic>[A-Za-z0-9._-]+)-(?P<partition>\d+)(?:,| broker=|$)"
    r"|^Partition \[(?P<topic2>[A-Za-z0-9._-]+),(?P<partition2>\d+)\]"
)
REPLICA_TOPIC = r"Topic=(?P<topic>[A-Za-z0-9._-]+),Partition=\d+"
ONE_TOPIC = r"^(?:Set|HashSet|List|ArrayBuffer)?\((?P<topic>[A-Za-z0-9._-]+)\)$|^(?P<bare>[A-Za-z0-9._-]+)$"
# A TopicPartition as Kafka prints it (`t-0`, 0.10's `[t,0]`), in a field of a template made from source.
ONE_TP = r"^\[?(?P<topic>[A-Za-z0-9._-]+?)(?:-|,)(?P<partition>\d+)\]?$"
INT = r"^-?\d{1,9}$"
FIRST_WORD = re.compile(r"([^\s{]+)(?:\s|$)")  # a template's opening word, if no field is in it
TEMPLATES = tuple(CATALOG)


@dataclass(frozen=True)
class Typed:
    """What typing adds to a batch of events."""

    event: pa.Array
    topic: pa.Array
    partition: pa.Array
    attrs: pa.Array


@dataclass(frozen=True)
class _Index:
    """Which templates an event may match, by its logger and then by its message's first word."""

    catalog: tuple[Template, ...]
    by_logger: dict[str | None, list[int]]
    free: list[int]  # templates of any logger
    first_word: list[str | None]  # None: the template does not open with a fixed word

    def candidates(self, logger: str | None, word: str) -> list[int]:
        return [
            i
            for i in self.by_logger.get(logger, self.free)
            if self.first_word[i] is None or self.first_word[i] == word
        ]


_INDEXES: dict[int, _Index] = {}


def _index(catalog: tuple[Template, ...]) -> _Index:
    """Templates with no logger apply to every logger; an event with no logger tries them all."""
    known = _INDEXES.get(id(catalog))
    if known is not None and known.catalog is catalog:
        return known
    free = [i for i, t in enumerate(catalog) if not t.loggers]
    by_logger: dict[str | None, list[int]] = {None: list(range(len(catalog)))}
    for i, tmpl in enumerate(catalog):
        for name in tmpl.loggers:
            by_logger.setdefault(name, list(free)).append(i)
    words = [m.group(1) if (m := FIRST_WORD.match(t.text)) else None for t in catalog]
    index = _Index(catalog, {k: sorted(v) for k, v in by_logger.items()}, free, words)
    _INDEXES[id(catalog)] = index
    return index


Match = tuple[int, np.ndarray, pa.StructArray | None]  # template, rows, their fields


def _match(
    message: pa.Array, logger: pa.Array, catalog: tuple[Template, ...]
) -> tuple[np.ndarray, list[Match]]:
    """Position of the winning template per event (-1 where none matches), and the fields of each
    template's events. Events are grouped by logger and first word; each group tries its candidates in
    catalog order, the literal text first, the regex (with its fields) only where that is there."""
    index = _index(catalog)
    which = np.full(len(message), -1, dtype=np.int64)
    loggers = pc.dictionary_encode(logger)
    words = pc.dictionary_encode(pc.list_element(pc.utf8_split_whitespace(message, max_splits=1), 0))
    logger_code = pc.fill_null(loggers.indices, -1).to_numpy(zero_copy_only=False).astype(np.int64)
    word_code = pc.fill_null(words.indices, -1).to_numpy(zero_copy_only=False).astype(np.int64)
    names = loggers.dictionary.to_pylist()
    word_names = words.dictionary.to_pylist()
    groups, first, inverse = np.unique(
        (logger_code + 1) * (len(word_names) + 1) + word_code + 1, return_index=True, return_inverse=True
    )
    order = np.argsort(inverse, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(np.bincount(inverse, minlength=len(groups)))])
    found: list[Match] = []
    for g, row in enumerate(first):
        rows = order[bounds[g] : bounds[g + 1]]
        name = names[logger_code[row]] if logger_code[row] >= 0 else None
        word = word_names[word_code[row]] if word_code[row] >= 0 else ""
        for i in index.candidates(name, word):
            tmpl = catalog[i]
            text = message.take(rows)
            hit = np.asarray(pc.fill_null(pc.match_substring(text, tmpl.literal), False))
            if not hit.any():
                continue
            near, text = rows[hit], text.filter(pa.array(hit))
            if tmpl.fields:
                fields = pc.extract_regex(text, tmpl.re2_pattern)
                ok = np.asarray(fields.is_valid())
                fields = fields.filter(pa.array(ok))
            else:
                ok, fields = (
                    np.asarray(pc.fill_null(pc.match_substring_regex(text, tmpl.re2_pattern), False)),
                    None,
                )
            if ok.any():
                which[near[ok]] = i
                found.append((i, near[ok], fields))
                rows = np.setdiff1d(rows, near[ok], assume_unique=True)
                if not len(rows):
                    break
    return which, found


def _scatter(n: int, rows: list[np.ndarray], values: list[pa.Array], kind: pa.DataType) -> pa.Array:
    """An n-long array holding values[k][j] at rows[k][j], null elsewhere."""
    if not rows:
        return pa.nulls(n, kind)
    at = np.full(n, -1, dtype=np.int64)
    joined = np.concatenate(rows)
    at[joined] = np.arange(len(joined))
    return pa.concat_arrays([v.cast(kind) for v in values]).take(pa.array(at, mask=at < 0))


def _repeat(value: str, n: int) -> pa.Array:
    return pa.array([value], pa.string()).take(np.zeros(n, dtype=np.int64))


def _to_int(text: pa.Array) -> pa.Array:
    ok = pc.fill_null(pc.match_substring_regex(text, INT), False)
    return pc.if_else(ok, text, pa.scalar(None, pa.string())).cast(pa.int32())


def type_batch(
    logger: pa.Array,
    message: pa.Array,
    context: pa.Array,
    exception: pa.Array,
    catalog: tuple[Template, ...] = TEMPLATES,
) -> Typed:
    """event, topic, partition and attrs for events given by their logger, message, context and the
    first line of their stack trace."""
    n = len(message)
    which, found = _match(message, logger, catalog)
    topics: list[tuple[np.ndarray, pa.Array]] = []
    partitions: list[tuple[np.ndarray, pa.Array]] = []
    listed: list[tuple[np.ndarray, pa.Array]] = []
    tps: list[tuple[np.ndarray, pa.Array]] = []
    at: list[np.ndarray] = []
    keys: list[pa.Array] = []
    values: list[pa.Array] = []
    for i, rows, got in found:
        tmpl = catalog[i]
        if got is not None:
            for name in tmpl.fields:
                field = got.field(name)
                if name == "topic" and not tmpl.loose:
                    topics.append((rows, field))
                elif name == "partition":
                    partitions.append((rows, field))
                else:
                    if name == "topics" or (name == "topic" and tmpl.loose):
                        listed.append((rows, field))
                    elif name == "topic_partition":
                        tps.append((rows, field))
                    at.append(rows)
                    keys.append(_repeat(name, len(rows)))
                    values.append(field)
        for name, value in sorted(tmpl.consts.items()):
            at.append(rows)
            keys.append(_repeat(name, len(rows)))
            values.append(_repeat(value, len(rows)))
    at.append(np.arange(n))
    keys.append(_repeat("exception", n))
    values.append(exception.cast(pa.string()))
    attrs = _map(n, at, keys, values)

    typed = pa.array(which >= 0)
    kinds = pa.array([t.kind for t in catalog], pa.string())
    event = kinds.take(pa.array(which, mask=which < 0))
    in_context = pc.extract_regex(pc.fill_null(context, ""), CONTEXT_TP)
    replica = pc.extract_regex(message, REPLICA_TOPIC).field("topic")
    one = pc.extract_regex(_scatter(n, *_unzip(listed), pa.string()), ONE_TOPIC)
    one_tp = pc.extract_regex(_scatter(n, *_unzip(tps), pa.string()), ONE_TP)
    topic = pc.coalesce(
        _scatter(n, *_unzip(topics), pa.string()),
        _blank_to_null(in_context.field("topic")),
        _blank_to_null(in_context.field("topic2")),
        pc.if_else(typed, _blank_to_null(replica), pa.scalar(None, pa.string())),
        _blank_to_null(one.field("topic")),
        _blank_to_null(one.field("bare")),
        _blank_to_null(one_tp.field("topic")),
    )
    partition = pc.coalesce(
        _to_int(_scatter(n, *_unzip(partitions), pa.string())),
        _to_int(_blank_to_null(in_context.field("partition"))),
        _to_int(_blank_to_null(in_context.field("partition2"))),
        _to_int(_blank_to_null(one_tp.field("partition"))),
    )
    return Typed(event, topic, partition, attrs)


def _unzip(pairs: list[tuple[np.ndarray, pa.Array]]) -> tuple[list[np.ndarray], list[pa.Array]]:
    return [r for r, _ in pairs], [v for _, v in pairs]


def _blank_to_null(values: pa.Array) -> pa.Array:
    return pc.if_else(pc.equal(values, ""), pa.scalar(None, pa.string()), values)


def _map(n: int, at: list[np.ndarray], keys: list[pa.Array], values: list[pa.Array]) -> pa.Array:
    """map<string,string> per row from (row, key, value) triples; null and empty values left out."""
    rows = np.concatenate(at)
    key, value = pa.concat_arrays(keys), pa.concat_arrays(values)
    keep = np.asarray(pc.fill_null(pc.not_equal(value, ""), False))
    rows, key, value = rows[keep], key.filter(keep), value.filter(keep)
    order = np.argsort(rows, kind="stable")
    offsets = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n))]).astype(np.int32)
    return pa.MapArray.from_arrays(pa.array(offsets), key.take(order), value.take(order))
