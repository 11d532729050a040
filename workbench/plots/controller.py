"""Controller elections, a failover's steps and the leadership it leaves (controller, health)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

import matplotlib.dates as mdates
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from pyspark.sql import DataFrame

from workbench.analysis.findings import Finding
from workbench.model.history.controllers import Election
from workbench.plots.base import (
    BLUE,
    GREY,
    MIN_WIDTH,
    ORANGE,
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


def chain_frame(chain: Iterable[Election]) -> pd.DataFrame:
    """The controller chain (`model/history/controllers.py`) as a plot takes it, in its order: epoch,
    broker, zxid (none where only the elected broker's line tells it), time (ZooKeeper's clock where its
    txn tells it, else that broker's), its tenure's end where ZooKeeper's history holds it (gone_zxid,
    gone_time, and gone_by: the session that deleted /controller, none where its own session closed) and
    told (its sources)."""
    columns = ["epoch", "broker", "zxid", "time", "gone_zxid", "gone_time", "gone_by", "told"]
    rows = [
        (e.epoch, e.broker, e.zxid, e.time, e.gone_zxid, e.gone_time, e.gone_by, " and ".join(e.sources))
        for e in chain
    ]
    return pd.DataFrame(rows, columns=columns)


def controller_epochs(
    elections: DataFrame | pd.DataFrame, span: Span | None = None, failovers: Iterable[Finding] = ()
) -> Figure:
    """The controller epoch over time (the controller chain, `chain_frame`), each step labelled with its
    winner, on ZooKeeper's clock (the elected broker's where only its line tells an election). The
    headline is each failover's outage (`failovers`: the controller analysis's findings with `outage_ms`),
    from the old controller's last sign of life to the new one's "Ready to serve": shaded solid from its
    latest possible start, lighter where only its bounds place the start. The stretch without a
    /controller znode (its session or znode gone, nobody elected yet) is a line inside that outage: a hang
    of seconds ends in a gap of milliseconds, so the gap alone understates it. Where no finding bounds an
    outage, the gap is shaded instead, drawn wide enough to see and its length written."""
    e = frame(elections)
    if e.zxid.notna().all():  # else in the order given: the chain's (`chain_frame`)
        e = e.sort_values("zxid")
    e = e[e.epoch.notna()].reset_index(drop=True)
    if e.empty:
        raise ValueError("no elections to draw")
    fig, ax = new_figure(11, 3.8)
    out = _outages(e, failovers)
    time_axis(ax, span, *e.time, *e.gone_time, *(x[0] for x in out.values()))
    last = pd.Timestamp(span[1]) if span is not None else utc(mdates.num2date(ax.get_xlim()[1]))
    xs, ys = [*e.time, max(last, e.time.iloc[-1])], [*e.epoch, e.epoch.iloc[-1]]
    label = "controller epoch (/controller_epoch)" if e.zxid.notna().any() else "controller epoch"
    (step,) = ax.step(xs, ys, where="post", color=BLUE, linewidth=2, label=label)
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
        nxt = e.epoch.iloc[i + 1] if i + 1 < len(e) else None
        if nxt in out:  # the failover's outage is the headline; the gap inside it, a line
            at, text = _outage(ax, *out[nxt])
            ax.axvline(mdates.date2num(r.gone_time), color=ORANGE, linewidth=1.5)
        else:
            gaps.append((r.gone_time, until))
            at, text = r.gone_time, f"no controller {duration(until - r.gone_time)}"
        ax.annotate(
            text, (at, r.epoch), xytext=(-4, -14), textcoords="offset points", ha="right", fontsize=8,
            color=VERMILLION,
        )  # fmt: skip
    windows(ax, gaps, ORANGE, alpha=0.5, note=False)
    ax.set_ylabel("controller epoch")
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.set_ylim(e.epoch.min() - 0.5, e.epoch.max() + 0.8)
    by_txns = e.zxid.notna()
    handles = [step]
    if by_txns.any():
        handles.append(Patch(color=ORANGE, alpha=0.5, label="no /controller znode"))
    if out:
        handles += [
            Patch(color=VERMILLION, alpha=0.35, label="no working controller:\nfrom the old one's last sign "
                  "of life\nto the new one's Ready to serve"),
            Patch(color=VERMILLION, alpha=0.12, label="where the last sign of life\nfell (its bounds)"),
        ]  # fmt: skip
    legend_beside(ax, handles)
    clock = (
        "ZooKeeper's clock" if by_txns.all()
        else "the elected brokers' clocks" if not by_txns.any()
        else "ZooKeeper's clock; a broker's where only its line tells an election"
    )  # fmt: skip
    ax.set_title(f"Controller elections ({clock})")
    return fig


def _outage(ax: Any, earliest: Any, latest: Any, ready: Any, said: str) -> tuple[Any, str]:
    """One failover's outage, anchored at its end (exact: Ready to serve): solid from its latest start
    (widened leftwards to MIN_WIDTH), lighter back to its earliest; where to write its length."""
    left, right = ax.get_xlim()
    end = mdates.date2num(ready)
    solid = min(mdates.date2num(latest), end - MIN_WIDTH * (right - left))
    ax.axvspan(solid, end, color=VERMILLION, alpha=0.35, linewidth=0)
    first = min(mdates.date2num(earliest), solid)
    if first < solid:
        ax.axvspan(first, solid, color=VERMILLION, alpha=0.12, linewidth=0)
    return mdates.num2date(first), f"no working controller {said}"


def _outages(e: pd.DataFrame, failovers: Iterable[Finding]) -> dict[int, tuple[Any, Any, Any, str]]:
    """Epoch -> (earliest start, latest start, end, its length as said) of each failover's outage: it
    ends at the election plus the new controller's election -> ready (its own clock: a length)."""
    out = {}
    elected = dict(zip(e.epoch, e.time, strict=True))
    for f in failovers:
        epoch, bounds = f.subject.get("epoch"), f.subject.get("outage_ms")
        if not isinstance(epoch, int) or epoch not in elected or not isinstance(bounds, list):
            continue
        ready = utc(elected[epoch]) + pd.Timedelta(milliseconds=int(f.subject.get("ready_ms") or 0))
        lower, upper = (pd.Timedelta(milliseconds=ms) for ms in bounds)
        said = duration(lower) if lower == upper else f"{duration(lower)} to {duration(upper)}"
        out[epoch] = (ready - upper, ready - lower, ready, said)
    return out


def failover_durations(steps: DataFrame | pd.DataFrame, broker: int, epoch: int) -> Figure:
    """How long each step of one controller's onControllerFailover took (controller.failover_steps): from
    each line of its controller.log to the next, in the order the log has them, through "Ready to serve"
    to the start of its scheduler where logged: between them it resumed the work it found in ZooKeeper
    (reassignments, deletions, preferred elections)."""
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
    ready = [i for i, x in enumerate(s.event) if x == "controller.ready"]
    fig, ax = new_figure(9, 1.2 + 0.35 * len(names))
    ax.barh(range(len(names)), took, color=BLUE)
    for y, ms in enumerate(took):
        ax.annotate(
            f"{ms:.0f} ms", (ms, y), xytext=(3, 0), textcoords="offset points", va="center", fontsize=8
        )
    labels = [n.replace("_", " ") for n in names]
    if ready and ready[0] < len(names):  # the line after ready is its scheduler's: what it resumed
        labels[ready[0]] = "ready: resuming reassignments,\ndeletions, preferred elections"
        ax.axhline(ready[0] - 0.5, color=GREY, linestyle="--", linewidth=0.8)
    ax.set_yticks(range(len(names)), labels)
    ax.invert_yaxis()
    ax.set_ylabel("step (controller.log, in its order)")
    ax.set_xlabel("duration (ms, the broker's clock)")
    ms = lambda i: (s.ts.iloc[i] - s.ts.iloc[0]).total_seconds() * 1000  # noqa: E731
    title = f"Broker {broker} becoming controller (epoch {epoch})\n"
    if ready:
        title += f"{ms(ready[0]):.0f} ms from elected to ready"
        if ready[0] < len(names):
            title += f", then {ms(len(s) - 1) - ms(ready[0]):.0f} ms resuming its work"
    else:
        title += f"{ms(len(s) - 1):.0f} ms from elected to its last step logged"
    ax.set_title(title)
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
