"""`once`: a cached property that threads asking together compute once.

Triage runs its analyses in threads (`analysis/triage.py`), and they share the bundle's sources and views:
a view made twice is its Spark work done twice. `functools.cached_property` has no lock since Python 3.12
(and before it, one lock per property for every instance). Here each instance and property has its own
lock, so a thread making one view never waits on another view being made.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar, overload

T = TypeVar("T")
_LOCKS = threading.Lock()  # guards the making of the per-instance lock tables only


def lock_for(instance: object, key: Hashable) -> threading.RLock:
    """The lock of `key` on `instance` (reentrant: making a value may read another of the same key)."""
    with _LOCKS:
        table: dict[Hashable, threading.RLock] = instance.__dict__.setdefault("_once_locks", {})
        return table.setdefault(key, threading.RLock())


class once(Generic[T]):
    """Like `functools.cached_property`; made once per instance however many threads ask for it."""

    def __init__(self, make: Callable[[Any], T]) -> None:
        self.make = make
        self.name = make.__name__
        self.__doc__ = make.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> once[T]: ...

    @overload
    def __get__(self, instance: object, owner: type | None = None) -> T: ...

    def __get__(self, instance: object | None, owner: type | None = None) -> T | once[T]:
        if instance is None:
            return self
        cache = instance.__dict__
        if self.name not in cache:
            with lock_for(instance, self.name):
                if self.name not in cache:
                    cache[self.name] = self.make(instance)
        value: T = cache[self.name]
        return value
