"""Partition health over time and each partition's ISR (health)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

import pandas as pd
from matplotlib import colormaps
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from pyspark.sql import DataFrame

from workbench.plots.base import (
    BLACK,
    GREEN,
    ORANGE,
    PURPLE,
    SKY_BLUE,
    VERMILLION,
    YELLOW,
    Moment,
    frame,
    mark_moments,
    new_figure,
    time_axis,
    utc,
)


def partition_health(minutes: DataFrame | pd.DataFrame, marks: Iterable[Moment] | None = None) -> Figure:
    """Offline, without an acting leader, under-replicated and under-min-ISR partitions per bucket
    (health's `minutes`): the count at each bucket's end as a line, the peak within it as a band, with the
    key moments marked."""
    m = frame(minutes).sort_values("minute")
    fig, ax = new_figure(10, 4)
    for name, colour in (
        ("offline", VERMILLION),
        ("no_acting_leader", BLACK),
        ("under_replicated", ORANGE),
        ("under_min_isr", PURPLE),
    ):
        if name not in m or m[name].isna().all():
            continue
        ax.step(m.minute, m[name], where="post", color=colour, label=name.replace("_", " "))
        if f"{name}_peak" in m:
            ax.fill_between(m.minute, m[name], m[f"{name}_peak"], step="post", color=colour, alpha=0.2)
    ax.set_ylabel("partitions")
    ax.set_ylim(bottom=0)
    ax.yaxis.get_major_locator().set_params(integer=True)
    time_axis(ax)
    mark_moments(ax, marks)
    ax.legend(
        loc="upper left",
        bbox_to_anchor=(1.01, 1),
        fontsize=8,
        title="at the bucket's end\n(band: its peak)",
        title_fontsize=8,
        frameon=False,
    )
    ax.set_title("Partition health (ZooKeeper's history)")
    return fig


def isr_sizes(
    partitions: DataFrame | pd.DataFrame,
    topic: str,
    end: datetime | None = None,
    marks: Iterable[Moment] | None = None,
) -> Figure:
    """Each partition's ISR size over time (health's `partitions`: one row per change), one band per
    partition coloured by how many replicas are in sync, hatched while its leader in ZooKeeper refused to
    lead it (no acting leader: the ISR shown is only what ZooKeeper holds)."""
    p = frame(partitions)
    p = p[p.topic == topic].sort_values(["partition", "zxid"])
    if p.empty:
        raise ValueError(f"no partition changes of {topic}")
    stop = utc(end) if end is not None else p.time.max()
    size = p.isr.map(lambda isr: None if isr is None else len(isr))
    top = int(max(size.max(), p.replicas.map(lambda r: 0 if r is None else len(r)).max()))
    # none in sync vermillion, all green, the sizes between from the rest of the palette
    shades: list[Any] = [VERMILLION, *[ORANGE, SKY_BLUE, YELLOW][: max(top - 1, 0)], GREEN][: top + 1]
    if top > 4:
        shades = [colormaps["viridis"](n / top) for n in range(top + 1)]
    parts = sorted(p.partition.unique())
    fig, ax = new_figure(10, 1.4 + 0.25 * len(parts))
    for y, part in enumerate(parts):
        rows = p[p.partition == part]
        ends = [*rows.time.iloc[1:], stop]
        refused = rows.refused_by if "refused_by" in rows else pd.Series([None] * len(rows), index=rows.index)
        for start, until, n, r in zip(rows.time, ends, size[rows.index], refused, strict=True):
            if not pd.isna(n):  # no state znode (yet, or any more): no ISR to show
                hatch = "////" if isinstance(r, str) else None
                ax.barh(y, until - start, left=start, height=0.8, color=shades[int(n)], hatch=hatch)
    ax.set_yticks(range(len(parts)), [f"{topic}-{x}" for x in parts])
    ax.invert_yaxis()
    time_axis(ax)
    mark_moments(ax, marks)
    ax.legend(
        handles=[
            *[Patch(color=c, label=f"{n} in sync") for n, c in enumerate(shades)],
            Patch(facecolor="white", edgecolor=BLACK, hatch="////", label="no acting leader"),
        ],
        loc="upper center",
        bbox_to_anchor=(0.5, -0.2),
        ncols=top + 2,
        fontsize=8,
        frameon=False,
    )
    ax.set_title(f"ISR size of each partition of {topic} (ZooKeeper's history)")
    return fig
