"""Pasted log-dir listings (sources/listings.py): the real tools' output on a real tree, read back.

Each sample's listing.tsv is made into a tree of sparse files with its sizes and times; GNU ls, find, du
and stat and BusyBox's ls and du list it as an SRE would; the bundle then holds that paste instead of
listing.tsv, and datadir_files must give the same files, sizes and times as far as the format holds them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
from conftest import SAMPLE_DATA
from pyspark.sql import SparkSession

from workbench.analysis.triage import Triage, triage
from workbench.frames import open_bundle

SAMPLE = "deletion-complete-3.6"
DAYS_AGO = 10  # the tree's newest file, so that ls prints its recent form ("Nov 18 10:07")
C_UTC = {"TZ": "UTC", "LC_ALL": "C"}


def _busybox() -> str | None:
    found = shutil.which("busybox")
    if found is None and os.environ.get("CI") == "true":
        pytest.fail("busybox is missing: .ci/run installs the Debian package")
    return found


def _tree(listing: Path, dest: Path, shift: float) -> dict[str, tuple[int, float]]:
    """The files listing.tsv lists, as sparse files with its sizes and its times moved by `shift`."""
    files = {}
    for line in listing.read_text(encoding="utf-8").splitlines():
        rel, size, mtime = line.split("\t")
        path = dest / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "wb") as f:
            f.truncate(int(size))
        when = float(mtime) + shift
        os.utime(path, (when, when))
        files[rel] = (int(size), when)
    return files


def _run(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> str:
    """What a terminal shows: the prompt and command, then its output."""
    out = subprocess.run(
        command, cwd=cwd, env={**os.environ, **(env or C_UTC)}, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    return f"kafka@broker:{cwd}$ {' '.join(command)}\n{out.stdout}"


def _pasted_bundle(
    tmp: Path, pastes: dict[int, str], said: dict[str, Any] | None, sample: str = SAMPLE
) -> Path:
    """The sample with each broker's listing.tsv replaced by its paste (all brokers keep their copies
    of the metadata files), and the manifest's "pasted" entries saying `said` of each."""
    bundle = tmp / "bundle"
    shutil.copytree(SAMPLE_DATA / sample, bundle)
    entries = []
    for broker, text in pastes.items():
        ddir = bundle / "brokers" / str(broker) / "datadirs" / "0"
        (ddir / "listing.tsv").unlink()
        (ddir / "listing.txt").write_text(text, encoding="utf-8")
        entries.append({"file": f"brokers/{broker}/datadirs/0/listing.txt", **(said or {})})
    manifest = json.loads((bundle / "manifest.json").read_text())
    (bundle / "manifest.json").write_text(json.dumps({**manifest, "pasted": entries}))
    return bundle


def _now_said() -> dict[str, Any]:
    return {"taken_at": datetime.now(timezone.utc).isoformat(), "timezone": "UTC"}


FORMATS = {  # name: (command, its files: all or the visible ones, sizes, precision of times)
    "ls -lR": (["ls", "-lR", "{tree}"], "visible", True, "minute"),
    "ls -lR --full-time": (["ls", "-lR", "--full-time", "{tree}"], "visible", True, "subsecond"),
    "ls -lRa long-iso": (["ls", "-lRa", "--time-style=long-iso", "."], "all", True, "minute"),
    "find -ls": (["find", "{tree}", "-ls"], "all", True, "minute"),
    "du -ab": (["du", "-ab", "{tree}"], "all", True, None),
    "du -a": (["du", "-a", "."], "all", False, None),
    "stat": (["find", ".", "-type", "f", "-exec", "stat", "{}", "+"], "all", True, "subsecond"),
    "busybox ls -lR": (["busybox", "ls", "-lR", "{tree}"], "visible", True, "minute"),
    "busybox ls -lRa --full-time": (["busybox", "ls", "-lRa", "--full-time", "."], "all", True, "second"),
    "busybox du -ab": (["busybox", "du", "-ab", "{tree}"], "all", True, None),
}


class Listed:
    """One format's paste of one broker's tree, and what the bundle read of it."""

    def __init__(self, broker: int, truth: dict[str, tuple[int, float]], paste: str) -> None:
        self.broker, self.truth, self.paste = broker, truth, paste
        self.rows: list[Any] = []
        self.bad = -1


@pytest.fixture(scope="module")
def listed(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Listed]:
    """Each format's paste, three formats a bundle (one a broker, each listing its own tree): a bundle is
    opened once for three formats, not once each."""
    brokers = (1, 2, 3)
    formats = [n for n in FORMATS if FORMATS[n][0][0] != "busybox" or _busybox() is not None]
    out: dict[str, Listed] = {}
    for first in range(0, len(formats), len(brokers)):
        tmp = tmp_path_factory.mktemp("listed")
        chunk = dict(zip(brokers, formats[first : first + len(brokers)], strict=False))
        for broker, name in chunk.items():
            listing = SAMPLE_DATA / SAMPLE / "brokers" / str(broker) / "datadirs" / "0" / "listing.tsv"
            newest = max(float(line.split("\t")[2]) for line in listing.read_text().splitlines())
            tree = tmp / f"tree-{broker}" / "var" / "lib" / "kafka" / "data"
            truth = _tree(listing, tree, time.time() - DAYS_AGO * 86400 - newest)
            paste = _run([c.replace("{tree}", str(tree)) for c in FORMATS[name][0]], cwd=tree)
            out[name] = Listed(broker, truth, paste)
        b = open_bundle(
            _pasted_bundle(tmp, {out[n].broker: out[n].paste for n in chunk.values()}, _now_said()), spark
        )
        rows = b.datadir_files.collect()
        bad = b.bad_records.where("source = 'listing'").groupBy("file").count().collect()
        for name in chunk.values():
            x = out[name]
            x.rows = [r for r in rows if r.broker_id == x.broker]
            x.bad = sum(r["count"] for r in bad if r.file == f"brokers/{x.broker}/datadirs/0/listing.txt")
        b.release()
    return out


@pytest.mark.slow
@pytest.mark.parametrize("name", list(FORMATS))
def test_each_format_gives_the_files_it_shows(listed: dict[str, Listed], name: str) -> None:
    _, shown, sized, precision = FORMATS[name]
    if name not in listed:
        pytest.skip("no busybox here")
    x = listed[name]
    files = {r.path: r for r in x.rows if r.file is not None}
    wanted = {rel for rel in x.truth if shown == "all" or not Path(rel).name.startswith(".")}
    assert set(files) == wanted
    dirs = {r.dir_name for r in x.rows if r.file is None}
    assert dirs <= {rel.split("/")[0] for rel in x.truth if "/" in rel}
    for rel, r in files.items():
        size, mtime = x.truth[rel]
        assert r.size == (size if sized else None), rel
        assert r.mtime_precision == precision and r.listing == f"brokers/{x.broker}/datadirs/0/listing.txt"
        if precision is None:
            assert r.mtime is None
            continue
        exact = datetime.fromtimestamp(mtime, timezone.utc).replace(tzinfo=None)
        unit = {"subsecond": 2e-6, "second": 1, "minute": 60}[precision]  # Spark keeps µs
        assert abs((r.mtime - exact).total_seconds()) < unit, (rel, r.mtime, exact, r.mtime_text)
        assert r.line_no is not None and x.paste.splitlines()[r.line_no - 1].endswith(Path(rel).name)
    assert x.bad == 0


def test_without_the_time_taken_or_the_zone_a_local_time_is_unknown(
    spark: SparkSession, tmp_path: Path
) -> None:
    listing = SAMPLE_DATA / SAMPLE / "brokers" / "1" / "datadirs" / "0" / "listing.tsv"
    tree = tmp_path / "data"
    _tree(listing, tree, time.time() - DAYS_AGO * 86400 - 1710234100)
    pastes = {1: _run(["ls", "-lR", "."], tree), 2: _run(["ls", "-lR", "--full-time", "."], tree)}
    b = open_bundle(_pasted_bundle(tmp_path, pastes, {"timezone": "UTC"}), spark)  # no taken_at
    recent = b.datadir_files.where("broker_id = 1 and file is not null").collect()
    assert recent and all(r.mtime is None and r.mtime_precision is None for r in recent)
    assert all(r.mtime_text and r.size is not None for r in recent)
    full = b.datadir_files.where("broker_id = 2 and file is not null").collect()
    assert full and all(r.mtime is not None and r.mtime_precision == "subsecond" for r in full)


def test_an_old_file_gives_its_day_in_the_hosts_zone(spark: SparkSession, tmp_path: Path) -> None:
    listing = SAMPLE_DATA / SAMPLE / "brokers" / "1" / "datadirs" / "0" / "listing.tsv"
    tree = tmp_path / "data"
    truth = _tree(listing, tree, 0.0)  # March 2024: more than half a year before now
    berlin = {"TZ": "Europe/Berlin", "LC_ALL": "C"}
    paste = _run(["ls", "-lR", "."], tree, berlin)
    assert "Mar 12  2024" in paste
    b = open_bundle(_pasted_bundle(tmp_path, {1: paste}, {**_now_said(), "timezone": "Europe/Berlin"}), spark)
    rows = b.datadir_files.where("broker_id = 1 and file is not null").collect()
    assert {r.path for r in rows} == {rel for rel in truth if not rel.startswith(".")}
    for r in rows:
        assert r.mtime_precision == "day"
        assert r.mtime == datetime(2024, 3, 11, 23, 0), r.path  # midnight in Berlin, in UTC


PASTE = """\
[root@broker-1 ~]# ls -l /var/lib/kafka/data /var/lib/kafka/data/orders-0
ls: cannot access '/var/lib/kafka/data/orders-0': No such file or directory
/var/lib/kafka/data:
total 20
-rw-r--r-- 1 kafka kafka   88 Mar 12 10:07 meta.properties
drwxr-xr-x 2 kafka kafka 4096 Mar 12 10:07 orders-1
drwxr-xr-x 2 kafka kafka 4096 Mar 12 10:09 orders-2.4b3c7e0d2a1f4e6b9c8d7a6b5e4f3a2b-delete
lrwxrwxrwx 1 kafka kafka   12 Mar 12 10:07 latest -> orders-1
-rw-r--r-- 1 kafka kafka       29 Mar 12 10:07 recovery-point-offset-che
ckpoint
insgesamt 48
-rw-r--r-- 1 kafka kafka 29 12. Mär 10:07 replication-offset-checkpoint
[root@broker-1 ~]# du -a /var/lib/kafka/data
4\t/var/lib/kafka/data/orders-1/partition.metadata
8\t/var/lib/kafka/data/orders-1
16\t/var/lib/kafka/data
"""


def test_every_line_is_a_fact_structure_or_a_bad_record(spark: SparkSession, tmp_path: Path) -> None:
    said = {"taken_at": "2024-03-12T10:30:00+01:00", "timezone": "Europe/Berlin"}
    b = open_bundle(_pasted_bundle(tmp_path, {1: PASTE}, said), spark)
    rows = {
        (r.line_no, r.path, r.file, r.size, r.mtime, r.listed_as)
        for r in b.datadir_files.where("broker_id = 1").collect()
    }
    assert rows == {
        (5, "meta.properties", "meta.properties", 88, datetime(2024, 3, 12, 9, 7), "ls -l"),
        (6, "orders-1", None, None, datetime(2024, 3, 12, 9, 7), "ls -l"),
        (
            7,
            "orders-2.4b3c7e0d2a1f4e6b9c8d7a6b5e4f3a2b-delete",
            None,
            None,
            datetime(2024, 3, 12, 9, 9),
            "ls -l",
        ),
        # a line the terminal wrapped is read as far as it goes; its rest is a bad record
        (
            9,
            "recovery-point-offset-che",
            "recovery-point-offset-che",
            29,
            datetime(2024, 3, 12, 9, 7),
            "ls -l",
        ),
        (14, "orders-1/partition.metadata", "partition.metadata", None, None, "du"),
        (15, "orders-1", None, None, None, "du"),
    }
    states = {r.dir_name: r.dir_state for r in b.datadir_files.where("broker_id = 1").collect()}
    assert states["orders-2.4b3c7e0d2a1f4e6b9c8d7a6b5e4f3a2b-delete"] == "delete"
    bad = {(r.position, r.reason) for r in b.bad_records.where("source = 'listing'").collect()}
    no_line = "not a line of ls -l, find -ls, du or stat as they print in the C locale"
    assert bad == {
        (2, "an error the command printed"),
        (8, "a symbolic link: not a file or dir Kafka writes"),
        (10, no_line),
        (11, no_line),  # another locale's words
        (12, no_line),
    }


@pytest.mark.slow
def test_triage_finds_the_same_in_pasted_listings(
    triaged: Callable[[str], Triage], spark: SparkSession, tmp_path: Path
) -> None:
    """Each broker's listing.tsv replaced by a paste holding the same files and exact times."""
    pastes = {}
    for broker, command in (
        (1, ["ls", "-lRa", "--full-time", "."]),
        (2, ["find", ".", "-ls"]),
        (3, ["du", "-ab", "."]),
    ):
        listing = SAMPLE_DATA / SAMPLE / "brokers" / str(broker) / "datadirs" / "0" / "listing.tsv"
        tree = tmp_path / f"b{broker}"
        _tree(listing, tree, 0.0)
        pastes[broker] = _run(command, tree)
    collected = triaged(SAMPLE)
    pasted = triage(open_bundle(_pasted_bundle(tmp_path, pastes, _now_said()), spark))

    def found(result: Any) -> set[tuple[str, str]]:
        return {(f.kind, json.dumps(f.subject, sort_keys=True)) for f in result.findings}

    assert found(pasted) == found(collected) and found(collected)


@pytest.mark.slow
def test_topic_ids_from_a_pasted_listing_and_the_files_beside_it(
    triaged: Callable[[str], Triage], spark: SparkSession, tmp_path: Path
) -> None:
    """The mismatch is found from a pasted `ls -lR` and the partition.metadata copied beside it; without
    the copies, coverage says which replicas' ids could not be read rather than finding nothing."""
    sample = "topicid-mismatch-2.8"
    listing = SAMPLE_DATA / sample / "brokers" / "2" / "datadirs" / "0" / "listing.tsv"
    tree = tmp_path / "data"
    _tree(listing, tree, 0.0)
    paste = {2: _run(["ls", "-lR", "--full-time", "."], tree)}
    collected = triaged(sample)
    pasted = _pasted_bundle(tmp_path / "a", paste, _now_said(), sample)
    with_copies = triage(open_bundle(pasted, spark), only=["topic_ids"])

    def mismatched(result: Any) -> set[tuple[Any, ...]]:
        return {
            (f.subject["topic"], f.subject["broker"])
            for f in result.findings
            if f.kind == "topic_id.mismatch"
        }

    assert mismatched(with_copies) == mismatched(collected) and any(b == 2 for _, b in mismatched(collected))
    assert not any("pasted listing" in m for m in with_copies.coverage["topic_ids"].missing)
    bare = _pasted_bundle(tmp_path / "b", paste, _now_said(), sample)
    copies = list((bare / "brokers" / "2" / "datadirs" / "0").glob("*/partition.metadata"))
    for copy in copies:
        copy.unlink()
    without = triage(open_bundle(bare, spark), only=["topic_ids"])
    assert {b for _, b in mismatched(without)} == {b for _, b in mismatched(collected)} - {2}
    said = [m for m in without.coverage["topic_ids"].missing if "pasted listing" in m]
    unread = f"partition.metadata of {len(copies)} replica(s) a pasted listing shows, not copied beside it"
    assert said == [f"broker 2: {unread}"]


@pytest.mark.slow
def test_stat_of_a_few_files_is_no_whole_listing(spark: SparkSession, tmp_path: Path) -> None:
    """A dir missing from `stat`'s output is not gone: only a listing of the whole log dir says so."""
    from workbench.model.views import views

    listing = SAMPLE_DATA / SAMPLE / "brokers" / "3" / "datadirs" / "0" / "listing.tsv"
    tree = tmp_path / "data"
    _tree(listing, tree, 0.0)
    one = next(tree.glob("*/partition.metadata")).relative_to(tree)
    some = _run(["stat", "meta.properties", str(one)], tree)
    whole = _run(["ls", "-l", "."], tree)
    for paste, listed in ((some, False), (whole, True)):
        bundle = open_bundle(_pasted_bundle(tmp_path / str(listed), {3: paste}, _now_said()), spark)
        assert (3 in views(bundle).listed_whole) is listed
        assert {1, 2} <= views(bundle).listed_whole
