"""A repair plan played in the simulator on the cluster its bundle came from: the proof that its waits can
be met, that it leaves every partition led by a replica that accepts, and that nothing is without an acting
leader longer than its forecast says (tests/test_replay.py).

The cluster is the bundle's own, told again from the seed and settings its manifest records (`run.tell`).
Each step is done as its script does it: the broker stops (controlled shutdown, or the controller's
failover), its repaired dirs lose `partition.metadata`, it starts, and the controller reacts as Kafka does;
then the script's waits are polled a simulated minute at a time while producers write, for as long as
`WAIT_SECONDS` allows. The auto leader rebalance runs as the cluster's config says.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from workbench.hazards import Hazard, of_broker
from workbench.kafka import behaviour
from workbench.manifest import read_manifest
from workbench.remediation.forecast import TP, Moment
from workbench.remediation.planner import RepairPlan
from workbench.remediation.scripts import foretold
from workbench.simulate import story
from workbench.simulate.cluster import Broker, Cluster, Partition
from workbench.simulate.run import tell
from workbench.simulate.scenarios import Scale

WAIT_SECONDS = 900  # the scripts' default
DOWN_MS = 20_000  # how long a broker is down: stop, files removed, start
SETTLE_MINUTES = 5  # after the last step, before the end state is judged
SLACK_MS = 1_000  # a moment's time as the replay stamps it, give or take the controller's reaction
# A leadership handed to a replica that takes it is without a leader only while the LeaderAndIsr travels
# (milliseconds): the forecast does not count those.
HANDOFF_MS = 1_000


@dataclass
class Replayed:
    """What happened when the plan ran."""

    at: dict[Moment, int] = field(default_factory=dict)  # when each moment of the plan came
    stalled: list[str] = field(default_factory=list)  # waits not met within WAIT_SECONDS
    windows: list[tuple[TP, int, int | None]] = field(default_factory=list)  # no acting leader: from, to
    unserved: list[TP] = field(default_factory=list)  # partitions without an acting leader at the end
    stale: list[tuple[int, TP, str | None]] = field(default_factory=list)  # partition.metadata not ZK's id
    short: list[TP] = field(default_factory=list)  # partitions with a replica out of the ISR at the end
    refused: list[str] = field(default_factory=list)  # the step whose script's check refused, and why

    def unforeseen(self, plan: RepairPlan) -> list[str]:
        """The windows without an acting leader that no window of the forecast covers."""
        assert plan.forecast is not None
        foreseen: dict[TP, list[tuple[int, int | None]]] = {}
        for w in plan.forecast.windows:
            end = None if w.end is None else self.at[w.end] + SLACK_MS
            foreseen.setdefault(w.tp, []).append((self.at[w.start] - SLACK_MS, end))
        out = []
        for tp, start, end in self.windows:
            if end is not None and end - start < HANDOFF_MS:
                continue
            if not any(
                a <= start and (b is None or (end is not None and end <= b)) for a, b in foreseen.get(tp, [])
            ):
                shown = "the end" if end is None else f"+{(end - self.at[(0, 'capture')]) / 1000:.1f} s"
                out.append(f"{tp[0]}-{tp[1]}: +{(start - self.at[(0, 'capture')]) / 1000:.1f} s to {shown}")
        return out


def cluster_of(bundle: Path, scratch: Path) -> Cluster:
    """The simulated cluster a bundle was captured from, told again into `scratch` (its logs go there)."""
    m = read_manifest(bundle)
    sim = m.get("simulated")
    if not isinstance(sim, dict):
        raise ValueError(
            f"{bundle}/manifest.json: no 'simulated' entry; expected a bundle the simulator wrote"
        )
    scratch.mkdir(parents=True, exist_ok=True)
    return tell(
        sim["scenario"],
        scratch,
        int(sim["seed"]),
        str(m["kafka_version"]),
        Scale(**sim["scale"]),
        int(sim.get("clock_skew_ms", 0)),
        bool(sim.get("gzip_rolled", False)),
        float(sim["noise_rate"]),
    )


def _serves(c: Cluster, p: Partition) -> bool:
    leader = c.brokers.get(p.leader)
    return leader is not None and leader.alive and p.tp in leader.leading


def replay(c: Cluster, plan: RepairPlan, per_second: float = 20.0) -> Replayed:
    """Run the plan's steps on `c` (at the moment of its capture) and judge where it ends."""
    out = Replayed()
    open_: dict[TP, int] = {}

    def watch() -> None:
        now = {(p.topic, p.partition): p for p in c.partitions()}
        for tp, p in now.items():
            if not _serves(c, p) and tp not in open_:
                open_[tp] = c.now
            elif _serves(c, p) and tp in open_:
                out.windows.append((tp, open_.pop(tp), c.now))
        for tp in [tp for tp in open_ if tp not in now]:  # its topic is deleted
            out.windows.append((tp, open_.pop(tp), c.now))

    c.on_tick = watch
    watch()
    out.at[(0, "capture")] = c.now
    metadata_at_once = behaviour.holds("partition_metadata_written_at_log_creation", c.version)
    for n, step in enumerate(plan.steps, 1):
        b = c.brokers[step.broker]
        unowned = [d for h in of_broker(plan.hazards, b.id) for d in _unowned(b, h)]
        if unowned:  # its script's check_hazards: it stops before the broker is stopped or started
            out.refused.append(f"step {n}: broker {b.id}'s user may not write in {', '.join(unowned)}")
            break
        out.at[(n, "stopped")] = c.now
        if b.alive:
            story.stop(c, step.broker)
        watch()
        for r in step.replicas:  # the script's back_up_and_remove: partition.metadata goes
            b.log_dir.replicas[r.dir_name].topic_id = None
        c.tick(DOWN_MS)
        story.start(c, step.broker)
        watch()
        out.at[(n, "started")] = c.now
        f = foretold(plan, n)
        waits = [(f"broker {b.id} in the ISR of {t}-{q}", _in_isr(c, t, q, b.id)) for t, q in f.rejoins]
        waits += [(f"every replica of {t}-{q} in its ISR", _whole(c, t, q)) for t, q in f.whole]
        if metadata_at_once:
            waits += [
                (
                    f"{r.dir_name} on broker {b.id} holds ZooKeeper's id",
                    _recorded(c, b.id, r.dir_name, r.topic),
                )
                for r in step.replicas
            ]
        for _ in range(WAIT_SECONDS // 60):
            if all(ok() for _, ok in waits):
                break
            story.produce(c, 1, per_second)
        out.stalled += [f"step {n}: {what}" for what, ok in waits if not ok()]
    story.produce(c, SETTLE_MINUTES, per_second)
    watch()
    out.windows += [(tp, start, None) for tp, start in open_.items()]
    out.unserved = sorted((p.topic, p.partition) for p in c.partitions() if not _serves(c, p))
    out.short = sorted((p.topic, p.partition) for p in c.partitions() if set(p.isr) != set(p.replicas))
    for x in c.brokers.values():
        for d in x.log_dir.replicas.values():
            t = c.topics.get(d.topic)
            if d.delete_dir is not None or t is None or t.topic_id is None:
                continue
            if d.topic_id != t.topic_id and (d.topic_id is not None or metadata_at_once):
                out.stale.append((x.id, (d.topic, d.partition), d.topic_id))
    c.on_tick = None
    return out


def _unowned(b: Broker, h: Hazard) -> list[str]:
    """What the script's check of `h` finds on the simulated host: the dirs its names match (globs, in
    the one log dir) whose topic's files the broker may not rename (`LogDir.denied`)."""
    return sorted(
        r.delete_dir
        for r in b.log_dir.replicas.values()
        if r.delete_dir is not None
        and r.topic in b.log_dir.denied
        and any(fnmatch.fnmatchcase(r.delete_dir, o) for o in h.owned)
    )


def _in_isr(c: Cluster, topic: str, partition: int, broker: int) -> Callable[[], bool]:
    return lambda: broker in c.topics[topic].partitions[partition].isr


def _whole(c: Cluster, topic: str, partition: int) -> Callable[[], bool]:
    p = c.topics[topic].partitions[partition]
    return lambda: set(p.isr) == set(p.replicas)


def _recorded(c: Cluster, broker: int, dir_name: str, topic: str) -> Callable[[], bool]:
    return lambda: c.brokers[broker].log_dir.replicas[dir_name].topic_id == c.topics[topic].topic_id
