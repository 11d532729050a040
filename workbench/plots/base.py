"""What every figure shares: the palette, bringing an aggregate to the driver, UTC time axes and the
key moments marked on them."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

import matplotlib.dates as mdates
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from pyspark.sql import DataFrame

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


def time_axis(ax: Axes) -> None:
    locator = mdates.AutoDateLocator(tz="UTC")
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator, tz="UTC"))
    ax.set_xlabel("time (UTC)")


def mark_moments(ax: Axes, moments: Iterable[Moment] | None) -> None:
    """Dashed lines at the key moments (failover, crash, restart), labelled along the top; moments closer
    than 3% of the axis share one label, a column each, so that none hides another."""
    left, right = ax.get_xlim()
    groups: list[tuple[float, list[str]]] = []
    for at, label in sorted(moments or ()):
        x = mdates.date2num(at)
        ax.axvline(x, color=GREY, linestyle="--", linewidth=1, zorder=0)
        if groups and x - groups[-1][0] < 0.03 * (right - left):
            groups[-1][1].append(label)
        else:
            groups.append((x, [label]))
    for x, labels in groups:
        ax.annotate(
            "\n".join(labels),
            (x, 1),
            xycoords=("data", "axes fraction"),
            xytext=(2, -2),
            textcoords="offset points",
            rotation=90,
            va="top",
            fontsize=7,
            color="#555555",
        )


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
