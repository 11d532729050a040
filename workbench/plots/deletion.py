"""A topic deletion, replica by replica (model.deletion_steps.replica_progress)."""

from __future__ import annotations

import matplotlib.dates as mdates
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from pyspark.sql import DataFrame

from workbench.plots.base import (
    BLACK,
    GREEN,
    GREY,
    ORANGE,
    SKY_BLUE,
    Span,
    duration,
    frame,
    interval,
    legend_beside,
    new_figure,
    time_axis,
)


def deletion_gantt(
    progress: DataFrame | pd.DataFrame,
    offline: DataFrame | pd.DataFrame | None = None,
    span: Span | None = None,
    title: str | None = None,
) -> Figure:
    """Each replica of a deleted topic (model.deletion_steps.replica_progress) from the request to its
    '-delete' rename and the log's removal, with its broker's offline windows (health.offline_windows)
    shaded and the topic's request and completion marked across them; the controller's part takes
    milliseconds, so those bars are drawn wide enough to see, their length written beside them."""
    p = frame(progress).sort_values(["broker", "partition"]).reset_index(drop=True)
    if p.empty:
        raise ValueError("no replicas to draw: is the topic right?")
    times = pd.concat([p[c] for c in ("requested", "renamed", "deleted")]).dropna()
    down = frame(offline) if offline is not None else pd.DataFrame(columns=["broker", "down", "up"])
    fig, ax = new_figure(11, 1.4 + 0.28 * len(p))
    time_axis(ax, span, times.min(), times.max())
    origin, stop = (pd.Timestamp(span[0]), pd.Timestamp(span[1])) if span else (times.min(), times.max())
    for y, r in p.iterrows():
        for w in down[down.broker == r.broker].itertuples():
            start, until = max(w.down, min(origin, times.min())), stop if pd.isna(w.up) else w.up
            if until > start:
                ax.barh(y, until - start, left=start, height=0.9, color=GREY, alpha=0.35, hatch="//")
        asked = r.requested if not pd.isna(r.requested) else times.min()
        first = r.renamed if not pd.isna(r.renamed) else (r.deleted if not pd.isna(r.deleted) else stop)
        short = interval(ax, y, asked, max(first, asked), note=False, height=0.5, color=ORANGE)
        end = max(first, asked)
        if not pd.isna(r.renamed):
            end = max(r.deleted if not pd.isna(r.deleted) else stop, r.renamed)
            interval(ax, y, r.renamed, end, note=False, height=0.5, color=SKY_BLUE)
        if not pd.isna(r.deleted):
            ax.plot(r.deleted, y, marker="|", markersize=12, color=GREEN, markeredgewidth=2, zorder=4)
        if short:  # written where no bar or mark is: after the row, else before it
            after = _fraction(ax, end) < 0.7 or _fraction(ax, asked) < 0.3
            ax.annotate(
                f"StopReplica after {duration(first - asked)}",
                (end, y) if after else (asked, y),
                xytext=(8, 0) if after else (-4, 0),
                textcoords="offset points",
                ha="left" if after else "right",
                va="center",
                fontsize=7,
            )
    marks = []  # the topic's request and completion, across every replica
    for column, colour, style, label in (
        ("requested", BLACK, "--", "deletion requested"),
        ("completed", GREEN, "-", "deletion completed\n(marker removed)"),
    ):
        at = p[column].dropna().min() if column in p else None
        if at is not None and not pd.isna(at):
            marks.append(ax.axvline(at, color=colour, linestyle=style, linewidth=1, label=label, zorder=1))
    ax.set_yticks(range(len(p)), [f"{r.topic}-{r.partition} @ broker {r.broker}" for r in p.itertuples()])
    ax.invert_yaxis()
    ax.set_ylabel("replica")
    legend_beside(
        ax,
        [
            Patch(color=ORANGE, label="waiting for StopReplica (delete)"),
            Patch(color=SKY_BLUE, label="renamed to -delete,\nwaiting file.delete.delay.ms"),
            Patch(color=GREEN, label="log removed"),
            Patch(facecolor=GREY, alpha=0.35, hatch="//", label="broker offline\n(no registration)"),
            *marks,
        ],
    )
    ax.set_title(title or f"Deletion of {p.topic.iloc[0]}, replica by replica (each broker's clock)")
    return fig


def _fraction(ax: Axes, at: pd.Timestamp) -> float:
    """Where a moment falls along the time axis, 0 at its left end and 1 at its right."""
    left, right = ax.get_xlim()
    return float((mdates.date2num(at) - left) / (right - left))
