"""A topic deletion, replica by replica (deletion.replica_progress)."""

from __future__ import annotations

from datetime import datetime

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from pyspark.sql import DataFrame

from workbench.plots.base import (
    GREEN,
    GREY,
    ORANGE,
    SKY_BLUE,
    frame,
    new_figure,
    time_axis,
    utc,
)


def deletion_gantt(
    progress: DataFrame | pd.DataFrame,
    offline: DataFrame | pd.DataFrame | None = None,
    end: datetime | None = None,
    title: str | None = None,
) -> Figure:
    """Each replica of a deleted topic (deletion.replica_progress) from the request to its '-delete'
    rename and the log's removal, with its broker's offline windows (health.offline_windows) shaded."""
    p = frame(progress).sort_values(["broker", "partition"]).reset_index(drop=True)
    if p.empty:
        raise ValueError("no replicas to draw: is the topic right?")
    times = pd.concat([p[c] for c in ("requested", "renamed", "deleted")]).dropna()
    stop = utc(end) if end is not None else times.max() + (times.max() - times.min()) * 0.05
    down = frame(offline) if offline is not None else pd.DataFrame(columns=["broker", "down", "up"])
    fig, ax = new_figure(10, 1.2 + 0.28 * len(p))
    for y, r in p.iterrows():
        for w in down[down.broker == r.broker].itertuples():
            start, until = max(w.down, times.min()), stop if pd.isna(w.up) else w.up
            if until > start:
                ax.barh(y, until - start, left=start, height=0.9, color=GREY, alpha=0.35, hatch="//")
        asked = r.requested if not pd.isna(r.requested) else times.min()
        first = r.renamed if not pd.isna(r.renamed) else (r.deleted if not pd.isna(r.deleted) else stop)
        ax.barh(y, first - asked, left=asked, height=0.5, color=ORANGE)
        if not pd.isna(r.renamed):
            gone = r.deleted if not pd.isna(r.deleted) else stop
            ax.barh(y, gone - r.renamed, left=r.renamed, height=0.5, color=SKY_BLUE)
        if not pd.isna(r.deleted):
            ax.plot(r.deleted, y, marker="|", markersize=12, color=GREEN, markeredgewidth=2)
    ax.set_yticks(range(len(p)), [f"{r.topic}-{r.partition} @ broker {r.broker}" for r in p.itertuples()])
    ax.invert_yaxis()
    ax.set_ylabel("replica")
    time_axis(ax)
    ax.legend(
        handles=[
            Patch(color=ORANGE, label="waiting for StopReplica (delete)"),
            Patch(color=SKY_BLUE, label="renamed to -delete, waiting file.delete.delay.ms"),
            Patch(color=GREEN, label="log removed"),
            Patch(facecolor=GREY, alpha=0.35, hatch="//", label="broker offline (no registration)"),
        ],
        loc="upper center",
        bbox_to_anchor=(0.5, -0.25),
        ncols=2,
        fontsize=8,
        frameon=False,
    )
    ax.set_title(title or f"Deletion of {p.topic.iloc[0]}, replica by replica (each broker's clock)")
    return fig
