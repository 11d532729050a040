"""The `workbench` command: the same answers as the notebooks, without Jupyter."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.bundle import BundleError
from workbench.frames import Bundle, open_bundle

if TYPE_CHECKING:
    from workbench.progress import Progress


def load_summary(bundle: Bundle) -> dict[str, Any]:
    """Row counts of every DataFrame, bad records by source and reason, brokers and time span."""
    from pyspark.sql import functions as F

    from workbench.kafka.messages import source

    area = F.substring_index(F.col("event"), ".", 1)
    by_logger = (  # in one parse (log_events is not cached, frames.Bundle); a row per logger
        bundle.log_events.groupBy("logger")
        .agg(
            F.count("*").alias("n"),
            F.count_if(F.col("event").isNull()).alias("untyped"),
            F.count_if(area == source.AREA).alias("from_source"),
            F.min("ts").alias("first"),
            F.max("ts").alias("last"),
            F.collect_set("broker_id").alias("ids"),
        )
        .collect()
    )
    n = sum(r.n for r in by_logger)
    first = min((r.first for r in by_logger if r.first is not None), default=None)
    last = max((r.last for r in by_logger if r.last is not None), default=None)
    untyped = sorted((r for r in by_logger if r.untyped), key=lambda r: (-r.untyped, r.logger or ""))
    typing = {
        "curated": n - sum(r.untyped + r.from_source for r in by_logger),
        "from_source": sum(r.from_source for r in by_logger),
        "untyped": sum(r.untyped for r in by_logger),
        "untyped_by_logger": [
            {"logger": r.logger, "count": r.untyped, "why": source.why_untyped(r.logger)}
            for r in untyped[:10]
        ],
    }
    counts = {name: n if name == "log_events" else getattr(bundle, name).count() for name in Bundle.FRAMES}
    bad = (
        bundle.bad_records.groupBy("source", "reason")
        .count()
        .orderBy(F.desc("count"), "source", "reason")
        .collect()
    )
    ids = bundle.datadir_files.where(F.col("broker_id").isNotNull()).select("broker_id").distinct().collect()
    brokers = sorted(
        {r.broker_id for r in ids}
        | {i for r in by_logger for i in r.ids}
        | set(bundle.manifest.get("brokers") or [])
    )
    return {
        "bundle": bundle.evidence.origin,
        "cluster": bundle.manifest.get("cluster"),
        "kafka_version": bundle.manifest.get("kafka_version"),
        "brokers": brokers,
        "first_event": first.isoformat(sep=" ") if first else None,
        "last_event": last.isoformat(sep=" ") if last else None,
        "log_files": len(bundle.evidence.log_files),
        "log_dirs": len(bundle.evidence.log_dirs),
        "rows": counts,
        "events_typed": typing,
        "bad_records_by_reason": [{"source": r.source, "reason": r.reason, "count": r["count"]} for r in bad],
    }


def _print_summary(s: dict[str, Any]) -> None:
    print(f"bundle        {s['bundle']}")
    if s["cluster"] or s["kafka_version"]:
        print(f"cluster       {s['cluster'] or '?'} (Kafka {s['kafka_version'] or '?'})")
    print(f"brokers       {', '.join(map(str, s['brokers'])) or 'none found'}")
    print(f"time span     {s['first_event'] or '-'}  ..  {s['last_event'] or '-'}")
    print(f"evidence      {s['log_files']} log files, {s['log_dirs']} log dirs")
    print()
    print(f"{'DataFrame':<22}{'rows':>10}")
    for name, n in s["rows"].items():
        print(f"{name:<22}{n:>10}")
    t = s["events_typed"]
    print()
    print(
        f"log events    {t['curated']} typed by the catalog, {t['from_source']} by Kafka's source only, "
        f"{t['untyped']} untyped"
    )
    for r in t["untyped_by_logger"]:
        why = f": {r['why']}" if r["why"] else " (not expected: a wording the catalog lacks?)"
        print(f"{r['count']:>8}  untyped from {r['logger'] or '(no logger)'}{why}")
    if s["bad_records_by_reason"]:
        print()
        print("bad records by reason")
        for r in s["bad_records_by_reason"]:
            print(f"{r['count']:>8}  {r['source']}: {r['reason']}")


def _zxid(text: str) -> int:
    return int(text, 0)


def _time(text: str) -> datetime:
    try:
        t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected an ISO time such as '2024-03-12 10:06:01' (UTC unless it says)"
        ) from None
    return t if t.tzinfo is not None else t.replace(tzinfo=timezone.utc)


def _brokers(text: str) -> list[int]:
    try:
        return [int(b) for b in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected broker ids such as 1 or 1,2") from None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="workbench", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    load = sub.add_parser("load", help="load a bundle and summarise what it holds")
    load.add_argument("bundle", help="bundle directory, .tar.gz, or a Kafka log dir")
    load.add_argument("--quiet", action="store_true", help="no progress on stderr")
    load.add_argument("--format", choices=("text", "json"), default="text")

    tri = sub.add_parser("triage", help="findings with their evidence, then coverage and bad records")
    tri.add_argument("bundle", help="bundle directory, .tar.gz, or a Kafka log dir")
    tri.add_argument("--quiet", action="store_true", help="no progress on stderr")
    tri.add_argument("--format", choices=("text", "json", "markdown"), default="text")

    line = sub.add_parser("timeline", help="every broker's events, ZooKeeper's txns and file times, in order")
    line.add_argument("bundle", help="bundle directory, .tar.gz, or a Kafka log dir")
    line.add_argument("--topic")
    line.add_argument("--partition", type=int)
    line.add_argument("--broker", type=int)
    line.add_argument("--since", type=_time, help="ISO time on ZooKeeper's clock, UTC unless it says")
    line.add_argument("--until", type=_time, help="ISO time on ZooKeeper's clock, UTC unless it says")
    line.add_argument("--kinds", help="only kinds starting with this: isr., controller., zk.setData ...")
    line.add_argument("--quiet", action="store_true", help="no progress on stderr")
    line.add_argument("--format", choices=("text", "jsonl"), default="text")

    what = sub.add_parser("whatif", help="what a change would do, computed on the evidence, never run")
    what.add_argument("bundle", help="bundle directory, .tar.gz, or a Kafka log dir")
    asked = what.add_mutually_exclusive_group(required=True)
    asked.add_argument("--delete", metavar="REGEX", help="topics kafka-topics --delete --topic REGEX marks")
    asked.add_argument(
        "--stop", metavar="N[,N]", type=_brokers, help="partitions left without a leader if these stop"
    )
    asked.add_argument("--old-tool", action="store_true", help="topic ids a pre-2.8 tool would wipe")
    what.add_argument("--quiet", action="store_true", help="no progress on stderr")

    fix = sub.add_parser("remediate", help="write the topic-id repair plan: reviewed scripts, never run")
    fix.add_argument("bundle", help="bundle directory, .tar.gz, or a Kafka log dir")
    fix.add_argument("--quiet", action="store_true", help="no progress on stderr")
    fix.add_argument("--out", required=True, help="folder for PLAN.md and one script per broker")

    rep = sub.add_parser(
        "report", help="the postmortem report: the template notebook run on a bundle, as HTML"
    )
    rep.add_argument("bundle", help="bundle directory, .tar.gz, or a Kafka log dir")
    rep.add_argument("--out", required=True, help="folder for postmortem.html and the executed notebook")

    capture = sub.add_parser("capture", help="collect evidence into a bundle (read-only)")
    parts = capture.add_subparsers(dest="part", required=True)
    for name, module, text in (
        ("zk", "zk", "a live ZooKeeper tree via kazoo, read-only, secrets redacted"),
        ("broker", "broker", "a broker's log dir listings, metadata files and logs (standard library only)"),
        ("zk-files", "zk_files", "a ZooKeeper dataDir's txn logs and snapshots, secrets redacted"),
    ):
        part = parts.add_parser(name, help=text)
        part.set_defaults(module=module)
        _capture_module(module).add_arguments(part)

    zk = sub.add_parser("zk", help="ZooKeeper's own history, from its txn logs")
    zk_sub = zk.add_subparsers(dest="zk_command", required=True)
    history = zk_sub.add_parser("history", help="every change, one line per txn or multi op")
    history.add_argument("inputs", nargs="+", help="a bundle, a dataDir (version-2/) or log.* files")
    history.add_argument("--path", help="only znodes whose path starts with this")
    history.add_argument("--since", type=_zxid, help="only txns with a zxid at or after this (0x1a or 26)")
    history.add_argument("--format", choices=("text", "jsonl"), default="text")

    from workbench.simulate import run as simulate

    sim = sub.add_parser("simulate", help="replay an incident into a bundle with its truth.json")
    simulate.add_arguments(sim)
    return parser


def _capture_module(name: str) -> Any:
    import importlib

    return importlib.import_module(f"workbench.capture.{name}")


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "capture":
        return int(_capture_module(args.module).run(args))
    if args.command == "simulate":
        from workbench.simulate.run import run

        return run(args)
    if args.command == "zk":
        from workbench.zk_history import run_history

        return run_history(args)
    if args.command == "triage":
        return _triage(args)
    if args.command == "remediate":
        return _remediate(args)
    if args.command == "timeline":
        return _timeline(args)
    if args.command == "report":
        return _report(args)
    if args.command == "whatif":
        return _whatif(args)
    if args.command == "load":
        bundle = _open(args.bundle, "Loading")
        if bundle is None:
            return 2
        with _progress(bundle, args.quiet):
            summary = load_summary(bundle)
        if args.format == "json":
            print(json.dumps(summary, indent=2))
        else:
            _print_summary(summary)
    return 0


def _open(path: str, doing: str) -> Bundle | None:
    """The bundle, or None after saying on stderr which file is wrong and what was expected."""
    try:
        bundle = open_bundle(path)
    except BundleError as e:
        print(f"workbench: {e}", file=sys.stderr)
        return None
    print(f"{doing} {bundle!r} with Spark ...", file=sys.stderr)
    return bundle


def _progress(bundle: Bundle, quiet: bool) -> Progress:
    """Spark's progress on a terminal's stderr, with the size of the bundle's logs."""
    from workbench.progress import Progress

    sizes = [f.path.stat().st_size for f in bundle.evidence.log_files if f.path.is_file()]
    mb = sum(sizes) / 1e6
    reading = f"{len(sizes)} log files, {mb:,.{1 if mb < 10 else 0}f} MB" if sizes else ""
    return Progress(bundle.spark, reading, enabled=False if quiet else None)


def _triage(args: argparse.Namespace) -> int:
    """Exit 0 when nothing is critical, 1 when something is, 2 when the bundle cannot be opened."""
    from workbench.analysis.triage import triage

    bundle = _open(args.bundle, "Triaging")
    if bundle is None:
        return 2
    with _progress(bundle, args.quiet):
        result = triage(bundle)
    print({"json": result.json, "markdown": result.markdown}.get(args.format, result.text)())
    return 1 if result.critical else 0


def _timeline(args: argparse.Namespace) -> int:
    """The skew table, then the rows in order, streamed (filter a large bundle with the options)."""
    from workbench.analysis.timeline import skew, timeline

    bundle = _open(args.bundle, "Ordering")
    if bundle is None:
        return 2
    with _progress(bundle, args.quiet):
        skews = skew(bundle)
        rows = timeline(
            bundle, args.topic, args.partition, args.broker, args.since, args.until, args.kinds, skews
        )
        if args.format == "jsonl":
            for s in skews:
                print(json.dumps({"record": "skew", **s.__dict__}))
        else:
            print("Clock skew (a broker's clock minus ZooKeeper's, ms)")
            for s in skews:
                bounds = f"{s.lower_ms if s.lower_ms is not None else '-inf'} .. "
                bounds += f"{s.upper_ms if s.upper_ms is not None else '+inf'}"
                shown = f"{s.estimate_ms:+d}" if s.estimate_ms is not None else "not applied"
                print(f"  broker {s.broker}: {shown} (bounds {bounds}, {s.pairs} pairs): {s.why}")
            print()
        for r in rows.toLocalIterator():
            if args.format == "jsonl":
                print(json.dumps({"record": "event", **r.asDict()}, default=str))
                continue
            who = "zk" if r.source == "zookeeper" else f"b{r.broker_id}"
            tp = f"{r.topic}-{r.partition}" if r.partition is not None else (r.topic or "")
            print(
                f"{r.time:%Y-%m-%d %H:%M:%S.%f}"[:-3]
                + f"  {who:<4} {r.kind:<34} {tp:<24} {r.detail}  [{r.ref}]"
            )
    return 0


def _whatif(args: argparse.Namespace) -> int:
    """One line per topic or partition the change would touch, then how many."""
    from workbench.analysis import whatif

    bundle = _open(args.bundle, "Reviewing")
    if bundle is None:
        return 2
    with _progress(bundle, args.quiet):
        if args.delete is not None:
            rows = whatif.delete_would_mark(bundle, args.delete)
            what = f"topics `kafka-topics --delete --topic {args.delete}` would choose"
        elif args.stop is not None:
            rows = whatif.offline_if_stopped(bundle, args.stop)
            what = (
                f"partitions left without a leader if broker(s) {','.join(map(str, args.stop))} stopped now"
            )
        else:
            rows = whatif.ids_an_old_tool_would_wipe(bundle)
            what = "topics whose id a pre-2.8 tool adding partitions would wipe"
        n = 0
        for r in rows.toLocalIterator():
            n += 1
            print("  ".join(f"{k}={v}" for k, v in r.asDict().items()))
    print(f"{n} {what} (nothing was run)")
    return 0


def _remediate(args: argparse.Namespace) -> int:
    """Exit 0 when the plan is written (an empty one says why), 2 when the bundle or --out is unusable."""
    from workbench import remediation

    bundle = _open(args.bundle, "Planning the repair of")
    if bundle is None:
        return 2
    with _progress(bundle, args.quiet):
        plan = remediation.plan(bundle)
    try:
        written = plan.write(args.out)
    except (FileExistsError, OSError) as e:
        print(f"workbench: {e}", file=sys.stderr)
        return 2
    print(remediation.summary(plan))
    for path in written:
        print(f"  {path}")
    return 0


def _report(args: argparse.Namespace) -> int:
    """Exit 0 with the HTML's path, 2 when the bundle is missing, the notebooks extra is not installed or
    the template failed on the bundle."""
    from workbench import report

    try:
        from papermill.exceptions import PapermillExecutionError
    except ImportError:
        print("workbench: report needs pip install 'kafka-forensic-workbench[notebooks]'", file=sys.stderr)
        return 2
    if not Path(args.bundle).exists():
        print(f"workbench: {args.bundle}: no such bundle", file=sys.stderr)
        return 2
    print(
        f"Running the postmortem template on {args.bundle} (a kernel and Spark start: about a minute) ...",
        file=sys.stderr,
    )
    try:
        html = report.write(args.bundle, args.out)
    except PapermillExecutionError as e:
        print(
            f"workbench: the postmortem template failed on {args.bundle}: {e.ename}: {e.evalue}",
            file=sys.stderr,
        )
        print(f"  the executed notebook is {Path(args.out) / 'postmortem.ipynb'}", file=sys.stderr)
        return 2
    print(html)
    return 0


if __name__ == "__main__":
    sys.exit(main())
