"""Findings no stock scenario provokes, each on a small story of its own where triage must find it (and
nothing the truth lacks): a deletion dropped by delete.topic.enable=false, a topic created again under
a deleted name, a controller that moves three times in a few minutes, a reassignment still copying at
the capture that holds a queued deletion, an unclean election whose old leader truncates committed
records when it returns, and a controller that stands still (a pause) or is cut off (a network
partition) past its session, then truncates what it appended alone."""

from __future__ import annotations

import pytest
from stories import MUST_FIND, Stories
from truth_facts import check, service_holds

from workbench.kafka import behaviour


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(MUST_FIND))
def test_triage_finds_what_only_this_story_provokes(stories: Stories, name: str) -> None:
    findings = check(stories.triage(name), stories.truth(name))
    service_holds(stories.bundle(name), stories.truth(name))
    assert set(MUST_FIND[name][1]) <= {f.kind for f in findings}


TRUNCATING = sorted(n for n, (_, kinds) in MUST_FIND.items() if "data_loss.truncation" in kinds)


@pytest.mark.slow
@pytest.mark.parametrize("name", TRUNCATING)
def test_the_records_a_truncation_dropped_are_counted_where_the_lines_give_the_log_end(
    stories: Stories, name: str
) -> None:
    """From 2.6 a follower logs its log end before its fetcher truncates: the records dropped are counted,
    exactly as many as the truth says; where no line gives it, no count is made up."""
    dropped: dict[tuple[str, int, int], list[int]] = {}
    for t in stories.truth(name)["truncations"]:
        dropped.setdefault((t["topic"], t["partition"], t["broker"]), []).append(t["dropped"])
    counted: dict[tuple[str, int, int], list[int | None]] = {}
    for f in stories.triage(name).of_kind("data_loss.truncation"):
        s = f.subject
        counted.setdefault((s["topic"], s["partition"], s["broker"]), []).append(s.get("records"))
    assert counted
    if behaviour.holds("follower_logs_its_log_end", MUST_FIND[name][0].version):
        assert {k: sorted(v) for k, v in counted.items()} == {k: sorted(dropped[k]) for k in counted}
    else:
        assert all(v is None for vs in counted.values() for v in vs)
