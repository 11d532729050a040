"""Figures for postmortems and notebooks. Each takes an analysis's output (a small Spark DataFrame of
aggregates, or its pandas copy) and returns a matplotlib Figure, so tests, notebooks and the report share
them; nothing here works out what an analysis should. One module per flow; all are named here.

Times are UTC (the workbench's Spark session is); time axes run over the evidence's span (views.span) to
the capture. Colours are Okabe and Ito's colour-blind-safe palette. `layout.problems` says what would stop
a reader (a label covering another, a legend over a plot, an axis without a label); the tests hold every
report figure to it.
Figures are made without pyplot: no global state, no display needed; a notebook shows a returned Figure
once the inline backend is on (`%matplotlib inline`).
"""

from workbench.plots.base import (
    BLACK,
    BLUE,
    GREEN,
    GREY,
    MAX_ROWS,
    ORANGE,
    PURPLE,
    SKY_BLUE,
    VERMILLION,
    YELLOW,
    Moment,
    frame,
    moments,
)
from workbench.plots.controller import chain_frame, controller_epochs, failover_durations, leader_balance
from workbench.plots.deletion import deletion_gantt
from workbench.plots.health import isr_sizes, partition_health
from workbench.plots.topic_ids import topic_id_matrix, znode_versions

__all__ = [
    "BLACK", "BLUE", "GREEN", "GREY", "MAX_ROWS", "ORANGE", "PURPLE", "SKY_BLUE", "VERMILLION", "YELLOW",
    "Moment", "chain_frame", "controller_epochs", "deletion_gantt", "failover_durations", "frame",
    "isr_sizes", "leader_balance", "moments", "partition_health", "topic_id_matrix", "znode_versions",
]  # fmt: skip
