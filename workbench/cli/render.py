"""What the commands print, as text, in one place. Triage's JSON is its `Triage.as_dict`; the repair
plan's summary and PLAN.md are `remediation`'s, as the report and the notebooks show them too."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from workbench.actions import next_steps, priority
from workbench.analysis.causes import chains, in_brief
from workbench.analysis.contract import Need
from workbench.analysis.findings import SEVERITIES, Status
from workbench.analysis.leaderless import nobody_serves, unserved_when_lines_end

if TYPE_CHECKING:
    from collections.abc import Iterator

    from pyspark.sql import Row

    from workbench.analysis.findings import Finding
    from workbench.analysis.triage import Triage
    from workbench.model.skew import Skew


def summary(s: dict[str, Any]) -> str:
    """`workbench load`'s summary (`model.summary.load_summary`)."""
    out = [f"bundle        {s['bundle']}"]
    if s["cluster"] or s["kafka_version"]:
        out.append(f"cluster       {s['cluster'] or '?'} (Kafka {s['kafka_version'] or '?'})")
    out += [
        f"brokers       {', '.join(map(str, s['brokers'])) or 'none found'}",
        f"time span     {s['first_event'] or '-'}  ..  {s['last_event'] or '-'}",
        f"evidence      {s['log_files']} log files, {s['log_dirs']} log dirs",
        "",
        f"{'DataFrame':<22}{'rows':>10}",
        *(f"{name:<22}{n:>10}" for name, n in s["rows"].items()),
    ]
    t = s["events_typed"]
    out += [
        "",
        f"log events    {t['curated']} typed by the catalog, {t['from_source']} by Kafka's source only, "
        f"{t['untyped']} untyped",
    ]
    for r in t["untyped_by_logger"]:
        why = f": {r['why']}" if r["why"] else " (not expected: a wording the catalog lacks?)"
        out.append(f"{r['count']:>8}  untyped from {r['logger'] or '(no logger)'}{why}")
    if s["files_not_read"]:
        out += ["", "files not read"]
        out += [f"  {n['file']}: {n['why']}" for n in s["files_not_read"]]
    if s["bad_records_by_reason"]:
        out += ["", "bad records by reason"]
        out += [f"{r['count']:>8}  {r['source']}: {r['reason']}" for r in s["bad_records_by_reason"]]
    return "\n".join(out)


CHAINS = "What led to what (root first; each finding in full below)"
NEXT = "Next steps (root causes first; the report's action items)"


def now(t: Triage) -> str:
    """The first thing the on-call asks: is anything down right now (nothing said where none is found).
    What the brokers' lines alone leave unserved is of when they end, and said so: not what is down now;
    where the bundle holds ZooKeeper's tree, its findings say what the tree shows of them at the capture."""
    n = nobody_serves(t.findings)
    ended, lines_end = unserved_when_lines_end(t.findings)
    check = t.coverage.get("leaderless")
    partial = check is None or check.status is not Status.DONE  # the evidence shows some outages only
    floor = "at least " if partial else ""
    said = []
    if n:
        said.append(
            f"Now (at the capture): nobody serves {floor}{n} partition(s): no producer or consumer can use "
            "them."
        )
    if ended:
        tree = t.held is not None and t.held.zk_state
        told = (
            "ZooKeeper's tree at the capture tells (each finding says what it shows)"
            if tree
            else "the lines do not tell (ZooKeeper's tree does: `workbench capture zk`)"
        )
        said.append(
            f"When the brokers' lines end ({lines_end}): nobody served {floor}{ended} partition(s); whether "
            f"anyone serves them now {told}."
        )
    if not said:
        return ""
    return " ".join(said) + (
        " Each outage is a partition.offline or partition.no_acting_leader finding "
        f"below{' (the evidence is partial: see coverage, leaderless)' if partial else ''}."
    )


NOT_READ = "Files in the bundle no reader could take (their evidence is not in what follows)"
NOT_TO_SHARE = "Do not share this bundle as it is: it holds credentials in clear"
REDACT_WITH = (
    "Made by `workbench capture zk-files` (a ZooKeeper dataDir) and `workbench capture broker "
    "--server-properties`, the same files are redacted."
)


def by_severity(t: Triage) -> Iterator[tuple[str, list[Finding]]]:
    """Triage's findings grouped by severity, most severe first; a severity with none is left out."""
    for sev in SEVERITIES:
        group = [f for f in t.findings if f.severity == sev]
        if group:
            yield sev, group


def triage_text(t: Triage) -> str:
    """`workbench triage`: findings by severity, each with the evidence to open, then coverage; last, what
    to do next (the report's action items)."""
    lines = [f"Triage of {t.bundle}", ""]
    if t.in_clear:
        lines += [f"{NOT_TO_SHARE}:", *[f"  {c.said()}" for c in t.in_clear], f"  {REDACT_WITH}", ""]
    if t.not_read:
        lines += [f"{NOT_READ}:", *[f"  {n.file}: {n.why}" for n in t.not_read], ""]
    if now(t):
        lines += [now(t), ""]
    told = [f"{'  ' * (depth + 1)}{'-> ' if depth else ''}{in_brief(f)}{f': {why}' if why else ''}"
            for depth, f, why in chains(t.findings)]  # fmt: skip
    if told:
        lines += [CHAINS, *told, ""]
    for sev, group in by_severity(t):
        lines.append(f"{sev.upper()} ({len(group)})")
        for f in group:
            lines.append(f"  [{f.kind}] {f.summary}")
            lines += [f"      {ref}" for ref in f.evidence]
        lines.append("")
    if not t.findings:
        lines += ["No findings (see coverage for what could not be checked).", ""]
    lines.append("Coverage")
    width = max((len(name) for name in t.coverage), default=0) + 2  # a name never runs into its status
    for name, c in sorted(t.coverage.items()):
        missing = f": {'; '.join(c.missing)}" if c.status is Status.NOT_APPLICABLE else ""
        missing = missing or (f": missing {'; '.join(c.missing)}" if c.missing else "")  # evidence lacking
        pasted = [u for u in c.used if "pasted" in u and u != Need.PASTED.value]  # what stood in
        instead = f"; read from pastes instead: {'; '.join(pasted)}" if pasted else ""
        lines.append(f"  {name:<{width}}{c.status}{missing}{instead}")
    lines += ["", f"Bad records: {t.bad_records}"]
    lines += [f"Files not read: {len(t.not_read)} (named at the top)"] if t.not_read else []
    steps = next_steps(t.findings)
    if steps:
        lines += ["", NEXT, *[f"  {i}. [{priority(f)}, {f.kind}] {a}" for i, (f, a) in enumerate(steps, 1)]]
    return "\n".join(lines)


def triage_markdown(t: Triage) -> str:
    """`workbench triage --format markdown`: the same, for a ticket or a postmortem."""
    lines = [f"# Triage of `{t.bundle}`", ""]
    if t.in_clear:
        lines += [
            f"> **{NOT_TO_SHARE}:**",
            *[f"> - `{c.said()}`" for c in t.in_clear],
            f">\n> {REDACT_WITH}",
            "",
        ]
    if t.not_read:
        lines += [f"> **{NOT_READ}:**", *[f"> - `{n.file}`: {n.why}" for n in t.not_read], ""]
    if now(t):
        lines += [f"**{now(t)}**", ""]
    told = [f"{'  ' * depth}- {'→ ' if depth else ''}**{in_brief(f)}**{f': {why}' if why else ''}"
            for depth, f, why in chains(t.findings)]  # fmt: skip
    if told:
        lines += [f"## {CHAINS}", "", *told, ""]
    for sev, group in by_severity(t):
        lines += [f"## {sev.capitalize()} ({len(group)})", ""]
        for f in group:
            lines.append(f"- **{f.kind}**: {f.summary}")
            lines += [f"  - `{ref}`" for ref in f.evidence]
        lines.append("")
    lines += ["## Coverage", "", "| check | status | missing, or why not applicable |", "|---|---|---|"]
    for name, c in sorted(t.coverage.items()):
        lines.append(f"| {name} | {c.status} | {'; '.join(c.missing)} |")
    lines += ["", f"Bad records: {t.bad_records}", ""]
    lines += [f"Files not read: {len(t.not_read)} (named at the top)", ""] if t.not_read else []
    steps = next_steps(t.findings)
    if steps:
        lines += [
            f"## {NEXT}",
            "",
            *[f"{i}. **{priority(f)}** ({f.kind}): {a}" for i, (f, a) in enumerate(steps, 1)],
            "",
        ]
    return "\n".join(lines)


def skew_table(skews: Iterable[Skew]) -> str:
    """Each broker's clock against ZooKeeper's, with its bounds and why an estimate is not applied."""
    out = ["Clock skew (a broker's clock minus ZooKeeper's, ms)"]
    for s in skews:
        bounds = f"{s.lower_ms if s.lower_ms is not None else '-inf'} .. "
        bounds += f"{s.upper_ms if s.upper_ms is not None else '+inf'}"
        shown = f"{s.estimate_ms:+d}" if s.estimate_ms is not None else "not applied"
        out.append(f"  broker {s.broker}: {shown} (bounds {bounds}, {s.pairs} pairs): {s.why}")
    return "\n".join(out) + "\n"


def timeline_row(r: Row) -> str:
    """One timeline row: time on ZooKeeper's clock, who, kind, partition, detail and the ref to open."""
    who = "zk" if r.source == "zookeeper" else f"b{r.broker_id}"
    tp = f"{r.topic}-{r.partition}" if r.partition is not None else (r.topic or "")
    return f"{r.time:%Y-%m-%d %H:%M:%S.%f}"[:-3] + f"  {who:<4} {r.kind:<34} {tp:<24} {r.detail}  [{r.ref}]"


def fields(r: Row) -> str:
    """A row as name=value pairs (`workbench whatif`)."""
    return "  ".join(f"{k}={v}" for k, v in r.asDict().items())
