"""The simulator held to Kafka: rules every simulated bundle must keep, checked on its own files (the logs
as brokers wrote them, ZooKeeper's txn log), whatever the story, version and seed.

- A broker that refused a LeaderAndIsr keeps its old role (ReplicaManager.becomeLeaderOrFollower never
  passes a refused partition to makeLeader/makeFollower, 2.8.2 Partition.checkOrSetTopicId l.455, 3.6.2
  ReplicaManager l.1830): it does not act as leader for it (no ISR change) until it accepts a later one
  or restarts, and truth.json names every partition ZooKeeper gave to such a broker.
- A broker logs nothing while it is down (from its stop or crash to its next "starting").
- A broker's "Registered broker" line comes after the create of its registration, on its own clock
  (KafkaZkClient.registerBroker logs after the multi returns).
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path
from typing import Any

import pytest

from workbench.simulate.logs import log4j_time
from workbench.simulate.run import simulate
from workbench.simulate.scenarios import SCENARIOS, Scale
from workbench.zookeeper.files import read_txn_log
from workbench.zookeeper.txns import Txn

SMALL = Scale(brokers=4, topics=2, partitions=3, hours=0.5)  # four: some stories need a spare broker
RUNS = [
    (scenario, version, seed)
    for scenario in SCENARIOS
    for version in ("2.5.1", "2.8.2", "3.6.2")
    for seed in (1, 5)
    if not (scenario.startswith("topicid-") and version == "2.5.1")
]
_LINE = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] (\w+) (.*)$")
_REFUSED = re.compile(
    r"\[Broker id=(\d+)\] Topic I[dD] in memory: \S+ does not match the topic I[dD] for partition (\S+) "
)
_ACCEPTED = re.compile(
    r"\[Broker id=(\d+)\] (?:Leader |Follower )?(\S+) (?:with topic id \S+ )?starts at leader epoch"
)
_ISR = re.compile(
    r"\[Partition (\S+) broker=(\d+)\] (?:Shrinking|Expanding) ISR"
    r"|\[Partition (\S+) broker=(\d+)\] ISR updated"
)
_REGISTERED = re.compile(
    r"Registered broker (\d+) at path /brokers/ids/\d+ with addresses: .* czxid \(broker epoch\): (\d+)"
)


def _lines(bundle: Path) -> dict[int, list[tuple[str, str]]]:
    """Per broker: (time, text) of every line of every log file, in time order (one clock per broker)."""
    out: dict[int, list[tuple[str, str]]] = {}
    for broker_dir in sorted((bundle / "brokers").iterdir()):
        lines = []
        for f in sorted((broker_dir / "logs").iterdir()):
            text = gzip.decompress(f.read_bytes()).decode() if f.suffix == ".gz" else f.read_text()
            lines += [(m[1], m[3]) for m in map(_LINE.match, text.splitlines()) if m]
        out[int(broker_dir.name)] = sorted(lines, key=lambda x: x[0])
    return out


@pytest.fixture(scope="module", params=RUNS, ids=lambda r: f"{r[0]}@{r[1]}#{r[2]}")
def run(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, dict[str, Any]]:
    scenario, version, seed = request.param
    path = tmp_path_factory.mktemp("consistency") / f"{scenario}-{version}-{seed}"
    return path, simulate(scenario, path, seed=seed, kafka_version=version, scale=SMALL)


def test_a_refusing_broker_does_not_act_as_leader(run: tuple[Path, dict[str, Any]]) -> None:
    path, truth = run
    refusals = 0
    for broker, lines in _lines(path).items():
        refused: dict[str, str] = {}  # tp -> time of the refusal not yet followed by an acceptance
        for at, text in lines:
            if text.startswith("starting (kafka.server.KafkaServer)"):
                refused.clear()
            elif (m := _REFUSED.search(text)) and int(m[1]) == broker:
                refused.setdefault(m[2], at)
                refusals += 1
            elif (m := _ACCEPTED.search(text)) and int(m[1]) == broker:
                refused.pop(m[2], None)
            elif (m := _ISR.search(text)) and int(m[2] or m[4]) == broker:
                tp = m[1] or m[3]
                assert not (tp in refused and refused[tp] < at), (broker, tp, refused.get(tp), at, text)
    windows = truth["leaders_not_acting"]
    assert not windows or refusals, windows
    for w in windows:
        assert w["to_ms"] is None or w["from_ms"] <= w["to_ms"], w


def test_no_broker_logs_while_it_is_down(run: tuple[Path, dict[str, Any]]) -> None:
    path, truth = run
    lines = _lines(path)
    skews = {int(b): ms for b, ms in truth["clock_skew_ms"].items()}
    downs = [(r["broker"], r["stopped_ms"] + 1, r.get("started_ms")) for r in truth["broker_restarts"]]
    downs += [
        (f["broker"], f["crashed_ms"] + 1, f.get("started_ms"))
        for f in truth["broker_failures"]
        if not f.get("isolated")  # cut off by a network partition, it runs and logs on
    ]
    for broker, since, until in downs:
        low = log4j_time(since + skews.get(broker, 0))
        high = log4j_time((until or truth["captured_ms"]) + skews.get(broker, 0))
        inside = [(at, t) for at, t in lines[broker] if low <= at < high]
        starts = [i for i, (_, t) in enumerate(inside) if t.startswith("starting (kafka.server.KafkaServer)")]
        quiet = inside[: starts[0] if starts else len(inside)]  # `started_ms` is when startup finished
        assert not quiet, (broker, low, high, quiet[:3])


def test_registration_lines_follow_their_txn(run: tuple[Path, dict[str, Any]]) -> None:
    path, truth = run
    times = {}
    for f in sorted((path / "zk" / "txnlog").glob("log.*")):
        for t in read_txn_log(f):
            assert isinstance(t, Txn), t
            times[t.zxid] = t.time
    skews = {int(b): ms for b, ms in truth["clock_skew_ms"].items()}
    seen = 0
    for broker, lines in _lines(path).items():
        for at, text in lines:
            if m := _REGISTERED.search(text):
                czxid = int(m[2])
                assert czxid in times, (broker, czxid)
                assert at >= log4j_time(times[czxid] + skews.get(broker, 0)), (broker, at, czxid)
                seen += 1
    assert seen >= len(truth["broker_restarts"]) + 3
