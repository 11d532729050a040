"""Shared fixtures: one SparkSession for the whole run, and the real evidence beside the checkout."""

from __future__ import annotations

import itertools
import json
import os
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pyspark.sql import SparkSession
from stories import Stories

from workbench.analysis.findings import Finding
from workbench.analysis.triage import Triage, triage
from workbench.bundle import Evidence
from workbench.frames import Bundle
from workbench.model.reads import UNDECLARED
from workbench.spark import spark_session

REPO = Path(__file__).resolve().parents[1]
REAL_EVIDENCE = REPO.parent / "shared" / "real-evidence"
SAMPLE_DATA = REPO / "sample_data"
STUCK = SAMPLE_DATA / "deletion-stuck-2.8"  # the postmortem report's bundle (`cluster_report`)


def samples(holding: str = "truth.json") -> list[str]:
    """The sample bundles under sample_data/ holding `holding` (by default a simulated one's truth.json)."""
    return sorted(p.name for p in SAMPLE_DATA.iterdir() if (p / holding).exists())


def golden_findings(sample: str) -> list[Finding]:
    """A sample's findings as its golden triage file holds them (tests/golden/<sample>.json): no Spark."""
    d = json.loads((REPO / "tests" / "golden" / f"{sample}.json").read_text(encoding="utf-8"))
    return [
        Finding(f["kind"], f["severity"], f["subject"], f["summary"], tuple(f["evidence"]))
        for f in d["findings"]
    ]


def with_pastes(
    tmp: Path, sample: str, pastes: dict[str, str], said: dict[str, Any] | None = None, zk: bool = True
) -> Path:
    """A copy of a sample with `pastes` (name: text) under pasted/, the manifest's "pasted" entries saying
    `said` of each (taken_at, timezone); without its zk/ unless `zk`."""
    bundle = tmp / "bundle"
    shutil.copytree(SAMPLE_DATA / sample, bundle)
    if not zk:
        shutil.rmtree(bundle / "zk")
    (bundle / "pasted").mkdir()
    for name, text in pastes.items():
        (bundle / "pasted" / name).write_text(text, encoding="utf-8")
    manifest = json.loads((bundle / "manifest.json").read_text())
    manifest["pasted"] = [{"file": f"pasted/{name}", **(said or {})} for name in pastes]
    (bundle / "manifest.json").write_text(json.dumps(manifest))
    return bundle


@pytest.fixture(scope="session")
def spark() -> Iterator[SparkSession]:
    # One JVM runs every test, triage of dozens of bundles included: more than the 2 GB default driver.
    os.environ.setdefault("SPARK_DRIVER_MEMORY", "6g")
    # one long session of many small plans: both of the JVM's compilers pay for themselves, C2 inlining less
    # deep (`spark.JIT_OPTIONS`)
    session = spark_session(master=os.environ.get("WORKBENCH_SPARK_MASTER", "local[2]"), jit="shallow")
    yield session
    session.stop()


@pytest.fixture(autouse=True)
def _let_go_of_the_tests_own_bundles(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The bundles a test opens itself are released after it (their cached frames and views), or the
    driver fills; the bundles the session shares (`sample`) stay kept for the next test. An analysis
    that read a view it does not declare (`model.reads.UNDECLARED`) fails the test that ran it."""
    opened: list[Bundle] = []
    init = Bundle.__init__

    def tracked(self: Bundle, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        opened.append(self)

    monkeypatch.setattr(Bundle, "__init__", tracked)
    yield
    for bundle in opened:
        if bundle not in _SHARED.values():
            bundle.release()
    read, UNDECLARED[:] = sorted(set(UNDECLARED)), []
    assert not read, f"views read without their declaration (Analysis.reads): {read}"


_SHARED: dict[Path, Bundle] = {}
_TRIAGED: dict[Path, Triage] = {}


def shared(spark: SparkSession, path: Path) -> Bundle:
    """The bundle at `path` (a sample, or one the session simulated), opened once per test session and
    shared, so that its sources and views are made once whichever tests read them. Read it, never change
    it: a test that changes a bundle copies it and opens its own."""
    if path not in _SHARED:
        _SHARED[path] = Bundle(Evidence.open(path), spark)
    return _SHARED[path]


def shared_triage(spark: SparkSession, path: Path) -> Triage:
    """The triage of the shared bundle at `path`, made once per test session, with the Spark jobs it ran
    and the plan it ran under (`TRIAGE_JOBS`)."""
    if path not in _TRIAGED:
        group = f"shared triage of {path}"
        spark.sparkContext.setJobGroup(group, group)
        try:
            bundle = shared(spark, path)
            _TRIAGED[path] = triage(bundle)
            plan = [
                bundle.spark.conf.get(k)
                for k in ("spark.sql.adaptive.enabled", "spark.sql.shuffle.partitions")
            ]
            jobs = spark.sparkContext.statusTracker().getJobIdsForGroup(group)
            TRIAGE_JOBS[path] = (len(jobs), plan)
        finally:
            spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)
    return _TRIAGED[path]


TRIAGE_JOBS: dict[Path, tuple[int, list[str | None]]] = {}


@pytest.fixture(scope="session")
def sample(spark: SparkSession) -> Callable[[str], Bundle]:
    """`sample(name)`: the sample bundle under sample_data/, shared by the session (`shared`)."""
    return lambda name: shared(spark, SAMPLE_DATA / name)


@pytest.fixture(scope="session")
def triaged(spark: SparkSession) -> Callable[[str], Triage]:
    """`triaged(name)`: the triage of a sample bundle, made once per test session."""
    return lambda name: shared_triage(spark, SAMPLE_DATA / name)


@pytest.fixture(scope="session")
def twin(spark: SparkSession, stories: Stories) -> Callable[[str], Triage]:
    """`twin(name)`: the triage of a sample's or story's logs-only twin (`WithoutZooKeeper` of the
    session's shared bundle: its logs parsed once), made once per test session."""
    from workbench.frames import WithoutZooKeeper

    made: dict[str, Triage] = {}

    def triaged(name: str) -> Triage:
        if name not in made:
            whole = stories.bundle(name) if "@" in name else shared(spark, SAMPLE_DATA / name)
            made[name] = triage(WithoutZooKeeper(whole))
        return made[name]

    return triaged


@pytest.fixture(scope="session")
def stories(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> Stories:
    """The stories of tests/stories.py, each simulated (and triaged) once per test session."""
    return Stories(tmp_path_factory.mktemp("stories"), spark)


@pytest.fixture(scope="session")
def cluster_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The postmortem report of deletion-stuck-2.8 (`workbench.report.write`), its kernel's Spark pointed at
    a real standalone cluster (a master and a worker on loopback) as an SRE would point it: one papermill
    run and one cold Spark serve test_report (the page) and test_spark_cluster (local[*]'s findings, the
    worker's log). Returns the page; the cluster's logs stay in `spark/` beside its folder."""
    from workbench import report
    from workbench.testing.spark_standalone import SparkStandalone

    out = tmp_path_factory.mktemp("cluster_report")
    cluster = SparkStandalone(out / "spark", cores=2, memory="2g")
    cluster.start()
    try:
        with pytest.MonkeyPatch.context() as env:  # the kernel's environment
            env.setenv("WORKBENCH_SPARK_MASTER", cluster.url)
            env.setenv("SPARK_DRIVER_MEMORY", "2g")
            page = report.write(STUCK, out / "report")
    finally:
        cluster.stop()
    return page


@pytest.fixture(scope="session")
def real_evidence() -> Path:
    """../shared/real-evidence: files written by real clusters. Missing under CI is a failure."""
    if not REAL_EVIDENCE.is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{REAL_EVIDENCE} is missing; CI must have shared/ beside the checkout")
        pytest.skip(f"{REAL_EVIDENCE} not found beside the checkout")
    return REAL_EVIDENCE


def zookeeper_or_fail() -> None:
    """ZooKeeper's jar must be installed; under CI its absence fails the run instead of skipping."""
    from workbench.testing.zookeeper import ZooKeeperMissing, classpath

    try:
        classpath()
    except ZooKeeperMissing as e:
        if os.environ.get("CI") == "true":
            pytest.fail(f"{e} (.ci/run installs it)")
        pytest.skip(str(e))


@pytest.fixture
def zookeeper_factory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """Start standalone ZooKeeper servers (each on a free loopback port with its own dataDir);
    all are stopped at the end of the test. Call with zoo.cfg settings and -D properties."""
    from workbench.testing.zookeeper import ZooKeeperServer

    zookeeper_or_fail()
    servers: list[ZooKeeperServer] = []

    def start(settings: dict[str, str] | None = None, jvm_properties: dict[str, str] | None = None):
        server = ZooKeeperServer(tmp_path_factory.mktemp("zk"), settings, jvm_properties)
        servers.append(server)
        server.start()
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def own_zookeeper(zookeeper_factory: Any) -> Any:
    """A fresh standalone ZooKeeper of this test's own: for a test that stops or restarts it, expires a
    session, or reads its dataDir as holding only what the test wrote."""
    return zookeeper_factory()


@pytest.fixture(scope="session")
def zookeeper_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The test session's one shared ZooKeeper, a chroot of it per test (`zookeeper`)."""
    from workbench.testing.zookeeper import ZooKeeperServer

    zookeeper_or_fail()
    server = ZooKeeperServer(tmp_path_factory.mktemp("zk-shared"))
    server.start()
    yield server
    server.stop()


# The ACL digest the tests write restricted znodes with (test_capture_zk): the chroot's removal needs it.
ADMIN_DIGEST = [("digest", "admin:s3cret")]
_CHROOTS = itertools.count()


@pytest.fixture
def zookeeper(zookeeper_server: Any, request: pytest.FixtureRequest) -> Iterator[Any]:
    """This test's own chroot of the session's one ZooKeeper (kazoo's testing/harness.py), removed after
    it: its `hosts` name the chroot, so every client sees only the test's tree."""
    from workbench.testing.zookeeper import Chroot

    name = re.sub(r"[^A-Za-z0-9_.-]", "_", request.node.name)[:80]
    chroot = Chroot(zookeeper_server, f"/{name}-{next(_CHROOTS)}")
    chroot.make()
    yield chroot
    chroot.remove(ADMIN_DIGEST)


@pytest.fixture
def zk_tools() -> None:
    """ZooKeeper's own TxnLogToolkit and SnapshotFormatter are needed (same jar as the server)."""
    zookeeper_or_fail()


@pytest.fixture(scope="session")
def kafka_zk_data_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """version-2/ of a real server driven with Kafka's writes (snapCount 20 rolls logs and snapshots),
    stopped; made once per run and shared read-only."""
    from workbench.testing.zookeeper import ZooKeeperServer, kafka_like_writes

    zookeeper_or_fail()
    server = ZooKeeperServer(tmp_path_factory.mktemp("zk"), jvm_properties={"zookeeper.snapCount": "20"})
    server.start()
    try:
        kafka_like_writes(server.hosts)
        server.restart()  # on start the server snapshots the tree it restored
    finally:
        server.stop()
    return server.txn_dir
