"""Controller elections, a failover's steps and the leadership it leaves (controller, health)."""

from __future__ import annotations

from datetime import datetime

import matplotlib.dates as mdates
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from pyspark.sql import DataFrame

from workbench.plots.base import (
    BLUE,
    SKY_BLUE,
    VERMILLION,
    Span,
    duration,
    frame,
    legend_beside,
    new_figure,
    time_axis,
    utc,
    windows,
)


def controller_epochs(elections: DataFrame | pd.DataFrame, span: Span | None = None) -> Figure:
    """The controller epoch over time (controller.elections), each step labelled with its winner, and the
    gaps with no controller (its session or znode gone, nobody elected yet) shaded, on ZooKeeper's clock;
    a gap of milliseconds is drawn wide enough to see, its length written beside it."""
    e = frame(elections).sort_values("zxid").reset_index(drop=True)
    if e.empty:
        raise ValueError("no elections to draw")
    fig, ax = new_figure(11, 3.8)
    time_axis(ax, span, *e.time, *e.gone_time)
    last = pd.Timestamp(span[1]) if span is not None else utc(mdates.num2date(ax.get_xlim()[1]))
    xs, ys = [*e.time, max(last, e.time.iloc[-1])], [*e.epoch, e.epoch.iloc[-1]]
    ax.step(xs, ys, where="post", color=BLUE, linewidth=2, label="controller epoch (/controller_epoch)")
    gaps = []
    for i, r in e.iterrows():
        ax.annotate(
            f"broker {r.broker}",
            (r.time, r.epoch),
            xytext=(4, 6),
            textcoords="offset points",
            fontsize=8,
            color=BLUE,
        )
        if pd.isna(r.gone_time):
            continue
        until = e.time.iloc[i + 1] if i + 1 < len(e) else last
        gaps.append((r.gone_time, until))
        ax.annotate(
            f"no controller {duration(until - r.gone_time)}",
            (r.gone_time, r.epoch),
            xytext=(-4, -14),
            textcoords="offset points",
            ha="right",
            fontsize=8,
            color=VERMILLION,
        )
    windows(ax, gaps, VERMILLION, alpha=0.25, note=False)
    ax.set_ylabel("controller epoch")
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.set_ylim(e.epoch.min() - 0.5, e.epoch.max() + 0.8)
    gap = Patch(color=VERMILLION, alpha=0.25, label="no controller")
    legend_beside(ax, [*ax.get_lines(), gap])
    ax.set_title("Controller elections (ZooKeeper's clock)")
    return fig


def failover_durations(steps: DataFrame | pd.DataFrame, broker: int, epoch: int) -> Figure:
    """How long each step of one controller's onControllerFailover took (controller.failover_steps): from
    each line of its controller.log to the next, in the order the log has them."""
    s = frame(steps)
    s = s[(s.broker_id == broker) & (s.epoch == epoch)]
    s = s[
        s.event.str.startswith("state_machine.")
        | s.event.isin(["controller.elected", "controller.failover_step", "controller.ready"])
    ]
    s = s.sort_values("line_no").reset_index(drop=True)
    if len(s) < 2:
        raise ValueError(f"no failover steps of broker {broker} at epoch {epoch}")
    took = (s.ts.shift(-1) - s.ts).dt.total_seconds().mul(1000).iloc[:-1]
    names = [str(x.step) if isinstance(x.step, str) else x.event.split(".")[1] for x in s.itertuples()][:-1]
    fig, ax = new_figure(9, 1.2 + 0.35 * len(names))
    ax.barh(range(len(names)), took, color=BLUE)
    for y, ms in enumerate(took):
        ax.annotate(
            f"{ms:.0f} ms", (ms, y), xytext=(3, 0), textcoords="offset points", va="center", fontsize=8
        )
    ax.set_yticks(range(len(names)), [n.replace("_", " ") for n in names])
    ax.invert_yaxis()
    ax.set_ylabel("step (controller.log, in its order)")
    ax.set_xlabel("duration (ms, the broker's clock)")
    total = (s.ts.iloc[-1] - s.ts.iloc[0]).total_seconds() * 1000
    ax.set_title(f"Broker {broker} becoming controller (epoch {epoch}): {total:.0f} ms from elected to ready")
    return fig


def leader_balance(
    brokers: DataFrame | pd.DataFrame, before: datetime, after: datetime, threshold: float = 0.10
) -> Figure:
    """Leaders per broker and the controller's imbalance ratio (health's `brokers`, counted at each
    bucket's end) before a moment (the last bucket ended by then) and after one (the bucket holding it),
    against leader.imbalance.per.broker.percentage (as a fraction)."""
    b = frame(brokers)
    starts = pd.Series(sorted(b.minute.unique()))
    width = starts.diff().min() if len(starts) > 1 else pd.Timedelta(0)
    fig, (left, right) = new_figure(11, 4, cols=2)
    ids = sorted(b.broker.unique())
    for k, (colour, name, bucket) in enumerate(
        (
            (SKY_BLUE, "before", starts[starts + width <= utc(before)].max()),
            (BLUE, "after", starts[starts <= utc(after)].max()),
        )
    ):
        if pd.isna(bucket):
            raise ValueError(f"no bucket {name} {before if name == 'before' else after}")
        row = b[b.minute == bucket].set_index("broker").reindex(ids)
        label = f"{name} (as of {bucket + width:%H:%M} UTC)"
        xs = [i + (k - 0.5) * 0.38 for i in range(len(ids))]
        left.bar(xs, row.leaders.fillna(0), 0.38, color=colour, label=label)
        right.bar(xs, row.imbalance_ratio.fillna(0), 0.38, color=colour, label=label)
    for ax in (left, right):
        ax.set_xticks(range(len(ids)), [f"broker {i}" for i in ids])
        ax.set_xlabel("broker")
    right.axhline(threshold, color=VERMILLION, linestyle="--", label="leader.imbalance.per.broker.percentage")
    legend_beside(right)
    right.annotate(
        f"threshold {threshold:.0%}",
        (1, threshold),
        xycoords=("axes fraction", "data"),
        xytext=(-2, 3),
        textcoords="offset points",
        ha="right",
        fontsize=8,
        color=VERMILLION,
    )
    left.set_ylabel("partitions led (leaders)")
    right.set_ylabel("imbalance ratio (not leading / preferred, 0-1)")
    left.set_title("Leaders per broker")
    right.set_title("Leader imbalance per broker (the controller's rule)")
    return fig
