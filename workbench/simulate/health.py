"""How healthy the cluster was minute by minute, as its ZooKeeper held it: truth.json's `health`, which the
health analysis must reproduce from the bundle.

After every txn the simulated tree applies, the partitions it touched are counted again the way Kafka
counts them:

- offline: a partition state with no leader (-1) or a leader that is not registered (the controller's
  OfflinePartitionsCount), but for the topics whose deletion the controller has begun (from 2.3; before,
  every topic queued: `offline_count_leaves_out_deletions_started`), as the simulated controller says
  (`deletion_begun`, `deletions_held`);
- no acting leader: a registered leader that refused the LeaderAndIsr making it leader (the simulator
  says so, `refused`), from the write of that leader epoch until another leader or its registration goes;
  or one that went silent (crashed, hung, cut off: `went_silent`), from when ZooKeeper's expiry of its
  session, or the controller's first failed send to it, proves it silent until the registration goes,
  or from when a pause its session survived (or one ZooKeeper expired, its broker registering anew
  before any controller saw it gone: `taken_back`) proves it still until it runs again (`ran_again`);
- under-replicated: an acting leader with fewer replicas in the ISR than the partition's replicas less
  those being added (the leader's UnderReplicatedPartitions, Partition.isUnderReplicated), whatever its
  topic's deletion;
- per broker, the partitions it leads, and checkAndTriggerAutoLeaderRebalance's imbalance: the partitions
  whose first replica it is, and those of them with a leader that is not it (topics queued for deletion
  left out, as the rebalance leaves them out).

The counts move by deltas, one entry per txn that changed any; `series` folds them into minutes.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

from workbench.zookeeper import txns as op
from workbench.zookeeper.datatree import DataTree
from workbench.zookeeper.txns import Txn

BUCKET_MS = 60_000
PEAKED = ("offline", "no_acting_leader", "under_replicated")  # counts kept with their peak per minute
NOBODY = frozenset({"offline", "no_acting_leader"})  # the counts of a partition nobody serves
SUSTAINED_MS = 5 * 60_000  # under-replicated this long is reported (the analysis's threshold)
_STATE = re.compile(r"^/brokers/topics/([^/]+)/partitions/(\d+)/state$")
_TOPIC = re.compile(r"^/brokers/topics/([^/]+)$")
_BROKER = re.compile(r"^/brokers/ids/(\d+)$")
_MARKER = re.compile(r"^/admin/delete_topics/([^/]+)$")
TP = tuple[str, int]


class HealthRecorder:
    """Told every txn after the tree applied it (SimZooKeeper.listeners)."""

    def __init__(self, tree: DataTree, queued_rule: bool = False) -> None:
        self.tree = tree
        self.queued_rule = queued_rule  # before 2.3 OfflinePartitionsCount left out every topic queued
        self.states: dict[TP, tuple[int, tuple[int, ...], int]] = {}  # leader, ISR, leader epoch
        self.assigned: dict[TP, tuple[int, ...]] = {}  # replicas less those being added, first first
        self.first: dict[TP, int] = {}  # the preferred replica
        self.partitions: dict[str, set[int]] = {}
        self.registered: set[int] = set()
        self.queued: set[str] = set()  # marked for deletion
        self.begun: set[str] = set()  # their deletion begun (topicsWithDeletionStarted)
        self.counted: dict[TP, frozenset[str]] = {}
        self.changes: list[tuple[int, int, dict[str, int]]] = []  # zxid, time, count -> delta
        self.went_offline: Counter[tuple[int, int]] = Counter()  # (zxid, leader) -> partitions
        self.held_offline: Counter[tuple[int, int]] = Counter()  # of them, counted again by a held deletion
        self._holding = False
        # of them, those that went offline within an outage that began with a refusal (the refusing leader
        # went): one outage, told by partition.no_acting_leader
        self.went_offline_within: Counter[tuple[int, int]] = Counter()
        self.offline_within: dict[TP, bool] = {}  # whether its last offline episode was one of those
        self.offline_ended: dict[TP, int] = {}  # the txn that last gave each partition a live leader
        self.offline_began: dict[TP, tuple[int, int]] = {}  # its last offline episode's (zxid, leader)
        self.urp_since: dict[TP, tuple[int, tuple[int, ...]]] = {}  # time, replicas out of the ISR
        self.urp_sustained: list[tuple[tuple[int, ...], bool]] = []  # out of the ISR, still at the end
        self.epoch_written: dict[TP, tuple[int, int, int]] = {}  # leader epoch, zxid and time of its write
        self.not_acting: dict[TP, int] = {}  # the registered leader that refused to lead
        self.silent: set[int] = set()  # registered brokers surely silent (crashed, hung, cut off)
        self.kept: set[int] = set()  # brokers whose registration's end no controller saw: still registered
        self.unserved: list[dict[str, Any]] = []  # each stretch a partition had no acting leader
        self.unserved_since: dict[TP, int] = {}  # those still open: when they began
        self.pure: dict[TP, frozenset[str]] = {}  # counted as ZooKeeper alone shows it: the episodes'
        self.last_zxid = 0

    def __call__(self, t: Txn) -> None:
        self.last_zxid = t.zxid
        touched: set[TP] = set()
        for s in t.ops or [t]:
            if s.path:
                touched |= self._refresh(s.path)
        if t.type == op.CLOSE_SESSION:
            touched |= self._refresh_brokers()
        for tp in touched:
            state = self.states.get(tp)
            if state is not None and self.epoch_written.get(tp, (None,))[0] != state[2]:
                self.epoch_written[tp] = (state[2], t.zxid, t.time)
            if tp in self.not_acting and (state is None or self.not_acting[tp] != state[0]):
                del self.not_acting[tp]
            if tp in self.not_acting and self.not_acting[tp] not in self.registered:
                del self.not_acting[tp]
        self._recount(touched, t.zxid, t.time)

    def _recount(self, touched: set[TP], zxid: int, time: int) -> None:
        delta: Counter[str] = Counter()
        for tp in touched:
            now, before = self._counts(tp), self.counted.get(tp, frozenset())
            delta.update({k: 1 for k in now - before})
            delta.subtract({k: 1 for k in before - now})
            self.counted[tp] = now
            self._served(tp, time, bool(now & NOBODY), bool(before & NOBODY))
            # offline and under-replicated episodes as ZooKeeper shows them (a silent leader aside)
            now, before = self._counts(tp, pure=True), self.pure.get(tp, frozenset())
            self.pure[tp] = now
            self._episodes(zxid, time, tp, now, before)
        delta = Counter({k: v for k, v in delta.items() if v})
        if delta:
            self.changes.append((zxid, time, dict(delta)))

    def _served(self, tp: TP, time: int, nobody: bool, nobody_before: bool) -> None:
        """Note a partition's stretch without an acting leader beginning or ending at `time`."""
        if nobody and not nobody_before:
            self.unserved_since.setdefault(tp, time)
        elif nobody_before and not nobody:
            began = self.unserved_since.pop(tp)
            self.unserved.append({"topic": tp[0], "partition": tp[1], "began_ms": began, "ended_ms": time})

    def refused(self, tp: TP, leader: int) -> int | None:
        """The simulator's word that `leader`, ZooKeeper's leader of `tp`, refused to lead it: counted as
        without an acting leader from the write of its current leader epoch, whose zxid is returned."""
        state = self.states.get(tp)
        if state is None or state[0] != leader or leader not in self.registered or tp in self.not_acting:
            return None
        self.not_acting[tp] = leader
        _, zxid, time = self.epoch_written[tp]
        last = next((u for u in reversed(self.unserved) if (u["topic"], u["partition"]) == tp), None)
        if last is not None and last["ended_ms"] == time:  # it ran on: the leader elected refuses it
            self.unserved.remove(last)
            self.unserved_since[tp] = last["began_ms"]
        self._recount({tp}, zxid, time)
        return zxid

    def went_silent(self, broker: int, time: int) -> None:
        """The simulator's word that `broker`, still registered, has surely been silent since `time` (its
        session's expiry less what `behaviour.went_silent` allows, or the controller's failed send to it,
        as the analysis reads them: `outage.silence`): what it
        leads counts as without an acting leader from then until its registration goes."""
        if broker not in self.registered:
            return
        self.silent.add(broker)
        led = {tp for tp, (leader, _, _) in self.states.items() if leader == broker}
        self._recount(led, self.last_zxid, time)

    def ran_again(self, broker: int, time: int) -> None:
        """The simulator's word that `broker`, silent in a session ZooKeeper kept, runs again (its time-out
        line): what it leads counts as acting again."""
        if broker in self.silent:
            self.silent.discard(broker)
            led = {tp for tp, (leader, _, _) in self.states.items() if leader == broker}
            self._recount(led, self.last_zxid, time)

    def taken_back(self, broker: int) -> None:
        """The simulator's word that `broker` will register anew before any controller sees its
        registration go (`expired_session_keeps_leaderships`): until it does, it counts as registered, as
        the controller that takes it back counts it."""
        self.kept.add(broker)

    def _data(self, path: str) -> Any:
        node = self.tree.nodes.get(path)
        return None if node is None or node.data is None else json.loads(node.data)

    def _refresh(self, path: str) -> set[TP]:
        if m := _STATE.match(path):
            tp = (m.group(1), int(m.group(2)))
            s = self._data(path)
            if s is None:
                self.states.pop(tp, None)
            else:
                self.states[tp] = (s["leader"], tuple(s["isr"]), s["leader_epoch"])
            return {tp}
        if m := _TOPIC.match(path):
            topic = m.group(1)
            before = self.partitions.pop(topic, set())
            for p in before:
                self.assigned.pop((topic, p), None)
                self.first.pop((topic, p), None)
            z = self._data(path)
            if z is not None:
                adding = z.get("adding_replicas") or {}
                for p, replicas in z["partitions"].items():
                    added = adding.get(p, [])
                    self.assigned[(topic, int(p))] = tuple(r for r in replicas if r not in added)
                    self.first[(topic, int(p))] = replicas[0]
                self.partitions[topic] = {int(p) for p in z["partitions"]}
            return {(topic, p) for p in before | self.partitions.get(topic, set())}
        if m := _MARKER.match(path):
            topic = m.group(1)
            if path in self.tree.nodes:
                self.queued.add(topic)
            else:
                self.queued.discard(topic)
                self.begun.discard(topic)
            return {(topic, p) for p in self.partitions.get(topic, set())}
        if _BROKER.match(path):
            return self._refresh_brokers()
        return set()

    def _refresh_brokers(self) -> set[TP]:
        now = {int(name) for name in self.tree.children.get("/brokers/ids", ()) if name.isdigit()}
        changed = now ^ self.registered
        self.kept -= now - self.registered  # registered again: counted as it is
        self.silent -= changed - self.kept  # a registration that ends (or begins) ends its silence
        self.registered = now
        return {tp for tp, (leader, _, _) in self.states.items() if leader in changed}

    def _counts(self, tp: TP, pure: bool = False) -> frozenset[str]:
        """What this partition adds to the counts (named as in `series`); `pure`: as ZooKeeper and the
        refusals alone show it, a silent leader counted as acting."""
        if tp not in self.assigned:
            return frozenset()
        queued = tp[0] in self.queued
        begun = queued if self.queued_rule else tp[0] in self.begun
        first, replication = self.first[tp], len(self.assigned[tp])
        out = set() if queued else {f"preferred/{first}"}
        state = self.states.get(tp)
        if state is None:
            return frozenset(out)
        leader, isr = state[0], len(state[1])
        if leader != first and not queued:
            out.add(f"not_leading/{first}")
        if leader < 0 or (leader not in self.registered and leader not in self.kept):
            if not begun:
                out.add("offline")
        else:
            out.add(f"leaders/{leader}")
            if self.not_acting.get(tp) == leader or (leader in self.silent and not pure):
                if not begun:
                    out.add("no_acting_leader")
            elif isr < replication:
                out.add("under_replicated")
        return frozenset(out)

    def deletion_begun(self, topic: str, time: int) -> None:
        """The simulated controller's word that it began deleting `topic` (onTopicDeletion,
        beginTopicDeletion): its partitions leave the offline count."""
        if topic not in self.begun:
            self.begun.add(topic)
            self._recount({(topic, p) for p in self.partitions.get(topic, set())}, self.last_zxid, time)

    def deletions_held(self, topics: list[str], time: int) -> None:
        """A new controller's word that it holds back `topics` (ineligible at its start): it has begun none
        of them, so their partitions count again. Those it begins again at once are not told apart from
        a deletion that ran on (the few txns between its election and tryTopicDeletion)."""
        held = self.begun & set(topics)
        self.begun -= held
        self._holding = True
        self._recount({(t, p) for t in held for p in self.partitions.get(t, set())}, self.last_zxid, time)
        self._holding = False

    def _episodes(self, zxid: int, time: int, tp: TP, now: frozenset[str], before: frozenset[str]) -> None:
        """Note partitions going offline (by txn and leader) and under-replicated stretches, at a txn or at
        a moment after txn `zxid` (a refusal ends an under-replicated stretch at its epoch's write; a new
        controller that holds a deletion back counts its partitions offline again)."""
        if "offline" in now - before:
            key = (zxid, self.states[tp][0])
            self.went_offline[key] += 1
            self.held_offline[key] += self._holding
            self.offline_began[tp] = key
            # its refusing leader went: the outage it was in runs on
            self.offline_within[tp] = "no_acting_leader" in before
            self.went_offline_within[key] += self.offline_within[tp]
        elif "offline" in before - now:
            self.offline_ended[tp] = zxid
        if "under_replicated" in now - before:
            out = tuple(r for r in self.assigned[tp] if r not in self.states[tp][1])
            self.urp_since[tp] = (time, out)
        elif "under_replicated" in before - now:
            began, out = self.urp_since.pop(tp, (time, ()))
            if time - began >= SUSTAINED_MS:
                self.urp_sustained.append((out, False))

    def episodes(self, end_ms: int) -> dict[str, list[dict[str, Any]]]:
        """Each stretch a partition had no acting leader (unserved: offline, refused or silent, one
        stretch however the reason changed; ended_ms None: still); partitions gone offline, per txn and
        leader; under-replicated stretches of SUSTAINED_MS or more (those still at end_ms measured to it),
        per set of replicas out of the ISR when they began."""
        sustained = [*self.urp_sustained]
        sustained += [(out, True) for began, out in self.urp_since.values() if end_ms - began >= SUSTAINED_MS]
        groups: dict[tuple[int, ...], list[bool]] = {}
        for out, still in sustained:
            groups.setdefault(tuple(sorted(out)), []).append(still)
        open_ = [
            {"topic": t, "partition": p, "began_ms": began, "ended_ms": None}
            for (t, p), began in self.unserved_since.items()
        ]
        return {
            "unserved": sorted(
                self.unserved + open_, key=lambda u: (u["topic"], u["partition"], u["began_ms"])
            ),
            "offline": [
                {
                    "zxid": z,
                    "leader": leader,
                    "partitions": n,
                    "within": self.went_offline_within[(z, leader)],
                    **({"held": self.held_offline[(z, leader)]} if self.held_offline[(z, leader)] else {}),
                }
                for (z, leader), n in sorted(self.went_offline.items())
            ],
            "under_replicated": [
                {"out_of_isr": list(out), "partitions": len(s), "still": sum(s)}
                for out, s in sorted(groups.items())
            ],
        }

    def series(self, start_ms: int, end_ms: int) -> list[dict[str, Any]]:
        """One entry per minute from the one holding start_ms to the one holding end_ms: each count at
        the minute's end (the changes of txns stamped in it or before), and for offline and
        under-replicated also their peak (the count after each such txn, in zxid order, or the count the
        minute began with)."""
        first, last = start_ms // BUCKET_MS, end_ms // BUCKET_MS
        level: Counter[str] = Counter()
        peaks: dict[int, Counter[str]] = {}
        by_minute: dict[int, Counter[str]] = {}
        changes = sorted(self.changes, key=lambda c: c[0])
        for i, (zxid, time, delta) in enumerate(changes):
            level.update(delta)
            minute = max(first, time // BUCKET_MS)
            by_minute.setdefault(minute, Counter()).update(delta)
            peak = peaks.setdefault(minute, Counter())
            if i + 1 < len(changes) and changes[i + 1][:2] == (zxid, time):
                continue  # a refusal marked at the same txn (`refused`): peaks count after the txn
            for k in PEAKED:
                peak[k] = max(peak[k], level[k])
        out = []
        end: Counter[str] = Counter()
        for minute in range(first, last + 1):
            began = Counter(end)
            end.update(by_minute.get(minute, Counter()))
            brokers = sorted({int(k.split("/")[1]) for k, v in end.items() if "/" in k and v})
            out.append(
                {
                    "minute_ms": minute * BUCKET_MS,
                    **{k: end[k] for k in PEAKED},
                    **{f"{k}_peak": max(began[k], peaks.get(minute, Counter())[k]) for k in PEAKED},
                    "leaders": {str(b): end[f"leaders/{b}"] for b in brokers if end[f"leaders/{b}"]},
                    "imbalance": {
                        str(b): [end[f"not_leading/{b}"], end[f"preferred/{b}"]]
                        for b in brokers
                        if end[f"preferred/{b}"]
                    },
                }
            )
        return out
