"""What-ifs on the samples, checked against their truth: the topics a delete regex chooses (as
TopicCommand's IncludeList reads it), the partitions left without a leader when brokers stop, the topic
ids a pre-2.8 tool would wipe; nothing is run."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from conftest import REPO

from workbench.cli import main
from workbench.frames import Bundle
from workbench.model.whatif import (
    delete_would_mark,
    ids_an_old_tool_would_wipe,
    include_list_regex,
    offline_if_stopped,
)

MISMATCH = REPO / "sample_data" / "topicid-mismatch-2.8"
STUCK = REPO / "sample_data" / "deletion-stuck-2.8"


def test_include_list_reads_the_pattern_as_topic_command_does() -> None:
    assert include_list_regex(" 'orders, topic-.*' ") == "orders|topic-.*"


def test_a_delete_regex_chooses_whole_names_only(sample: Callable[[str], Bundle]) -> None:
    bundle = sample(MISMATCH.name)
    truth = json.loads((MISMATCH / "truth.json").read_text())

    def chosen(pattern: str) -> list[str]:
        return [r.topic for r in delete_would_mark(bundle, pattern).collect()]  # topics: a handful

    assert chosen("topic-.*") == sorted(t for t in truth["topics"] if t.startswith("topic-"))
    assert chosen("orders,topic-0") == ["orders", "topic-0"]
    assert chosen("topic") == [] and chosen("order") == []  # a whole-name match, not a search
    stuck = delete_would_mark(sample(STUCK.name), ".*old").collect()
    assert [(r.topic, r.already_marked, r.internal) for r in stuck] == [("clickstream-old", True, False)]


def test_stopping_brokers_leaves_exactly_the_partitions_without_another_live_isr_member(
    sample: Callable[[str], Bundle],
) -> None:
    """deletion-stuck: broker 3 is down, the ISRs hold 1 and 2; stopping 1 leaves 2 to lead everything,
    stopping 1 and 2 leaves every partition (but the topic being deleted) without a leader."""
    truth = json.loads((STUCK / "truth.json").read_text())
    bundle = sample(STUCK.name)
    (dead,) = [f["broker"] for f in truth["broker_failures"]]
    brokers = json.loads((STUCK / "manifest.json").read_text())["brokers"]
    alive = sorted(b for b in brokers if b != dead)
    kept = sum(t["partitions"] for name, t in truth["topics"].items() if name not in truth["deletions"])
    assert offline_if_stopped(bundle, alive[:1]).count() == 0
    assert offline_if_stopped(bundle, alive).count() == kept > 0


def test_an_old_tool_would_wipe_the_ids_zookeeper_holds(sample: Callable[[str], Bundle]) -> None:
    truth = json.loads((MISMATCH / "truth.json").read_text())
    now = {t: x["topic_id"] for t, x in truth["topics"].items()}
    for change in truth["topic_id_changes"]:
        now[change["topic"]] = change["to"]
    rows = ids_an_old_tool_would_wipe(sample(MISMATCH.name)).collect()
    assert {r.topic: r.topic_id for r in rows} == {t: i for t, i in now.items() if i is not None}
    failover = sample("controller-failover-2.5")  # Kafka 2.5: no topic ids to lose
    assert ids_an_old_tool_would_wipe(failover).count() == 0


def test_the_cli_says_what_a_change_would_touch(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["whatif", str(STUCK), "--quiet", "--delete", "clickstream-.*"]) == 0
    assert "topic=clickstream-old" in capsys.readouterr().out
    assert main(["whatif", str(STUCK), "--quiet", "--stop", "1,2"]) == 0
    out = capsys.readouterr().out
    assert "18 partitions left without a leader" in out and "(nothing was run)" in out
