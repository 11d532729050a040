"""Shared fixtures: one SparkSession for the whole run, and the real evidence beside the checkout."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import SparkSession

from workbench.spark import spark_session

REPO = Path(__file__).resolve().parents[1]
REAL_EVIDENCE = REPO.parent / "shared" / "real-evidence"


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    session = spark_session(master=os.environ.get("WORKBENCH_SPARK_MASTER", "local[2]"))
    yield session
    session.stop()


@pytest.fixture(scope="session")
def real_evidence() -> Path:
    """../shared/real-evidence: files written by real clusters. Missing under CI is a failure."""
    if not REAL_EVIDENCE.is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{REAL_EVIDENCE} is missing; CI must have shared/ beside the checkout")
        pytest.skip(f"{REAL_EVIDENCE} not found beside the checkout")
    return REAL_EVIDENCE
