"""Every catalog template, filled with sample values, is typed as itself by the loader's typing (Arrow,
RE2), fields included."""

from __future__ import annotations

import re

import pyarrow as pa

from workbench.kafka.messages import CATALOG, KINDS
from workbench.kafka.templates import FIELD_PATTERNS, Template
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


def _sample_of(t: Template, name: str) -> str:
    """A loose template's values are one word each (`v_<field>`), so that two fields with only a space
    between them split where they should; a curated template's are of the field's kind."""
    return f"v_{name}" if t.loose else _sample(name)


def _message(t: Template) -> str:
    return re.sub(
        r"\{([a-z_][a-z0-9_]*)\}", lambda m: "x" if m.group(1) == "_" else _sample_of(t, m.group(1)), t.text
    )


def _adjacent(t: Template) -> bool:
    """Two fields with no text between them: where one ends is anyone's guess."""
    return re.search(r"\}\{", t.text) is not None


def test_every_template_types_as_itself() -> None:
    logger = pa.array([t.loggers[0] if t.loggers else None for t in CATALOG], pa.string())
    message = pa.array([_message(t) for t in CATALOG])
    nothing = pa.nulls(len(CATALOG), pa.string())
    typed = type_batch(logger, message, nothing, nothing)
    events, attrs = typed.event.to_pylist(), typed.attrs.to_pylist()
    topics, partitions = typed.topic.to_pylist(), typed.partition.to_pylist()
    wrong = []
    for i, t in enumerate(CATALOG):
        kept = ("partition",) if t.loose else ("topic", "partition")  # a loose topic is kept as printed
        want = {k: _sample_of(t, k) for k in t.fields if k not in kept}
        want.update(t.consts)
        if events[i] != t.kind or (dict(attrs[i]) != want and not _adjacent(t)):
            wrong.append((t.kind, t.text, events[i], attrs[i]))
        if "{tp}" in t.text and (topics[i], partitions[i]) != ("orders", 3):
            wrong.append((t.kind, t.text, topics[i], partitions[i]))
    assert not wrong, "\n".join(map(str, wrong))


def test_catalog_is_cited_and_named() -> None:
    for t in CATALOG:
        assert re.fullmatch(r"[a-z_]+(\.[a-z0-9_]+)+", t.kind), t.kind
        assert re.search(r"\.(scala|java)\b", t.source) and re.search(r"\d", t.source), t.source
        assert t.literal.strip(), t.text
    assert len(KINDS) > 100
