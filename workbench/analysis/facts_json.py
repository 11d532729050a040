"""An analysis's facts as JSON and back, read by their type hints: what `facts` asked of Spark, kept so
that its `judge` can be run on it without Spark (the golden facts under tests/golden/facts/, a reviewed
diff when they change; chispa's comparers and pydeequ's kept states in spirit).

Facts are plain values: dataclasses and named tuples of them, lists, tuples, sets, dicts, datetimes,
None and JSON's scalars. A dict whose keys are not strings is written as its [key, value] pairs, a set
sorted; a datetime in ISO 8601, its zone (or none) kept. A value of a type this does not know raises
TypeError naming it: a fact that cannot be kept is a fact a judge's test cannot be given.
"""

from __future__ import annotations

import dataclasses
import json
import sys
import types
import typing
from collections.abc import Callable, Mapping
from datetime import datetime
from enum import Enum
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from workbench.model.evidence import Held

_SCALARS = (str, int, float, bool, type(None))


def dumped(value: Any) -> Any:
    """`value` as JSON's values."""
    if isinstance(value, Enum):
        return dumped(value.value)
    if isinstance(value, _SCALARS):
        return value
    if isinstance(value, datetime):
        return value.isoformat()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: dumped(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init}
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a named tuple
        return {k: dumped(v) for k, v in zip(value._fields, value, strict=True)}
    if isinstance(value, (list, tuple)):
        return [dumped(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((dumped(v) for v in value), key=lambda v: json.dumps(v, sort_keys=True))
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value):
            return {k: dumped(v) for k, v in value.items()}
        return [[dumped(k), dumped(v)] for k, v in value.items()]
    raise TypeError(f"a fact of type {type(value).__name__} cannot be kept as JSON: {value!r}")


def loaded(hint: Any, data: Any) -> Any:
    """The value of type `hint` that `dumped` wrote as `data`."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return data
    if origin in (typing.Union, types.UnionType):
        if data is None and type(None) in args:
            return None
        (one,) = [a for a in args if a is not type(None)]  # facts never hold a union of two kinds
        return loaded(one, data)
    if origin in (list, set, frozenset):
        return origin(loaded(args[0], d) for d in data)
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(loaded(args[0], d) for d in data)
        return tuple(loaded(a, d) for a, d in zip(args, data, strict=True))
    if origin is dict:
        key, value = args
        if key is str:
            return {k: loaded(value, v) for k, v in data.items()}
        return {loaded(key, k): loaded(value, v) for k, v in data}
    if hint is datetime:
        return datetime.fromisoformat(data)
    if isinstance(hint, type) and issubclass(hint, Enum):
        return hint(data)
    if isinstance(hint, type) and (dataclasses.is_dataclass(hint) or hasattr(hint, "_fields")):
        fields = _fields(hint)
        return hint(**{k: loaded(fields[k], v) for k, v in data.items()})
    if hint is float and isinstance(data, int) and not isinstance(data, bool):
        return float(data)
    if hint in _SCALARS and isinstance(data, hint):
        return data
    raise TypeError(f"{data!r} is not a {hint}")


@cache
def _fields(cls: type) -> dict[str, Any]:
    """A dataclass's or named tuple's fields and their types, resolved in its module."""
    return typing.get_type_hints(cls, vars(sys.modules[cls.__module__]))


def returned(facts: Callable[..., Any]) -> Any:
    """The type an analysis's `facts` returns, from its annotation (the bundle's type is not needed)."""
    hint = facts.__annotations__["return"]
    return eval(hint, facts.__globals__) if isinstance(hint, str) else hint  # our own annotation


def kept(held: Held, facts: Mapping[str, Any]) -> dict[str, Any]:
    """A bundle's facts as kept: what it holds (coverage is recorded from it) and each analysis's facts
    where it ran (`Triage.facts`), as JSON's values."""
    return {"evidence": dumped(held), "facts": {name: dumped(f) for name, f in sorted(facts.items())}}


def given(kept: Mapping[str, Any]) -> tuple[Held, dict[str, Any]]:
    """What `kept` wrote, read back: the bundle's evidence and each analysis's facts, as `triage.judged`
    takes them."""
    from workbench.analysis.registry import ANALYSES
    from workbench.model.evidence import Held

    facts = kept["facts"]
    return loaded(Held, kept["evidence"]), {
        a.name: loaded(returned(a.facts), facts[a.name]) for a in ANALYSES if a.name in facts
    }
