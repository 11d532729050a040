"""The judges on the facts Spark gave, kept (tests/golden/facts/, held equal to Spark's by
tests/test_golden.py), without Spark: every analysis's findings and coverage of each sample word for word
as its golden triage, of each story fact by fact as its simulated truth, and of each logs-only twin as the
truth's facts the logs show (test_logs_alone holds the twins' triage to the same)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest
from conftest import SAMPLE_DATA, samples
from stories import MUST_FIND, Stories
from test_golden import GOLDEN, STORIES, TWINNED, facts_file
from truth_facts import BY_NAME, judged_as_true, key, leader_outages_hold

from workbench.analysis.facts_json import given
from workbench.analysis.findings import Coverage, Finding
from workbench.analysis.triage import judged


def _judged(name: str, logs_only: bool = False) -> tuple[list[Finding], Coverage]:
    held, facts = given(json.loads(facts_file(name, logs_only).read_text(encoding="utf-8")))
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


@pytest.mark.parametrize("name", TWINNED)
def test_the_judges_give_each_logs_only_twin_the_facts_its_logs_show(truths: Stories, name: str) -> None:
    truth = truths.truth(name) if "@" in name else json.loads((SAMPLE_DATA / name / "truth.json").read_text())
    found, coverage = _judged(name, logs_only=True)
    want = Counter(key(kind, fact) for kind, facts in truth["logs_findings"].items() for fact in facts)
    got = Counter(key(f.kind, f.subject) for f in found if f.kind in BY_NAME)
    assert got - want == Counter(), f"findings without a truth fact: {sorted(got - want, key=str)}"
    assert want - got == Counter(), f"truth facts without their finding: {sorted(want - got, key=str)}"
    assert all(f.evidence for f in found)
    leader_outages_hold(found, truth)
    assert all(c.status != "done" for c in coverage.values() if c.missing), coverage
