"""The incidents `workbench simulate` replays, each a short story over `story.py`'s operations.

A scenario gets a started cluster and tells what happens next; `run.py` writes the bundle and truth.json.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from workbench.simulate import controller as ctl
from workbench.simulate import deletion, reassignment, story
from workbench.simulate.cluster import Cluster, Partition


@dataclass(frozen=True)
class Scale:
    """The knobs: cluster size, topics and partitions, and how long the story runs."""

    brokers: int = 3
    topics: int = 3
    partitions: int = 6
    replication: int = 3
    hours: float = 1.0
    per_second: float = 20.0  # records per partition per second
    racks: int = 0  # broker.rack: rack-1..rack-N round robin (0: none, rack-unaware assignment)
    prefix: str = ""  # before each topic's name: the scenarios chained in one cluster keep theirs apart

    def topic(self, name: str) -> str:
        """The scenario's topic `name` in this cluster."""
        return self.prefix + name


def healthy(c: Cluster, s: Scale) -> None:
    """Topics created by current clients, traffic, one rolling restart: nothing to find."""
    for i in range(s.topics):
        story.create_topic(c, s.topic(f"topic-{i}"), s.partitions, s.replication)
    story.produce(c, s.hours * 30, s.per_second)
    story.restart(c, max(b for b in c.brokers if b != c.controller))
    story.produce(c, s.hours * 30, s.per_second)


def topicid_mismatch(c: Cluster, s: Scale) -> None:
    """KAFKA-14190, the seed's steps: an old client creates a topic and later adds partitions through
    ZooKeeper, so the topic znode loses topic_id; produce and consume stay fine; the controller moves and
    the new one mints a new id; brokers that recorded the old id refuse its requests, and a broker that
    must follow a new leader cannot, and leaves the ISR. Kafka 2.8 or later (topic ids)."""
    orders = s.topic("orders")
    if not c.version_at_least(2, 8):
        raise ValueError("topicid-mismatch needs Kafka 2.8 or later: topic ids came with 2.8 (KIP-516)")
    for i in range(max(0, s.topics - 1)):
        story.create_topic(c, s.topic(f"topic-{i}"), s.partitions, s.replication)
    story.create_topic(c, orders, s.partitions, s.replication, old_client=True)
    story.produce(c, s.hours * 5, s.per_second)
    story.restart(c, max(c.brokers))  # a rolling restart: logs record their topic id (partition.metadata)
    ctl.preferred_election(c)
    story.produce(c, s.hours * 5, s.per_second)
    story.add_partitions(c, orders, s.partitions * 2, old_client=True)
    story.produce(c, s.hours * 10, s.per_second)
    story.controller_failover(c)
    story.produce(c, s.hours * 5, s.per_second)
    ctl.preferred_election(c)
    story.produce(c, s.hours * 35, s.per_second)


def topicid_restart_refused(c: Cluster, s: Scale) -> None:
    """The topic-id mismatch, then a rolling restart: the followers of a partition whose in-sync replicas
    are all stale go (they cannot rejoin the ISR), then its leader, its one in-sync replica left: its
    controlled shutdown cannot move that leadership, the controller takes it offline when the broker goes,
    and elects it again when it comes back, and it refuses: 3.x checks the id against its log on disk;
    2.8 accepts the first LeaderAndIsr, which makes it a replica again (onBrokerStartup's OnlineReplica,
    KafkaController 2.8.2:533), and refuses the election's that follows (536). No working leader from the
    shutdown on: one episode."""
    topicid_mismatch(c, s)
    orders = c.topics[s.topic("orders")]

    def stale(b: int, p: Partition) -> bool:
        return c.brokers[b].log_topic_ids.get(p.tp) not in (None, orders.topic_id)

    p = next(p for p in orders.partitions.values() if p.leader in p.isr and all(stale(r, p) for r in p.isr))
    for f in [r for r in p.isr if r != p.leader and stale(r, p)]:
        story.restart(c, f)  # it leaves the ISR, and cannot rejoin it
    story.produce(c, s.hours * 2, s.per_second)
    assert p.isr == [p.leader], f"{p.tp}'s ISR is {p.isr}"
    story.restart(c, p.leader)
    story.produce(c, s.hours * 5, s.per_second)


def deletion_stuck(c: Cluster, s: Scale) -> None:
    """A topic is deleted and a broker holding its replicas dies while the deletion is in flight: the
    controller halts the deletion (replica deletion failure) and retries it in vain while that broker
    stays down. The capture finds the topic half deleted: its znodes and that broker's logs remain."""
    doomed = s.topic("clickstream-old")
    for i in range(s.topics):
        story.create_topic(c, s.topic(f"topic-{i}"), s.partitions, s.replication)
    story.create_topic(c, doomed, s.partitions, s.replication)
    story.produce(c, s.hours * 10, s.per_second)
    victim = _hosting_non_controller(c, doomed)
    deletion.request(c, doomed)
    story.crash(c, victim)
    story.produce(c, s.hours * 50, s.per_second)


def deletion_complete(c: Cluster, s: Scale) -> None:
    """Three deletions that finish: one with every broker up; one asked for while a broker holding its
    replicas is down (halted for offline replicas, resumed when the broker returns); and one just before
    the capture, whose logs are still renamed '-delete' dirs (file.delete.delay.ms has not passed)."""
    for i in range(max(3, s.topics)):
        story.create_topic(c, s.topic(f"topic-{i}"), s.partitions, s.replication)
    story.produce(c, s.hours * 10, s.per_second)
    deletion.request(c, s.topic("topic-0"))
    story.produce(c, s.hours * 5, s.per_second)
    victim = _hosting_non_controller(c, s.topic("topic-1"))
    story.crash(c, victim)
    story.produce(c, s.hours * 5, s.per_second)
    deletion.request(c, s.topic("topic-1"))
    story.produce(c, s.hours * 20, s.per_second)
    story.start_again(c, victim)
    story.produce(c, s.hours * 20, s.per_second)
    deletion.request(c, s.topic("topic-2"))
    c.tick(c.jitter(15_000, 30_000))


def controller_failover(c: Cluster, s: Scale) -> None:
    """An operator moves the partitions of a busy topic one replica each onto other brokers (throttled);
    while the copies run, the controller's broker dies. Once ZooKeeper expires its session another broker
    is elected, leads what the dead broker led and resumes the reassignment from the topic znode; moves
    onto the dead broker wait for it to return. It returns, but auto.leader.rebalance.enable=false: the
    leaders stay where the failover put them (leader imbalance)."""
    events = s.topic("events")
    c.auto_leader_rebalance = False
    for i in range(s.topics):
        story.create_topic(c, s.topic(f"topic-{i}"), s.partitions, s.replication)
    moved = min(s.replication, len(c.brokers) - 1)
    story.create_topic(c, events, s.partitions, moved)
    story.produce(c, s.hours * 30, s.per_second)
    moves = []
    for p in c.topics[events].partitions.values():
        spare = [b for b in sorted(c.brokers) if b not in p.replicas]
        moves.append((p, [*p.replicas[:-1], spare[p.partition % len(spare)]]))
    reassignment.reassign(c, moves)
    c.tick(c.jitter(2_000, 5_000))
    old = c.controller
    assert old is not None
    story.crash(c, old)
    story.produce(c, s.hours * 20, s.per_second)
    story.start_again(c, old)
    story.produce(c, s.hours * 10, s.per_second)


def reassignment_blocks_deletion(c: Cluster, s: Scale) -> None:
    """A broker holding a large topic dies; an operator moves the topic's replicas off it at a low
    replication throttle, then deletes the topic. The deletion starts (a topic newly queued is not yet
    held by a reassignment: processTopicDeletion marks it before queueing it) and halts on the dead
    broker's replicas; the controller is restarted to unstick it, and the new one resumes the moves, which
    hold the deletion (onPartitionReassignment). At the capture the copies have not caught up: the
    reassignment and the deletion are both in flight, the dead broker still down."""
    clickstream = s.topic("clickstream")
    if len(c.brokers) <= s.replication:
        raise ValueError("reassignment-blocks-deletion needs more brokers than the replication factor")
    for i in range(s.topics):
        story.create_topic(c, s.topic(f"topic-{i}"), s.partitions, s.replication)
    story.create_topic(c, clickstream, s.partitions, s.replication)
    story.produce(c, s.hours * 15, s.per_second * 100)  # a large log: its copy takes an hour at the throttle
    lost = _hosting_non_controller(c, clickstream)
    story.crash(c, lost)
    story.produce(c, 1, s.per_second)  # its session expires; its partitions get new leaders
    moves = []
    for p in c.topics[clickstream].partitions.values():
        if lost in p.replicas:
            spare = [b for b in sorted(c.brokers) if b not in p.replicas and b != lost]
            moves.append((p, [spare[p.partition % len(spare)] if r == lost else r for r in p.replicas]))
    reassignment.reassign(c, moves)
    c.tick(c.jitter(2_000, 5_000))
    deletion.request(c, clickstream)
    story.produce(c, s.hours * 5, s.per_second)
    story.controller_failover(c)
    story.produce(c, s.hours * 30, s.per_second)


def unclean_election(c: Cluster, s: Scale) -> None:
    """unclean.leader.election.enable=true. A follower of a two-replica topic dies; its leader goes on
    alone (ISR of one, acks=all still succeeds) and then dies too. The follower comes back first and,
    though not in the ISR, is elected leader (unclean): the records only the old leader held are gone.
    When the old leader returns it follows, and truncates below its high watermark."""
    payments = s.topic("payments")
    if len(c.brokers) < 3:
        raise ValueError("unclean-election needs three brokers or more (one to stay controller)")
    c.unclean_leader_election = True
    for i in range(s.topics):
        story.create_topic(c, s.topic(f"topic-{i}"), s.partitions, s.replication)
    story.create_topic(c, payments, s.partitions, 2)
    story.produce(c, s.hours * 10, s.per_second)
    p = next(p for p in c.topics[payments].partitions.values() if c.controller not in p.replicas)
    leader, follower = p.leader, next(r for r in p.replicas if r != p.leader)
    story.crash(c, follower)
    story.produce(c, s.hours * 10, s.per_second)  # its session expires; the leader goes on alone
    story.crash(c, leader)
    story.produce(c, s.hours * 5, s.per_second)
    story.start_again(c, follower)  # elected though not in the ISR
    story.produce(c, s.hours * 5, s.per_second)
    story.start_again(c, leader)  # follows, and truncates what only it held
    story.produce(c, s.hours * 20, s.per_second)


def controller_hang(c: Cluster, s: Scale) -> None:
    """The controller's broker stands still for half a minute (a stop-the-world GC pause) while it leads
    partitions that producers with acks=1 write to. ZooKeeper expires its session after the timeout:
    another broker is elected and leads its partitions, so the cluster was without a controller and
    those partitions without a leader from the freeze, not from the expiry. When it runs again it
    appends what producers still send it for a moment, learns its session expired, resigns, registers
    anew and follows the new leaders: it truncates what it appended alone (acknowledged, lost)."""
    _controller_stands_still(c, s, (25_000, 40_000))


def controller_hang_woke_first(c: Cluster, s: Scale) -> None:
    """As controller_hang, but the pause ends just before ZooKeeper, a tick late, expires the session: the
    lines the controller writes as it runs again come before its session's end, and are no sign that it
    worked before (its time-out line says when it was last heard)."""
    _controller_stands_still(c, s, None, woke_first=True)


def controller_hang_back_before_read(c: Cluster, s: Scale) -> None:
    """As controller_hang_woke_first, but the controller's broker registers anew before the broker elected
    in its place reads /brokers/ids, which takes it as live: no leader is elected for what it led and no
    partition state is written, so neither ZooKeeper's states nor OfflinePartitionsCount show that nobody
    served those partitions while it stood still."""
    _controller_stands_still(c, s, None, back_before_read=True)


def leader_pause(c: Cluster, s: Scale) -> None:
    """A broker that leads partitions stands still for most of its session timeout and runs on in the same
    session: ZooKeeper, the controller and leadership never notice, yet those partitions had no working
    leader meanwhile."""
    for i in range(s.topics):
        story.create_topic(c, s.topic(f"topic-{i}"), s.partitions, s.replication)
    story.produce(c, s.hours * 20, s.per_second)
    leads = [b.id for b in c.live() if b.leading and b.id != c.controller]
    story.pause_kept(c, max(leads))
    story.produce(c, s.hours * 20, s.per_second)


def deletion_denied(c: Cluster, s: Scale) -> None:
    """A topic's partition dirs on one broker were restored from a backup as root: the broker reads them
    but may not write in them. The topic is deleted: every broker renames its dirs to '-delete' and the
    controller completes the deletion, but file.delete.delay.ms later that broker cannot remove them
    (AccessDeniedException). Kafka takes its only log dir offline and the broker halts; ZooKeeper expires
    its session and the controller moves its leaderships. The '-delete' dirs stay on disk."""
    doomed = s.topic("audit-old")
    for i in range(s.topics):
        story.create_topic(c, s.topic(f"topic-{i}"), s.partitions, s.replication)
    story.create_topic(c, doomed, s.partitions, s.replication)
    story.produce(c, s.hours * 10, s.per_second)
    victim = _hosting_non_controller(c, doomed)
    c.brokers[victim].log_dir.denied.add(doomed)
    deletion.request(c, doomed)
    story.produce(c, s.hours * 30, s.per_second)


def slow_follower(c: Cluster, s: Scale) -> None:
    """A follower's disk stalls three times within ten minutes, for a minute or so each, while producers
    write with acks=all: each time it holds the high watermark of the partitions it follows until their
    leaders drop it from the ISR, replica.lag.time.max.ms after it last caught up (their acks=all
    producers wait meanwhile, past their request.timeout.ms where the wait is longer), then catches up
    and rejoins a minute later: its replicas keep leaving the ISR (isr.flapping)."""
    for i in range(s.topics):
        story.create_topic(c, s.topic(f"topic-{i}"), s.partitions, s.replication)
    story.produce(c, s.hours * 10, s.per_second)
    slow = max(b for b in c.brokers if b != c.controller)
    for _ in range(3):
        story.produce(c, 0.25, s.per_second)  # its fetchers kept up until a moment ago
        story.stall_fetches(c, slow)
        for _ in range(c.rng.randint(3, 6)):  # a quarter of a minute at a time: the leaders check as often
            story.produce(c, 0.25, s.per_second)
        story.resume_fetches(c, slow)
        story.produce(c, 1, s.per_second)  # it catches up and rejoins, for a minute
    story.produce(c, s.hours * 10, s.per_second)


def controller_partitioned(c: Cluster, s: Scale) -> None:
    """The controller's broker is cut off from ZooKeeper and the other brokers for a minute (a network
    partition) while producers beside it, with acks=1, go on writing to the partitions it leads. Its
    ZooKeeper client times out after the read timeout and keeps trying; ZooKeeper expires its session,
    another broker is elected and leads its partitions. When the network heals it learns its session
    expired, resigns, registers anew and follows: it truncates the minute it appended alone."""
    _controller_stands_still(c, s, (50_000, 70_000), isolated=True)


def _controller_stands_still(c: Cluster, s: Scale, lasts: tuple[int, int] | None, **how: bool) -> None:
    """Topics written to, then the controller's broker pauses for a time drawn from `lasts` (None: as
    `how` says) amid the traffic, which goes on after (`story.pause`)."""
    for i in range(s.topics):
        story.create_topic(c, s.topic(f"topic-{i}"), s.partitions, s.replication)
    story.produce(c, s.hours * 20, s.per_second)
    assert c.controller is not None
    story.pause(c, c.controller, c.jitter(*lasts) if lasts else 0, s.per_second, **how)
    story.produce(c, s.hours * 20, s.per_second)


def _hosting_non_controller(c: Cluster, topic: str) -> int:
    hosts = {r for p in c.topics[topic].partitions.values() for r in p.replicas}
    return max(b for b in hosts if b != c.controller)


SCENARIOS: dict[str, Callable[[Cluster, Scale], None]] = {
    "healthy": healthy,
    "topicid-mismatch": topicid_mismatch,
    "topicid-restart-refused": topicid_restart_refused,
    "deletion-stuck": deletion_stuck,
    "deletion-complete": deletion_complete,
    "controller-failover": controller_failover,
    "reassignment-blocks-deletion": reassignment_blocks_deletion,
    "unclean-election": unclean_election,
    "controller-hang": controller_hang,
    "controller-hang-woke-first": controller_hang_woke_first,
    "controller-hang-back-before-read": controller_hang_back_before_read,
    "controller-partitioned": controller_partitioned,
    "deletion-denied": deletion_denied,
    "leader-pause": leader_pause,
    "slow-follower": slow_follower,
}


def lookup(name: str) -> Callable[[Cluster, Scale], None]:
    """The scenario `name`, or `a+b+...`: those scenarios told one after another in one cluster, each with
    topics of its own (s1-..., s2-...), so that one bundle (and one triage) holds several stories. A chain
    should end with the story whose state the capture must show (a broker still down, a deletion half done)
    and keep the stories that change cluster-wide settings out."""
    parts = name.split("+")
    unknown = [p for p in parts if p not in SCENARIOS]
    if unknown:
        raise ValueError(f"unknown scenario {unknown[0]!r}; expected one of {', '.join(SCENARIOS)}, or a+b")
    if len(parts) == 1:
        return SCENARIOS[name]

    def chained(c: Cluster, s: Scale) -> None:
        for i, part in enumerate(parts, 1):
            SCENARIOS[part](c, replace(s, prefix=f"{s.prefix}s{i}-"))

    return chained
