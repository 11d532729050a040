"""Triage of every sample against its golden file (tests/golden/<sample>.json): the findings word for word,
with their evidence, the coverage and the bad records. And the facts each analysis asked of Spark, of every
sample and of every story triaged (tests/golden/facts/<bundle>.json): what the judges are tested on without
Spark (tests/test_judges.py). A change that alters what a user reads, or what an analysis asks, shows here;
when it is meant, write the files again with `make golden` (WORKBENCH_WRITE_GOLDEN=1) and review their
diff."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, samples
from stories import FRESH, HEALTH, MUST_FIND, Stories

from workbench.analysis.facts_json import kept
from workbench.analysis.triage import Triage

GOLDEN = REPO / "tests" / "golden"
FACTS = GOLDEN / "facts"
# every story a test triages, and every bundle whose logs-only twin a test triages (test_logs_alone): their
# golden facts cost no triage of their own
STORIES = sorted({*FRESH, *MUST_FIND, *HEALTH})
TWINNED = [*samples(), *sorted(FRESH), *sorted(MUST_FIND)]


def facts_file(name: str, logs_only: bool = False) -> Path:
    """A sample's or story's golden facts, or its logs-only twin's ('@', '#' and '+' kept out of the file's
    name)."""
    file = f"{name.replace('@', '-').replace('#', '-').replace('+', '_')}.json"
    return FACTS / "logs-only" / file if logs_only else FACTS / file


def _same_as_golden(golden: Path, got: Any) -> None:
    got = json.loads(json.dumps(got, sort_keys=True, default=str))
    if os.environ.get("WORKBENCH_WRITE_GOLDEN") == "1":
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    assert golden.is_file(), f"{golden} is missing: write it with `make golden`"
    assert got == json.loads(golden.read_text(encoding="utf-8"))


@pytest.mark.slow
@pytest.mark.parametrize("name", samples("manifest.json"))
def test_triage_of_each_sample_is_its_golden_file(triaged: Callable[[str], Triage], name: str) -> None:
    _same_as_golden(GOLDEN / f"{name}.json", triaged(name).as_dict())


def _facts(t: Triage) -> dict[str, Any]:
    assert t.held is not None
    return kept(t.held, t.facts)


@pytest.mark.slow
@pytest.mark.parametrize("name", samples("manifest.json"))
def test_the_facts_of_each_sample_are_its_golden_facts(triaged: Callable[[str], Triage], name: str) -> None:
    _same_as_golden(facts_file(name), _facts(triaged(name)))


@pytest.mark.slow
@pytest.mark.parametrize("name", STORIES)
def test_the_facts_of_each_story_are_its_golden_facts(stories: Stories, name: str) -> None:
    _same_as_golden(facts_file(name), _facts(stories.triage(name)))


@pytest.mark.slow
@pytest.mark.parametrize("name", TWINNED)
def test_the_facts_of_each_logs_only_twin_are_golden(twin: Callable[[str], Triage], name: str) -> None:
    _same_as_golden(facts_file(name, logs_only=True), _facts(twin(name)))
