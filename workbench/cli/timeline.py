"""`workbench timeline`: the skew table, then every row in order, streamed (filter a large bundle with
the options)."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from workbench.cli import render
from workbench.cli.common import BUNDLE_HELP, open_or_say, progress, utc_time

if TYPE_CHECKING:
    from workbench.frames import Bundle


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("bundle", help=BUNDLE_HELP)
    parser.add_argument("--topic")
    parser.add_argument("--partition", type=int)
    parser.add_argument("--broker", type=int)
    parser.add_argument("--since", type=utc_time, help="ISO time on ZooKeeper's clock, UTC unless it says")
    parser.add_argument("--until", type=utc_time, help="ISO time on ZooKeeper's clock, UTC unless it says")
    parser.add_argument("--kinds", help="only kinds starting with this: isr., controller., zk.setData ...")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    parser.add_argument("--format", choices=("text", "jsonl"), default="text")


def run(args: argparse.Namespace) -> int:
    bundle = open_or_say(args.bundle, "Ordering")
    if bundle is None:
        return 2
    with progress(bundle, args.quiet):
        show(bundle, args)
    return 0


def show(bundle: Bundle, args: argparse.Namespace) -> None:
    """What the command prints for an opened bundle: the skews, then the rows as they stream."""
    from workbench.model.skew import skew
    from workbench.model.timeline import timeline

    skews = skew(bundle)
    rows = timeline(
        bundle, args.topic, args.partition, args.broker, args.since, args.until, args.kinds, skews
    )
    if args.format == "jsonl":
        for s in skews:
            print(json.dumps({"record": "skew", **s.__dict__}))
    else:
        print(render.skew_table(skews))
    for r in rows.toLocalIterator():
        if args.format == "jsonl":
            print(json.dumps({"record": "event", **r.asDict()}, default=str))
        else:
            print(render.timeline_row(r))
