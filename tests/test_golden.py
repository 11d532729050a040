"""Triage of every sample against its golden file (tests/golden/<sample>.json): the findings word for word,
with their evidence, the coverage and the bad records. A change that alters what a user reads shows here;
when it is meant, write the files again with WORKBENCH_WRITE_GOLDEN=1 and review their diff."""

from __future__ import annotations

import json
import os
from collections.abc import Callable

import pytest
from conftest import REPO, samples

from workbench.analysis.triage import Triage

GOLDEN = REPO / "tests" / "golden"


@pytest.mark.slow
@pytest.mark.parametrize("name", samples("manifest.json"))
def test_triage_of_each_sample_is_its_golden_file(triaged: Callable[[str], Triage], name: str) -> None:
    got = json.loads(json.dumps(triaged(name).as_dict(), sort_keys=True, default=str))
    golden = GOLDEN / f"{name}.json"
    if os.environ.get("WORKBENCH_WRITE_GOLDEN") == "1":
        golden.write_text(json.dumps(got, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    assert golden.is_file(), f"{golden} is missing: write it with WORKBENCH_WRITE_GOLDEN=1"
    assert got == json.loads(golden.read_text(encoding="utf-8"))
