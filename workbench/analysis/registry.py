"""Every analysis triage runs, in one place: triage, the report's figures and the truth tests read this.
Adding an analysis is its module (an `Analysis`, contract.py) and one line here."""

from __future__ import annotations

from workbench.analysis import (
    balance,
    controller,
    data_loss,
    deletion,
    down,
    health,
    held_back,
    in_flight,
    leaderless,
    lifecycle,
    reassignment,
    topic_ids,
    typos,
)
from workbench.analysis.contract import Analysis, Kind

# In the order the report draws their figures: the cluster's health first.
ANALYSES: tuple[Analysis, ...] = (
    health.ANALYSIS,
    leaderless.ANALYSIS,
    down.ANALYSIS,
    controller.ANALYSIS,
    topic_ids.ANALYSIS,
    deletion.ANALYSIS,
    data_loss.ANALYSIS,
    balance.ANALYSIS,
    held_back.ANALYSIS,
    reassignment.ANALYSIS,
    lifecycle.ANALYSIS,
    typos.ANALYSIS,
    in_flight.ANALYSIS,
)


def kinds() -> dict[str, Kind]:
    """Every finding kind an analysis may emit, by name."""
    out: dict[str, Kind] = {}
    for a in ANALYSES:
        for k in a.kinds:
            if k.name in out:
                raise ValueError(f"finding kind {k.name} is declared twice")
            out[k.name] = k
    return out
