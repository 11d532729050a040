"""Queries asked together: what an answer needs from Spark, asked in one job.

Each Spark job is scheduled on its own, tens of milliseconds whatever the size of its data, and a job per
question took a triage of a small bundle to 80 jobs (bench/README.md). So a model or an analysis says what
it wants as `Ask`s (a query and how its rows are read) and asks them `together`: each query is a branch
of one union, its rows tagged with the branch, so that Spark runs them side by side in one job and each
comes back as its own rows, in its own order and types. An answer that builds on another's rows is
asked after it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pyspark.sql import DataFrame, Row
from pyspark.sql import functions as F

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


@dataclass(eq=False, frozen=True)
class Ask(Generic[T_co]):
    """A query and how its rows are read (`together`); a frame of None has no rows."""

    frame: DataFrame | None
    read: Callable[[list[Row]], T_co]


class Joined(Ask[T]):
    """An answer made of several asks' answers, `read` given them in order."""

    def __init__(self, read: Callable[..., T], *parts: Ask[Any]) -> None:
        super().__init__(None, read)
        object.__setattr__(self, "parts", parts)

    parts: tuple[Ask[Any], ...]


class Answers:
    """What `together` found: `answers[ask]` is `ask.read` of its rows."""

    def __init__(self, rows: dict[Ask[Any], list[Row]]) -> None:
        self.rows = rows

    def __getitem__(self, ask: Ask[T]) -> T:
        if isinstance(ask, Joined):
            return ask.read(*(self[p] for p in ask.parts))
        return ask.read(self.rows[ask])


def _leaves(asks: tuple[Ask[Any], ...]) -> list[Ask[Any]]:
    return [leaf for a in asks for leaf in (_leaves(a.parts) if isinstance(a, Joined) else [a])]


def together(*asks: Ask[Any]) -> Answers:
    """The asks' answers, their queries in one Spark job: each frame a branch of one union, tagged with
    its position, its columns one struct (null in the other branches)."""
    leaves = list(dict.fromkeys(_leaves(asks)))  # an ask given twice (alone and in a Joined) is asked once
    rows: dict[Ask[Any], list[Row]] = {a: [] for a in leaves}
    asked = [(a, a.frame) for a in leaves if a.frame is not None]
    branches = [  # struct("*"): every column as the frame has it (a name twice, a dot in a name)
        frame.select(F.lit(i).alias("_q"), F.struct(F.col("*")).alias(f"_{i}"))
        for i, (_, frame) in enumerate(asked)
    ]
    if branches:
        union = functools.reduce(lambda x, y: x.unionByName(y, allowMissingColumns=True), branches)
        for r in union.collect():
            rows[asked[r._q][0]].append(r[f"_{r._q}"])
    return Answers(rows)


def given(value: T) -> Ask[T]:
    """An answer known without asking (where the evidence to ask of is absent)."""
    return Ask(None, lambda _: value)


def answer(ask: Ask[T]) -> T:
    """One ask's answer (its own job)."""
    return together(ask)[ask]


def rows(frame: DataFrame | None) -> Ask[list[Row]]:
    """Its rows as they are."""
    return Ask(frame, list)


def count(frame: DataFrame | None) -> Ask[int]:
    """How many rows it has (0 for None)."""
    return Ask(
        None if frame is None else frame.agg(F.count("*").alias("n")), lambda rs: int(rs[0].n) if rs else 0
    )
