"""The controller analysis's findings half (`judge`), from hand-written facts: no Spark. Its facts half is
checked on the samples (test_golden) and on simulated stories by the truth tests (test_triage:
controller-failover on every version; test_triage_must_find: flapping, a hang and a network partition)."""

from __future__ import annotations

import dataclasses
import itertools
from datetime import datetime, timedelta, timezone

from workbench.analysis.controller import Facts, judge
from workbench.analysis.findings import Coverage
from workbench.model.channel import NoEndpoint, Unreachable
from workbench.model.failovers import FailoverLog, Line, Picked, picked_up
from workbench.model.history.controllers import Election
from workbench.model.history.sessions import Expired
from workbench.model.history_gaps import Gap
from workbench.model.outage import Outage
from workbench.model.refs import Said
from workbench.model.shutdowns import ControlledShutdown
from workbench.model.tenures import TenureEnd, logged_outage

T0 = datetime(2024, 3, 12, 9, 0, tzinfo=timezone.utc)
LOG = "brokers/2/logs/controller.log"


def checked() -> Coverage:
    """Coverage as the runner leaves it before `judge` (contract.Analysis.findings)."""
    coverage = Coverage()
    coverage.record("controller", ["ZooKeeper history", "broker logs"])
    return coverage


def chain(*elections: Election) -> list[Election]:
    for before, after in itertools.pairwise(elections):
        after.previous = before
    return list(elections)


def elected(epoch: int, broker: int, zxid: int, at: timedelta, **gone: object) -> Election:
    return Election(epoch, broker, zxid, T0 + at, f"zk:txn@{zxid:#x}", **gone)  # type: ignore[arg-type]


def facts(elections: list[Election], **kw: object) -> Facts:
    said = Facts(elections, {}, {}, frozenset({1, 2, 3}), None, {}, [])
    for k, v in kw.items():
        setattr(said, k, v)
    return said


def test_the_first_election_in_the_evidence_is_no_failover() -> None:
    (first,) = judge(facts(chain(elected(3, 1, 0x10, timedelta()))), checked())
    assert (first.kind, first.subject) == ("controller.election", {"epoch": 3, "broker": 1, "zxid": "0x10",
                                                                    "cause": "first"})  # fmt: skip
    assert "the first election in the evidence (the 2 before it are not)" in first.summary
    # read after a gap in the history, an epoch above 1 had a controller the gap hides
    gap = Gap(0x0F, 0x10, None, None, ())
    (hidden,) = judge(facts(chain(elected(3, 1, 0x10, timedelta())), resumed_after=gap), checked())
    assert (hidden.kind, hidden.subject["cause"]) == ("controller.failover", "unknown")


def test_a_failover_says_its_outage_its_cause_and_the_new_controllers_steps() -> None:
    old = elected(1, 1, 0x10, timedelta(), gone_zxid=0x40, gone_time=T0 + timedelta(seconds=60), session=0xA1)
    new = elected(2, 2, 0x42, timedelta(seconds=61))
    lines = [
        Line("controller.elected", None, T0 + timedelta(seconds=61), LOG, 10),
        Line("state_machine.started", "replica_state_machine", T0 + timedelta(seconds=63), LOG, 11),
        Line("controller.ready", None, T0 + timedelta(seconds=63, milliseconds=500), LOG, 12),
    ]
    log = FailoverLog(lines, lines[0], lines[2], {"deletions": ["payments"]})
    outage = Outage(
        66_000, 70_000, None, "", 18_000, "its registration's negotiated timeout", ("zk:txn@0x3f",)
    )
    said = facts(
        chain(old, new),
        logs={(2, 2): log},
        ends={0xA1: ("crash", "broker-1:logs/server.log:90")},
        outages={2: outage},
    )
    first, moved = judge(said, checked())
    assert first.kind == "controller.election"
    assert moved.kind == "controller.failover"
    assert moved.subject == {"epoch": 2, "broker": 2, "zxid": "0x42", "outage_ms": [66_000, 70_000],
                             "gap_ms": 1000, "previous": 1, "cause": "crash", "ready_ms": 2500,
                             "deletions": ["payments"]}  # fmt: skip
    assert moved.summary.startswith(
        "Controller moved from broker 1 (epoch 1) to broker 2 (epoch 2), leaving the cluster without a "
        "working controller for 66.0 s to 70.0 s: broker 1 stopped without a shutdown"
    )
    assert "ready to serve 2500 ms after its election (slowest step: controller.elected 2000 ms)" in (
        moved.summary
    )
    assert moved.summary.endswith("; it resumed deletions payments.")
    assert moved.evidence == (
        "zk:txn@0x42",
        "zk:txn@0x3f",
        "zk:txn@0x40",
        "broker-1:logs/server.log:90",
        "broker-2:logs/controller.log:10",
        "broker-2:logs/controller.log:12",
    )
    # without the new controller's log its steps are not known, and the finding says whose log is missing
    said.logs, said.with_logs = {}, frozenset({1})
    _, unlogged = judge(said, checked())
    assert "no log from broker 2 for its failover steps" in unlogged.summary
    assert "ready_ms" not in unlogged.subject


def test_three_elections_in_ten_minutes_flap_and_three_in_eleven_do_not() -> None:
    def three(apart: timedelta) -> list[Election]:
        return chain(*(elected(e, e, 0x10 * e, apart * e) for e in (1, 2, 3)))

    found = judge(facts(three(timedelta(minutes=4))), checked())
    (flapping,) = [f for f in found if f.kind == "controller.flapping"]
    assert flapping.subject == {"epochs": [1, 2, 3], "brokers": [1, 2, 3]}
    assert flapping.evidence == ("zk:txn@0x10", "zk:txn@0x20", "zk:txn@0x30")
    # three elections, two of them moves (the first had no controller before it in the evidence)
    assert "was elected 3 times within 10 minutes (epochs 1-3), moving to another broker 2 time(s)" in (
        flapping.summary
    )
    assert not [f for f in judge(facts(three(timedelta(minutes=5, seconds=31))), checked()) if
                f.kind == "controller.flapping"]  # fmt: skip


def test_a_lost_session_is_a_finding_and_a_shutdown_is_not() -> None:
    crashed = Expired(3, 0xB2, "crash", "broker-3:logs/server.log:7", T0, zxids=(0x11, 0x55))
    stopped = Expired(1, 0xB1, "shutdown", None, T0, zxids=(0x12, 0x56))
    (lost,) = judge(facts([], expired=[crashed, stopped]), checked())
    assert lost.subject == {"broker": 3, "session": "0xb2", "zxid": "0x55", "cause": "crash"}
    assert lost.evidence == ("zk:txn@0x11", "zk:txn@0x55", "broker-3:logs/server.log:7")
    assert "session 0xb2 (registered at zxid 0x11) ended at zxid 0x55, 2024-03-12 09:00:00" in lost.summary
    # from the brokers' logs alone: the client's line naming the session, or Kafka's own lines
    client = Expired(2, 0xC3, "hang", "broker-2:logs/server.log:40", T0, "broker-2:logs/server.log:41")
    kafka = Expired(4, None, "session_expiry", None, T0, "broker-4:logs/server.log:3", lines=2)
    named, bare = judge(facts([], expired=[client, kafka]), checked())
    assert named.subject == {"broker": 2, "session": "0xc3", "cause": "hang"}
    assert named.evidence == ("broker-2:logs/server.log:41", "broker-2:logs/server.log:40")
    assert bare.subject == {"broker": 4, "cause": "session_expiry"}
    assert "(2 line(s), first at 2024-03-12 09:00:00 broker time)" in bare.summary
    # or a controller saw it fail, and its own log holds no shutdown (model.history.sessions)
    seen = "the controller saw it fail at 2024-03-12 09:00:00 (its clock)"
    failed = Expired(3, None, "crash", None, T0, "broker-1:logs/controller.log:80", seen=seen)
    (gone,) = judge(facts([], expired=[failed]), checked())
    assert gone.subject == {"broker": 3, "cause": "crash"} and gone.evidence == (
        "broker-1:logs/controller.log:80",
    )
    assert gone.summary == (
        "Broker 3 stopped without a shutdown (a crash or hang) and ZooKeeper expired its session: the "
        "controller saw it fail at 2024-03-12 09:00:00 (its clock), and broker 3's own log holds no shutdown "
        "or session expiry before then."
    )


def test_without_elections_in_the_logs_coverage_names_the_log_that_would_hold_them() -> None:
    ours = checked()
    lacking = ("controller.log, where Kafka 2.8.2 logs a controller's election", False)
    assert judge(facts([], election_log=lacking), ours) == []
    assert ours["controller"].missing == [
        "controller.log, where Kafka 2.8.2 logs a controller's election: no broker's is in the bundle, so no "
        "election was read"
    ]
    # held, or an election read: nothing to add
    for f in (
        facts([], election_log=(lacking[0], True)),
        facts([logged_election(2, 1, 0)], election_log=lacking),
    ):
        held = checked()
        judge(f, held)
        assert held["controller"].missing == []


def test_a_controller_resumes_only_what_an_earlier_one_had_under_way() -> None:
    """Broker 1 (epoch 3) starts moving orders-0 and deleting logs-old; broker 2 (epoch 4) takes both over
    and is asked, in its own term, to move orders-1 and delete tmp: those two are its own, not resumed.
    Broker 1 comes back as controller (epoch 5) and finishes orders-1: resumed from broker 2."""
    picked = [
        Picked(1, 3, "reassignments", "orders-0"),
        Picked(1, 3, "deletions", "logs-old"),
        Picked(2, 4, "reassignments", "orders-0"),
        Picked(2, 4, "deletions", "logs-old"),
        Picked(2, 4, "reassignments", "orders-1"),
        Picked(2, 4, "deletions", "tmp"),
        Picked(2, 4, "preferred elections", "orders-2"),
        Picked(1, 5, "reassignments", "orders-1"),
    ]
    assert picked_up(picked) == {
        (2, 4): {
            "reassignments": ["orders-0"],
            "deletions": ["logs-old"],
            "preferred elections": ["orders-2"],
        },
        (1, 5): {"reassignments": ["orders-1"]},
    }
    assert picked_up(picked[:1] + picked[4:6]) == {}  # nothing under way before anyone's term
    # broker 2's failover listed no topic to be deleted: logs-old, deleted again in its term, is its own
    empty = [*picked, Picked(2, 4, "listed deletions", "")]
    assert "deletions" not in picked_up(empty)[(2, 4)]
    assert picked_up([*picked, Picked(2, 4, "listed deletions", "logs-old")]) == picked_up(picked)


# -- without ZooKeeper's history: the tenure before an election as the brokers' lines tell it ---------------
def said(seconds: float, line: int, log: str = "brokers/1/logs/server.log") -> Said:
    return Said(T0 + timedelta(seconds=seconds), log, line)


def tenure(how: str, **kw: object) -> TenureEnd:
    """Broker 1's tenure: its last act 10 s in, then `how` (hang: idle 18.7 s at 40 s; crash: a start)."""
    fields: dict[str, object] = dict(
        broker=1, epoch=4, last_act=said(10, 204, "brokers/1/logs/state-change.log"),
        last_event="replica.state_change", how=how, said=said(45, 30), resigned=said(45.5, 7, LOG),
        timed_out=None, idle_ms=None, timeout_ms=18_000,
        timeout_from="negotiated, as broker-1:logs/server.log:4 prints",
    )  # fmt: skip
    return TenureEnd(**{**fields, **kw})  # type: ignore[arg-type]


def test_a_logged_tenures_outage_runs_from_its_last_sign_of_life_to_ready() -> None:
    elected_at, ready = T0 + timedelta(seconds=41), T0 + timedelta(seconds=42)
    hang = logged_outage(tenure("hang", timed_out=said(40, 3), idle_ms=18_700), elected_at, ready)
    # last heard at 21.3 s; silent within a third of the timeout after: 14.7 s to 20.7 s
    assert hang is not None and (hang.lower_ms, hang.upper_ms) == (14_700, 20_700)
    assert "its ZooKeeper client last heard from ZooKeeper (18700 ms before its time-out" in hang.detail()
    crash = logged_outage(tenure("crash"), elected_at, ready)
    # silent from the expiry's start (41 s - 18 s - a tick) to a third of the timeout later, not before 10 s
    assert crash is not None and (crash.lower_ms, crash.upper_ms) == (18_000 - 6_000 + 1_000, 18_000 + 3_000)
    # a controller that shut down worked until its shutdown ended (its session closed then)
    closed = tenure("shutdown", said=said(30, 122), closed=said(31, 123))
    shutdown = logged_outage(closed, elected_at, ready)
    assert shutdown is not None and shutdown.lower_ms == shutdown.upper_ms == 11_000
    assert shutdown.refs == ("broker-1:logs/server.log:123",)
    # one that halted for failed log dirs stopped at its halt line (`halted_broker_leaves_its_session_to_
    # expire`), though ZooKeeper expired its session a timeout later
    halted = logged_outage(tenure("halted", said=said(25, 88)), elected_at, ready)
    assert halted is not None and halted.lower_ms == halted.upper_ms == 17_000
    assert halted.refs == ("broker-1:logs/server.log:88",) and halted.timeout_ms is None
    assert "its halt for failed log dirs" in halted.detail()
    assert logged_outage(tenure("unknown"), elected_at, ready) is None


def logged_election(epoch: int, broker: int, at: float) -> Election:
    return Election(epoch, broker, None, T0 + timedelta(seconds=at), f"broker-{broker}:logs/controller.log:6")


def test_from_the_logs_a_failover_names_the_controller_before_and_why_it_ended() -> None:
    new = logged_election(5, 2, 41)
    log = FailoverLog(
        ready=Line("controller.ready", None, T0 + timedelta(seconds=42), LOG, 32),
        elected=Line("controller.elected", None, T0 + timedelta(seconds=41), LOG, 6),
    )
    hang = tenure("hang", timed_out=said(40, 3), idle_ms=18_700)
    (moved,) = judge(facts([new], logs={(2, 5): log}, ended={5: hang}), checked())
    assert moved.kind == "controller.failover" and moved.subject["cause"] == "hang"
    assert moved.subject["previous"] == 1 and moved.subject["outage_ms"] == [14_700, 20_700]
    assert moved.summary.startswith(
        "Controller moved from broker 1 (epoch 4) to broker 2 (epoch 5), leaving the cluster without a "
        "working controller for 14.7 s to 20.7 s: broker 1 stood still"
    )
    assert "broker-1:logs/server.log:3" in moved.evidence and "broker-1:logs/server.log:30" in moved.evidence
    # the same broker elected again, and a tenure whose end no line tells
    again = dataclasses.replace(tenure("unknown", said=None), broker=2, epoch=None)
    (re_elected,) = judge(facts([new], ended={5: again}), checked())
    assert re_elected.summary.startswith(
        "Broker 2 was elected controller again (epoch 5) after its tenure (its lines show it controller "
        "before) ended: broker 2's lines in the evidence do not say why its tenure ended"
    )
    assert re_elected.subject["cause"] == "unknown" and "outage_ms" not in re_elected.subject


def test_a_controlled_shutdown_that_gave_up_warns_and_one_retried_is_said() -> None:
    gave_up = ControlledShutdown(3, T0, 4, True, "2 partition(s) (orders-1, orders-4)", "b3:1", "b3:9")
    retried = dataclasses.replace(gave_up, broker=2, attempts=2, gave_up=False, remaining=None)
    failed, took = judge(facts([], shutdowns=[gave_up, retried]), checked())
    assert (failed.kind, failed.severity.name, failed.subject) == (
        "broker.controlled_shutdown",
        "WARNING",
        {"broker": 3, "outcome": "failed", "attempts": 4},
    )
    assert (
        "failed after 4 attempt(s); the controller last said 2 partition(s) (orders-1, orders-4) remained"
        in (failed.summary)
    )
    assert "Proceeding to do an unclean shutdown" in failed.summary and failed.evidence == ("b3:1", "b3:9")
    assert (took.severity.name, took.subject["outcome"]) == ("INFO", "retried")
    assert took.summary.endswith("took 2 attempts, then succeeded.")


def test_a_broker_the_controller_cannot_reach_warns_and_one_without_its_listener_is_critical() -> None:
    cut = Unreachable(1, 2, said(0, 10, LOG), said(5, 12, LOG), 2)
    bare = NoEndpoint(4, "INTERNAL", 1, said(60, 20, LOG), said(60, 20, LOG), 1, "BrokerChange")
    unreachable, unnamed = judge(facts([], unreachable=[cut], no_endpoint=[bare]), checked())
    assert unreachable.severity.name == "WARNING" and unreachable.subject == {
        "broker": 2,
        "failures": 2,
        "controller": 1,
    }
    assert "stayed registered" in unreachable.summary and "inter.broker.listener.name" in unreachable.summary
    assert unnamed.severity.name == "CRITICAL" and unnamed.subject == {"broker": 4, "listener": "INTERNAL"}
    assert "Add listener INTERNAL to broker 4's listeners and advertised.listeners" in unnamed.summary
