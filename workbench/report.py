"""The postmortem report: the template (`report_template.ipynb`, shipped with the package, which
`notebooks/00-postmortem-template.ipynb` links to) run on a bundle with papermill and rendered to one
self-contained HTML file (`workbench report BUNDLE --out DIR`).

The template only calls what is here and in the analyses: the overview, the coverage table and the
standard plots, each drawn only where the evidence for it exists.
"""

from __future__ import annotations

from datetime import datetime, timezone
from importlib.resources import files
from pathlib import Path
from typing import TYPE_CHECKING

import pandas as pd

from workbench.analysis.registry import ANALYSES
from workbench.model.views import views

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from workbench.analysis.triage import Triage
    from workbench.frames import Bundle

TEMPLATE = Path(str(files("workbench").joinpath("report_template.ipynb")))  # package data
FINDINGS = "findings.json"  # beside the page: the triage the report was made from
PLAN_DIR = "repair-plan"  # beside the page, where a repair applies: PLAN.md and its scripts, linked
# A report is pasted into a postmortem page: long cells wrap rather than widen a table past the page,
# and figures shrink to the page's width (tests/test_report.py checks the layout in Chromium).
PAGE_STYLE = (
    ".jp-RenderedHTMLCommon table { max-width: 100%; table-layout: auto; }\n"
    ".jp-RenderedHTMLCommon td, .jp-RenderedHTMLCommon th { white-space: pre-wrap; overflow-wrap: anywhere;"
    " max-width: 48em; }\n"
    ".jp-RenderedImage img, .jp-RenderedHTMLCommon img { max-width: 100%; height: auto; }\n"
)


def overview(bundle: Bundle) -> str:
    """The report's opening lines (Markdown): the bundle, the cluster, the capture and the evidence held."""
    ev = views(bundle).evidence
    m = bundle.manifest
    captured = (
        datetime.fromtimestamp(ev.captured_ms / 1000, timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
        if ev.captured_ms is not None
        else "unknown (no captured_at in the manifest)"
    )

    def brokers(ids: frozenset[int]) -> str:
        return ", ".join(map(str, sorted(ids))) or "none"

    zk = "txn logs and state" if ev.zk_history else ("state only" if ev.zk_state else "none")
    return "\n".join(
        [
            f"# Postmortem: cluster {m.get('cluster') or m.get('cluster_id') or 'unnamed'}",
            "",
            f"- Bundle: `{bundle.evidence.origin}`",
            f"- Kafka version: {ev.kafka_version or 'unknown (no kafka_version in the manifest)'}",
            f"- Captured: {captured}",
            f"- Brokers: {brokers(ev.brokers)}; logs from {brokers(ev.with_logs)}; data dirs from "
            f"{brokers(ev.with_datadirs)}",
            f"- ZooKeeper: {zk}",
        ]
    )


def coverage_table(result: Triage) -> pd.DataFrame:
    """Each check triage ran: its status, what it used and what it lacked."""
    return pd.DataFrame(
        [
            {"check": name, "status": c.status, "used": ", ".join(c.used), "missing": "; ".join(c.missing)}
            for name, c in sorted(result.coverage.items())
        ],
        columns=["check", "status", "used", "missing"],
    )


def standard_plots(bundle: Bundle, result: Triage) -> list[tuple[str, Figure | str]]:
    """The standard figures for this bundle, titled, each only where its evidence exists, in the order
    of the analyses (`registry.ANALYSES`) that name them. A plot that could not be drawn comes with the
    reason instead of its Figure, so the report says so rather than skip it."""
    from workbench.plots.standard import Drawing

    drawing = Drawing(bundle, result)
    out: list[tuple[str, Figure | str]] = []
    for analysis in ANALYSES:
        draw = analysis.figures()
        if draw is not None:
            out += draw(drawing)
    return out


def write(bundle: str | Path, out: str | Path, template: Path = TEMPLATE) -> Path:
    """Run the template on `bundle` with papermill into `out`, render it to HTML (code hidden, images
    embedded) and return the HTML's path; the executed notebook is kept beside it, the triage as
    `workbench triage --format json` prints it (findings.json, for a ticket or a diff) from one last
    cell the page hides, and the repair plan where one applies (repair-plan/, which the page links)."""
    try:
        import nbformat
        import papermill
    except ImportError as e:
        raise _without_extra(e) from e

    if not template.is_file():
        raise FileNotFoundError(
            f"{template}: the postmortem template is not there (it ships with the package)"
        )
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    executed = out / "postmortem.ipynb"
    notebook = nbformat.read(template, as_version=4)
    saved = f"with open({str((out / FINDINGS).resolve())!r}, 'w') as f:\n    f.write(result.json())"
    notebook.cells.append(nbformat.v4.new_code_cell(saved, metadata={"tags": ["template"]}))
    papermill.execute_notebook(
        notebook,
        str(executed),
        parameters={"bundle_path": str(Path(bundle).resolve()), "plan_out": str((out / PLAN_DIR).resolve())},
        cwd=str(template.parent),
        progress_bar=False,
        kernel_name="python3",
    )
    return html(executed, out / "postmortem.html")


def html(executed: Path, out: Path) -> Path:
    """An executed postmortem notebook as one HTML page (code and template cells hidden, images embedded)."""
    try:
        import nbformat
        from nbconvert import HTMLExporter
        from nbconvert.preprocessors import TagRemovePreprocessor
    except ImportError as e:
        raise _without_extra(e) from e

    exporter = HTMLExporter(
        template_name="lab", exclude_input=True, exclude_input_prompt=True, exclude_output_prompt=True
    )
    exporter.register_preprocessor(TagRemovePreprocessor(remove_cell_tags={"template"}), enabled=True)
    body, _ = exporter.from_notebook_node(nbformat.read(executed, as_version=4))
    out.write_text(body.replace("</head>", f"<style>{PAGE_STYLE}</style>\n</head>", 1), encoding="utf-8")
    return out


def _without_extra(e: ImportError) -> RuntimeError:
    return RuntimeError(
        f"workbench report needs the notebooks extra ({e.name} is missing): "
        "pip install 'kafka-forensic-workbench[notebooks]'"
    )
