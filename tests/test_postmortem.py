"""The postmortem's words (postmortem.py), from hand-written findings and impacts: the alerts a scrape
would have caught, what clients saw against the producer's delivery timeout, the timeline's cited moments,
the action items and the evidence as a table shows it; and, on every sample and story, its outage numbers
held equal to the findings'."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import replace

import pytest
from conftest import samples
from stories import FRESH, MUST_FIND, Stories
from truth_facts import told_alone

from workbench import actions, postmortem
from workbench.analysis.findings import Coverage, Finding, Severity, bounds, readable_ref
from workbench.analysis.leaderless import nobody_serves
from workbench.analysis.triage import Triage
from workbench.frames import Bundle
from workbench.postmortem import Impact, Outage


def test_a_blip_shorter_than_a_scrape_most_likely_fired_no_alert() -> None:
    blip = postmortem._offline_alert(107)
    assert "for at most 107 ms" in blip and "chance under 1%" in blip and "most likely did not fire" in blip
    assert "state-change.log" in blip and "--unavailable-partitions" in blip
    half = postmortem._offline_alert(40_000)
    assert "about 67% to 100%" not in half and "may have missed it" in half  # 40 s of a 30-60 s scrape
    long = postmortem._offline_alert(35 * 60_000)
    assert "for up to 35 min: an alert on it fires" in long
    never = postmortem._offline_alert(0)  # taken offline and elected in one event: the gauge never rose
    assert ": never, for these partitions" in never and "no alert on it could fire" in never
    unknown = postmortem._offline_alert(None)
    assert "whether an alert on it fired is not known" in unknown and "fires at" not in unknown


def test_clients_by_the_producers_delivery_timeout() -> None:
    short = Impact(True, {"unserved": Outage(2, ["orders"], (3_000, 3_000))})
    said = postmortem.clients(short)
    assert "The longest outage lasted 3.0 s." in said and "their sends went through, late" in said
    assert "failed:" not in said
    long = Impact(True, {"unserved": Outage(2, ["orders"], (35 * 60_000,) * 2)})
    said = postmortem.clients(long)
    assert "Sends that waited longer than `delivery.timeout.ms` (2 min by default since 2.1) failed" in said
    # bounded from the lines' end to the capture, across the timeout: not known, and where to look
    maybe = Impact(False, {"unserved": Outage(2, ["orders"], (10_000, 35 * 60_000))})
    said = postmortem.clients(maybe)
    assert f"The longest outage lasted {bounds(10_000, 35 * 60_000)}. " in said
    assert "the evidence does not tell" in said
    assert "Sends that waited longer" not in said and "went through" not in said
    assert "'Expiring N record(s) for <partition>" in said


def test_what_a_follower_did_to_acks_all_producers_is_in_the_impact_in_its_findings_words() -> None:
    held = Finding("isr.high_watermark_held", "warning", {"broker": 4, "partitions": 2, "times": 3}, "Held.")
    found = [held, Finding("data_loss.truncation", "warning", {"broker": 1}, "Lost. More.")]
    for hurt in (postmortem.unmeasured(found), Impact(True, held=[held])):
        assert "- **Producers with acks=all held back**: Held." in postmortem.impact_markdown(hurt)
    assert "held back" not in postmortem.impact_markdown(postmortem.unmeasured(found[1:]))


STILL = {"lines_end": "2024-03-12T09:59:52Z", "still": 2}  # a lines finding's `still`: when they end


def test_without_zookeepers_history_the_report_says_the_outages_the_lines_tell() -> None:
    """A logs-only bundle: the findings' outages, their longest bounds, the clients; a paste's moment and
    findings without bounds are no outage measured; no outage finding: not measured."""
    offline = {"partitions": 3, "broker": 1, "still": 0, "outage_ms": [13_100, 19_100]}
    found = [
        Finding("partition.offline", Severity.WARNING, offline, "3 partition(s) (t 0-2) had ...", ("x:1",)),
        Finding("partition.offline", Severity.CRITICAL, {**STILL, "partitions": 2}, "2 ...", ("x:2",)),
        Finding("partition.offline", Severity.CRITICAL, {"partitions": 9, "taken_at": "t"}, "pasted", ("p",)),
    ]
    hurt = postmortem.unmeasured(found)
    (o,) = hurt.outages.values()
    assert (o.partitions, o.longest_ms, o.still, hurt.measured) == (5, (13_100, 19_100), 2, False)
    said = postmortem.summary(Triage(found, Coverage(), 0), hurt) + postmortem.impact_markdown(hurt)
    told_alone(found, said)
    assert "when the lines end, 2 partition(s) still had none." in said
    assert "consumers got nothing new from them. The longest outage lasted 13.1 s to 19.1 s. " in said
    calm = postmortem.unmeasured(found[:1])  # none still: not proven healthy without ZooKeeper's state
    said = postmortem.summary(Triage(found[:1], Coverage(), 0), calm)
    assert "whether every partition has an acting leader now is not known" in said
    assert "every partition had" not in said
    # the alert as the findings tell Kafka's count: unknown unless every offline finding says how long
    said = " ".join(postmortem.detection(Triage(found, Coverage(), 0), hurt))
    assert "whether an alert on it fired is not known" in said
    never = [replace(found[0], subject={**offline, "offline_ms": 0})]
    said = " ".join(postmortem.detection(Triage(never, Coverage(), 0), postmortem.unmeasured(never)))
    assert "no alert on it could fire" in said
    nothing = postmortem.unmeasured(found[2:])
    assert nothing.outages == {} and "Not measured" in postmortem.impact_markdown(nothing)
    # ZooKeeper's tree at the capture read: its partitions without a live leader are said at the capture
    tree = {"partitions": 4, "broker": 2, "still": 4, "outage_ms": [60_000, 300_000]}
    now = Finding(
        "partition.offline", Severity.CRITICAL, tree, "4 ...", ("zk:/brokers/topics/t/partitions/5/state",)
    )
    hurt = postmortem.unmeasured([*found, now], tree=True)
    said = postmortem.summary(Triage([*found, now], Coverage(), 0), hurt) + postmortem.impact_markdown(hurt)
    told_alone([*found, now], said)
    assert said.count("From the brokers' lines and ZooKeeper's tree at the capture alone") == 1
    assert (
        "When the lines end, 2 partition(s) still had none; at the capture, ZooKeeper's tree shows 4" in said
    )
    assert "the longest for 1.0 to 5.0 min" in said
    calm = postmortem.unmeasured(found[:1], tree=True)
    said = postmortem.summary(Triage(found[:1], Coverage(), 0), calm) + postmortem.impact_markdown(calm)
    told_alone(found[:1], said)
    assert "At the capture ZooKeeper's tree shows a live leader for every partition of a topic not" in said
    assert "not known" not in said
    # the lines leave 2 without a leader, the tree names a registered leader for 1 of them at the capture
    corrected = replace(found[1], subject={**STILL, "partitions": 2, "still": 1, "led_at_capture": 1})
    hurt = postmortem.unmeasured([found[0], corrected], tree=True)
    said = postmortem.summary(Triage([found[0], corrected], Coverage(), 0), hurt)
    said += postmortem.impact_markdown(hurt)
    told_alone([found[0], corrected], said)
    assert (
        hurt.still == 1 and "still had none (1 of them led again in ZooKeeper's tree at the capture)" in said
    )
    led = replace(found[1], subject={"partitions": 2, "still": 0, "led_at_capture": 2})
    hurt = postmortem.unmeasured([found[0], led], tree=True)
    said = postmortem.summary(Triage([found[0], led], Coverage(), 0), hurt) + postmortem.impact_markdown(hurt)
    told_alone([found[0], led], said)
    assert (
        hurt.still == 0 and "At the capture ZooKeeper's tree shows a live leader for every partition" in said
    )
    assert (
        "when the lines end, 2 partition(s) still had none (all of them led again in ZooKeeper's tree" in said
    )


def test_the_timeline_cites_what_the_findings_cite_root_first_and_the_actions_are_whole() -> None:
    root = Finding(
        "topic_id.root_cause",
        Severity.CRITICAL,
        {"topic": "orders"},
        "A pre-2.8 tool rewrote it.",
        ("zk:/brokers/topics/orders@mzxid=0x99", "zk:txn@0x8f"),
    )
    offline = Finding(
        "partition.offline",
        Severity.WARNING,
        {"partitions": 1},
        "1 partition(s) offline.",
        ("zk:txn@0x8f", "broker-1:logs/controller.log.2024-03-12-08:82", "zk:txn@0xa0"),
    )
    result = Triage([offline, root], Coverage(), 0)
    cited = postmortem.story(result)
    assert cited == [
        ("zk:txn@0x99", "topic_id.root_cause"),  # a znode as of a write: that write's txn
        ("zk:txn@0x8f", "topic_id.root_cause"),
        ("broker-1:logs/controller.log.2024-03-12-08:82", "partition.offline"),
    ]
    assert len(postmortem.story(result, limit=2)) == 2
    table = actions.action_markdown(result.findings)
    assert table.splitlines()[0] == "| priority | action | owner |"
    assert table.splitlines()[2].startswith("| P1 | Find and stop every pre-2.8 tool")  # the root's first
    assert table.splitlines()[3].startswith("| P2 | Alert on `OfflinePartitionsCount`")
    assert readable_ref(offline.evidence[1]) == "broker-1:logs/controller.log.2024-03-12-08 line 82"
    assert readable_ref("zk:txn@0x8f") == "zk:txn@0x8f"
    assert postmortem._cut("a" * 5 + " bbbbbb", 8) == "aaaaa …"


def _named(f: Finding) -> set[tuple[str, int]] | None:
    """The partitions an outage finding names, '(orders 0-2,5; payments 1)' as `tp_list` writes them; None
    where it names only the first topics."""
    listed = re.search(r"partition\(s\) \(([^()]*)\)", f.summary)
    assert listed is not None, f.summary
    if "more topics" in listed.group(1):
        return None
    named = set()
    for part in listed.group(1).split("; "):
        topic, ranges = part.rsplit(" ", 1)
        for r in ranges.split(","):
            low, _, high = r.partition("-")
            named |= {(topic, p) for p in range(int(low), int(high or low) + 1)}
    return named


@pytest.mark.slow
@pytest.mark.parametrize("name", [*samples("manifest.json"), *sorted(FRESH), *sorted(MUST_FIND)])
def test_the_reports_outage_is_the_findings(
    name: str, sample: Callable[[str], Bundle], triaged: Callable[[str], Triage], stories: Stories
) -> None:
    """One number everywhere: the partitions the report's summary and impact say nobody served, how many
    still, and the longest outage's bounds are those of the outages' findings, on every sample and story."""
    in_samples = name in samples("manifest.json")
    bundle = sample(name) if in_samples else stories.bundle(name)
    found = triaged(name) if in_samples else stories.triage(name)
    hurt = postmortem.impact(bundle, found)
    told = [f for f in found.findings if f.kind in postmortem.OUTAGE_KINDS and "taken_at" not in f.subject]
    said = postmortem.summary(found, hurt) + postmortem.impact_markdown(hurt)
    if not hurt.measured:
        told_alone(found.findings, said)
        return
    if not told:
        assert hurt.outages == {} and "No partition was without an acting leader" in said
        return
    (o,) = hurt.outages.values()
    assert o.longest_ms == max((tuple(f.subject["outage_ms"]) for f in told), key=lambda b: (b[1], b[0]))
    named = [_named(f) for f in told]
    if all(n is not None for n in named):
        assert o.partitions == len(set().union(*(n for n in named if n is not None)))
    else:  # a finding names only its first topics: each partition is in one of them at least
        counts = [f.subject["partitions"] for f in told]
        assert max(counts) <= o.partitions <= sum(counts)
    assert o.still == nobody_serves(found.findings)
    # Kafka's count as the findings tell it: where every offline finding says it never counted them (each
    # event that took them offline elected their leaders), the report's detection says so too
    offline = [f for f in told if f.kind == "partition.offline"]
    if offline and all("OfflinePartitionsCount never counted them" in f.summary for f in offline):
        assert o.offline_ms == 0
        assert any(": never, for these partitions" in d for d in postmortem.detection(found, hurt))
    assert f"{o.partitions} partition(s)" in said and f"the longest for {bounds(*o.longest_ms)}" in said
    assert f"{o.partitions}, of " in said and f"longest for {bounds(*o.longest_ms)}; " in said
