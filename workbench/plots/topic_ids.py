"""Topic ids: each replica's against ZooKeeper's, and a topic znode's writes (topic_ids)."""

from __future__ import annotations

from collections.abc import Iterable

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch, Rectangle
from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from workbench.plots.base import (
    BLUE,
    GREEN,
    GREY,
    ORANGE,
    PURPLE,
    VERMILLION,
    YELLOW,
    Moment,
    Span,
    frame,
    legend_beside,
    mark_moments,
    new_figure,
    time_axis,
)

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


def topic_id_matrix(
    replica_ids: DataFrame | pd.DataFrame, topic: str, partitions: DataFrame | pd.DataFrame | None = None
) -> Figure:
    """Partition x broker: each replica's partition.metadata id against ZooKeeper's (topic_ids.replica_ids),
    cells labelled with the id's first characters; a blank cell is no replica dir on that broker. With
    `partitions` (ZooKeeper's state now: topic, partition, leader, isr), the leader's cell is framed and a
    replica out of the ISR is crossed: a stale replica matters most where it leads or is in the ISR."""
    r = frame(replica_ids)
    r = r[r.topic == topic]
    if r.empty:
        raise ValueError(f"no replicas of {topic}")
    parts, brokers = sorted(r.partition.unique()), sorted(r.broker_id.unique())
    fig, ax = new_figure(max(6.0, 2 + 1.1 * len(brokers)), 2.2 + 0.32 * len(parts))
    for x in r.itertuples():
        col, row = brokers.index(x.broker_id), parts.index(x.partition)
        ax.add_patch(_cell(col, row, STATE_COLOURS.get(x.state, GREY)))
        if isinstance(x.disk_topic_id, str):
            ax.text(col, row, x.disk_topic_id[:6], ha="center", va="center", fontsize=7)
    marks = []
    if partitions is not None:
        if isinstance(partitions, DataFrame):
            partitions = partitions.where(F.col("topic") == topic).select(
                "topic", "partition", "leader", "isr"
            )
        state = frame(partitions)
        state = state[(state.topic == topic) & state.partition.isin(parts)]
        for x in state.itertuples():
            row = parts.index(x.partition)
            if x.leader in brokers:
                col = brokers.index(x.leader)
                ax.add_patch(Rectangle((col - 0.45, row - 0.45), 0.9, 0.9, fill=False, linewidth=2.2))
            isr = set(x.isr) if x.isr is not None else set()
            for b in r[r.partition == x.partition].broker_id:
                if b not in isr:
                    ax.plot(brokers.index(b) + 0.32, row, marker="x", color="black", markersize=6)
        marks = [
            Patch(facecolor="none", edgecolor="black", linewidth=2, label="leader in ZooKeeper"),
            Line2D([], [], marker="x", color="black", linestyle="none", label="out of the ISR"),
        ]
    ax.set_xlim(-0.5, len(brokers) - 0.5)
    ax.set_ylim(len(parts) - 0.5, -0.5)
    ax.set_xticks(range(len(brokers)), [f"broker {b}" for b in brokers])
    ax.set_yticks(range(len(parts)), [f"{topic}-{p}" for p in parts])
    ax.set_xlabel("broker (data dir)")
    ax.set_ylabel("partition")
    zk = r.zk_topic_id.dropna().unique()
    ax.set_title(
        f"{topic}: each replica's partition.metadata\nagainst ZooKeeper's {zk[0] if len(zk) else 'no id'}"
    )
    seen = [s for s in STATE_COLOURS if s in set(r.state)]
    legend_beside(ax, [Patch(color=STATE_COLOURS[s], label=STATE_LABELS[s]) for s in seen] + marks)
    return fig


def _cell(col: int, row: int, colour: str) -> Rectangle:
    """One square of the matrix, centred on its broker and partition."""
    return Rectangle((col - 0.5, row - 0.5), 1, 1, facecolor=colour, edgecolor="white", linewidth=2)


def znode_versions(
    history: DataFrame | pd.DataFrame,
    topic: str,
    marks: Iterable[Moment] | None = None,
    span: Span | None = None,
) -> Figure:
    """Every write to /brokers/topics/<topic> (topic_ids.znode_history): the topic_id it left, who wrote it
    (a controller's fenced write, or a session no broker owns), the zxid and the partitions it left (6 ->
    12 where a write added some), on ZooKeeper's clock; the note of a write close after another on its
    row goes below it, so that neither hides the other."""
    h = frame(history)
    h = h[h.topic == topic].sort_values("zxid").reset_index(drop=True)
    if h.empty:
        raise ValueError(f"no writes to /brokers/topics/{topic}")
    ids = list(dict.fromkeys("none" if pd.isna(i) else i for i in h.topic_id))
    ys = ["none" if pd.isna(i) else i for i in h.topic_id]
    fig, ax = new_figure(11, 2.6 + 0.6 * len(ids))
    time_axis(ax, span, *h.time)
    # a 7-pt character is about 0.6 em wide and the axes about two thirds of the figure: how far a note
    # reaches along the axis, so that one starting within the previous note on its row goes below it
    em = pd.Timedelta(days=7 * 0.6 / (fig.get_figwidth() * 72 * 0.65) * (ax.get_xlim()[1] - ax.get_xlim()[0]))
    ax.step(h.time, [ids.index(y) for y in ys], where="post", color=GREY, linewidth=1, zorder=1)
    last: dict[int, tuple[pd.Timestamp, bool]] = {}  # row: where the previous note ends, whether below
    before = None  # the partitions the previous write left
    for i, w in h.iterrows():
        row, by_broker = ids.index(ys[i]), not pd.isna(w.writer_broker)
        ax.scatter(
            w.time,
            row,
            s=70,
            zorder=2,
            marker="o" if by_broker else "^",
            color=BLUE if by_broker else VERMILLION,
        )
        who = f"broker {int(w.writer_broker)}" if by_broker else f"session {int(w.session_id):#x}"
        note = f"{w.op} zxid {int(w.zxid):#x}\n{who}, v{w.znode_version}"
        if "partitions" in h and not pd.isna(w.partitions):
            grew = f"{before} -> " if before is not None and before != w.partitions else ""
            note += f"\n{grew}{int(w.partitions)} partitions"
            before = int(w.partitions)
        below = row in last and w.time < last[row][0] and not last[row][1]
        last[row] = (w.time + em * (2 + max(map(len, note.split("\n")))), below)
        ax.annotate(
            note,
            (w.time, row),
            xytext=(5, -6 if below else 6),
            textcoords="offset points",
            va="top" if below else "bottom",
            fontsize=7,
        )
    ax.set_yticks(range(len(ids)), ["no topic_id" if i == "none" else i for i in ids])
    ax.set_ylim(-0.8, len(ids) - 0.2)
    ax.set_ylabel("topic_id in the znode")
    key = mark_moments(ax, marks)
    legend_beside(
        ax,
        [
            ax.scatter([], [], marker="o", color=BLUE, label="written by a broker's session\n(controller)"),
            ax.scatter([], [], marker="^", color=VERMILLION, label="written by a session\nno broker owns"),
            *key,
        ],
        "v: the znode's JSON format version",
    )
    ax.set_title(f"/brokers/topics/{topic}: every write and the topic_id it left (ZooKeeper's clock)")
    return fig
