"""How long a broker took to restart, and what a repair step may take: measured from its own lines and
ZooKeeper's history, checked against the log files read line by line and the txn log read by ZooKeeper's
own format, and never a default passed off as a measure."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import nbformat
import pytest
from conftest import SAMPLE_DATA

from workbench import remediation, report
from workbench.analysis.findings import duration
from workbench.frames import Bundle, WithoutZooKeeper
from workbench.model.refs import Said
from workbench.model.restarts import Line, Restart, rejoined, restarts, restarts_in
from workbench.remediation.scripts import expected, wait_default
from workbench.zookeeper.files import Problem, read_txn_log
from workbench.zookeeper.txns import CREATES

MISMATCH = SAMPLE_DATA / "topicid-mismatch-2.8"
T0 = datetime(2024, 3, 12, 8)


def _line(broker: int, event: str, s: float, n: int) -> Line:
    return Line(broker, event, Said(T0 + timedelta(seconds=s), f"brokers/{broker}/logs/server.log", n))


def test_a_restart_is_a_start_with_the_stop_before_it() -> None:
    """Plain Python: a clean restart is timed from its first shutdown line (whichever Kafka logs first)
    to "shut down completed", then "starting" to "started"; a start after a crash has no stop; a stop
    with no start after it (the broker still down) is no restart; brokers' lines do not mix."""
    lines = [
        _line(1, "broker.starting", 0, 1),
        _line(1, "broker.started", 2.5, 9),  # its first start
        _line(2, "broker.starting", 3, 1),
        _line(1, "broker.shutting_down", 100, 20),
        _line(1, "controlled_shutdown.started", 100.1, 21),
        _line(2, "broker.started", 4, 7),
        _line(1, "broker.shut_down", 101.5, 30),
        _line(1, "broker.starting", 130, 31),
        _line(1, "broker.started", 134, 40),
        _line(2, "broker.starting", 200, 8),  # a crash: no shutdown line before it
        _line(2, "broker.started", 201, 15),
        _line(2, "broker.shutting_down", 300, 16),  # down at the capture
    ]
    found = restarts_in(lines)
    assert [(r.stop_ms, r.start_ms) for r in found[1]] == [(None, 2500), (1500, 4000)]
    assert found[1][1].stopping == lines[3].said and found[1][1].started == lines[8].said
    assert [(r.stop_ms, r.start_ms) for r in found[2]] == [(None, 1000), (None, 1000)]


def test_a_step_expects_what_was_measured_and_says_whose() -> None:
    """Plain Python: a broker's own last restart; another broker's where it has none, said so; with no
    restart in the evidence, only the script's own bound, read from the script."""
    stop = Restart(
        3,
        _line(3, "broker.shutting_down", 10, 5).said,
        _line(3, "broker.shut_down", 10.4, 9).said,
        _line(3, "broker.starting", 40, 10).said,
        _line(3, "broker.started", 52, 30).said,
    )
    plan = remediation.RepairPlan(bundle="b", manifest={}, restarts={3: [stop]})
    assert expected(plan, 3).startswith(
        "its last restart in the logs: stopped in 400 ms, started in 12.0 s "
        "(`broker-3:logs/server.log` lines 5-30)."
    )
    assert expected(plan, 1).startswith("none of its own is in its logs; broker 3's last restart in the logs")
    bound = re.search(r'WAIT_SECONDS:=(\d+)', (Path(remediation.__file__).parent.parent / "scripts" /
                                                 "repair-broker.sh").read_text())  # fmt: skip
    assert bound and wait_default() == int(bound.group(1))
    alone = remediation.RepairPlan(bundle="b", manifest={})
    assert expected(alone, 1) == (
        "no restart of a broker is in the evidence to measure one by; each wait of the script takes at "
        f"most `WAIT_SECONDS` ({bound.group(1)} s unless set)."
    )


def _stamp(line: str) -> datetime:
    return datetime.strptime(line[1:24], "%Y-%m-%d %H:%M:%S,%f")


def test_the_plan_expects_each_broker_s_last_restart_from_its_log_files(
    sample: Callable[[str], Bundle],
) -> None:
    """topicid-mismatch-2.8: brokers 3 and 1 were restarted (truth), broker 2 only started. Each step's
    expectation is the broker's last restart, timed here from its log file's text; its return to the
    ISRs from the txn log read in ZooKeeper's format: its registration's create to the last write of a
    partition's state giving it back a place in the ISR it had left."""
    bundle = sample(MISMATCH.name)
    plan = remediation.plan(bundle)
    text = plan.markdown()
    truth = json.loads((MISMATCH / "truth.json").read_text())
    assert sorted(r["broker"] for r in truth["broker_restarts"]) == [1, 3]
    for r in truth["broker_restarts"]:
        b = r["broker"]
        log = (MISMATCH / "brokers" / str(b) / "logs" / "server.log.2024-03-12-08").read_text().splitlines()
        first = next(i for i, x in enumerate(log) if f"[KafkaServer id={b}] shutting down" in x)
        done = next(i for i, x in enumerate(log) if "shut down completed" in x and i > first)
        starting = next(i for i, x in enumerate(log) if "] INFO starting (" in x and i > done)
        started = next(i for i, x in enumerate(log) if f"[KafkaServer id={b}] started" in x and i > done)
        stop = _stamp(log[done]) - _stamp(log[first])
        start = _stamp(log[started]) - _stamp(log[starting])
        assert not truth["clock_skew_ms"]  # the brokers' clocks are ZooKeeper's: truth's times are theirs
        assert _stamp(log[started]).replace(tzinfo=timezone.utc).timestamp() * 1000 == r["started_ms"]
        said = (
            f"stopped in {duration(int(stop.total_seconds() * 1000))}, started in "
            f"{duration(int(start.total_seconds() * 1000))} (`broker-{b}:logs/server.log.2024-03-12-08` "
            f"lines {first + 1}-{started + 1})"
        )
        assert any(
            line.startswith("   - Expected: its last restart") and said in line for line in text.splitlines()
        )
    assert "   - Expected: its last start in the logs took" in text  # broker 2: never restarted

    txns = [t for t in read_txn_log(MISMATCH / "zk" / "txnlog" / "log.1") if not isinstance(t, Problem)]
    flat = [(t.zxid, t.time, s) for t in txns for s in (t.ops or [t])]  # a multi's sub-ops share its zxid
    for b, back in rejoined(bundle).items():
        last = back[-1]
        assert last.since_zxid is not None and last.last_zxid is not None and last.from_txns
        made = max(
            z
            for z, _, s in flat
            if s.path == f"/brokers/ids/{b}" and s.type in CREATES and z <= last.since_zxid
        )
        assert made == last.since_zxid
        at = {z: t for z, t, _ in flat}
        assert last.after_ms == at[last.last_zxid] - at[last.since_zxid]  # ms, ZooKeeper's clock
        state = [s for z, _, s in flat if z == last.last_zxid and s.path and s.path.endswith("/state")]
        assert any(b in json.loads(s.data)["isr"] for s in state if s.data)
        said = f"back in the ISRs it had left {duration(last.after_ms)} after it registered"
        assert f"{said} (the last at `{last.ref}`;" in text
    assert sorted(restarts(bundle)) == [1, 2, 3]


@pytest.mark.parametrize("name", ["topicid-mismatch-2.8", "healthy-3.6", "controller-failover-2.5"])
def test_the_lines_time_a_return_to_the_isrs_as_zookeeper_does(
    sample: Callable[[str], Bundle], name: str
) -> None:
    """The same bundle without ZooKeeper: each restarted broker's return to the ISRs it had left is timed
    from its own "Registered broker" line to the first line printing the last partition's state with it
    in the ISR again. The samples' clocks are ZooKeeper's, so it is ZooKeeper's measure to the ms; each
    line cited prints that ISR, and the plan says the lines' clocks told it. A broker that never left an
    ISR has none (broker 2 of topicid-mismatch-2.8, only started)."""
    whole = sample(name)
    txns, lines = rejoined(whole), rejoined(WithoutZooKeeper(whole))
    assert txns and {b: [r.after_ms for r in rs] for b, rs in lines.items()} == {
        b: [r.after_ms for r in rs] for b, rs in txns.items()
    }
    for b, rs in lines.items():
        for r in rs:
            assert not r.from_txns and r.since_zxid is None and r.last_zxid is None
            m = re.fullmatch(r"broker-(\d+):(.+):(\d+)", r.ref)
            assert m, r.ref
            said = (SAMPLE_DATA / name / "brokers" / m.group(1) / m.group(2)).read_text().splitlines()
            printed = said[int(m.group(3)) - 1]
            assert re.search(rf"\b{b}\b", re.split("isr", printed, maxsplit=1, flags=re.I)[1]), printed
    plan = remediation.RepairPlan(bundle="b", manifest={}, rejoined=lines)
    b, rs = next(iter(lines.items()))
    assert f"(the last at `{rs[-1].ref}`, on the clocks of the brokers whose lines tell it;" in expected(
        plan, b
    )


def test_the_report_embeds_the_plan_and_links_its_files(sample: Callable[[str], Bundle]) -> None:
    """Plain Python over the sample's plan: the report's section names the plan's files, links PLAN.md
    where `workbench report` wrote it beside the page, and holds PLAN.md whole, its headings two levels
    down (its title is the section's); no plan: no repair applies."""
    plan = remediation.plan(sample(MISMATCH.name))
    section = remediation.in_report(plan, "repair-plan/PLAN.md")
    assert section.startswith(
        "The plan is written beside this page: [repair-plan/PLAN.md](repair-plan/PLAN.md)"
    )
    assert all(f"`{plan.script_name(n, s)}`" in section for n, s in enumerate(plan.steps, 1))
    body = plan.markdown().splitlines()[1:]
    assert section.splitlines()[2:] == [f"##{x}" if x.startswith("#") else x for x in body]
    assert "#### Order (one broker at a time" in section and "\n## " not in section
    assert "workbench remediate BUNDLE" in remediation.in_report(plan)
    assert remediation.in_report(None).startswith("No repair the workbench plans applies")


def test_the_report_s_repair_cell_writes_the_plan_beside_the_page(
    sample: Callable[[str], Bundle], tmp_path: Path
) -> None:
    """The template's own repair cell, run as `workbench report` runs it (plan_out: repair-plan/ beside
    the page): PLAN.md and the scripts are written there and the section links them relative to the page."""
    (cell,) = [c for c in nbformat.read(report.TEMPLATE, 4).cells if "plan.write(plan_out)" in c.source]
    root = SimpleNamespace(kind="topic_id.mismatch")
    ns: dict[str, Any] = {"remediation": remediation, "Path": Path, "Markdown": str}
    ns |= {"bundle": sample(MISMATCH.name), "groups": [SimpleNamespace(root=root)]}
    ns["plan_out"] = str(tmp_path / report.PLAN_DIR)
    exec(cell.source.replace("Markdown(", "shown = Markdown(", 1), ns)
    assert ns["shown"].startswith(f"The plan is written beside this page: [{report.PLAN_DIR}/PLAN.md](")
    written = sorted(p.name for p in (tmp_path / report.PLAN_DIR).iterdir())
    assert written == ["PLAN.md", *(ns["plan"].script_name(n, s) for n, s in enumerate(ns["plan"].steps, 1))]
