"""From the brokers' logs alone (issue 51): what triage finds in a bundle whose `zk/` is removed, against the
simulated truth of the same story and against lines written as each release writes them (`[%d] %p %m (%c)`,
the text of the source lines the catalog cites)."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, replace
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from conftest import SAMPLE_DATA, samples
from pyspark.sql import SparkSession
from stories import FRESH, MUST_FIND, Stories
from truth_facts import BY_NAME, key, leader_outages_hold, told_alone

from workbench import postmortem
from workbench.analysis import deletion
from workbench.analysis.contract import CRITICAL
from workbench.analysis.findings import Coverage, Finding, file_ref
from workbench.analysis.triage import Triage, triage
from workbench.bundle import Evidence, log_files
from workbench.capture.assemble import assemble
from workbench.frames import Bundle, WithoutZooKeeper, open_bundle
from workbench.kafka import printed
from workbench.model.channel import went_quiet
from workbench.model.evidence import Held, lacking
from workbench.model.history import topics
from workbench.model.session_ends import signs_of_life, unheard
from workbench.simulate.findings import LOGGED_AS, NOT_IN_LOGS
from workbench.sources.logs import read_logs
from workbench.together import answer

SAMPLES = samples()
UNCLEAN = "unclean-election@2.5.1"
SCL = "state.change.logger"
SELECTOR = "kafka.controller.OfflinePartitionLeaderSelector"


def logs_only(source: Path, to: Path) -> Path:
    """A copy of a bundle without ZooKeeper's evidence: its logs, data dirs and manifest."""
    shutil.copytree(source, to, ignore=shutil.ignore_patterns("zk"))
    return to


def test_a_partitions_state_is_read_as_each_release_prints_it(spark: SparkSession) -> None:
    texts = [
        "LeaderAndIsr(leader=3, leaderEpoch=7, isr=List(3, 1), zkVersion=9)",
        "LeaderAndIsr(leader=3, leaderEpoch=7, isrWithBrokerEpoch=List(BrokerState(brokerId=3, "
        "brokerEpoch=-1)), leaderRecoveryState=RECOVERING, partitionEpoch=9)",
        "(Leader:-1,ISR:1,LeaderRecoveryState:RECOVERED,LeaderEpoch:8,ZkVersion:10,ControllerEpoch:5)",
        '{"leader":2,"leader_epoch":4,"isr":[2]}',
        "LeaderAndIsrPartitionState(topicName='t', partitionIndex=0, controllerEpoch=5, leader=1, "
        "leaderEpoch=6, isr=[1, 2], zkVersion=7, replicas=[1, 2], addingReplicas=[], removingReplicas=[])",
        "no state at all",
    ]
    df = spark.createDataFrame([(t,) for t in texts], "text string")
    rows = df.select(
        printed.leader(df.text).alias("leader"),
        printed.leader_epoch(df.text).alias("epoch"),
        printed.isr(df.text).alias("isr"),
        printed.recovering(df.text).alias("recovering"),
    ).collect()
    assert [tuple(r) for r in rows] == [
        (3, 7, [3, 1], False),
        (3, 7, [3], True),
        (-1, 8, [1], False),
        (2, 4, [2], False),
        (1, 6, [1, 2], False),
        (None, None, None, False),
    ]


@pytest.mark.slow
def test_an_unclean_election_is_found_from_the_controllers_lines(stories: Stories, tmp_path: Path) -> None:
    truth = stories.truth(UNCLEAN)
    copy = logs_only(stories.path(UNCLEAN), tmp_path / "logs-only")
    found = triage(open_bundle(copy, stories.spark), only=["data_loss"])
    unclean = [f for f in found.findings if f.kind == "data_loss.unclean_election"]
    assert {(f.subject["topic"], f.subject["partition"], f.subject["broker"]) for f in unclean} == {
        (u["topic"], u["partition"], u["leader"]) for u in truth["unclean_elections"]
    }
    assert [f.subject["leader_epoch"] for f in unclean] == [
        u["leader_epoch"] for u in truth["unclean_elections"]
    ]
    assert found.critical and "from the controller's lines" in unclean[0].summary
    # the truncations are the full bundle's, and coverage says what was read instead of ZooKeeper
    full = stories.triage(UNCLEAN)
    assert [f for f in found.findings if f.kind == "data_loss.truncation"] == [
        f for f in full.findings if f.kind == "data_loss.truncation"
    ]
    check = found.coverage["data_loss"]
    assert check.missing == ["ZooKeeper txn logs (zk/txnlog/): unclean leader elections in zxid order"]
    assert any(u.startswith("the controller's lines: ") and "no txn holds" in u for u in check.used)


def _log4j(at: str, level: str, message: str, logger: str, thrown: str = "") -> str:
    """A line as Kafka's layout writes it (`[%d] %p %m (%c)%n`), and the throwable after it."""
    return f"[2024-03-12 {at}] {level} {message} ({logger})\n" + (f"{thrown}\n" if thrown else "")


# broker 1's lines as 0.10 (its words, [topic,partition]), 1.1-2.x (the ISR printed, then taken offline)
# and 3.2+ (RECOVERING) write them: one unclean election each; and a clean one (its leader stayed in)
C = "[Controller id=1 epoch=7] "
ONLINE = "from OfflinePartition to OnlinePartition with state LeaderAndIsr"
KS = "kafka.server.KafkaServer"
OLD_AND_NEW = {
    (1, "controller.log"): [
        ("09:30:00,100", "WARN", "[OfflinePartitionLeaderSelector]: No broker in ISR is alive for "
         "[orders,0]. Elect leader 2 from live brokers 2,3. There's potential data loss.", SELECTOR),
        ("09:30:00,101", "INFO", "[OfflinePartitionLeaderSelector]: Selected new leader and ISR "
         '{"leader":2,"leader_epoch":5,"isr":[2]} for offline partition [orders,0]', SELECTOR),
    ],
    (1, "state-change.log"): [
        ("09:30:00,102", "TRACE", "Controller 1 epoch 7 changed partition [orders,0] from "
         "OfflinePartition to OnlinePartition with leader 2", SCL),
        ("09:31:00,000", "INFO", f"{C}Changed partition orders-1 from NewPartition to OnlinePartition "
         "with state LeaderAndIsr(leader=1, leaderEpoch=0, isr=List(1, 2), zkVersion=0)", SCL),
        ("09:31:10,000", "INFO", f"{C}Changed state of replica 2 for partition orders-1 "
         "from OnlineReplica to OfflineReplica", SCL),
        ("09:31:20,000", "INFO", f"{C}Changed partition orders-1 {ONLINE}(leader=3, leaderEpoch=2, "
         "isr=List(3), zkVersion=3)", SCL),
        ("09:32:00,000", "INFO", f"{C}Changed partition orders-2 {ONLINE}(leader=2, leaderEpoch=3, "
         "isrWithBrokerEpoch=List(BrokerState(brokerId=2, brokerEpoch=-1)), "
         "leaderRecoveryState=RECOVERING, partitionEpoch=4)", SCL),
        ("09:33:00,000", "INFO", f"{C}Changed partition orders-3 from NewPartition to OnlinePartition "
         "with state LeaderAndIsr(leader=1, leaderEpoch=0, isr=List(1, 2), zkVersion=0)", SCL),
        ("09:33:20,000", "INFO", f"{C}Changed partition orders-3 {ONLINE}(leader=2, leaderEpoch=1, "
         "isr=List(2), zkVersion=1)", SCL),
    ],
    # broker 2's controlled shutdown as 2.8 words it: four attempts, then it goes down anyway
    (2, "server.log"): [
        ("09:40:00,000", "INFO", "[KafkaServer id=2] shutting down", KS),
        ("09:40:00,010", "INFO", "[KafkaServer id=2] Starting controlled shutdown", KS),
        *[line for k in range(3) for line in (
            (f"09:40:{30 + 10 * k},020", "INFO", "[KafkaServer id=2] Remaining partitions to move: "
             "[RemainingPartition(topicName='orders', partitionIndex=1)]", KS),
            (f"09:40:{35 + 10 * k},030", "WARN", "[KafkaServer id=2] Retrying controlled shutdown after the "
             "previous attempt failed...", KS),
        )],
        ("09:41:10,000", "WARN", "[KafkaServer id=2] Proceeding to do an unclean shutdown as all the "
         "controlled shutdown attempts failed", KS),
    ],
}  # fmt: skip


def test_lines_written_as_each_release_writes_them_are_read(spark: SparkSession, tmp_path: Path) -> None:
    """Unclean elections in each release's words, and a controlled shutdown that gave up."""
    copy = logs_only(SAMPLE_DATA / "healthy-3.6", tmp_path / "logs-only")
    asked = ["data_loss", "controller"]
    before = triage(open_bundle(copy, spark), only=asked).findings
    assert [f.kind for f in before] == ["controller.election"]  # nothing before the lines
    first = {}
    for (broker, name), lines in OLD_AND_NEW.items():
        log = copy / "brokers" / str(broker) / "logs" / name
        first[name] = len(log.read_text(encoding="utf-8").splitlines()) + 1
        with log.open("a", encoding="utf-8") as out:
            out.write("".join(_log4j(*line) for line in lines))
    found = triage(open_bundle(copy, spark), only=asked)
    unclean = sorted(
        (f for f in found.findings if f.kind == "data_loss.unclean_election"),
        key=lambda f: f.subject["partition"],
    )
    assert [f.subject for f in unclean] == [
        {"topic": "orders", "partition": 0, "broker": 2},
        {"topic": "orders", "partition": 1, "broker": 3, "leader_epoch": 2},
        {"topic": "orders", "partition": 2, "broker": 2, "leader_epoch": 3},
    ]
    (gave_up,) = [f for f in found.findings if f.kind == "broker.controlled_shutdown"]
    assert gave_up.subject == {"broker": 2, "outcome": "failed", "attempts": 4}
    assert "the controller last said 1 partition(s) (orders-1) remained to move" in gave_up.summary
    assert gave_up.evidence[0] == file_ref("brokers/2/logs/server.log", first["server.log"] + 1)
    said, outside, recovering = unclean
    assert "There's potential data loss" in said.summary
    assert said.evidence == (file_ref("brokers/1/logs/controller.log", first["controller.log"]),)
    assert "not in the ISR [1]" in outside.summary
    state_change = first["state-change.log"]
    assert outside.evidence == tuple(
        file_ref("brokers/1/logs/state-change.log", state_change + k) for k in (1, 3)
    )
    assert "RECOVERING" in recovering.summary


ASKED = ["controller", "leaderless", "deletion", "data_loss"]  # the checks the lines alone now feed


def _stat(broker: int, owner: int) -> str:
    """KafkaZkClient's line on registering a broker (2.8 words, the logger on the next line as written):
    its eighth number is the ephemeral owner, the session."""
    stat = f"364,364,1620130093727,1620130093727,1,0,0,{owner},202,0,364"
    return f"Stat of the created znode at /brokers/ids/{broker} is: {stat}\n"


def test_a_lost_session_is_its_registrations_broker_in_a_shared_log(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Broker 1's server.log holds ZooKeeper client lines of two more brokers and a ZooKeeper server's own
    lines (a test rig on one host): each expiry is the broker whose registration its session owned; a
    session no registration names is left unsaid."""
    copy = logs_only(SAMPLE_DATA / "healthy-3.6", tmp_path / "logs-only")
    two, three = 0x1000118EB9B00AB, 0x1000118EB9B00AC
    cnxn, server, zkc = (
        "org.apache.zookeeper.ClientCnxn",
        "org.apache.zookeeper.server.ZooKeeperServer",
        "kafka.zk.KafkaZkClient",
    )
    log = copy / "brokers" / "1" / "logs" / "server.log"
    first = len(log.read_text(encoding="utf-8").splitlines()) + 1
    with log.open("a", encoding="utf-8") as out:
        for line in (
            ("09:50:00,000", "INFO", _stat(2, two), zkc),
            ("09:50:00,100", "INFO", _stat(3, three), zkc),
            (
                "09:55:00,000",
                "WARN",
                f"Unable to reconnect to ZooKeeper service, session {two:#x} has expired",
                cnxn,
            ),
            ("09:55:01,000", "INFO", f"Expiring session {three:#x}, timeout of 18000ms exceeded", server),
            ("09:55:02,000", "INFO", "Expiring session 0x99, timeout of 18000ms exceeded", server),
        ):
            out.write(_log4j(*line))
    found = triage(open_bundle(copy, spark), only=["controller"]).findings
    lost = {f.subject["broker"]: f for f in of(found, "broker.session_expired")}
    assert sorted(lost) == [2, 3]
    assert lost[2].subject["session"] == f"{two:#x}" and lost[3].subject["session"] == f"{three:#x}"
    # the Stat lines take two lines each: the expiries are the file's lines after them
    assert lost[2].evidence[0] == file_ref("brokers/1/logs/server.log", first + 4)
    assert lost[3].evidence[0] == file_ref("brokers/1/logs/server.log", first + 5)


def test_a_registered_broker_the_controller_cannot_reach_is_said(spark: SparkSession, tmp_path: Path) -> None:
    """Broker 1, the controller, fails to reach broker 2 and broker 3; only broker 3's failure is handled
    after (it died: the failed sends are its death's, and it lost its session); a BrokerChange fails on a
    broker 4 registered without the controller's listener; then an event fails on its own expired session."""
    copy = logs_only(SAMPLE_DATA / "healthy-3.6", tmp_path / "logs-only")
    rst, kc = "kafka.controller.RequestSendThread", "kafka.controller.KafkaController"

    def unsuccessful(at: str, b: int) -> tuple[str, ...]:
        node = f"kafka-{b}:9092 (id: {b} rack: null)"
        said = (
            f"[RequestSendThread controllerId=1] Controller 1's connection to broker {node} was unsuccessful"
        )
        return at, "WARN", said, rst, f"java.io.IOException: Connection to {node} failed."

    log = copy / "brokers" / "1" / "logs" / "controller.log"
    first = len(log.read_text(encoding="utf-8").splitlines()) + 1
    missing = "End point with listener name INTERNAL not found for broker 4"
    with log.open("a", encoding="utf-8") as out:
        for line in (
            unsuccessful("09:50:00,000", 2),
            unsuccessful("09:50:05,000", 2),
            unsuccessful("09:51:00,000", 3),
            ("09:51:15,000", "INFO", "[Controller id=1] Broker failure callback for 3", kc),
            unsuccessful("09:51:16,000", 3),
            (
                "09:52:00,000",
                "ERROR",
                "[Controller id=1] Error processing event BrokerChange",
                kc,
                f"kafka.common.BrokerEndPointNotAvailableException: {missing}\n"
                "\tat kafka.cluster.Broker.$anonfun$node$1(Broker.scala:89)",
            ),
            (
                "09:53:00,000",
                "ERROR",
                "[Controller id=1] Error processing event IsrChangeNotification",
                kc,
                "org.apache.zookeeper.KeeperException$SessionExpiredException: KeeperErrorCode = Session "
                "expired for /isr_change_notification",
            ),
        ):
            out.write(_log4j(*line))
    found = triage(open_bundle(copy, spark), only=["controller"]).findings
    (cut_off,) = of(found, "controller.broker_unreachable")
    assert cut_off.subject == {"broker": 2, "failures": 2, "controller": 1}
    assert cut_off.evidence == tuple(file_ref("brokers/1/logs/controller.log", first + k) for k in (0, 2))
    lost = {f.subject["broker"]: f.subject for f in of(found, "broker.session_expired")}
    assert lost == {3: {"broker": 3, "cause": "crash"}, 1: {"broker": 1, "cause": "session_expiry"}}
    (unnamed,) = of(found, "broker.no_endpoint")
    assert unnamed.subject == {"broker": 4, "listener": "INTERNAL"} and unnamed.severity is CRITICAL
    assert "failed BrokerChange on it 1 time(s)" in unnamed.summary


def test_each_delete_and_recreate_cycle_is_one(spark: SparkSession, tmp_path: Path) -> None:
    """A topic deleted and created again twice, as the controller logs it (3.6 words): two re-creations;
    its last deletion begun after the second creation is one under way, not one long deletion."""
    copy = logs_only(SAMPLE_DATA / "healthy-3.6", tmp_path / "logs-only")
    tdm, kc = "kafka.controller.TopicDeletionManager", "kafka.controller.KafkaController"
    created = "[Controller id=1] New topics: [Set(loop)], deleted topics: [Set()], new partition replica "
    created += "assignment [Set()]"
    lines = []
    for k, minute in enumerate((50, 52, 54)):
        lines += [
            (
                f"09:{minute}:00,000",
                "INFO",
                "[Topic Deletion Manager 1] Handling deletion for topics loop",
                tdm,
            ),
            (
                f"09:{minute}:00,001",
                "INFO",
                "[Topic Deletion Manager 1] Deletion of topic loop (re)started",
                tdm,
            ),
        ]
        if k < 2:
            lines += [
                (
                    f"09:{minute}:01,000",
                    "INFO",
                    "[Topic Deletion Manager 1] Deletion of topic loop successfully completed",
                    tdm,
                ),
                (f"09:{minute + 1}:00,000", "INFO", created, kc),
            ]
    with (copy / "brokers" / "1" / "logs" / "controller.log").open("a", encoding="utf-8") as out:
        out.write("".join(_log4j(*line) for line in lines))
    found = triage(open_bundle(copy, spark), only=["deletion"]).findings
    again = of(found, "deletion.recreated")
    assert [f.subject for f in again] == [{"topic": "loop"}] * 2
    assert ["09:51:00" in f.summary for f in again] == [True, False]
    (going,) = of(found, "deletion.unfinished")
    assert going.severity.name == "WARNING" and "last (re)started it at 2024-03-12 09:54:00" in going.summary


def test_a_deletion_a_new_controller_holds_back_is_stuck_without_a_halt(
    spark: SparkSession, tmp_path: Path
) -> None:
    """A new controller lists a pending topic ineligible at its start (a replica offline or a reassignment
    in progress, KafkaController.fetchTopicDeletionsInProgress 2.8.2:964-975): no halt line, yet nothing
    deletes it. Not where a later line (re)starts it, nor for a topic listed ineligible but not pending."""
    copy = logs_only(SAMPLE_DATA / "healthy-3.6", tmp_path / "logs-only")
    tdm, kc = "kafka.controller.TopicDeletionManager", "kafka.controller.KafkaController"
    lines = [
        ("10:00:00,000", "INFO", "[Controller id=1] List of topics to be deleted: held,resumed", kc),
        (
            "10:00:00,000",
            "INFO",
            "[Controller id=1] List of topics ineligible for deletion: held,resumed,orders",
            kc,
        ),
        (
            "10:00:00,001",
            "INFO",
            "[Topic Deletion Manager 1] Initializing manager with initial deletions: Set(held, resumed), "
            "initial ineligible deletions: HashSet(held, resumed, orders)",
            tdm,
        ),
        ("10:00:20,000", "INFO", "[Topic Deletion Manager 1] Deletion of topic resumed (re)started", tdm),
    ]
    with (copy / "brokers" / "1" / "logs" / "controller.log").open("a", encoding="utf-8") as out:
        out.write("".join(_log4j(*line) for line in lines))
    found = triage(open_bundle(copy, spark), only=["deletion"]).findings
    by_topic = {f.subject["topic"]: f for f in of(found, "deletion.unfinished")}
    assert set(by_topic) == {"held", "resumed"}
    held, resumed = by_topic["held"], by_topic["resumed"]
    assert held.severity.name == "CRITICAL" and held.subject.get("held_at_start") is True
    assert "listing it ineligible for deletion" in held.summary and "stuck" in held.summary
    assert "controller.log:" in held.evidence[-1]
    assert resumed.severity.name == "WARNING" and "held_at_start" not in resumed.subject
    assert "still under way" in resumed.summary


def test_coverage_names_the_log_a_check_would_read_where_no_broker_has_it() -> None:
    """The controller's journals go to their own logs (Kafka's shipped log4j.properties): where no
    broker's is held, the checks that read it say which, and nothing where one is."""
    held = Held(frozenset({1, 2}), frozenset({1, 2}), frozenset(), False, False, False, "2.8.2", None, {},
                {1: frozenset({"server", "controller"}), 2: frozenset({"server"})})  # fmt: skip
    assert lacking(held, "controller", "each deletion's steps") == []
    assert lacking(held, "state-change", "the controller's partition states") == [
        "state-change.log, where Kafka logs the controller's partition states: no broker's is in the bundle"
    ]
    coverage = Coverage()
    coverage.record("deletion", ["broker logs"])
    none = lacking(replace(held, appenders={}), "controller", "each deletion's steps")
    facts = deletion.Facts([], {}, set(), frozenset(), [], {}, None, [], [], lacking=none)
    assert deletion.judge(facts, coverage) == []
    assert coverage["deletion"].status == "partial" and coverage["deletion"].missing == [
        "controller.log, where Kafka logs each deletion's steps: no broker's is in the bundle"
    ]


def _as_found(evidence: Evidence) -> dict[str, Any]:
    """What a bundle's reader is given, its paths relative to the bundle's root."""
    return json.loads(json.dumps(asdict(evidence), default=str).replace(str(evidence.root), "<root>"))


def test_a_bundle_without_zookeeper_is_its_copy_without_zk(spark: SparkSession, tmp_path: Path) -> None:
    """The logs-only twin is a view of the whole bundle, not a copy: its evidence is a copy's without zk/,
    whatever lay there (a zkCli session, a broker's log no reader takes there), and it shares the whole's
    parse and data dirs: the same files."""
    whole = tmp_path / "whole"
    shutil.copytree(SAMPLE_DATA / "healthy-3.6", whole)
    (whole / "zk" / "zkcli.txt").write_text("[zk: zk1:2181(CONNECTED) 0] ls /brokers/ids\n[1, 2, 3]\n")
    shutil.copy(whole / "brokers" / "1" / "logs" / "server.log", whole / "zk" / "server.log")
    view = WithoutZooKeeper(open_bundle(whole, spark))
    copy = Evidence.open(logs_only(whole, tmp_path / "copy"))
    assert _as_found(view.evidence) == _as_found(copy)
    held, whole_held = view.evidence, view.whole.evidence
    assert held.zk_files == [] and held.znodes_jsonl is None and len(held.pasted) < len(whole_held.pasted)
    assert len(held.not_read) < len(whole_held.not_read)  # the log under zk/ is not read, nor named
    assert (held.log_files, held.log_dirs) == (whole_held.log_files, whole_held.log_dirs)
    assert view._kept_logs is view.whole._kept_logs and view._datadirs is view.whole._datadirs


@pytest.fixture(scope="module")
def alone(twin: Callable[[str], Triage]) -> Callable[[str], list[Finding]]:
    """A sample's logs-only twin's findings."""
    return lambda name: twin(name).findings


def _as_logged(findings: list[Finding]) -> Counter[tuple[Any, ...]]:
    return Counter(key(f.kind, f.subject) for f in findings if f.kind in BY_NAME)


@pytest.mark.slow
@pytest.mark.parametrize("name", [*SAMPLES, *sorted(FRESH), *sorted(MUST_FIND)])
def test_a_logs_only_twin_gives_every_fact_its_logs_show_and_no_other(
    name: str, twin: Callable[[str], Triage], stories: Stories, triaged: Callable[[str], Triage]
) -> None:
    """Each sample's and story's bundle with its zk/ removed: triage gives the truth's `logs_findings`
    (simulate/findings.py: the facts the controller's and brokers' lines show, in the logs' form), each
    as many times as the truth holds it, and is critical where the full bundle's triage is for a kind the
    logs show; coverage says which checks ZooKeeper's evidence was missing for."""
    truth = (
        json.loads((SAMPLE_DATA / name / "truth.json").read_text())
        if name in SAMPLES
        else stories.truth(name)
    )
    found = twin(name)
    want = Counter(key(kind, fact) for kind, facts in truth["logs_findings"].items() for fact in facts)
    got = _as_logged(found.findings)
    assert got - want == Counter(), f"findings without a truth fact: {sorted(got - want, key=str)}"
    assert want - got == Counter(), f"truth facts without their finding: {sorted(want - got, key=str)}"
    full = triaged(name) if name in SAMPLES else stories.triage(name)
    critical = {LOGGED_AS.get(f.kind, f.kind) for f in full.findings if f.severity is CRITICAL}
    assert {f.kind for f in found.findings if f.severity is CRITICAL} == critical - set(NOT_IN_LOGS)
    assert found.bad_records == 0 and all(f.evidence for f in found.findings)
    leader_outages_hold(found.findings, truth)  # the outages the controller's failed sends bound
    hurt = postmortem.unmeasured(found.findings)  # the report says the findings' outage
    told_alone(found.findings, postmortem.summary(found, hurt) + postmortem.impact_markdown(hurt))
    assert set(found.coverage) == set(full.coverage)  # every check listed, those ZooKeeper's evidence
    assert all(c.status != "done" for c in found.coverage.values() if c.missing), (
        found.coverage
    )  # fed partial


def _incident(real_evidence: Path, to: Path, logs: dict[int, tuple[str, ...]]) -> Path:
    """The real logs of one incident, each broker's in its own folder (a file shared by two brokers, as
    01's ZooKeeper client lines are, stays with the broker named)."""
    for broker, prefixes in logs.items():
        files = [p for p in sorted((real_evidence / "logs").iterdir()) if p.name.startswith(prefixes)]
        assemble(to, files, broker=broker)
    return to


@pytest.fixture(scope="module")
def incidents(
    spark: SparkSession, real_evidence: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, list[Finding]]:
    """The real incidents of shared/real-evidence/logs, each in a bundle of its own, triaged once.
    2021-05-04 (2.8, two brokers on one host): both froze for 18.7 s; broker 0, the controller (its
    auto-rebalance lines), learned its session had expired only after broker 1 was elected (epoch 5).
    2022-02-18 (3.1, one broker): its host slept 11 hours; it lost its session and was elected again."""
    root = tmp_path_factory.mktemp("incidents")
    bundles = {
        "2021": _incident(real_evidence, root / "2021", {0: ("01_", "02a_"), 1: ("02b_", "03_")}),
        "2022": _incident(real_evidence, root / "2022", {0: ("05a_", "05b_")}),
        "2022-04": _incident(real_evidence, root / "2022-04", {0: ("07a_", "07b_", "07c_")}),
    }
    return {name: triage(open_bundle(path, spark), only=ASKED).findings for name, path in bundles.items()}


def of(findings: list[Finding], kind: str) -> list[Finding]:
    return [f for f in findings if f.kind == kind]


def test_a_failover_is_told_from_the_brokers_lines(alone: Callable[[str], list[Finding]]) -> None:
    """controller-failover-2.5 without zk/: the crash of controller 1, from its last act and its start
    again, and the outage the truth measured within the bounds the lines give."""
    name = "controller-failover-2.5"
    (moved,) = of(alone(name), "controller.failover")
    assert {k: moved.subject[k] for k in ("broker", "epoch", "previous", "cause")} == {
        "broker": 2,
        "epoch": 2,
        "previous": 1,
        "cause": "crash",
    }
    truth = json.loads((SAMPLE_DATA / name / "truth.json").read_text(encoding="utf-8"))
    ready = next(c["ready_ms"] for c in truth["controllers"] if c["epoch"] == 2)
    (crash,) = truth["broker_failures"]
    lower, upper = moved.subject["outage_ms"]
    assert lower - 500 <= ready - crash["crashed_ms"] <= upper + 500, moved.summary


def test_a_leaders_own_lines_do_not_make_it_the_controller(spark: SparkSession, tmp_path: Path) -> None:
    """Broker 3 leads partitions and logs their ISR changes between controller 1's last act and broker 2's
    election: every leader writes that line (Partition), so broker 1 stays the controller before."""
    copy = logs_only(SAMPLE_DATA / "controller-failover-2.5", tmp_path / "logs-only")
    isr = "[Partition topic-0-0 broker=3] ISR updated to [3] and zkVersion updated to [9]"
    lines = [("08:30:20,000", "INFO", isr, "kafka.cluster.Partition")]
    with (copy / "brokers" / "3" / "logs" / "server.log").open("a", encoding="utf-8") as out:
        out.write("".join(_log4j(*line) for line in lines))
    (moved,) = of(triage(open_bundle(copy, spark), only=["controller"]).findings, "controller.failover")
    assert (moved.subject["previous"], moved.subject["cause"]) == (1, "crash")


def test_real_failovers_after_a_pause_name_the_controller_before(incidents: dict[str, list[Finding]]) -> None:
    (moved,) = of(incidents["2021"], "controller.failover")
    assert {k: moved.subject[k] for k in ("broker", "epoch", "previous", "cause")} == {
        "broker": 1,
        "epoch": 5,
        "previous": 0,
        "cause": "hang",
    }
    # last heard at 14:08:05.298 - 18.731 s = 14:07:46.567 (the first time-out in the file the two brokers'
    # lines share); ready at 14:08:14.246: 27.7 s, less up to a third of the 18 s timeout
    assert moved.subject["outage_ms"] == [27_679 - 6_000, 27_679]
    assert "from broker 0 (its lines show it controller before)" in moved.summary
    (again,) = of(incidents["2022"], "controller.failover")
    assert (again.subject["broker"], again.subject["previous"], again.subject["cause"]) == (0, 0, "hang")
    assert again.summary.startswith("Broker 0 was elected controller again (epoch 2)")
    assert "for 11.4 h" in again.summary


def test_a_failed_send_proves_a_broker_gone_only_after_its_last_line(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Before an election at 09:51:30, the controller (broker 1) failed to reach broker 2 at 09:50:00 and
    09:51:00, and broker 2 wrote a line at 09:50:30 between them: it lived after the first failed send,
    so only the second says it was gone (`went_quiet`); a broker that wrote nothing after is gone from its
    first failed send."""
    copy = logs_only(SAMPLE_DATA / "healthy-3.6", tmp_path / "logs-only")
    rst = "kafka.controller.RequestSendThread"

    def unsuccessful(at: str, b: int) -> tuple[str, ...]:
        node = f"kafka-{b}:9092 (id: {b} rack: null)"
        said = f"Controller 1's connection to broker {node} was unsuccessful"
        return at, "WARN", f"[RequestSendThread controllerId=1] {said}", rst

    log = copy / "brokers" / "1" / "logs" / "controller.log"
    first = len(log.read_text(encoding="utf-8").splitlines()) + 1
    with log.open("a", encoding="utf-8") as out:
        for line in (unsuccessful("09:50:00,000", 2), unsuccessful("09:50:01,000", 3)):
            out.write(_log4j(*line))
        out.write(_log4j(*unsuccessful("09:51:00,000", 2)))
    server = copy / "brokers" / "2" / "logs" / "server.log"
    alive = len(server.read_text(encoding="utf-8").splitlines()) + 1
    with server.open("a", encoding="utf-8") as out:
        rolled = "[UnifiedLog partition=orders-0, dir=/data] Rolled new log segment at offset 9 in 1 ms."
        out.write(_log4j("09:50:30,000", "INFO", rolled, "kafka.log.UnifiedLog"))
    at = datetime(2024, 3, 12, 9, 51, 30)
    quiet = went_quiet(open_bundle(copy, spark), [(2, at), (3, at)])
    ref = lambda said: said.ref if said is not None else None  # noqa: E731
    assert ref(quiet[(2, at)].last_line) == file_ref("brokers/2/logs/server.log", alive)
    assert ref(quiet[(2, at)].unreachable) == file_ref("brokers/1/logs/controller.log", first + 2)
    assert ref(quiet[(3, at)].unreachable) == file_ref("brokers/1/logs/controller.log", first + 1)


def test_lines_a_process_writes_as_it_runs_again_are_no_sign_of_life(
    spark: SparkSession, tmp_path: Path
) -> None:
    """Broker 1 stood still from about 08:00:00.1: as it runs again it writes what its threads had queued,
    then its ZooKeeper client's time-out line (idle counted from its last packet), then reconnects. Only
    its lines before and its lines once it runs on count; the time-out line says when it was last heard."""
    zk, log = "org.apache.zookeeper.ClientCnxn", "kafka.log.Log"
    rolled = "[Log partition=orders-0, dir=/data] Rolled new log segment at offset {} in 1 ms."
    lines = [
        ("08:00:00,000", "INFO", rolled.format(7), log),
        ("08:00:18,950", "INFO", rolled.format(9), log),
        ("08:00:19,000", "WARN", "Client session timed out, have not heard from server in 18900ms for "
         "sessionid 0x100000a3e5c0001", zk),
        ("08:00:19,400", "INFO", "Opening socket connection to server zk1/10.0.0.5:2181. Will not attempt to "
         "authenticate using SASL (unknown error)", zk),
        ("08:00:25,000", "INFO", rolled.format(12), log),
    ]  # fmt: skip
    path = tmp_path / "server.log"
    path.write_text("".join(_log4j(*line) for line in lines), encoding="utf-8")
    events, _ = read_logs(spark, log_files([path], broker_id=1))
    kept = sorted(r.ts.strftime("%H:%M:%S.%f")[:12] for r in signs_of_life(events).select("ts").collect())
    assert kept == ["08:00:00.000", "08:00:25.000"]
    (gap,) = unheard(events).collect()
    assert (gap.broker_id, gap.heard.strftime("%H:%M:%S.%f")[:12]) == (1, "08:00:00.100")


def test_real_logs_alone_give_what_an_sre_reads_in_them(incidents: dict[str, list[Finding]]) -> None:
    """Each real incident's findings, kind by kind: nothing an SRE would not read in its lines."""
    kinds = {name: sorted(f.kind for f in found) for name, found in incidents.items()}
    assert kinds == {
        # the two sessions of the shared file are both kept by broker 0 (log_attribution says so)
        "2021": [
            "broker.session_expired",
            "broker.session_expired",
            "controller.failover",
            "partition.offline",
        ],
        "2022": ["broker.session_expired", "controller.failover"],
        "2022-04": ["deletion.completed", "deletion.completed"],
    }


@pytest.mark.parametrize("name", ["deletion-stuck-2.8", "deletion-complete-3.6"])
def test_deletions_are_told_from_the_controllers_lines(
    alone: Callable[[str], list[Finding]], name: str
) -> None:
    """Without zk/, a deletion the controller halted for good is found with the brokers it failed on, and
    a completed one is completed, each as the sample's truth says; nothing else is."""
    truth = json.loads((SAMPLE_DATA / name / "truth.json").read_text(encoding="utf-8"))["findings"]
    found = alone(name)
    stuck = {(t["topic"], tuple(t["brokers_down"])) for t in truth.get("deletion.stuck", [])}
    unfinished = of(found, "deletion.unfinished")
    assert {(f.subject["topic"], tuple(f.subject["failed_on"])) for f in unfinished} == stuck
    assert all(f.severity.name == "CRITICAL" for f in unfinished)
    completed = {(t["topic"], tuple(t["halted"])) for t in truth.get("deletion.completed", [])}
    assert {
        (f.subject["topic"], tuple(f.subject["halted"])) for f in of(found, "deletion.completed")
    } == completed


def test_deletions_under_way_are_zookeepers_markers_else_the_controllers_lines(
    sample: Callable[[str], Bundle],
) -> None:
    """deletion-stuck-2.8: ZooKeeper's tree holds clickstream-old's marker, and the controller's lines show
    its deletion begun and halted for good. The one history tells what is under way by the markers where
    the tree was captured (the lines' view is not asked), by the lines where it was not (`under_way`)."""
    whole = sample("deletion-stuck-2.8")
    with_tree = answer(topics.under_way(whole, 50))
    assert [m.topic for m in with_tree.markers] == ["clickstream-old"]
    assert with_tree.unfinished == [] and with_tree.lacking == []
    alone = answer(topics.under_way(WithoutZooKeeper(whole), 50))
    assert alone.markers == [] and [u.topic for u in alone.unfinished] == ["clickstream-old"]
    assert alone.ends is not None and alone.ends >= alone.unfinished[0].last.ts


def test_partitions_left_without_a_leader_are_told_from_the_controllers_lines(
    alone: Callable[[str], list[Finding]],
    triaged: Callable[[str], Triage],
    incidents: dict[str, list[Finding]],
) -> None:
    """controller-failover-2.5 without zk/: the partitions its crashed controller led, as ZooKeeper's
    history gives them (their start is not in the lines); the 2021 incident: the 29 partitions the new
    controller left without a leader when broker 0 went offline, none named a leader before the lines end."""
    name = "controller-failover-2.5"
    (logged,) = of(alone(name), "partition.offline")
    (known,) = of(triaged(name).findings, "partition.offline")
    assert logged.severity.name == "WARNING" and logged.subject["began"] == "unknown"
    assert {k: logged.subject[k] for k in ("partitions", "broker")} == {
        k: known.subject[k] for k in ("partitions", "broker")
    }
    assert known.summary.split(") ")[0] == logged.summary.split(") ")[0]  # the same partitions
    (left,) = of(incidents["2021"], "partition.offline")
    assert (left.severity.name, left.subject["partitions"], left.subject["still"]) == ("CRITICAL", 29, 29)


def test_kafkas_offline_count_is_told_alike_from_the_lines_and_from_zookeeper(
    alone: Callable[[str], list[Finding]], triaged: Callable[[str], Triage]
) -> None:
    """deletion-stuck-2.8: the controller logged broker 3's failure callback, then elected new leaders for
    the partitions it led, in one event: with or without ZooKeeper's history the finding says Kafka's
    OfflinePartitionsCount never held them, the lines' citing that callback."""
    name = "deletion-stuck-2.8"
    (logged,) = of(alone(name), "partition.offline")
    (known,) = of(triaged(name).findings, "partition.offline")
    never = "Kafka's OfflinePartitionsCount never counted them"
    assert never in known.summary and never in logged.summary, logged.summary
    (callback,) = [
        f"broker-1:logs/{log.name}:{n}"
        for log in (SAMPLE_DATA / name / "brokers" / "1" / "logs").glob("controller.log*")
        for n, line in enumerate(log.read_text(encoding="utf-8").splitlines(), 1)
        if "Broker failure callback for 3 " in line
    ]
    assert callback in logged.evidence


def test_the_preferred_election_before_a_refusal_is_named_from_the_lines(
    alone: Callable[[str], list[Finding]], triaged: Callable[[str], Triage]
) -> None:
    """topicid-mismatch-2.8 without zk/: the controller's automatic rebalance line names orders-0 just
    before its line naming broker 1 leader, which refused it; the finding names that trigger, as the full
    bundle's does, and cites the line after the one naming the leader."""
    (refused,) = of(alone("topicid-mismatch-2.8"), "partition.no_acting_leader")
    (known,) = of(triaged("topicid-mismatch-2.8").findings, "partition.no_acting_leader")
    assert refused.subject["trigger"] == known.subject["trigger"] == "AutoTriggered"
    by = ", chosen by the controller's automatic preferred-replica election (auto.leader.rebalance.enable),"
    assert by in refused.summary.split(". ")[0] and by in known.summary.split(". ")[0]
    assert refused.evidence[1] == known.evidence[1] == "broker-2:logs/controller.log.2024-03-12-08:50"


def test_a_broker_that_halted_for_its_log_dirs_lost_its_session_halted_with_or_without_zookeeper(
    stories: Stories, twin: Callable[[str], Triage]
) -> None:
    """deletion-denied@3.6.2: the broker whose only log dir failed halts (Exit.halt: no shutdown, its
    session left to expire, `halted_broker_leaves_its_session_to_expire`). Its lost session says it halted
    and cites its halt line, from ZooKeeper's history and from the lines alone, not "a crash or hang"."""
    name = "deletion-denied@3.6.2"
    (halt,) = [f for f in stories.truth(name)["log_dirs_failed"] if f["halted"]]
    b = halt["broker"]
    (said,) = [
        f"broker-{b}:logs/{log.name}:{n}"
        for log in (stories.path(name) / "brokers" / str(b) / "logs").glob("server.log*")
        for n, line in enumerate(log.read_text(encoding="utf-8").splitlines(), 1)
        if "Shutdown broker because all log dirs in" in line
    ]
    for result in (stories.triage(name), twin(name)):
        (lost,) = [f for f in of(result.findings, "broker.session_expired") if f.subject["broker"] == b]
        assert lost.subject["cause"] == "halted" and said in lost.evidence, (lost.summary, lost.evidence)
        assert "halted for failed log dirs" in lost.summary and "a crash or hang" not in lost.summary
