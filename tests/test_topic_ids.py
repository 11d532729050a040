"""The topic-id analysis's findings half (`topic_ids.judge`, with `topic_id_cause.causes`), from hand-written
facts: no Spark. Its facts half is checked on the samples (test_golden), on pastes (test_pasted_samples,
test_kafka_topics, test_zk_shell) and on simulated stories by the truth tests (test_triage)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone

from workbench.analysis import topic_id_cause
from workbench.analysis.findings import Coverage
from workbench.analysis.topic_ids import CHECK, Facts, Refusal, judge
from workbench.model.topic_ids import Impact, Mismatch, Printed, ShownWithout, Write, Znode

AT = datetime(2024, 3, 12, 9, 0, tzinfo=timezone.utc)
OLD, NEW = "qV3nX8cTQ2mB1d0pL9xZkw", "Zs1sD3WpQ6uLmJ0v2a9QbA"
ORDERS = Znode("orders", "/brokers/topics/orders", NEW, 3, 0x20, 0x90, 4)
STALE = Mismatch("orders", 3, OLD, NEW, [0, 1], ["brokers/3/datadirs/d/orders-0/partition.metadata"])


def checked() -> Coverage:
    """Coverage as the runner leaves it before `judge` (contract.Analysis.findings)."""
    coverage = Coverage()
    coverage.record(CHECK, ["ZooKeeper state", "broker data dirs"])
    return coverage


def causes(**kw: object) -> topic_id_cause.Facts:
    f = topic_id_cause.Facts({}, {}, {}, {"orders": ORDERS}, [], False, "the txn logs read", True)
    return replace(f, **kw)  # type: ignore[arg-type]


def write(zxid: int, change: str, topic_id: str | None, **kw: object) -> Write:
    w = Write(zxid, change, topic_id, None, 0x1A, None, False, 1, 2, 1)
    return replace(w, **kw)  # type: ignore[arg-type]


def stale(**kw: object) -> Facts:
    """ZooKeeper says NEW; broker 3's replicas of orders hold OLD."""
    return Facts(True, "2.8.2", mismatches=[STALE], known={"orders": ORDERS}, affected=["orders"], **kw)  # type: ignore[arg-type]


def test_nothing_where_every_id_agrees_or_the_version_has_none() -> None:
    assert judge(Facts(True, "3.6.2"), checked()) == []
    coverage = checked()
    assert judge(Facts(False, "2.5.1"), coverage) == []
    assert coverage[CHECK].status.value == "not_applicable"
    coverage = checked()
    assert judge(Facts(None, None), coverage) == []
    assert "topic ids assumed in use" in coverage[CHECK].missing[0]


def test_a_tool_removed_the_id_and_a_new_controller_minted_another() -> None:
    history = {
        "orders": [
            write(0x20, "created", OLD),
            write(0x50, "removed", None, previous_id=OLD, partitions=4, znode_version=1),
            write(0x90, "minted", NEW, previous_id=None, controller_epoch=2, fenced=True, writer_broker=2),
        ]
    }
    impact = Impact("orders", 2, ["1@3"], ["0@3"], [1], ["/brokers/topics/orders/partitions/1/state"])
    said = stale(causes=causes(history=history, elections={2: (0x88, 2)}, impact=[impact]))
    found = {f.kind: f for f in judge(said, checked())}
    assert set(found) == {"topic_id.mismatch", "topic_id.root_cause", "topic_id.impact"}
    mismatch = found["topic_id.mismatch"]
    assert mismatch.subject == {"topic": "orders", "broker": 3, "partitions": [0, 1], "topic_id": NEW}
    assert mismatch.evidence[0] == "zk:/brokers/topics/orders@mzxid=0x90"
    cause = found["topic_id.root_cause"]
    assert cause.subject == {"topic": "orders", "cause": 1, "certainty": "proved", "zxid": "0x50",
                             "session": "0x1a", "writer": "outside tool", "epoch": 2,
                             "minted_zxid": "0x90", "topic_id": NEW}  # fmt: skip
    assert "partitions 2 -> 4" in cause.summary and "(broker 2, elected at zxid 0x88)" in cause.summary
    assert cause.evidence == ("zk:txn@0x50", "zk:txn@0x88", "zk:txn@0x90")
    hurt = found["topic_id.impact"]
    assert hurt.subject == {
        "topic": "orders",
        "out_of_isr": ["1@3"],
        "will_leave": ["0@3"],
        "unavailable": [1],
        "at_risk": [],
    }
    assert hurt.severity.value == "critical" and "at 2.8 a broker refuses it once" in hurt.summary
    assert "Now: partitions 1 are unavailable" in hurt.summary and "forecast" not in hurt.summary
    # partition 1 served now by broker 3, its stale leader, with no current replica in its ISR: at risk,
    # said as a forecast with the broker not to restart, not as unavailable
    risky = replace(impact, unavailable=[], at_risk=[1], at_risk_leaders=[3])
    mild = judge(stale(causes=causes(impact=[risky], checks_disk=True)), checked())
    (warned,) = [f for f in mild if f.kind == "topic_id.impact"]
    assert warned.severity.value == "warning" and "3.x checks the log on disk" in warned.summary
    assert "unavailable (" not in warned.summary and "Now:" not in warned.summary
    assert "Next, a forecast: partitions 1 are served now by their leader (broker(s) 3)" in warned.summary
    assert "Do not restart broker(s) 3 before" in warned.summary


def test_without_the_history_the_cause_is_likely_and_says_what_would_settle_it() -> None:
    without = replace(ORDERS, topic_id=None, znode_version=1)
    facts = Facts(True, "2.8.2", known={"orders": without}, absent=[without], affected=["orders"])
    facts.causes = causes(known={"orders": without}, zk_history=False)
    found = {f.kind: f for f in judge(facts, checked())}
    assert found["topic_id.missing"].subject == {"topic": "orders", "zxid": "0x90"}
    assert "(version 1 (a pre-2.8 form), last written at zxid 0x90)" in found["topic_id.missing"].summary
    likely = found["topic_id.root_cause"]
    assert (likely.subject["cause"], likely.subject["certainty"]) == (1, "likely")
    assert "ZooKeeper's txn logs covering zxid 0x90 would show the session that wrote it" in likely.summary
    # never rewritten since its creation: the stale replicas are an earlier topic's of that name
    (again,) = topic_id_cause.causes(
        causes(known={"orders": replace(ORDERS, data_version=0)}), ["orders"], []
    )
    assert (again.subject["cause"], again.subject["zxid"]) == (4, "0x20")


def test_a_wiped_zookeeper_and_a_deleted_topic_are_proved() -> None:
    foreign = {3: ("old-cluster", "new-cluster", "brokers/3/datadirs/d/meta.properties")}
    (wiped,) = topic_id_cause.causes(causes(foreign=foreign), ["orders"], [STALE])
    assert (wiped.subject["cause"], wiped.subject["brokers"]) == (3, [3])
    assert wiped.evidence == ("zk:/cluster/id", "broker-3:datadirs/d/meta.properties")
    history = {
        "orders": [write(0x20, "created", OLD), write(0x40, "deleted", None), write(0x41, "created", NEW)]
    }
    (recreated,) = topic_id_cause.causes(causes(history=history), ["orders"], [STALE])
    assert (recreated.subject["cause"], recreated.subject["zxid"]) == (4, "0x40")
    assert "created again at zxid 0x41 with id " + NEW in recreated.summary
    assert recreated.evidence == ("zk:txn@0x40", "zk:txn@0x41")


def test_refusals_disagreements_and_pasted_ids() -> None:
    refused = Refusal(3, "orders", OLD, NEW, [0, 1], 4, AT, AT, [("brokers/3/logs/state-change.log", 17)])
    printed = Printed("kafka-topics --describe printed TopicId", "pasted/d.txt", 2, AT)
    shown = Printed("a shell", "pasted/zk.txt", 5, None, "get /brokers/topics/clicks")
    facts = Facts(True, "2.8.2", refusals=[refused], pasted=["kafka-topics --describe"])
    facts.printed = [replace(STALE, printed=printed)]
    facts.shown_without = [ShownWithout("clicks", 1, None, shown)]
    coverage = checked()
    found = {f.kind: f for f in judge(facts, coverage)}
    assert found["topic_id.refused"].subject == {"topic": "orders", "broker": 3, "partitions": [0, 1]}
    assert found["topic_id.refused"].evidence == ("broker-3:logs/state-change.log:17",)
    assert "kafka-topics --describe printed TopicId " + NEW + " (taken at 2024-03-12 09:00:00 UTC" in (
        found["topic_id.mismatch"].summary
    )
    assert found["topic_id.missing"].subject == {"topic": "clicks"}
    assert "taken at a time not known" in found["topic_id.missing"].summary
    assert "the topic ids a pasted kafka-topics --describe printed" in coverage[CHECK].used
