"""Facts kept as JSON and read back by their type hints (`analysis/facts_json.py`), without Spark: what the
golden facts are written and read with."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import NamedTuple

import pytest

from workbench.analysis.facts_json import dumped, loaded, returned
from workbench.analysis.registry import ANALYSES


class Spot(NamedTuple):
    topic: str
    partition: int


@dataclass(frozen=True)
class Inner:
    at: datetime
    spots: list[Spot]
    ratio: float = 0.0


@dataclass
class Outer:
    by_broker: dict[int, Inner]
    by_key: dict[tuple[int, datetime], str]
    names: dict[str, list[int]]
    refs: tuple[str, ...]
    pair: tuple[int, int | None]
    live: frozenset[int]
    seen: set[str] = field(default_factory=set)
    previous: Outer | None = None


def test_facts_come_back_as_they_were_through_json() -> None:
    naive, aware = datetime(2024, 3, 12, 9, 30, 0, 123000), datetime(2024, 3, 12, 9, 30, tzinfo=timezone.utc)
    first = Outer({}, {}, {}, (), (1, None), frozenset())
    facts = Outer(
        {3: Inner(naive, [Spot("orders", 0), Spot("orders", 2)], 1)},
        {(1, aware): "expired", (2, naive): "closed"},
        {"orders": [0, 2]},
        ("zk:txn@0x1b", "broker-1:logs/controller.log:12"),
        (7, None),
        frozenset({3, 1}),
        {"b", "a"},
        first,
    )
    text = json.dumps(dumped(facts), sort_keys=True)
    back = loaded(Outer, json.loads(text))
    assert back == facts and back.by_broker[3].ratio == 1.0 and isinstance(back.by_broker[3].ratio, float)
    assert isinstance(back.by_broker[3].spots[0], Spot) and isinstance(back.live, frozenset)
    assert next(iter(back.by_key)) == (1, aware) and isinstance(back.refs, tuple)
    assert json.loads(text)["live"] == [1, 3]  # a set is written sorted: the same facts, the same file


def test_a_fact_of_an_unknown_type_is_refused_naming_it() -> None:
    with pytest.raises(TypeError, match="a fact of type object cannot be kept"):
        dumped({"x": object()})
    with pytest.raises(TypeError, match="'3' is not a <class 'int'>"):
        loaded(Inner, {"at": "2024-03-12T09:30:00", "spots": [{"topic": "t", "partition": "3"}]})


def test_every_analysis_names_the_type_of_its_facts() -> None:
    for a in ANALYSES:
        assert returned(a.facts) is not None, a.name
