"""The postmortem report: the template notebook executed with papermill on a bundle other than the one
it is committed with, rendered to HTML with every plot and the findings table in it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import nbformat
import pytest
from conftest import REPO
from pyspark.sql import SparkSession

from workbench import report
from workbench.analysis.triage import triage
from workbench.cli import main
from workbench.frames import open_bundle

STUCK = REPO / "sample_data" / "deletion-stuck-2.8"


def test_report_of_a_stuck_deletion(tmp_path: Path) -> None:
    out = report.write(STUCK, tmp_path / "report")
    page = out.read_text(encoding="utf-8")
    assert out.name == "postmortem.html" and (tmp_path / "report" / "postmortem.ipynb").is_file()
    assert f"<code>{STUCK}</code>" in page, "not run on the bundle asked for"
    assert "Kafka version: 2.8.2" in page
    executed = nbformat.read(tmp_path / "report" / "postmortem.ipynb", as_version=4)
    outputs = [o for c in executed.cells if c.cell_type == "code" for o in c.outputs]
    assert [o for o in outputs if o.output_type == "error" or o.get("name") == "stderr"] == []
    # every standard plot, titled, each followed by its embedded image and nothing else
    titles = re.findall(r"<h3 id=[^>]*>([^<]+)", page)
    assert titles == [
        "Partition health",
        "Leadership at the start and at the capture",
        "Controller elections",
        "Deletion of clickstream-old",
    ]
    sections = re.split(r"<h3 id=", page)[1:]
    assert all(len(re.findall(r'<img [^>]*src="data:image/png;base64,', s)) == 1 for s in sections)
    # the findings table, whole, with the stuck deletion the sample holds; coverage for every check
    truth = json.loads((STUCK / "truth.json").read_text())
    (topic,) = truth["deletions"]
    findings = page[page.index('id="Findings"') : page.index('id="Timeline"')]
    (count,) = re.findall(r"(\d+) finding\(s\)", findings)
    assert findings.count("<tr") == int(count) + 1 > 1  # a header row, then one per finding
    assert "deletion.stuck" in findings and f"Deletion of {topic} is stuck" in findings
    checks = page[page.index('id="What-could-be-checked"') : page.index('id="Findings"')]
    assert re.search(r"<td>deletion</td>\s*<td>done</td>", checks) and checks.count("<tr") >= 8


def test_report_command_refuses_a_missing_bundle(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(tmp_path / "nothing"), "--out", str(tmp_path / "r")]) == 2
    assert "no such bundle" in capsys.readouterr().err and not (tmp_path / "r").exists()


def test_plots_only_where_their_evidence_is(spark: SparkSession) -> None:
    """A bundle without ZooKeeper's history gets no health, leadership or election plots, and no plot
    that would be empty; coverage says what was missing instead."""
    bundle = open_bundle(REPO / "sample_data" / "handmade-2.8", spark)
    result = triage(bundle)
    drawn = report.standard_plots(bundle, result)
    titles = [title for title, _ in drawn]
    assert all(not isinstance(f, str) or f.startswith("not drawn: ") for _, f in drawn)
    assert not {"Partition health", "Controller elections"} & set(titles)
    assert not [t for t in titles if t.startswith(("Writes to", "ISR sizes", "Leadership"))]
    deleted = {f.subject["topic"] for f in result.findings if f.kind == "deletion.completed"}
    assert deleted and {f"Deletion of {t}" for t in deleted} <= set(titles)
    table = report.coverage_table(result)
    assert (table.status != "done").any() and "ZooKeeper" in " ".join(table.missing)
