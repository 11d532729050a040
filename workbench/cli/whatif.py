"""`workbench whatif`: what a change would do, computed on the evidence, never run: one line per topic or
partition it would touch, then how many."""

from __future__ import annotations

import argparse

from workbench.cli import render
from workbench.cli.common import BUNDLE_HELP, broker_ids, open_or_say, progress


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("bundle", help=BUNDLE_HELP)
    asked = parser.add_mutually_exclusive_group(required=True)
    asked.add_argument("--delete", metavar="REGEX", help="topics kafka-topics --delete --topic REGEX marks")
    asked.add_argument(
        "--stop", metavar="N[,N]", type=broker_ids, help="partitions left without a leader if these stop"
    )
    asked.add_argument("--old-tool", action="store_true", help="topic ids a pre-2.8 tool would wipe")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")


def run(args: argparse.Namespace) -> int:
    from workbench.model import whatif

    bundle = open_or_say(args.bundle, "Reviewing")
    if bundle is None:
        return 2
    with progress(bundle, args.quiet):
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
            print(render.fields(r))
    print(f"{n} {what} (nothing was run)")
    return 0
