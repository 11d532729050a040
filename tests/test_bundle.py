"""Opening bundles: directory, .tar.gz, clear errors, and archives that must be refused."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest
from conftest import REPO
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from workbench.bundle import Evidence, log_kind, walk_listing, write_listing
from workbench.cli import main
from workbench.frames import open_bundle
from workbench.manifest import FORMAT, BundleError, read_manifest, record_part
from workbench.model.views import release, views
from workbench.spark import SMALL_EVIDENCE_MB, kept

SAMPLE = REPO / "sample_data" / "handmade-2.8"


def test_sample_bundle_as_directory_and_tar(tmp_path: Path) -> None:
    d = Evidence.open(SAMPLE)
    archive = tmp_path / "bundle.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(SAMPLE, arcname="handmade-2.8")
    t = Evidence.open(archive)
    assert [f.file for f in t.log_files] == [f.file for f in d.log_files]
    assert {(f.broker_id, f.log) for f in d.log_files} >= {(1, "controller"), (2, "server")}
    assert [x.file_prefix for x in t.log_dirs] == ["brokers/1/datadirs/0/", "brokers/2/datadirs/0/"]


def _tar(tmp_path: Path, add) -> Path:
    archive = tmp_path / "evil.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        add(tar)
    return archive


def _member(tar: tarfile.TarFile, name: str, kind: bytes = tarfile.REGTYPE, data: bytes = b"{}") -> None:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.size = len(data) if kind == tarfile.REGTYPE else 0
    if kind == tarfile.SYMTYPE:
        info.linkname = "/etc/passwd"
    tar.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)


@pytest.mark.parametrize(
    ("name", "kind", "problem"),
    [
        ("../escape.json", tarfile.REGTYPE, "points outside the bundle"),
        ("/abs/manifest.json", tarfile.REGTYPE, "points outside the bundle"),
        ("brokers/1/logs/server.log", tarfile.SYMTYPE, "is a link or device"),
        ("dev", tarfile.CHRTYPE, "is a link or device"),
    ],
)
def test_unsafe_archives_are_refused(tmp_path: Path, name: str, kind: bytes, problem: str) -> None:
    archive = _tar(tmp_path, lambda tar: _member(tar, name, kind))
    with pytest.raises(BundleError) as e:
        Evidence.open(archive)
    assert problem in str(e.value) and str(archive) in str(e.value)
    assert not (tmp_path / "escape.json").exists()


def test_manifest_errors_name_the_file_and_the_format(tmp_path: Path) -> None:
    (tmp_path / "brokers").mkdir()
    with pytest.raises(BundleError, match=r"manifest.json: missing; expected .*kafka-evidence/1"):
        Evidence.open(tmp_path)
    (tmp_path / "manifest.json").write_text(json.dumps({"format": "kafka-evidence/9"}))
    with pytest.raises(BundleError, match=r"format is 'kafka-evidence/9'"):
        Evidence.open(tmp_path)


def test_record_part_replaces_the_same_part_and_keeps_the_bundles_facts(tmp_path: Path) -> None:
    b1 = {"part": "broker", "broker": 1, "run": 1}
    record_part(tmp_path, b1, ("part", "broker"), brokers=[1], redacted=False, captured_at="T1")
    record_part(tmp_path, {"part": "zk"}, ("part",), brokers=[2], redacted=True, captured_at="T2")
    again = {"part": "broker", "broker": 1, "run": 2}
    record_part(tmp_path, again, ("part", "broker"), brokers=[1], redacted=True, captured_at="T3")
    m = read_manifest(tmp_path)
    assert m["parts"] == [{"part": "zk"}, again] and m["brokers"] == [1, 2]
    assert m["captured_at"] == "T1" and m["redacted"] is False  # one unredacted part taints the bundle


def test_listing_survives_files_deleted_during_the_walk_and_odd_names(tmp_path: Path) -> None:
    """Kafka deletes segments while the collector walks; a file name need not be UTF-8 on Linux."""
    root = tmp_path / "data"
    (root / "t-0").mkdir(parents=True)
    for name in ("a.log", "b.log", "c.log"):
        (root / "t-0" / name).write_bytes(b"x")
    odd = root.as_posix().encode() + b"/t-0/\xff.index"
    with open(odd, "wb") as f:
        f.write(b"yy")
    walk = walk_listing(root)
    first = next(walk)
    (root / "t-0" / "c.log").unlink()  # after os.walk read the directory, before its lstat
    rest = list(walk)
    assert [first[0], *(r[0] for r in rest)] == ["t-0/a.log", "t-0/b.log", "t-0/\udcff.index"]
    out = tmp_path / "listing.tsv"
    assert write_listing(root, out) == 3
    assert b"t-0/\xff.index\t2\t" in out.read_bytes()


def test_log_kind() -> None:
    assert log_kind("state-change.log.2021-05-03-18.gz") == "state-change"
    assert log_kind("server.log") == "server"
    assert log_kind("02a_x_controller.log") == "controller"


@pytest.mark.slow
def test_cli_load_summarises_the_sample(spark, capsys) -> None:
    assert main(["load", str(SAMPLE), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["brokers"] == [1, 2]
    assert out["rows"]["bad_records"] == 0 and out["bad_records_by_reason"] == []
    assert out["rows"]["log_events"] > 40 and out["rows"]["partition_metadata"] == 5
    assert out["first_event"].startswith("2024-03-12 10:00:00")
    typed = out["events_typed"]
    assert typed["curated"] + typed["from_source"] + typed["untyped"] == out["rows"]["log_events"]
    assert typed["curated"] > 40 and [r["count"] for r in typed["untyped_by_logger"]] == sorted(
        (r["count"] for r in typed["untyped_by_logger"]), reverse=True
    )
    assert main(["load", str(SAMPLE / "nope")]) == 2


@pytest.mark.parametrize("sample", ["handmade-2.8", "topicid-mismatch-2.8"])
def test_cluster_events_are_the_typed_events_without_background_and_only_they_are_cached(
    spark: SparkSession, sample: str
) -> None:
    def cached(df: DataFrame) -> bool:
        return "InMemoryRelation" in df._jdf.queryExecution().withCachedData().toString()

    bundle = open_bundle(REPO / "sample_data" / sample, spark)
    area = F.substring_index("event", ".", 1)
    expected = bundle.log_events.where(F.col("event").isNotNull() & ~area.isin("fetcher", "group", "source"))
    assert bundle.log_events.count() > expected.count() > 0  # lines typed from source only, or background
    got = bundle.cluster_events.drop("attrs")  # a map: no set operations on it
    assert got.exceptAll(expected.drop("attrs")).count() == 0
    assert expected.drop("attrs").exceptAll(got).count() == 0
    assert cached(bundle.cluster_events) and cached(bundle.bad_records)
    assert not cached(bundle.log_events)
    spark.catalog.clearCache()


def test_small_evidence_is_planned_as_small_and_larger_gets_the_sessions_own_settings(
    spark: SparkSession, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each bundle plans in a session of its own (`Bundle.spark`): the session it was opened with keeps
    its settings, whatever bundles were opened, and a setting of that session reaches the bundles."""
    planned = (
        "spark.sql.codegen.wholeStage",
        "spark.sql.adaptive.enabled",
        "spark.sql.autoBroadcastJoinThreshold",
        "spark.sql.shuffle.partitions",
        "spark.sql.optimizer.runtime.bloomFilter.enabled",
    )
    own = {k: spark.conf.get(k) for k in planned}
    assert [own[k] for k in planned[:2]] == ["true", "true"] and own[planned[3]] != "1"
    rotated = tmp_path / "brokers" / "1" / "logs"
    rotated.mkdir(parents=True)
    (tmp_path / "manifest.json").write_text(json.dumps({"format": FORMAT}))
    (rotated / "server.log").write_bytes(b"x" * 1000)
    (rotated / "server.log.1.gz").write_bytes(b"x" * 100)
    assert Evidence.open(tmp_path).size_bytes() == 1000 + 100 * 10  # a .gz as about ten times its size

    spark.conf.set("spark.sql.files.maxRecordsPerFile", "12345")  # set since the session began
    try:
        small = open_bundle(SAMPLE, spark)
        assert 0 < small.evidence.size_bytes() < SMALL_EVIDENCE_MB * 2**20
        views(small)
        small_plan = [small.spark.conf.get(k) for k in planned]
        assert small_plan == ["false", "false", "-1", "1", "false"]  # 1: < 16 MB
        assert small.spark.conf.get("spark.sql.files.maxRecordsPerFile") == "12345"
        assert small.spark.sparkContext is spark.sparkContext and small.spark is not spark
        # what it caches or keeps is in one partition, as its shuffles: a task in each stage that reads it
        assert small.cluster_events.rdd.getNumPartitions() == 1
        three = small.spark.range(0, 30, 1, 3)
        assert three.rdd.getNumPartitions() == 3 and kept(three).rdd.getNumPartitions() == 1
        monkeypatch.setenv("WORKBENCH_SMALL_EVIDENCE_MB", "0")  # none is small: as a large bundle
        large = open_bundle(SAMPLE, spark)
        assert {k: large.spark.conf.get(k) for k in planned} == own
        assert large.cluster_events.rdd.getNumPartitions() > 1  # its scans run on every core
        assert {k: spark.conf.get(k) for k in planned} == own  # opening bundles changed nothing of it
        assert small.spark.conf.get("spark.sql.shuffle.partitions") == "1"  # nor of another bundle
    finally:
        spark.conf.unset("spark.sql.files.maxRecordsPerFile")
    release(small)


@pytest.mark.parametrize("size", [1000, 2**40], ids=["small", "large"])
def test_queries_asked_together_run_as_one_job_each_answer_as_its_own(spark: SparkSession, size: int) -> None:
    """`together`: several queries, in one Spark job under either plan (`planned_for`), each answered
    with its own rows in its own order and its own types; a frame of None has no rows, a `Joined` is
    given its parts' answers."""
    from pyspark.sql import functions as F

    from workbench.spark import planned_for
    from workbench.together import Ask, Joined, count, rows, together

    own = planned_for(spark, size)
    keyed = own.range(100).groupBy((F.col("id") % 7).alias("k")).agg(F.collect_list("id").alias("ids"))
    down = (  # a dot in a column's name, as Kafka's config keys have
        own.range(30).select(F.col("id").cast("int").alias("n"), F.lit("x").alias("a.b")).orderBy(F.desc("n"))
    )
    grouped, descending, none = (
        rows(keyed.orderBy(F.desc("k"))),
        Ask(down, lambda rs: [r.n for r in rs]),
        rows(None),
    )
    both = Joined(lambda c, g: (c, len(g)), count(own.range(5)), grouped)
    status = spark.sparkContext._jsc.sc().statusStore()  # type: ignore[union-attr]
    before = status.jobsList(None).size()
    got = together(grouped, descending, none, both, count(None))
    jobs = status.jobsList(None).size() - before
    assert jobs == 1 or size > SMALL_EVIDENCE_MB * 2**20, jobs  # a large plan's adaptive stages are jobs
    assert [r.k for r in got[grouped]] == list(range(6, -1, -1))
    assert sorted(got[grouped][-1].ids) == list(range(0, 100, 7))  # a Row of its own columns, an array kept
    assert got[descending] == list(range(29, -1, -1)) and got[none] == [] and got[both] == (5, 7)
    twice = own.range(2).alias("a").join(own.range(2).alias("b"), F.col("a.id") == F.col("b.id"))
    named = rows(twice)  # a name twice: its rows as a collect gives them
    assert together(named)[named] == twice.collect()


def test_the_workbenchs_own_errors_share_one_base() -> None:
    """One `except workbench.WorkbenchError` tells what the workbench was given from its own bugs."""
    import workbench
    from workbench.capture.zk import ZkCaptureError
    from workbench.kafka.zkdata_decode import ZkDataError
    from workbench.simulate.real_zk import RealZooKeeperError
    from workbench.testing.zookeeper import ZooKeeperMissing
    from workbench.zookeeper.jute import JuteError

    for error in (BundleError, ZkCaptureError, ZkDataError, RealZooKeeperError, ZooKeeperMissing, JuteError):
        assert issubclass(error, workbench.WorkbenchError), error
    assert issubclass(ZkDataError, ValueError) and issubclass(ZooKeeperMissing, RuntimeError)  # as before
