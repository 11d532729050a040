"""Every catalog template, filled with sample values, is typed as itself by the loader's typing (Arrow,
RE2), fields included."""

from __future__ import annotations

import re

import pyarrow as pa

from workbench.kafka.messages import CATALOG, KINDS
from workbench.kafka.templates import FIELD_PATTERNS
from workbench.sources.catalog import type_batch

SAMPLES = {
    "tp": "orders-3",
    "topic": "orders",
    "session": "0x1000118eb9b0002",
    "topic_id": "3hQ0cH2eRw2vN1yQ",
    "ratio": "0.07",
}


def _sample(name: str) -> str:
    if name in SAMPLES:
        return SAMPLES[name]
    pattern = FIELD_PATTERNS.get(name, "")
    if pattern.startswith("-?\\d"):
        return "7"
    if "[-\\d,]" in pattern:
        return "1,2"
    return "some value"


def _message(text: str) -> str:
    return re.sub(r"\{([a-z_]+)\}", lambda m: "x" if m.group(1) == "_" else _sample(m.group(1)), text)


def test_every_template_types_as_itself() -> None:
    logger = pa.array([t.loggers[0] if t.loggers else None for t in CATALOG], pa.string())
    message = pa.array([_message(t.text) for t in CATALOG])
    nothing = pa.nulls(len(CATALOG), pa.string())
    typed = type_batch(logger, message, nothing, nothing)
    events, attrs = typed.event.to_pylist(), typed.attrs.to_pylist()
    topics, partitions = typed.topic.to_pylist(), typed.partition.to_pylist()
    wrong = []
    for i, t in enumerate(CATALOG):
        want = {k: _sample(k) for k in t.fields if k not in ("topic", "partition")}
        want.update(t.consts)
        if events[i] != t.kind or dict(attrs[i]) != want:
            wrong.append((t.kind, t.text, events[i], attrs[i]))
        if "tp" in t.text and (topics[i], partitions[i]) != ("orders", 3):
            wrong.append((t.kind, t.text, topics[i], partitions[i]))
    assert not wrong, "\n".join(map(str, wrong))


def test_catalog_is_cited_and_named() -> None:
    for t in CATALOG:
        assert re.fullmatch(r"[a-z_]+(\.[a-z_]+)+", t.kind), t.kind
        assert re.search(r"\.(scala|java)\b", t.source) and re.search(r"\d", t.source), t.source
        assert t.literal.strip(), t.text
    assert len(KINDS) > 100
