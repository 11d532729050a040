"""ISR churn and reassignments from ZooKeeper's history against the simulator's truth: every ISR departure
the truth records is seen; a broker restarted three times in ten minutes flaps, one restarted once does not;
each reassignment's steps match the truth; one waiting for a broker that never returns is stuck. The leader
balance's findings half (`balance.judge`) from hand-written facts: its thresholds and its reasons."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from stories import MUST_FIND, Stories

from workbench.analysis import balance, reassignment
from workbench.analysis.balance import Facts, Flapped, Imbalanced, judge
from workbench.analysis.findings import TP, Coverage
from workbench.analysis.triage import Triage
from workbench.frames import Bundle, WithoutTxnLogs, WithoutZooKeeper, open_bundle
from workbench.model import isr
from workbench.model.history.counts import FROM_TREE, imbalances
from workbench.model.history.partitions import FROM_TXNS, isr_changes, isr_writes_unseen
from workbench.model.history.reassignments import reassignments
from workbench.simulate import story
from workbench.simulate.cluster import Cluster
from workbench.simulate.run import simulate
from workbench.simulate.scenarios import SCENARIOS, Scale, controller_failover
from workbench.together import together


def _ms(t: datetime) -> int:
    return int(t.replace(tzinfo=timezone.utc).timestamp() * 1000)


def restarted_thrice(c: Cluster, s: Scale) -> None:
    """A broker restarted three times within a few minutes: its replicas leave and rejoin each ISR."""
    for i in range(s.topics):
        story.create_topic(c, f"topic-{i}", s.partitions, s.replication)
    story.produce(c, 5, s.per_second)
    victim = max(b for b in c.brokers if b != c.controller)
    for _ in range(3):
        story.restart(c, victim)
        story.produce(c, 1, s.per_second)
    story.produce(c, 10, s.per_second)


@pytest.mark.slow
def test_isr_departures_of_the_truth_are_seen_and_one_restart_does_not_flap(
    sample: Callable[[str], Bundle], triaged: Callable[[str], Triage], twin: Callable[[str], Triage]
) -> None:
    for name in ("topicid-mismatch-2.8", "healthy-3.6"):
        truth = json.loads((REPO / "sample_data" / name / "truth.json").read_text())
        bundle = sample(name)
        # from ZooKeeper's partition states, and from the states the lines print (the logs-only view)
        told = {}
        for seen in (bundle, WithoutZooKeeper(bundle)):
            changes = isr_changes(seen)
            told[seen] = {  # a few dozen: small samples
                (r.topic, r.partition, r.broker, r.change): r for r in changes.collect()
            }
            left = {k[:3]: _ms(r.time) for k, r in told[seen].items() if k[3] == "left"}
            for d in truth["isr_departures"]:
                assert abs(left[(d["topic"], d["partition"], d["broker"])] - d["at_ms"]) < 1_000, d
            churn = isr.isr_churn(seen)
            assert churn.agg(F.sum("left")).first()[0] == len(left) > 0
        txns, lines = told.values()
        # at 2.8 and 3.6 every write of a state is printed: the lines tell each change ZooKeeper holds
        assert lines.keys() == txns.keys()
        assert all(r.zxid is not None and r.file is None for r in txns.values())
        assert all(r.zxid is None and r.file.startswith("brokers/") for r in lines.values())
        unseen = isr_writes_unseen(WithoutZooKeeper(bundle))
        assert together(unseen)[unseen] == 0
        assert [f for f in triaged(name).findings if f.kind == "isr.flapping"] == []
        assert [f for f in twin(name).findings if f.kind == "isr.flapping"] == []
    assert truth["broker_restarts"]  # healthy: one restart, its replicas left and rejoined once


@pytest.mark.slow
def test_a_capture_without_txn_logs_bounds_an_imbalance_by_its_trees_last_writes(
    sample: Callable[[str], Bundle],
) -> None:
    """ZooKeeper's tree at the capture gives each broker's imbalance then, as the health series' last
    minute does, and how long it lasted from below: the last write that could change it is at or after the
    series' start of the run above the threshold. Found where it outlives the rebalance check."""
    for name in ("controller-failover-2.5", "topicid-mismatch-2.8", "healthy-3.6"):
        whole = sample(name)
        series, by_txns = imbalances(whole, 0.1)
        tree, by_tree = imbalances(WithoutTxnLogs(whole), 0.1)
        assert series is not None and tree is not None and (by_txns, by_tree) == (FROM_TXNS, FROM_TREE)
        exact = {r.broker: r for r in series.collect()}  # a row per broker
        bound = {r.broker: r for r in tree.collect()}
        assert {b: (r.preferred, r.not_leading) for b, r in bound.items()} == {
            b: (r.preferred, r.not_leading) for b, r in exact.items()
        }
        above = sorted(b for b, r in bound.items() if r.since is not None)
        assert above == sorted(b for b, r in exact.items() if r.since is not None)
        assert all(exact[b].since <= bound[b].since <= bound[b].minute for b in above)
        coverage = Coverage()
        found = [f for f in balance.findings(WithoutTxnLogs(whole), coverage) if f.kind == "leader.imbalance"]
        assert [f.subject["broker"] for f in found] == above == ([] if name == "healthy-3.6" else [1])
        for f in found:
            assert "at the capture, unchanged since at least" in f.summary
            assert f.evidence[0].startswith("zk:/brokers/topics/") and "ZooKeeper state" in (
                coverage["leader_balance"].used
            )


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    [
        # deleted with replicas offline and created again: the new life's ISR is nobody rejoining
        next(n for n in MUST_FIND if n.startswith("recreated+") and n.endswith("@3.6.2")),
        "two-lives@2.8.2#5s",  # created twice, each life with its ISR changes; clocks 5 s apart
    ],
)
def test_the_lines_tell_zookeepers_isr_changes_across_a_topics_lives(stories: Stories, name: str) -> None:
    bundle = stories.bundle(name)
    txns, lines = (
        sorted((r.topic, r.partition, r.broker, r.change) for r in isr_changes(seen).collect())
        for seen in (bundle, WithoutZooKeeper(bundle))
    )
    assert lines == txns and any(c == "left" for *_, c in txns)
    unseen = isr_writes_unseen(WithoutZooKeeper(bundle))
    assert together(unseen)[unseen] == 0


@pytest.mark.slow
def test_isr_changes_the_lines_do_not_print_are_counted_in_coverage(
    sample: Callable[[str], Bundle], twin: Callable[[str], Triage]
) -> None:
    """At 2.5.1 the controller's removal of a stopped broker's replicas prints no state (only the replica's
    transition): the lines tell part of ZooKeeper's ISR changes, nothing it does not hold, and say how many
    writes they miss."""
    bundle = sample("controller-failover-2.5")
    txns = {(r.topic, r.partition, r.broker, r.change) for r in isr_changes(bundle).collect()}
    lines = {
        (r.topic, r.partition, r.broker, r.change) for r in isr_changes(WithoutZooKeeper(bundle)).collect()
    }
    assert lines < txns and lines
    unseen = isr_writes_unseen(WithoutZooKeeper(bundle))
    n = together(unseen)[unseen]
    assert n > 0
    said = twin("controller-failover-2.5").coverage["leader_balance"]
    assert any(f"{n} write(s) of partitions' states that no line prints" in m for m in said.missing), said


@pytest.mark.slow
def test_a_broker_restarted_three_times_in_minutes_flaps(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(SCENARIOS, "restarted-thrice", restarted_thrice)
    truth = simulate(
        "restarted-thrice", tmp_path / "b", 2, "2.8.2", Scale(topics=2, partitions=4), noise_rate=0
    )
    (victim,) = {r["broker"] for r in truth["broker_restarts"]}
    found = [
        f
        for f in balance.findings(open_bundle(tmp_path / "b", spark), Coverage())
        if f.kind == "isr.flapping"
    ]
    assert [f.subject["broker"] for f in found] == [victim]
    hosted = sum(t["partitions"] for t in truth["topics"].values())  # 3 brokers, replication 3: all
    assert found[0].subject["partitions"] == hosted
    assert len(found[0].evidence) >= 3 and all(e.startswith("zk:txn@") for e in found[0].evidence)
    # from the logs alone: the same broker and partitions, from the states the lines print
    alone = [
        f
        for f in balance.findings(WithoutZooKeeper(open_bundle(tmp_path / "b", spark)), Coverage())
        if f.kind == "isr.flapping"
    ]
    assert [f.subject for f in alone] == [found[0].subject]
    assert len(alone[0].evidence) >= 3 and all(e.startswith("broker-") for e in alone[0].evidence)
    assert "on the clocks of the brokers whose lines print it" in alone[0].summary


@pytest.mark.slow
def test_reassignment_steps_equal_the_truth(
    sample: Callable[[str], Bundle], triaged: Callable[[str], Triage]
) -> None:
    truth = json.loads((REPO / "sample_data" / "controller-failover-2.5" / "truth.json").read_text())
    bundle = sample("controller-failover-2.5")
    got = reassignments(bundle)
    assert got is not None
    rows = {(r.topic, r.partition): r for r in got.collect()}  # one per moved partition
    assert len(rows) == len(truth["reassignments"]) > 0
    for m in truth["reassignments"]:
        r = rows[(m["topic"], m["partition"])]
        assert (r.origin, r.target) == (m["from"], m["to"])
        assert abs(_ms(r.started) - m["started_ms"]) < 1_000
        assert abs(_ms(r.completed) - m["completed_ms"]) < 1_000
        assert r.started_zxid < r.caught_up_zxid < r.completed_zxid and r.in_isr == len(m["to"])
    assert [
        f for f in triaged("controller-failover-2.5").findings if f.kind.startswith("reassignment.")
    ] == []


@pytest.mark.slow
def test_a_reassignment_waiting_for_a_broker_that_never_returns_is_stuck(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def never_returns(c: Cluster, s: Scale) -> None:
        """controller-failover without the dead controller's return: moves onto it wait for ever."""
        monkeypatch.setattr(story, "start_again", lambda c, broker: None)
        controller_failover(c, s)

    monkeypatch.setitem(SCENARIOS, "never-returns", never_returns)
    truth = simulate("never-returns", tmp_path / "b", 1, "2.8.2", Scale(brokers=4, hours=0.5), noise_rate=0)
    (dead,) = [f["broker"] for f in truth["broker_failures"]]
    waiting = {(m["topic"], m["partition"]) for m in truth["reassignments"] if m["completed_ms"] is None}
    assert waiting and all(dead in m["to"] for m in truth["reassignments"] if m["completed_ms"] is None)
    coverage = Coverage()
    bundle = open_bundle(tmp_path / "b", spark)
    found = reassignment.findings(bundle, coverage)
    assert {(f.subject["topic"], f.subject["partition"]) for f in found} == waiting
    assert (
        all(f.subject["brokers_down"] == [dead] for f in found) and coverage["reassignment"].status == "done"
    )
    assert all(f.evidence[0].startswith("zk:txn@") for f in found)
    # as a capture through ZooKeeper's client holds it: the same moves, each bounded by its topic znode
    coverage = Coverage()
    captured = reassignment.findings(WithoutTxnLogs(bundle), coverage)
    assert [f.subject for f in captured] == [f.subject for f in found]
    assert all(
        "ZooKeeper time (its topic znode's last write)" in f.summary
        and f.evidence[0].startswith(f"zk:/brokers/topics/{f.subject['topic']}@mzxid=")
        for f in captured
    )
    assert (
        coverage["reassignment"].status == "partial" and "zk/txnlog/" in coverage["reassignment"].missing[0]
    )


AT = datetime(2024, 3, 12, 8, 0, tzinfo=timezone.utc)


def above(broker: int = 1, minutes: int = 12, **changed: Any) -> Imbalanced:
    """Broker 1 leads none of 4 of its 8 preferred partitions for `minutes`; 3 of them hold it in the ISR."""
    state = "/brokers/topics/orders/partitions/{}/state"
    known: dict[str, Any] = dict(
        broker=broker,
        preferred=8,
        not_leading=4,
        imbalance_ratio=0.5,
        since=AT,
        minute=AT + timedelta(minutes=minutes),
        movable=3,
        some=[(state.format(p), 0x200000010 + p) for p in (0, 3, 6)],
        queued=[],
        queued_partitions=0,
        checks=2,
        last_check=("broker-2:logs/controller.log", 40),
    )
    return Imbalanced(**{**known, **changed})


def balance_facts(*imbalanced: Imbalanced, **changed: Any) -> Facts:
    known: dict[str, Any] = dict(
        percentage=10.0,
        interval_s=300,
        live=frozenset({1, 2, 3}),
        imbalanced=list(imbalanced),
        flapped=[],
        disabled=[],
        waits=False,
        moving=0,
        counted_from=None,
    )
    return Facts(**{**known, **changed})


def test_judge_an_imbalance_the_checks_did_not_move() -> None:
    (found,) = judge(balance_facts(above()), Coverage())
    assert found.kind == "leader.imbalance" and found.subject == {"broker": 1, "ratio": 0.5, "threshold": 0.1}
    assert found.summary == (
        "Broker 1 does not lead 4 of the 8 partitions it is the preferred leader for (imbalance 0.50, above "
        "leader.imbalance.per.broker.percentage 10) at every minute's end since 2024-03-12 08:00 ZooKeeper "
        "time, longer than the controller's 300 s rebalance check; broker 1 is in the ISR of 3 of them, "
        "which a preferred election could move back; the controller logged 2 automatic rebalance check(s) "
        "since then without moving them; 1 of them cannot move: the rebalance elects a preferred replica "
        "only where it is alive and in the ISR (canPreferredReplicaBeLeader)."
    )
    assert found.evidence == (
        "zk:/brokers/topics/orders/partitions/0/state@mzxid=0x200000010",
        "zk:/brokers/topics/orders/partitions/3/state@mzxid=0x200000013",
        "zk:/brokers/topics/orders/partitions/6/state@mzxid=0x200000016",
        "broker-2:logs/controller.log:40",
    )


def test_judge_an_imbalance_zookeepers_tree_bounds() -> None:
    """From the tree at the capture (no txn logs): how long is at least since the last write that could
    change the ratio, said as a lower bound; not longer than one check interval, nothing is found."""
    at = datetime(2024, 3, 12, 8, 30, tzinfo=timezone.utc)
    coverage = Coverage()
    coverage.record("leader_balance", ["ZooKeeper state", "broker logs"])
    (found,) = judge(balance_facts(above(minute=at), told=FROM_TREE), coverage)
    assert (
        "leader.imbalance.per.broker.percentage 10) at the capture, unchanged since at least 2024-03-12 "
        "08:00:00 ZooKeeper time (the last write to their state znodes or to the topics' in ZooKeeper's "
        "tree), longer than the controller's 300 s rebalance check; broker 1 is in the ISR of 3 of them"
    ) in found.summary
    short = above(minute=at, since=at - timedelta(seconds=299))
    assert judge(balance_facts(short, told=FROM_TREE), coverage) == []
    assert coverage["leader_balance"].status == "done"  # what it lacks, the runner says (its needs)


def test_judge_leaves_out_a_short_imbalance_and_an_unregistered_broker() -> None:
    """Not longer than one check interval, or its broker is gone (broker.session_expired says that)."""
    assert judge(balance_facts(above(minutes=5)), Coverage()) == []
    assert judge(balance_facts(above(broker=4)), Coverage()) == []
    assert judge(balance_facts(above(minutes=6), interval_s=600), Coverage()) == []
    assert judge(balance_facts(above(minutes=6)), Coverage())


def test_judge_gives_the_reason_the_evidence_shows() -> None:
    def why(**changed: Any) -> str:
        kept = {k: changed.pop(k) for k in ("checks", "last_check", "movable") if k in changed}
        (found,) = judge(balance_facts(above(**kept), **changed), Coverage())
        return found.summary

    assert "auto.leader.rebalance.enable is false in server.properties of broker(s) 2" in why(disabled=[2])
    assert "2 partition(s) are being reassigned, and the controller skips the rebalance while any are." in (
        why(moving=2, waits=True)
    )
    assert "(before Kafka 3.4; this bundle's version is not known)" in why(moving=2, waits=None)
    assert "being reassigned" not in why(moving=2, waits=False)  # 3.4+: it does not wait
    assert "the bundle has no broker logs to show whether the controller checked" in why(checks=None)
    assert "no broker's log holds an automatic rebalance check" in why(checks=0, last_check=None)
    assert "in the ISR of none of them;" in why(movable=0)
    queued = judge(balance_facts(above(queued=["a", "b", "c", "d"], queued_partitions=5)), Coverage())
    assert (
        "; 5 more it is the preferred leader for belong to topic(s) queued for deletion (a, b, c, ...)"
        in (queued[0].summary)
    )
    partial = judge(balance_facts(above(), counted_from="the history read (from zxid 0x5)"), Coverage())
    assert (
        "the 8 partitions that the history read (from zxid 0x5) shows assigned (those before it are not "
        in (partial[0].summary)
    )


def test_judge_flapping_and_without_the_history() -> None:
    flap = Flapped(
        3,
        2,
        4,
        AT,
        AT + timedelta(minutes=7),
        [TP("orders", 0), TP("orders", 1)],
        ["zk:txn@0x21", "zk:txn@0x25"],
        True,
    )
    (found,) = judge(balance_facts(flapped=[flap]), Coverage())
    assert found.subject == {"broker": 3, "partitions": 2} and found.evidence == (
        "zk:txn@0x21",
        "zk:txn@0x25",
    )
    assert found.summary == (
        "Broker 3's replica left the ISR of 2 partition(s) (orders 0-1) up to 4 times within 10 minutes, "
        "between 2024-03-12 08:00:00 and 08:07:00 ZooKeeper time."
    )
    coverage = Coverage()
    coverage.record("leader_balance", ["ZooKeeper history"])
    assert judge(balance_facts(told=None), coverage) == [] and coverage["leader_balance"].status == "partial"
    # from the lines alone: the imbalance is not known (coverage names the txn logs), the flapping is
    coverage = Coverage()
    coverage.record("leader_balance", ["broker logs"], ["ZooKeeper txn logs (zk/txnlog/): how long ..."])
    told = dataclasses.replace(flap, refs=["broker-2:logs/server.log:7"], from_txns=False)
    (found,) = judge(balance_facts(flapped=[told], told=None, unseen=4), coverage)
    assert found.evidence == ("broker-2:logs/server.log:7",) and found.summary.endswith(
        "and 08:07:00 on the clocks of the brokers whose lines print it."
    )
    assert coverage["leader_balance"].missing[-1] == (
        "4 write(s) of partitions' states that no line prints (their versions skipped): the ISR changes in "
        "them are not counted for flapping"
    )
