"""How a finding says a duration's bounds (`findings.bounds`): pure, no Spark."""

from __future__ import annotations

from workbench.analysis.findings import bounds


def test_bounds_that_read_the_same_are_said_once() -> None:
    assert bounds(2_117_493, 2_118_152) == "35.3 min"  # not '35.3 to 35.3 min'
    assert bounds(2_700_000, 2_905_000) == "45.0 to 48.4 min"
    assert bounds(12_000, 19_600) == "12.0 s to 19.6 s"
    assert bounds(1_000, 300_000) == "1.0 s to 5.0 min"
    assert bounds(90_000, 90_000) == "90.0 s"
