"""The deletion analysis's findings half (`judge`), from hand-written facts: no Spark. Its facts half is
checked on the samples (test_golden) and on simulated stories by the truth tests (test_triage:
deletion-stuck and deletion-complete on every version; test_triage_must_find: a refused and a recreated
topic)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta, timezone

from workbench.analysis.deletion import CLOCK_MARGIN_MS, Facts, judge
from workbench.analysis.findings import Coverage
from workbench.kafka.defaults import FILE_DELETE_DELAY_MS
from workbench.model.deletion_log import Unfinished
from workbench.model.deletion_steps import DeleteDir, Halt, Marker, Step, Steps, Stray
from workbench.model.described import Marked, Registered
from workbench.model.history.topics import Recreation
from workbench.model.refs import Said

ASKED = datetime(2024, 3, 12, 9, 0, tzinfo=timezone.utc)
CAPTURED_MS = int((ASKED + timedelta(hours=1)).timestamp() * 1000)
HALT = Halt("deletion.halted", "replica deletion failed", "broker-1:logs/controller.log:88")


def checked() -> Coverage:
    """Coverage as the runner leaves it before `judge` (contract.Analysis.findings)."""
    coverage = Coverage()
    coverage.record("deletion", ["ZooKeeper state", "broker logs"])
    return coverage


def nothing(**kw: object) -> Facts:
    """Facts of a bundle with ZooKeeper's tree and history where nothing was deleted."""
    empty = Facts([], {}, set(), frozenset(), [], {}, CAPTURED_MS, [], [])
    return replace(empty, **kw)  # type: ignore[arg-type]


def marker(**kw: object) -> Marker:
    m = Marker("clickstream-old", "/admin/delete_topics/clickstream-old", 0x20000002A, ASKED, {0: [1, 2, 3]})
    return replace(m, **kw)  # type: ignore[arg-type]


def test_nothing_to_find_where_nothing_was_deleted() -> None:
    assert judge(nothing(), checked()) == []
    # a finished deletion's steps are no stuck one, and a marker's removal alone is no completion
    alone = Steps("t", Step(ASKED, "zk:txn@0x10", 0x10), Step(ASKED, "zk:txn@0x11", 0x11), finished=False)
    assert judge(nothing(steps={"t": alone}), checked()) == []


def test_a_marker_with_replicas_on_an_offline_broker_is_stuck() -> None:
    """Broker 3 is down and holds its replicas; brokers 1 and 2 were listed whole and hold none."""
    m = marker(on_disk=frozenset({(0, 3)}))
    facts = nothing(
        markers=[m], steps={m.topic: Steps(m.topic, last_halt=HALT)}, live={1, 2}, whole=frozenset({1, 2, 3})
    )
    (stuck,) = judge(facts, checked())
    assert stuck.kind == "deletion.stuck"
    assert stuck.subject == {
        "topic": "clickstream-old",
        "zxid": "0x20000002a",
        "replicas_left": ["0@3"],
        "brokers_down": [3],
        "reassigning": [],
        "halted": "replica deletion failed",
    }
    assert "1 replica(s) left on broker(s) 3" in stuck.summary
    assert (
        "replicas on offline broker(s) 3; the controller halted it: replica deletion failed" in stuck.summary
    )
    assert "Way out: it resumes when broker(s) 3 start again (or a replacement with the" in stuck.summary
    assert stuck.evidence == (
        "zk:/admin/delete_topics/clickstream-old@czxid=0x20000002a",
        "zk:/brokers/ids",
        "broker-1:logs/controller.log:88",
    )
    # broker 3's data dirs absent from the bundle: its replica is not known to be left, nor gone
    (unseen,) = judge(replace(facts, markers=[marker()], whole=frozenset({1, 2})), checked())
    assert unseen.subject["replicas_left"] == [] and unseen.subject["replicas_unknown"] == ["0@3"]
    assert unseen.subject["brokers_down"] == [3]  # it holds the deletion, on disk or not
    assert (
        "still there; whether its 1 replica(s) on broker(s) 3 are still on disk is not known"
        in unseen.summary
    )


def test_what_holds_a_deletion_up_when_no_broker_is_down() -> None:
    # data dirs not listed whole: whether any assigned replica is still there is not known
    (moving,) = judge(nothing(markers=[marker(reassigning=[0])], live={1, 2, 3}), checked())
    assert "a reassignment in progress (partitions 0)" in moving.summary
    assert "the reassignment cannot be cancelled or changed while the topic is queued" in moving.summary
    assert "it resumes when the reassignment completes" in moving.summary
    assert moving.subject["replicas_left"] == [] and moving.subject["brokers_down"] == []
    assert moving.subject["replicas_unknown"] == ["0@1", "0@2", "0@3"]
    (asked,) = judge(nothing(markers=[marker(reassignment_asked=True)], live={1, 2, 3}), checked())
    assert "partitions in /admin/reassign_partitions" in asked.summary
    storage = Halt("log_dir.io_error", "/data/kafka-2", "broker-2:logs/server.log:7")
    m = marker()
    (broken,) = judge(nothing(markers=[m], steps={m.topic: Steps(m.topic, last_halt=storage)}), checked())
    assert broken.summary.endswith("held up by a storage error.")
    assert broken.evidence[-1] == "broker-2:logs/server.log:7"
    (gone,) = judge(nothing(markers=[marker(replicas=None)]), checked())
    assert "its topic znode is gone but the marker stayed" in gone.summary
    assert gone.subject["replicas_left"] == []
    (unknown,) = judge(nothing(markers=[marker()], live={1, 2, 3}), checked())
    assert "no blocker in the evidence" in unknown.summary


def test_a_completed_deletion_is_timed_on_zookeepers_clock() -> None:
    asked = Step(ASKED, "zk:txn@0x20000002a", 0x20000002A)
    done = Step(ASKED + timedelta(seconds=42), "zk:txn@0x200000040", 0x200000040)
    halted = Steps("topic-1", asked, done, True, ("offline replicas",), ("broker-1:logs/controller.log:12",))
    (found,) = judge(nothing(steps={"topic-1": halted}), checked())
    assert found.kind == "deletion.completed"
    assert found.subject == {"topic": "topic-1", "halted": ["offline replicas"]}
    assert found.summary == (
        "Deletion of topic-1 completed in 42 s (ZooKeeper's clock, zxid 0x20000002a to 0x200000040), "
        "after halting for offline replicas."
    )
    assert found.evidence == ("zk:txn@0x20000002a", "zk:txn@0x200000040", "broker-1:logs/controller.log:12")
    # from the controller's lines alone: no zxid, so no duration stated
    line = Step(ASKED, "broker-1:logs/controller.log:40")
    (logs_only,) = judge(nothing(steps={"t": Steps("t", line, line, True)}), checked())
    assert logs_only.summary == "Deletion of t completed."


def test_a_refused_deletion() -> None:
    refused = Steps("payments", refused="broker-1:logs/controller.log:5")
    (found,) = judge(nothing(steps={"payments": refused}), checked())
    assert found.kind == "deletion.refused" and found.evidence == ("broker-1:logs/controller.log:5",)
    assert "delete.topic.enable=false" in found.summary


def test_delete_dirs_linger_only_past_their_brokers_delay() -> None:
    def renamed(ago_ms: int, partition: int, broker: int = 1) -> DeleteDir:
        at = datetime.fromtimestamp((CAPTURED_MS - ago_ms) / 1000, tz=timezone.utc)
        return DeleteDir(broker, "topic-2", partition, at, f"broker-{broker}:logs/server.log:{partition}")

    past = FILE_DELETE_DELAY_MS + CLOCK_MARGIN_MS + 1
    dirs = [
        renamed(past, 0),
        renamed(past + 5, 1),
        renamed(FILE_DELETE_DELAY_MS, 2),
        renamed(past, 3, broker=2),
    ]
    dirs.append(DeleteDir(1, "topic-2", 4, None, None))  # no rename line: cannot be aged
    (late,) = judge(nothing(delete_dirs=dirs, delays={2: str(10 * FILE_DELETE_DELAY_MS)}), checked())
    assert late.subject == {"topic": "topic-2", "broker": 1, "partitions": [0, 1]}
    assert late.evidence == ("broker-1:logs/server.log:0", "broker-1:logs/server.log:1")
    assert judge(nothing(delete_dirs=dirs, captured_ms=None), checked()) == []
    assert late.severity.value == "warning" and "stopped before removing them or could not" in late.summary


def test_a_delete_dir_whose_removal_failed_is_critical_with_its_cause_and_the_way_out() -> None:
    error = "java.nio.file.AccessDeniedException: /data/t-0.ab-delete/00000000000000000000.log -> ..."
    failed = DeleteDir(4, "t", 0, None, None, error, "broker-4:logs/server.log:67")
    young = DeleteDir(4, "t", 1, datetime.fromtimestamp(CAPTURED_MS / 1000, tz=timezone.utc), "broker-4:x:1")
    (found,) = judge(nothing(delete_dirs=[failed, young]), checked())
    assert found.severity.value == "critical" and found.subject["partitions"] == [0]
    assert f"removing them failed on an I/O error ({error})" in found.summary
    assert "Fix the cause (the dir's owner and permissions) before starting broker 4 again" in found.summary
    assert found.evidence == ("broker-4:logs/server.log:67",)


def test_strays_and_recreated_topics() -> None:
    done, made = (
        Said(ASKED + timedelta(seconds=s), "brokers/1/logs/controller.log", n) for s, n in ((1, 7), (9, 8))
    )
    again = [
        Recreation("payments", ASKED, 0x200000010, 0x200000020, deleted=done, created=made),
        Recreation("audit", ASKED, deleted=done, created=made),  # only the controller's lines tell it
    ]
    facts = nothing(strays=[Stray(2, "old", [3, 0, 1], "/data/k1")], recreated=again)
    audit, payments, stray = sorted(judge(facts, checked()), key=lambda f: (f.kind, f.subject["topic"]))
    assert stray.subject == {"topic": "old", "broker": 2, "partitions": [3, 0, 1]}
    assert "(partitions 0-1,3)" in stray.summary
    assert stray.evidence == ("broker-2:datadirs//data/k1/old-3", "zk:/brokers/topics")
    assert payments.subject == {"topic": "payments", "zxid": "0x200000020"}
    assert "deleted at zxid 0x200000010 and created again at zxid 0x200000020" in payments.summary
    lines = ("broker-1:logs/controller.log:7", "broker-1:logs/controller.log:8")
    assert payments.evidence == ("zk:txn@0x200000010", "zk:txn@0x200000020", *lines)
    assert audit.subject == {"topic": "audit"} and audit.evidence == lines
    assert (
        "completed at 2024-03-12 09:00:01, the controller's clock) and created again at 2024-03-12 09:00:09"
        in (audit.summary)
    )


def test_without_zookeepers_tree_a_paste_shows_the_marks() -> None:
    pasted = Marked(
        "orders", "kafka-topics --describe printed MarkedForDeletion", "pasted/d.txt", 4, ASKED, []
    )
    coverage = checked()
    (found,) = judge(nothing(pasted=[pasted]), coverage)
    assert found.kind == "deletion.marked" and found.evidence == ("pasted/d.txt:4",)
    assert found.subject == {"topic": "orders", "taken_at": "2024-03-12T09:00:00Z", "replicas_left": []}
    assert "the topics a pasted output shows marked for deletion" in coverage["deletion"].used
    # a pasted `ls /brokers/ids` without broker 3, which holds a replica left: the deletion waits for it
    ids = Registered("pasted/zk.txt", 9, ASKED, [1, 2])
    held = replace(pasted, replicas_left=["0@1", "1@3"], registered=ids)
    (found,) = judge(nothing(pasted=[held]), checked())
    assert found.subject["brokers_down"] == [3] and found.evidence == ("pasted/d.txt:4", "pasted/zk.txt:9")
    assert "the deletion waits until broker(s) 3 start again" in found.summary
    all_there = replace(held, registered=replace(ids, brokers=[1, 2, 3]))
    (found,) = judge(nothing(pasted=[all_there]), checked())
    assert "brokers_down" not in found.subject and "waits" not in found.summary


# -- without ZooKeeper's state: what the controller's lines show begun and not completed --------------------
def begun(halted: bool, resumed: bool = False, **kw: object) -> Unfinished:
    """clickstream-old, begun at 9:00 by broker 1's controller; halted at 9:01 after a replica deletion
    failed on broker 3, the replies to its requests logged after; (re)started at 9:02 or not."""
    line = lambda at, n: Said(ASKED + timedelta(minutes=at), "brokers/1/logs/controller.log", n)  # noqa: E731
    u = Unfinished(
        "clickstream-old", line(2, 90) if resumed else line(0, 44), False,
        ["replica deletion failure"] if halted else [], line(1, 82) if halted else None,
        ["0@3", "1@3"] if halted else [], [], line(2, 90) if resumed else line(1, 84),
    )  # fmt: skip
    return replace(u, **kw)  # type: ignore[arg-type]


def test_without_zookeepers_state_a_deletion_the_controller_halted_for_good_is_critical() -> None:
    ends = ASKED + timedelta(hours=1)
    (stuck,) = judge(nothing(unfinished=[begun(True)], ends=ends), checked())
    assert stuck.kind == "deletion.unfinished" and stuck.severity.name == "CRITICAL"
    assert stuck.subject == {"topic": "clickstream-old", "halted": ["replica deletion failure"],
                             "pending_at_start": False, "failed_on": [3]}  # fmt: skip
    assert "halted it at 09:01:00 (replica deletion failure); replica deletions failed on broker(s) 3" in (
        stuck.summary
    )
    assert "(the evidence ends 2024-03-12 10:00:00): no (re)start followed the halt" in stuck.summary
    assert stuck.evidence == tuple(f"broker-1:logs/controller.log:{n}" for n in (44, 82, 84))
    # (re)started after its halt, or never halted: under way when the lines end, a warning
    for u in (begun(True, resumed=True), begun(False, pending_at_start=True, errors=["KAFKA_STORAGE_ERROR"])):
        (going,) = judge(nothing(unfinished=[u], ends=ends), checked())
        assert going.severity.name == "WARNING" and "still under way when the lines end" in going.summary
    assert "a controller found it pending at its start" in going.summary
    assert "answered its StopReplica with KAFKA_STORAGE_ERROR" in going.summary
    assert "Whether it is still pending needs ZooKeeper's /admin/delete_topics." in stuck.summary
    # a paste showing it marked says it is still pending: the two findings agree, citing the paste
    shown = Marked("clickstream-old", "kafka-topics --describe printed MarkedForDeletion", "notes.txt", 3,
                   ASKED, [])  # fmt: skip
    found = judge(nothing(unfinished=[begun(True)], ends=ends, pasted=[shown]), checked())
    (still,) = [f for f in found if f.kind == "deletion.unfinished"]
    assert "A paste taken at 2024-03-12 09:00:00 UTC shows it still marked for deletion" in still.summary
    assert "needs ZooKeeper" not in still.summary and still.evidence[-1] == "notes.txt:3"
