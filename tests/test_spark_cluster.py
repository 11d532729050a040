"""Scale-out: the same triage on a real Spark standalone cluster (a master and a worker started from the
installed pyspark, on loopback) as on local[*], finding for finding. The cluster run is the postmortem
report's (`conftest.cluster_report`): its kernel's Spark pointed at the cluster with WORKBENCH_SPARK_MASTER,
as an SRE would point it, and the triage it was made from is its findings.json."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import STUCK

from workbench.analysis.triage import Triage
from workbench.report import FINDINGS


def comparable(result: dict[str, Any]) -> dict[str, Any]:
    """Findings as a sorted list (the order rows come back in may differ with the partitioning)."""
    plain = json.loads(json.dumps(result, default=str))
    plain["findings"] = sorted(plain["findings"], key=lambda f: json.dumps(f, sort_keys=True))
    return plain


@pytest.mark.slow
def test_triage_on_a_standalone_cluster_equals_local(
    triaged: Callable[[str], Triage], cluster_report: Path
) -> None:
    local = comparable(triaged(STUCK.name).as_dict())
    cluster = comparable(json.loads((cluster_report.parent / FINDINGS).read_text()))
    assert cluster == local
    assert local["findings"] and any(f["severity"] == "critical" for f in local["findings"])
    # the work ran in the worker's executor, not in a local driver
    worker = (cluster_report.parent.parent / "spark" / "worker.out").read_text()
    assert "Asked to launch executor" in worker and "for kafka-forensic-workbench" in worker
