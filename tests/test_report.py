"""The postmortem report: the template notebook executed with papermill on a bundle other than the one
it is committed with, rendered to HTML with every plot and the findings table in it."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import nbformat
import pytest
from conftest import REPO, STUCK

from workbench import postmortem, report
from workbench.analysis.findings import ranges
from workbench.analysis.triage import Triage
from workbench.cli import main
from workbench.frames import Bundle

STALE = REPO / "sample_data" / "topicid-mismatch-2.8"


@pytest.fixture(scope="module")
def stuck_report(cluster_report: Path) -> Path:
    """The report of a stuck deletion, made once for the suite on a standalone cluster (`cluster_report`)."""
    return cluster_report


@pytest.fixture(scope="module")
def stale_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's report: the topic-id incident, with its repair plan's tables, the widest of all. The
    template is committed executed on it (its default bundle_path), and nbval runs it again and compares
    every output (make test's notebooks step): its page is rendered from those outputs, so that the suite
    runs papermill once (`stuck_report`)."""
    (parameters,) = [
        c for c in nbformat.read(report.TEMPLATE, 4).cells if "parameters" in c.metadata.get("tags", [])
    ]
    assert f'bundle_path = "../sample_data/{STALE.name}"' in parameters.source
    return report.html(report.TEMPLATE, tmp_path_factory.mktemp("report") / "postmortem.html")


@pytest.mark.slow
def test_report_of_a_stuck_deletion_reads_as_a_postmortem(stuck_report: Path) -> None:
    out = stuck_report
    page = out.read_text(encoding="utf-8")
    assert out.name == "postmortem.html" and (out.parent / "postmortem.ipynb").is_file()
    assert json.loads((out.parent / report.FINDINGS).read_text())["findings"]  # the triage it was made from
    assert f"<code>{STUCK}</code>" in page, "not run on the bundle asked for"
    assert "Kafka version: 2.8.2" in page
    assert "Postmortem template" not in page and "papermill" not in page  # no template instructions
    executed = nbformat.read(out.parent / "postmortem.ipynb", as_version=4)
    outputs = [o for c in executed.cells if c.cell_type == "code" for o in c.outputs]
    assert [o for o in outputs if o.output_type == "error" or o.get("name") == "stderr"] == []
    # a postmortem's sections, in a postmortem's order
    order = ["Summary", "Impact", "Detection", "Timeline", "Root-cause", "Repair", "Action-items", "Plots"]
    order += ["What-could-be-checked", "Findings"]
    at = [page.index(f'id="{name}"') for name in order]
    assert at == sorted(at)

    def section(name: str) -> str:
        i = order.index(name)
        return page[at[i] : at[i + 1]] if i + 1 < len(at) else page[at[i] :]

    truth = json.loads((STUCK / "truth.json").read_text())
    (topic,) = truth["deletions"]
    assert f"Deletion of {topic} is stuck" in section("Summary")
    root = section("Root-cause")
    assert "A deletion that does not finish" in root and "deletion.stuck" in root
    assert "TopicsIneligibleToDeleteCount" in section("Detection")
    assert "No repair the workbench plans applies" in section("Repair")
    assert not (out.parent / report.PLAN_DIR).exists()  # no plan: no folder beside the page
    actions = section("Action-items")
    assert "same broker.id" in actions and "<td>P1</td>" in actions and "<th>owner</th>" in actions
    # the timeline tells the incident in the moments the findings cite: zxids in hex, no floats or NaN
    timeline = section("Timeline")
    assert re.search(r"<td>0x[0-9a-f]+</td>", timeline) and "<td>deletion.stuck</td>" in timeline
    assert not re.search(r"<td>\d+\.0</td>|NaN", timeline)
    assert 0 < timeline.count("<tr") - 1 <= postmortem.STORY_ROWS
    # every standard plot, titled, each followed by its embedded image and nothing else
    plotted = section("Plots")
    titles = re.findall(r"<h3 id=[^>]*>([^<]+)", plotted)
    assert titles == [
        "Partition health",
        "Leadership at the start and at the capture",
        "Controller elections",
        f"Deletion of {topic}",
    ]
    sections = re.split(r"<h3 id=", plotted)[1:]
    assert all(len(re.findall(r'<img [^>]*src="data:image/png;base64,', s)) == 1 for s in sections)
    # the findings table, whole; coverage for every check
    findings = section("Findings")
    (count,) = re.findall(r"(\d+) finding\(s\)", findings)
    assert findings.count("<tr") == int(count) + 1 > 1  # a header row, then one per finding
    assert "deletion.stuck" in findings
    checks = section("What-could-be-checked")
    assert re.search(r"<td>deletion</td>\s*<td>done</td>", checks) and checks.count("<tr") >= 8


LAYOUT = """<script>
function timelineRows() {  // the rows of the first table after the Timeline heading
  const heading = document.getElementById("Timeline");
  const table = [...document.querySelectorAll("table")].find(
    t => heading.compareDocumentPosition(t) & Node.DOCUMENT_POSITION_FOLLOWING);
  return table ? table.querySelectorAll("tbody tr").length : -1;
}
window.addEventListener("load", () => {
  const widths = [...document.querySelectorAll("table")].map(t => Math.ceil(t.getBoundingClientRect().right));
  const images = [...document.images];
  const found = {
    viewport: document.documentElement.clientWidth,
    page: document.documentElement.scrollWidth,
    tables: widths.length,
    widest: Math.max(0, ...widths),
    images: images.length,
    broken: images.filter(i => !(i.complete && i.naturalWidth > 0)).length,
    timeline_rows: timelineRows(),
    cells_with_newline: [...document.querySelectorAll("td")].filter(
      td => td.textContent.includes("\\\\n")).length,
  };
  const out = document.createElement("pre");
  out.id = "layout-check";
  out.textContent = JSON.stringify(found);
  document.body.appendChild(out);
});
</script>"""


@pytest.mark.slow
@pytest.mark.parametrize("which", ["stuck_report", "stale_report"])
def test_the_report_fits_a_1400_px_browser_and_every_image_loads(
    which: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """Laid out by headless Chromium (Debian's `chromium`), as the page measures itself: no table reaches
    past a 1400-px viewport, the page does not scroll sideways, and every image decoded."""
    written: Path = request.getfixturevalue(which)
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is not installed: CI installs it (.ci/run)")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    page = tmp_path / "measured.html"
    page.write_text(written.read_text(encoding="utf-8").replace("</body>", LAYOUT + "</body>", 1))
    run = subprocess.run(
        [
            browser,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--window-size=1400,900",
            "--virtual-time-budget=20000",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    found = re.search(r'<pre id="layout-check">(.*?)</pre>', run.stdout)
    assert found, run.stderr[-2000:]
    layout = json.loads(found.group(1).replace("&quot;", '"'))
    assert layout["viewport"] == 1400 and layout["tables"] >= 3 and layout["images"] >= 4
    assert layout["broken"] == 0 and layout["cells_with_newline"] == 0
    assert 0 < layout["timeline_rows"] <= 20
    assert layout["widest"] <= layout["viewport"] and layout["page"] <= layout["viewport"]


def test_report_command_refuses_a_missing_bundle(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", str(tmp_path / "nothing"), "--out", str(tmp_path / "r")]) == 2
    assert "no such bundle" in capsys.readouterr().err and not (tmp_path / "r").exists()


@pytest.mark.slow
def test_plots_only_where_their_evidence_is(
    sample: Callable[[str], Bundle], triaged: Callable[[str], Triage]
) -> None:
    """A bundle without ZooKeeper's history gets no health or leadership plots, and no plot that would be
    empty; coverage says what was missing instead. Its controller chain is the one history's: the elected
    broker's line draws it, on that broker's clock."""
    bundle, result = sample("handmade-2.8"), triaged("handmade-2.8")
    drawn = report.standard_plots(bundle, result)
    titles = [title for title, _ in drawn]
    assert all(not isinstance(f, str) or f.startswith("not drawn: ") for _, f in drawn)
    assert "Partition health" not in titles
    chart = dict(drawn)["Controller elections"]
    assert not isinstance(chart, str) and chart.axes[0].get_title().endswith("(the elected brokers' clocks)")
    assert not [t for t in titles if t.startswith(("Writes to", "ISR sizes", "Leadership"))]
    deleted = {f.subject["topic"] for f in result.findings if f.kind == "deletion.completed"}
    assert deleted and {f"Deletion of {t}" for t in deleted} <= set(titles)
    table = report.coverage_table(result)
    assert (table.status != "done").any() and "ZooKeeper" in " ".join(table.missing)


def test_report_of_a_topic_id_mismatch_leads_with_the_partitions_nobody_served(stale_report: Path) -> None:
    """The headline is the outage (partitions whose ZooKeeper leader refused them), the repair is the
    plan's summary, and the plots are the topic's, drawn for this bundle."""
    page = stale_report.read_text(encoding="utf-8")
    truth = json.loads((STALE / "truth.json").read_text())
    impact = page[page.index('id="Impact"') : page.index('id="Detection"')]
    still = sorted(w["partition"] for w in truth["leaders_not_acting"] if w["to_ms"] is None)
    assert still and f"{len(still)} still at the capture: orders {ranges(still)}." in impact
    repair = page[page.index('id="Repair"') : page.index('id="Action-items"')]
    assert "workbench remediate BUNDLE --out repair-plan" in repair  # no folder given: how to write it
    # PLAN.md itself, under the report's headings: its steps, their expected times, the forecast
    assert re.search(r'<h4 id="Order[^>]*>', repair) and re.search(r'<h5 id="Partitions-without', repair)
    assert repair.count("Expected: its last") == 3 and "Run step(s) 3 in a maintenance window" in repair
    assert "<td>orders-2</td>" in repair
    plotted = page[page.index('id="Plots"') : page.index('id="What-could-be-checked"')]
    titles = re.findall(r"<h3 id=[^>]*>([^<]+)", plotted)
    assert {"Topic ids of orders", "Writes to /brokers/topics/orders", "ISR sizes of orders"} <= set(titles)
    assert "notebook 03" in plotted  # where these figures are read, not a second analysis of its own
