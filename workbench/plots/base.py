"""What every figure shares: the palette, bringing an aggregate to the driver, UTC time axes over the
evidence's span, stretches too short to see drawn wide enough with their length, the key moments numbered
and legends beside the plot."""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from datetime import datetime
from typing import Any

import matplotlib.dates as mdates
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from pyspark.sql import DataFrame

from workbench.analysis.findings import duration as spoken

# Okabe & Ito (2008), "Color Universal Design".
BLACK, ORANGE, SKY_BLUE, GREEN, YELLOW, BLUE, VERMILLION, PURPLE = (
    "#000000",
    "#E69F00",
    "#56B4E9",
    "#009E73",
    "#F0E442",
    "#0072B2",
    "#D55E00",
    "#CC79A7",
)
GREY = "#999999"
MAX_ROWS = 200_000  # a plot's input is an aggregate; more rows than this means it was not aggregated

Moment = tuple[datetime, str]
Span = tuple[datetime, datetime]  # the evidence's first record and the capture (views.span)
MIN_WIDTH = 0.004  # of a time axis: the narrowest stretch drawn, so a few milliseconds stay visible


def frame(data: DataFrame | pd.DataFrame) -> pd.DataFrame:
    """A plot's input on the driver: pandas as given, a Spark DataFrame brought over only if small."""
    if isinstance(data, pd.DataFrame):
        return data
    rows = data.limit(MAX_ROWS + 1).toPandas()
    if len(rows) > MAX_ROWS:
        raise ValueError(f"a plot was given over {MAX_ROWS} rows: aggregate in Spark first")
    return rows


def utc(at: datetime | str) -> pd.Timestamp:
    """A moment as the naive UTC timestamps Spark hands over (its session time zone is UTC)."""
    t = pd.Timestamp(at)
    return t.tz_convert("UTC").tz_localize(None) if t.tzinfo is not None else t


def new_figure(width: float, height: float, cols: int = 1) -> tuple[Figure, Any]:
    """A figure with one Axes, or a list of `cols` side by side."""
    fig = Figure(figsize=(width, height), layout="constrained")
    return fig, fig.subplots(1, cols) if cols > 1 else fig.subplots()


def time_axis(ax: Axes, span: Span | None = None, *times: Any) -> None:
    """A UTC time axis over the evidence's span (views.span: from its first record to the capture), widened
    to any of `times` outside it, so that an axis never stops at the last event as if nothing followed."""
    seen = pd.Series([utc(t) for t in times if t is not None and not pd.isna(t)], dtype="datetime64[ns]")
    if span is not None or len(seen):
        low = min([utc(span[0])] if span is not None else [], default=seen.min())
        high = max([utc(span[1])] if span is not None else [], default=seen.max())
        if len(seen):
            low, high = min(low, seen.min()), max(high, seen.max())
        if high <= low:
            high = low + pd.Timedelta(1, "s")
        pad = (high - low) * 0.01
        ax.set_xlim(mdates.date2num(low - pad), mdates.date2num(high + pad))
    locator = mdates.AutoDateLocator(tz="UTC")
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator, tz="UTC"))
    ax.set_xlabel("time (UTC)")


def duration(length: pd.Timedelta) -> str:
    """A length of time as the findings write it (health.duration)."""
    return spoken(round(length.total_seconds() * 1000))


def interval(ax: Axes, y: float, start: Any, until: Any, note: bool = True, **bar: Any) -> bool:
    """One bar from `start` to `until` on a time axis whose limits are set: a stretch too short to see
    (under MIN_WIDTH of the axis) is drawn MIN_WIDTH wide above its neighbours, with its length written
    beside it when `note`. Returns whether it was that short."""
    left, right = ax.get_xlim()
    x0, x1 = mdates.date2num(utc(start)), mdates.date2num(utc(until))
    least = MIN_WIDTH * (right - left)
    short = x1 - x0 < least
    ax.barh(y, max(x1 - x0, least), left=x0, zorder=3 if short else 2, **bar)
    if note and short:
        ax.annotate(
            duration(pd.Timedelta(days=x1 - x0)),
            (x0 + least, y),
            xytext=(2, 0),
            textcoords="offset points",
            va="center",
            fontsize=7,
        )
    return short


def shares(ax: Axes, stretches: Iterable[tuple[Any, Any, int]], colour: str, **shade: Any) -> int:
    """Shade each stretch of time (start, until, how many partitions it held) from 0 up to the partitions
    it held, stacked where stretches overlap, so that 2 partitions of 24 read as 2, not as the whole
    cluster; each at least MIN_WIDTH wide, its length written at the bottom when too short to see.
    Returns the most partitions shaded at once."""
    left, right = ax.get_xlim()
    least = MIN_WIDTH * (right - left)
    drawn = []
    for start, until, n in stretches:
        x0, x1 = mdates.date2num(utc(start)), mdates.date2num(utc(until))
        drawn.append((x0, max(x1, x0 + least), n))
        if x1 - x0 < least:
            _length_at_bottom(ax, x0 + least, utc(until) - utc(start), colour)
    edges = sorted({x for x0, x1, _ in drawn for x in (x0, x1)})
    steps: list[tuple[float, float, int]] = []  # (from, to, partitions shaded), equal neighbours merged
    for a, b in itertools.pairwise(edges):
        n = sum(k for x0, x1, k in drawn if x0 <= a and b <= x1)
        if steps and steps[-1][2] == n and steps[-1][1] == a:
            steps[-1] = (steps[-1][0], b, n)
        elif n:
            steps.append((a, b, n))
    for a, b, n in steps:
        ax.bar(a, n, width=b - a, align="edge", color=colour, linewidth=0, **shade)
    return max((n for _, _, n in steps), default=0)


def windows(
    ax: Axes, spans: Iterable[tuple[Any, Any]], colour: str, note: bool = True, **shade: Any
) -> list[tuple[Any, Any]]:
    """Shade each stretch of time (merged where they overlap) across the axes, at least MIN_WIDTH wide,
    its length written at the bottom when it was too short to see and `note`; returns the stretches."""
    merged: list[tuple[Any, Any]] = []
    for start, until in sorted((utc(a), utc(b)) for a, b in spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], until))
        else:
            merged.append((start, until))
    left, right = ax.get_xlim()
    least = MIN_WIDTH * (right - left)
    for start, until in merged:
        x0, x1 = mdates.date2num(start), mdates.date2num(until)
        ax.axvspan(x0, max(x1, x0 + least), color=colour, linewidth=0, **shade)
        if note and x1 - x0 < least:
            _length_at_bottom(ax, x0 + least, until - start, colour)
    return merged


def _length_at_bottom(ax: Axes, x: float, length: pd.Timedelta, colour: str) -> None:
    """A stretch's length written at the bottom of the axes, right of `x`: it was too short to see."""
    ax.annotate(
        duration(length),
        (x, 0),
        xycoords=("data", "axes fraction"),
        xytext=(2, 2),
        textcoords="offset points",
        fontsize=7,
        color=colour,
    )


def legend_beside(ax: Axes, handles: list[Any] | None = None, title: str | None = None) -> None:
    """The legend to the right of the plot, where it hides nothing."""
    ax.legend(
        handles=handles if handles is not None else ax.get_legend_handles_labels()[0],
        loc="upper left",
        bbox_to_anchor=(1.01, 1),
        borderaxespad=0,
        fontsize=8,
        title=title,
        title_fontsize=8,
        alignment="left",
        frameon=False,
    )


def mark_moments(ax: Axes, moments: Iterable[Moment] | None) -> list[Line2D]:
    """Dashed lines at the key moments (failover, crash, restart), numbered inside the top edge; moments
    closer than 4% of the axis share one number label ("2-4"). Returns the key, one legend entry per moment
    with its time, for the legend beside the plot."""
    left, right = ax.get_xlim()
    groups: list[tuple[float, list[int]]] = []
    key: list[Line2D] = []
    for n, (at, label) in enumerate(sorted(moments or ()), start=1):
        x = mdates.date2num(utc(at))
        ax.axvline(x, color=GREY, linestyle="--", linewidth=1, zorder=0)
        when = f"{utc(at):%H:%M:%S.%f}"[:-3]
        key.append(Line2D([], [], color=GREY, linestyle="--", linewidth=1, label=f"{n}  {when}  {label}"))
        if groups and x - groups[-1][0] < 0.04 * (right - left):
            groups[-1][1].append(n)
        else:
            groups.append((x, [n]))
    for x, numbers in groups:
        ax.annotate(
            str(numbers[0]) if len(numbers) == 1 else f"{numbers[0]}-{numbers[-1]}",
            (x, 1),
            xycoords=("data", "axes fraction"),
            xytext=(2, -2),
            textcoords="offset points",
            va="top",
            fontsize=7,
            color="#555555",
        )
    return key


def moments(
    elections: DataFrame | pd.DataFrame | None = None, offline: DataFrame | pd.DataFrame | None = None
) -> list[Moment]:
    """The moments to mark on a time axis: each controller election (controller.elections) and each
    broker's crash or loss of session and its return (health.offline_windows)."""
    out: list[Moment] = []
    if elections is not None:
        for e in frame(elections).itertuples():
            out.append((e.time, f"controller: broker {e.broker} (epoch {e.epoch})"))
    if offline is not None:
        for w in frame(offline).itertuples():
            out.append((w.down, f"broker {w.broker} offline"))
            if not pd.isna(w.up):
                out.append((w.up, f"broker {w.broker} back"))
    return out
