"""The judges on the facts Spark gave, kept (tests/golden/facts/, held equal to Spark's by
tests/test_golden.py), without Spark: every analysis's findings and coverage of each sample word for word
as its golden triage, and of each story fact by fact as its simulated truth."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import samples
from stories import MUST_FIND, Stories
from test_golden import GOLDEN, STORIES, facts_file
from truth_facts import judged_as_true

from workbench.analysis.facts_json import given
from workbench.analysis.findings import Coverage, Finding
from workbench.analysis.triage import judged


def _judged(name: str) -> tuple[list[Finding], Coverage]:
    held, facts = given(json.loads(facts_file(name).read_text(encoding="utf-8")))
    return judged(held, facts)


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, sort_keys=True, default=str))


@pytest.mark.parametrize("name", samples("manifest.json"))
def test_the_judges_give_each_samples_golden_findings(name: str) -> None:
    found, coverage = _judged(name)
    golden = json.loads((GOLDEN / f"{name}.json").read_text(encoding="utf-8"))
    assert _plain([f.as_dict() for f in found]) == golden["findings"]
    assert _plain(coverage.as_dict()) == {k: golden["coverage"][k] for k in coverage}


@pytest.fixture(scope="module")
def truths(tmp_path_factory: pytest.TempPathFactory) -> Stories:
    """The stories, simulated (no Spark: only their truth is read)."""
    return Stories(tmp_path_factory.mktemp("stories"), None)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", STORIES)
def test_the_judges_give_each_storys_truth(truths: Stories, name: str) -> None:
    found, coverage = _judged(name)
    judged_as_true(found, coverage, truths.truth(name))
    must = MUST_FIND.get(name, (None, ()))[1]
    assert set(must) <= {f.kind for f in found}
