"""Triage at incident scale (30 brokers, 10,000 partitions) brings answers to the driver, not raw rows:
every action's result is counted, and none returns as many rows as the bundle has topics (so nothing is
collected per partition, per replica, per znode or per log line)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from pyspark.sql.classic.dataframe import DataFrame

import workbench
from workbench.analysis.triage import triage
from workbench.frames import open_bundle
from workbench.model.timeline import timeline
from workbench.model.views import views
from workbench.simulate.run import simulate
from workbench.simulate.scenarios import Scale

SCALE = Scale(brokers=30, topics=100, partitions=100, hours=0.1)


@pytest.fixture
def rows_to_driver(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """The row count of every result Spark hands to Python (collect, and the Arrow path of toPandas;
    take, first and head go through collect)."""
    counts: list[int] = []
    collect, arrow = DataFrame.collect, DataFrame._collect_as_arrow

    def counted_collect(self: DataFrame) -> Any:
        rows = collect(self)
        counts.append(len(rows))
        return rows

    def counted_arrow(self: DataFrame, *args: Any, **kwargs: Any) -> Any:
        batches = arrow(self, *args, **kwargs)
        counts.append(sum(b.num_rows for b in batches))
        return batches

    monkeypatch.setattr(DataFrame, "collect", counted_collect)
    monkeypatch.setattr(DataFrame, "_collect_as_arrow", counted_arrow)
    monkeypatch.setattr(DataFrame, "toLocalIterator", None)  # would stream raw rows: must not be used
    yield counts


@pytest.mark.slow
def test_triage_of_ten_thousand_partitions_collects_no_raw_rows(
    spark: SparkSession, tmp_path: Path, rows_to_driver: list[int]
) -> None:
    truth = simulate("topicid-mismatch", tmp_path / "big", 1, "2.8.2", SCALE, noise_rate=0.0)
    bundle = open_bundle(tmp_path / "big", spark)
    result = triage(bundle)
    assert rows_to_driver and result.critical  # it ran, and found the incident
    h = workbench.health(bundle)
    assert h is not None and h.minutes.count() >= 6 and h.brokers.count() >= 30 * 6  # 0.1 h, 30 brokers
    assert timeline(bundle).count() > 3 * SCALE.topics * SCALE.partitions  # every txn, line and file
    assert max(rows_to_driver) < SCALE.topics, sorted(rows_to_driver)[-5:]
    rows_to_driver.clear()
    partitions = views(bundle).partitions.count()
    assert partitions == sum(t["partitions"] for t in truth["topics"].values()) >= 10_000
    assert bundle.partition_metadata.count() > 2 * partitions
    assert bundle.log_events.count() > 10 * partitions
    assert len(views(bundle).evidence.brokers) == 30
