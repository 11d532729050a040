"""The simulated cluster: brokers, their ZooKeeper sessions and log dirs, the clock, and the truth.

State lives here; what the controller does is in `controller.py`, what a broker does with the controller's
requests in `broker.py`. Every write goes to `SimZooKeeper`, every log line to `BrokerLogs`, so the three
kinds of evidence come from one story. `truth` records what happened, from the model alone.
"""

from __future__ import annotations

import heapq
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.kafka import behaviour
from workbench.kafka import topic_id as topic_ids
from workbench.simulate import noise, wording
from workbench.simulate.datadirs import LogDir, Replica
from workbench.simulate.health import HealthRecorder
from workbench.simulate.logs import BrokerLogs
from workbench.simulate.real_zk import RealZooKeeper
from workbench.simulate.zookeeper import SimZooKeeper
from workbench.zookeeper.files import Stat

ZK_CONNECT = "zk-1:2181"
ZK_SERVER = "zk-1/10.0.0.10:2181"
DATA_DIR = "/var/lib/kafka/data"


def ms_of(t: float) -> int:
    return round(t)


@dataclass
class Partition:
    """A partition as ZooKeeper and the controller hold it (`/brokers/topics/t/partitions/p/state`)."""

    topic: str
    partition: int
    replicas: list[int]
    leader: int = -1
    leader_epoch: int = 0
    isr: list[int] = field(default_factory=list)
    zk_version: int = 0
    controller_epoch: int = 0
    adding: list[int] = field(default_factory=list)  # a reassignment's AR and RR (KIP-455)
    removing: list[int] = field(default_factory=list)

    @property
    def tp(self) -> str:
        return f"{self.topic}-{self.partition}"

    @property
    def assignment(self) -> str:
        """ReplicaAssignment.toString (controller/ControllerContext.scala, 2.5.1+)."""
        shown = (",".join(map(str, x)) for x in (self.replicas, self.adding, self.removing))
        return "ReplicaAssignment(replicas={}, addingReplicas={}, removingReplicas={})".format(*shown)

    def leader_and_isr(self, version: str) -> str:
        """LeaderAndIsr.toString as the state-change lines print it."""
        isr = ", ".join(map(str, self.isr))
        if wording.tag(version) == "3.6.2":
            states = ", ".join(f"BrokerState(brokerId={b}, brokerEpoch=-1)" for b in self.isr)
            return (
                f"LeaderAndIsr(leader={self.leader}, leaderEpoch={self.leader_epoch}, isrWithBrokerEpoch="
                f"List({states}), leaderRecoveryState=RECOVERED, partitionEpoch={self.zk_version})"
            )
        head = f"LeaderAndIsr(leader={self.leader}, leaderEpoch={self.leader_epoch}"
        return f"{head}, isr=List({isr}), zkVersion={self.zk_version})"


@dataclass
class Topic:
    name: str
    topic_id: str | None  # in the controller's memory
    partitions: dict[int, Partition] = field(default_factory=dict)


@dataclass
class Deletion:
    """A topic queued for deletion (ControllerContext.topicsToBeDeleted) and its replicas' deletion
    states in the controller's memory: (partition, broker) -> ReplicaDeletionStarted, ...Successful or
    ...Ineligible (absent: online or offline)."""

    topic: str
    ineligible: bool = False
    begun: bool = False  # its partitions moved to NonExistentPartition (topicsWithDeletionStarted)
    replicas: dict[tuple[int, int], str] = field(default_factory=dict)


@dataclass
class Broker:
    id: int
    rack: str | None
    log_dir: LogDir
    alive: bool = False
    session: int | None = None
    epoch: int = -1  # czxid of its registration
    # Topic ids of the logs this broker has loaded (what partition.metadata said, or what it recorded).
    log_topic_ids: dict[str, str | None] = field(default_factory=dict)
    # Partitions with a Partition object and its log in this broker process (empty after a restart).
    loaded: set[str] = field(default_factory=set)
    # The leader epoch each of those runs at in this process (Partition.leaderEpoch: -1 until a LeaderAndIsr
    # sets it): a request at no newer epoch is ignored (`leader_and_isr_at_a_held_epoch_ignored`).
    at_epoch: dict[str, int] = field(default_factory=dict)
    # The leader each partition it follows fetches from, and since when it cannot (a refused
    # LeaderAndIsr left it following a broker that is no longer the leader, or following nobody).
    following: dict[str, int] = field(default_factory=dict)
    stuck_since: dict[str, int] = field(default_factory=dict)
    # The leader epoch each followed partition fetches at (the last LeaderAndIsr it accepted): a leader
    # at a newer epoch fences it, one at an older epoch does not know it
    # (`follower_fetches_only_at_its_leaders_epoch`).
    fetch_epoch: dict[str, int] = field(default_factory=dict)
    # The partitions this process acts as leader for, and the leader epoch it took them at: a refused
    # LeaderAndIsr leaves the role as it was (a leader keeps the older epoch, anyone else does not lead).
    leading: dict[str, int] = field(default_factory=dict)
    led: set[str] = field(default_factory=set)  # the partitions it has ever led (its logs say so)
    # A new replica copying its leader's log (a reassignment): when it will have caught up.
    catching_up: dict[str, int] = field(default_factory=dict)
    # Since when its replica fetchers stand still (a stalled disk, a saturated network): alive and
    # registered, it follows but does not keep up (`story.stall_fetches`)
    stalled_since: int | None = None

    @property
    def node(self) -> str:
        """Node.toString as the controller's channel manager prints it."""
        return f"kafka-{self.id}:9092 (id: {self.id} rack: {self.rack or 'null'})"

    @property
    def endpoint(self) -> str:
        return f"PLAINTEXT://kafka-{self.id}:9092"


class Cluster:
    """One simulated run. `now` is the story's clock in epoch ms; nothing happens before it."""

    def __init__(
        self,
        out: Path,
        kafka_version: str,
        seed: int,
        start_ms: int,
        brokers: int,
        racks: int = 0,
        gzip_rolled: bool = False,
        noise_rate: float = 0.0,
        zk_mirror: RealZooKeeper | None = None,
    ):
        self.out = out
        self.version = kafka_version
        self.rng = random.Random(seed)
        self.now = start_ms
        # With a real server (--zk) its txn files are the evidence; without, the model writes its own.
        self.zk = SimZooKeeper(start_ms, None if zk_mirror else out / "zk" / "txnlog", mirror=zk_mirror)
        self.health = HealthRecorder(self.zk.tree, queued_rule=not self.version_at_least(2, 3))
        self.zk.listeners.append(self.health)
        self.logs = BrokerLogs(out, gzip_rolled)
        self.cluster_id = topic_ids.random_uuid(self.rng, self.version)
        self.brokers: dict[int, Broker] = {}
        for b in range(1, brokers + 1):
            rack = f"rack-{(b - 1) % racks + 1}" if racks else None
            self.brokers[b] = Broker(b, rack, LogDir(DATA_DIR, b, None, start_ms))
        self.topics: dict[str, Topic] = {}
        self.deleting: dict[str, Deletion] = {}  # the controller's deletion queue
        self.controller: int | None = None
        self.controller_epoch = 0
        self.epoch_zk_version = -1  # /controller_epoch does not exist yet
        self.correlation_id = 0
        self.delete_topic_enable = True  # delete.topic.enable
        self.auto_leader_rebalance = True  # auto.leader.rebalance.enable
        self.unclean_leader_election = False  # unclean.leader.election.enable
        # server.properties leaves these at this version's defaults (kafka/behaviour.py, KIP-537 at 2.5)
        self.session_timeout_ms = behaviour.zk_session_timeout_default_ms(kafka_version) or 18_000
        self.replica_lag_time_max_ms = behaviour.replica_lag_time_max_default_ms(kafka_version) or 30_000
        self._timers: list[tuple[int, int, Callable[[], None]]] = []
        self._timer_seq = 0
        self.start_ms = start_ms
        self.on_hour: Callable[[float], None] | None = None  # told each simulated hour that passes
        self.on_tick: Callable[[], None] | None = None  # told before the clock moves (what a replay watches)
        self._hours = 0
        self.channel_due: dict[int, int] = {}  # when the controller's last request to a broker arrives
        self.truth: dict[str, Any] = {
            "kafka_version": kafka_version,
            "seed": seed,
            "cluster_id": self.cluster_id,
            "controllers": [],
            "topics": {},
            "topic_id_changes": [],
            "topic_id_mismatches": [],
            "isr_departures": [],
            "held_back": [],  # followers dropped from the ISR while they held its high watermark
            "broker_restarts": [],
            "broker_failures": [],
            "deletions": {},
            "reassignments": [],
            "leaders_not_acting": [],
            "unclean_elections": [],
            "truncations": [],
            "log_dirs_failed": [],
        }
        groups = noise.Groups()
        for broker in self.brokers if noise_rate > 0 else ():
            self.logs.add_background(broker, noise.Background(self, broker, noise_rate, groups))

    # -- time and lines ---------------------------------------------------------------------------
    def tick(self, ms: float) -> int:
        """Move the clock on, run the timers it passes (in time order) and write the lines it passed."""
        target = self.now + max(0, ms_of(ms))
        if self.on_tick is not None:
            self.on_tick()
        while self._timers and self._timers[0][0] <= target:
            due, _, action = heapq.heappop(self._timers)
            self.now = max(self.now, due)
            self.logs.advance(self.now)
            action()
            if self.on_tick is not None:
                self.on_tick()
        self.now = max(self.now, target)
        self.logs.advance(self.now)
        hours = (self.now - self.start_ms) // 3_600_000
        if self.on_hour is not None and hours > self._hours:
            self._hours = hours
            self.on_hour(hours)
        return self.now

    def after(self, ms: float, action: Callable[[], None]) -> None:
        """Run `action` once the clock has moved `ms` on: what happens later without the story
        (a log dir removed after file.delete.delay.ms, a dead broker's session expiring)."""
        self._timer_seq += 1  # same due time: in the order they were set
        heapq.heappush(self._timers, (self.now + ms_of(ms), self._timer_seq, action))

    def jitter(self, low: float, high: float) -> int:
        return ms_of(self.rng.uniform(low, high))

    def say(
        self,
        broker: int,
        kind: str,
        /,
        level: str = "INFO",
        ident: str | None = None,
        at: int | None = None,
        role: str = "broker",
        suffix: str = "",
        of: str = "",
        pick: str = "",
        thrown: str = "",
        **fields: Any,
    ) -> None:
        """One catalog line in this version's wording, written by `broker` at `at` (default now). The
        logIdent prefix follows from the template's logger (LOG_TEMPLATES.md section 2) unless given;
        `of` names the partition a Partition or Log line is about when the text does not; `thrown` is
        the exception (and stack) printed after the line. Nothing where this version writes no such line."""
        try:
            message = wording.say(kind, self.version, pick=pick, **fields)
        except wording.NotWritten:
            return
        logger = wording.logger_of(kind, self.version, pick=pick, **fields)
        if ident is None:
            ident = self.ident(logger, broker, role, str(fields.get("tp", of)))
        self.logs.log(self.now if at is None else at, broker, level, logger, ident + message + suffix, thrown)

    def ident(self, logger: str, broker: int, role: str, tp: str) -> str:
        """kafka.utils.Logging's logIdent of each class (LOG_TEMPLATES.md section 2)."""
        if logger == "state.change.logger":
            if role == "controller":
                return f"[Controller id={broker} epoch={self.controller_epoch}] "
            return f"[Broker id={broker}] "
        short = logger.rpartition(".")[2].removeprefix("Zk")  # 1.1-2.x's state machines were not Zk*
        log_class = "UnifiedLog" if wording.tag(self.version) == "3.6.2" else "Log"
        since_2_3 = self.version_at_least(2, 3)  # TopicDeletionManager, ZooKeeperClient @2.3.1; 1.1-2.2 below
        idents = {
            "KafkaController": f"[Controller id={broker}] ",
            "TopicDeletionManager": f"[Topic Deletion Manager {broker}]{'' if since_2_3 else ','} ",
            "ReplicaStateMachine": f"[ReplicaStateMachine controllerId={broker}] ",
            "PartitionStateMachine": f"[PartitionStateMachine controllerId={broker}] ",
            "ControllerChannelManager": f"[Channel manager on controller {broker}]: ",
            "RequestSendThread": f"[RequestSendThread controllerId={broker}] ",
            "ControllerEventManager$ControllerEventThread": f"[ControllerEventThread controllerId={broker}] ",
            "Partition": f"[Partition {tp} broker={broker}] ",
            "ReplicaManager": f"[ReplicaManager broker={broker}] ",
            "KafkaServer": f"[KafkaServer id={broker}] ",
            "KafkaApis": f"[KafkaApi-{broker}] ",  # KafkaApis.scala 2.5.1:111
            "ZooKeeperClient": "[ZooKeeperClient Kafka server] " if since_2_3 else "[ZooKeeperClient] ",
            "ReplicaFetcherManager": f"[ReplicaFetcherManager on broker {broker}] ",
            "Log": f"[{log_class} partition={tp}, dir={DATA_DIR}] ",
            "UnifiedLog": f"[{log_class} partition={tp}, dir={DATA_DIR}] ",
            "LocalLog": f"[LocalLog partition={tp}, dir={DATA_DIR}] ",
        }
        return idents.get(short, "")

    @property
    def promoted(self) -> str:
        """The level of the controller's state-change lines that KAFKA-8470 moved from TRACE to INFO
        (after 2.5; LOG_TEMPLATES.md section 1): at 2.5.1 they are TRACE, which its log4j config keeps."""
        return "TRACE" if wording.tag(self.version) == "2.5.1" else "INFO"

    def admin_session(self) -> int:
        """A short-lived ZooKeeper session of an admin tool (kafka-topics.sh --zookeeper and the like)."""
        return self.zk.create_session(self.now, 30_000)

    def next_correlation_id(self) -> int:
        self.correlation_id += 1
        return self.correlation_id

    def version_at_least(self, major: int, minor: int) -> bool:
        return tuple(int(x) for x in self.version.split(".")[:2]) >= (major, minor)

    # -- views ------------------------------------------------------------------------------------
    def live(self) -> list[Broker]:
        return [b for b in self.brokers.values() if b.alive]

    def not_acting_ended(
        self, topic: str | None = None, partition: int | None = None, broker: int | None = None
    ) -> None:
        """Close the open windows in which a partition's ZooKeeper leader was not acting, for the given
        topic, partition and leader (None: any)."""
        for w in self.truth["leaders_not_acting"]:
            if w["to_ms"] is not None or broker not in (None, w["broker"]):
                continue
            if topic in (None, w["topic"]) and partition in (None, w["partition"]):
                w["to_ms"] = self.now

    def partitions(self) -> list[Partition]:
        return [p for t in self.topics.values() for p in t.partitions.values()]

    def replica(self, broker: Broker, p: Partition) -> Replica:
        r = broker.log_dir.replicas.get(p.tp)
        if r is None:
            r = broker.log_dir.replicas[p.tp] = Replica(p.topic, p.partition, self.now, modified_ms=self.now)
        return r

    def zk_json(self, doc: Any) -> bytes:
        return json.dumps(doc, separators=(",", ":")).encode()

    def stat_line(self, path: str) -> str:
        """Stat.toString: czxid,mzxid,ctime,mtime,version,cversion,aversion,ephemeralOwner,dataLength,
        numChildren,pzxid (the client's view, as KafkaZkClient logs it)."""
        data, s = self.zk.get(path)
        assert isinstance(s, Stat)
        kids = len(self.zk.children(path))
        values = (s.czxid, s.mzxid, s.ctime, s.mtime, s.version, 2 * s.cversion - kids, s.aversion)
        return ",".join(map(str, (*values, s.ephemeralOwner, len(data or b""), kids, s.pzxid)))
