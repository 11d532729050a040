"""The topicId mismatch (seed 001): which replicas hold an id ZooKeeper no longer has, why, what it breaks.

A broker records its topic's id in each partition dir (`partition.metadata`, 2.8+, KIP-516) and refuses a
LeaderAndIsr whose id differs (INCONSISTENT_TOPIC_ID): at 2.8 only for a partition it has loaded since it
started (Partition.checkOrSetTopicId, 2.8.2 l.438-463), at 3.x against the log on disk
(ReplicaManager.hasConsistentTopicId, 3.6.2 l.1966). A refused follower never fetches and leaves the ISR.
The id changes when a controller finds a topic znode without `topic_id` and mints one
(initializeControllerContext / processTopicChange): the znode lost it because a pre-2.8 tool rewrote it
(KAFKA-14190) or a controller with IBP < 2.8 did (KAFKA-12835). The causes are in `topic_id_cause.py`;
the evidence both read is `model/topic_ids.py`'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from workbench.analysis import topic_id_cause
from workbench.analysis.contract import CRITICAL, WARNING, Analysis, Kind, Need, maybe
from workbench.analysis.findings import Coverage, Finding, file_ref, first_refs, ranges, taken, zk_ref
from workbench.model.history import topics
from workbench.model.topic_ids import (
    Mismatch,
    ShownWithout,
    Znode,
    disagreements,
    refusals,
    unread_metadata,
)
from workbench.model.topic_ids import replica_ids as replica_ids  # the notebooks' and plots' names
from workbench.model.topic_ids import znode_history as znode_history
from workbench.model.views import views
from workbench.together import Ask, together

if TYPE_CHECKING:
    from workbench.frames import Bundle

CHECK = "topic_ids"


@dataclass(frozen=True)
class Disagreeing:
    """One id a topic's replicas hold on disk, where they hold more than one."""

    topic: str
    disk_topic_id: str
    replicas: int
    files: list[str]


@dataclass(frozen=True)
class Refusal:
    """A broker's lines refusing a topic id for a topic (per pair of ids): the partitions, how many lines,
    the first and last (broker's clock) and the first lines as (file, line)."""

    broker_id: int
    topic: str | None
    log_topic_id: str | None
    request_topic_id: str | None
    partitions: list[int]
    lines: int
    first: datetime
    last: datetime
    refs: list[tuple[str, int]]


@dataclass
class Facts:
    """What the topic-id analysis judges. `expected`: whether the version has topic ids (None: version
    unknown); `unread`: the replicas whose topic id is not known (a partition.metadata copy unreadable, or
    one a pasted listing shows that no copy holds);
    `mismatches` against ZooKeeper's tree, the topic znodes of those topics and of those without an id
    (`absent`); the replicas' disagreements and the brokers' refusals; without the tree, what pastes
    printed (`pasted`: the kinds of paste read, None where none was); the causes' facts (None: no topic
    affected)."""

    expected: bool | None
    version: str | None
    unread: list[str] = field(default_factory=list)
    mismatches: list[Mismatch] = field(default_factory=list)
    known: dict[str, Znode] = field(default_factory=dict)
    absent: list[Znode] = field(default_factory=list)
    disagreements: list[Disagreeing] = field(default_factory=list)
    refusals: list[Refusal] = field(default_factory=list)
    pasted: list[str] | None = None
    printed: list[Mismatch] = field(default_factory=list)
    shown_without: list[ShownWithout] = field(default_factory=list)
    affected: list[str] = field(default_factory=list)
    causes: topic_id_cause.Facts | None = None


def facts(bundle: Bundle) -> Facts:
    v = views(bundle)
    f = Facts(v.topic_ids_expected, v.evidence.kafka_version)
    if f.expected is False:
        return f
    unread = unread_metadata(bundle)
    said = topics.ids_said(bundle)
    disagreeing = Ask(
        disagreements(bundle),
        lambda rs: [Disagreeing(r.topic, r.disk_topic_id, r.replicas, list(r.files)) for r in rs],
    )
    refused = Ask(
        refusals(bundle),
        lambda rs: [
            Refusal(
                r.broker_id,
                r.topic,
                r.log_topic_id,
                r.request_topic_id,
                [p for p in r.partitions if p is not None],
                r.lines,
                r.first,
                r.last,
                [(x.file, x.line_no) for x in r.refs],
            )
            for r in rs
        ],
    )
    got = together(unread, said, disagreeing, refused)
    ids = got[said]
    f.unread = got[unread]
    f.mismatches, f.absent, f.known = ids.mismatches, ids.absent, ids.known
    f.pasted, f.printed, f.shown_without = ids.pasted, ids.printed, ids.shown_without
    f.disagreements, f.refusals = got[disagreeing], got[refused]
    f.affected = sorted(
        {r.topic for r in f.mismatches}
        | {r.topic for r in f.disagreements}
        | {r.topic for r in f.refusals if r.topic}
        | {t.topic for t in f.absent}
    )
    if f.affected:
        f.causes = topic_id_cause.facts(
            bundle, f.affected, f.mismatches, replica_ids(bundle), znode_history(bundle)
        )
    return f


def judge(f: Facts, coverage: Coverage) -> list[Finding]:
    """Every topic-id finding, with the root cause and impact of each affected topic."""
    if f.expected is False:
        coverage.not_applicable(CHECK, f"Kafka {f.version} has no topic ids (they came with 2.8, KIP-516)")
        return []
    if f.expected is None:
        coverage.add(CHECK, ["the Kafka version (manifest kafka_version): topic ids assumed in use"])
    coverage.add(CHECK, f.unread)
    out: list[Finding] = []
    if f.pasted is not None:
        coverage.add(CHECK, used=[f"the topic ids a pasted {u} printed" for u in f.pasted])
        out += [_printed_mismatch(r) for r in f.printed]
        out += [_missing_shown(r) for r in f.shown_without]
    out += [_mismatch(r, f.known[r.topic]) for r in f.mismatches]
    by_topic: dict[str, list[Disagreeing]] = {}
    for d in f.disagreements:
        by_topic.setdefault(d.topic, []).append(d)
    out += [_disagreement(topic, ids) for topic, ids in sorted(by_topic.items())]
    out += [_refusal(r) for r in f.refusals]
    out += [_missing(t) for t in sorted(f.absent, key=lambda t: t.topic)]
    if f.causes is not None:
        out += topic_id_cause.causes(f.causes, f.affected, f.mismatches)
    return out


def _mismatch(r: Mismatch, t: Znode) -> Finding:
    return _stale(r, f"ZooKeeper says {r.said_id}", zk_ref(t.path, t.mzxid))


def _printed_mismatch(r: Mismatch) -> Finding:
    p = r.printed
    assert p is not None
    said = f"{p.how} {r.said_id} ({taken(p.taken_at)}; the partition.metadata as copied into the bundle)"
    return _stale(r, said, file_ref(p.file, p.line_no))


def _missing_shown(r: ShownWithout) -> Finding:
    p = r.printed
    said = f"as a pasted `{p.command}` showed, {taken(p.taken_at)}"
    return _no_id(r.topic, r.znode_version, r.mzxid, said, file_ref(p.file, p.line_no))


def _stale(r: Mismatch, said: str, ref: str) -> Finding:
    """A broker's replicas whose partition.metadata holds another id than the cluster's (`said`)."""
    return Finding(
        "topic_id.mismatch",
        CRITICAL,
        {"topic": r.topic, "broker": r.broker_id, "partitions": r.partitions, "topic_id": r.said_id},
        f"Broker {r.broker_id} holds {len(r.partitions)} replica(s) of {r.topic} (partitions "
        f"{ranges(r.partitions)}) whose partition.metadata says topic id {r.disk_topic_id}, but {said}: the "
        "broker refuses the controller's LeaderAndIsr for them (INCONSISTENT_TOPIC_ID).",
        (ref, *first_refs([file_ref(x) for x in r.files], 3)),
    )


def _disagreement(topic: str, ids: list[Disagreeing]) -> Finding:
    shown = "; ".join(
        f"{r.disk_topic_id} on {r.replicas} replica(s)" for r in sorted(ids, key=lambda r: -r.replicas)
    )
    refs = [file_ref(x) for r in ids for x in r.files]
    return Finding(
        "topic_id.replicas_disagree",
        WARNING,
        {"topic": topic, "topic_ids": sorted(r.disk_topic_id for r in ids)},
        f"The replicas of {topic} disagree on its topic id: {shown}.",
        tuple(first_refs(refs, 6)),
    )


def _refusal(r: Refusal) -> Finding:
    return Finding(
        "topic_id.refused",
        CRITICAL,
        {"topic": r.topic, "broker": r.broker_id, "partitions": r.partitions},
        f"Broker {r.broker_id} refused the topic id {r.request_topic_id} for {r.topic} partitions "
        f"{ranges(r.partitions)}: its log holds {r.log_topic_id} ({r.lines} line(s), "
        f"{r.first:%Y-%m-%d %H:%M:%S} to {r.last:%H:%M:%S} broker time).",
        tuple(file_ref(file, line) for file, line in r.refs),
    )


def _missing(t: Znode) -> Finding:
    return _no_id(
        t.topic, t.znode_version, t.mzxid, f"last written at zxid 0x{t.mzxid:x}", zk_ref(t.path, t.mzxid)
    )


def _no_id(topic: str, version: int | None, mzxid: int | None, said: str, ref: str) -> Finding:
    """A topic znode without topic_id (`said`: where it was seen)."""
    form = f"version {version}" if version is not None else "unreadable"
    pre = " (a pre-2.8 form)" if (version or 0) < 3 else ""
    return Finding(
        "topic_id.missing",
        CRITICAL,
        {"topic": topic, **({"zxid": f"0x{mzxid:x}"} if mzxid is not None else {})},
        f"The topic znode of {topic} has no topic_id ({form}{pre}, {said}): the next controller to start "
        "will mint a new id, and every replica that recorded the old one will refuse it.",
        (ref,),
    )


_TOPIC = {"topic": str}
ANALYSIS = Analysis(
    CHECK,
    needs={
        Need.ZK_STATE: "no topic id to compare the data dirs with",
        Need.DATA_DIRS: "the ids in the replicas' partition.metadata",
        Need.LOGS: "the brokers' refusals",
        Need.PASTED: "the topic ids a kafka-topics --describe or a ZooKeeper shell printed, at their moment",
    },
    wants={Need.ZK_HISTORY: "the root cause can only be 'likely'"},
    facts=facts,
    judge=judge,
    reads=(
        "replica_ids",
        "topics",
        "partitions",
        "replicas",
        "sessions",
        "elections",
        "elected_lines",
        "topic_ids_expected",
        "history",
        "resumed_after",
        "live_brokers",
        "partition_changes",
    ),
    kinds=(
        Kind(
            "topic_id.mismatch",
            (CRITICAL,),
            {**_TOPIC, "broker": int, "partitions": list, "topic_id": str},
            key=("topic", "broker", "partitions"),
        ),
        Kind("topic_id.replicas_disagree", (WARNING,), {**_TOPIC, "topic_ids": list}, key=("topic",)),
        Kind(
            "topic_id.refused",
            (CRITICAL,),
            {"topic": maybe(str), "broker": int, "partitions": list},
            key=("topic", "broker", "partitions"),
        ),
        Kind(
            "topic_id.missing", (CRITICAL,), _TOPIC, {"zxid": str}, key=("topic",)
        ),  # zxid: where ZooKeeper's stat shows it
        *topic_id_cause.KINDS,
    ),
    plots="workbench.plots.standard:topic_ids",
)
findings = ANALYSIS.findings
