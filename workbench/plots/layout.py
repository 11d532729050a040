"""Whether a figure can be read: no text covering another or cut by the figure's edge, legends beside
the plot and a label on every axis. Tests hold every figure to it; it lays a figure out, never changes it."""

from __future__ import annotations

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.transforms import Bbox


def labels_drawn(fig: Figure) -> list[tuple[str, Bbox]]:
    """Every piece of text the figure shows, where it lands in pixels once drawn: titles, axis labels,
    the tick labels inside the axis's range, offsets, annotations and legends."""
    canvas = FigureCanvasAgg(fig)  # a figure made without pyplot has no canvas that can draw
    canvas.draw()
    out: list[Text] = list(fig.texts)
    for ax in fig.axes:
        out += [ax.title, ax._left_title, ax._right_title, *ax.texts]  # type: ignore[attr-defined]
        for axis, (low, high) in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
            low, high = min(low, high), max(low, high)
            out += [axis.label, axis.get_offset_text()]
            out += [t.label1 for t in axis.get_major_ticks() if low <= t.get_loc() <= high]
        legend = ax.get_legend()
        if legend is not None:
            out += [legend.get_title(), *legend.get_texts()]
    for legend in fig.legends:
        out += [legend.get_title(), *legend.get_texts()]
    renderer = canvas.get_renderer()
    return [
        (t.get_text(), t.get_window_extent(renderer)) for t in out if t.get_visible() and t.get_text().strip()
    ]


def overlapping_labels(fig: Figure) -> list[tuple[str, str]]:
    """Pairs of texts that cover each other (by more than a pixel each way), and texts cut by the
    figure's edge (paired with 'the figure's edge'): a figure passes when this is empty."""
    drawn = labels_drawn(fig)
    edge = fig.bbox.padded(1)
    out = [(text, "the figure's edge") for text, box in drawn if not _within(box, edge)]
    for i, (a, box_a) in enumerate(drawn):
        out += [(a, b) for b, box_b in drawn[i + 1 :] if _overlap(box_a, box_b)]
    return out


def _within(box: Bbox, outer: Bbox) -> bool:
    return box.x0 >= outer.x0 and box.y0 >= outer.y0 and box.x1 <= outer.x1 and box.y1 <= outer.y1


def problems(fig: Figure) -> list[str]:
    """What would stop a reader: texts covering each other or cut by the edge, a legend over a plot, an
    axis without a label (its unit, or what its categories are)."""
    out = [f"{a!r} covers {b!r}" for a, b in overlapping_labels(fig)]
    renderer = FigureCanvasAgg(fig).get_renderer()
    plots = [ax.get_window_extent(renderer) for ax in fig.axes]
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is not None and any(_overlap(legend.get_window_extent(renderer), box) for box in plots):
            out.append(f"the legend of {ax.get_title()!r} lies over a plot")
        for name, label in (("x", ax.get_xlabel()), ("y", ax.get_ylabel())):
            if not label.strip():
                out.append(f"the {name} axis of {ax.get_title()!r} has no label")
    return out


def _overlap(a: Bbox, b: Bbox) -> bool:
    inner = Bbox.intersection(a, b)
    return inner is not None and inner.width > 1 and inner.height > 1
