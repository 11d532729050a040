"""The report's figures, one function per analysis (its `Analysis.plots` names it): each draws what its
analysis found, only where the evidence for it exists, and says why when a figure cannot be drawn."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any

import pandas as pd

from workbench import plots
from workbench.analysis import deletion as deletion_of
from workbench.analysis import topic_ids as ids_of
from workbench.kafka import defaults
from workbench.model import elections as elections_of
from workbench.model import health as health_of
from workbench.model.history import controllers
from workbench.model.views import views

if TYPE_CHECKING:
    from matplotlib.figure import Figure
    from pyspark.sql import DataFrame

    from workbench.analysis.triage import Triage
    from workbench.frames import Bundle

MAX_TOPIC_PLOTS = 4  # per kind of per-topic plot: a report is read, not searched
Figures = list[tuple[str, "Figure | str"]]


@dataclass
class Drawing:
    """What every figure of one report shares: the bundle, what triage found, the time span and the
    moments (elections, offline windows) marked on every time axis."""

    bundle: Bundle
    result: Triage

    @cached_property
    def span(self) -> tuple[datetime, datetime] | None:
        return views(self.bundle).span

    @cached_property
    def offline(self) -> DataFrame:
        return health_of.offline_windows(self.bundle).cache()

    @cached_property
    def elections(self) -> pd.DataFrame:
        """The controller chain, from whichever evidence tells each election (`history/controllers.py`)."""
        return plots.chain_frame(controllers.controller_chain(self.bundle))

    @cached_property
    def marks(self) -> list[plots.Moment]:
        return plots.moments(self.elections, self.offline)

    def topics(self, *prefixes: str) -> list[str]:
        """The topics the findings of these kinds name, most severe first, at most MAX_TOPIC_PLOTS."""
        named = [
            f.subject.get("topic")
            for f in self.result.findings
            if any(f.kind == p or f.kind.startswith(p) for p in prefixes)
        ]
        return list(dict.fromkeys(t for t in named if isinstance(t, str)))[:MAX_TOPIC_PLOTS]


def health(d: Drawing) -> Figures:
    """The cluster's partitions over time, and leadership at the start and at the capture."""
    out: Figures = []
    h = health_of.health(d.bundle)
    if h is None:
        return out
    leaderless = health_of.leaderless_windows(h, health_of.captured_at(d.bundle))
    every = views(d.bundle).partitions.count()
    _add(out, "Partition health", plots.partition_health, h.minutes, d.marks, d.span, leaderless, every)
    first = h.minutes.agg({"minute": "min"}).collect()[0][0]
    ev = views(d.bundle).evidence
    setting = "leader.imbalance.per.broker.percentage"
    percentages = ev.config(setting, defaults.BROKER[setting]).values()
    threshold = max((float(p) for p in percentages), default=float(defaults.BROKER[setting])) / 100
    end_of_first = first + pd.Timedelta(minutes=1)  # health's default bucket
    title = "Leadership at the start and at the capture"
    _add(out, title, plots.leader_balance, h.brokers, end_of_first, h.last, threshold)
    return out


def controller(d: Drawing) -> Figures:
    """The controller epochs, and each failover's steps where the new controller's log has them."""
    out: Figures = []
    if d.elections.epoch.isna().all():
        return out
    failovers = [f for f in d.result.findings if f.kind == "controller.failover"]
    _add(out, "Controller elections", plots.controller_epochs, d.elections, d.span, failovers)
    steps = elections_of.failover_steps(d.bundle).cache()
    logged = {(r.broker_id, r.epoch) for r in steps.select("broker_id", "epoch").distinct().collect()}
    for e in d.elections.iloc[1:].itertuples():
        if (e.broker, e.epoch) in logged:
            title = f"Failover to broker {e.broker} (epoch {e.epoch})"
            _add(out, title, plots.failover_durations, steps, e.broker, e.epoch)
    return out


def topic_ids(d: Drawing) -> Figures:
    """For each topic a topic-id finding names: the ids on its replicas, its znode's writes, its ISRs."""
    out: Figures = []
    mismatched = d.topics("topic_id.")
    if not mismatched:
        return out
    ids = ids_of.replica_ids(d.bundle)
    writes = ids_of.znode_history(d.bundle).cache()
    h = health_of.health(d.bundle)
    for t in mismatched:
        _add(out, f"Topic ids of {t}", plots.topic_id_matrix, ids, t, views(d.bundle).partitions)
        _add(out, f"Writes to /brokers/topics/{t}", plots.znode_versions, writes, t, d.marks, d.span)
        if h is not None:
            of_t = h.partitions.where(h.partitions.topic == t)
            _add(out, f"ISR sizes of {t}", plots.isr_sizes, of_t, t, d.span, d.marks)
    return out


def deletion(d: Drawing) -> Figures:
    """Each deletion the findings name, replica by replica."""
    out: Figures = []
    for t in d.topics("deletion.stuck", "deletion.completed"):
        progress = deletion_of.replica_progress(d.bundle, t)
        _add(out, f"Deletion of {t}", plots.deletion_gantt, progress, d.offline, d.span)
    return out


def _add(out: Figures, title: str, draw: Callable[..., Figure], *args: Any) -> None:
    """A plot, or why it was not drawn: its function's ValueError (nothing to draw, too many rows)."""
    try:
        out.append((title, draw(*args)))
    except ValueError as e:
        out.append((title, f"not drawn: {e}"))
