"""Damaged copies of the samples against their intact copy: damage may hide a finding or a detail, and
coverage names what it hid; it never adds one the intact evidence lacks."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import SAMPLE_DATA
from pyspark.sql import SparkSession

from workbench.analysis import deletion, topic_ids
from workbench.analysis.findings import Coverage, Status
from workbench.analysis.triage import Triage
from workbench.frames import open_bundle

MISMATCH = "topicid-mismatch-2.8"


def _copy(tmp: Path, name: str) -> Path:
    out = tmp / name
    shutil.copytree(SAMPLE_DATA / name, out)
    return out


@pytest.mark.slow
def test_an_unreadable_partition_metadata_makes_the_check_partial_and_names_the_file(
    spark: SparkSession, tmp_path: Path, triaged: Callable[[str], Triage]
) -> None:
    damaged = _copy(tmp_path, MISMATCH)
    garbage = damaged / "brokers" / "3" / "datadirs" / "0" / "orders-2" / "partition.metadata"
    garbage.write_bytes(b"\x8b\x1f garbage, not Kafka's\n")
    coverage = Coverage()
    found = [f for f in topic_ids.ANALYSIS.findings(open_bundle(damaged, spark), coverage)]
    intact = {(f.kind, f.subject.get("broker")): f for f in triaged(MISMATCH).of_kind("topic_id.mismatch")}
    mismatches = {(f.kind, f.subject.get("broker")): f for f in found if f.kind == "topic_id.mismatch"}
    assert set(mismatches) == set(intact)
    for key, f in mismatches.items():  # a detail hidden (broker 3's orders 2), none added
        assert set(f.subject["partitions"]) <= set(intact[key].subject["partitions"])
    assert mismatches["topic_id.mismatch", 3].subject["partitions"] == [5]
    check = coverage["topic_ids"]
    assert check.status is Status.PARTIAL
    (said,) = [m for m in check.missing if "partition.metadata" in m]
    assert said.startswith("brokers/3/datadirs/0/orders-2/partition.metadata: unreadable (")


@pytest.mark.slow
def test_a_brokers_folder_removed_leaves_its_replicas_unknown_never_left(
    spark: SparkSession, tmp_path: Path, triaged: Callable[[str], Triage]
) -> None:
    name = "deletion-stuck-2.8"
    damaged = _copy(tmp_path, name)
    shutil.rmtree(damaged / "brokers" / "1")
    (intact,) = triaged(name).of_kind("deletion.stuck")
    found = deletion.ANALYSIS.findings(open_bundle(damaged, spark), Coverage())
    (stuck,) = [f for f in found if f.kind == "deletion.stuck"]
    assert stuck.subject["replicas_left"] == intact.subject["replicas_left"]
    assert set(stuck.subject["brokers_down"]) <= set(intact.subject["brokers_down"])
    assert {r.split("@")[1] for r in stuck.subject["replicas_unknown"]} == {"1"}
    assert "on broker(s) 1 are still on disk is not known" in stuck.summary
    assert "replicas_unknown" not in intact.subject
