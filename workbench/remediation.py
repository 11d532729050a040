"""The topicId repair plan (seed 001), written as reviewed shell scripts and never run by the workbench.

A replica whose `partition.metadata` holds an id ZooKeeper no longer has is refused by its broker until the
file is gone; the broker then records ZooKeeper's id on the next LeaderAndIsr. The plan names exactly those
partition dirs, per broker: back up and remove `partition.metadata` (`leader-epoch-checkpoint` only when
asked: it is not rebuilt after a clean shutdown, `leader_epochs_not_rebuilt_after_clean_shutdown`), restart
the broker, wait until it is registered and back in each ISR, and the partitions whose last stale replica
it repaired have every replica in their ISR (2.8 writes partition.metadata late: no wait for it there).
Brokers go one at a time: those whose stale replicas already left every ISR first (their restart takes
nothing away), the active controller last (one failover, not several).
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

from pyspark.sql import functions as F

from workbench.analysis.cluster import views
from workbench.analysis.findings import ranges
from workbench.analysis.topic_ids import replica_ids
from workbench.kafka import behaviour
from workbench.kafka.names import is_internal

if TYPE_CHECKING:
    from workbench.frames import Bundle

PLAN = "PLAN.md"
SCRIPT = re.compile(r"step-\d+-broker-\d+\.sh")
WARNING = (
    "This repair is not lossless for availability: each restart moves the broker's leaders away, clients "
    "see errors and retries while it is down, and a partition whose other in-sync replicas are down goes "
    "offline until the broker is back. Segments and offsets are not touched."
)


@dataclass(frozen=True)
class StaleReplica:
    """A partition dir whose partition.metadata holds an id ZooKeeper no longer has."""

    broker: int
    log_dir: str  # the bundle's folder for the log dir ("0", "1", ...)
    topic: str
    partition: int
    disk_topic_id: str
    zk_topic_id: str
    assigned: bool  # the broker is in the partition's replica assignment
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

    def script_name(self, n: int, step: BrokerStep) -> str:
        return f"step-{n}-broker-{step.broker}.sh"

    def markdown(self) -> str:
        return _markdown(self)

    def write(self, out: str | Path) -> list[Path]:
        """PLAN.md and one script per broker in `out`, replacing an earlier plan there (and nothing
        else: a folder holding other files is refused)."""
        out = Path(out)
        if out.exists():
            others = sorted(p.name for p in out.iterdir() if p.name != PLAN and not SCRIPT.fullmatch(p.name))
            if others:
                raise FileExistsError(
                    f"{out}: holds {', '.join(others[:3])}; expected an empty folder or an earlier plan"
                )
            shutil.rmtree(out)
        out.mkdir(parents=True)
        written = [out / PLAN]
        written[0].write_text(self.markdown(), encoding="utf-8")
        for n, step in enumerate(self.steps, 1):
            path = out / self.script_name(n, step)
            path.write_text(broker_script(self, n, step), encoding="utf-8")
            path.chmod(0o755)
            written.append(path)
        return written


def plan(bundle: Bundle) -> RepairPlan:
    """The repair plan for the bundle's topic-id mismatches (an empty plan says why there is nothing)."""
    v = views(bundle)
    ev = v.evidence
    result = RepairPlan(bundle=bundle.evidence.origin, manifest=dict(bundle.manifest))
    if v.topic_ids_expected is False:
        result.not_applicable = f"Kafka {ev.kafka_version} has no topic ids (they came with 2.8, KIP-516)"
        return result
    if not ev.zk_state:
        result.not_applicable = "the bundle has no ZooKeeper state: which topic id is current is unknown"
        return result
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
    replicas = [StaleReplica(*r) for r in stale]
    result.left_alone = [r for r in replicas if not r.assigned]
    controller = _controller(bundle)
    live = v.live_brokers
    per_broker: dict[int, list[StaleReplica]] = {}
    for r in replicas:
        if r.assigned:
            per_broker.setdefault(r.broker, []).append(r)
    dirs = _host_log_dirs(bundle)
    result.steps = sorted(
        (
            BrokerStep(b, rs, dirs.get(b, {}), controller=b == controller, registered=b in live)
            for b, rs in per_broker.items()
        ),
        key=lambda s: (s.controller, s.in_isr, s.broker),
    )
    for s in result.steps:
        for d in {r.log_dir for r in s.replicas}:
            s.log_dirs.setdefault(d, None)
    result.topics_without_id = [
        r.topic for r in v.topics.where(F.col("topic_id").isNull()).select("topic").orderBy("topic").collect()
    ]
    result.zookeeper = {b: c["zookeeper.connect"] for b, c in ev.configs.items() if "zookeeper.connect" in c}
    no_dirs = sorted((ev.brokers | live) - ev.with_datadirs)
    if no_dirs:
        result.gaps.append(
            f"No data dirs of broker {', '.join(map(str, no_dirs))} in the bundle: it may hold "
            "stale replicas this plan does not name. Capture them and make the plan again."
        )
    return result


def _controller(bundle: Bundle) -> int | None:
    row = (
        bundle.znodes.where(F.col("path") == "/controller")
        .select(F.get_json_object("data", "$.brokerid").cast("int").alias("b"))
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


# -- the scripts -------------------------------------------------------------------------------------
def _var(folder: str) -> str:
    return "LOG_DIR_" + re.sub(r"\W", "_", folder)


def _completed(p: RepairPlan, n: int) -> list[tuple[str, int]]:
    """The partitions whose last stale replica step n repairs: only then can their ISR be whole."""
    last: dict[tuple[str, int], int] = {}
    for i, step in enumerate(p.steps, 1):
        for r in step.replicas:
            last[(r.topic, r.partition)] = i
    return sorted(tp for tp, i in last.items() if i == n)


def broker_script(p: RepairPlan, n: int, step: BrokerStep) -> str:
    """Step n of the plan: the script run on `step`'s broker, from scripts/repair-broker.sh."""
    # 3.x writes partition.metadata at log creation; 2.8 only on a later LeaderAndIsr; unknown: no wait
    version = p.manifest.get("kafka_version")
    written_at_once = behaviour.holds(
        "partition_metadata_written_at_log_creation", version if isinstance(version, str) else None
    )
    template = resources.files("workbench").joinpath("scripts/repair-broker.sh").read_text("utf-8")
    total = len(p.steps)
    after = f"after step {n - 1} ({p.script_name(n - 1, p.steps[n - 2])}) has finished" if n > 1 else "first"
    nxt = (
        f"; next: {p.script_name(n + 1, p.steps[n])} on broker {p.steps[n].broker}'s host"
        if n < total
        else ""
    )
    role = " (the active controller: last, so the cluster fails over once)" if step.controller else ""
    internal = "".join(
        f"#\n# INTERNAL TOPIC {t} is affected on this broker: its partitions here move their "
        f"{'group coordinators' if t == '__consumer_offsets' else 'transaction coordinators'} while it "
        "restarts.\n"
        for t in step.internal
    )
    log_dirs = "\n".join(
        f': "${{{_var(k)}:={v}}}"   # datadirs/{k} in the bundle'
        if v
        else f"# {_var(k)}: datadirs/{k} in the bundle; its path on the host is not in the bundle: export it"
        for k, v in sorted(step.log_dirs.items())
        if any(r.log_dir == k for r in step.replicas)
    )
    rows = "\n".join(
        f'  "{_var(r.log_dir)} {r.dir_name} {r.topic} {r.partition} {r.disk_topic_id} {r.zk_topic_id}"'
        f"{'' if r.in_isr else '   # out of the ISR at the capture' if r.in_isr is False else ''}"
        for r in step.replicas
    )
    cluster = p.manifest.get("cluster") or "unknown"
    fields = {
        "TITLE": f"Topic id repair, step {n} of {total}: broker {step.broker}{role}",
        "BUNDLE": p.bundle,
        "CLUSTER": str(cluster),
        "KAFKA_VERSION": str(p.manifest.get("kafka_version") or "unknown"),
        "CAPTURED_AT": str(p.manifest.get("captured_at") or "unknown"),
        "BROKER": str(step.broker),
        "WHEN": after,
        "SCRIPT": p.script_name(n, step),
        "INTERNAL": internal + ("\n" if internal else ""),
        "ZOOKEEPER": p.zookeeper.get(step.broker) or next(iter(p.zookeeper.values()), "<zookeeper.connect>"),
        "WAIT_FOR_METADATA": "yes" if written_at_once else "no",
        "METADATA_WHEN": (
            "partition.metadata is written when the log is created, so the restart writes it"
            if written_at_once
            else "partition.metadata may be written only by a later LeaderAndIsr (2.8 writes it for a log "
            "already attached), so the script does not wait for it"
        ),
        "COMPLETED": "\n".join(f'  "{t} {q}"' for t, q in _completed(p, n)),
        "BACKUP_DIR": f"/var/tmp/topic-id-repair-{cluster}-broker-{step.broker}",
        "LOG_DIRS": log_dirs,
        "REPLICAS": rows,
        "NEXT": nxt,
    }
    return re.sub(r"@([A-Z_]+)@", lambda m: fields[m.group(1)], template)


# -- the plan, for people ------------------------------------------------------------------------------
def summary(p: RepairPlan) -> str:
    """One paragraph for the terminal."""
    gaps = "".join(" " + g for g in p.gaps)
    if p.not_applicable:
        return f"No repair plan: {p.not_applicable}."
    if not p.steps:
        return "No replica holds a stale topic id: nothing to repair." + gaps
    count = sum(len(s.replicas) for s in p.steps)
    topics = ", ".join(sorted({r.topic for s in p.steps for r in s.replicas}))
    order = ", ".join(f"broker {s.broker}" for s in p.steps)
    return f"{count} stale replica(s) of {topics} on {len(p.steps)} broker(s); restart order: {order}.{gaps}"


def _markdown(p: RepairPlan) -> str:
    m = p.manifest
    lines = [
        "# Topic id repair plan",
        "",
        f"Made by `workbench remediate` from `{p.bundle}`: cluster {m.get('cluster') or 'unknown'}, "
        f"Kafka {m.get('kafka_version') or 'unknown'}, captured {m.get('captured_at') or 'when unknown'}. "
        "The workbench writes these scripts and never runs them.",
        "",
        summary(p),
    ]
    if p.not_applicable or not p.steps:
        return "\n".join([*lines, *_not_in_plan(p), ""])
    lines += [
        "",
        "## What is wrong",
        "",
        "| topic | ZooKeeper's id | id on disk | broker: partitions |",
        "|---|---|---|---|",
    ]
    by_id: dict[tuple[str, str, str], dict[int, list[int]]] = {}
    for s in p.steps:
        for r in s.replicas:
            by_id.setdefault((r.topic, r.zk_topic_id, r.disk_topic_id), {}).setdefault(s.broker, []).append(
                r.partition
            )
    for (topic, zk_id, disk_id), brokers in sorted(by_id.items()):
        held = "; ".join(f"{b}: {ranges(ps)}" for b, ps in sorted(brokers.items()))
        lines.append(f"| {topic} | {zk_id} | {disk_id} | {held} |")
    lines += [
        "",
        "Each broker refuses the controller's LeaderAndIsr for these replicas (INCONSISTENT_TOPIC_ID), so "
        "they stop following and leave the ISR. Without `partition.metadata` the broker records "
        "ZooKeeper's id on its next LeaderAndIsr. `leader-epoch-checkpoint` stays: after a clean shutdown "
        "Kafka does not rebuild the epoch cache, so without it a follower truncates to its high watermark "
        "(behaviour `leader_epochs_not_rebuilt_after_clean_shutdown`); the scripts remove it only with "
        "REMOVE_LEADER_EPOCH_CHECKPOINT=yes.",
        "",
        "## Warning",
        "",
        WARNING,
        "",
        "## Before you start",
        "",
        "- Read the root cause in `workbench triage`: if a pre-2.8 tool (or a controller with "
        "inter.broker.protocol.version < 2.8) still rewrites topic znodes, stop it first, or the id "
        "changes again at the next controller failover.",
        "- Copy each script to its broker's host and run it with `--check` there: it verifies the host is "
        "that broker, every file still holds the stale id and ZooKeeper still holds the new one. If "
        "anything changed since the capture, capture again and make a new plan.",
        "- Set what differs on your hosts: `KAFKA_BIN`, `ZOOKEEPER`, `STOP_BROKER`, `START_BROKER` "
        "(systemd unit `kafka` by default), `BACKUP_DIR`, `WAIT_SECONDS`; for a ZooKeeper with TLS "
        "`ZK_TLS_CONFIG` (zookeeper-shell.sh `-zk-tls-config-file`, Kafka 2.5+), with SASL a JAAS file in "
        "`KAFKA_OPTS`.",
        "",
        "## Order (one broker at a time; each step waits before it says done)",
        "",
    ]
    for n, s in enumerate(p.steps, 1):
        parts = ", ".join(
            f"{t} {ranges(r.partition for r in s.replicas if r.topic == t)}"
            for t in sorted({r.topic for r in s.replicas})
        )
        notes = [f"{len(s.replicas) - s.in_isr} of {len(s.replicas)} replica(s) already out of the ISR"]
        if s.controller:
            notes.append("the active controller: last, so the cluster fails over once")
        if not s.registered:
            notes.append("not registered at the capture (down): the files go before it starts")
        if s.internal:
            notes.append(f"INTERNAL TOPIC {', '.join(s.internal)}: its coordinators move during the restart")
        lines.append(f"{n}. `{p.script_name(n, s)}` on broker {s.broker}: {parts} ({'; '.join(notes)}).")
    lines += [
        "",
        "Between steps each script waits until the broker is registered in `/brokers/ids`, every repaired "
        "dir has a `partition.metadata` with ZooKeeper's id (from Kafka 3.0, which writes it when the log "
        "is created; 2.8 writes it only on a later LeaderAndIsr), the broker is in the ISR of each repaired "
        "partition (`/brokers/topics/<t>/partitions/<p>/state`), and each partition whose last stale "
        "replica the step repaired has every replica in its ISR: a partition with stale replicas on brokers "
        "of later steps cannot be whole before them. It stops and says what is missing after "
        "`WAIT_SECONDS`; do not start the next step until it says done.",
        "",
        "## Undo",
        "",
        "Each script copies the files into `$BACKUP_DIR/<LOG_DIR_n>/<topic>-<partition>/` before it "
        "removes them. To undo, stop the broker, copy them back with `cp -p`, and start it.",
        *_not_in_plan(p),
        "",
    ]
    return "\n".join(lines)


def _not_in_plan(p: RepairPlan) -> list[str]:
    notes = [
        f"- The topic znode of {t} has no topic_id: the next controller to start mints a new id, and every "
        "replica that recorded the old one will refuse it. Find what rewrote the znode first; this plan "
        "does not write ZooKeeper."
        for t in p.topics_without_id
    ]
    notes += [
        f"- Broker {r.broker} holds {r.dir_name} with the stale id {r.disk_topic_id} but is not in its "
        "assignment: left alone (see `deletion.stray_dir` in triage)."
        for r in p.left_alone
    ]
    notes += [f"- {g}" for g in p.gaps]
    return ["", "## Not in this plan", "", *notes] if notes else []
