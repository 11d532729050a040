"""Pasted ZooKeeper shell transcripts (sources/zk_shell.py): the real zkCli against a real server, then
transcripts written the way ZooKeeperMain printed at 3.4, 3.5 and 3.8 from a sample's ZooKeeper tree, each
read back to what ZooKeeper holds; and what is not a fact said in bad_records."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from conftest import SAMPLE_DATA, with_pastes
from pyspark.sql import SparkSession

from workbench.analysis.triage import Triage
from workbench.frames import open_bundle

SAMPLE = SAMPLE_DATA / "topicid-mismatch-2.8"
STAT = ("cZxid", "ctime", "mZxid", "mtime", "pZxid", "cversion", "dataVersion", "aclVersion")
STAT_FIELDS = (
    "czxid",
    "mzxid",
    "pzxid",
    "version",
    "cversion",
    "aversion",
    "ephemeral_owner",
    "num_children",
)


def _nodes(znodes_jsonl: Path) -> dict[str, dict[str, Any]]:
    return {z["path"]: z for z in map(json.loads, znodes_jsonl.read_text(encoding="utf-8").splitlines())}


def _date(ms: int, zone: str) -> str:
    """java.util.Date.toString() in the JVM's zone: `Tue Mar 12 10:07:00 UTC 2024`."""
    t = datetime.fromtimestamp(ms / 1000, ZoneInfo(zone))
    return t.strftime(f"%a %b %d %H:%M:%S {t.tzname()} %Y")


def _stat(z: dict[str, Any], zone: str) -> list[str]:
    """StatPrinter (3.5.9 cli/StatPrinter.java l.35-48; ZooKeeperMain.printStat at 3.4.14 l.135-148)."""
    s = z["stat"]
    return [
        f"cZxid = 0x{s['czxid']:x}",
        f"ctime = {_date(s['ctime'], zone)}",
        f"mZxid = 0x{s['mzxid']:x}",
        f"mtime = {_date(s['mtime'], zone)}",
        f"pZxid = 0x{s['pzxid']:x}",
        f"cversion = {s['cversion']}",
        f"dataVersion = {s['version']}",
        f"aclVersion = {s['aversion']}",
        f"ephemeralOwner = 0x{s['ephemeralOwner'] & (2**64 - 1):x}",
        f"dataLength = {s['dataLength']}",
        f"numChildren = {s['numChildren']}",
    ]


def zkcli(
    nodes: dict[str, dict[str, Any]], commands: list[str], version: str, prompt: bool, zone: str
) -> str:
    """A zkCli / zookeeper-shell session as ZooKeeperMain `version` prints it (docs/pasted-evidence.md):
    3.4 prints get's stat always and ls unsorted; 3.5 glues ls -s's list to its stat and words a missing
    node NoNodeException for get; 3.8 is today's. With `prompt` the JLine prompt, else the echo alone
    (Kafka's zookeeper-shell ships no JLine)."""
    out = [
        "Connecting to zk1:2181/",
        "Welcome to ZooKeeper!",
        f"JLine support is {'en' if prompt else 'dis'}abled",
    ]
    out += ["", "WATCHER::", "", "WatchedEvent state:SyncConnected type:None path:null"]
    for n, cmd in enumerate(commands):
        out.append(f"[zk: zk1:2181(CONNECTED) {n}] {cmd}" if prompt else cmd)
        name, *args = cmd.split()
        path, flags = args[-1], args[:-1]
        z = nodes.get(path)
        if z is None:
            nonode = version == "3.5" and name == "get"
            out.append(
                f"org.apache.zookeeper.KeeperException$NoNodeException: KeeperErrorCode = NoNode for {path}"
                if nonode
                else f"Node does not exist: {path}"
            )
            continue
        children = [
            p.rsplit("/", 1)[1] for p in nodes if p.rsplit("/", 1)[0] == path.rstrip("/") and p != "/"
        ]
        children = children[::-1] if version == "3.4" else sorted(children)
        listed = "[" + ", ".join(children) + "]"
        if name == "get":
            out.append("null" if z["data"] is None else z["data"])
            if version == "3.4" or "-s" in flags:
                out += _stat(z, zone)
        elif name == "ls" and "-s" in flags and version == "3.5":
            stat = _stat(z, zone)
            out += [listed + stat[0], *stat[1:], ""]
        elif name in ("ls", "ls2"):
            out.append(listed)
            if "-s" in flags or name == "ls2":
                out += _stat(z, zone)
        elif name == "stat":
            out += _stat(z, zone)
    return "\n".join(out) + "\n"


def _bundle(tmp: Path, pastes: dict[str, str], said: dict[str, Any], zk: bool = True) -> Path:
    return with_pastes(tmp, SAMPLE.name, pastes, said, zk)


def _same_as_zookeeper(observed: Any, truth: dict[str, Any]) -> None:
    """An observation agrees with ZooKeeper's znode wherever it shows a field."""
    s = truth["stat"]
    want = dict(
        zip(STAT_FIELDS[:5], (s["czxid"], s["mzxid"], s["pzxid"], s["version"], s["cversion"]), strict=True)
    )
    want |= {
        "aversion": s["aversion"],
        "ephemeral_owner": s["ephemeralOwner"],
        "num_children": s["numChildren"],
    }
    for field, value in want.items():
        if observed[field] is not None:
            assert observed[field] == value, (observed.path, field)
    if observed.ctime is not None:
        assert observed.ctime == datetime.fromtimestamp(s["ctime"] // 1000, timezone.utc).replace(tzinfo=None)
    if observed.data_shown:
        assert observed.data == truth["data"], observed.path
        assert observed.data_length in (None, s["dataLength"])


COMMANDS = [
    "get -s /brokers/topics/orders",
    "get /brokers/topics/topic-0",
    "ls /brokers/topics",
    "ls -s /brokers/ids",
    "stat /controller_epoch",
    "get /controller",
    "get /admin/delete_topics/orders",
    "ls /admin/delete_topics",
]


@pytest.mark.slow
def test_transcripts_of_each_version_read_back_to_zookeepers_tree(
    spark: SparkSession, tmp_path: Path
) -> None:
    nodes = _nodes(SAMPLE / "zk" / "znodes.jsonl")
    pastes = {
        "3.4.txt": zkcli(
            nodes, [c.replace(" -s", "") for c in COMMANDS] + ["ls2 /brokers"], "3.4", True, "UTC"
        ),
        "3.5.txt": zkcli(nodes, COMMANDS, "3.5", False, "America/New_York"),  # Kafka 2.4-2.8's shell
        "3.8.txt": zkcli(nodes, COMMANDS, "3.8", True, "Asia/Kolkata"),
    }
    b = open_bundle(_bundle(tmp_path, pastes, {}), spark)
    rows = b.znodes_observed.collect()
    assert b.bad_records.where("source in ('zookeeper-shell', 'pasted')").count() == 0
    by_file: dict[str, list[Any]] = {}
    for r in rows:
        by_file.setdefault(r.file, []).append(r)
    for name in pastes:
        shown = by_file[f"pasted/{name}"]
        assert len(shown) == len(COMMANDS) + (name == "3.4.txt"), name
        for r in shown:
            if r.path in nodes:
                assert r.exists, (name, r.path)
                _same_as_zookeeper(r, nodes[r.path])
            else:
                assert r.exists is False and r.path == "/admin/delete_topics/orders"
            if r.children is not None:
                assert sorted(r.children) == sorted(
                    p.rsplit("/", 1)[1] for p in nodes if p.rsplit("/", 1)[0] == r.path
                )
    stat = [r for r in by_file["pasted/3.4.txt"] if r.command.startswith("get /brokers/topics/topic-0")]
    assert stat[0].czxid is not None and stat[0].ctime is not None  # 3.4: get always prints the stat
    glued = [r for r in by_file["pasted/3.5.txt"] if r.observed_as == "ls -s"]
    assert glued[0].czxid == nodes["/brokers/ids"]["stat"]["czxid"] and glued[0].children
    for name in ("3.5.txt", "3.8.txt"):  # EST, IST: a zone's name, not an offset, and the manifest has none
        assert all(r.ctime is None for r in by_file[f"pasted/{name}"])


@pytest.mark.slow
def test_the_real_zookeeper_shell(spark: SparkSession, tmp_path: Path, zookeeper: Any) -> None:
    """zookeeper-shell.sh runs ZooKeeperMain with a host and a command; here Debian's ZooKeeper's own,
    against a server holding the sample's tree, the JVM in India's zone as the on-call's host was."""
    from kazoo.client import KazooClient

    from workbench.testing.zookeeper import SHORT_LIVED_JVM, classpath

    nodes = _nodes(SAMPLE / "zk" / "znodes.jsonl")
    zk = KazooClient(hosts=zookeeper.hosts)
    zk.start()
    try:
        for path, z in sorted(nodes.items()):
            if path != "/" and not path.startswith("/zookeeper"):
                zk.create(path, (z["data"] or "").encode())  # kazoo writes no null data: empty instead
        commands = [*COMMANDS, "ls -R /brokers/ids", "get /brokers/topics/orders/partitions"]
        paste = []
        for cmd in commands:
            paste.append(f"[kafka@b1 ~]$ bin/zookeeper-shell.sh {zookeeper.hosts} {cmd}")
            java = [
                "java",
                *SHORT_LIVED_JVM,
                "-Duser.timezone=Asia/Kolkata",
                "-cp",
                classpath(),
                "org.apache.zookeeper.ZooKeeperMain",
            ]
            done = subprocess.run(
                [*java, "-server", zookeeper.hosts, *cmd.split()],
                capture_output=True,
                text=True,
                timeout=60,
            )
            paste.append(done.stdout.removesuffix("\n"))  # its last line may be empty data
            paste += done.stderr.splitlines()  # a terminal shows both
        truth = {}
        for path in nodes:
            if zk.exists(path) and not path.startswith("/zookeeper"):
                data, stat = zk.get(path)
                truth[path] = {
                    "data": None if data is None else data.decode(),
                    "stat": {
                        "czxid": stat.czxid,
                        "mzxid": stat.mzxid,
                        "pzxid": stat.pzxid,
                        "ctime": stat.ctime,
                        "version": stat.version,
                        "cversion": stat.cversion,
                        "aversion": stat.aversion,
                        "ephemeralOwner": stat.ephemeralOwner,
                        "dataLength": stat.dataLength,
                        "numChildren": stat.numChildren,
                    },
                }
    finally:
        zk.stop()
    said = {"taken_at": "2026-11-28T03:30:00Z", "timezone": "Asia/Kolkata"}
    b = open_bundle(_bundle(tmp_path, {"zk.txt": "\n".join(paste) + "\n"}, said), spark)
    assert b.bad_records.where("source in ('zookeeper-shell', 'pasted')").collect() == []
    rows = b.znodes_observed.collect()
    assert {r.command for r in rows if r.observed_as != "ls -R"} == set(commands) - {"ls -R /brokers/ids"}
    assert {r.path for r in rows if r.observed_as == "ls -R"} == {
        p for p in truth if p.startswith("/brokers/ids")
    }
    for r in rows:
        assert r.taken_at == datetime(2026, 11, 28, 3, 30)
        if r.path in truth:
            _same_as_zookeeper(r, truth[r.path])
            assert r.exists
        else:
            assert r.exists is False and r.path == "/admin/delete_topics/orders"
    topic = next(r for r in rows if r.command == "get -s /brokers/topics/orders")
    assert topic.ctime is not None and topic.data_length == len(truth["/brokers/topics/orders"]["data"])


ORDERS = '{"version":2,"partitions":{"0":[1,2,3]},"adding_replicas":{},"removing_replicas":{}}'
STAT_LINES = """\
cZxid = 0x{zxid:x}
ctime = Tue Mar 12 10:07:00 CST 2024
mZxid = 0x{zxid:x}
mtime = Tue Mar 12 10:07:00 CST 2024
pZxid = 0x{zxid:x}
cversion = 0
dataVersion = 0
aclVersion = 0
ephemeralOwner = 0x{owner:x}
dataLength = {length}
numChildren = 0"""
BY_HAND = f"""\
[zk: zk1:2181(CONNECTED) 0] get -s /brokers/topics/orders
{ORDERS[:40]}
{ORDERS[40:]}
{STAT_LINES.format(zxid=0x1A, owner=0, length=len(ORDERS))}
[zk: zk1:2181(CONNECTED) 1] delete /controller
[zk: zk1:2181(CONNECTED) 2] ls /brokers/ids
[1, 3]
where is 2?
[zk: zk1:2181(CONNECTED) 3] stat /controller
{STAT_LINES.format(zxid=0x2F, owner=0xFFFFFFFFFFFFFFFF, length=54)}
(CONNECTED [zk1:2181]) /brokers> tree
.
├── ids
│   ├── 1
├── topics
│   ├── orders
│   │   ├── partitions
[zk: zk1:2181(CONNECTED) 4] get -x /brokers/ids/1
00000000  7b 22 6a 6d 78 5f 70 6f  72 74 22 3a 2d 31 7d     |{{"jmx_port":-1}}|
[zk: zk1:2181(CONNECTED) 5] get /controller_epoch
"""
TREE_ALONE = "├── brokers\n│   ├── ids\n"


@pytest.mark.slow
def test_what_is_not_a_fact_is_said(spark: SparkSession, tmp_path: Path) -> None:
    """A line wrapped by the terminal, a write typed, a stray line, a zone named ambiguously, a paste cut
    short and a tree without its command: each said in bad_records or left null, never guessed."""
    b = open_bundle(_bundle(tmp_path, {"a.txt": BY_HAND, "b.txt": TREE_ALONE}, {}), spark)
    rows = {(r.command, r.path): r for r in b.znodes_observed.collect()}
    wrapped = rows["get -s /brokers/topics/orders", "/brokers/topics/orders"]
    assert (wrapped.exists, wrapped.data_shown, wrapped.data, wrapped.czxid) == (True, False, None, 0x1A)
    assert rows["ls /brokers/ids", "/brokers/ids"].children == ["1", "3"]
    controller = rows["stat /controller", "/controller"]
    assert (controller.ctime, controller.ephemeral_owner, controller.czxid) == (None, -1, 0x2F)  # CST: which?
    shown = {p for c, p in rows if c == "tree"}
    assert shown == {
        "/brokers",
        "/brokers/ids",
        "/brokers/ids/1",
        "/brokers/topics",
        "/brokers/topics/orders",
        "/brokers/topics/orders/partitions",
    }
    assert not any(p == "/controller_epoch" for _, p in rows)
    hexdump = rows["get -x /brokers/ids/1", "/brokers/ids/1"]
    assert (hexdump.exists, hexdump.data_shown, hexdump.data) == (True, False, None)
    bad = {(r.file, r.position): r.reason for r in b.bad_records.where("source != 'log'").collect()}
    tree_alone = "a zk_shell tree without its command: the path it starts from is not known"
    wrapped_by = f"the data shown is {len(ORDERS) + 1} bytes, its dataLength {len(ORDERS)}"  # + the wrap's \n
    assert bad == {
        ("pasted/a.txt", 1): wrapped_by + ": wrapped or cut by the terminal",
        (
            "pasted/a.txt",
            15,
        ): "a write to ZooKeeper typed in the transcript: not state (later commands show its effect)",
        ("pasted/a.txt", 18): "not a line of `ls`'s output (ZooKeeper 3.4-3.9)",
        ("pasted/a.txt", 38): "the data as get -x prints it (a hex dump, 3.9.3+) is not read",
        ("pasted/a.txt", 40): "`get` shows no output here: the paste is cut short?",
        ("pasted/b.txt", 1): tree_alone,
        ("pasted/b.txt", 2): tree_alone,
    }


@pytest.mark.slow
def test_topic_ids_from_a_transcript_where_zookeeper_is_missing(
    spark: SparkSession, triaged: Callable[[str], Triage], tmp_path: Path
) -> None:
    """Without ZooKeeper's tree, the topic znodes a pasted zookeeper-shell showed stand in for it: the same
    mismatches as the collected bundle; a znode shown without topic_id is found, with the moment."""
    from workbench.analysis import topic_ids
    from workbench.analysis.findings import Coverage

    class TopicIds:  # the topic_ids analysis alone, as triage runs it
        def __init__(self, bundle: Any) -> None:
            self.coverage = Coverage()
            self.findings = topic_ids.ANALYSIS.findings(bundle, self.coverage)

        def of_kind(self, kind: str) -> list[Any]:
            return [f for f in self.findings if f.kind == kind]

    nodes = _nodes(SAMPLE / "zk" / "znodes.jsonl")
    topics = sorted(p for p in nodes if p.count("/") == 3 and p.startswith("/brokers/topics/"))
    paste = zkcli(nodes, [f"get {t}" for t in topics], "3.5", False, "UTC")
    said = {"taken_at": "2024-03-12T10:41:00+01:00"}

    def found(result: Any, kind: str) -> set[tuple[Any, ...]]:
        return {
            tuple(sorted((k, str(v)) for k, v in f.subject.items()))
            for f in result.findings
            if f.kind == kind
        }

    collected = triaged(SAMPLE.name)
    pasted = TopicIds(open_bundle(_bundle(tmp_path / "1", {"zk.txt": paste}, said, zk=False), spark))
    assert found(pasted, "topic_id.mismatch") == found(collected, "topic_id.mismatch") != set()
    assert not pasted.of_kind("topic_id.missing")
    finding = pasted.of_kind("topic_id.mismatch")[0]
    assert finding.evidence[0].startswith("pasted/zk.txt:") and "2024-03-12 09:41:00 UTC" in finding.summary
    assert "a ZooKeeper shell transcript" in " ".join(pasted.coverage["topic_ids"].used)
    # made without Kafka's chroot: /kafka/brokers/topics/<t> is Kafka's /brokers/topics/<t>
    rooted = {"/kafka" + path.rstrip("/"): z for path, z in nodes.items()}
    paste = zkcli(rooted, ["ls /kafka", *(f"get /kafka{t}" for t in topics)], "3.8", True, "UTC")
    chrooted = open_bundle(_bundle(tmp_path / "3", {"zk.txt": paste}, said, zk=False), spark)
    assert found(TopicIds(chrooted), "topic_id.mismatch") == found(collected, "topic_id.mismatch")
    assert "brokers" in chrooted.znodes_observed.where("path = '/'").first().children

    old = json.loads(nodes["/brokers/topics/orders"]["data"])  # rewritten by a pre-2.8 tool: no topic_id
    nodes["/brokers/topics/orders"]["data"] = json.dumps({"version": 1, "partitions": old["partitions"]})
    nodes["/brokers/topics/orders"]["stat"]["dataLength"] = len(nodes["/brokers/topics/orders"]["data"])
    paste = zkcli(nodes, ["get -s /brokers/topics/orders"], "3.8", True, "UTC")
    rewritten = TopicIds(open_bundle(_bundle(tmp_path / "2", {"zk.txt": paste}, said, zk=False), spark))
    (missing,) = rewritten.of_kind("topic_id.missing")
    assert missing.subject == {
        "topic": "orders",
        "zxid": f"0x{nodes['/brokers/topics/orders']['stat']['mzxid']:x}",
    }
    assert "version 1 (a pre-2.8 form)" in missing.summary and "2024-03-12 09:41:00 UTC" in missing.summary
    assert missing.evidence == ("pasted/zk.txt:8",)
