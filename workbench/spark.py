"""The one SparkSession factory.

`local[*]` on a laptop, a real cluster when `WORKBENCH_SPARK_MASTER` (or spark-submit) says so. Quiet by
default: no UI, no progress bars, Spark's own logging at ERROR, loopback bind. Times are shown in UTC so that
output does not depend on the machine's time zone.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from importlib.resources import files
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession

from workbench.jvm_lookups import remember_lookups

APP_NAME = "kafka-forensic-workbench"
DEFAULT_DRIVER_MEMORY = "2g"
# Generated classes Spark keeps for reuse (default 100): one triage compiles several hundred, so with the
# default every bundle compiles them again (measured on healthy-3.6: a second triage 18% faster).
CODEGEN_CACHE_ENTRIES = "2000"
# PySpark's DataFrame debugging (on by default since 4.0) sends the Python call site to the JVM around every
# column function: five py4j calls each, about 2,600 per triage and a tenth of a warm triage's time. A
# failing query still names its Python line in its traceback.
DATAFRAME_DEBUGGING = "false"
# Evidence up to this size is planned as small (`planned_for`); WORKBENCH_SMALL_EVIDENCE_MB=0: never.
SMALL_EVIDENCE_MB = 64
SMALL_PARTITION_MB = 16  # of small evidence, per shuffle partition
# Set on a session planned for small evidence (`planned_for`): what it keeps or caches is `narrowed`.
SMALL_PLAN = "spark.workbench.smallEvidence"
# The driver JVM's class-data sharing archive (`workbench.jvm_archive` builds it; `make` does): where it is,
# and, set while it is being built, where to write it.
JVM_ARCHIVE_ENV = "WORKBENCH_JVM_ARCHIVE"
JVM_ARCHIVE_DUMP_ENV = "WORKBENCH_JVM_ARCHIVE_DUMP"
JVM_JAR_ENV = "WORKBENCH_JVM_JAR"
# How the driver JVM compiles: "quick" (its first compiler only) answers a command or a notebook's
# questions on small evidence sooner; "full" (both, Java's default) is faster once warm and on large
# evidence; "shallow" is "full" with C2 inlining less deep, for a long session of many small plans (the
# tests): there C2 kept compiling Catalyst's deep call trees, half the CPU of the 7th warm triage, and
# shallower it compiles 2.5x less and triages 10-15% sooner (bench/README.md). The code cache is raised
# with "quick": C1's code alone fills the default.
JIT_ENV = "WORKBENCH_JIT"
JIT_OPTIONS = {
    "quick": ["-XX:TieredStopAtLevel=1", "-XX:ReservedCodeCacheSize=240m"],
    "full": [],
    "shallow": ["-XX:FreqInlineSize=50", "-XX:InlineSmallCode=500", "-XX:MaxInlineLevel=9"],
}


@contextlib.contextmanager
def _stderr_to(path: Path) -> Iterator[None]:
    """Point fd 2 at a file while the JVM starts, so that it inherits that file and not a notebook cell.

    ipykernel forwards fd-level output into whichever cell runs, which makes notebook outputs
    depend on timing (reference/ENVIRONMENT.md §2).
    """
    saved = os.dup(2)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(fd, 2)
    os.close(fd)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def jvm_archive() -> Path:
    """The class-data sharing archive of this environment's driver JVM: WORKBENCH_JVM_ARCHIVE, else beside
    this interpreter, one per PySpark version (it holds the classes of its jars, for one JDK)."""
    import pyspark

    default = Path(sys.prefix) / "share" / "workbench" / f"spark-{pyspark.__version__}.jsa"
    return Path(os.environ.get(JVM_ARCHIVE_ENV) or default)


def workbench_jar() -> Path:
    """Our JVM code (jvm/, the log parser of sources/jvm_logs.py) as `make` builds it: WORKBENCH_JVM_JAR,
    else beside this interpreter. Without it every log is parsed in Python workers, slower."""
    default = Path(sys.prefix) / "share" / "workbench" / "workbench-jvm.jar"
    return Path(os.environ.get(JVM_JAR_ENV) or default)


def jit_for(size_bytes: int) -> str:
    """How a session started for evidence of this size compiles (`JIT_OPTIONS`), unless WORKBENCH_JIT
    says."""
    return os.environ.get(JIT_ENV) or ("quick" if size_bytes < SMALL_EVIDENCE_MB * 2**20 else "full")


def driver_java_options(log4j: object, jit: str = "quick") -> str:
    """The driver JVM's options: our log4j settings; the JVM's own warnings on stderr, never stdout (a
    notebook's cell would show them); how it compiles (`JIT_OPTIONS`); the class-data sharing archive
    when there is one, which maps the classes Spark loads at start instead of reading and verifying them
    from its jars (start-up 8.0 s instead of 15.7, bench/README.md). A stale archive (another JDK or other
    jars) is refused by the JVM with a warning, and it starts without. WORKBENCH_JAVA_OPTIONS adds options
    of your own (JFR, say)."""
    if jit not in JIT_OPTIONS:
        raise ValueError(f"{JIT_ENV}={jit!r}: expected one of {', '.join(JIT_OPTIONS)}")
    options = [f"-Dlog4j2.configurationFile=file:{log4j}", "-Xlog:disable", "-Xlog:all=warning:stderr"]
    options += JIT_OPTIONS[jit]
    dump = os.environ.get(JVM_ARCHIVE_DUMP_ENV)
    if dump:
        options.append(f"-XX:ArchiveClassesAtExit={dump}")
    elif jvm_archive().is_file():
        options.append(f"-XX:SharedArchiveFile={jvm_archive()}")
    return " ".join([*options, os.environ.get("WORKBENCH_JAVA_OPTIONS", "")]).strip()


def spark_session(
    master: str | None = None, jvm_log: str | Path | None = None, jit: str | None = None
) -> SparkSession:
    """Return this process's SparkSession, creating it on first use.

    `master` overrides `WORKBENCH_SPARK_MASTER`; leave both unset under spark-submit to keep its master.
    `jvm_log` (or `WORKBENCH_JVM_LOG`) names a file for the JVM's stderr; notebooks use it. `jit` (or
    `WORKBENCH_JIT`): "quick" (the default: a notebook, a command on small evidence, `jit_for`), "full"
    (large evidence) or "shallow" (a long session of many small plans: the tests).
    """
    active = SparkSession.getActiveSession()
    if active is not None:
        remember_lookups(active)
        return active
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # Python workers (ZooKeeper files parse in them) run this interpreter, with its pyarrow, unless
    # the cluster says otherwise.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    log4j = files("workbench").joinpath("log4j2.properties")
    builder = (
        SparkSession.builder.appName(APP_NAME)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.execution.arrow.pyspark.enabled", "true")
        .config("spark.driver.bindAddress", os.environ["SPARK_LOCAL_IP"])
        .config(
            "spark.driver.extraJavaOptions",
            driver_java_options(log4j, jit or os.environ.get(JIT_ENV, "quick")),
        )
        .config("spark.sql.shuffle.partitions", os.environ.get("WORKBENCH_SHUFFLE_PARTITIONS", "8"))
        .config("spark.sql.codegen.cache.maxEntries", CODEGEN_CACHE_ENTRIES)
        .config("spark.python.sql.dataFrameDebugging.enabled", DATAFRAME_DEBUGGING)
    )
    master = master or os.environ.get("WORKBENCH_SPARK_MASTER")
    if master:
        builder = builder.master(master)
    elif "spark.master" not in os.environ.get("PYSPARK_SUBMIT_ARGS", ""):
        builder = builder.master("local[*]")
    if workbench_jar().is_file():  # Spark sends it to the executors too, wherever they run
        builder = builder.config("spark.jars", str(workbench_jar()))
    if "SPARK_DRIVER_MEMORY" not in os.environ:
        builder = builder.config("spark.driver.memory", DEFAULT_DRIVER_MEMORY)
    jvm_log = jvm_log or os.environ.get("WORKBENCH_JVM_LOG")
    if jvm_log:
        with _stderr_to(Path(jvm_log)):
            spark = builder.getOrCreate()
    else:
        spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    remember_lookups(spark)
    return spark


_BYTE_UNITS = {"": 1, "b": 1, "k": 2**10, "kb": 2**10, "m": 2**20, "mb": 2**20, "g": 2**30, "gb": 2**30,
               "t": 2**40, "tb": 2**40, "p": 2**50, "pb": 2**50}  # fmt: skip


def conf_bytes(spark: SparkSession, key: str, default: str) -> int:
    """A byte-size setting as Spark reads it (JavaUtils.byteStringAsBytes: '128m', '4MB', '134217728')
    through the public conf, which a Spark Connect session has too."""
    value = str(spark.conf.get(key, default)).strip().lower()
    number = value.rstrip("abcdefghijklmnopqrstuvwxyz")
    return int(number) * _BYTE_UNITS[value[len(number) :]]


def leaf_parallelism(spark: SparkSession) -> int:
    """SparkSession.leafNodeDefaultParallelism: spark.sql.leafNodeDefaultParallelism if set, else the
    context's default parallelism (spark.default.parallelism, or the cores a local master has)."""
    for key in ("spark.sql.leafNodeDefaultParallelism", "spark.default.parallelism"):
        value = spark.conf.get(key, None)
        if value:
            return int(value)
    try:
        return int(spark.sparkContext.defaultParallelism)
    except Exception:  # a Spark Connect session has no SparkContext: the machine's cores
        return os.cpu_count() or 1


def small_evidence(size_bytes: int) -> bool:
    """Whether evidence of this size is planned as small (`planned_for`): up to SMALL_EVIDENCE_MB, or
    WORKBENCH_SMALL_EVIDENCE_MB (0: never)."""
    limit = int(os.environ.get("WORKBENCH_SMALL_EVIDENCE_MB", SMALL_EVIDENCE_MB)) * 2**20
    return 0 <= size_bytes <= limit and limit > 0


def planned_for(spark: SparkSession, size_bytes: int) -> SparkSession:
    """A session of the bundle's own (`Bundle.spark`) with `spark`'s settings, its queries planned for
    evidence of this size. It shares `spark`'s context, cores and cache; its settings are its own, so
    that opening a bundle never changes the plans of `spark`'s other work (a notebook's own queries,
    another bundle's).

    On small evidence Spark's fixed cost per query and per job is the time, not the data. Below
    SMALL_EVIDENCE_MB: no code generation (it compiles every new plan and expression while each frame fits
    one task), no adaptive execution, no broadcast joins and no runtime bloom filters (each runs jobs of its
    own: triage of topicid-mismatch-2.8 in 71 jobs instead of 308), and one shuffle partition per
    SMALL_PARTITION_MB of evidence, at most one per core (bench/README.md). Larger evidence keeps the
    settings of `spark`.
    That changes the speed and the order Spark leaves rows in, never an answer (the analyses break every
    tie themselves; tests/test_triage.py triages under both plans). It may change the order in which a
    row's expressions are evaluated: a cast that a filter was meant to guard must be a try_cast (a path
    that is no partition's failed the query before 1f6221f).
    """
    own = spark.newSession()
    wanted = spark.conf.getAll  # what was set on `spark` (the builder's, and since), a new session lacks
    if small_evidence(size_bytes):
        partitions = min(leaf_parallelism(spark), 1 + size_bytes // (SMALL_PARTITION_MB * 2**20))
        wanted |= {
            "spark.sql.codegen.wholeStage": "false",
            # Expressions interpreted, not compiled to Java one by one with Janino: a cold triage of
            # topicid-mismatch-2.8 31-38 s instead of 37-49, a warm one no slower (bench/README.md).
            # Spark 4.3's SQLConf marks this setting internal, for its tests. Should a release drop it, the
            # value is ignored and expressions are compiled again: slower, the same answers.
            "spark.sql.codegen.factoryMode": "NO_CODEGEN",
            "spark.sql.adaptive.enabled": "false",
            "spark.sql.autoBroadcastJoinThreshold": "-1",
            # A kept view (a local checkpoint) has no size estimate, so Spark takes it for a huge table and
            # builds a runtime bloom filter (1 MB of bits, a job of its own) for every join against it.
            "spark.sql.optimizer.runtime.bloomFilter.enabled": "false",
            "spark.sql.shuffle.partitions": str(partitions),
        }
    for key, value in wanted.items():
        if own.conf.get(key, None) != value and own.conf.isModifiable(key):
            own.conf.set(key, value)
    own.conf.set(SMALL_PLAN, str(small_evidence(size_bytes)).lower())
    return own


def narrowed(frame: DataFrame) -> DataFrame:
    """`frame` in no more partitions than its session's shuffles, where that session is planned for small
    evidence: a frame kept or cached from a scan of many files (or a union) keeps their partitions, and
    every query that reads it after runs a task per partition in each of its stages (a warm triage of
    topicid-mismatch-2.8: 520 tasks in 244 stages, 211 in 147 narrowed; bench/README.md). Larger evidence
    keeps them all, so that its scans run on every core."""
    spark = frame.sparkSession
    if spark.conf.get(SMALL_PLAN, "false") != "true":
        return frame
    return frame.coalesce(int(spark.conf.get("spark.sql.shuffle.partitions") or 1))


def kept(frame: DataFrame) -> DataFrame:
    """A view many analyses read, computed once and kept by Spark with its lineage cut (a local
    checkpoint, made at its first use). Unlike cache(), every later query plans against one leaf instead
    of re-planning (and matching against the cache) the whole history's plan: on a small bundle that
    planning was most of triage's time. Its blocks live on the executors and are freed when the view is
    garbage-collected (not by clearCache()); an executor lost on a cluster fails the query that needs them
    instead of recomputing them."""
    return narrowed(frame).localCheckpoint(eager=False)
