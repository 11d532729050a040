"""Log layouts real clusters use, and bad input: every physical line ends in an event or in bad_records."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from workbench.bundle import log_files
from workbench.sources.logs import check_files, read_logs
from workbench.spark import conf_bytes, leaf_parallelism

GOOD = (
    "[2024-03-12 10:05:14,160] INFO [Controller id=1] 1 successfully elected as the controller. "
    "Epoch incremented to 4 and epoch zk version is now 4 (kafka.controller.KafkaController)\n"
    "[2024-03-12 10:06:01,340] INFO [Topic Deletion Manager 1] Deletion of topic payments "
    "successfully completed (kafka.controller.TopicDeletionManager)\n"
)


def _load(spark: SparkSession, paths: list[Path]):
    events, bad = read_logs(spark, log_files(paths, broker_id=3))
    return events.cache(), bad.cache()


def _physical_lines(p: Path) -> int:
    data = gzip.decompress(p.read_bytes()) if p.suffix == ".gz" else p.read_bytes()
    return len(data.splitlines())


def test_layout_variants(spark: SparkSession, tmp_path: Path) -> None:
    p = tmp_path / "server.log"
    p.write_text(
        "[2024-03-12T10:05:14.160] INFO [Controller id=1] Resigned (kafka.controller.KafkaController:412)\n"
        "kafka-2  | [2024-03-12 10:05:15,001] WARN [ZooKeeperClient Kafka server] Session expired. "
        "(kafka.zookeeper.ZooKeeperClient)\n"
        "[2024-03-12 10:05:16,002]FATAL [KafkaServer id=2] Fatal error during KafkaServer startup. "
        "Prepare to shutdown (kafka.server.KafkaServer)\n"
        "[2024-03-12 10:05:17,003] WARNING Opening socket connection to server zk1/10.0.0.5:2181. "
        "(org.apache.zookeeper.ClientCnxn)\n"
        "[2024-03-12 10:05:18,004+0100] INFO [Broker id=2] Handling StopReplica request correlationId 5 "
        "from controller 1 for 2 partitions (state.change.logger)\n",
        encoding="utf-8",
    )
    events, bad = _load(spark, [p])
    assert bad.count() == 0
    rows = events.orderBy("line_no").collect()
    assert [r.event for r in rows] == [
        "controller.resigned",
        "zk.client_session_expired",
        "broker.fatal",
        "zk.connecting",
        "request.stop_replica.handling",
    ]
    assert [r.level for r in rows] == ["INFO", "WARN", "FATAL", "WARN", "INFO"]
    assert rows[0].logger == "kafka.controller.KafkaController"
    assert rows[1].context == "ZooKeeperClient Kafka server"
    assert str(rows[4].ts) == "2024-03-12 09:05:18.004000"  # +0100 shown in UTC
    assert rows[4].attrs["correlation_id"] == "5" and rows[4].broker_id == 2  # its context says [Broker id=2]
    assert rows[0].broker_id == 1 and rows[1].broker_id == 3  # [Controller id=1]; no id: the file's broker
    assert {r.log for r in rows} == {"server"}


def test_bad_input_never_stops_the_rest(spark: SparkSession, tmp_path: Path) -> None:
    good = tmp_path / "controller.log"
    good.write_text(GOOD, encoding="utf-8")
    crlf = tmp_path / "controller.log.2024-03-12-10"
    crlf.write_bytes(GOOD.replace("\n", "\r\n").encode())
    truncated = tmp_path / "server.log.2024-03-12-09.gz"
    truncated.write_bytes(gzip.compress((GOOD * 2000).encode())[:3000])
    whole_gz = tmp_path / "state-change.log.1.gz"
    whole_gz.write_bytes(gzip.compress(GOOD.encode()))
    not_gz = tmp_path / "server.log.3.gz"
    not_gz.write_text(GOOD, encoding="utf-8")
    garbage = tmp_path / "log-cleaner.log"
    garbage.write_bytes(bytes(range(256)) * 40 + b"\n" + bytes(range(7, 100)) + b"\n")
    empty = tmp_path / "kafka-request.log"
    empty.write_bytes(b"")
    huge = tmp_path / "server.log.huge"
    huge.write_text(
        "[2024-03-12 10:00:00,000] INFO "
        + "x" * 5_000_000
        + " (kafka.log.LogManager)\n"
        + "y" * 5_000_000
        + "\n",
        encoding="utf-8",
    )
    latin1 = tmp_path / "server.log.latin1"
    latin1.write_bytes(
        "[2024-03-12 10:00:00,000] INFO Deleted log for partition orders-0 in /data/caf\xe9/orders-0."
        "5f0e8a3b2c1d4e6f8a9b0c1d2e3f4a5b-delete. (kafka.log.LogManager)\n".encode("latin-1")
    )
    files = [good, crlf, truncated, whole_gz, not_gz, garbage, empty, huge, latin1]
    events, bad = _load(spark, files)

    by_file = {r.file: r.n for r in events.groupBy("file").agg(F.sum("lines").alias("n")).collect()}
    lines_bad = {
        r.file: r.n
        for r in bad.where(F.col("raw") != "").groupBy("file").agg(F.count("*").alias("n")).collect()
    }
    for p in (good, crlf, whole_gz, garbage, empty, huge, latin1):
        assert by_file.get(str(p), 0) + lines_bad.get(str(p), 0) == _physical_lines(p), p.name

    assert events.where(F.col("file") == str(crlf)).where("event = 'deletion.completed'").count() == 1
    assert events.where(F.col("file") == str(good)).count() == 2

    reasons = {(Path(r.file).name, r.reason.split(" (")[0].split(";")[0]) for r in bad.collect()}
    assert ("server.log.2024-03-12-09.gz", "truncated or corrupt gzip") in reasons
    assert ("server.log.3.gz", "not gzip") in reasons
    assert ("log-cleaner.log", "binary or non-text data") in reasons
    assert not [r for r in reasons if r[0] in (good.name, crlf.name, whole_gz.name, latin1.name)]
    assert ("server.log.huge", "no log event before this line") not in reasons
    huge_bad = bad.where(F.col("file") == str(huge)).collect()
    assert [len(r.raw) for r in huge_bad] == [500]
    (big,) = events.where(F.col("file") == str(huge)).collect()
    assert len(big.message) == 5_000_000 and big.logger == "kafka.log.LogManager"
    (cafe,) = events.where(F.col("file") == str(latin1)).collect()
    assert (cafe.event, cafe.topic, cafe.partition) == ("log.deleted", "orders", 0)
    trunc = bad.where(F.col("file") == str(truncated)).first()
    assert trunc.position is not None and trunc.position > 1


def test_lines_before_any_event_are_quarantined(spark: SparkSession, tmp_path: Path) -> None:
    p = tmp_path / "server.log"
    p.write_text("\tat kafka.Foo.bar(Foo.scala:1)\n" + GOOD + "a stray note\n", encoding="utf-8")
    events, bad = _load(spark, [p])
    assert events.count() == 2
    assert [(r.position, r.reason.split(";")[0]) for r in bad.orderBy("position").collect()] == [
        (1, "no log event before this line"),
        (4, "text after a complete log event that is not a stack trace"),
    ]


@pytest.mark.parametrize("n", [0])
def test_no_files(spark: SparkSession, n: int) -> None:
    events, bad = read_logs(spark, [])
    assert events.count() == n and bad.count() == n


def _event_starts(text: str) -> list[tuple[int, int]]:
    """(line number, lines) of every event, the way the layout defines them: a header line and the
    lines after it up to the next header (none of these files has a stray line)."""
    starts = [i for i, line in enumerate(text.splitlines(), 1) if line.startswith("[20")]
    ends = [*starts[1:], len(text.splitlines()) + 1]
    return [(s, e - s) for s, e in zip(starts, ends, strict=True)]


def _long_log() -> str:
    """6,000 events: stack traces, the KafkaZkClient 'Stat ...' continuation and blank lines."""
    trace = "java.io.IOException: Broken pipe\n\tat kafka.Foo.bar(Foo.scala:1)\n\t... 3 more\n"
    parts = []
    for i in range(6000):
        ts = f"[2024-03-12 10:{i // 600 % 60:02d}:{i % 60:02d},{i % 1000:03d}]"
        if i % 7 == 0:
            parts.append(f"{ts} ERROR Error in loop {i} (kafka.network.Processor)\n{trace}")
        elif i % 11 == 0:
            parts.append(
                f"{ts} INFO Stat of the created znode at /brokers/ids/{i} is: 1,2\n"
                " (kafka.zk.KafkaZkClient)\n"
            )
        elif i % 13 == 0:
            parts.append(f"{ts} INFO Blank after {i} (kafka.server.KafkaServer)\n\n")
        else:
            parts.append(
                f"{ts} INFO [Partition t-{i % 50} broker=1] ISR updated to 1,2 (kafka.cluster.Partition)\n"
            )
    return "".join(parts)


@pytest.fixture
def small_splits(spark: SparkSession) -> Iterator[None]:
    """Spark cuts files into 64 KB splits, so that a test file is read in many."""
    before = spark.conf.get("spark.sql.files.maxPartitionBytes")
    spark.conf.set("spark.sql.files.maxPartitionBytes", str(64 * 1024))
    yield
    spark.conf.set("spark.sql.files.maxPartitionBytes", before)


def test_split_sizes_are_read_as_spark_reads_them(spark: SparkSession, small_splits: None) -> None:
    """The loader reads Spark's split settings through the public conf (a Spark Connect session has no JVM
    handle); what it reads is what the JVM's SQLConf holds."""
    jvm = spark._jsparkSession
    assert conf_bytes(spark, "spark.sql.files.maxPartitionBytes", "128m") == 64 * 1024
    assert (
        conf_bytes(spark, "spark.sql.files.openCostInBytes", "4m")
        == jvm.sessionState().conf().filesOpenCostInBytes()
    )
    assert leaf_parallelism(spark) == jvm.leafNodeDefaultParallelism()
    for written, read in (
        ("128m", 128 * 2**20),
        ("4MB", 4 * 2**20),
        ("1g", 2**30),
        ("12345", 12345),
        ("7b", 7),
    ):
        spark.conf.set("spark.sql.files.maxPartitionBytes", written)
        assert conf_bytes(spark, "spark.sql.files.maxPartitionBytes", "0") == read
        assert jvm.sessionState().conf().filesMaxPartitionBytes() == read


def test_line_numbers_across_splits(spark: SparkSession, tmp_path: Path, small_splits: None) -> None:
    """Files Spark splits into many parts number their lines as one file; CRLF and empty lines too."""
    text = _long_log()
    plain, crlf = tmp_path / "server.log", tmp_path / "controller.log"
    plain.write_text(text, encoding="utf-8")
    crlf.write_bytes(text.replace("\n", "\r\n").encode())
    events, bad = _load(spark, [plain, crlf])
    assert events.select("file").where(F.col("file").isNull()).count() == 0
    for p in (plain, crlf):
        got = sorted(
            (r.line_no, r.lines)
            for r in events.where(F.col("file") == str(p)).select("line_no", "lines").collect()
        )
        assert got == _event_starts(text), p.name
    assert bad.count() == 0
    errors = events.where("level = 'ERROR'")
    broken_pipe = errors.where("attrs['exception'] = 'java.io.IOException: Broken pipe'")
    assert broken_pipe.count() == errors.count() == 2 * 858


def test_large_gzip_is_read_in_splits(spark: SparkSession, tmp_path: Path, small_splits: None) -> None:
    """A rotated .gz larger than spark.sql.files.maxPartitionBytes is unpacked and read on many cores,
    yet its events and bad lines name the .gz and number its lines; a small one is read as it is."""
    log = _long_log()
    text = log + "\x00\x01binary tail\n"
    large, small = tmp_path / "server.log.1.gz", tmp_path / "server.log.2.gz"
    large.write_bytes(gzip.compress(text.encode()))
    small.write_bytes(gzip.compress(GOOD.encode()))
    assert large.stat().st_size < 64 * 1024 < len(text)  # it is the unpacked size that counts
    events, bad = _load(spark, [large, small])
    assert events.rdd.getNumPartitions() > 2
    got = sorted(
        (r.line_no, r.lines)
        for r in events.where(F.col("file") == str(large)).select("line_no", "lines").collect()
    )
    assert got == _event_starts(log)
    assert [(r.file, r.position) for r in bad.collect()] == [(str(large), len(text.splitlines()))]
    assert events.where(F.col("file") == str(small)).count() == 2
    assert events.count() == 6002


def test_unbracketed_idents_before_2_5_are_context(spark: SparkSession, tmp_path: Path) -> None:
    """Brokers before 2.5 began Partition's lines with 'Partition [t,0] on broker 1: '; the catalog's
    templates type them with that topic and partition, as they do bracketed idents."""
    p = tmp_path / "server.log"
    p.write_text(
        "[2018-06-01 10:00:00,000] INFO Partition [orders,3] on broker 1: Expanding ISR from 1 to 1,2 "
        "(kafka.cluster.Partition)\n"
        "[2018-06-01 10:00:01,000] INFO [Partition orders-4 broker=1] Expanding ISR from 1 to 1,2 "
        "(kafka.cluster.Partition)\n",
        encoding="utf-8",
    )
    events, bad = _load(spark, [p])
    rows = events.orderBy("line_no").collect()
    assert [(r.context, r.event, r.topic, r.partition, r.attrs["to_isr"]) for r in rows] == [
        ("Partition [orders,3] on broker 1", "isr.expand", "orders", 3, "1,2"),
        ("Partition orders-4 broker=1", "isr.expand", "orders", 4, "1,2"),
    ]
    assert rows[0].message == "Expanding ISR from 1 to 1,2" and bad.count() == 0


def test_a_gzip_that_cannot_be_unpacked_is_read_as_it_is(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A scratch dir that cannot take the copy is no fault of the log: said on stderr with the file,
    no bad record; a corrupt .gz leaves no copy behind, whatever the dir."""
    whole, cut = tmp_path / "server.log.1.gz", tmp_path / "server.log.2.gz"
    whole.write_bytes(gzip.compress((GOOD * 500).encode()))
    cut.write_bytes(gzip.compress((GOOD * 2000).encode())[:3000])
    files = log_files([whole, cut])
    names = frozenset(f.file for f in files)
    problems, unpacked = check_files(files, names, str(tmp_path / "missing"))
    assert unpacked == {}
    assert [p.file for p in problems] == [str(cut)]
    assert f"workbench: {whole}: cannot unpack it" in capsys.readouterr().err
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    problems, unpacked = check_files(files, names, str(scratch))
    assert list(unpacked) == [str(whole)]
    assert Path(unpacked[str(whole)]).read_bytes() == (GOOD * 500).encode()
    assert [p.file for p in problems] == [str(cut)]
    assert sorted(p.name for p in scratch.iterdir()) == [Path(unpacked[str(whole)]).name]


def test_prefixes_containers_and_collectors_put_before_each_line(spark: SparkSession, tmp_path: Path) -> None:
    """Kubernetes' CRI format (a line the runtime cut continues in the next record), a collector's time
    stamp, syslog's header and CRLF: each file's prefix comes off every line, the lines stay the file's."""
    elected = (
        "[2024-03-12 10:05:14,160] INFO [Controller id=1] 1 successfully elected as the controller. "
        "Epoch incremented to 4 and epoch zk version is now 4 (kafka.controller.KafkaController)"
    )
    expired = (
        "[2024-03-12 10:05:15,001] WARN [ZooKeeperClient Kafka server] Session expired. "
        "(kafka.zookeeper.ZooKeeperClient)"
    )
    trace = [
        "java.lang.IllegalStateException: boom",
        "\tat kafka.controller.KafkaController.elect(X.scala:1)",
    ]
    cri = tmp_path / "kafka-0_default_kafka-1a2b.log"
    cri.write_text(
        f"2024-03-12T10:05:14.160123456Z stdout F {elected}\n"
        f"2024-03-12T10:05:15.001000000Z stdout P {expired[:40]}\n"
        f"2024-03-12T10:05:15.001000001Z stdout F {expired[40:]}\n"
        f"2024-03-12T10:05:15.002000000Z stderr F {trace[0]}\n"
        f"2024-03-12T10:05:15.002000001Z stderr F {trace[1]}\n"
    )
    collector = tmp_path / "controller.log"
    collector.write_text(f"2024-03-12T10:05:14.200Z {elected}\n2024-03-12T10:05:15.100Z\t{expired}\n")
    syslog = tmp_path / "server.log"
    syslog.write_bytes(
        (
            f"Mar 12 10:05:14 broker-1 kafka[812]: {elected}\r\n"
            f"<30>Mar 12 10:05:15 broker-1 kafka[812]: {expired}\r\n"
        ).encode()
    )
    events, bad = _load(spark, [cri, collector, syslog])
    assert bad.count() == 0
    rows = {(Path(r.file).name, r.line_no): r for r in events.collect()}
    assert rows[cri.name, 1].event == "controller.elected" and rows[cri.name, 1].attrs["epoch"] == "4"
    cut = rows[cri.name, 2]  # the cut line's rest is a continuation of its message, then the trace
    assert (cut.event, cut.message, cut.lines) == ("zk.client_session_expired", "Session expired.", 4)
    assert cut.stack_trace.startswith("java.lang.IllegalStateException: boom\n\tat ")
    assert [rows[collector.name, n].event for n in (1, 2)] == [
        "controller.elected",
        "zk.client_session_expired",
    ]
    assert [rows[syslog.name, n].event for n in (1, 2)] == ["controller.elected", "zk.client_session_expired"]
    assert str(rows[syslog.name, 2].ts) == "2024-03-12 10:05:15.001000"  # Kafka's own stamp, not syslog's


def test_gc_logs_and_a_repeated_console_are_reported_not_read(spark: SparkSession, tmp_path: Path) -> None:
    for broker, names in (
        (1, ("server.log", "kafkaServer.out", "kafkaServer-gc.log")),
        (2, ("kafkaServer.out",)),
    ):
        folder = tmp_path / str(broker)
        folder.mkdir()
        for name in names:
            text = GOOD.replace("id=1", f"id={broker}").replace("Manager 1", f"Manager {broker}")
            (folder / name).write_text(text if "gc" not in name else "[0.004s][info][gc] Using G1\n")
    files = [f for b in (1, 2) for f in log_files(sorted((tmp_path / str(b)).iterdir()), broker_id=b)]
    events, bad = read_logs(spark, files)
    read = {(r.broker_id, Path(r.file).name) for r in events.select("broker_id", "file").distinct().collect()}
    assert read == {(1, "server.log"), (2, "kafkaServer.out")}  # broker 2's console is all there is of it
    reasons = {Path(r.file).name: r.reason for r in bad.collect()}
    assert set(reasons) == {"kafkaServer.out", "kafkaServer-gc.log"}
    assert reasons["kafkaServer-gc.log"].startswith("a JVM garbage-collection log")
    assert "server.log, which is read instead" in reasons["kafkaServer.out"]


def test_json_layouts_are_read_as_kafka_s_lines(spark: SparkSession, tmp_path: Path) -> None:
    """docker's json-file driver (Kafka's line in "log"), ECS, log4j 1's logstash layout and log4j2's
    JsonLayout: one record a line, its message typed like the layout's, a stack trace kept, a line that
    is not a record quarantined."""
    docker = tmp_path / "abc123-json.log"
    docker.write_text(
        '{"log":"[2024-03-12 10:05:14,160] INFO [Controller id=1] 1 successfully elected as the controller. '
        'Epoch incremented to 4 and epoch zk version is now 4 (kafka.controller.KafkaController)\\n",'
        '"stream":"stdout","time":"2024-03-12T10:05:14.160712Z"}\n'
        '{"log":"[2024-03-12 10:05:15,001] WARN [ZooKeeperClient Kafka server] Session expired. '
        '(kafka.zookeeper.ZooKeeperClient)\\n","stream":"stdout","time":"2024-03-12T10:05:15.001Z"}\n'
    )
    ecs = tmp_path / "server.json"
    ecs.write_text(
        '{"@timestamp":"2024-03-12T10:06:01.340Z","log.level":"INFO","message":"[Topic Deletion Manager 1] '
        'Deletion of topic payments successfully completed","ecs.version":"1.2.0",'
        '"process.thread.name":"controller-event-thread","log.logger":"kafka.controller.TopicDeletionManager"}\n'
        '{"@timestamp":"2024-03-12T10:06:02.000Z","log.level":"ERROR","message":"[Controller id=1] Error '
        'completing reassignment of partition orders-0","log.logger":"kafka.controller.KafkaController",'
        '"error.type":"java.lang.IllegalStateException",'
        '"error.stack_trace":"java.lang.IllegalStateException: boom\\n\\tat '
        'kafka.controller.KafkaController.x(KafkaController.scala:1)"}\n'
        "this line is not a record\n"
    )
    log4j2 = tmp_path / "controller.json"
    log4j2.write_text(
        '{"instant":{"epochSecond":1710237975,"nanoOfSecond":1000000},"thread":"main","level":"WARN",'
        '"loggerName":"kafka.zookeeper.ZooKeeperClient","message":"[ZooKeeperClient Kafka server] Session '
        'expired.","endOfBatch":false}\n'
        '{"timeMillis":1710237976000,"level":"INFO","loggerName":"kafka.controller.KafkaController",'
        '"message":"[Controller id=1] Resigned"}\n'
    )
    events, bad = _load(spark, [docker, ecs, log4j2])
    rows = {(Path(r.file).name, r.line_no): r for r in events.collect()}
    assert [rows[docker.name, n].event for n in (1, 2)] == ["controller.elected", "zk.client_session_expired"]
    assert rows[docker.name, 1].attrs["epoch"] == "4"
    done, failed = rows[ecs.name, 1], rows[ecs.name, 2]
    assert (done.event, done.topic, done.context) == (
        "deletion.completed",
        "payments",
        "Topic Deletion Manager 1",
    )
    assert (
        str(done.ts) == "2024-03-12 10:06:01.340000"
        and done.logger == "kafka.controller.TopicDeletionManager"
    )
    assert failed.level == "ERROR" and failed.stack_trace.endswith("(KafkaController.scala:1)")
    assert failed.attrs["exception"] == "java.lang.IllegalStateException: boom"
    expired, resigned = rows[log4j2.name, 1], rows[log4j2.name, 2]
    assert (expired.event, str(expired.ts)) == ("zk.client_session_expired", "2024-03-12 10:06:15.001000")
    assert (resigned.event, str(resigned.ts)) == ("controller.resigned", "2024-03-12 10:06:16")
    (odd,) = bad.collect()
    assert (Path(odd.file).name, odd.position, odd.raw) == (ecs.name, 3, "this line is not a record")
    assert odd.reason.startswith("text after a complete log event")


def test_a_logs_folder_several_brokers_share(spark: SparkSession, tmp_path: Path) -> None:
    """Brokers 1 and 2 of a laptop cluster write into one logs/ folder, captured once for each broker:
    the second copy is not read again, each line goes to the broker its context names, and coverage says
    how many events named none."""
    from workbench.analysis.findings import Coverage
    from workbench.analysis.triage import checked_across
    from workbench.frames import open_bundle

    shared = (
        "[2024-03-12 10:05:14,160] INFO [Controller id=1] 1 successfully elected as the controller. "
        "Epoch incremented to 4 and epoch zk version is now 4 (kafka.controller.KafkaController)\n"
        "[2024-03-12 10:05:14,170] INFO [ReplicaFetcher replicaId=2, leaderId=1, fetcherId=0] Starting "
        "(kafka.server.ReplicaFetcherThread)\n"
        "[2024-03-12 10:05:15,001] WARN [ZooKeeperClient Kafka server] Session expired. "
        "(kafka.zookeeper.ZooKeeperClient)\n"
        "[2024-03-12 10:05:16,000] INFO [Controller id=2] 2 successfully elected as the controller. "
        "Epoch incremented to 5 and epoch zk version is now 5 (kafka.controller.KafkaController)\n"
    )
    for broker in (1, 2):
        folder = tmp_path / "brokers" / str(broker) / "logs"
        folder.mkdir(parents=True)
        (folder / "server.log").write_text(shared)
    (tmp_path / "manifest.json").write_text('{"format": "kafka-evidence/1", "brokers": [1, 2]}')
    bundle = open_bundle(tmp_path, spark)
    rows = bundle.log_events.orderBy("line_no").collect()
    assert {r.file for r in rows} == {"brokers/1/logs/server.log"}
    assert [r.broker_id for r in rows] == [1, 2, 1, 2]  # the session line names no broker: the folder's
    (copy,) = bundle.bad_records.collect()
    assert copy.file == "brokers/2/logs/server.log" and copy.reason.startswith("the same bytes as brokers/1")
    coverage = Coverage()
    checked_across(bundle, coverage)
    check = coverage["log_attribution"]
    assert check.status == "partial" and check.missing == [
        "brokers/1/logs/server.log holds the lines of brokers 1, 2: 1 event(s) with no broker id of their "
        "own kept the folder's broker 1"
    ]


def test_lines_no_template_types_are_said_per_broker(spark: SparkSession, tmp_path: Path) -> None:
    """A broker's start-up: MX4J's line (kafka.utils.Mx4jLoader$) is typed; a controller's line no
    release of Kafka writes is not, and coverage names it with its broker and place; a request's or the
    signal handler's line, of a family the catalog leaves aside with a reason, is not counted. Without
    such a line, the check is done."""
    from workbench.analysis.findings import Coverage
    from workbench.analysis.triage import checked_across
    from workbench.frames import open_bundle

    lines = (
        "[2024-03-12 08:00:00,100] INFO Registered kafka:type=kafka.Log4jController MBean "
        "(kafka.utils.Log4jControllerRegistration$)\n"
        "[2024-03-12 08:00:00,200] INFO Registered signal handlers for TERM, INT, HUP "
        "(org.apache.kafka.common.utils.LoggingSignalHandler)\n"
        "[2024-03-12 08:00:00,300] INFO starting (kafka.server.KafkaServer)\n"
        "[2024-03-12 08:00:00,400] INFO Will not load MX4J, mx4j-tools.jar is not in the classpath "
        "(kafka.utils.Mx4jLoader$)\n"
        "[2024-03-12 08:00:01,000] INFO [Controller id=1] Made-up words no Kafka writes "
        "(kafka.controller.KafkaController)\n"
        "[2024-03-12 08:00:01,100] INFO Made-up words of a request (kafka.network.Processor)\n"
    )
    for broker, text in ((1, lines), (2, "".join(lines.splitlines(keepends=True)[:4]))):
        folder = tmp_path / "brokers" / str(broker) / "logs"
        folder.mkdir(parents=True)
        (folder / "server.log").write_text(text)
    (tmp_path / "manifest.json").write_text('{"format": "kafka-evidence/1", "brokers": [1, 2]}')
    bundle = open_bundle(tmp_path, spark)
    (mx4j,) = bundle.cluster_events.where("event = 'app.mx4j' and broker_id = 1").collect()
    assert mx4j.attrs["loaded"] == "false"
    coverage = Coverage()
    checked_across(bundle, coverage)
    check = coverage["log_lines"]
    assert check.status == "partial" and check.missing == [
        "broker 1: 1 line(s) no template types (kafka.controller.KafkaController; the first at "
        "brokers/1/logs/server.log line 5): what they say was not read"
    ]
    assert bundle.cluster_events.where("event is null").count() == 0
    typed = "".join(x for x in lines.splitlines(keepends=True) if "[Controller" not in x)
    (tmp_path / "brokers" / "1" / "logs" / "server.log").write_text(typed)
    coverage = Coverage()
    checked_across(open_bundle(tmp_path, spark), coverage)
    assert coverage["log_lines"].status == "done"


def test_messages_kafka_logs_from_a_variable_are_typed(spark: SparkSession, tmp_path: Path) -> None:
    """Lines Kafka logs from a val or a parameter (`info(message)`), which the listing of its log calls
    cannot see: a zombie controller's UpdateMetadata refused, a controlled shutdown from an old broker
    epoch, a ZooKeeper client reinitialising after an auth failure, a follower's batch whose producer epoch
    went back."""
    from workbench.frames import open_bundle

    folder = tmp_path / "brokers" / "1" / "logs"
    folder.mkdir(parents=True)
    (folder / "state-change.log").write_text(
        "[2024-03-12 08:00:01,000] WARN [Broker id=1] Received update metadata request with correlation id 7 "
        "from an old controller 2 with epoch 3. Latest known controller epoch is 4 (state.change.logger)\n"
    )
    (folder / "controller.log").write_text(
        "[2024-03-12 08:00:02,000] INFO [Controller id=1] Received controlled shutdown request from an old "
        "broker epoch 25 for broker 3. Current broker epoch is 40. (kafka.controller.KafkaController)\n"
    )
    (folder / "server.log").write_text(
        "[2024-03-12 08:00:03,000] INFO [ZooKeeperClient Kafka server] Reinitializing due to auth failure. "
        "(kafka.zookeeper.ZooKeeperClient)\n"
        "[2024-03-12 08:00:04,000] WARN Epoch of producer 4001 at offset 120 in orders-0 is 2, which is "
        "smaller than the last seen epoch 3 (kafka.log.ProducerAppendInfo)\n"
    )
    (tmp_path / "manifest.json").write_text('{"format": "kafka-evidence/1", "brokers": [1]}')
    rows = open_bundle(tmp_path, spark).log_events.orderBy("ts").collect()
    assert [r.event for r in rows] == [
        "request.update_metadata.stale_controller",
        "controlled_shutdown.stale_broker_epoch",
        "zk.client_auth_failed",
        "log.producer_epoch_stale",
    ]
    stale, shutdown, _, producer = (r.attrs for r in rows)
    assert (producer["producer_epoch"], producer["last_epoch"]) == ("2", "3")
    assert (stale["controller"], stale["controller_epoch"], stale["latest_epoch"]) == ("2", "3", "4")
    assert (shutdown["broker"], shutdown["broker_epoch"], shutdown["current_epoch"]) == ("3", "25", "40")
