"""What each step of the repair does to the partitions it touches, foretold from the cluster at the capture
and Kafka's rules, and the order of brokers that leaves partitions without an acting leader least.

The rules (each a fact in `kafka/behaviour.py`, with its versions and source lines):
- a replica whose partition.metadata holds a stale id refuses the controller's LeaderAndIsr and keeps the
  role it had (`refused_leader_and_isr_keeps_role`); the controller does not react
  (`controller_acts_only_on_storage_errors`). A broker the plan restarts has its stale files removed, so it
  accepts from then on (at 2.8 it would accept the first request after any restart, then refuse again);
- a stopped broker's leaderships go to the first assigned replica that is alive and in the ISR
  (`leader_is_first_live_isr_replica`); with none the partition is offline, its last ISR member kept
  (`last_isr_member_kept`), until that broker is back and elected;
- a follower catches up and rejoins the ISR only when its leader serves at ZooKeeper's leader epoch
  (`follower_fetches_only_at_its_leaders_epoch`): a leader that refused a later epoch serves at its older
  one, and a follower given the later epoch cannot fetch from it; a stale follower of a leader at a newer
  epoch is fenced and leaves the ISR;
- a partition of a topic queued for deletion is never elected a leader (`deletion_blocks_election`); a
  broker holding one of the topic's replicas that registers resumes its halted deletion
  (`halted_deletion_resumes`), which completes once every replica's broker is live
  (`offline_replicas_halt_deletion`) and no reassignment holds it: its partitions are gone.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

TP = tuple[str, int]
# Where in the plan: (0, "capture") before step 1, then (n, "stopped") and (n, "started") for step n.
Moment = tuple[int, str]
CAPTURE: Moment = (0, "capture")
# What a stretch between two moments weighs when orders are compared: a broker's restart (stopped ->
# started) is short, the waits and the operator between steps (started -> next stopped) longer, and a
# partition left without an acting leader when the plan ends outweighs everything.
RESTART, BETWEEN, FOREVER = 1.0, 5.0, 1000.0
SEARCHED = 7  # up to this many brokers every order is tried; more: brokers added one at a time


@dataclass(frozen=True)
class PartitionNow:
    """A partition with a stale replica, as the bundle shows it at the capture."""

    topic: str
    partition: int
    replicas: tuple[int, ...]  # assignment order: the first is the preferred leader
    isr: tuple[int, ...]
    leader: int  # -1: none
    stale: frozenset[int]  # brokers whose replica holds an id ZooKeeper no longer has
    acting: bool  # the leader serves (it did not refuse the LeaderAndIsr that made it leader)
    current: bool  # ... at ZooKeeper's leader epoch, so that followers given that epoch can fetch
    # queued for deletion and held by no reassignment: every broker holding a replica of its topic
    deleting: frozenset[int] | None = None

    @property
    def tp(self) -> TP:
        return (self.topic, self.partition)


@dataclass
class _Partition:
    now: PartitionNow
    leader: int
    isr: list[int]
    acting: bool
    current: bool
    stale: set[int]
    gone: bool = False  # its topic's deletion completed

    def serves(self, down: set[int]) -> bool:
        return self.gone or (self.leader >= 0 and self.leader not in down and self.acting)


@dataclass
class Move:
    """A leadership the stop of a broker moves: to a replica that accepts it, or to one that refuses."""

    tp: TP
    to: int  # -1: nobody (offline until the broker is back)
    accepts: bool


@dataclass
class StepForecast:
    """One broker's step: what its stop moves, what its return repairs, what the script can wait for."""

    broker: int
    moves: list[Move] = field(default_factory=list)
    rejoins: list[TP] = field(default_factory=list)  # its partitions whose ISR it is back in
    later: dict[TP, int | None] = field(default_factory=dict)  # ... only at that step (None: not in the plan)
    whole: list[TP] = field(default_factory=list)  # partitions with stale replicas whose ISR is whole again
    elected: list[TP] = field(default_factory=list)  # offline partitions it leads again when it is back


@dataclass
class Window:
    """A partition without an acting leader from one moment of the plan to another (None: past its end)."""

    tp: TP
    start: Moment
    end: Moment | None
    leader: int  # who ZooKeeper names at its start (-1: nobody)
    deleted: bool = False  # it ends as its topic's deletion completes


@dataclass
class Forecast:
    order: list[int]
    steps: list[StepForecast]
    windows: list[Window]
    never_whole: list[TP]  # partitions still short of a replica in their ISR when the plan ends
    cost: float

    def windows_of(self, n: int) -> list[Window]:
        """The windows that begin at step n (0: at the capture)."""
        return [w for w in self.windows if w.start[0] == n]


def forecast(
    partitions: list[PartitionNow],
    order: list[int],
    controller: int | None,
    unregistered: frozenset[int] = frozenset(),
) -> Forecast:
    """Play the steps in `order`: each broker stops, its stale replicas lose their files, it starts; what
    the controller and the brokers do is Kafka's rules above. `unregistered`: brokers not registered at
    the capture (each comes back at its own step, if it has one)."""
    state = {
        p.tp: _Partition(p, p.leader, list(p.isr), p.acting, p.current and p.acting, set(p.stale))
        for p in partitions
    }
    down = set(unregistered)
    open_: dict[TP, Window] = {}
    windows: list[Window] = []

    def observe(at: Moment) -> None:
        for tp, s in state.items():
            if not s.serves(down) and tp not in open_:
                open_[tp] = Window(tp, at, None, s.leader)
                windows.append(open_[tp])
            elif s.serves(down) and tp in open_:
                w = open_.pop(tp)
                w.end, w.deleted = at, s.gone

    observe(CAPTURE)
    steps: list[StepForecast] = []
    after: list[dict[TP, set[int]]] = []  # each step's ISRs once its broker is back
    for n, b in enumerate(order, 1):
        step = StepForecast(b)
        touched = {tp: s for tp, s in state.items() if b in s.now.replicas and not s.gone}
        bumped: set[TP] = set()  # a new leader epoch its leader serves at: stale followers are fenced
        for tp, s in touched.items():
            if s.leader == b:
                # controlled shutdown, or the election of the controller that follows the controller's stop
                others = [r for r in s.isr if r != b]
                new = next((r for r in s.now.replicas if r in others and r not in down), -1)
                if new >= 0:
                    s.isr, s.leader = others, new
                    s.acting = s.current = new not in s.stale
                else:  # nobody to take it: offline, its ISR kept while it is the last member
                    s.isr = s.isr if len(s.isr) == 1 else others
                    s.leader, s.acting, s.current = -1, False, False
                step.moves.append(Move(tp, new, new >= 0 and s.acting))
            elif b in s.isr:  # out of the ISR: a new leader epoch, which a stale leader refuses
                s.isr.remove(b)
                s.current = s.current and s.leader not in s.stale
            else:
                continue
            if s.current:
                bumped.add(tp)
        down.add(b)
        observe((n, "stopped"))
        short = {tp for tp, s in touched.items() if set(s.isr) != set(s.now.replicas)}
        down.discard(b)
        for tp, s in touched.items():
            s.stale.discard(b)
            if s.leader < 0 and b in s.isr and s.now.deleting is None:  # back with its last ISR member
                s.leader, s.acting, s.current = b, True, True
                step.elected.append(tp)
                bumped.add(tp)
            if s.serves(down) and s.current:  # followers that accept its epoch catch up and rejoin
                s.isr += [r for r in s.now.replicas if r not in s.isr and r not in down and r not in s.stale]
        # its registration resumes the deletion of the topics it holds a replica of, which completes if it can
        resumed = {
            s.now.topic for s in touched.values() if s.now.deleting is not None and not s.now.deleting & down
        }
        for s in state.values():
            s.gone = s.gone or s.now.topic in resumed
        observe((n, "started"))
        for tp in bumped:  # by the next step, the fenced stale followers have left the ISR
            s = state[tp]
            s.isr = [r for r in s.isr if r == s.leader or r not in s.stale]
        after.append({tp: set(s.isr) for tp, s in state.items()})
        whole = {
            tp for tp in short if state[tp].now.stale and set(state[tp].isr) == set(state[tp].now.replicas)
        }
        step.whole = sorted(whole)
        for tp in sorted(touched):
            if b in state[tp].isr:
                step.rejoins.append(tp)
            else:
                step.later[tp] = None
        steps.append(step)
    for n, step in enumerate(steps, 1):  # back in the ISR at the first later step that puts it there
        for tp in [tp for tp in step.later if state[tp].gone]:  # deleted: nothing to rejoin
            del step.later[tp]
        for tp in step.later:
            step.later[tp] = next(
                (j for j in range(n + 1, len(steps) + 1) if step.broker in after[j - 1][tp]), None
            )
    never = sorted(tp for tp, s in state.items() if not s.gone and set(s.isr) != set(s.now.replicas))
    return Forecast(order, steps, windows, never, _cost(windows, len(order), order, controller))


def _cost(windows: list[Window], steps: int, order: list[int], controller: int | None) -> float:
    def at(m: Moment) -> float:
        n, phase = m
        if n == 0:
            return 0.0
        return BETWEEN + (n - 1) * (RESTART + BETWEEN) + (RESTART if phase == "started" else 0.0)

    end = at((steps, "started")) + BETWEEN
    total = sum((at(w.end) if w.end else end + FOREVER) - at(w.start) for w in windows)
    # the controller last: restarting it earlier moves the controller to a broker a later step restarts
    if controller in order:
        total += 0.01 * (len(order) - 1 - order.index(controller))
    return total


def best(
    partitions: list[PartitionNow],
    brokers: list[int],
    controller: int | None,
    down: frozenset[int] = frozenset(),
) -> Forecast:
    """The order with the least time without an acting leader (then the fewest partitions left short of
    their ISR, then the controller last); every order up to SEARCHED brokers, else one broker at a time.
    Orders are compared on the partitions with stale replicas (the others fare alike in every order);
    the forecast returned covers them all."""
    everything, partitions = partitions, [p for p in partitions if p.stale]

    def key(f: Forecast) -> tuple[float, int, list[int]]:
        return (f.cost, len(f.never_whole), f.order)

    if len(brokers) <= SEARCHED:
        orders = (forecast(partitions, list(o), controller, down) for o in itertools.permutations(brokers))
        return forecast(everything, min(orders, key=key).order, controller, down)
    chosen: list[int] = []
    left = sorted(brokers)
    while left:
        pick = min(left, key=lambda b: key(forecast(partitions, [*chosen, b], controller, down)))
        chosen.append(pick)
        left.remove(pick)
    return forecast(everything, chosen, controller, down)


def describe(m: Moment, order: list[int]) -> str:
    """'at the capture', 'step 2 (broker 3 stopped)', 'step 2 (broker 3 back)'."""
    n, phase = m
    if n == 0:
        return "at the capture"
    return f"step {n} (broker {order[n - 1]} {'stopped' if phase == 'stopped' else 'back'})"


def during(w: Window, order: list[int]) -> str:
    """How long a window lasts, in the plan's terms."""
    if w.end is None:
        return f"from {describe(w.start, order)} until after the plan: it does not end"
    if w.deleted:
        end = describe(w.end, order)
        return f"from {describe(w.start, order)} until {end}, when its topic's deletion resumes and completes"
    if w.start[0] == w.end[0] and w.start[1] == "stopped":
        return f"while broker {order[w.start[0] - 1]} restarts (step {w.start[0]})"
    return f"from {describe(w.start, order)} until {describe(w.end, order)}"
