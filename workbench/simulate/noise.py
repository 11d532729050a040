"""Background lines: what a broker's server.log is mostly made of while nothing goes wrong.

Each in the chosen version's wording (sources at the three tags in apache/kafka):
- a consumer group rebalancing on its coordinator, because a member joined or one's heartbeat expired
  (GroupCoordinator: "Member ... has failed", "Preparing to rebalance", "Stabilized", "Assignment
  received");
- a replica fetcher's fetch session evicted by its leader's cache (FetchSessionHandler.handleResponse:
  "Node N was unable to process the fetch request with (...): FETCH_SESSION_ID_NOT_FOUND.");
- the offsets expiry check every offsets.retention.check.interval.ms (10 min; GroupMetadataManager
  cleanupGroupMetadata: "Removed N expired offsets").

Segment rolls are not here: they follow the traffic (`story.produce`). A broker's lines come at about
`rate` a second (a Poisson process of events, a rebalance being several lines) from an RNG of its own, so
the story draws the same numbers whatever the rate. Each line is made when it is written, from the
cluster as it is then: a stopped broker says nothing, a fetcher fetches from the leader it follows.
"""

from __future__ import annotations

import heapq
import random
import uuid
from functools import cache
from typing import TYPE_CHECKING, Any

from workbench.kafka import defaults
from workbench.kafka.jvm_order import java_string_hash
from workbench.simulate import wording

if TYPE_CHECKING:
    from workbench.simulate.cluster import Cluster

OFFSETS_TOPIC_PARTITIONS = defaults.OFFSETS_TOPIC_NUM_PARTITIONS
RETENTION_CHECK_MS = defaults.OFFSETS_RETENTION_CHECK_INTERVAL_MS
INITIAL_REBALANCE_DELAY_MS = defaults.GROUP_INITIAL_REBALANCE_DELAY_MS
REBALANCE_SHARE = 0.3  # of the drawn events; a rebalance is three or four lines, the others one
LINES_PER_EVENT = 1 + REBALANCE_SHARE * 2.5


Line = tuple[str, str, str]  # level, logger, message with its logIdent


@cache
def group_of(topic: str) -> str:
    """The consumer group reading a topic (one each)."""
    return f"{topic}-consumers"


@cache
def partition_for(group: str) -> int:
    """GroupMetadataManager.partitionFor: Utils.abs(groupId.hashCode) % offsets.topic.num.partitions."""
    h = java_string_hash(group)
    return (0 if h == -(2**31) else abs(h)) % OFFSETS_TOPIC_PARTITIONS


class Groups:
    """The consumer groups of the cluster, one per topic, and their generations (shared by all brokers)."""

    def __init__(self) -> None:
        self.generation: dict[str, int] = {}
        self.busy_until: dict[str, int] = {}  # a rebalance in progress: no other starts before it ends
        self.members: dict[str, list[str]] = {}  # member ids, the group's leader first
        self._clients: dict[str, int] = {}

    def next_client(self, group: str) -> int:
        """The consumer's client.id number (consumer-<group>-<n>, KafkaConsumer since 2.4)."""
        self._clients[group] = self._clients.get(group, 0) + 1
        return self._clients[group]

    def idle_on(self, c: Cluster, broker: int, ms: int) -> list[str]:
        """The groups `broker` coordinates and that are not rebalancing. The coordinator leads the group's
        __consumer_offsets partition, which is not modelled: the live brokers take the 50 round robin."""
        live = sorted(b.id for b in c.live())
        if not live:
            return []
        mine = {p for p in range(OFFSETS_TOPIC_PARTITIONS) if live[p % len(live)] == broker}
        return [
            g
            for t in c.topics
            if t not in c.deleting
            and partition_for(g := group_of(t)) in mine
            and self.busy_until.get(g, 0) < ms
        ]


class Background:
    """One broker's background lines: `next_ms()` says when the next may be, `lines(ms)` makes it."""

    def __init__(self, c: Cluster, broker: int, rate: float, groups: Groups) -> None:
        self.c, self.broker, self.groups = c, broker, groups
        self.rng = random.Random(f"{c.truth['seed']}/background/{broker}")
        self.rate = rate / LINES_PER_EVENT  # events a second
        self._drawn = c.now + self._gap()
        self._expiry = c.now + RETENTION_CHECK_MS
        self._pending: list[tuple[int, int, Line]] = []  # the later lines of a rebalance
        self._seq = 0

    def _gap(self) -> int:
        return max(1, round(self.rng.expovariate(self.rate) * 1000))

    def next_ms(self) -> int:
        return min(self._drawn, self._expiry, self._pending[0][0] if self._pending else self._drawn)

    def lines(self, ms: int) -> list[Line]:
        """The lines due at `ms` (the clock is there: the cluster is as it is at that time)."""
        out: list[Line] = []
        alive = self.c.brokers[self.broker].alive
        if self._expiry <= ms:
            self._expiry = ms + RETENTION_CHECK_MS
            if alive:
                ident = f"[GroupMetadataManager brokerId={self.broker}] "
                out.append(self._line("group.offsets_expired", ident, count=0, ms=self.rng.randint(0, 3)))
        if self._drawn <= ms:
            self._drawn = ms + self._gap()
            if alive and not (self.rng.random() < REBALANCE_SHARE and self._rebalance(ms)):
                out.extend(self._fetch_session_evicted())
        while self._pending and self._pending[0][0] <= ms:
            line = heapq.heappop(self._pending)[2]
            if alive:  # a coordinator that stopped mid-rebalance says no more
                out.append(line)
        return out

    def _fetch_session_evicted(self) -> list[Line]:
        """The leader's fetch session cache evicted this follower's session; the fetcher starts a new one."""
        b = self.c.brokers[self.broker]
        leaders = sorted(set(b.following.values()) & self.c.brokers.keys())
        if not leaders:
            return []
        leader = self.rng.choice(leaders)
        ident = f"[ReplicaFetcher replicaId={self.broker}, leaderId={leader}, fetcherId=0] "
        session, epoch = self.rng.randrange(1, 2**31), self.rng.randrange(1, 100_000)
        fields = {"fetch_session": session, "fetch_epoch": epoch, "error": "FETCH_SESSION_ID_NOT_FOUND"}
        return [self._line("fetcher.session_error", ident, leader=leader, **fields)]

    def _rebalance(self, ms: int) -> bool:
        """A member of a group this broker coordinates joins, or stops heartbeating: the group prepares
        to rebalance, stabilizes at the next generation and gets its leader's assignment."""
        groups = self.groups.idle_on(self.c, self.broker, ms)
        if not groups:
            return False
        g = self.rng.choice(groups)
        members = self.groups.members.setdefault(g, [])
        ident = f"[GroupCoordinator {self.broker}]: "
        if len(members) >= 2 and self.rng.random() < 0.4:
            gone = members.pop(self.rng.randrange(len(members)))
            self._later(ms, self._line("group.member_failed", ident, member=gone, group=g))
            reason = f"removing member {gone} on heartbeat expiration"
        else:
            client = f"consumer-{g}-{self.groups.next_client(g)}"
            joined = f"{client}-{uuid.UUID(int=self.rng.getrandbits(128), version=4)}"
            reason = f"Adding new member {joined} with group instance id None"
            if self._at("3.6.2"):  # KIP-800: the client says why it joins
                reason += "; client reason: rebalance failed due to MemberIdRequiredException"
            members.append(joined)
        old = self.groups.generation.get(g, 0)
        new = self.groups.generation[g] = old + 1
        # an empty group waits group.initial.rebalance.delay.ms for more members (InitialDelayedJoin)
        wait = INITIAL_REBALANCE_DELAY_MS if old == 0 else self.rng.randint(50, 2_000)
        stable_ms = ms + wait + self.rng.randint(0, 300)
        assigned_ms = stable_ms + self.rng.randint(5, 60)
        self.groups.busy_until[g] = assigned_ms
        group = {"group": g, "offsets_partition": f"__consumer_offsets-{partition_for(g)}"}
        prepared = {"state": "PreparingRebalance", "generation": old, "reason": reason}
        stable: dict[str, Any] = {"generation": new}
        assigned: dict[str, Any] = {"group": g, "generation": new}
        if not self._at("2.5.1"):
            stable["members"] = assigned["members"] = len(members)
            assigned["static_members"] = 0
        if self._at("3.6.2"):
            assigned["member"] = members[0]  # the group's leader
        self._later(ms, self._line("group.preparing_rebalance", ident, **group, **prepared))
        self._later(stable_ms, self._line("group.stabilized", ident, **group, **stable))
        self._later(assigned_ms, self._line("group.assignment_received", ident, **assigned))
        return True

    def _line(self, kind: str, ident: str, **fields: Any) -> Line:
        """A catalog line in this version's wording (wording.py), INFO as all of these are."""
        text = wording.say(kind, self.c.version, **fields)
        return ("INFO", wording.logger_of(kind, self.c.version, **fields), ident + text)

    def _later(self, ms: int, line: Line) -> None:
        self._seq += 1
        heapq.heappush(self._pending, (ms, self._seq, line))

    def _at(self, tag: str) -> bool:
        return wording.tag(self.c.version) == tag
