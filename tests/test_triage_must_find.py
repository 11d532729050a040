"""Findings no stock scenario provokes, each on a small story of its own where triage must find it (and
nothing the truth lacks): a deletion dropped by delete.topic.enable=false, a topic created again under
a deleted name, a controller that moves three times in a few minutes, a reassignment still copying at
the capture that holds a queued deletion, an unclean election whose old leader truncates committed
records when it returns, and a controller that stands still (a pause) or is cut off (a network
partition) past its session, then truncates what it appended alone."""

from __future__ import annotations

import pytest
from stories import MUST_FIND, Stories
from truth_facts import check


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(MUST_FIND))
def test_triage_finds_what_only_this_story_provokes(stories: Stories, name: str) -> None:
    findings = check(stories.triage(name), stories.truth(name))
    assert set(MUST_FIND[name][1]) <= {f.kind for f in findings}
