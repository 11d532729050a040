"""The postmortem figures, drawn from the analyses on the samples and held against what the simulator
says happened (truth.json): each figure must show the incident's facts, not merely exist."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime, timezone
from typing import Any

import matplotlib.dates as mdates
import pandas as pd
import pytest
from conftest import SAMPLE_DATA, samples
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle
from pyspark.sql import SparkSession

import workbench
from workbench import plots, report
from workbench.analysis import controller, deletion, topic_ids
from workbench.analysis.findings import Coverage, Finding
from workbench.analysis.triage import Triage
from workbench.frames import Bundle, WithoutZooKeeper
from workbench.model import health
from workbench.model.history.brokers import FROM_LINES
from workbench.model.views import views
from workbench.plots import layout


@pytest.fixture
def with_truth(sample: Callable[[str], Bundle]) -> Callable[[str], tuple[Bundle, dict[str, Any]]]:
    """A sample (shared by the session, so its health series is made once) and its truth."""
    return lambda name: (sample(name), json.loads((SAMPLE_DATA / name / "truth.json").read_text()))


def _ms(t: Any) -> int:
    return round(pd.Timestamp(t).tz_localize("UTC").timestamp() * 1000)


def _at(x: float) -> int:
    """A time axis's position, in ms."""
    return round(mdates.num2date(x).timestamp() * 1000)


def _bars(fig: Figure, colour: str) -> list[Rectangle]:
    ax = fig.axes[0]
    return [p for p in ax.patches if isinstance(p, Rectangle) and to_hex(p.get_facecolor()) == colour.lower()]


@pytest.mark.parametrize("name", samples("zk"))
def test_offline_windows_are_the_crashes_and_restarts(with_truth: Any, name: str) -> None:
    """Every time a broker was without a registration, and no other: a crash until its session expired
    and it came back (or not), a clean restart from its stop to its start; from ZooKeeper's registrations,
    and from the controllers' lines alone."""
    bundle, truth = with_truth(name)
    got = sorted(
        (r.broker, _ms(r.down), r.up and _ms(r.up)) for r in health.offline_windows(bundle).collect()
    )
    want = sorted(
        [(f["broker"], f["session_expired_ms"], f.get("started_ms")) for f in truth["broker_failures"]]
        + [(r["broker"], r["stopped_ms"], r["started_ms"]) for r in truth["broker_restarts"]]
    )
    assert [(b, d, u is None) for b, d, u in got] == [(b, d, u is None) for b, d, u in want]
    assert all(abs(gu - wu) < 1000 for (_, _, gu), (_, _, wu) in zip(got, want, strict=True) if wu)
    # From the controllers' lines alone, the same stretches, each when a controller handled it (a failure
    # or startup callback, or a new controller's start that left the lost controller out): a little later
    lines = sorted(
        (r.broker, _ms(r.down), r.up and _ms(r.up), r.source)
        for r in health.offline_windows(WithoutZooKeeper(bundle)).collect()
    )
    assert [(b, u is None, s) for b, _, u, s in lines] == [(b, u is None, FROM_LINES) for b, _, u in want]
    for (_, down, up, _), (_, d, u) in zip(lines, want, strict=True):
        assert 0 <= down - d < 5_000 and (u is None or 0 <= up - u < 5_000)


def test_deletion_gantt_shows_the_replicas_still_waiting(with_truth: Any) -> None:
    bundle, truth = with_truth("deletion-stuck-2.8")
    (topic,) = truth["deletions"]
    progress = deletion.replica_progress(bundle, topic).toPandas()
    left = sorted(
        map(list, progress[progress.renamed.isna()][["partition", "broker"]].itertuples(index=False))
    )
    assert left == sorted(truth["deletions"][topic]["pending"]["replicas_left"])
    assert progress.deleted.notna().sum() == len(progress) - len(left)
    fig = plots.deletion_gantt(progress, health.offline_windows(bundle))
    assert len(fig.axes[0].get_yticklabels()) == len(progress)
    # every replica waits for StopReplica; those renamed wait out file.delete.delay.ms; the offline shaded
    assert len(_bars(fig, plots.ORANGE)) == len(progress)
    assert len(_bars(fig, plots.SKY_BLUE)) == len(progress) - len(left)
    down = [p for p in fig.axes[0].patches if p.get_hatch() == "//"]
    assert len(down) == len(left) and topic in fig.axes[0].get_title()
    # the request is marked across every replica; it never completed, so no completion is
    marked = [x.get_label() for x in fig.axes[0].get_lines() if x.get_label().startswith("deletion ")]
    assert marked == ["deletion requested"] and progress.completed.isna().all()


def test_a_completed_deletion_has_every_replica_removed(with_truth: Any) -> None:
    bundle, truth = with_truth("deletion-complete-3.6")
    halted = next(t for t, d in truth["deletions"].items() if d["halted"])
    progress = deletion.replica_progress(bundle, halted).toPandas()
    assert len(progress) == truth["topics"][halted]["partitions"] * 3
    assert progress.deleted.notna().all() and progress.renamed.notna().all()
    assert _ms(progress.requested.min()) == truth["deletions"][halted]["requested_ms"]
    assert _ms(progress.completed.min()) == truth["deletions"][halted]["completed_ms"]
    fig = plots.deletion_gantt(progress, health.offline_windows(bundle))
    lines = {x.get_label(): x for x in fig.axes[0].get_lines() if x.get_label().startswith("deletion ")}
    assert sorted(lines) == ["deletion completed\n(marker removed)", "deletion requested"]
    (done, _) = lines["deletion completed\n(marker removed)"].get_xdata()
    assert _ms(done) == truth["deletions"][halted]["completed_ms"]


def test_controller_epochs_and_the_gap_without_one(with_truth: Any) -> None:
    """Without the failovers' findings, the stretch without /controller is the headline: milliseconds,
    shaded from the session's expiry, wide enough to see, its length written."""
    bundle, truth = with_truth("controller-failover-2.5")
    elections = controller.elections(bundle)
    fig = plots.controller_epochs(elections)
    (line,) = [x for x in fig.axes[0].get_lines() if x.get_label().startswith("controller epoch")]
    assert list(line.get_ydata()) == [c["epoch"] for c in truth["controllers"]] + [
        truth["controllers"][-1]["epoch"]
    ]
    (gap,) = [p for p in fig.axes[0].patches if p.get_width() > 0]
    (crash,) = truth["broker_failures"]
    ms = truth["controllers"][1]["elected_ms"] - crash["session_expired_ms"]
    assert round(mdates.num2date(gap.get_x()).timestamp() * 1000) == crash["session_expired_ms"]
    left, right = fig.axes[0].get_xlim()
    assert ms < 1000 and gap.get_width() >= plots.base.MIN_WIDTH * (right - left) - 1e-9
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert f"no controller {ms} ms" in texts and {
        f"broker {c['broker']}" for c in truth["controllers"]
    } <= set(texts)


def test_controller_epochs_headline_the_failovers_outage(with_truth: Any) -> None:
    """With the failover's finding, the headline is its outage, not the 5 ms without /controller: shaded
    to the new controller's Ready to serve, from a start its bounds place around broker 1's crash (the
    model's), lighter where only the bounds place it."""
    bundle, truth = with_truth("controller-failover-2.5")
    found = controller.findings(bundle, Coverage())
    fig = plots.controller_epochs(controller.elections(bundle), views(bundle).span, found)
    (failover,) = [f for f in found if f.kind == "controller.failover"]
    lower, upper = failover.subject["outage_ms"]
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert f"no working controller {lower / 1000:.1f} s to {upper / 1000:.1f} s" in texts
    assert not any(t.startswith("no controller") for t in texts)
    (crash,) = truth["broker_failures"]
    ready = truth["controllers"][1]["ready_ms"]
    shaded = sorted(
        (round(alpha, 2), _at(p.get_x()), _at(p.get_x() + p.get_width()))
        for p in fig.axes[0].patches
        if to_hex(p.get_facecolor()) == to_hex(plots.base.VERMILLION) and (alpha := p.get_alpha()) is not None
    )
    (bounds, earliest, widened), (solid, start, end) = shaded
    assert (bounds, solid) == (0.12, 0.35) and widened == start and end == ready  # anchored at ready
    assert earliest == ready - upper and start <= ready - lower
    assert ready - upper - 500 <= crash["crashed_ms"] <= ready - lower + 500
    labels = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert "no /controller znode" in labels and any(x.startswith("no working controller") for x in labels)


def test_failover_durations_follow_the_new_controllers_log(with_truth: Any) -> None:
    """From the election through Ready to serve to the start of its scheduler: between those two it
    resumed the reassignments it found."""
    bundle, truth = with_truth("controller-failover-2.5")
    new = truth["controllers"][1]
    steps = controller.failover_steps(bundle)
    fig = plots.failover_durations(steps, new["broker"], new["epoch"])
    names = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert names[0] == "elected" and names[-1].startswith("ready: resuming reassignments")
    assert "replica state machine triggering online" in names  # the state machines' startup is counted
    widths = [p.get_width() for p in fig.axes[0].patches]
    logged = steps.where(f"broker_id = {new['broker']} and epoch = {new['epoch']}").toPandas()
    ready = logged[logged.event == "controller.ready"].ts.iloc[0]
    scheduler = logged[logged.step == "starting_controller_scheduler"].ts.iloc[0]
    took = new["duration_ms"]  # the model's election to ready
    assert round(sum(widths[:-1])) == round((ready - logged.ts.min()).total_seconds() * 1000) == took
    assert round(widths[-1]) == round((scheduler - ready).total_seconds() * 1000) > 0
    title = fig.axes[0].get_title()
    assert f"{took} ms from elected to ready, then {round(widths[-1])} ms resuming its work" in title
    with pytest.raises(ValueError, match="no failover steps of broker 9"):
        plots.failover_durations(steps, 9, 1)


def test_leader_balance_before_and_after_the_failover(with_truth: Any) -> None:
    bundle, truth = with_truth("controller-failover-2.5")
    h = workbench.health(bundle)
    assert h is not None
    (crash,) = truth["broker_failures"]
    crashed = datetime.fromtimestamp(crash["crashed_ms"] / 1000, timezone.utc)
    fig = plots.leader_balance(h.brokers, crashed, h.last, threshold=0.10)
    leaders, ratios = fig.axes
    after = {int(b): v["ratio"] for b, v in truth["leader_imbalance"].items()}
    assert [round(p.get_height(), 2) for p in ratios.patches[len(after) :]] == [
        after[b] for b in sorted(after)
    ]
    assert any(x.get_ydata()[0] == 0.10 for x in ratios.get_lines())  # the threshold
    ended = [m for m in truth["health"]["minutes"] if m["minute_ms"] + 60_000 <= crash["crashed_ms"]]
    first = ended[-1]["leaders"]
    assert [p.get_height() for p in leaders.patches[: len(first)]] == [first[b] for b in sorted(first)]
    last = truth["health"]["minutes"][-1]["leaders"]
    assert [p.get_height() for p in leaders.patches[len(first) :]] == [last.get(b, 0) for b in sorted(first)]


def test_partition_health_counts_and_marks(with_truth: Any) -> None:
    bundle, truth = with_truth("controller-failover-2.5")
    h = workbench.health(bundle)
    assert h is not None
    marks = plots.moments(controller.elections(bundle), health.offline_windows(bundle))
    assert sorted(label for _, label in marks) == [
        "broker 1 back",
        "broker 1 offline",
        "controller: broker 1 (epoch 1)",
        "controller: broker 2 (epoch 2)",
    ]
    fig = plots.partition_health(h.minutes, marks)
    lines = {x.get_label().split(" (")[0]: list(x.get_ydata()) for x in fig.axes[0].get_lines()}
    want = [m["under_replicated"] for m in truth["health"]["minutes"]]
    assert lines["under-replicated"] == want and max(want) > 0
    assert lines["offline"] == [m["offline"] for m in truth["health"]["minutes"]]
    # each count names the metric Kafka keeps for it, or says none does
    labels = [x.get_label() for x in fig.axes[0].get_lines()]
    assert any("OfflinePartitionsCount" in x for x in labels)
    assert any("UnderReplicatedPartitions" in x for x in labels)
    assert len([x for x in fig.axes[0].get_lines() if x.get_linestyle() == "--"]) == len(marks)


def test_isr_sizes_show_the_restarted_broker_leaving(with_truth: Any) -> None:
    bundle, truth = with_truth("topicid-mismatch-2.8")
    h = workbench.health(bundle)
    assert h is not None
    span = views(bundle).span
    assert span is not None
    fig = plots.isr_sizes(h.partitions, "orders", span)
    ax = fig.axes[0]
    rows = [t.get_text() for t in ax.get_yticklabels()]
    assert rows == [f"orders-{p}" for p in range(truth["topics"]["orders"]["partitions"])]
    # two of three in sync until the capture where ZooKeeper ends with two (the departures among them)
    two = [p for p in ax.patches if to_hex(p.get_facecolor()) == plots.SKY_BLUE.lower()]
    ends = {
        round(p.get_y() + p.get_height() / 2)
        for p in two
        if abs(p.get_x() + p.get_width() - mdates.date2num(span[1])) < 1e-6  # to the capture
    }
    final = workbench.state_at(bundle).partitions.where("topic = 'orders' and size(isr) = 2").collect()
    assert {rows[i] for i in ends} == {f"orders-{r.partition}" for r in final}
    assert {f"orders-{d['partition']}" for d in truth["isr_departures"]} <= {rows[i] for i in ends}
    # the partitions with no acting leader at the capture are hatched at their end
    hatched = {round(p.get_y() + p.get_height() / 2) for p in ax.patches if p.get_hatch()}
    open_windows = {f"orders-{w['partition']}" for w in truth["leaders_not_acting"] if w["to_ms"] is None}
    assert open_windows and {rows[i] for i in hatched} == open_windows


def test_topic_id_matrix_marks_each_stale_replica(with_truth: Any) -> None:
    bundle, truth = with_truth("topicid-mismatch-2.8")
    fig = plots.topic_id_matrix(topic_ids.replica_ids(bundle), "orders")
    stale = _bars(fig, plots.VERMILLION)
    assert len(stale) == len([s for s in truth["stale_topic_ids"] if s["topic"] == "orders"])
    assert truth["topics"]["orders"]["topic_id"][:6] in {t.get_text() for t in fig.axes[0].texts}
    fine = plots.topic_id_matrix(topic_ids.replica_ids(bundle), "topic-0")
    assert _bars(fine, plots.VERMILLION) == [] and len(_bars(fine, plots.GREEN)) > 0
    # with ZooKeeper's state: each partition's leader framed, each replica out of its ISR crossed
    state = views(bundle).partitions.where("topic = 'orders'").select("replicas", "isr").collect()
    marked = plots.topic_id_matrix(topic_ids.replica_ids(bundle), "orders", views(bundle).partitions)
    ax = marked.axes[0]
    frames = [p for p in ax.patches if not p.get_fill()]
    crosses = [line for line in ax.lines if line.get_marker() == "x"]
    assert len(frames) == len(state) == 12
    assert len(crosses) == sum(len(set(r.replicas) - set(r.isr)) for r in state) > 0


def test_znode_versions_name_each_writer(with_truth: Any) -> None:
    bundle, truth = with_truth("topicid-mismatch-2.8")
    fig = plots.znode_versions(topic_ids.znode_history(bundle), "orders")
    ax = fig.axes[0]
    changes = [c for c in truth["topic_id_changes"] if c["topic"] == "orders"]
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert set(labels) == {c["to"] or "no topic_id" for c in changes}
    notes = [t.get_text() for t in ax.texts]
    removed = next(c for c in changes if c["to"] is None)
    assert any(f"zxid {removed['zxid']:#x}" in n and "session 0x" in n for n in notes)  # no broker's session
    # the same write added orders' partitions 6-11: its note says so, the others say how many there were
    (grew,) = [n for n in notes if "->" in n]
    assert f"zxid {removed['zxid']:#x}" in grew and grew.endswith("6 -> 12 partitions")
    assert sum(n.endswith("\n6 partitions") for n in notes) == 2


def test_a_plot_refuses_rows_that_were_not_aggregated(
    spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(plots.base, "MAX_ROWS", 5)  # where frame() reads it
    with pytest.raises(ValueError, match="aggregate in Spark first"):
        plots.frame(spark.range(10))
    assert len(plots.frame(spark.range(5))) == 5


def test_partition_health_shades_each_stretch_without_an_acting_leader(with_truth: Any) -> None:
    """The partitions whose ZooKeeper leader refuses them, from the refusal to the capture, and the
    offline stretch of a broker's death, a few milliseconds drawn wide enough to see with its length; a
    partition whose new leader refused it as it came back stays one stretch, offline as it began."""
    bundle, truth = with_truth("topicid-mismatch-2.8")
    h = workbench.health(bundle)
    span = views(bundle).span
    assert h is not None and span is not None
    leaderless = health.leaderless_windows(h, health.captured_at(bundle)).toPandas()
    fig = plots.partition_health(h.minutes, None, span, leaderless, 24)
    ax = fig.axes[0]
    refusing = [p for p in ax.patches if to_hex(p.get_facecolor()) == plots.BLACK.lower()]
    (shade,) = refusing  # one partition, from the refusal to the capture: shaded 1 high, not the whole plot
    assert shade.get_height() == 1
    # from ZooKeeper's txn naming the refusing leader, just before the broker refused its LeaderAndIsr
    began = _ms(mdates.num2date(shade.get_x()).replace(tzinfo=None))
    alone = [w for w in truth["leaders_not_acting"] if not w["after_offline"]]
    assert 0 <= min(w["from_ms"] for w in alone) - began < 1000
    assert abs(shade.get_x() + shade.get_width() - mdates.date2num(span[1])) < 1e-6
    assert _ms(span[1]) == truth["captured_ms"]
    offline = [p for p in ax.patches if to_hex(p.get_facecolor()) == plots.VERMILLION.lower()]
    # the broker's death: 8 partitions at once for milliseconds (drawn wide enough to see), of which one
    # ran on into a refusal: its shade, offline as it began, 1 high, runs to the capture
    assert any(w["after_offline"] for w in truth["leaders_not_acting"])
    first, ran_on = offline
    assert (first.get_height(), ran_on.get_height()) == (8, 1)
    assert abs(ran_on.get_x() + ran_on.get_width() - mdates.date2num(span[1])) < 1e-6
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any("at most 8 partition(s) at once, of 24 at the capture" in t for t in labels), labels
    # the others' offline stretch is milliseconds, drawn wide enough to see with its length
    short = leaderless[
        (leaderless["count"] == "offline") & (leaderless.ended - leaderless.began < pd.Timedelta(1, "s"))
    ]
    assert len(short)
    ax = plots.partition_health(h.minutes, None, span, short).axes[0]
    left, right = ax.get_xlim()
    drawn = [p for p in ax.patches if to_hex(p.get_facecolor()) == plots.VERMILLION.lower()]
    assert min(p.get_width() for p in drawn) >= plots.base.MIN_WIDTH * (right - left) - 1e-9
    assert plots.base.duration((short.ended - short.began).min()) in [t.get_text() for t in ax.texts]
    # without the evidence's span, a stretch still open runs to the last bucket
    still = leaderless.assign(ended=pd.NaT)
    open_ended = plots.partition_health(h.minutes, None, None, still).axes[0]
    ends = [p.get_x() + p.get_width() for p in open_ended.patches if p.get_alpha() == 0.1]
    assert ends and max(ends) == pytest.approx(mdates.date2num(h.minutes.agg({"minute": "max"}).first()[0]))


def test_healthy_cluster_has_no_shade_without_an_acting_leader(with_truth: Any) -> None:
    bundle, _ = with_truth("healthy-3.6")
    h = workbench.health(bundle)
    assert h is not None
    leaderless = health.leaderless_windows(h, health.captured_at(bundle))
    assert leaderless.count() == 0
    fig = plots.partition_health(h.minutes, None, views(bundle).span, leaderless)
    colours = {plots.BLACK.lower(), plots.VERMILLION.lower()}
    assert not [p for p in fig.axes[0].patches if to_hex(p.get_facecolor()) in colours]


@pytest.mark.slow
@pytest.mark.parametrize("name", samples("zk"))
def test_every_report_figure_can_be_read_and_spans_the_evidence(with_truth: Any, name: str) -> None:
    """The report's figures for the topics the incident is about: no text covering another or cut off,
    legends beside the plots, every axis labelled, and time axes from ZooKeeper's first txn to the
    capture, not to the last event."""
    bundle, truth = with_truth(name)
    topics = {s["topic"] for s in truth["stale_topic_ids"]}
    named = [Finding("topic_id.mismatch", "critical", {"topic": t}, "") for t in sorted(topics)]
    named += [Finding("deletion.stuck", "critical", {"topic": t}, "") for t in sorted(truth["deletions"])]
    figures = report.standard_plots(bundle, Triage(named, Coverage(), 0))
    assert not [(title, why) for title, why in figures if isinstance(why, str)]
    span = views(bundle).span
    assert span is not None and _ms(span[1]) == truth["captured_ms"]
    for title, fig in figures:
        assert isinstance(fig, Figure)
        assert layout.problems(fig) == [], title
        for ax in fig.axes:
            if ax.get_xlabel() == "time (UTC)":
                left, right = (mdates.num2date(x).replace(tzinfo=None) for x in ax.get_xlim())
                assert left <= span[0] and right >= span[1], title
