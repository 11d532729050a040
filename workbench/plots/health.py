"""Partition health over time and each partition's ISR (health)."""

from __future__ import annotations

from collections.abc import Iterable
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
    Span,
    frame,
    interval,
    legend_beside,
    mark_moments,
    new_figure,
    shares,
    time_axis,
)

LEADERLESS = {"offline": VERMILLION, "no_acting_leader": BLACK}
LEADERLESS_LABELS = {
    "offline": "offline (no leader, or not registered)",
    "no_acting_leader": "led by a replica that refuses or is silent",
}
# Each count with the metric Kafka keeps for it, and where it departs from that metric:
# OfflinePartitionsCount is set after each controller event, so it never shows partitions one event took
# offline and led again (`offline_count_set_after_each_event`); no metric counts a leader that refuses to
# lead or stands still.
COUNTS = {
    "offline": ("offline (OfflinePartitionsCount)", VERMILLION),
    "no_acting_leader": ("no acting leader (no Kafka metric)", BLACK),
    "under_replicated": ("under-replicated (UnderReplicatedPartitions)", ORANGE),
    "under_min_isr": ("under min ISR (UnderMinIsrPartitionCount)", PURPLE),
}
DEPARTS = (
    "offline counted txn by txn; Kafka's gauge is set after each controller event,\nso it misses partitions "
    "one event took offline and led again"
)


def partition_health(
    minutes: DataFrame | pd.DataFrame,
    marks: Iterable[Moment] | None = None,
    span: Span | None = None,
    leaderless: DataFrame | pd.DataFrame | None = None,
    partitions: int | None = None,
) -> Figure:
    """Offline, without an acting leader, under-replicated and under-min-ISR partitions per bucket
    (health's `minutes`): the count at each bucket's end as a line, the peak within it as a band; with
    `leaderless` (health.leaderless_windows) each stretch some partition had no acting leader is shaded to
    the millisecond, which a bucket's count can hide, up to the partitions it held (the share, against
    the cluster's `partitions` at the capture where given); the key moments marked."""
    m = frame(minutes).sort_values("minute")
    down = frame(leaderless) if leaderless is not None else None
    fig, ax = new_figure(11, 4)
    time_axis(ax, span, m.minute.min(), m.minute.max())
    handles: list[Any] = []
    if down is not None:  # a stretch still open at the capture runs to it (to the last bucket without one)
        down = down.fillna({"ended": pd.Timestamp(span[1]) if span is not None else m.minute.max()})
    for count, colour in LEADERLESS.items():
        if down is None:
            break
        stretches = down[down["count"] == count]
        if len(stretches):
            most = shares(
                ax,
                zip(stretches.began, stretches.ended, stretches.partitions, strict=True),
                colour,
                alpha=0.1,
            )
            of = f", of {partitions} at the capture" if partitions else ""
            label = f"no acting leader:\n{LEADERLESS_LABELS[count]}\nat most {most} partition(s) at once{of}"
            handles.append(Patch(color=colour, alpha=0.1, label=label))
    for name, (label, colour) in COUNTS.items():
        if name not in m or m[name].isna().all():
            continue
        (line,) = ax.step(m.minute, m[name], where="post", color=colour, label=label)
        handles.append(line)
        if f"{name}_peak" in m:
            ax.fill_between(m.minute, m[name], m[f"{name}_peak"], step="post", color=colour, alpha=0.2)
    ax.set_ylabel("partitions")
    ax.set_ylim(bottom=0)
    ax.yaxis.get_major_locator().set_params(integer=True)
    key = mark_moments(ax, marks)
    title = "lines: count at each bucket's end\nbands: its peak within the bucket"
    legend_beside(ax, [*handles, *key], title)
    ax.set_title(f"Partition health (ZooKeeper's history)\n{DEPARTS}", fontsize="medium")
    return fig


def isr_sizes(
    partitions: DataFrame | pd.DataFrame,
    topic: str,
    span: Span | None = None,
    marks: Iterable[Moment] | None = None,
) -> Figure:
    """Each partition's ISR size over time (health's `partitions`: one row per change), one band per
    partition coloured by how many replicas are in sync, hatched while its leader in ZooKeeper refused to
    lead it (no acting leader: the ISR shown is only what ZooKeeper holds)."""
    p = frame(partitions)
    p = p[p.topic == topic].sort_values(["partition", "zxid"])
    if p.empty:
        raise ValueError(f"no partition changes of {topic}")
    size = p.isr.map(lambda isr: None if isr is None else len(isr))
    top = int(max(size.max(), p.replicas.map(lambda r: 0 if r is None else len(r)).max()))
    # none in sync vermillion, all green, the sizes between from the rest of the palette
    shades: list[Any] = [VERMILLION, *[ORANGE, SKY_BLUE, YELLOW][: max(top - 1, 0)], GREEN][: top + 1]
    if top > 4:
        shades = [colormaps["viridis"](n / top) for n in range(top + 1)]
    parts = sorted(p.partition.unique())
    fig, ax = new_figure(11, 1.6 + 0.25 * len(parts))
    time_axis(ax, span, p.time.min(), p.time.max())
    stop = pd.Timestamp(span[1]) if span is not None else p.time.max()
    gap = pd.Timedelta(days=0.06 * (ax.get_xlim()[1] - ax.get_xlim()[0]))  # between two notes of a row
    for y, part in enumerate(parts):
        rows = p[p.partition == part]
        ends = [*rows.time.iloc[1:], max(stop, rows.time.iloc[-1])]
        refused = rows.refused_by if "refused_by" in rows else pd.Series([None] * len(rows), index=rows.index)
        noted = None
        for start, until, n, r in zip(rows.time, ends, size[rows.index], refused, strict=True):
            if not pd.isna(n):  # no state znode (yet, or any more): no ISR to show
                hatch = "////" if isinstance(r, str) else None
                note = noted is None or start - noted > gap
                bar = dict(height=0.8, color=shades[int(n)], hatch=hatch)
                if interval(ax, y, start, until, note, **bar) and note:
                    noted = start
    ax.set_yticks(range(len(parts)), [f"{topic}-{x}" for x in parts])
    ax.invert_yaxis()
    ax.set_ylabel("partition")
    key = mark_moments(ax, marks)
    legend_beside(
        ax,
        [
            *[Patch(color=c, label=f"{n} in sync") for n, c in enumerate(shades)],
            Patch(facecolor="white", edgecolor=BLACK, hatch="////", label="no acting leader"),
            *key,
        ],
        "replicas in the ISR (ZooKeeper)",
    )
    ax.set_title(f"ISR size of each partition of {topic} (ZooKeeper's history)")
    return fig
