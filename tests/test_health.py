"""The health series and the balance checks against the simulator's truth: minute by minute the offline and
under-replicated partitions (with their peaks), each broker's leaders and its leader imbalance equal what
the simulated ZooKeeper held; min.insync.replicas is counted where server.properties says it; without
ZooKeeper's history nothing is guessed."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from conftest import SAMPLE_DATA, samples
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from stories import HEALTH, MUST_FIND, Stories
from truth_facts import service_holds

from workbench.analysis import balance, leaderless
from workbench.analysis import health as health_analysis
from workbench.analysis.contract import CRITICAL, INFO, NO_TXN, WARNING
from workbench.analysis.findings import TP, Coverage, file_ref
from workbench.analysis.health import Episodes, Facts
from workbench.analysis.triage import Triage, triage
from workbench.frames import Bundle, WithoutTxnLogs, open_bundle
from workbench.model.described import FailedDir, Group, Shown
from workbench.model.health import captured_at, health
from workbench.model.history.brokers import PAUSED, SILENT
from workbench.model.history.counts import FROM_TREE, imbalance_since
from workbench.model.history.partitions import told_to_lead
from workbench.model.isr import OnlyInSync, only_in_sync
from workbench.model.log_dirs import DirFailed, Said
from workbench.model.partition_history import partition_changes, recounted
from workbench.model.views import views
from workbench.together import answer

SAMPLES = samples()


def _series(bundle: Bundle) -> list[dict[str, Any]]:
    """The analysis's minutes in truth.json's shape (only aggregates reach the driver)."""
    h = health(bundle)
    assert h is not None
    brokers: dict[int, dict[int, Any]] = {}
    for r in h.brokers.collect():
        brokers.setdefault(int(r.minute.timestamp() * 1000), {})[r.broker] = r
    out = []
    for m in h.minutes.collect():
        ms = int(m.minute.timestamp() * 1000)
        per = brokers.get(ms, {})
        out.append(
            {
                "minute_ms": ms,
                "offline": m.offline,
                "no_acting_leader": m.no_acting_leader,
                "under_replicated": m.under_replicated,
                "offline_peak": m.offline_peak,
                "no_acting_leader_peak": m.no_acting_leader_peak,
                "under_replicated_peak": m.under_replicated_peak,
                "leaders": {str(b): r.leaders for b, r in per.items() if r.leaders},
                "imbalance": {str(b): [r.not_leading, r.preferred] for b, r in per.items() if r.preferred},
            }
        )
    return out


def _check_series(bundle: Bundle) -> dict[str, Any]:
    """Minute by minute, and each partition's stretches without an acting leader, as the truth has them."""
    truth = json.loads((bundle.evidence.root / "truth.json").read_text())
    got = _series(bundle)
    want = [m for m in truth["health"]["minutes"] if m["minute_ms"] >= got[0]["minute_ms"]]
    assert got == want
    assert len(got) >= 25  # the whole story, minute by minute, to the capture
    service_holds(bundle, truth)
    stretches = truth["health"]["unserved"]
    # the two ways of counting agree: at each minute's end, the partitions nobody served are the stretches
    # open then
    for m in got:
        end = m["minute_ms"] + 60_000
        open_ = [u for u in stretches if u["began_ms"] < end and (u["ended_ms"] or end) >= end]
        assert m["offline"] + m["no_acting_leader"] == len(open_), m
    return truth


@pytest.mark.slow
@pytest.mark.parametrize("name", SAMPLES)
def test_each_minute_of_each_sample_equals_the_truth(sample: Callable[[str], Bundle], name: str) -> None:
    truth = _check_series(sample(name))
    peaks = [m["offline_peak"] for m in truth["health"]["minutes"]]
    if truth["broker_failures"]:  # a crashed leader: offline until the controller moved its partitions
        assert max(peaks) > 0
    if name.startswith("healthy"):  # controlled restarts move leaders first
        assert max(peaks) == 0 and max(m["under_replicated_peak"] for m in truth["health"]["minutes"]) > 0


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(HEALTH))
def test_other_seeds_and_versions_equal_their_truth(stories: Stories, name: str) -> None:
    """Other seeds, versions and sizes than the samples: a failover with racks, a stuck deletion on 3.6."""
    truth = _check_series(stories.bundle(name))
    if name.startswith("controller-hang"):
        assert max(m["no_acting_leader_peak"] for m in truth["health"]["minutes"]) > 0
        # one number: the hung leader's stretches begin where its finding's lower bound does, its own
        # client's time-out line telling when it was last heard (checked in _one_outage_one_finding)
        assert _one_outage_one_finding(stories.bundle(name)).silent


STOOD_STILL = sorted(n for n, (s, _) in MUST_FIND.items() if "leader-pause" in s.scenario.split("+"))


@pytest.mark.slow
@pytest.mark.parametrize("name", STOOD_STILL)
def test_a_pause_the_session_survived_counts_its_partitions_unserved(stories: Stories, name: str) -> None:
    """ZooKeeper never shows a leader that stood still and ran on in its session, nor one whose session
    expired and that registered anew before any controller saw it gone (controller-hang-back-before-read
    in the same story): its partitions count as without an acting leader from a ping interval after it
    was last heard to its time-out line, minute by minute as the truth has them, never offline, and
    nowhere else."""
    truth = _check_series(stories.bundle(name))
    pauses = truth["pauses"]
    assert sorted(bool(p.get("taken_back")) for p in pauses) == [False, True]
    for pause in pauses:
        during = [
            m
            for m in truth["health"]["minutes"]
            if pause["paused_ms"] // 60_000 <= m["minute_ms"] // 60_000 <= pause["woke_ms"] // 60_000
        ]
        assert max(m["no_acting_leader_peak"] for m in during) >= pause["partitions"] > 0
    # and the service timeline says why: its leader stood still, ZooKeeper showing nothing
    bundle = stories.bundle(name)
    h = health(bundle)
    assert h is not None
    stood = h.outages.where(F.array_contains("whys", PAUSED)).collect()
    assert len(stood) == sum(p["partitions"] for p in pauses) and all(r.whys == [PAUSED] for r in stood)
    assert all(
        any(p["paused_ms"] <= r.began.timestamp() * 1000 < p["woke_ms"] for p in pauses) for r in stood
    )
    # one number: each pause's finding gives its stretches' length on the timeline as its lower bound
    told = {
        f.subject["broker"]: f.subject["outage_ms"][0]
        for f in stories.triage(name).findings
        if f.kind in ("partition.leader_paused", "partition.offline") and "session" in f.subject
    }
    assert len(told) == len(pauses) and all(told[r.leader] == r.lasted_ms for r in stood), told


@pytest.mark.parametrize("name", ["controller-failover-2.5", "deletion-stuck-2.8"])
def test_a_change_recounted_from_its_own_columns_counts_as_it_did(
    sample: Callable[[str], Bundle], name: str
) -> None:
    """`recounted` (how the service timeline counts a registration's gap taken back) is the one counting
    rule read from a change's own columns: on every change with a leader it gives the counts it has,
    offline, under-replicated and a deletion's exceptions among them."""
    changes = partition_changes(sample(name)).where(F.col("leader").isNotNull())
    row = changes.agg(
        F.count("*").alias("n"),
        F.count_if(~F.exists("counted_as", lambda x: x["count"] == "leaders")).alias("unled"),
        F.count_if(recounted() != F.col("counted_as")).alias("differ"),
    ).first()
    assert row is not None and row.n > 0 and row.unled > 0 and row.differ == 0


def _one_outage_one_finding(bundle: Bundle) -> leaderless.Facts:
    """Every stretch nobody served a partition (but a pause its session survived, told apart) is in
    exactly one leaderless group, by how it began, and each group's longest is its stretches' longest
    from the one timeline: offline from where it went offline, a refusal's for the whole outage."""
    h = health(bundle)
    assert h is not None
    rows = [r for r in h.outages.collect() if r.whys[0] != PAUSED]
    f = leaderless.facts(bundle)
    groups: list[tuple[Any, list[Any], int]] = []
    for g in f.offline:
        if not g.known_start:
            continue
        tps = {(t.topic, t.partition) for t in g.tps}
        mine = [r for r in rows if (r.topic, r.partition) in tps and r.off_zxid == g.began_zxid]
        mine = [r for r in mine if ("refused" in r.whys) == bool(g.refused)]
        groups.append((g, mine, max((r.off_ms for r in mine), default=-1)))
    for n in f.not_acting:
        tps = {(t.topic, t.partition) for t in n.tps}
        mine = [r for r in rows if (r.topic, r.partition) in tps and r.began_zxid == n.began_zxid]
        groups.append(
            (n, [r for r in mine if r.whys[0] == "refused"], max((r.lasted_ms for r in mine), default=-1))
        )
    for g, mine, longest in groups:
        assert len(mine) == g.partitions and g.longest_ms == longest, g
        assert g.still == sum(r.ended is None for r in mine), g
        if isinstance(g, leaderless.Offline) and g.began_zxid in f.silent:
            # a silent leader's outage: its lower bound is the timeline's, from the moment the expiry
            # proves it silent
            silent = [r.lasted_ms for r in mine if r.whys[0] == SILENT]
            assert f.silent[g.began_zxid][0].lower_ms == max(silent), g
    unknown = sum(g.partitions for g in f.offline if not g.known_start)
    assert sum(len(mine) for _, mine, _ in groups) + unknown == len(rows)
    return f


@pytest.mark.slow
@pytest.mark.parametrize("name", SAMPLES)
def test_each_samples_outages_are_the_service_timelines(sample: Callable[[str], Bundle], name: str) -> None:
    _one_outage_one_finding(sample(name))


@pytest.mark.slow
@pytest.mark.parametrize("name", SAMPLES)
def test_the_longest_run_offline_is_the_rows_own(sample: Callable[[str], Bundle], name: str) -> None:
    """Each outage's longest run counted offline (`off_run_ms`, what the report's impact says
    OfflinePartitionsCount held) equals the one read from the service timeline's rows in plain Python: from
    a row counted offline to the first after it that is not (or the capture); none where it never was."""
    bundle = sample(name)
    h = health(bundle)
    assert h is not None
    captured = captured_at(bundle)
    assert captured is not None
    by_tp: dict[tuple[str, int], list[Any]] = {}
    for r in h.served.select("topic", "partition", "zxid", "time", "counted_as").collect():  # small samples
        by_tp.setdefault((r.topic, r.partition), []).append(r)
    want: dict[tuple[str, int], int] = {}
    for tp, rs in by_tp.items():
        rs.sort(key=lambda r: (r.zxid, r.time))
        run = 0
        for r, after in zip(rs, [*rs[1:], None], strict=True):
            if any(c["count"] == "offline" for c in r.counted_as):
                run += _ms(after.time if after is not None else captured) - _ms(r.time)
                want[tp] = max(want.get(tp, 0), run)
            else:
                run = 0
    got: dict[tuple[str, int], int] = {}
    for r in h.outages.where(F.col("off_run_ms").isNotNull()).collect():
        got[(r.topic, r.partition)] = max(got.get((r.topic, r.partition), 0), r.off_run_ms)
    assert got == want
    assert h.outages.where(F.col("off_zxid").isNull() & F.col("off_run_ms").isNotNull()).count() == 0


def _ms(t: datetime) -> int:
    return round(t.timestamp() * 1000)


RAN_ON = sorted(n for n, (s, _) in MUST_FIND.items() if "topicid-restart-refused" in s.scenario.split("+"))


@pytest.mark.slow
@pytest.mark.parametrize("name", RAN_ON)
def test_an_outage_is_one_finding_however_its_reason_changed(stories: Stories, name: str) -> None:
    """The only in-sync replica restarted: offline, then refused by itself as it returned, then (2.8.2,
    with a reassignment's crash) offline again: one stretch in the truth and in the timeline, one finding
    with the whole outage's length; a refusal whose leader then went away is one outage too."""
    bundle = stories.bundle(name)
    _check_series(bundle)
    _one_outage_one_finding(bundle)
    h = health(bundle)
    assert h is not None
    ran_on = h.outages.where(F.col("whys")[0] == "offline")
    assert ran_on.where(F.array_contains("whys", "refused") & F.col("ended").isNull()).count() >= 1
    # the broker alone in the ISR of what it refuses is not told to stay up for a restart's sake
    t = stories.triage(name)
    refusing = {f.subject["broker"] for f in t.of_kind("partition.no_acting_leader") if f.subject["still"]}
    for f in t.of_kind("broker.only_in_sync"):
        assert (f.subject["broker"] not in refusing) or "It refuses to lead" in f.summary, f.summary
    # nor a broker down that refused what only it holds (2.8.2: broker 4 crashed after refusing orders-1)
    down = {f.subject["broker"]: f for f in t.of_kind("broker.down")}
    for f in t.of_kind("partition.offline"):
        for b in f.subject.get("refused_by", []) if f.subject["still"] else []:
            assert b not in down or "it refused to lead" in down[b].summary, down[b].summary


@pytest.mark.slow
@pytest.mark.parametrize("name", RAN_ON)
def test_the_brokers_alone_in_an_isr_are_told_from_a_capture_without_txn_logs(
    stories: Stories, name: str
) -> None:
    """ZooKeeper's tree at the capture says which brokers lead partitions alone in their ISR; whether each
    refuses them comes from its own lines where the txn logs are not in the bundle: the same brokers,
    partitions and refusals as with them, and health tells them (its health series aside)."""
    whole = stories.bundle(name)
    captured = WithoutTxnLogs(whole)
    alone = answer(only_in_sync(whole))
    assert alone and answer(only_in_sync(captured)) == alone
    assert {o.broker for o in alone if o.refusing} <= _refusers(whole)  # each told by a refusal line
    found = triage(captured, only=["health"])
    assert [f.subject for f in found.of_kind("broker.only_in_sync")] == [
        f.subject for f in stories.triage(name).of_kind("broker.only_in_sync")
    ]
    assert "ZooKeeper state" in found.coverage["health"].used


@pytest.mark.slow
def test_a_capture_without_txn_logs_tells_the_partitions_under_replicated_at_it(
    sample: Callable[[str], Bundle], triaged: Callable[[str], Triage]
) -> None:
    """ZooKeeper's tree at the capture tells the partitions under-replicated then whose leader serves them
    (not those whose leader refused its LeaderAndIsr, told by its own lines as by ZooKeeper's history), and
    how long from below (since the write of the ISR they have): those the history shows still, nothing
    where it shows none; the stretches that ended before the capture are not told."""
    under = "partition.under_replicated"
    for name in ("deletion-stuck-2.8", "topicid-mismatch-2.8", "controller-failover-2.5", "healthy-3.6"):
        whole = sample(name)
        captured = WithoutTxnLogs(whole)
        leaders = {(r.leader, r.topic, r.partition) for r in views(whole).partitions.collect()}
        refused = [
            {
                k: r.refused
                for r in told_to_lead(b).collect()
                if (k := (r.broker, r.topic, r.partition)) in leaders
            }
            for b in (whole, captured)
        ]
        assert refused[0] == refused[1]  # the lines' rule is ZooKeeper's, for the leaders it names
        still = [f for f in triaged(name).findings if f.kind == under and f.subject["still"]]
        coverage = Coverage()
        now = [f for f in health_analysis.findings(captured, coverage) if f.kind == under]
        assert [(f.subject["brokers"], f.subject["still"]) for f in now] == [
            (f.subject["brokers"], f.subject["still"]) for f in still
        ]
        assert bool(now) == (name in ("deletion-stuck-2.8", "topicid-mismatch-2.8"))
        for f, was in zip(now, still, strict=True):
            assert f.subject["partitions"] == f.subject["still"]
            assert " at the capture: broker(s) " in f.summary
            at_least = re.search(r"the longest for at least (\d+) min", f.summary)
            assert at_least and int(at_least[1]) <= _minutes(was.summary)
            assert all(e.startswith("zk:/brokers/topics/") and e.endswith("/state") for e in f.evidence)
        assert "ZooKeeper state" in coverage["health"].used


def _minutes(summary: str) -> int:
    found = re.search(r"for up to (\d+) min", summary)
    assert found, summary
    return int(found[1])


def _refusers(bundle: Bundle) -> set[int]:
    """The brokers whose lines hold a refusal of a LeaderAndIsr (INCONSISTENT_TOPIC_ID)."""
    rows = bundle.cluster_events.where(F.col("event") == "topic_id.mismatch").select("broker_id").distinct()
    return {r.broker_id for r in rows.collect()}


@pytest.mark.slow
def test_imbalance_at_the_end_is_the_truths_and_only_a_live_uncorrected_broker_is_a_finding(
    sample: Callable[[str], Bundle], triaged: Callable[[str], Triage]
) -> None:
    for name in ("controller-failover-2.5", "healthy-3.6", "deletion-stuck-2.8"):
        truth = json.loads((SAMPLE_DATA / name / "truth.json").read_text())
        bundle = sample(name)
        h = health(bundle)
        assert h is not None
        last = {r.broker: r for r in imbalance_since(h, 0.1).collect()}
        for b, want in truth["leader_imbalance"].items():
            assert (last[int(b)].preferred, last[int(b)].not_leading) == (
                want["preferred"],
                len(want["not_leading"]),
            )
            assert last[int(b)].imbalance_ratio == pytest.approx(want["ratio"])
        found = {f.subject["broker"]: f for f in triaged(name).findings if f.kind == "leader.imbalance"}
        if name == "controller-failover-2.5":  # broker 1 came back; auto.leader.rebalance.enable=false
            assert set(found) == {1} and "auto.leader.rebalance.enable is false" in found[1].summary
            assert "broker-1:server.properties" in found[1].evidence
        else:  # healthy: the controller's check moved leaders back; deletion-stuck: broker 3 is down
            assert found == {}


@pytest.mark.slow  # reads two samples' whole triages
def test_offline_and_sustained_under_replication_are_found_only_where_they_happened(
    triaged: Callable[[str], Triage],
) -> None:
    theirs = {k.name for a in (health_analysis, leaderless) for k in a.ANALYSIS.kinds}
    for name in ("deletion-stuck-2.8", "healthy-3.6"):
        truth = json.loads((SAMPLE_DATA / name / "truth.json").read_text())
        result = triaged(name)
        found = [f for f in result.findings if f.kind in theirs]
        assert result.coverage["health"].status == "done"
        offline = sorted(
            (f for f in found if f.kind == "partition.offline"), key=lambda f: int(f.subject["zxid"], 16)
        )
        urp = [f for f in found if f.kind == "partition.under_replicated"]
        assert [
            (int(f.subject["zxid"], 16), f.subject["broker"], f.subject["partitions"]) for f in offline
        ] == sorted((o["zxid"], o["leader"], o["partitions"]) for o in truth["health"]["offline"])
        assert sorted(
            (f.subject["brokers"], f.subject["partitions"], f.subject["still"]) for f in urp
        ) == sorted(
            (u["out_of_isr"], u["partitions"], u["still"]) for u in truth["health"]["under_replicated"]
        )
        if name == "healthy-3.6":
            assert found == []
        else:  # broker 3 crashed and stays down: its partitions stay under-replicated
            (failure,) = truth["broker_failures"]
            assert offline and urp and urp[0].subject["brokers"] == [failure["broker"]]
            # ... and had no working leader from the crash, not only from the session's expiry
            lower, upper = offline[0].subject["outage_ms"]
            real = failure["session_expired_ms"] - failure["crashed_ms"] + offline[0].subject["offline_ms"]
            assert lower <= real <= upper + 500
            assert urp[0].severity == "warning" and all(f.evidence for f in found)


@pytest.mark.slow
def test_under_min_isr_counts_where_server_properties_set_it(spark: SparkSession, tmp_path: Path) -> None:
    """The stuck deletion's crashed broker leaves 2 of 3 replicas in the ISR: under min ISR with
    min.insync.replicas=3, not with 2; without the brokers' files it is not known."""
    path = tmp_path / "bundle"
    shutil.copytree(SAMPLE_DATA / "deletion-stuck-2.8", path)
    counts = {}
    for setting in ("3", "2", None):
        for props in path.glob("brokers/*/server.properties"):
            kept = [x for x in props.read_text().splitlines() if not x.startswith("min.insync.replicas=")]
            props.write_text("\n".join(kept + ([f"min.insync.replicas={setting}"] if setting else [])) + "\n")
        h = health(open_bundle(path, spark))
        assert h is not None
        last = h.minutes.orderBy(F.desc("minute")).first()
        counts[setting] = (last.under_replicated, last.under_min_isr)
    assert counts["3"] == (18, 18) and counts["2"] == (18, 0) and counts[None] == (18, 0)
    for props in path.glob("brokers/*/server.properties"):
        props.unlink()
    bundle = open_bundle(path, spark)
    h = health(bundle)
    assert h is not None and h.minutes.agg(F.max("under_min_isr")).first()[0] is None
    coverage = Coverage()
    health_analysis.findings(bundle, coverage)
    assert coverage["health"].status == "partial" and "min.insync.replicas" in coverage["health"].missing[0]


def test_without_zookeeper_history_nothing_is_guessed(sample: Callable[[str], Bundle]) -> None:
    bundle = sample("handmade-2.8")
    coverage = Coverage()
    assert health(bundle) is None
    assert health_analysis.findings(bundle, coverage) == [] and balance.findings(bundle, coverage) == []
    # health reads the brokers' lines for failed log dirs (none here), leader balance the states they print
    # for flapping replicas (none here), and both say the history is missing
    assert coverage["health"].status == "partial" and coverage["leader_balance"].status == "partial"
    assert coverage["leader_balance"].missing[0].startswith("ZooKeeper txn logs (zk/txnlog/): how long an")
    assert "ZooKeeper txn logs (zk/txnlog/): offline and under-replicated partitions over time" in (
        coverage["health"].missing
    )
    with pytest.raises(ValueError, match="expected a count and a unit"):
        health(bundle, "fortnightly")


# -- the findings half (`health_analysis.judge`), from hand-written facts: no Spark -----------------------
BEGAN = datetime(2024, 3, 12, 9, 0, tzinfo=timezone.utc)


def checked() -> Coverage:
    """Coverage as the runner leaves it before `judge` (contract.Analysis.findings)."""
    coverage = Coverage()
    coverage.record("health", ["ZooKeeper history"])
    return coverage


def sustained(still: int, ended: int | None) -> Episodes:
    tps = [TP("orders", 0), TP("orders", 1), TP("orders", 2)]
    return Episodes([3], 3, 12 * 60_000, still, tps, BEGAN, (0x200000030, ended))


def test_sustained_under_replication_is_a_warning_while_it_lasts() -> None:
    now = Facts([], [sustained(2, None)], None, True)
    (still,) = health_analysis.judge(now, checked())
    assert (still.kind, still.severity) == ("partition.under_replicated", WARNING)
    assert still.subject == {"partitions": 3, "brokers": [3], "still": 2}
    assert still.summary == (
        "3 partition(s) (orders 0-2) were under-replicated for up to 12 min, 2 still at the capture: "
        "broker(s) 3 out of their ISR from 2024-03-12 09:00:00 ZooKeeper time."
    )
    assert still.evidence == ("zk:txn@0x200000030",)
    (over,) = health_analysis.judge(Facts([], [sustained(0, 0x200000050)], None, True), checked())
    assert over.severity == INFO and ", all recovered before the capture" in over.summary
    assert over.evidence == ("zk:txn@0x200000030", "zk:txn@0x200000050")


def test_from_zookeepers_tree_under_replication_at_the_capture_is_a_lower_bound() -> None:
    """Without the txn logs: under-replicated at the capture, how long at least, cited by the state znodes;
    those written too recently to tell are said in coverage, and min.insync.replicas is not asked."""
    coverage = Coverage()
    coverage.record("health", ["ZooKeeper state", "broker logs"])
    facts = Facts([], [sustained(3, None)], None, False, told=FROM_TREE, recent=2)
    (now,) = health_analysis.judge(facts, coverage)
    assert (now.severity, now.subject) == (WARNING, {"partitions": 3, "brokers": [3], "still": 3})
    assert now.summary == (
        "3 partition(s) (orders 0-2) were under-replicated at the capture: broker(s) 3 out of their ISR, the "
        "longest for at least 12 min, since ZooKeeper wrote that ISR at 2024-03-12 09:00:00 ZooKeeper time "
        "(it may have been short before: ZooKeeper's txn logs would tell)."
    )
    assert now.evidence == tuple(f"zk:/brokers/topics/orders/partitions/{p}/state" for p in range(3))
    assert coverage["health"].missing == [
        "2 partition(s) under-replicated at the capture whose state ZooKeeper wrote less than 5 min before "
        "it: whether they were for longer is not known (ZooKeeper's txn logs would tell)"
    ]
    coverage = checked()  # the txn logs held, none read: said, as where the tree stands in
    assert health_analysis.judge(Facts([], [], None, False, told=FROM_TREE), coverage) == []
    assert coverage["health"].missing == [NO_TXN]


def test_nothing_sustained_is_no_finding_and_an_unknown_min_isr_is_said() -> None:
    coverage = checked()
    assert health_analysis.judge(Facts([], [], None, True), coverage) == []
    assert coverage["health"].missing == []
    coverage = checked()
    assert health_analysis.judge(Facts([], [], None, False), coverage) == []
    assert "min.insync.replicas" in coverage["health"].missing[0]


def test_without_the_history_a_pasted_describe_and_log_dirs_stand_in() -> None:
    shown = Group("pasted/d.txt", BEGAN, 1, [TP("orders", 3)], [1, 2, 3], [5], out_of_isr=[3])
    failed = FailedDir("pasted/l.txt", None, 1, "/data/kafka-2", "org.apache.kafka.common.errors.X", 3)
    coverage = checked()
    found = health_analysis.judge(Facts([failed], None, Shown([shown], True), False, told=None), coverage)
    (dead, under) = sorted(found, key=lambda f: f.kind)
    assert dead.kind == "log_dir.offline" and dead.subject["taken_at"] == "unknown"
    assert "had failed (X) when kafka-log-dirs --describe was taken at a time not known" in dead.summary
    assert under.subject == {"partitions": 1, "brokers": [3], "still": 1, "taken_at": "2024-03-12T09:00:00Z"}
    assert under.evidence == ("pasted/d.txt:5",)
    assert coverage["health"].missing == [NO_TXN]
    assert {"kafka-topics --describe (pasted)", "kafka-log-dirs --describe (pasted)"} <= set(
        coverage["health"].used
    )
    # a describe pasted that shows no partition under-replicated is read, and says so; no paste, nothing
    coverage = checked()
    assert health_analysis.judge(Facts([], None, Shown([], True), False, told=None), coverage) == []
    assert "kafka-topics --describe (pasted)" in coverage["health"].used
    coverage = checked()
    assert health_analysis.judge(Facts([], None, None, False, told=None), coverage) == []
    assert coverage["health"].used == ["ZooKeeper history"]


def test_a_failed_log_dir_from_the_brokers_lines_is_critical_and_says_whether_it_halted() -> None:
    at = datetime(2024, 3, 12, 9, 20, tzinfo=timezone.utc)
    error = Said(at, "brokers/2/logs/server.log", 7, "Error while appending records to orders-1 in dir /d1")
    stop = Said(at, "brokers/2/logs/server.log", 10, "Stopping serving replicas in dir /d1")
    halt = Said(at, "brokers/3/logs/server.log", 4, "Shutdown broker because all log dirs in /d have failed")
    served = DirFailed(2, "/d1", error, error, None)
    halted = DirFailed(3, "/d", stop, None, halt)
    coverage = checked()
    (one, other) = health_analysis.judge(Facts([], [], None, True, [served, halted]), coverage)
    assert (one.kind, one.severity, other.severity) == ("log_dir.offline", CRITICAL, CRITICAL)
    assert one.subject == {"broker": 2, "log_dir": "/d1", "halted": False}
    assert other.subject == {"broker": 3, "log_dir": "/d", "halted": True}
    assert '("Error while appending records to orders-1 in dir /d1")' in one.summary
    assert "stopped serving its replicas in that dir" in one.summary and "halted" not in one.summary
    assert "the broker then halted" in other.summary and "every replica it held is offline" in other.summary
    assert one.evidence == (file_ref("brokers/2/logs/server.log", 7),)  # first line and error: one ref
    assert other.evidence == tuple(file_ref(f"brokers/{b}/logs/server.log", n) for b, n in ((2, 10), (3, 4)))
    assert health_analysis.judge(Facts([], [], None, True, []), checked()) == []


# A broker whose one log dir of two fails (3.6's words, its I/O error naming the dir), and one whose only dir
# fails, so that it halts (its I/O error names a checkpoint file, not the dir).
CHANNEL = "org.apache.kafka.storage.internals.log.LogDirFailureChannel"
RM, LM = "kafka.server.ReplicaManager", "kafka.log.LogManager"
D, D1 = "/var/lib/kafka/data", "/var/lib/kafka/data-1"
FAILED_DIRS = {
    2: [
        ("09:20:00,100", "ERROR", f"Error while appending records to orders-1 in dir {D1}", CHANNEL),
        "java.io.IOException: Input/output error",
        "\tat java.base/sun.nio.ch.FileDispatcherImpl.write0(Native Method)",
        ("09:20:00,180", "WARN", f"[ReplicaManager broker=2] Stopping serving replicas in dir {D1}", RM),
        ("09:20:00,200", "WARN", f"Stopping serving logs in dir {D1}", LM),
        ("09:20:00,210", "WARN", f"[ReplicaManager broker=2] Stopped serving replicas in dir {D1}", RM),
    ],
    3: [
        ("09:25:00,000", "ERROR", f"Error while writing to checkpoint file {D}/x-checkpoint", CHANNEL),
        "java.io.IOException: No space left on device",
        ("09:25:00,050", "WARN", f"[ReplicaManager broker=3] Stopping serving replicas in dir {D}", RM),
        ("09:25:00,070", "FATAL", f"Shutdown broker because all log dirs in {D} have failed", LM),
    ],
}


def _log4j(line: str | tuple[str, str, str, str]) -> str:
    """A line as the sample's layout writes it (`[%d] %p %m (%c)%n`), or a continuation as it is."""
    if isinstance(line, str):
        return line + "\n"
    at, level, message, logger = line
    return f"[2024-03-12 {at}] {level} {message} ({logger})\n"


@pytest.mark.parametrize("zk", [True, False], ids=["with ZooKeeper", "logs alone"])
def test_failed_log_dirs_are_read_from_the_brokers_lines_with_or_without_zookeeper(
    spark: SparkSession, tmp_path: Path, triaged: Callable[[str], Triage], zk: bool
) -> None:
    copy = tmp_path / "bundle"
    shutil.copytree(SAMPLE_DATA / "healthy-3.6", copy)
    if not zk:
        shutil.rmtree(copy / "zk")
    server_log = copy / "brokers" / "3" / "logs" / "server.log"
    halt_line = len(server_log.read_text(encoding="utf-8").splitlines()) + len(FAILED_DIRS[3])
    for broker, lines in FAILED_DIRS.items():
        with (copy / "brokers" / str(broker) / "logs" / "server.log").open("a", encoding="utf-8") as log:
            log.write("".join(map(_log4j, lines)))
    found = triage(open_bundle(copy, spark), only=["health"])
    dirs = [f for f in found.findings if f.kind == "log_dir.offline"]
    assert [f.subject for f in dirs] == [
        {"broker": 2, "log_dir": D1, "halted": False},
        {"broker": 3, "log_dir": D, "halted": True},
    ]
    assert found.critical and "Error while appending records to orders-1" in dirs[0].summary
    assert dirs[1].evidence[-1] == file_ref("brokers/3/logs/server.log", halt_line)
    # the sample as it was: no dir failed, none found
    assert [f for f in triaged("healthy-3.6").findings if f.kind == "log_dir.offline"] == []


def test_the_broker_alone_in_the_isr_of_what_it_leads_is_not_to_be_restarted() -> None:
    """A controlled shutdown cannot move a leadership no other in-sync replica can take
    (`controlled_shutdown_keeps_a_sole_isr_leader`): the finding names the broker and says why."""
    only = [OnlyInSync(2, 3, [("orders", 0), ("orders", 4), ("payments", 1)], controller=True)]
    coverage = Coverage()
    coverage.record("health", ["ZooKeeper history"])
    (found,) = health_analysis.judge(Facts([], [], None, True, only=only), coverage)
    assert (found.kind, found.severity, found.subject) == (
        "broker.only_in_sync",
        WARNING,
        {"broker": 2, "partitions": 3},
    )
    assert "Broker 2, and the controller, is the only in-sync replica, and ZooKeeper's leader, of 3" in (
        found.summary
    )
    assert "(orders 0,4; payments 1)" in found.summary and "do not restart or stop it" in found.summary
    assert found.summary.endswith("until it returns, with a controller failover on top.")
    assert found.evidence[0] == "zk:/brokers/topics/orders/partitions/0/state"
    assert "refuses" not in found.summary


def test_a_broker_alone_in_the_isr_of_what_it_refuses_is_not_told_a_restart_would_help() -> None:
    """Where it refuses to lead them (INCONSISTENT_TOPIC_ID), nobody serves them now and a restart elects
    it again as it returns, to refuse again: the finding says so, and the repair comes first."""
    coverage = Coverage()
    coverage.record("health", ["ZooKeeper history"])
    every = OnlyInSync(1, 1, [("orders", 2)], controller=False, refusing=1)
    (found,) = health_analysis.judge(Facts([], [], None, True, only=[every]), coverage)
    assert "It refuses to lead all of them (INCONSISTENT_TOPIC_ID): nobody serves those now" in found.summary
    assert "repair their topic id first" in found.summary and "until those are back" not in found.summary
    some = OnlyInSync(2, 3, [("orders", 0), ("orders", 4), ("payments", 1)], controller=True, refusing=1)
    (found,) = health_analysis.judge(Facts([], [], None, True, only=[some]), coverage)
    assert "It refuses to lead 1 of them" in found.summary
    assert "do not restart or stop it until the others are back in the ISR" in found.summary
