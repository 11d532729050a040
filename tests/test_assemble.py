"""`workbench bundle assemble`: loose files sorted into a bundle by their content (capture/assemble.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import SAMPLE_DATA
from pyspark.sql import SparkSession
from test_kafka_topics import describe_2_8
from test_listings import _run, _tree
from test_zk_shell import _nodes, zkcli

from workbench.cli import main
from workbench.frames import open_bundle


@pytest.mark.slow
def test_loose_files_sorted_by_what_they_hold(
    spark: SparkSession, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sample = SAMPLE_DATA / "topicid-mismatch-2.8"
    loose = tmp_path / "channel"
    loose.mkdir()
    tree = tmp_path / "data"
    _tree(sample / "brokers" / "2" / "datadirs" / "0" / "listing.tsv", tree, 0.0)
    (loose / "paste-1.txt").write_text(_run(["ls", "-lR", "--full-time", "."], tree))
    (loose / "paste-2.txt").write_text(describe_2_8(sample / "zk" / "znodes.jsonl"))
    shutil.copyfile(sample / "brokers" / "2" / "logs" / "server.log", loose / "b2.log")
    nodes = _nodes(sample / "zk" / "znodes.jsonl")
    (loose / "paste-3.txt").write_text(
        zkcli(nodes, ["get /controller", "ls /brokers/ids"], "3.5", False, "UTC")
    )
    (loose / "notes.txt").write_text("the controller moved at 10:07, then orders went under-replicated\n")
    out = tmp_path / "bundle"
    taken = ["--taken-at", "2024-03-12T10:30:00Z", "--timezone", "UTC"]
    files = [str(loose / n) for n in ("paste-1.txt", "b2.log")]
    assert main(["bundle", "assemble", str(out), *files, "--broker", "2", *taken]) == 0
    pastes = [str(loose / n) for n in ("paste-2.txt", "paste-3.txt", "notes.txt")]
    assert main(["bundle", "assemble", str(out), *pastes]) == 1
    said = capsys.readouterr().out
    assert "not placed: " + str(loose / "notes.txt") in said
    assert main(["bundle", "assemble", str(out), str(loose / "b2.log")]) == 1  # whose log?
    other = tmp_path / "other" / "b2.log"  # another host's log of the same name
    other.parent.mkdir()
    shutil.copyfile(sample / "brokers" / "1" / "logs" / "server.log", other)
    assert main(["bundle", "assemble", str(out), str(loose / "b2.log"), "--broker", "2"]) == 0  # again
    assert main(["bundle", "assemble", str(out), str(other), "--broker", "2"]) == 1
    assert "brokers/2/logs/b2.log already holds another file" in capsys.readouterr().out
    assert (out / "brokers/2/logs/b2.log").read_bytes() == (loose / "b2.log").read_bytes()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["brokers"] == [2]
    assert {"file": "brokers/2/datadirs/0/listing.paste-1.txt", "taken_at": "2024-03-12T10:30:00Z",
            "timezone": "UTC"} in manifest["pasted"]  # fmt: skip
    b = open_bundle(out, spark)
    assert [f.file for f in b.evidence.log_files] == ["brokers/2/logs/b2.log"]
    listed = {r.path for r in b.datadir_files.where("file is not null").collect()}
    tsv = (sample / "brokers" / "2" / "datadirs" / "0" / "listing.tsv").read_text().splitlines()
    assert listed == {line.split("\t")[0] for line in tsv} - {".lock"}  # ls without -a hides it
    assert b.partition_descriptions.where("topic_id is not null").count() > 0
    assert {r.path for r in b.znodes_observed.collect()} == {"/controller", "/brokers/ids"}
    assert b.log_events.where("broker_id = 2").count() > 0
