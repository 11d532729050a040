"""Every catalog template, filled with sample values, is typed as itself by Spark, fields included."""

from __future__ import annotations

import re

from pyspark.sql import SparkSession

from workbench.kafka.messages import CATALOG, KINDS
from workbench.kafka.templates import FIELD_PATTERNS
from workbench.sources.catalog import type_events

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


def test_every_template_types_as_itself(spark: SparkSession) -> None:
    rows = [(i, t.loggers[0] if t.loggers else None, _message(t.text)) for i, t in enumerate(CATALOG)]
    df = spark.createDataFrame(rows, "i int, logger string, message string")
    df = df.selectExpr("*", "cast(null as string) as context", "cast(null as string) as exception")
    typed = {r.i: r for r in type_events(df).collect()}
    wrong = []
    for i, t in enumerate(CATALOG):
        r = typed[i]
        want = {k: _sample(k) for k in t.fields if k not in ("topic", "partition")}
        want.update(t.consts)
        if r.event != t.kind or r.attrs != want:
            wrong.append((t.kind, t.text, r.event, r.attrs))
        if "tp" in t.text and (r.topic, r.partition) != ("orders", 3):
            wrong.append((t.kind, t.text, r.topic, r.partition))
    assert not wrong, "\n".join(map(str, wrong))


def test_catalog_is_cited_and_named() -> None:
    for t in CATALOG:
        assert re.fullmatch(r"[a-z_]+(\.[a-z_]+)+", t.kind), t.kind
        assert re.search(r"\.(scala|java)\b", t.source) and re.search(r"\d", t.source), t.source
        assert t.literal.strip(), t.text
    assert len(KINDS) > 100
