"""Figures for postmortems and notebooks. Each takes an analysis's output (a small Spark DataFrame of
aggregates, or its pandas copy) and returns a matplotlib Figure, so tests, notebooks and the report share
them; nothing here works out what an analysis should.

Times are UTC (the workbench's Spark session is). Colours are Okabe and Ito's colour-blind-safe palette.
Figures are made without pyplot: no global state, no display needed; Jupyter shows a returned Figure.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

import matplotlib.dates as mdates
import pandas as pd
from matplotlib import colormaps
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch
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


def _utc(at: datetime | str) -> pd.Timestamp:
    """A moment as the naive UTC timestamps Spark hands over (its session time zone is UTC)."""
    t = pd.Timestamp(at)
    return t.tz_convert("UTC").tz_localize(None) if t.tzinfo is not None else t


def _figure(width: float, height: float, cols: int = 1) -> tuple[Figure, Any]:
    """A figure with one Axes, or a list of `cols` side by side."""
    fig = Figure(figsize=(width, height), layout="constrained")
    return fig, fig.subplots(1, cols) if cols > 1 else fig.subplots()


def _time_axis(ax: Axes) -> None:
    locator = mdates.AutoDateLocator(tz="UTC")
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator, tz="UTC"))
    ax.set_xlabel("time (UTC)")


def _mark(ax: Axes, moments: Iterable[Moment] | None) -> None:
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
    stop = _utc(end) if end is not None else times.max() + (times.max() - times.min()) * 0.05
    down = frame(offline) if offline is not None else pd.DataFrame(columns=["broker", "down", "up"])
    fig, ax = _figure(10, 1.2 + 0.28 * len(p))
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
    _time_axis(ax)
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


def controller_epochs(elections: DataFrame | pd.DataFrame, end: datetime | None = None) -> Figure:
    """The controller epoch over time (controller.elections), each step labelled with its winner, and the
    gaps with no controller (its session or znode gone, nobody elected yet) shaded, on ZooKeeper's clock."""
    e = frame(elections).sort_values("zxid").reset_index(drop=True)
    if e.empty:
        raise ValueError("no elections to draw")
    seen = pd.concat([e.time, e.gone_time]).dropna()
    last = (
        _utc(end)
        if end is not None
        else seen.max() + max((seen.max() - seen.min()) * 0.05, pd.Timedelta(1, "s"))
    )
    fig, ax = _figure(10, 3.8)
    xs, ys = [*e.time, last], [*e.epoch, e.epoch.iloc[-1]]
    ax.step(xs, ys, where="post", color=BLUE, linewidth=2, label="controller epoch (/controller_epoch)")
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
        ax.axvspan(r.gone_time, until, color=VERMILLION, alpha=0.25)
        gap = (until - r.gone_time).total_seconds()
        ax.annotate(
            f"no controller {gap * 1000:.0f} ms" if gap < 10 else f"no controller {gap:.0f} s",
            (r.gone_time, r.epoch),
            xytext=(-4, -14),
            textcoords="offset points",
            ha="right",
            fontsize=8,
            color=VERMILLION,
        )
    ax.set_ylabel("controller epoch")
    ax.yaxis.get_major_locator().set_params(integer=True)
    ax.set_ylim(e.epoch.min() - 0.5, e.epoch.max() + 0.8)
    _time_axis(ax)
    gap = Patch(color=VERMILLION, alpha=0.25, label="no controller")
    ax.legend(handles=[*ax.get_lines(), gap], loc="upper left", fontsize=8)
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
    fig, ax = _figure(9, 1.2 + 0.35 * len(names))
    ax.barh(range(len(names)), took, color=BLUE)
    for y, ms in enumerate(took):
        ax.annotate(
            f"{ms:.0f} ms", (ms, y), xytext=(3, 0), textcoords="offset points", va="center", fontsize=8
        )
    ax.set_yticks(range(len(names)), [n.replace("_", " ") for n in names])
    ax.invert_yaxis()
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
    fig, (left, right) = _figure(11, 4, cols=2)
    ids = sorted(b.broker.unique())
    for k, (colour, name, bucket) in enumerate(
        (
            (SKY_BLUE, "before", starts[starts + width <= _utc(before)].max()),
            (BLUE, "after", starts[starts <= _utc(after)].max()),
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
        ax.legend(fontsize=8)
    right.axhline(threshold, color=VERMILLION, linestyle="--", label="leader.imbalance.per.broker.percentage")
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
    right.set_ylabel("imbalance ratio (not leading / preferred)")
    left.set_title("Leaders per broker")
    right.set_title("Leader imbalance per broker (the controller's rule)")
    return fig


def partition_health(minutes: DataFrame | pd.DataFrame, marks: Iterable[Moment] | None = None) -> Figure:
    """Offline, under-replicated and under-min-ISR partitions per bucket (health's `minutes`): the count
    at each bucket's end as a line, the peak within it as a band, with the key moments marked."""
    m = frame(minutes).sort_values("minute")
    fig, ax = _figure(10, 4)
    for name, colour in (("offline", VERMILLION), ("under_replicated", ORANGE), ("under_min_isr", PURPLE)):
        if name not in m or m[name].isna().all():
            continue
        ax.step(m.minute, m[name], where="post", color=colour, label=name.replace("_", " "))
        if f"{name}_peak" in m:
            ax.fill_between(m.minute, m[name], m[f"{name}_peak"], step="post", color=colour, alpha=0.2)
    ax.set_ylabel("partitions")
    ax.set_ylim(bottom=0)
    ax.yaxis.get_major_locator().set_params(integer=True)
    _time_axis(ax)
    _mark(ax, marks)
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
    partition coloured by how many replicas are in sync."""
    p = frame(partitions)
    p = p[p.topic == topic].sort_values(["partition", "zxid"])
    if p.empty:
        raise ValueError(f"no partition changes of {topic}")
    stop = _utc(end) if end is not None else p.time.max()
    size = p.isr.map(lambda isr: None if isr is None else len(isr))
    top = int(max(size.max(), p.replicas.map(lambda r: 0 if r is None else len(r)).max()))
    # none in sync vermillion, all green, the sizes between from the rest of the palette
    shades: list[Any] = [VERMILLION, *[ORANGE, SKY_BLUE, YELLOW][: max(top - 1, 0)], GREEN][: top + 1]
    if top > 4:
        shades = [colormaps["viridis"](n / top) for n in range(top + 1)]
    parts = sorted(p.partition.unique())
    fig, ax = _figure(10, 1.4 + 0.25 * len(parts))
    for y, part in enumerate(parts):
        rows = p[p.partition == part]
        ends = [*rows.time.iloc[1:], stop]
        for start, until, n in zip(rows.time, ends, size[rows.index], strict=True):
            if not pd.isna(n):  # no state znode (yet, or any more): no ISR to show
                ax.barh(y, until - start, left=start, height=0.8, color=shades[int(n)])
    ax.set_yticks(range(len(parts)), [f"{topic}-{x}" for x in parts])
    ax.invert_yaxis()
    _time_axis(ax)
    _mark(ax, marks)
    ax.legend(
        handles=[Patch(color=c, label=f"{n} in sync") for n, c in enumerate(shades)],
        loc="upper center",
        bbox_to_anchor=(0.5, -0.2),
        ncols=top + 1,
        fontsize=8,
        frameon=False,
    )
    ax.set_title(f"ISR size of each partition of {topic} (ZooKeeper's history)")
    return fig


STATE_COLOURS = {
    "match": GREEN,
    "mismatch": VERMILLION,
    "zk_missing": ORANGE,
    "no_metadata": YELLOW,
    "no_topic": PURPLE,
}
STATE_LABELS = {
    "match": "same id as ZooKeeper",
    "mismatch": "another id than ZooKeeper's",
    "zk_missing": "ZooKeeper has no topic_id",
    "no_metadata": "no partition.metadata",
    "no_topic": "topic not in ZooKeeper",
}


def topic_id_matrix(replica_ids: DataFrame | pd.DataFrame, topic: str) -> Figure:
    """Partition x broker: each replica's partition.metadata id against ZooKeeper's (topic_ids.replica_ids),
    cells labelled with the id's first characters; a blank cell is no replica dir on that broker."""
    r = frame(replica_ids)
    r = r[r.topic == topic]
    if r.empty:
        raise ValueError(f"no replicas of {topic}")
    parts, brokers = sorted(r.partition.unique()), sorted(r.broker_id.unique())
    fig, ax = _figure(max(6.0, 2 + 1.1 * len(brokers)), 2.2 + 0.32 * len(parts))
    for x in r.itertuples():
        col, row = brokers.index(x.broker_id), parts.index(x.partition)
        ax.add_patch(_cell(col, row, STATE_COLOURS.get(x.state, GREY)))
        if isinstance(x.disk_topic_id, str):
            ax.text(col, row, x.disk_topic_id[:6], ha="center", va="center", fontsize=7)
    ax.set_xlim(-0.5, len(brokers) - 0.5)
    ax.set_ylim(len(parts) - 0.5, -0.5)
    ax.set_xticks(range(len(brokers)), [f"broker {b}" for b in brokers])
    ax.set_yticks(range(len(parts)), [f"{topic}-{p}" for p in parts])
    ax.set_xlabel("broker (data dir)")
    zk = r.zk_topic_id.dropna().unique()
    ax.set_title(
        f"{topic}: each replica's partition.metadata\nagainst ZooKeeper's {zk[0] if len(zk) else 'no id'}"
    )
    seen = [s for s in STATE_COLOURS if s in set(r.state)]
    ax.legend(
        handles=[Patch(color=STATE_COLOURS[s], label=STATE_LABELS[s]) for s in seen],
        loc="upper center",
        bbox_to_anchor=(0.5, -0.12),
        ncols=2,
        fontsize=8,
        frameon=False,
    )
    return fig


def _cell(col: int, row: int, colour: str) -> Any:
    from matplotlib.patches import Rectangle

    return Rectangle((col - 0.5, row - 0.5), 1, 1, facecolor=colour, edgecolor="white", linewidth=2)


def znode_versions(
    history: DataFrame | pd.DataFrame, topic: str, marks: Iterable[Moment] | None = None
) -> Figure:
    """Every write to /brokers/topics/<topic> (topic_ids.znode_history): the topic_id it left, who wrote it
    (a controller's fenced write, or a session no broker owns) and the zxid, on ZooKeeper's clock."""
    h = frame(history)
    h = h[h.topic == topic].sort_values("zxid").reset_index(drop=True)
    if h.empty:
        raise ValueError(f"no writes to /brokers/topics/{topic}")
    ids = list(dict.fromkeys("none" if pd.isna(i) else i for i in h.topic_id))
    ys = ["none" if pd.isna(i) else i for i in h.topic_id]
    fig, ax = _figure(10, 2.6 + 0.55 * len(ids))
    ax.step(h.time, [ids.index(y) for y in ys], where="post", color=GREY, linewidth=1, zorder=1)
    for i, w in h.iterrows():
        by_broker = not pd.isna(w.writer_broker)
        ax.scatter(
            w.time,
            ids.index(ys[i]),
            s=70,
            zorder=2,
            marker="o" if by_broker else "^",
            color=BLUE if by_broker else VERMILLION,
        )
        who = f"broker {int(w.writer_broker)}" if by_broker else f"session {int(w.session_id):#x}"
        ax.annotate(
            f"{w.op} zxid {int(w.zxid):#x}\n{who}, v{w.znode_version}",
            (w.time, ids.index(ys[i])),
            xytext=(5, 6),
            textcoords="offset points",
            fontsize=7,
        )
    ax.set_yticks(range(len(ids)), ["no topic_id" if i == "none" else i for i in ids])
    ax.set_ylim(-0.6, len(ids) - 0.2)
    ax.set_ylabel("topic_id in the znode")
    _time_axis(ax)
    _mark(ax, marks)
    ax.legend(
        handles=[
            ax.scatter([], [], marker="o", color=BLUE, label="written by a broker's session (controller)"),
            ax.scatter([], [], marker="^", color=VERMILLION, label="written by a session no broker owns"),
        ],
        loc="lower right",
        fontsize=8,
    )
    ax.set_title(f"/brokers/topics/{topic}: every write and the topic_id it left (ZooKeeper's clock)")
    return fig
