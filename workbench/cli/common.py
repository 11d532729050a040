"""What the commands share: opening a bundle (or saying on stderr why not), Spark's progress, and the
argument types."""

from __future__ import annotations

import argparse
import sys
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from workbench.frames import Bundle, open_bundle
from workbench.manifest import BundleError

if TYPE_CHECKING:
    from workbench.progress import Progress

BUNDLE_HELP = "bundle directory, .tar.gz, or a Kafka log dir"


def add_bundle(parser: argparse.ArgumentParser, quiet: bool = True) -> None:
    parser.add_argument("bundle", help=BUNDLE_HELP)
    if quiet:
        parser.add_argument("--quiet", action="store_true", help="no progress on stderr")


def open_or_say(path: str, doing: str) -> Bundle | None:
    """The bundle, or None after saying on stderr which file is wrong and what was expected."""
    try:
        bundle = open_bundle(path)
    except BundleError as e:
        print(f"workbench: {e}", file=sys.stderr)
        return None
    print(f"{doing} {bundle!r} with Spark ...", file=sys.stderr)
    return bundle


def progress(bundle: Bundle, quiet: bool) -> Progress:
    """Spark's progress on a terminal's stderr, with the size of the bundle's logs."""
    from workbench.progress import Progress

    sizes = [f.path.stat().st_size for f in bundle.evidence.log_files if f.path.is_file()]
    mb = sum(sizes) / 1e6
    reading = f"{len(sizes)} log files, {mb:,.{1 if mb < 10 else 0}f} MB" if sizes else ""
    return Progress(bundle.spark, reading, enabled=False if quiet else None)


def zxid(text: str) -> int:
    return int(text, 0)


def utc_time(text: str) -> datetime:
    try:
        t = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r}: expected an ISO time such as '2024-03-12 10:06:01' (UTC unless it says)"
        ) from None
    return t if t.tzinfo is not None else t.replace(tzinfo=timezone.utc)


def broker_ids(text: str) -> list[int]:
    try:
        return [int(b) for b in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected broker ids such as 1 or 1,2") from None
