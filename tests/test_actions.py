"""What to do next (`workbench/actions.py`), one list read by the report and by triage: every action keyed
to a kind some analysis emits, and triage's text and Markdown ending with the report's action items, root
causes first. Plain Python over the samples' golden findings: no Spark."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from conftest import golden_findings, samples
from test_golden import facts_file

from workbench.actions import (
    ACTIONS,
    HELD_BY_CAUSE,
    REASSIGNMENT_HOLDS,
    REPAIR,
    UNCOUNTED,
    action_items,
    action_markdown,
    next_steps,
)
from workbench.analysis.causes import grouped
from workbench.analysis.facts_json import given
from workbench.analysis.findings import Coverage, Finding
from workbench.analysis.registry import kinds
from workbench.analysis.triage import Triage, judged
from workbench.cli.render import NEXT, triage_markdown, triage_text


def test_every_action_is_keyed_to_a_kind_an_analysis_emits() -> None:
    """An action keyed to a kind no analysis emits is never asked for (a session expiry's was keyed
    `zk.session_expired`, which no finding is)."""
    assert sorted(set(ACTIONS) - set(kinds())) == []


def test_a_session_expiry_asks_for_its_cause_and_the_metric_that_counts_it() -> None:
    found = golden_findings("deletion-stuck-2.8")
    expired = [f for f in found if f.kind == "broker.session_expired"]
    assert expired  # broker 3 stopped without a shutdown and ZooKeeper expired its session
    asked = [f.kind for f, action in next_steps(found) if "ZooKeeperExpiresPerSec" in action]
    assert asked == ["broker.session_expired"]
    assert "ZooKeeperExpiresPerSec" not in " ".join(action_items([f for f in found if f not in expired]))


@pytest.mark.parametrize("name", samples("manifest.json"))
def test_triage_ends_with_the_reports_action_items_root_causes_first(name: str) -> None:
    found = golden_findings(name)
    items = action_items(found)
    t = Triage(found, Coverage(), 0, name)
    text, markdown = triage_text(t).splitlines(), triage_markdown(t)
    if not items:  # the healthy sample asks for nothing
        assert NEXT not in text and NEXT not in markdown and action_markdown(found) == "None."
        return
    assert text[-len(items) - 1] == NEXT
    assert [line.split("] ", 1)[1] for line in text[-len(items) :]] == items
    told = markdown[markdown.index(f"## {NEXT}") :]
    assert [told.index(item) for item in items] == sorted(told.index(item) for item in items)
    # the report's table lists the same, in the same order
    rows = action_markdown(found).splitlines()[2:]
    assert [row.split(" | ")[1] for row in rows] == items
    # a root cause's step comes before any step of a finding that is not one
    roots = {g.root.kind for g in grouped(found)[0]}
    is_root = [f.kind in roots for f, _ in next_steps(found)]
    assert is_root == sorted(is_root, reverse=True)


def test_no_step_where_nothing_asks_for_one() -> None:
    quiet = Finding("topic.auto_created", "info", {"topic": "ordrs"}, "created by a producer")
    assert next_steps([]) == [] and next_steps([quiet]) == []
    assert NEXT not in triage_text(Triage([quiet], Coverage(), 0, "b"))


def test_a_deletion_a_reassignment_holds_asks_for_the_reassignment_not_a_broker_back() -> None:
    """The story's reassignment of a queued topic waits on broker 4, down, which holds a new replica: the
    step is that broker back (found from the story's facts as Spark gave them). With no broker down, the
    way out is the reassignment completing (it cannot be cancelled) or a broker of its replicas registering
    again, not a broker back (the incident issue 75 names: the new replica never joined the ISR)."""
    facts = json.loads(facts_file("topicid-restart-refused+reassignment-blocks-deletion@2.8.2").read_text())
    found, _ = judged(*given(facts))
    (held,) = [f for f in found if f.kind == "deletion.stuck"]
    assert held.subject["reassigning"] and held.subject["brokers_down"] == [4]
    assert ACTIONS["deletion.stuck"] in action_items(found) and REASSIGNMENT_HOLDS not in action_items(found)
    assert "replication throttle" not in held.summary  # none is set: not the way out
    lagging = replace(held, subject={**held.subject, "brokers_down": []})
    alone = action_items([lagging])
    assert REASSIGNMENT_HOLDS in alone and ACTIONS["deletion.stuck"] not in alone
    # two deletions held two ways: a step each
    both = action_items([lagging, *golden_findings("deletion-stuck-2.8")])
    assert REASSIGNMENT_HOLDS in both and ACTIONS["deletion.stuck"] in both


def test_a_flapping_isr_and_a_leader_that_stood_still_each_ask_for_their_cause_and_metric() -> None:
    """A leader that stood still in its session, which no Kafka gauge counts (the 2.8.2 chain's, from its
    facts as Spark gave them), and a follower that kept leaving the ISR (`test_balance` finds one on a
    broker restarted three times) each ask for their cause first, then the metric that moves."""
    name = "flapping+controller-hang+controller-hang-woke-first+leader-pause+controller-hang-back-before-read"
    found, _ = judged(*given(json.loads(facts_file(f"{name}+deletion-denied@2.8.2").read_text())))
    flapped = Finding("isr.flapping", "warning", {"broker": 2, "partitions": 4}, "broker 2 flapped")
    steps = {f.kind: asked for f, asked in next_steps([*found, flapped])}
    assert "request=Produce" in steps["partition.leader_paused"]
    assert steps["partition.leader_paused"].startswith("Find what stopped the broker's JVM")
    assert "IsrShrinksPerSec" in steps["isr.flapping"] and "before raising" in steps["isr.flapping"]


def test_offline_partitions_kafkas_count_never_held_are_not_told_to_alert_on_it() -> None:
    """Where the event that learned their leader was gone elected their new leaders, OfflinePartitionsCount
    never counted them (their finding says so, `offline_ms` 0): an alert on it is not the next step; where
    it did count them, it is."""
    found = golden_findings("controller-failover-2.5")
    never = [f for f in found if f.kind == "partition.offline" and f.subject.get("offline_ms") == 0]
    assert never and all("never counted them" in f.summary for f in never)
    asked = {a for f, a in next_steps(found) if f.kind == "partition.offline"}
    assert UNCOUNTED in asked and ACTIONS["partition.offline"] not in asked
    counted = Finding("partition.offline", "critical", {"partitions": 1, "offline_ms": 5_000}, "offline")
    assert action_items([counted]) == [ACTIONS["partition.offline"]]


def test_a_follower_that_held_producers_back_asks_for_its_cause_or_for_the_one_triage_found() -> None:
    """On the slow-follower story nothing explains the follower: find why it fell behind. On the topic-id
    sample it refused its topic's id: that refusal's step (the repair plan) is the way out, not its disk."""
    slow, _ = judged(*given(json.loads(facts_file("slow-follower@3.6.2").read_text())))
    assert ACTIONS["isr.high_watermark_held"] in action_items(slow) and HELD_BY_CAUSE not in action_items(
        slow
    )
    refused = golden_findings("topicid-mismatch-2.8")
    steps = {f.kind: asked for f, asked in next_steps(refused)}
    assert steps["isr.high_watermark_held"] == HELD_BY_CAUSE and REPAIR in steps.values()
