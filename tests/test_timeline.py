"""One timeline on ZooKeeper's clock: each broker's skew estimated from ordered line/txn pairs recovers the
simulator's --clock-skew-ms within the bounds it prints; corrected, a broker's line never comes before the
txn it reports; the CLI prints the timeline of every sample bundle."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from conftest import SAMPLE_DATA, samples
from pyspark.sql import functions as F
from stories import SKEWED, Stories

from workbench.cli import main, parser
from workbench.cli import timeline as cli_timeline
from workbench.frames import Bundle
from workbench.model.skew import skew
from workbench.model.timeline import milestones, timeline

SAMPLES = samples("manifest.json")


@pytest.mark.parametrize("name", sorted(SKEWED))
def test_the_skew_estimate_recovers_each_brokers_clock_within_its_bounds(stories: Stories, name: str) -> None:
    truth = stories.truth(name)
    estimates = {s.broker: s for s in skew(stories.bundle(name))}
    assert set(estimates) == {int(b) for b in truth["clock_skew_ms"]}
    assert any(abs(ms) > 1000 for ms in truth["clock_skew_ms"].values())  # the clocks really were off
    for b, ms in truth["clock_skew_ms"].items():
        s = estimates[int(b)]
        assert s.estimate_ms is not None, s
        assert s.lower_ms is not None and s.upper_ms is not None and s.lower_ms <= ms <= s.upper_ms, (s, ms)
        assert s.upper_ms - s.lower_ms < 100 and s.pairs >= 2  # tight: registration and session pairs


def test_corrected_a_brokers_line_comes_after_the_txn_it_reports(stories: Stories) -> None:
    """Registrations: the create of /brokers/ids/N comes before "Registered broker N" on the merged
    timeline, with the correction; without it, a clock running behind puts the line first."""
    truth = stories.truth("deletion-stuck@3.6.2#5s")
    assert min(truth["clock_skew_ms"].values()) < -1000
    bundle = stories.bundle("deletion-stuck@3.6.2#5s")

    def out_of_order(rows: Any) -> int:
        lines = rows.where(F.col("kind") == "broker.registered").select(
            "broker_id", F.col("time").alias("line"), F.col("detail")
        )
        creates = rows.where(
            (F.col("kind") == "zk.create") & F.col("detail").startswith("/brokers/ids/")
        ).select(F.col("broker_id"), F.col("time").alias("txn"))
        paired = lines.join(creates, "broker_id").where(
            F.abs(F.unix_millis("line") - F.unix_millis("txn")) < 10_000
        )
        assert paired.count() >= len(truth["clock_skew_ms"])
        return paired.where(F.col("line") < F.col("txn")).count()

    assert out_of_order(timeline(bundle, kinds=None)) == 0
    assert out_of_order(timeline(bundle, skews=[])) > 0  # a broker whose clock is behind


def test_filters_narrow_the_timeline(sample: Callable[[str], Bundle]) -> None:
    bundle = sample("topicid-mismatch-2.8")
    one = timeline(bundle, topic="orders", partition=0)
    kinds = {r.kind for r in one.select("kind").distinct().collect()}
    sources = {r.source for r in one.select("source").distinct().collect()}
    assert {"zookeeper", "log", "datadir"} <= sources and "zk.setData" in kinds and "isr.shrink" in kinds
    assert one.where((F.col("topic") != "orders") | (F.col("partition") != 0)).count() == 0
    isr = timeline(bundle, kinds="isr.", broker=1)
    assert isr.where(~F.col("kind").startswith("isr.") | (F.col("broker_id") != 1)).count() == 0
    times = [r.time for r in one.select("time").collect()]  # ordered on one clock
    assert times == sorted(times)


def test_milestones_keep_the_incident_and_say_what_they_stand_for(sample: Callable[[str], Bundle]) -> None:
    """The postmortem's timeline: the elections, the restarts, the old tool's write and the refusals are
    there, each kind once per broker, topic and minute with the rows it stands for; routine lines are not."""
    name = "topicid-mismatch-2.8"
    bundle = sample(name)
    truth = json.loads((SAMPLE_DATA / name / "truth.json").read_text())
    rows = milestones(bundle).collect()
    kinds = [r.kind for r in rows]
    assert kinds.count("controller.elected") == len(truth["controllers"])
    assert kinds.count("broker.shut_down") == len(truth["broker_restarts"])
    removed = next(c for c in truth["topic_id_changes"] if c["to"] is None)
    assert any(r.zxid == removed["zxid"] and r.kind == "zk.setData" and r.topic == "orders" for r in rows)
    refused = [r for r in rows if r.kind == "topic_id.mismatch"]
    lines = timeline(bundle, kinds="topic_id.mismatch").count()
    assert 0 < len(refused) < lines and sum(r.rows for r in refused) == lines
    assert not {"isr.updated", "partition.became_follower", "zk.check", "file.modified"} & set(kinds)
    assert [r.time for r in rows] == sorted(r.time for r in rows)


def _printed(bundle: Bundle, name: str, options: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """What `workbench timeline` prints for the sample with these options, from its shared bundle."""
    cli_timeline.show(bundle, parser().parse_args(["timeline", str(SAMPLE_DATA / name), *options]))
    return capsys.readouterr().out


def _controller_records(printed: str, name: str) -> None:
    records = [json.loads(x) for x in printed.splitlines()]
    events = [r for r in records if r["record"] == "event"]
    assert events and all(r["kind"].startswith("controller.") and r["ref"] for r in events)
    if name != "handmade-2.8":  # with ZooKeeper's history every broker's clock is bounded
        assert [r for r in records if r["record"] == "skew"]


CONTROLLER_JSONL = ["--quiet", "--kinds", "controller.", "--format", "jsonl"]
WINDOW = ["--quiet", "--since", "2024-03-12T08:10:00", "--until", "2024-03-12 08:20"]


@pytest.mark.slow
@pytest.mark.parametrize("name", SAMPLES)
def test_the_cli_prints_the_timeline_of_every_sample(
    name: str, sample: Callable[[str], Bundle], capsys: pytest.CaptureFixture[str]
) -> None:
    _controller_records(_printed(sample(name), name, CONTROLLER_JSONL, capsys), name)
    assert "Clock skew" in _printed(sample(name), name, WINDOW, capsys)


@pytest.mark.slow
def test_the_timeline_command_end_to_end(capsys: pytest.CaptureFixture[str]) -> None:
    name = "deletion-stuck-2.8"
    assert main(["timeline", str(SAMPLE_DATA / name), *CONTROLLER_JSONL]) == 0
    _controller_records(capsys.readouterr().out, name)
    assert main(["timeline", str(SAMPLE_DATA / name), *WINDOW]) == 0
    assert "Clock skew" in capsys.readouterr().out
    assert main(["timeline", str(SAMPLE_DATA / "nothing-here")]) == 2
