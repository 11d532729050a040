"""Evidence wherever it lands (strays.py, recognise.py): files outside their kind's place are read as what
they hold, the same as when `bundle assemble` places them; what no reader takes is named with why."""

from __future__ import annotations

import gzip
import re
import shutil
from pathlib import Path

import pytest
from conftest import SAMPLE_DATA
from pyspark.sql import DataFrame, SparkSession
from test_kafka_topics import describe_2_8
from test_listings import _run, _tree
from test_zk_shell import _nodes, zkcli

from workbench.bundle import Evidence
from workbench.capture.assemble import assemble
from workbench.cli import main
from workbench.frames import open_bundle
from workbench.recognise import recognise

SAMPLE = SAMPLE_DATA / "topicid-mismatch-2.8"


def _start_up(sample_log: Path) -> str:
    """A broker's server.log as it starts: its settings as AbstractConfig.logAll writes them under one
    header (a tab, `name = value` each, the logger on a line of its own: 3.6.2:357-370), hundreds of
    lines, before the lines of a sample's log."""
    settings = "".join(f"\tsetting.{i:03d}.name = value-{i}\n" for i in range(400))
    block = f"[2024-03-12 09:00:00,100] INFO KafkaConfig values: \n{settings} (kafka.server.KafkaConfig)\n"
    return block * 2 + sample_log.read_text(encoding="utf-8")


def test_a_kafka_log_is_known_by_its_loggers(tmp_path: Path, real_evidence: Path) -> None:
    log = SAMPLE / "brokers" / "1" / "logs" / "server.log"
    started = tmp_path / "server.log"
    started.write_text(_start_up(log), encoding="utf-8")
    assert recognise(started) == ("log", "")  # a quarter of its lines are no header: still a log
    # a crash leaves NUL blocks in a log (a real 2.8 server.log had 45 KiB of them): read around them
    padded = tmp_path / "crashed.log"
    padded.write_bytes(log.read_bytes()[:5000] + b"\x00" * 40000 + log.read_bytes()[5000:20000])
    assert recognise(padded) == ("log", "")
    with gzip.open(tmp_path / "server.log.1.gz", "wb") as z:
        z.write(started.read_bytes())
    assert recognise(tmp_path / "server.log.1.gz") == ("log", "")
    for real in sorted((real_evidence / "logs").glob("*.log")):
        assert recognise(real) == ("log", ""), real.name
    # the same header with no logger of Kafka's: another program's log4j, not a broker's
    other = tmp_path / "app.log"
    other.write_text(re.sub(r"\((?:kafka|state|org)\.", "(com.example.", log.read_text()), encoding="utf-8")
    assert recognise(other)[0] is None
    snapshot = next((real_evidence / "zk-snapshots-3.6.3").glob("snapshot.*"))
    assert recognise(snapshot) == (None, "binary")
    (tmp_path / "empty.log").write_text("")
    assert recognise(tmp_path / "empty.log") == (None, "empty")
    notes = tmp_path / "notes.txt"
    notes.write_text("the controller moved at 10:07, then orders went under-replicated\n")
    assert recognise(notes)[1].startswith("no known format")


def _channel(tmp: Path) -> dict[str, Path]:
    """What an incident channel holds: a listing of broker 2's log dir, a describe, a zkCli session,
    broker 2's server.log as it starts, notes and a heap dump."""
    loose = tmp / "channel"
    loose.mkdir()
    tree = tmp / "data"
    _tree(SAMPLE / "brokers" / "2" / "datadirs" / "0" / "listing.tsv", tree, 0.0)
    nodes = _nodes(SAMPLE / "zk" / "znodes.jsonl")
    files = {
        "ls.txt": _run(["ls", "-lR", "--full-time", "."], tree),
        "describe.txt": describe_2_8(SAMPLE / "zk" / "znodes.jsonl"),
        "zk-session.txt": zkcli(nodes, ["get /controller", "ls /brokers/ids"], "3.5", False, "UTC"),
        "b2-server.log": _start_up(SAMPLE / "brokers" / "2" / "logs" / "server.log"),
        "what-i-saw.txt": "the controller moved at 10:07, then orders went under-replicated\n",
    }
    for name, text in files.items():
        (loose / name).write_text(text, encoding="utf-8")
    (loose / "heap.hprof").write_bytes(bytes(range(256)) * 64)
    return {name: loose / name for name in [*files, "heap.hprof"]}


def _bare(tmp: Path, name: str) -> Path:
    """The sample's manifest alone: a bundle to put the channel's files in."""
    out = tmp / name
    out.mkdir()
    shutil.copyfile(SAMPLE / "manifest.json", out / "manifest.json")
    return out


@pytest.mark.slow
def test_strays_read_where_they_lie_as_assemble_places_them(spark: SparkSession, tmp_path: Path) -> None:
    loose = _channel(tmp_path)
    placed = _bare(tmp_path, "assembled")
    said = assemble(placed, [loose["ls.txt"], loose["b2-server.log"]], broker=2)
    assert not said["not placed"], said
    said = assemble(placed, [loose["describe.txt"], loose["zk-session.txt"], loose["what-i-saw.txt"]])
    assert said["not placed"] == [f"{loose['what-i-saw.txt']}: " + recognise(loose["what-i-saw.txt"])[1]]
    strewn = _bare(tmp_path, "strewn")
    where = {  # as people leave them
        "zk-session.txt": "zk/zk-session.txt",
        "ls.txt": "brokers/2/datadirs/0/ls.txt",
        "describe.txt": "brokers/1/describe.txt",
        "b2-server.log": "brokers/2/b2-server.log",
        "what-i-saw.txt": "brokers/1/what-i-saw.txt",
        "heap.hprof": "heap.hprof",
    }
    for name, rel in where.items():
        (strewn / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(loose[name], strewn / rel)
    ev = Evidence.open(strewn)
    assert [(n.file, n.why) for n in ev.not_read] == [
        ("brokers/1/what-i-saw.txt", recognise(loose["what-i-saw.txt"])[1]),
        ("heap.hprof", "binary"),
    ]
    assert [f.file for f in ev.log_files] == ["brokers/2/b2-server.log"]
    assert {p.file for p in ev.pasted} == {"zk/zk-session.txt", "brokers/1/describe.txt"}
    assert [(d.broker_id, d.name, [p.file for p in d.pasted]) for d in ev.log_dirs] == [
        (2, "0", ["brokers/2/datadirs/0/ls.txt"])
    ]
    a, b = open_bundle(placed, spark), open_bundle(strewn, spark)
    for frame in ("partition_descriptions", "znodes_observed", "datadir_files", "log_events"):
        assert _rows(getattr(a, frame)) == _rows(getattr(b, frame)), frame
        assert getattr(b, frame).count() > 0, frame


def _rows(df: DataFrame) -> list[tuple[object, ...]]:
    """A frame's rows without where they were read from (the files' names differ, nothing else)."""
    kept = [c for c in df.columns if c not in ("file", "listing", "line_no", "raw") and "file" not in c]
    return sorted((tuple(r) for r in df.select(kept).collect()), key=repr)


@pytest.mark.slow
def test_a_file_no_reader_takes_is_named_first(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], spark: SparkSession
) -> None:
    bundle = tmp_path / "handmade"
    shutil.copytree(SAMPLE_DATA / "handmade-2.8", bundle)
    (bundle / "brokers" / "1" / "what-i-saw.txt").write_text("orders stalled at 10:07\n")
    (bundle / "zk").mkdir()
    (bundle / "zk" / "dump.bin").write_bytes(bytes(range(256)) * 16)
    assert main(["triage", str(bundle)]) in (0, 1)
    out = capsys.readouterr().out.splitlines()
    assert out[2].startswith("Files in the bundle no reader could take")
    assert out[3:5] == [
        f"  brokers/1/what-i-saw.txt: {recognise(bundle / 'brokers/1/what-i-saw.txt')[1]}",
        "  zk/dump.bin: binary",
    ]
    assert "Files not read: 2 (named at the top)" in out
    assert main(["load", str(bundle)]) == 0
    said = capsys.readouterr().out
    assert "files not read\n  brokers/1/what-i-saw.txt: no known format" in said


def test_a_brokers_server_properties_is_read_under_any_name(tmp_path: Path) -> None:
    """Broker 2's server.properties copied as notes/my-props.txt is read as its config, the same as at
    its place; a second copy beside the one at its place is named, not read; one outside any broker's
    folder is named with where it belongs. A log dir's meta.properties and log4j's properties are not a
    broker's config. `bundle assemble` places one at brokers/<id>/server.properties, its secrets
    redacted."""
    from workbench.model.evidence import evidence_of

    intact = evidence_of(Evidence.open(SAMPLE))
    bundle = tmp_path / "moved"
    shutil.copytree(SAMPLE, bundle, ignore=shutil.ignore_patterns("truth.json"))
    props = bundle / "brokers" / "2" / "server.properties"
    (bundle / "brokers" / "2" / "notes").mkdir()
    props.rename(bundle / "brokers" / "2" / "notes" / "my-props.txt")
    moved = Evidence.open(bundle)
    held = evidence_of(moved)
    assert held.configs == intact.configs and held.configs[2]["zookeeper.connect"]
    assert held.config_files[2] == "brokers/2/notes/my-props.txt"
    assert not [n for n in moved.not_read if not n.known]
    shutil.copyfile(bundle / "brokers" / "2" / "notes" / "my-props.txt", props)
    shutil.copyfile(props, bundle / "my-props.txt")
    named = {n.file: n.why for n in Evidence.open(bundle).not_read}
    assert named["brokers/2/notes/my-props.txt"] == (
        "a second server.properties of broker 2: brokers/2/server.properties is read"
    )
    assert named["my-props.txt"] == (
        "a broker's server.properties, but whose? Put it at brokers/<id>/server.properties"
    )
    (tmp_path / "meta.properties").write_text("version=0\nbroker.id=1\ncluster.id=Xq1\n")
    (tmp_path / "log4j.properties").write_text("log4j.rootLogger=INFO, stdout\n")
    assert recognise(tmp_path / "meta.properties")[0] is None
    assert recognise(tmp_path / "log4j.properties")[0] is None
    secret = tmp_path / "broker-3.conf"
    secret.write_text("broker.id=3\nlisteners=SASL_SSL://:9093\nssl.keystore.password=hunter2\n")
    out = tmp_path / "assembled"
    said = assemble(out, [secret], broker=3)
    placed = "brokers/3/server.properties (properties, 1 secret value(s) redacted)"
    assert said["placed"] == [f"{secret} -> {placed}"]
    assert "hunter2" not in (out / "brokers" / "3" / "server.properties").read_text()
    whose = "a broker's properties; say whose with --broker N"
    assert assemble(out, [secret])["not placed"] == [f"{secret}: {whose}"]
