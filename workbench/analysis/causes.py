"""What led to what: findings that share a cause linked under it, so triage tells each chain once, root
first (a broker's session ends -> the controller moves, its partitions go offline, a deletion waits for
it -> ...).

A link is made only where the two findings' subjects name the same thing (a broker, a topic, a txn): the
evidence of each stays its own, and a finding no rule links stands alone. Each effect has at most one
cause, the first rule that matches, so the links form trees. The postmortem's root causes are those trees
(`grouped`), titled by the family of what they are about, and the families' own groups for the rest. Plain
Python over the findings: no Spark.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from workbench.analysis.findings import Finding, Severity

Match = Callable[[Finding, Finding], bool]


@dataclass(frozen=True)
class Link:
    effect: Finding
    cause: Finding
    because: str  # why the cause explains the effect, in a few words


def _same(*keys: str) -> Match:
    return lambda e, c: all(k in e.subject and e.subject.get(k) == c.subject.get(k) for k in keys)


def _cite_alike(e: Finding, c: Finding) -> bool:
    """The two cite a line in common: the same moment of the evidence tells both."""
    return bool(set(e.evidence) & set(c.evidence))


def _broker_is(key: str) -> Match:
    """The effect's `key` (a broker, or a list of them) names the cause's broker."""

    def match(e: Finding, c: Finding) -> bool:
        named = e.subject.get(key)
        b = c.subject.get("broker")
        return b is not None and (named == b or (isinstance(named, list) and b in named))

    return match


def _all_of(key: str, kinds: tuple[str, ...]) -> Callable[[Finding, list[Finding]], bool]:
    """Every broker in the effect's `key` is named by a finding of `kinds`."""

    def match(e: Finding, found: list[Finding]) -> bool:
        named = e.subject.get(key)
        brokers = {f.subject.get("broker") for f in found if f.kind in kinds}
        return isinstance(named, list) and bool(named) and set(named) <= brokers

    return match


def _topic_in(key: str) -> Match:
    return lambda e, c: c.subject.get("topic") in (e.subject.get(key) or ())


def _both(a: Match, b: Match) -> Match:
    return lambda e, c: a(e, c) and b(e, c)


def _not(key: str, value: Any) -> Match:
    return lambda e, c: e.subject.get(key) != value


def _had(key: str) -> Match:
    return lambda e, c: bool(e.subject.get(key))


# a truncation by a broker that had led the partition: the records it took as leader (before it stopped
# or after it was replaced, whatever its ISR held) never reached the replica that led after it
TOOK_AS_LEADER = "what it took as leader never reached the replica that led after it"
# effect kind, cause kind, when, because: the first that matches is the effect's cause
RULES: tuple[tuple[str, str, Match, str], ...] = (
    ("topic_id.mismatch", "topic_id.root_cause", _same("topic"), "the topic's id changed in ZooKeeper"),
    ("topic_id.replicas_disagree", "topic_id.root_cause", _same("topic"), "the topic's id changed"),
    ("topic_id.refused", "topic_id.mismatch", _same("topic", "broker"), "its replicas hold the old id"),
    ("topic_id.impact", "topic_id.refused", _same("topic"), "replicas refuse the topic"),
    ("topic_id.impact", "topic_id.mismatch", _same("topic"), "replicas hold the old id"),
    ("partition.no_acting_leader", "topic_id.refused", _same("broker"), "the leader refuses the topic's id"),
    (
        "isr.high_watermark_held",
        "topic_id.refused",
        _same("broker"),
        "it refuses the topic's id, so it stopped following its leader",
    ),
    (
        "controller.failover",
        "controller.flapping",
        lambda e, c: e.subject.get("epoch") in c.subject.get("epochs", ()),
        "one of the controller's many moves",
    ),
    (
        "controller.failover",
        "broker.session_expired",
        _both(_broker_is("previous"), _not("cause", "shutdown")),
        "the controller's ZooKeeper session ended",
    ),
    ("controller.failover", "log_dir.offline", _broker_is("previous"), "the controller halted"),
    # an outage that ran on: the leader elected as they came back refuses them (before what took them
    # offline, which alone would have lasted until that election)
    (
        "partition.offline",
        "topic_id.refused",
        lambda e, c: c.subject.get("broker") in (e.subject.get("refused_by") or ()),
        "the leader elected as they came back refuses the topic's id",
    ),
    ("partition.offline", "broker.session_expired", _same("broker", "zxid"), "their leader's session ended"),
    (
        "partition.offline",
        "broker.session_expired",
        _same("broker", "session"),
        "their leader stood still until its session ended",
    ),
    ("partition.offline", "broker.down", _same("broker", "zxid"), "their leader went down"),
    # ZooKeeper's tree alone: still without their leader, a broker down at the capture, since when not known
    (
        "partition.offline",
        "broker.down",
        _both(_same("broker"), lambda e, c: bool(e.subject.get("still")) and "zxid" not in c.subject),
        "their leader is down",
    ),
    # from the lines alone, where no zxid names the loss: both cite the controller's one line handling it
    (
        "partition.offline",
        "broker.session_expired",
        _both(_same("broker"), _cite_alike),
        "their leader's session ended (the controller's line handling its loss)",
    ),
    ("broker.down", "log_dir.offline", _same("broker"), "it halted when its only log dir failed"),
    (
        "broker.session_expired",
        "log_dir.offline",
        _both(_same("broker"), lambda e, c: e.subject.get("cause") == "halted"),
        "it halted when its only log dir failed, leaving its session to expire",
    ),
    (
        "broker.down",
        "broker.session_expired",
        _same("broker", "zxid"),
        "its session ended and it did not come back",
    ),
    # a lingering dir is critical only where removing it failed (`deletion._lingering`)
    (
        "log_dir.offline",
        "deletion.lingering_dir",
        _both(_same("broker"), lambda e, c: c.severity == Severity.CRITICAL),
        "removing a deleted topic's dir failed",
    ),
    (
        "leader.imbalance",
        "topic_id.refused",
        _same("broker"),
        "it refuses the topic's id, so it is out of the ISR and cannot lead",
    ),
    (
        "leader.imbalance",
        "broker.session_expired",
        _same("broker"),
        "it lost its leaderships when its session ended",
    ),
    ("leader.imbalance", "broker.controlled_shutdown", _same("broker"), "it handed its leaderships over"),
    # the rebalance makes a preferred replica leader only where it is in the ISR (canPreferredReplicaBeLeader,
    # auto_rebalance_elects_a_stale_replica_in_the_isr)
    (
        "leader.imbalance",
        "isr.flapping",
        _same("broker"),
        "it keeps leaving the ISR, so the rebalance passes it by",
    ),
    # and leaves topics queued for deletion out (auto_rebalance_leaves_topics_queued_for_deletion)
    (
        "leader.imbalance",
        "deletion.stuck",
        _topic_in("queued"),
        "its partitions of a topic queued for deletion stay out of the rebalance until the deletion ends",
    ),
    # a reassignment completes once every target replica is in the ISR
    # (reassignment_completes_with_its_targets_in_the_isr)
    (
        "reassignment.stuck",
        "isr.flapping",
        lambda e, c: (
            c.subject.get("broker") in (e.subject.get("target") or ())
            and c.subject.get("broker") not in (e.subject.get("brokers_down") or ())
        ),
        "a replica it moves to keeps leaving the ISR",
    ),
    (
        "deletion.stuck",
        "reassignment.stuck",
        _both(_had("reassigning"), _same("topic")),
        "a reassignment of the topic holds the deletion",
    ),
    (
        "deletion.stuck",
        "in_flight.reassignment",
        _both(_had("reassigning"), _same("topic")),
        "a reassignment of the topic holds the deletion",
    ),
    ("deletion.stuck", "broker.down", _broker_is("brokers_down"), "a broker holding its replicas is down"),
    (
        "deletion.unfinished",
        "broker.down",
        _broker_is("brokers_down"),
        "a broker holding its replicas is down",
    ),
    ("in_flight.deletion", "deletion.stuck", _topic_in("topics"), "the deletion does not finish"),
    (
        "data_loss.truncation",
        "controller.failover",
        lambda e, c: c.subject.get("previous") == e.subject.get("broker"),
        TOOK_AS_LEADER,
    ),
    ("data_loss.truncation", "broker.session_expired", _same("broker"), TOOK_AS_LEADER),
)
# a partition is under-replicated where every broker out of its ISR is down, halted or refusing
SPREAD: tuple[tuple[str, tuple[str, ...], str], ...] = (
    (
        "partition.under_replicated",
        ("broker.down", "broker.session_expired"),
        "brokers out of the ISR went down",
    ),
    ("partition.under_replicated", ("topic_id.refused",), "brokers out of the ISR refuse the topic's id"),
)


def links(findings: list[Finding]) -> list[Link]:
    """Each finding's cause among `findings`, where a rule finds one."""
    out: dict[int, Link] = {}
    for e in findings:
        for kind, cause_kind, when, because in RULES:
            if e.kind != kind or id(e) in out:
                continue
            cause = _nearest(e, [c for c in findings if c.kind == cause_kind and c is not e and when(e, c)])
            if cause is not None and not _reaches(out, cause, e):
                out[id(e)] = Link(e, cause, because)
        for kind, kinds, because in SPREAD:
            if e.kind == kind and id(e) not in out and _all_of("brokers", kinds)(e, findings):
                first = next(
                    f for f in findings if f.kind in kinds and f.subject.get("broker") in e.subject["brokers"]
                )
                if not _reaches(out, first, e):
                    out[id(e)] = Link(e, first, because)
    return list(out.values())


def _nearest(e: Finding, causes: list[Finding]) -> Finding | None:
    """Of several causes (a broker whose session ended twice), the last at or before the effect's txn."""
    at = _zxid(e)
    if len(causes) < 2 or at is None:
        return causes[0] if causes else None
    before = [c for c in causes if (z := _zxid(c)) is not None and z <= at]
    return max(before, key=lambda c: _zxid(c) or 0) if before else causes[0]


def _zxid(f: Finding) -> int | None:
    z = f.subject.get("zxid")
    return int(z, 16) if isinstance(z, str) and z.startswith("0x") else None


def _reaches(made: dict[int, Link], start: Finding, target: Finding) -> bool:
    """Whether following causes from `start` reaches `target` (a link to it would close a loop)."""
    seen, f = set(), start
    while id(f) in made and id(f) not in seen:
        if f is target:
            return True
        seen.add(id(f))
        f = made[id(f)].cause
    return f is target


def chains(findings: list[Finding]) -> Iterator[tuple[int, Finding, str]]:
    """The linked findings as trees, root first, each as (depth, finding, because; '' for a root), roots
    and siblings in the findings' own order (most severe first)."""
    made = links(findings)
    children: dict[int, list[Link]] = {}
    for link in made:
        children.setdefault(id(link.cause), []).append(link)
    effects = {id(link.effect) for link in made}
    order = {id(f): i for i, f in enumerate(findings)}

    def walk(f: Finding, depth: int, because: str) -> Iterator[tuple[int, Finding, str]]:
        yield depth, f, because
        for link in sorted(children.get(id(f), []), key=lambda x: order[id(x.effect)]):
            yield from walk(link.effect, depth + 1, link.because)

    for f in findings:
        if id(f) in children and id(f) not in effects:
            yield from walk(f, 0, "")


def in_brief(f: Finding) -> str:
    """A finding in a few words: its kind and what it is about."""
    s = f.subject
    keys = ("topic", "broker", "epoch") if f.kind.startswith("controller.") else ("topic", "broker")
    about = [f"{k} {v}" for k in keys if (v := s.get(k)) is not None and not isinstance(v, list)]
    if isinstance(s.get("partitions"), int):
        about.append(f"{s['partitions']} partition(s)")
    return f"{f.kind} ({', '.join(about)})" if about else f.kind


# -- the same, as the postmortem's root causes -----------------------------------------------------------
# What explains what: a family's root finding kinds, most telling first, and the kinds that are its
# symptoms. A finding no family claims stands on its own.
FAMILIES: tuple[tuple[str, tuple[str, ...], tuple[str, ...]], ...] = (
    (
        "Topic id changed under the brokers",
        ("topic_id.root_cause", "topic_id.mismatch", "topic_id.missing"),
        ("topic_id.", "partition.no_acting_leader", "partition.under_replicated"),
    ),
    ("Records lost", ("data_loss.unclean_election", "data_loss.truncation"), ("data_loss.",)),
    (
        "A deletion that does not finish",
        ("deletion.stuck", "deletion.unfinished", "deletion.marked"),
        ("deletion.", "in_flight.deletion"),
    ),
    (
        "The controller moved",
        ("controller.flapping", "controller.failover"),
        ("controller.", "zk.session_expired", "broker.session_expired", "partition.offline", "in_flight."),
    ),
    (
        "A reassignment that does not finish",
        ("reassignment.stuck", "reassignment.failed"),
        ("reassignment.",),
    ),
)

# What a chain whose findings no family roots is about, by its root's kind.
ROOTS = {
    "broker.session_expired": "A broker's ZooKeeper session ended",
    "log_dir.offline": "A log dir failed",
    "deletion.lingering_dir": "A deleted topic's dir could not be removed",
}


@dataclass
class Group:
    """A root cause and the findings that are its symptoms."""

    title: str
    root: Finding
    symptoms: list[Finding] = field(default_factory=list)


def grouped(findings: list[Finding]) -> tuple[list[Group], list[Finding]]:
    """The findings as root causes with their symptoms (the group with the most severe finding first),
    and those nothing claims: first the chains triage tells (`causes.chains`: the root, and every finding
    it led to), titled by the family of their most severe finding; then, of the rest, each family's root
    with its symptoms."""
    left = sorted(findings, key=Finding.sort_key)
    groups: list[Group] = []
    for depth, f, _ in chains(left):
        if depth == 0:
            groups.append(Group("", f))
        else:
            groups[-1].symptoms.append(f)
    for g in groups:
        g.title = _title(g)
    claimed = {id(f) for g in groups for f in (g.root, *g.symptoms)}
    left = [f for f in left if id(f) not in claimed]
    for title, roots, symptoms in FAMILIES:
        root = next((f for kind in roots for f in left if f.kind == kind), None)
        if root is None:
            continue
        topics = {f.subject.get("topic") for f in left if f.kind.startswith(roots[0].split(".")[0])}
        mine = [
            f
            for f in left
            if f is not root
            and f.kind.startswith(symptoms)
            and (not f.kind.startswith("partition.") or _topic_of(f) in topics or _topic_of(f) is None)
        ]
        groups.append(Group(title, root, mine))
        left = [f for f in left if f is not root and f not in mine]
    groups.sort(key=lambda g: min(f.sort_key() for f in (g.root, *g.symptoms)))
    return groups, left


def _title(g: Group) -> str:
    """A chain's title: the family its lead finding roots, else what its root is."""
    about = lead(g)
    title = next((t for t, roots, _ in FAMILIES if about.kind in roots), None)
    return title or ROOTS.get(g.root.kind, g.root.kind)


def lead(g: Group) -> Finding:
    """What a group is about: its most severe finding that roots a family (the most telling first), else
    its root."""
    rank = {kind: (i, j) for i, (_, roots, _) in enumerate(FAMILIES) for j, kind in enumerate(roots)}
    led = [f for f in (g.root, *g.symptoms) if f.kind in rank]
    return min(led, key=lambda f: (f.sort_key()[0], rank[f.kind])) if led else g.root


def _topic_of(f: Finding) -> str | None:
    t = f.subject.get("topic")
    return t if isinstance(t, str) else None
