"""What an analysis reads: the shared views it declares (`Analysis.reads`), which the triage runner makes
first (each a first task of its threads' pool), as Deequ's AnalysisRunner shares one pass among its
analyzers.

A view is an attribute of `views.ClusterViews` or a function of the bundle made one (`view`, `fact`,
`declare`). While an analysis runs (`reading`), a read of a view it does not declare is
recorded in `UNDECLARED`: the view is made on demand all the same, so a user's triage goes on, and the test
that caused it fails (tests/conftest.py).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterable, Iterator
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from workbench.frames import Bundle

T = TypeVar("T")
# The analysis reading views in this thread and the views it declares; None while a view is made (a view
# reads what it needs) and outside the analyses.
_READING: ContextVar[tuple[str, frozenset[str]] | None] = ContextVar("reading", default=None)
UNDECLARED: list[tuple[str, str]] = []  # (analysis, view) read without its declaration
# The views made by functions of their own, by name: what `build` makes by calling them.
MADE_BY: dict[str, Callable[[Bundle], Any]] = {}


@contextlib.contextmanager
def reading(analysis: str, names: Iterable[str]) -> Iterator[None]:
    """While `analysis` runs in this thread: it should read only the views `names`."""
    token = _READING.set((analysis, frozenset(names)))
    try:
        yield
    finally:
        _READING.reset(token)


@contextlib.contextmanager
def read(name: str | None) -> Iterator[None]:
    """A read of the view `name` (None: not a view), checked against the reading analysis's declaration;
    what the view's making reads in turn is the view's own."""
    now = _READING.get()
    if name is None:
        yield
        return
    if now is not None and name not in now[1]:
        UNDECLARED.append((now[0], name))
    token = _READING.set(None)
    try:
        yield
    finally:
        _READING.reset(token)


def declare(made: Callable[[Bundle], T]) -> Callable[[Bundle], T]:
    """`made` (a function of the bundle that keeps what it makes with the views, `ClusterViews.memo` with
    its name) as a view analyses may declare, by its function's name."""
    other = MADE_BY.setdefault(made.__name__, made)
    if (other.__module__, other.__qualname__) != (made.__module__, made.__qualname__):
        raise ValueError(f"two views named {made.__name__}: in {made.__module__} and {other.__module__}")
    MADE_BY[made.__name__] = made
    return made


def view(make: Callable[[Bundle], DataFrame]) -> Callable[[Bundle], DataFrame]:
    """A view derived from a bundle that several analyses (and the report) read: made on first use,
    kept (`spark.kept`) and shared while the bundle's views live, so that each reader plans against one
    leaf instead of rebuilding it. Declared by its function's name."""
    from workbench.spark import kept

    return shared(lambda bundle: kept(make(bundle)), make)


def fact(make: Callable[[Bundle], T]) -> Callable[[Bundle], T]:
    """What several analyses learn from a bundle in a query and read as plain values (how each broker
    session ended): asked once while the bundle's views live. Its readers must not change it. Declared
    by its function's name."""
    return shared(make, make)


def shared(make: Callable[[Bundle], T], named: Callable[..., Any]) -> Callable[[Bundle], T]:
    """`make` as the view named by `named` (its function): made once per bundle, read where declared."""
    key, name = f"{named.__module__}.{named.__qualname__}", named.__name__

    @functools.wraps(named)
    def made(bundle: Bundle) -> T:
        from workbench.model.views import views

        return views(bundle).memo(key, lambda: make(bundle), name)

    return declare(made)


def view_names() -> frozenset[str]:
    """Every view an analysis may declare: the attributes of `ClusterViews` and the views declared."""
    from workbench.model.views import NOT_VIEWS, ClusterViews
    from workbench.once import once

    own = {n for n, a in vars(ClusterViews).items() if isinstance(a, (once, property))} - NOT_VIEWS
    return frozenset(own | set(MADE_BY))


def build(bundle: Bundle, names: Iterable[str], only_check: bool = False) -> None:
    """Make the named views of the bundle (each once, kept with its views), in the order given; a name
    that is no view raises ValueError first (`only_check`: only that)."""
    from workbench.model.views import views

    names, known = list(names), view_names()
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(
            f"no view named {', '.join(map(repr, unknown))}; the views are {', '.join(sorted(known))}"
        )
    if only_check:
        return
    v = views(bundle)
    for name in names:
        getattr(v, name) if name not in MADE_BY else MADE_BY[name](bundle)
