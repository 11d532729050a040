"""What must be put right before a broker starts again (`workbench/hazards.py`): one list, made from the
findings, that triage's next steps say and the repair plan's scripts check (tests/test_remediation.py and
tests/test_replay.py run those). Plain Python over a story's golden facts: no Spark."""

from __future__ import annotations

import json

from test_golden import facts_file

from workbench.actions import ACTIONS, action, next_steps
from workbench.analysis.facts_json import given
from workbench.analysis.findings import Finding
from workbench.analysis.registry import ANALYSES, kinds
from workbench.analysis.triage import judged
from workbench.hazards import KINDS, analyses, hazards, of_broker

DENIED = "flapping+controller-hang+controller-hang-woke-first+leader-pause+controller-hang-back-before-read"


def _denied() -> list[Finding]:
    """The 2.8.2 chain ending in deletion-denied: broker 4 could not remove a deleted topic's '-delete'
    dirs (AccessDeniedException), its only log dir failed and it halted."""
    found, _ = judged(*given(json.loads(facts_file(f"{DENIED}+deletion-denied@2.8.2").read_text())))
    return found


def test_a_dir_its_broker_could_not_remove_holds_its_start_back_and_the_next_steps_say_so_first() -> None:
    found = _denied()
    (lingering,) = [f for f in found if f.kind == "deletion.lingering_dir"]
    held = hazards(found)
    assert {(h.broker, h.kind) for h in held} == {(4, "deletion.lingering_dir"), (4, "log_dir.offline")}
    assert of_broker(held, 3) == [] and of_broker(held, 4) == held
    (dirs,) = [h for h in held if h.kind == "deletion.lingering_dir"]
    topic = lingering.subject["topic"]
    assert dirs.owned == tuple(f"{topic}-{p}.*-delete" for p in lingering.subject["partitions"])
    assert dirs.evidence == lingering.evidence
    steps = {f.kind: asked for f, asked in next_steps(found)}
    assert steps["deletion.lingering_dir"].startswith(
        f"Before broker 4 starts again, give its user back its '-delete' dirs of {topic}"
    )
    assert steps["log_dir.offline"].startswith("Before broker 4 starts again, repair its failed log dir")
    assert "OfflineLogDirectoryCount" in steps["log_dir.offline"]


def test_a_dir_merely_past_its_delay_holds_nothing_back() -> None:
    """A '-delete' dir the broker stopped before removing (a warning) goes when it starts: no hazard, and
    the step stays the kind's."""
    late = Finding(
        "deletion.lingering_dir", "warning", {"topic": "t", "broker": 2, "partitions": [0]}, "late"
    )
    assert hazards([late]) == [] and action(late) == ACTIONS["deletion.lingering_dir"]


def test_every_hazard_kind_is_emitted_and_the_plan_runs_the_analyses_that_emit_them() -> None:
    assert set(KINDS) <= set(kinds())
    emitting = {a.name for a in ANALYSES for k in a.kinds if k.name in KINDS}
    assert set(analyses()) == emitting and emitting
