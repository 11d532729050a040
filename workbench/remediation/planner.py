"""The topicId repair plan (seed 001): which replicas, which brokers in which order, and what each step does.

A replica whose `partition.metadata` holds an id ZooKeeper no longer has is refused by its broker until the
file is gone; the broker then records ZooKeeper's id on a later LeaderAndIsr. The plan names exactly those
partition dirs, per broker (`leader-epoch-checkpoint` stays unless asked: it is not rebuilt after a clean
shutdown, `leader_epochs_not_rebuilt_after_clean_shutdown`). The order of brokers and what each step does
to leadership, the ISRs and availability come from `forecast`, played on the partitions as the bundle shows
them; the scripts (`scripts.py`) wait only for what the forecast says the step brings about.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pyspark.sql import Window
from pyspark.sql import functions as F

from workbench import hazards
from workbench.analysis.topic_ids import replica_ids
from workbench.analysis.triage import triage
from workbench.hazards import Hazard
from workbench.kafka.names import is_internal
from workbench.kafka.znode_frames import controller_of
from workbench.kafka.znodes import CONTROLLER
from workbench.model import acting
from workbench.model.partition_history import partition_changes
from workbench.model.restarts import Rejoined, Restart, rejoined, restarts
from workbench.model.skew import skew_ms
from workbench.model.views import views
from workbench.remediation import from_logs, recreated
from workbench.remediation.forecast import TP, Forecast, PartitionNow, best

if TYPE_CHECKING:
    from workbench.frames import Bundle

PLAN = "PLAN.md"
SCRIPT = re.compile(r"step-\d+-broker-\d+\.sh")


@dataclass(frozen=True)
class StaleReplica:
    """A partition dir whose partition.metadata holds an id ZooKeeper no longer has."""

    broker: int
    log_dir: str  # the bundle's folder for the log dir ("0", "1", ...)
    topic: str
    partition: int
    disk_topic_id: str
    zk_topic_id: str
    assigned: bool | None  # the broker is in the partition's replica assignment (None: not known)
    in_isr: bool | None  # in the ISR at the capture (None: no partition state)

    @property
    def dir_name(self) -> str:
        return f"{self.topic}-{self.partition}"


@dataclass
class BrokerStep:
    """One broker's part of the plan: its stale replicas and where its log dirs are on its host."""

    broker: int
    replicas: list[StaleReplica]
    log_dirs: dict[str, str | None]  # bundle folder -> path on the broker's host (None: not known)
    controller: bool = False
    registered: bool = True

    @property
    def in_isr(self) -> int:
        return sum(1 for r in self.replicas if r.in_isr)

    @property
    def internal(self) -> list[str]:
        return sorted({r.topic for r in self.replicas if is_internal(r.topic)})


@dataclass
class RepairPlan:
    """What to repair, in which order, and what the bundle could not show."""

    bundle: str
    manifest: dict[str, object]
    steps: list[BrokerStep] = field(default_factory=list)
    left_alone: list[StaleReplica] = field(default_factory=list)  # stale dirs of partitions not assigned
    topics_without_id: list[str] = field(default_factory=list)
    gaps: list[str] = field(default_factory=list)
    zookeeper: dict[int, str] = field(default_factory=dict)  # zookeeper.connect per broker
    not_applicable: str | None = None
    partitions: list[PartitionNow] = field(default_factory=list)  # on the brokers it restarts, now
    forecast: Forecast | None = None  # what the steps do, in their order
    auto_rebalance: bool | None = None  # auto.leader.rebalance.enable, as the brokers' configs say
    restarts: dict[int, list[Restart]] = field(default_factory=dict)  # each broker's, as its lines show
    rejoined: dict[int, list[Rejoined]] = field(default_factory=dict)  # back in the ISRs, as the history's
    current: dict[str, str] = field(default_factory=dict)  # without ZooKeeper: where each topic's id is named
    recreated: list[str] = field(default_factory=list)  # replicas of a deleted topic's id, left out: why
    hazards: list[Hazard] = field(default_factory=list)  # about the brokers it starts: put right first

    def script_name(self, n: int, step: BrokerStep) -> str:
        return f"step-{n}-broker-{step.broker}.sh"

    @property
    def version(self) -> str | None:
        v = self.manifest.get("kafka_version")
        return v if isinstance(v, str) else None

    def markdown(self) -> str:
        from workbench.remediation.markdown import markdown

        return markdown(self)

    def write(self, out: str | Path) -> list[Path]:
        """PLAN.md and one script per broker in `out`, replacing an earlier plan there (and nothing
        else: a folder holding other files is refused)."""
        out = Path(out)
        if out.exists():
            writable(out)
            shutil.rmtree(out)
        out.mkdir(parents=True)
        from workbench.remediation import scripts

        written = [out / PLAN]
        written[0].write_text(self.markdown(), encoding="utf-8")
        for n, step in enumerate(self.steps, 1):
            path = out / self.script_name(n, step)
            path.write_text(scripts.broker_script(self, n, step), encoding="utf-8")
            path.chmod(0o755)
            written.append(path)
        return written


def writable(out: Path) -> None:
    """Raise FileExistsError when `out` holds anything but an earlier plan: checked before planning too,
    so that a wrong --out is said at once, not after the plan is made."""
    if out.is_dir():
        others = sorted(p.name for p in out.iterdir() if p.name != PLAN and not SCRIPT.fullmatch(p.name))
        if others:
            raise FileExistsError(
                f"{out}: holds {', '.join(others[:3])}; expected an empty folder or an earlier plan"
            )


def plan(bundle: Bundle) -> RepairPlan:
    """The repair plan for the bundle's topic-id mismatches (an empty plan says why there is nothing):
    against ZooKeeper's tree with its forecast, else against the ids the brokers' refusals and pasted
    output name (`from_logs`), in broker order, not forecast."""
    v = views(bundle)
    ev = v.evidence
    result = RepairPlan(bundle=bundle.evidence.origin, manifest=dict(bundle.manifest))
    if v.topic_ids_expected is False:
        result.not_applicable = f"Kafka {ev.kafka_version} has no topic ids (they came with 2.8, KIP-516)"
        return result
    if ev.zk_state:
        _against_zookeeper(bundle, result)
    else:
        _against_named_ids(bundle, result)
    if result.not_applicable:
        return result
    for s in result.steps:
        for d in {r.log_dir for r in s.replicas}:
            s.log_dirs.setdefault(d, None)
    flags = {c.get("auto.leader.rebalance.enable", "true").strip().lower() for c in ev.configs.values()}
    result.auto_rebalance = None if not flags else "true" in flags
    result.restarts, result.rejoined = restarts(bundle), rejoined(bundle)
    result.zookeeper = {b: c["zookeeper.connect"] for b, c in ev.configs.items() if "zookeeper.connect" in c}
    started = {s.broker for s in result.steps}
    found = triage(bundle, only=hazards.analyses()).findings
    result.hazards = [h for h in hazards.hazards(found) if h.broker in started]
    no_dirs = sorted((ev.brokers | v.live_brokers) - ev.with_datadirs)
    if no_dirs:
        result.gaps.append(
            f"No data dirs of broker {', '.join(map(str, no_dirs))} in the bundle: it may hold "
            "stale replicas this plan does not name. Capture them and make the plan again."
        )
    return result


def _against_zookeeper(bundle: Bundle, result: RepairPlan) -> None:
    v = views(bundle)
    state = v.partitions.select("topic", "partition", "replicas", "isr")
    stale = (
        replica_ids(bundle)
        .where(F.col("state") == "mismatch")
        .join(state, ["topic", "partition"], "left")
        .select(
            "broker_id",
            "log_dir",
            "topic",
            "partition",
            "disk_topic_id",
            "zk_topic_id",
            F.coalesce(F.array_contains("replicas", F.col("broker_id")), F.lit(False)).alias("assigned"),
            F.array_contains("isr", F.col("broker_id")).alias("in_isr"),
        )
        .orderBy("broker_id", "topic", "partition", "log_dir")
        .collect()
    )
    replicas, result.recreated = recreated.left_out(bundle, [StaleReplica(*r) for r in stale])
    result.left_alone = [r for r in replicas if not r.assigned]
    controller = _controller(bundle)
    live = v.live_brokers
    per_broker = _per_broker([r for r in replicas if r.assigned])
    dirs = _host_log_dirs(bundle)
    result.partitions = partitions_now(bundle, per_broker)
    down = (
        frozenset(b for x in result.partitions for b in x.replicas if b not in live) if live else frozenset()
    )
    result.forecast = best(result.partitions, sorted(per_broker), controller, down)
    result.steps = [
        BrokerStep(b, per_broker[b], dirs.get(b, {}), controller=b == controller, registered=b in live)
        for b in result.forecast.order
    ]
    result.topics_without_id = [
        r.topic for r in v.topics.where(F.col("topic_id").isNull()).select("topic").orderBy("topic").collect()
    ]


def _against_named_ids(bundle: Bundle, result: RepairPlan) -> None:
    named, on_disk = from_logs.facts(bundle)
    current, result.gaps = from_logs.current_ids(named)
    if not current:
        result.not_applicable = (
            "the bundle has no ZooKeeper state, and no broker's refusal or pasted output names one id for "
            "a topic: which topic id is current is unknown"
        )
        return
    result.current = {t: n.where for t, n in current.items()}
    replicas, result.recreated = recreated.left_out(bundle, from_logs.stale(on_disk, current))
    per_broker = _per_broker(replicas)
    dirs = _host_log_dirs(bundle)
    result.steps = [BrokerStep(b, rs, dirs.get(b, {})) for b, rs in sorted(per_broker.items())]


def _per_broker(replicas: list[StaleReplica]) -> dict[int, list[StaleReplica]]:
    out: dict[int, list[StaleReplica]] = {}
    for r in replicas:
        out.setdefault(r.broker, []).append(r)
    return out


def _controller(bundle: Bundle) -> int | None:
    row = (
        bundle.znodes.where(F.col("path") == CONTROLLER)
        .select(controller_of(F.col("data")).alias("b"))
        .first()
    )
    return None if row is None else row.b


def _host_log_dirs(bundle: Bundle) -> dict[int, dict[str, str | None]]:
    """Where each bundle log-dir folder is on its broker: the collector's record in the manifest, else
    the n-th entry of log.dirs (or log.dir) in the broker's server.properties, else the bare dir opened."""
    out: dict[int, dict[str, str | None]] = {}
    ev = bundle.evidence
    if ev.manifest.get("source") == "log.dir":
        for d in ev.log_dirs:
            if d.broker_id is not None:
                out.setdefault(d.broker_id, {})[d.name] = str(d.root)
        return out
    for b, config in views(bundle).evidence.configs.items():
        entries = (config.get("log.dirs") or config.get("log.dir") or "").split(",")
        out[b] = {str(n): e.strip() for n, e in enumerate(entries) if e.strip()}
    for part in ev.manifest.get("parts") or []:
        if isinstance(part, dict) and part.get("part") == "broker" and isinstance(part.get("broker"), int):
            for d in part.get("dirs") or []:
                if isinstance(d, dict) and d.get("dir") is not None and d.get("path"):
                    out.setdefault(part["broker"], {})[str(d["dir"])] = str(d["path"])
    return out


def partitions_now(bundle: Bundle, stale: dict[int, list[StaleReplica]]) -> list[PartitionNow]:
    """Every partition with a replica on a broker the plan restarts, as ZooKeeper holds it at the capture,
    with its stale replicas, whether its topic is queued for deletion, whether its leader serves (it did
    not refuse the LeaderAndIsr that made it leader, `acting.mark`; without txn logs, a leader with a
    current id is taken to serve) and serves at ZooKeeper's epoch (a stale leader only if its log says it
    started at that epoch)."""
    held: dict[TP, set[int]] = {}
    for b, rs in stale.items():
        for r in rs:
            held.setdefault((r.topic, r.partition), set()).add(b)
    if not held:
        return []
    v = views(bundle)
    hosted = F.arrays_overlap("replicas", F.array(*[F.lit(b) for b in sorted(stale)]))
    topic = Window.partitionBy("topic")
    moving = F.max(F.coalesce(F.size("adding") + F.size("removing"), F.lit(0)) > 0).over(topic)
    queued = v.delete_markers.select("topic", F.lit(True).alias("queued")).distinct()
    now = (
        v.partitions.join(queued, "topic", "left")
        .select(
            "topic",
            "partition",
            "replicas",
            "isr",
            "leader",
            "leader_epoch",
            # every broker holding a replica of a topic queued for deletion no reassignment holds
            F.when(
                F.col("queued") & ~moving,
                F.array_distinct(F.flatten(F.collect_list("replicas").over(topic))),
            ).alias("deleting"),
        )
        .where(hosted)
    )
    topics = sorted({t for t, _ in held})
    started = (
        acting.acceptances(bundle, skew_ms(bundle))
        .where(F.col("topic").isin(*topics))
        .select(
            "topic", "partition", F.col("broker").alias("leader"), "leader_epoch", F.lit(True).alias("took")
        )
        .distinct()
    )
    now = now.join(started, ["topic", "partition", "leader", "leader_epoch"], "left")
    if v.watched_history is not None:
        last = Window.partitionBy("topic", "partition").orderBy(F.desc("zxid"))
        refused = (
            partition_changes(bundle)
            .where(F.col("topic").isin(*topics))
            .select("topic", "partition", F.row_number().over(last).alias("n"), "refused_by")
            .where("n = 1")
            .select("topic", "partition", F.col("refused_by").isNotNull().alias("refused"))
        )
        now = now.join(refused, ["topic", "partition"], "left")
    else:
        now = now.withColumn("refused", F.lit(None).cast("boolean"))
    out = []
    for row in now.orderBy("topic", "partition").collect():
        tp = (row.topic, row.partition)
        if row.replicas is None:
            continue
        leader = -1 if row.leader is None else row.leader
        stale_leader = leader in held.get(tp, ())
        serves = leader >= 0 and (
            not row.refused if row.refused is not None else not stale_leader or bool(row.took)
        )
        out.append(
            PartitionNow(
                row.topic,
                row.partition,
                tuple(row.replicas),
                tuple(row.isr or ()),
                leader,
                frozenset(held.get(tp, ())),
                serves,
                serves and (not stale_leader or bool(row.took)),
                None if row.deleting is None else frozenset(row.deleting),
            )
        )
    return out
