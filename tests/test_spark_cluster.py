"""Scale-out: the same triage on a real Spark standalone cluster (a master and a worker started from the
installed pyspark, on loopback) as on local[*], finding for finding. The cluster run is `workbench triage`
in its own process with WORKBENCH_SPARK_MASTER, as an SRE would point it at a cluster."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from workbench.analysis.triage import Triage
from workbench.testing.spark_standalone import SparkStandalone

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data" / "topicid-mismatch-2.8"


def comparable(result: dict[str, Any]) -> dict[str, Any]:
    """Findings as a sorted list (the order rows come back in may differ with the partitioning)."""
    plain = json.loads(json.dumps(result, default=str))
    plain["findings"] = sorted(plain["findings"], key=lambda f: json.dumps(f, sort_keys=True))
    return plain


@pytest.mark.slow
def test_triage_on_a_standalone_cluster_equals_local(
    triaged: Callable[[str], Triage], tmp_path: Path
) -> None:
    local = comparable(triaged(SAMPLE.name).as_dict())
    cluster = SparkStandalone(tmp_path / "spark", cores=2, memory="2g")
    cluster.start()
    try:
        env = {**os.environ, "WORKBENCH_SPARK_MASTER": cluster.url, "SPARK_DRIVER_MEMORY": "2g"}
        run = subprocess.run(
            [sys.executable, "-m", "workbench.cli", "triage", str(SAMPLE), "--format", "json"],
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )
    finally:
        cluster.stop()
    assert run.returncode == 1, run.stderr[-3000:]  # 1: something is critical, as on local[*]
    assert comparable(json.loads(run.stdout)) == local
    assert local["findings"]
    # the work ran in the worker's executor, not in a local driver
    worker = (tmp_path / "spark" / "worker.out").read_text()
    assert "Asked to launch executor" in worker and "for kafka-forensic-workbench" in worker
