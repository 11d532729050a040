"""What led to what (`analysis.causes`), from the samples' findings as their golden files hold them: each
chain root first, a link only where the subjects name the same broker, topic or txn, and none where
nothing explains anything. Plain Python: no Spark."""

from __future__ import annotations

import pytest
from conftest import golden_findings

from workbench import actions
from workbench.analysis.causes import chains, in_brief, links
from workbench.analysis.findings import Finding


def _pairs(found: list[Finding]) -> set[tuple[str, str]]:
    return {(x.effect.kind, x.cause.kind) for x in links(found)}


def test_a_controller_whose_session_ended_explains_the_failover_and_what_its_partitions_suffered() -> None:
    found = golden_findings("controller-failover-2.5")
    assert _pairs(found) == {
        ("controller.failover", "broker.session_expired"),
        ("partition.offline", "broker.session_expired"),
        ("partition.under_replicated", "broker.session_expired"),
        ("leader.imbalance", "broker.session_expired"),
    }
    told = list(chains(found))
    assert [d for d, _, _ in told] == [0, 1, 1, 1, 1]  # told once, root first
    assert told[0][1].kind == "broker.session_expired" and told[0][2] == ""
    about = [
        (f.subject.get("broker"), f.subject.get("previous"), f.subject.get("brokers")) for _, f, _ in told
    ]
    assert all(1 in (b, p) or bs == [1] for b, p, bs in about)  # each about broker 1


def test_a_deletion_waits_for_a_broker_whose_session_ended() -> None:
    told = [(d, f.kind) for d, f, _ in chains(golden_findings("deletion-stuck-2.8"))]
    assert told[:4] == [
        (0, "broker.session_expired"),
        (1, "broker.down"),
        (2, "deletion.stuck"),
        (3, "in_flight.deletion"),
    ]
    # what broker 3 leaves under-replicated, it leaves while it is down
    assert {(1, "partition.offline"), (2, "partition.under_replicated")} <= set(told)


def test_the_topic_id_chain_runs_from_the_tool_that_wrote_the_znode_to_the_leader_that_refuses() -> None:
    found = golden_findings("topicid-mismatch-2.8")
    by = {(in_brief(x.effect), in_brief(x.cause)) for x in links(found)}
    assert ("topic_id.mismatch (topic orders, broker 1)", "topic_id.root_cause (topic orders)") in by
    assert ("topic_id.refused (topic orders, broker 1)", "topic_id.mismatch (topic orders, broker 1)") in by
    assert (
        "partition.no_acting_leader (broker 1, 1 partition(s))",
        "topic_id.refused (topic orders, broker 1)",
    ) in by
    # the longest outage: offline as broker 1 shut down, then refused by broker 2, elected as they came back
    assert (
        "partition.offline (broker 1, 1 partition(s))",
        "topic_id.refused (topic orders, broker 2)",
    ) in by
    # broker 1 is out of the ISR because it refuses, not because it went down (it shut down and came back)
    assert ("partition.under_replicated", "topic_id.refused") in _pairs(found)
    roots = [f.kind for d, f, _ in chains(found) if d == 0]
    assert roots == ["topic_id.root_cause"]


@pytest.mark.parametrize("sample", ["healthy-3.6", "handmade-2.8"])
def test_nothing_is_linked_where_no_finding_explains_another(sample: str) -> None:
    assert links(golden_findings(sample)) == [] and list(chains(golden_findings(sample))) == []


def test_a_failover_after_a_clean_shutdown_is_not_blamed_on_another_sessions_end() -> None:
    expired = Finding(
        "broker.session_expired", "warning", {"broker": 2, "zxid": "0x40"}, "broker 2's session"
    )
    failover = Finding("controller.failover", "warning", {"broker": 3, "previous": 1, "cause": "shutdown",
                       "epoch": 2, "zxid": "0x50"}, "moved")  # fmt: skip
    assert links([expired, failover]) == []
    again = Finding("broker.session_expired", "warning", {"broker": 1, "zxid": "0x10"}, "an earlier end")
    last = Finding("broker.session_expired", "warning", {"broker": 1, "zxid": "0x4f"}, "the one before")
    crashed = Finding("controller.failover", "warning", {"broker": 3, "previous": 1, "cause": "crash",
                      "epoch": 2, "zxid": "0x50"}, "moved")  # fmt: skip
    (link,) = links([again, last, crashed])
    assert link.cause is last  # of two ends of its session, the last before the failover


def test_no_preferred_election_is_advised_while_replicas_hold_a_stale_topic_id() -> None:
    """The imbalance a refusing broker leaves is its refusal's symptom, and the action items say not to
    run the election that would hand it leadership; elsewhere they advise the election."""
    stale = golden_findings("topicid-mismatch-2.8")
    assert ("leader.imbalance", "topic_id.refused") in _pairs(stale)
    items = actions.action_items(stale)
    assert actions.NO_ELECTION in items and actions.ACTIONS["leader.imbalance"] not in items
    moved = actions.action_items(golden_findings("controller-failover-2.5"))
    assert actions.ACTIONS["leader.imbalance"] in moved and actions.NO_ELECTION not in moved


def test_a_refusal_alone_leads_to_the_repair_plan_once() -> None:
    """Without ZooKeeper's state only the brokers' refusals show the stale replicas: the action items still
    name the plan (`workbench remediate` makes it from the refusals), and once where both kinds show."""
    refused = Finding("topic_id.refused", "critical", {"topic": "orders", "broker": 2}, "broker 2 refused")
    mismatch = Finding("topic_id.mismatch", "critical", {"topic": "orders", "broker": 2}, "holds another id")
    for findings in ([refused], [refused, mismatch]):
        items = actions.action_items(findings)
        assert items.count(actions.REPAIR) == 1, items


def test_from_the_brokers_lines_alone_a_refused_outage_is_linked_to_the_refusal() -> None:
    """Without ZooKeeper's history the findings carry no zxid: the link is by the broker that refused."""
    refused = Finding(
        "topic_id.refused", "critical", {"topic": "orders", "broker": 2, "partitions": [3]}, "x"
    )
    other = Finding("topic_id.refused", "critical", {"topic": "orders", "broker": 3, "partitions": [2]}, "y")
    offline = Finding("partition.offline", "critical", {"partitions": 1, "broker": 1, "still": 1,
                      "refused_by": [2], "began": "2024-03-12T08:20:31Z"}, "z")  # fmt: skip
    blip = Finding("partition.offline", "warning", {"partitions": 7, "broker": 1, "began": "x"}, "b")
    (link,) = links([refused, other, offline, blip])
    assert (link.effect, link.cause) == (offline, refused)


def test_from_the_lines_alone_an_outage_is_its_leaders_session_end_where_both_cite_one_line() -> None:
    """Without ZooKeeper's history no zxid names a broker's loss: an outage of the partitions it led is its
    session end's where both cite the controller's line that handled the loss, and no other broker's."""
    callback = "broker-1:logs/controller.log:80"
    expired = Finding("broker.session_expired", "warning", {"broker": 3}, "x", (callback,))
    offline = Finding("partition.offline", "warning", {"partitions": 6, "broker": 3, "began": "unknown"}, "y",
                      ("broker-1:logs/state-change.log:127", callback))  # fmt: skip
    (link,) = links([expired, offline])
    assert (link.effect, link.cause) == (offline, expired)
    assert links([expired, Finding("partition.offline", "warning", {"broker": 3}, "z", ("other:1",))]) == []
    assert (
        links([Finding("broker.session_expired", "warning", {"broker": 2}, "x", (callback,)), offline]) == []
    )


def test_from_the_tree_alone_partitions_still_without_their_leader_are_its_being_down() -> None:
    """ZooKeeper's tree alone tells neither when a broker went down nor when its partitions lost it: an
    outage still going on at the capture is the down leader's; one over, or another broker's, is not."""
    down = Finding("broker.down", "critical", {"broker": 1, "partitions": 24}, "x", ("zk:/brokers/ids",))
    still = {"partitions": 9, "zxid": "0x75", "broker": 1, "still": 9, "outage_ms": [0, 60_000]}
    offline = Finding(
        "partition.offline", "critical", still, "y", ("zk:/brokers/topics/t/partitions/0/state",)
    )
    (link,) = links([down, offline])
    assert (link.effect, link.cause, link.because) == (offline, down, "their leader is down")
    over = Finding("partition.offline", "warning", {**still, "still": 0}, "z", ("broker-2:logs/x.log:1",))
    other = Finding("partition.offline", "critical", {**still, "broker": 2}, "w", offline.evidence)
    assert links([down, over, other]) == []


def test_a_session_its_broker_left_to_expire_as_it_halted_is_the_failed_log_dirs() -> None:
    """A broker whose only log dir failed halts and leaves its session to expire
    (`halted_broker_leaves_its_session_to_expire`): its lost session, and the outage that follows, begin at
    the log dir's failure, the root; a session that ended otherwise is not blamed on it."""
    failed = Finding("log_dir.offline", "critical", {"broker": 4, "halted": True}, "x", ("b4:34",))
    halted = Finding("broker.session_expired", "warning", {"broker": 4, "cause": "halted"}, "y", ("c:62",))
    offline = Finding("partition.offline", "warning", {"broker": 4}, "z", ("sc:87", "c:62"))
    told = [(d, f.kind) for d, f, _ in chains([offline, halted, failed])]
    assert told == [(0, "log_dir.offline"), (1, "broker.session_expired"), (2, "partition.offline")]
    # and the log dir failed where removing a deleted topic's dir did (a lingering dir is critical only then)
    dirs = {"topic": "t", "broker": 4, "partitions": [1]}
    denied = Finding("deletion.lingering_dir", "critical", dirs, "w", ("b4:24",))
    assert [f.kind for _, f, _ in chains([offline, halted, failed, denied])][:2] == [
        "deletion.lingering_dir",
        "log_dir.offline",
    ]
    aged = Finding("deletion.lingering_dir", "warning", dirs, "w")
    assert ("log_dir.offline", "deletion.lingering_dir") not in _pairs([failed, aged])
    crashed = Finding("broker.session_expired", "warning", {"broker": 4, "cause": "crash"}, "y", ("c:62",))
    assert _pairs([failed, crashed]) == set()


def test_a_slow_follower_holds_a_reassignment_which_holds_a_deletion_which_freezes_leader_balance() -> None:
    """The chain the third review traced on a 3.6.2 cluster, root first: a follower that keeps leaving
    the ISR holds a reassignment onto it (a target replica must be in the ISR), which holds the topic's
    deletion; the broker's own imbalance is its leaving the ISR, another's is the queued topic the
    rebalance leaves out."""
    flapping = Finding("isr.flapping", "warning", {"broker": 3, "partitions": 4}, "broker 3 flapped")
    moving = Finding(
        "reassignment.stuck",
        "warning",
        {"topic": "t", "partition": 0, "target": [1, 3], "brokers_down": []},
        "m",
    )
    held = Finding("deletion.stuck", "critical", {"topic": "t", "reassigning": [0], "brokers_down": []}, "d")
    own = Finding("leader.imbalance", "warning", {"broker": 3, "ratio": 1.0, "threshold": 0.1}, "3")
    other = Finding(
        "leader.imbalance", "warning", {"broker": 2, "ratio": 0.5, "threshold": 0.1, "queued": ["t"]}, "2"
    )
    found = [flapping, moving, held, own, other]
    assert _pairs(found) == {
        ("reassignment.stuck", "isr.flapping"),
        ("deletion.stuck", "reassignment.stuck"),
        ("leader.imbalance", "isr.flapping"),
        ("leader.imbalance", "deletion.stuck"),
    }
    told = [(d, f.kind, f.subject.get("broker")) for d, f, _ in chains(found)]
    assert told[:3] == [(0, "isr.flapping", 3), (1, "reassignment.stuck", None), (2, "deletion.stuck", None)]
    # a broker down holds the reassignment instead: the follower's churn is not blamed
    down = Finding(
        "reassignment.stuck",
        "warning",
        {"topic": "t", "partition": 0, "target": [1, 3], "brokers_down": [3]},
        "m",
    )
    assert ("reassignment.stuck", "isr.flapping") not in _pairs([flapping, down])
