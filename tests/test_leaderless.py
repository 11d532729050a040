"""The leaderless analysis's findings half (`judge`), from hand-written facts: no Spark. Its facts half is
checked on the samples (test_golden, test_health's offline and under-replicated episodes), on simulated
stories by the truth tests (test_triage_must_find: a hang and a network partition, whose leaders went
silent before ZooKeeper expired them), and here on a capture of ZooKeeper's tree alone."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from conftest import REPO
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from workbench.analysis.contract import NO_TXN
from workbench.analysis.findings import TP, Coverage, Finding
from workbench.analysis.leaderless import Facts, NotActing, judge
from workbench.analysis.leaderless_lines import logged_groups
from workbench.analysis.lost_leader import Down, Elected, Succeeded
from workbench.analysis.not_acting import moved_by, not_acting_finding, refusals
from workbench.analysis.offline import Lined, Offline
from workbench.analysis.outage_told import kafka_counted
from workbench.analysis.triage import Triage, triage
from workbench.frames import Bundle, WithoutZooKeeper, open_bundle
from workbench.model.channel import Quiet
from workbench.model.described import Group, Shown
from workbench.model.health import captured_at
from workbench.model.history.counts import OfflineNow, OfflineThen
from workbench.model.history.sessions import Expired
from workbench.model.outage import Outage, _failed_sends
from workbench.model.partition_history import counted_as
from workbench.model.pauses import Paused
from workbench.model.refs import Said
from workbench.model.service import unserved
from workbench.model.tenures import TenureEnd
from workbench.together import answer

AT = datetime(2024, 3, 12, 9, 0, tzinfo=timezone.utc)
STUCK = REPO / "sample_data" / "deletion-stuck-2.8"
TPS = [TP("orders", 0), TP("orders", 1)]


def checked() -> Coverage:
    """Coverage as the runner leaves it before `judge` (contract.Analysis.findings)."""
    coverage = Coverage()
    coverage.record("leaderless", ["ZooKeeper history"])
    return coverage


def crashed(still: int = 0) -> Offline:
    """Broker 3's registration ended at 0x40 and took the lead of two partitions for up to 20 s."""
    return Offline(2, TPS, 20_000, still, AT, 0x40, 0x48, leader=3, registered=False)


def test_nothing_where_every_partition_had_a_working_leader() -> None:
    assert judge(Facts(True, history_read="the txn logs read"), checked()) == []


def test_an_offline_group_is_critical_while_it_lasts() -> None:
    (found,) = judge(Facts(True, offline=[crashed(still=2)]), checked())
    assert (found.kind, found.severity.value) == ("partition.offline", "critical")
    assert found.subject == {
        "partitions": 2,
        "zxid": "0x40",
        "broker": 3,
        "still": 2,
        "outage_ms": [20_000] * 2,
    }
    assert found.summary == (
        "2 partition(s) (orders 0-1) had no working leader for up to 20.0 s from zxid 0x40 (2024-03-12 "
        "09:00:00 ZooKeeper time), when broker 3, their leader, was no longer registered; 2 still offline at "
        "the capture. No client could produce to or consume from them meanwhile."
    )
    assert found.evidence == ("zk:txn@0x40", "zk:txn@0x48")
    unset = Offline(1, TPS[:1], 500, 0, AT, 0x41, 0x42, leader=-1)
    (over,) = judge(Facts(True, offline=[unset]), checked())
    assert (
        over.severity.value == "warning"
        and "for up to 500 ms from zxid 0x41" in over.summary
        and "when no leader was set (-1). No client" in over.summary
    )


def test_partitions_of_a_deletion_not_begun_say_why_kafka_counts_them() -> None:
    """A new controller that holds a deletion back counts its partitions offline again (2.3+): the finding
    says so, and says nothing of it where no partition's topic was queued."""
    held = Offline(2, TPS, 20_800, 0, AT, 0x14E, 0x18D, leader=-1, queued=2)
    (found,) = judge(Facts(True, offline=[held]), checked())
    assert "2 of them belong to topic(s) queued for deletion whose deletion the controller had not" in (
        found.summary
    )
    assert "OfflinePartitionsCount counts them until it begins" in found.summary
    (plain,) = judge(Facts(True, offline=[crashed()]), checked())
    assert "queued for deletion" not in plain.summary
    # said too where the episode is told another way: it ran on into a refusal, or its leader went silent
    ran_on = replace(held, refused=2, refused_by=[2])
    silent = Outage(31_000, 38_000, None, "", 18_000, "its registration's negotiated timeout", ())
    gone = Facts(True, offline=[replace(crashed(), queued=1)], silent={0x40: (silent, "hang")})
    for told in (judge(Facts(True, offline=[ran_on]), checked()), judge(gone, checked())):
        (f,) = told
        assert "of them belong to topic(s) queued for deletion" in f.summary, f.summary


def test_a_silent_leaders_outage_leads_the_finding() -> None:
    outage = Outage(
        31_000, 38_000, None, "", 18_000, "its registration's negotiated timeout", ("zk:txn@0x3a",)
    )
    (found,) = judge(Facts(True, offline=[crashed()], silent={0x40: (outage, "hang")}), checked())
    assert found.subject == {"partitions": 2, "zxid": "0x40", "broker": 3, "outage_ms": [31_000, 38_000],
                             "offline_ms": 20_000, "still": 0}  # fmt: skip
    assert found.summary.startswith(
        "2 partition(s) (orders 0-1) had no working leader for 31.0 s to 38.0 s: broker 3, their leader, "
        "stood still (a long GC pause, a stalled disk or VM) and did no leader's work from then: its "
        "ZooKeeper session timeout was 18000 ms"
    )
    assert "ZooKeeper kept its registration until zxid 0x40" in found.summary
    assert found.evidence == ("zk:txn@0x40", "zk:txn@0x48", "zk:txn@0x3a")
    assert "no leader was elected" not in found.summary
    # registered anew before the controller elected in its place read the live brokers: led again as before
    back = Facts(True, offline=[replace(crashed(), back=2)], silent={0x40: (outage, "hang")})
    (again,) = judge(back, checked())
    assert (
        "They had broker 3 as their leader again, at the same leader epoch, once it registered anew: no "
        in (again.summary)
    )
    # no controller saw them offline: Kafka's count never held them, as the lines' findings say it
    assert "OfflinePartitionsCount never counted them" in again.summary
    assert again.subject == {**found.subject, "offline_ms": 0}


def test_what_kafkas_offline_count_saw_of_an_outage_is_said() -> None:
    """OfflinePartitionsCount is set after each controller event (`offline_count_set_after_each_event`):
    partitions the event that learned their leader was gone elected were never counted, the rest only from
    then to their election, and a refusal after it by no metric at all."""
    gauge = "Kafka's OfflinePartitionsCount"

    def said(o: Offline) -> str:
        (found,) = judge(Facts(True, offline=[o]), checked())
        return found.summary

    assert f"{gauge} never counted them: the active controller sets it after each event it handles, and " in (
        said(replace(crashed(), at_once=2))
    )
    some = said(replace(crashed(), at_once=1))
    assert f"{gauge} counted them for less: the active controller" in some
    assert "to their election (the longest's at zxid 0x48), and never the 1 that event elected." in some
    assert "never the" not in said(replace(crashed(), at_once=0))
    assert "counted them for less, if at all:" in said(replace(crashed(), at_once=None))  # a leader unknown
    # still at the capture, or no leader set (-1) by a controller's event: counted as long as they lasted
    assert gauge not in said(replace(crashed(still=2), at_once=0))
    assert gauge not in said(Offline(1, TPS[:1], 500, 0, AT, 0x41, 0x42, leader=-1))
    refused = said(replace(crashed(), refused=2, refused_by=[2], at_once=0))
    assert f"{gauge} counted them at most until that election, and no Kafka metric counts a leader" in refused
    assert "never counted" not in refused and refused.endswith("stayed quiet until they were led again.")
    assert said(replace(crashed(still=2), refused=2, refused_by=[2])).endswith("has been quiet since.")


def test_from_the_lines_what_kafkas_offline_count_saw_is_said() -> None:
    """From the lines alone, partitions elected at once (no state without a leader printed before) were
    never counted; a new controller's start takes them offline and elects them in one event."""
    assert "never counted them" in kafka_counted("at 09:00:01 (the controller's clock)", 2, 2)
    assert "and never the 1 that event elected." in kafka_counted("at 09:00:01", 1, 3)
    assert ", if at all:" in kafka_counted("at 09:00:01") and "not where one event did both." in (
        kafka_counted("at 09:00:01")
    )


def test_a_start_the_history_does_not_show_is_said_unknown() -> None:
    unseen = Offline(2, TPS, 60_000, 0, AT, 0x10, 0x20, known_start=False)
    (found,) = judge(Facts(True, offline=[unseen], history_read="the txn logs from 0x10"), checked())
    assert found.subject == {
        "partitions": 2,
        "zxid": "0x10",
        "began": "unknown",
        "still": 0,
        "outage_ms": [60_000] * 2,
    }
    assert "had no working leader when the txn logs from 0x10 first shows their state" in found.summary
    assert "and so for up to 60.0 s from then;" in found.summary  # from its first sight, not its start
    assert "; when that began is not known. No client could" in found.summary


def test_a_leader_that_refuses_to_act() -> None:
    refused = NotActing(2, 0x30, 2, TPS, 90_000, 2, AT, 5, None, ["broker-2:logs/state-change.log:9"])
    (found,) = judge(Facts(True, not_acting=[refused]), checked())
    assert found.subject == {
        "partitions": 2,
        "broker": 2,
        "zxid": "0x30",
        "still": 2,
        "outage_ms": [90_000] * 2,
    }
    assert "for up to 90.0 s, still at the capture: from zxid 0x30" in found.summary
    assert "(leader epoch 5)" in found.summary
    assert found.evidence == ("zk:txn@0x30", "broker-2:logs/state-change.log:9")
    assert "the leaders' UnderReplicatedPartitions metric misses them too" in found.summary
    assert "lists only those whose ISR is short of their replicas (none of them: their ISR was whole)" in (
        found.summary
    )
    (short,) = judge(Facts(True, not_acting=[replace(refused, short=1)]), checked())
    assert "short of their replicas (1 of them)" in short.summary


def test_without_the_history_a_pasted_describe_stands_in() -> None:
    shown = Shown([Group("pasted/d.txt", AT, 1, TPS[1:], [2, 3, 1], [4])], True)
    coverage = checked()
    (found,) = judge(Facts(False, shown), coverage)
    assert found.subject == {"partitions": 1, "taken_at": "2024-03-12T09:00:00Z"}
    assert found.evidence == ("pasted/d.txt:4",)
    assert coverage["leaderless"].missing == []  # no txn logs is the contract's to say, not "unreadable"
    coverage = checked()
    assert judge(Facts(False, None, unread=True), coverage) == [] and coverage["leaderless"].missing == [
        NO_TXN
    ]


def test_without_the_history_the_tree_tells_the_partitions_offline_at_the_capture() -> None:
    """ZooKeeper's tree at the capture: a leader not registered (bounded by the state's last write and
    the last change to /brokers/ids) and leader -1 (at least since the state's last write), one finding
    each; a partition the controller's lines already tell unserved when they end is theirs alone, and the
    partitions of topics queued for deletion are left to the deletion's finding, said in coverage."""
    now = [
        OfflineNow(TP("orders", 1), 2, [1, 2], 0xA7, 60_000, 300_000),
        OfflineNow(TP("orders", 4), 2, [2], 0xB0, 0, 120_000),
        OfflineNow(TP("payments", 0), -1, [3], 0x90, 600_000, None),
        OfflineNow(TP("payments", 1), -1, [3], 0x91, 590_000, None),  # the lines tell it
    ]
    coverage = checked()
    told = group([1], 5, [None], offline_now=[TP("payments", 1)])
    found = judge(Facts(False, offline=[told], now=OfflineThen(now, 6)), coverage)
    lines, none, gone = found
    assert lines.subject["still"] == 1 and "(payments 1)" in lines.summary
    assert (gone.kind, gone.severity.name, gone.subject) == (
        "partition.offline",
        "CRITICAL",
        {"partitions": 2, "zxid": "0xa7", "broker": 2, "still": 2, "outage_ms": [60_000, 300_000]},
    )
    assert gone.summary.startswith(
        "2 partition(s) (orders 1,4) had no live leader at the capture, as ZooKeeper's tree holds it: their "
        "state znodes name broker 2 their leader, and broker 2 is not registered in /brokers/ids"
    )
    assert "nobody has served them for 1.0 to 5.0 min" in gone.summary
    assert "OfflinePartitionsCount does not count them" in gone.summary
    assert gone.evidence == (
        "zk:/brokers/topics/orders/partitions/1/state@mzxid=0xa7",
        "zk:/brokers/topics/orders/partitions/4/state@mzxid=0xb0",
    )
    assert none.subject == {
        "partitions": 1,
        "zxid": "0x90",
        "broker": None,
        "still": 1,
        "outage_ms": [600_000] * 2,
        "offline_ms": 600_000,
    }
    assert "(payments 0) had no live leader at the capture" in none.summary
    assert "no replica of their ISR, broker(s) 3, was live to elect" in none.summary
    assert "for at least 10 min" in none.summary and "OfflinePartitionsCount counts them" in none.summary
    (said,) = [u for u in coverage["leaderless"].used if u.startswith("ZooKeeper's tree at the capture")]
    assert said.startswith("ZooKeeper's tree at the capture: 6 partition(s) of topics queued for deletion")
    # nothing offline in the tree, or no tree: nothing found
    for nothing in (OfflineThen([]), None):
        coverage = checked()
        assert judge(Facts(False, now=nothing), coverage) == [] and coverage["leaderless"].used == [
            "ZooKeeper history"
        ]


def _capture(tmp: Path, edit: Callable[[list[dict]], None]) -> Path:
    """deletion-stuck-2.8 as `workbench capture` holds it through ZooKeeper's client alone (its tree and
    manifest: no txn logs, no broker's files), its tree edited by `edit`."""
    out = tmp / "capture"
    (out / "zk").mkdir(parents=True)
    shutil.copy(STUCK / "manifest.json", out)
    tree = _tree()
    edit(tree)
    (out / "zk" / "znodes.jsonl").write_text("".join(json.dumps(z) + "\n" for z in tree))
    return out


def _tree() -> list[dict]:
    return [json.loads(line) for line in (STUCK / "zk" / "znodes.jsonl").read_text().splitlines()]


def test_a_capture_of_the_tree_alone_tells_the_partitions_offline_then(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Broker 1's registration gone from the tree (ZooKeeper advancing /brokers/ids' pzxid past every
    write, then writing another znode a minute before the capture) and topic-0 1's state set to leader -1:
    the partitions whose state names broker 1 are offline from between their state's last write and that
    later write, topic-0 1 at least since its state's; clickstream-old's, leader -1 while queued for
    deletion, are left to the deletion's finding. The intact tree shows none."""
    whole = open_bundle(_capture(tmp_path / "intact", lambda _: None), spark)
    at = captured_at(whole)
    assert at is not None
    captured = int(at.timestamp() * 1000)
    intact = triage(whole, only=["leaderless"])
    assert intact.of_kind("partition.offline") == []
    (said,) = [
        u for u in intact.coverage["leaderless"].used if u.startswith("ZooKeeper's tree at the capture")
    ]
    assert said.startswith("ZooKeeper's tree at the capture: 6 partition(s) of topics queued for deletion")
    assert "ZooKeeper state" in intact.coverage["leaderless"].used

    def edit(tree: list[dict]) -> None:
        last = max(max(z["stat"]["mzxid"], z["stat"]["pzxid"]) for z in tree)
        tree[:] = [z for z in tree if z["path"] != "/brokers/ids/1"]
        for z in tree:
            if z["path"] == "/brokers/ids":
                z["stat"]["pzxid"] = last + 1
            if z["path"] == "/brokers/topics/topic-0/partitions/1/state":
                z["data"] = json.dumps(json.loads(z["data"]) | {"leader": -1, "isr": [2]})
            if z["path"] == "/controller_epoch":
                z["stat"].update(mzxid=last + 2, mtime=captured - 60_000)

    states = {tuple(z["path"].split("/")[3:6:2]): z for z in _tree() if z["path"].endswith("/state")}
    led = [z["stat"] for z in states.values() if json.loads(z["data"])["leader"] == 1]
    t = triage(open_bundle(_capture(tmp_path / "edited", edit), spark), only=["leaderless"])
    none, gone = sorted(t.of_kind("partition.offline"), key=lambda f: f.subject["broker"] or 0)
    oldest = min(led, key=lambda s: s["mtime"])
    assert gone.subject == {
        "partitions": len(led),
        "zxid": hex(oldest["mzxid"]),
        "broker": 1,
        "still": len(led),
        "outage_ms": [60_000, captured - oldest["mtime"]],
    }
    assert "broker 1 is not registered in /brokers/ids" in gone.summary
    z = states[("topic-0", "1")]["stat"]
    assert none.subject == {
        "partitions": 1,
        "zxid": hex(z["mzxid"]),
        "broker": None,
        "still": 1,
        "outage_ms": [captured - z["mtime"]] * 2,
        "offline_ms": captured - z["mtime"],
    }
    assert "(topic-0 1) had no live leader at the capture" in none.summary
    assert none.evidence == (f"zk:/brokers/topics/topic-0/partitions/1/state@mzxid={hex(z['mzxid'])}",)


MISMATCH = REPO / "sample_data" / "topicid-mismatch-2.8"


def _lines_until(tmp: Path, until: str) -> Path:
    """topicid-mismatch-2.8 as a capture through ZooKeeper's client holds it (its tree, no txn logs) with
    the brokers' logs collected earlier, up to `until` ('2024-03-12 08:20:31,125': each broker's clock)."""
    out = tmp / "early-logs"
    shutil.copytree(MISMATCH, out, ignore=shutil.ignore_patterns("txnlog"))
    for log in out.glob("brokers/*/logs/*"):
        kept, keep = [], True
        for line in log.read_text().splitlines(keepends=True):
            if line.startswith("["):  # a record's first line; its continuation lines follow it
                keep = line[1:24] <= until
            if keep:
                kept.append(line)
        log.write_text("".join(kept))
    return out


def test_partitions_the_lines_leave_without_a_leader_are_led_in_the_tree_at_the_capture(
    spark: SparkSession, tmp_path: Path
) -> None:
    """The brokers' logs end 7 ms into broker 1's loss, before the controller's election: the lines leave
    its partitions without a leader, and ZooKeeper's tree at the capture, 40 minutes later, names a
    registered leader for each. They were led again by then: no partition is still unserved, though the
    outage lasted at least until the lines end."""
    bundle = open_bundle(_lines_until(tmp_path, "2024-03-12 08:20:31,125"), spark)
    found = triage(bundle, only=["leaderless"])
    (lost,) = [f for f in found.of_kind("partition.offline") if f.subject.get("broker") == 1]
    n = lost.subject["partitions"]
    assert n > 1 and (lost.severity.name, lost.subject["still"], lost.subject["led_at_capture"]) == (
        "WARNING",
        0,
        n,
    )
    assert (
        "but at the capture ZooKeeper's tree names a registered leader for them (broker(s) " in lost.summary
    )
    # from its start past the lines' end (7 ms after), and at most until the capture, 40 minutes later
    lower, upper = lost.subject["outage_ms"]
    assert 0 < lower < 1_000 and 39 * 60_000 < upper < 41 * 60_000
    assert [f for f in found.findings if f.severity.name == "CRITICAL"] == []
    # the same lines without the tree: still unserved when they end, as far as anything shows
    alone = triage(WithoutZooKeeper(bundle), only=["leaderless"])
    (still,) = [f for f in alone.of_kind("partition.offline") if f.subject.get("broker") == 1]
    assert (still.severity.name, still.subject["still"]) == ("CRITICAL", n)
    assert "led_at_capture" not in still.subject


# -- without ZooKeeper's history: the stretches the controller's lines leave a partition without a leader ----
def group(
    partitions: list[int], began: int | None, ended: list[int | None], lost: int | None = 2, **kw: Any
) -> Offline:
    """Payments `partitions`, left without a leader by the controller's line at second `began` (None: not
    in the lines; keyed by the election that ended the first), each given a leader again at its second in
    `ended` (None: by no line), as `logged_groups` groups them; `kw`, what the lines add (`Lined`), and,
    where it ran on, `refused_by` and how many a broker `led_again`."""
    at = lambda s: AT.replace(second=s)  # noqa: E731
    ref = lambda s: f"broker-1:logs/state-change.log:{100 + s}"  # noqa: E731
    key = at(began if began is not None else ended[0])
    led = [e for e in ended if e is not None]
    n, known = len(partitions), len(partitions) if began is not None else 0
    refused_by, led_again = kw.pop("refused_by", []), kw.pop("led_again", 0)
    kw.setdefault("last_led", max((at(e) for e in led), default=None))
    lines = Lined(ref(began) if began is not None else None, sorted({ref(e) for e in led})[:2], **kw)
    return Offline(
        n,
        [TP("payments", p) for p in partitions],
        max(((at(e) - key).seconds * 1000 for e in led), default=0) if began is not None else 0,
        n - (led_again if refused_by else len(led)),
        key,
        None,
        None,
        leader=lost,
        known_start=known > 0,
        refused=n if refused_by else 0,
        refused_by=refused_by,
        at_once=n - known if known else None,
        lines=lines,
    )


def test_from_the_controllers_lines_partitions_without_a_leader() -> None:
    logged = [group([0, 1], 5, [35, None]), group([2, 3], None, [40, 40], lost=1)]
    coverage = checked()
    found = judge(Facts(False, offline=logged, ends=AT.replace(minute=59)), coverage)
    gone, unknown = found
    # bounded, as the report says it (`postmortem.longest_told`): one still, so until the evidence ends
    lasted = (59 * 60 - 5) * 1000
    assert (gone.severity.name, gone.subject) == (
        "CRITICAL",
        {"partitions": 2, "broker": 2, "began": "2024-03-12T09:00:05Z", "still": 1, "offline_ms": 30_000,
         "outage_ms": [lasted, lasted]},
    )  # fmt: skip
    assert (
        "(payments 0-1) had no working leader for 59 min from 2024-03-12 09:00:05 (the controller's clock) "
        "(their leader " in (gone.summary)
    )
    assert (
        "1 got a leader again, the last after 30.0 s; no later line of the controller's names a leader "
        in (gone.summary)
    )
    assert "names a leader for 1 of them (the evidence ends" in gone.summary
    assert gone.evidence == ("broker-1:logs/state-change.log:105", "broker-1:logs/state-change.log:135")
    assert (unknown.severity.name, unknown.subject) == (
        "WARNING",
        {"partitions": 2, "broker": 1, "began": "unknown"},
    )
    assert "when they lost their leader is not in its lines" in unknown.summary
    assert coverage["leaderless"].missing == []
    # txn logs held but unreadable are said; logs alone are not called unreadable txn logs
    assert judge(Facts(False), checked()) == []


def test_from_the_lines_a_partition_the_tree_shows_led_at_the_capture_is_not_still_unserved() -> None:
    """The lines end with partitions still without a leader, before the capture: nothing tells what came
    after, so their outage is at least until the lines end and at most until the capture. ZooKeeper's tree
    at the capture settles it where it is held: a registered leader for some, and those were led again by
    then (a controller elected one after the lines end), so the finding does not count them still, and
    says so; still without a live leader there, and their outage runs to the capture."""
    ends, lines_end = AT.replace(minute=59), AT.replace(minute=10)
    at_least, at_most = (10 * 60 - 5) * 1000, (59 * 60 - 5) * 1000

    def judged(**tree: Any) -> Finding:
        told = Facts(False, offline=[group([0, 1], 5, [None, None], **tree)], ends=ends, lines_end=lines_end)
        (f,) = judge(told, checked())
        return f

    alone = judged()
    assert (alone.severity.name, alone.subject["still"]) == ("CRITICAL", 2)
    assert "led_at_capture" not in alone.subject and "registered leader" not in alone.summary
    said = "names a leader for them (the lines end 2024-03-12 09:10:00, the capture 09:59:00)."
    assert said in alone.summary
    assert alone.subject["outage_ms"] == [at_least, at_most]
    # the tree shows one still without a live leader at the capture: so until the capture
    offline = judged(offline_now=[TP("payments", 0)])
    assert offline.subject["outage_ms"] == [at_most, at_most]
    assert "at the capture ZooKeeper's tree shows 1 of them still without a live leader" in offline.summary
    some = judged(led_now=1, led_tps=[TP("payments", 1)], led_by=[3])
    assert (some.severity.name, some.subject["still"], some.subject["led_at_capture"]) == ("CRITICAL", 1, 1)
    assert (
        "no later line of the controller's names a leader for them (the lines end 2024-03-12 09:10:00, the "
        "capture 09:59:00), but at the capture ZooKeeper's tree names a registered leader for 1 of them "
        "(payments 1) (broker(s) 3): a controller elected one after the lines end" in some.summary
    )
    led = judged(led_now=2, led_tps=[TP("payments", 0), TP("payments", 1)], led_by=[2, 3])
    assert (led.severity.name, led.subject["still"], led.subject["led_at_capture"]) == ("WARNING", 0, 2)
    assert "registered leader for them (broker(s) 2, 3): a controller elected one after the lines end" in (
        led.summary
    )
    assert some.subject["outage_ms"] == led.subject["outage_ms"] == [at_least, at_most]
    # the lines end at the capture: as long as that
    whole_group = group([0, 1], 5, [None, None])
    (whole,) = judge(Facts(False, offline=[whole_group], ends=ends, lines_end=ends), checked())
    assert whole.subject["outage_ms"] == [at_most, at_most]
    assert "(the evidence ends 2024-03-12 09:59:00)" in whole.summary


def test_from_the_lines_kafkas_count_is_told_by_the_event_that_handled_the_loss() -> None:
    """From the lines alone, partitions elected from OfflinePartition with no line of their going offline:
    where the controller logged their leader's failure callback first and each new leader was registered
    then (in an ISR of more than it), that event elected them and OfflinePartitionsCount never counted
    them; a new leader that registered again after the loss waited for its return (counted until then);
    a leader elected alone in its ISR, or no failure line, leaves it not known."""
    gauge = "Kafka's OfflinePartitionsCount"
    loss = Down(AT.replace(second=20), "broker-1:logs/controller.log:80", None)

    def said(elected: int, down: dict[int, list[Down]], alone: bool = False) -> tuple[str, tuple[str, ...]]:
        at = AT.replace(second=elected)
        xs = [group([0, 1], None, [elected, elected], elected=[Elected(1, alone, at, 2)])]
        last = Said(AT.replace(second=1), "brokers/2/logs/state-change.log", 38)
        sent = Said(AT.replace(second=2), "brokers/1/logs/controller.log", 45)
        (found,) = judge(Facts(False, offline=xs, quiet={(2, at): Quiet(last, sent)}, down=down), checked())
        assert found.subject["outage_ms"]  # bounded from the lost leader's last line: Kafka's count is said
        return found.summary, found.evidence

    text, refs = said(20, {2: [loss]})
    assert f"{gauge} never counted them: the active controller sets it after each event it handles" in text
    assert loss.ref in refs  # the failure callback a person opens
    # broker 1, their new leader, was not registered from 09:00:10 to 09:00:25: elected as it came back
    back = {
        2: [loss],
        1: [Down(AT.replace(second=10), "broker-1:logs/controller.log:70", AT.replace(second=25))],
    }
    text, refs = said(25, back)
    assert f"{gauge} counted them for less: the active controller" in text and "if at all" not in text
    assert "to their election at 09:00:25" in text and "never the" not in text and loss.ref in refs
    # not known: a leader alone in its ISR (it may have waited for unclean election), no loss in the lines,
    # or an election long after the loss whose event the lines do not show
    for unknown in (
        said(20, {2: [loss]}, alone=True),
        said(20, {}),
        said(20, {2: [loss._replace(down=AT - timedelta(minutes=2))]}),
    ):
        assert f"{gauge} counted them for less, if at all:" in unknown[0] and loss.ref not in unknown[1]


def test_from_the_lines_a_lost_leader_that_was_the_controller_before_is_gone_from_its_last_sign() -> None:
    """From the lines alone, partitions whose leader was the controller a new one took over from had no
    working leader from that controller's last sign of life, as the failover's outage (tenures), to the
    election that gave them one, whether the lines show them going offline or only their election; a
    leader that was not that controller, or an election a minute later, is not joined to it."""
    last_act = Said(AT.replace(second=3), "brokers/1/logs/state-change.log", 204)
    crashed_controller = TenureEnd(
        1, 1, last_act, "replica.state_change", "crash", None, None, None, None, 18_000
    )
    elected = AT.replace(second=25)
    succeeded = [Succeeded(elected, 2, crashed_controller)]
    unseen = [group([2, 3], None, [26, 26], lost=1)]
    (found,) = judge(Facts(False, offline=unseen, succeeded=succeeded), checked())
    # its session expired by the election (09:00:25): ZooKeeper last heard it a timeout before (09:00:07), a
    # tick earlier at most, and it was heard every third of the timeout while it lived: silent from
    # 09:00:05-09:00:13 (after its last act, 09:00:03) to the partitions' election at 09:00:26
    # Kafka's count never held them (the new controller's start took them offline and elected them): 0 ms
    assert found.subject == {
        "partitions": 2, "broker": 1, "began": "unknown", "outage_ms": [13_000, 21_000], "offline_ms": 0
    }  # fmt: skip
    assert "broker 1, their leader, was the controller before broker 2 (elected at 09:00:25" in found.summary
    assert found.summary.startswith(  # led with the outage, as the finding from ZooKeeper's history is
        "2 partition(s) (payments 2-3) had no working leader for 13.0 s to 21.0 s (the two brokers' clocks): "
        "broker 1, their leader, was the controller before broker 2"
    )
    assert "; the controller elected a leader from OfflinePartition at 2024-03-12 09:00:2" in found.summary
    assert found.evidence[-1] == "broker-1:logs/state-change.log:204"
    # the new controller's startup logged them offline at 09:00:26 and elected them at 09:00:27: the same
    # outage to that election, and its startup's one event took them offline and elected them
    (known,) = judge(
        Facts(False, offline=[group([2, 3], 26, [27, 27], lost=1)], succeeded=succeeded), checked()
    )
    assert known.subject == {
        "partitions": 2, "broker": 1, "began": "2024-03-12T09:00:26Z", "still": 0,
        "outage_ms": [14_000, 22_000], "offline_ms": 0,
    }  # fmt: skip
    assert known.summary.startswith(
        "2 partition(s) (payments 2-3) had no working leader for 14.0 s to 22.0 s (the two brokers' clocks): "
        "broker 1, their leader, was the controller before broker 2"
    )
    assert (
        "; the controller's lines show them without a leader from 2024-03-12 09:00:26 (the controller's "
        "clock); 2 got a leader again, the last after 1.0 s. No client" in known.summary
    )
    assert "Kafka's OfflinePartitionsCount never counted them" in known.summary
    assert known.evidence[-1] == "broker-1:logs/state-change.log:204"
    still = group([2, 3], 26, [27, None], lost=1)  # one not led again: bounded from the lines, not joined
    (open_,) = judge(
        Facts(False, offline=[still], succeeded=succeeded, ends=AT.replace(minute=59)), checked()
    )
    assert "was the controller before" not in open_.summary
    for other in (
        [Succeeded(elected, 2, replace(crashed_controller, broker=3))],  # another broker was the controller
        [Succeeded(elected - timedelta(minutes=2), 2, crashed_controller)],  # an election long before
        [Succeeded(elected, 2, replace(crashed_controller, how="unknown"))],  # how it ended is not told
    ):
        (plain,) = judge(Facts(False, offline=unseen, succeeded=other), checked())
        assert "outage_ms" not in plain.subject
        assert "when they lost their leader is not in its lines" in plain.summary


def test_from_the_lines_a_stretch_whose_new_leader_refused_runs_on_to_its_end() -> None:
    """The controller's lines end a stretch at the election; where the broker it elected refused the
    partition (its own line), nobody served it until a broker logged leading it: one episode."""
    ran_on = group(
        [0, 1], 5, [35, 35], refused_by=[3], first_refused=AT.replace(second=36),
        refused_ref="broker-3:logs/s.log:7", named_ref="broker-1:logs/state-change.log:135", led_again=1,
        last_led=AT.replace(minute=5), led_ref="broker-2:logs/s.log:9",
    )  # fmt: skip
    recovered = group([2], 5, [35])
    found = judge(Facts(False, offline=[ran_on, recovered], ends=AT.replace(minute=59)), checked())
    ran, back = sorted(found, key=lambda f: f.subject["partitions"] != 2)
    assert (ran.severity.name, ran.subject) == (
        "CRITICAL",
        {"partitions": 2, "broker": 2, "began": "2024-03-12T09:00:05Z", "still": 1, "refused_by": [3],
         "outage_ms": [(59 * 60 - 5) * 1000] * 2},  # one still: at least until the evidence ends
    )  # fmt: skip
    # led with how long, as the finding from ZooKeeper's history is
    assert ran.summary.startswith(
        "2 partition(s) (payments 0-1) had no working leader for 59 min from 2024-03-12 09:00:05 (the "
        "controller's clock)"
    )
    assert "broker(s) 3, elected their leader as they came back, refused the LeaderAndIsr" in ran.summary
    assert "1 were led again, the last after about 5 min" in ran.summary
    assert "no broker's line says it has led 1 of them since" in ran.summary
    assert "broker-3:logs/s.log:7" in ran.evidence and "broker-2:logs/s.log:9" in ran.evidence
    assert back.subject["partitions"] == 1 and "refused_by" not in back.subject


def _lines(spark: SparkSession, rows: list[tuple[Any, ...]]) -> DataFrame:
    """The controller's lines as `partition_log.logged_changes` makes them (no ZooKeeper: no zxid, no
    replicas), as the service timeline counts them (`counted_as`)."""
    schema = (
        "topic string, partition int, time timestamp, seq long, ref string, leader int, leader_epoch int, "
        "isr array<int>, refused_by string, refused_at timestamp"
    )
    changes = spark.createDataFrame(rows, schema).select(
        "*",
        F.lit(None).cast("long").alias("zxid"),
        F.lit(None).cast("array<int>").alias("replicas"),
        F.lit(None).cast("array<int>").alias("adding"),
        F.lit(False).alias("queued"),
        F.lit(False).alias("deleting"),
        (F.col("leader") >= 0).alias("registered"),
        F.lit(None).cast("int").alias("min_isr"),
        F.lit(None).cast("string").alias("silent"),
    )
    st = F.struct(F.lit(True).alias("present"), "leader", "isr")
    asg = F.struct(F.lit(True).alias("present"), "replicas", "adding")
    return changes.withColumn("counted_as", counted_as(st, asg))


def test_from_the_lines_the_outages_that_began_together_are_one_group(spark: SparkSession) -> None:
    """`logged_groups` over the one outage model of the controller's lines (`service.unserved`): broker
    2's loss at 09:00:05 leaves orders 0, 1 and 3 without a leader (lines within that second) and orders 2
    is elected from OfflinePartition then with no line of its going offline: one group, the election's
    partition at once; orders 3, whose new leader refused it, ran on until broker 2 led it: a group of its
    own. Payments 0, elected from OfflinePartition at 09:00:40 after broker 1, is a group whose start is
    unknown. ZooKeeper's tree at the capture names broker 4 leader of orders 1, which no line led again."""
    at = lambda s, ms=0: AT.replace(second=s, microsecond=ms * 1000)  # noqa: E731
    ref = lambda n: f"broker-1:logs/s.log:{n}"  # noqa: E731
    rows = [
        *[("orders", p, at(1), 10 + p, ref(1), 2, 1, [2, 3], None, None) for p in range(4)],
        ("payments", 0, at(1), 14, ref(1), 1, 1, [1, 3], None, None),
        ("orders", 0, at(5), 50, ref(5), -1, None, None, None, None),
        ("orders", 0, at(35), 350, ref(35), 3, 2, [3], None, None),
        ("orders", 1, at(5, 300), 53, ref(6), -1, None, None, None, None),
        ("orders", 2, at(5, 100), 51, None, -1, None, None, None, None),  # no line of its going offline
        ("orders", 2, at(5, 100), 52, ref(7), 3, 2, [3, 1], None, None),
        ("orders", 3, at(5, 500), 55, ref(8), -1, None, None, None, None),
        ("orders", 3, at(20), 200, ref(20), 4, 2, [4], "broker-4:logs/s.log:21", at(21)),
        ("orders", 3, at(50), 500, ref(50), 2, 3, [2], None, None),
        ("payments", 0, at(40), 399, None, -1, None, None, None, None),
        ("payments", 0, at(40), 400, ref(40), 3, 2, [3], None, None),
    ]
    stretch = unserved(_lines(spark, rows), AT.replace(minute=5))
    tree = spark.createDataFrame(
        [("orders", 1, 4, False)], "topic string, partition int, led_by int, offline boolean"
    )
    ran, lost, unknown = answer(logged_groups(stretch, tree, {2}))
    naive = lambda s, ms=0: at(s, ms).replace(tzinfo=None)  # noqa: E731  # as Spark hands them back
    r, x = ran, ran.lines
    assert x is not None and (r.began, r.leader, r.tps, x.began_ref, r.refused, r.refused_by) == (
        naive(5, 500), 2, [TP("orders", 3)], ref(8), 1, [4]
    )  # fmt: skip
    assert (r.known_start, r.at_once) == (True, 0)
    assert (x.first_refused, x.refused_ref, x.named_ref) == (naive(21), "broker-4:logs/s.log:21", ref(20))
    assert (x.last_led, x.led_ref, r.still) == (naive(50), ref(50), 0)  # led again
    x = lost.lines
    assert x is not None and (lost.leader, lost.partitions, lost.known_start, lost.began, x.began_ref) == (
        2, 3, True, naive(5), ref(5)
    )  # fmt: skip
    assert lost.tps == [TP("orders", 0), TP("orders", 1), TP("orders", 2)] and lost.refused_by == []
    assert (lost.still, lost.longest_ms, x.last_led, x.ended_refs, lost.at_once) == (
        1, 30_000, naive(35), [ref(35), ref(7)], 1
    )  # fmt: skip
    assert x.elected == [Elected(3, False, naive(5, 100), 1)]  # the one whose start is not in the lines
    assert (x.led_now, x.led_tps, x.led_by, x.offline_now) == (1, [TP("orders", 1)], [4], [])
    assert sorted(x.went) == [
        (TP("orders", p).topic, p, naive(5, ms)) for p, ms in ((0, 0), (1, 300), (2, 100))
    ]
    x = unknown.lines
    assert x is not None and (unknown.began, unknown.leader, unknown.known_start, unknown.still) == (
        naive(40), 1, False, 0
    )  # fmt: skip
    assert (x.ended_refs, x.elected, x.went, unknown.at_once) == (
        [ref(40)],
        [Elected(3, True, naive(40), 1)],
        [],
        None,
    )
    assert answer(logged_groups(None, None, set())) == []


def test_from_the_lines_a_refusal_is_one_outage_until_a_broker_leads(spark: SparkSession) -> None:
    """The one outage model over the controller's lines (`service.unserved`, then `not_acting.refusals`,
    as triage asks them): broker 3 named leader of orders-0 refuses it, then broker 4 named after it
    refuses too: one outage, grouped by its first naming line, until broker 2 leads; orders-0 going offline
    after that is a new outage. Orders-1, named to broker 3 by another line, is a group of its own, still
    unserved when the lines end."""

    def line(p: int, second: int, leader: int, refused: str | None = None) -> tuple[Any, ...]:
        at = AT.replace(second=second)
        refused_at = at + timedelta(milliseconds=200) if refused else None
        return ("orders", p, at, second * 2, f"broker-1:logs/s.log:{second}", leader, 7, [leader], refused,
                refused_at)  # fmt: skip

    rows = [
        line(0, 10, 3, "broker-3:logs/s.log:10"),
        line(0, 20, 4, "broker-4:logs/s.log:20"),
        line(0, 30, 2),
        line(0, 40, -1),
        line(1, 12, 3, "broker-3:logs/s.log:12"),
    ]
    stretch = unserved(_lines(spark, rows), AT.replace(minute=5))
    got = {(r.partition, r["count"], r.began_ref, r.ended_ref) for r in stretch.collect()}
    assert got == {
        (0, "no_acting_leader", "broker-1:logs/s.log:10", "broker-1:logs/s.log:30"),
        (0, "offline", "broker-1:logs/s.log:40", None),
        (1, "no_acting_leader", "broker-1:logs/s.log:12", None),
    }
    groups = answer(refusals(stretch.where(F.col("whys")[0] == "refused")))
    assert [(g.began_ref, g.leader, g.tps, g.still, g.led_again, g.led_ref, g.short) for g in groups] == [
        ("broker-1:logs/s.log:10", 3, [TP("orders", 0)], 0, 1, "broker-1:logs/s.log:30", None),
        ("broker-1:logs/s.log:12", 3, [TP("orders", 1)], 1, 0, None, None),
    ]
    first, _ = groups
    naive = AT.replace(tzinfo=None)  # as Spark hands timestamps back
    assert (first.began_zxid, first.first_refused, first.last_led) == (
        None,
        naive.replace(second=10, microsecond=200_000),
        naive.replace(second=30),
    )
    assert first.refs == ["broker-3:logs/s.log:10", "broker-4:logs/s.log:20"]


def refusal(partition: int, named: int, again: datetime | None = None) -> NotActing:
    """Broker 3, named leader of payments `partition` by the controller's line at second `named`, refused
    it a second later (no ZooKeeper history: the group is named by the line, its replicas unknown)."""
    return NotActing(
        3,
        None,
        1,
        [TP("payments", partition)],
        0,
        0 if again else 1,
        AT.replace(second=named),
        7,
        None,
        [f"broker-3:logs/state-change.log:{named}"],
        short=None,
        began_ref=f"broker-1:logs/state-change.log:{named}",
        first_refused=AT.replace(second=named + 1),
        led_again=1 if again else 0,
        last_led=again,
        led_ref="broker-2:logs/state-change.log:9" if again else None,
        unled=[] if again else [TP("payments", partition)],
    )


def test_from_the_lines_a_leader_that_refused_leaves_nobody_serving() -> None:
    """A preferred election names broker 3, which refuses two partitions: one critical outage per line of
    the controller's naming it (per txn with ZooKeeper's history), worded as that finding is; one is led
    again after 5 min. The one still unserved then went offline too (its refusing leader went away): the
    same outage, said in it."""
    later = AT.replace(minute=5)
    windows = [replace(refusal(0, 10), then_offline=1), refusal(1, 11, again=later)]
    facts = Facts(False, not_acting=windows, ends=AT.replace(minute=59), lines_end=AT.replace(minute=50))
    still, led = sorted(judge(facts, checked()), key=lambda f: -f.subject["still"])
    # bounded: the one still from the lines' end to the evidence's, the other until it was led again
    assert [(f.kind, f.severity.name, f.subject) for f in (still, led)] == [
        (
            "partition.no_acting_leader",
            "CRITICAL",
            {"partitions": 1, "broker": 3, "still": 1, "began": "2024-03-12T09:00:10Z",
             "lines_end": "2024-03-12T09:50:00Z",
             "outage_ms": [(50 * 60 - 10) * 1000, (59 * 60 - 10) * 1000]},
        ),
        (
            "partition.no_acting_leader",
            "CRITICAL",
            {"partitions": 1, "broker": 3, "still": 0, "began": "2024-03-12T09:00:11Z",
             "outage_ms": [(5 * 60 - 11) * 1000] * 2},
        ),
    ]  # fmt: skip
    assert still.summary.startswith(
        "1 partition(s) (payments 0) had no acting leader for 49.8 to 58.8 min: from 2024-03-12 09:00:10 "
        "(the controller's clock) the controller named broker 3 their leader (leader epoch 7) but broker 3 "
        "refused the LeaderAndIsr (INCONSISTENT_TOPIC_ID: its log holds another topic id; first at "
        "09:00:11, its clock) and kept its old role, so nobody served them; no broker's line says it has "
        "led them since (the lines end 2024-03-12 09:50:00, the capture 09:59:00)."
    )
    assert "OfflinePartitionsCount shows them healthy while nobody serves them" in still.summary
    assert "kafka-topics" not in still.summary  # the lines do not hold the replicas: whose ISR is short
    assert "All of them then went offline too (no live leader)" in still.summary
    assert "had no acting leader for up to 5 min: from 2024-03-12 09:00:11" in led.summary
    assert "offline" not in led.summary.split("OfflinePartitionsCount")[0]
    assert led.evidence == (
        "broker-1:logs/state-change.log:11",
        "broker-2:logs/state-change.log:9",
        "broker-3:logs/state-change.log:11",
    )


def test_a_leader_that_stood_still_in_its_session_left_its_partitions_without_one() -> None:
    """Broker 3 was last heard at 09:00:00 and logged at 09:00:16 that it had heard nothing for 16 s
    (a timeout of 18 s: it stood still), then reconnected in its session: its two partitions had no
    working leader for 10 to 16 s (it stopped within a ping interval, a third of the timeout). A broker
    that led nothing then is no finding."""
    said = Said(AT + timedelta(seconds=16), "brokers/3/logs/server.log", 40)
    resumed = Said(AT + timedelta(seconds=16, milliseconds=30), "brokers/3/logs/server.log", 42)
    stood = Paused(3, 0xB3, AT, said, resumed, 18_000, TPS, "ZooKeeper's partition states")
    (found,) = judge(Facts(True, paused=[stood]), checked())
    assert (found.kind, found.severity.value) == ("partition.leader_paused", "warning")
    assert found.subject == {"broker": 3, "partitions": 2, "session": "0xb3", "outage_ms": [10_000, 16_000]}
    assert found.evidence == ("broker-3:logs/server.log:40", "broker-3:logs/server.log:42")
    assert "leadership never moved" in found.summary and "GC log" in found.summary
    assert judge(Facts(True, paused=[replace(stood, led=[])]), checked()) == []


def test_the_preferred_election_that_named_a_refusing_leader_is_said_first(
    sample: Callable[[str], Bundle], triaged: Callable[[str], Triage]
) -> None:
    """topicid-mismatch-2.8: at 08:25:36 the controller's automatic rebalance ("Starting replica leader
    election (PREFERRED) ... triggered by AutoTriggered") made broker 1, which refuses the new topic id,
    leader of orders-0: the finding's first sentence names that trigger and cites the line second, after
    the txn. A window whose txn came minutes after any such line names none."""
    (f,) = triaged("topicid-mismatch-2.8").of_kind("partition.no_acting_leader")
    assert f.subject["trigger"] == "AutoTriggered"
    first = f.summary.split(". ")[0]
    assert "chosen by the controller's automatic preferred-replica election (auto.leader.rebalance" in first
    assert f.evidence[:2] == ("zk:txn@0xe0", "broker-2:logs/controller.log.2024-03-12-08:50")
    assert "Broker 2, the controller, started that election at 08:25:36.150" in f.summary
    at = datetime(2024, 3, 12, 8, 25, 36, 500_000)  # the txn came just after the line
    window = NotActing(1, 0xE0, 1, [TP("orders", 0)], 1000, 1, at, 4, None, [])
    (named,) = moved_by(sample("topicid-mismatch-2.8"), [window])
    assert named.moved is not None and named.moved.trigger == "AutoTriggered"
    (later,) = moved_by(sample("topicid-mismatch-2.8"), [replace(window, began=at + timedelta(minutes=2))])
    assert later.moved is None
    assert "trigger" not in not_acting_finding(later).subject
    assert "chosen by" not in not_acting_finding(later).summary


def test_from_the_lines_a_leader_that_halted_left_its_partitions_from_its_halt_line() -> None:
    """A lost leader whose last line is its halt for failed log dirs stopped then
    (`halted_broker_leaves_its_session_to_expire`): from the lines alone its partitions had no working
    leader from that line to their election, exactly, with no failed send of the controller's needed; a
    last line that is not a halt says only that the broker lived then."""
    xs = [group([0, 1], None, [30, 30])]
    halt = Said(AT.replace(second=12), "brokers/2/logs/server.log", 34)

    def judged(quiet: Quiet) -> tuple[dict[str, object], str, tuple[str, ...]]:
        facts = Facts(False, offline=xs, quiet={(2, AT.replace(second=30)): quiet})
        (found,) = judge(facts, checked())
        return found.subject, found.summary, found.evidence

    subject, text, refs = judged(Quiet(halt, None, halted=True))
    assert subject["outage_ms"] == [18_000, 18_000] and halt.ref in refs
    assert "had no working leader for 18.0 s" in text and "halted for failed log dirs" in text
    assert "when they lost their leader is not in its lines" not in text
    subject, text, refs = judged(Quiet(halt, None))
    assert "outage_ms" not in subject and halt.ref not in refs
    assert "when they lost their leader is not in its lines" in text
    # the controller's failed send alone: gone by then, and how long before no line says (a lower bound)
    sent = Said(AT.replace(second=20), "brokers/1/logs/controller.log", 70)
    subject, text, refs = judged(Quiet(None, sent))
    assert subject["outage_ms"] == [10_000, 10_000] and sent.ref in refs
    assert text.startswith(
        "2 partition(s) (payments 0-1) had no working leader for at least 10.0 s: broker 2 "
    )
    assert text.count("10.0 s") == 1 and "already unreachable at 09:00:20" in text


def test_from_the_lines_a_leader_that_crashed_left_its_partitions_a_session_timeout_before_its_loss() -> None:
    """A lost leader that crashed (a controller handled its failure and its own log holds no shutdown:
    `history.sessions`) went silent within `behaviour.went_silent` of its session's expiry, which came
    before the controller's failure callback (the election's clock): from the lines alone its partitions
    had no working leader from then to their election, as from ZooKeeper's expiry, and not before its last
    line nor after the controller's first failed send to it. A loss of another broker, one handled long
    before, a halt or no timeout known is not joined."""
    xs = [group([0, 1], None, [30, 30])]
    callback = "broker-1:logs/controller.log:80"
    loss = Expired(2, None, "crash", None, AT.replace(second=30), callback, timeout=(18_000, "negotiated"))

    def judged(
        lost: list[Expired], last: Said | None = None, sent: Said | None = None
    ) -> tuple[dict[str, object], str, tuple[str, ...]]:
        quiet = {(2, AT.replace(second=30)): Quiet(last, sent)} if last or sent else {}
        facts = Facts(False, offline=xs, quiet=quiet, lost=lost)
        (found,) = judge(facts, checked())
        return found.subject, found.summary, found.evidence

    # the expiry by 09:00:30: ZooKeeper last heard it a timeout before (09:00:12), a tick earlier at most,
    # and a live client is heard every third of the timeout: silent from 09:00:10-09:00:18 to the election
    subject, text, refs = judged([loss], Said(AT.replace(second=5), "brokers/2/logs/server.log", 75))
    assert subject["outage_ms"] == [12_000, 20_000] and callback in refs
    assert text.startswith(
        "2 partition(s) (payments 0-1) had no working leader for 12.0 s to 20.0 s: broker 2 "
    )
    assert "logged nothing after" in text and "counted back from the controller's handling of its" in text
    assert "when they lost their leader is not in its lines" not in text
    # its last line later than a timeout before: it lived until then (on its own clock)
    last = Said(AT.replace(second=15), "brokers/2/logs/server.log", 80)
    subject, text, refs = judged([loss], last)
    assert subject["outage_ms"] == [12_000, 15_000] and last.ref in refs
    assert "(the two brokers' clocks)" in text
    # the controller failed to reach it at 09:00:16: gone by then, whatever the expiry's bounds allow
    sent = Said(AT.replace(second=16), "brokers/1/logs/controller.log", 70)
    subject, text, refs = judged([loss], Said(AT.replace(second=5), "brokers/2/logs/server.log", 75), sent)
    assert subject["outage_ms"] == [14_000, 20_000] and sent.ref in refs
    assert "it was already unreachable at 09:00:16.000 (the controller's first failed send" in text
    # started again after: a crash (or a hang ended by a restart), as ZooKeeper's history says it
    _, text, _ = judged([replace(loss, ref="brokers/2/logs/server.log:90")])
    assert "a crash, or a hang ended by a restart" in text
    for other in (
        replace(loss, broker=3),
        replace(loss, at=AT - timedelta(minutes=2)),
        replace(loss, how="halted"),
        replace(loss, timeout=None),
    ):
        subject, text, _ = judged([other])
        assert "outage_ms" not in subject and "when they lost their leader is not in its lines" in text


def test_a_failed_send_counts_only_after_the_brokers_last_sign_of_life(
    sample: Callable[[str], Bundle],
) -> None:
    """deletion-stuck-2.8: the controller (broker 1) failed to reach broker 3 from 08:10:10.101, again and
    again. Asked from before its first, the first is the proof; asked from a last sign of life after it
    (as `outage.outages` asks again where the first came before that sign), the first after that sign."""
    bundle = sample("deletion-stuck-2.8")
    at = lambda *hms: datetime(2024, 3, 12, *hms)  # noqa: E731
    asked = [(1, 3, at(8, 0, 0), at(8, 11, 0)), (2, 3, at(8, 10, 13), at(8, 11, 0))]
    sends = answer(_failed_sends(bundle, asked, {}))
    assert {e: (t.replace(tzinfo=None), ref) for e, (t, _, ref) in sends.items()} == {
        1: (at(8, 10, 10, 101_000), "broker-1:logs/controller.log.2024-03-12-08:45"),
        2: (at(8, 10, 13, 74_000), "broker-1:logs/controller.log.2024-03-12-08:55"),
    }
