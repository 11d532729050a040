"""A history with a hole: zxids no readable txn log holds are found, named with the damage that explains
them, and nothing is inferred inside or across them (a damaged copy of a sample makes no finding that
the intact copy does not make, and coverage says what the gap hides)."""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest
from conftest import REPO, shared
from pyspark.sql import SparkSession

import workbench
from workbench.analysis.findings import Finding
from workbench.analysis.gaps import kept_before, named
from workbench.analysis.registry import kinds
from workbench.analysis.triage import Triage, triage
from workbench.frames import Bundle, open_bundle
from workbench.model import health
from workbench.model.history.brokers import FROM_LINES, FROM_TXNS
from workbench.model.history_gaps import written_inside
from workbench.model.views import views
from workbench.zookeeper.files import Problem, read_txn_log, write_txn_entry
from workbench.zookeeper.txns import CLOSE_SESSION, CREATES, DELETES, ERROR, Txn, write_txn

SAMPLE = REPO / "sample_data" / "topicid-mismatch-2.8"


def _copy(tmp: Path, name: str) -> Path:
    out = tmp / name
    shutil.copytree(SAMPLE, out)
    return out


def _log(bundle: Path) -> Path:
    return bundle / "zk" / "txnlog" / "log.1"


def _txns(log: Path) -> list[Txn]:
    return [t for t in read_txn_log(log) if not isinstance(t, Problem)]


def _damage(bundle: Path, zxid: int) -> int:
    """Flip a byte inside the txn at `zxid`: its checksum fails. Returns its byte offset."""
    log = _log(bundle)
    at = next(t.offset for t in _txns(log) if t.zxid == zxid)
    data = bytearray(log.read_bytes())
    data[at + 20] ^= 0xFF
    log.write_bytes(bytes(data))
    return at


@pytest.mark.slow
def test_a_damaged_txn_is_a_gap_named_by_its_damage(spark: SparkSession, tmp_path: Path) -> None:
    bundle = _copy(tmp_path, "damaged")
    at = _damage(bundle, 0x75)
    v = views(open_bundle(bundle, spark))
    [gap] = v.history_gaps
    assert (gap.after, gap.before, gap.missing) == (0x74, 0x76, "0x75")
    assert [(d.file, d.position) for d in gap.damage] == [("zk/txnlog/log.1", at)]
    assert gap.damage[0].reason.startswith("bad checksum")
    assert v.resumed_after == gap and v.history_span is not None and v.history_span.first == 0x76
    # what it hides, as far as ZooKeeper's state tells: broker 3's registration, alive at the capture
    assert written_inside(open_bundle(bundle, spark), gap) == ["/brokers/ids/3 (created)"]
    assert v.history_base == (0x75, False)  # snapshot.0 is older than the gap: the tree there is unknown
    # The state at a moment after the gap is replayed across it: not exact, and it says why.
    b = open_bundle(bundle, spark)
    before, after = workbench.state_at(b, 0x74), workbench.state_at(b, 0x80)
    assert before.exact and not before.unknown
    assert not after.exact and [u for u in after.unknown if "txns 0x75 unreadable" in u]


def test_a_missing_log_is_a_gap_no_damage_explains(spark: SparkSession, tmp_path: Path) -> None:
    """Txns 0x40-0x4f cut out of the log, as if the log file holding them were missing."""
    bundle = _copy(tmp_path, "missing")
    log = _log(bundle)
    kept = [t for t in _txns(log) if not 0x40 <= t.zxid <= 0x4F]
    log.write_bytes(log.read_bytes()[:16] + b"".join(write_txn_entry(write_txn(t)) for t in kept))
    b = open_bundle(bundle, spark)
    assert b.txn_log_damage.count() == 0
    [gap] = views(b).history_gaps
    assert (gap.missing, gap.damage) == ("0x40-0x4f", ())
    assert "no txn log in the bundle holds them" in gap.describe()


def test_an_intact_history_has_no_gap(sample: Callable[[str], Bundle]) -> None:
    v = views(sample(SAMPLE.name))
    assert v.history_gaps == [] and v.resumed_after is None and v.history_base == (0, True)


def _partitions(summary: str) -> set[tuple[str, int]]:
    """The partitions a finding's summary lists ('(orders 0,3; topic-0 0-2)')."""
    listed = re.search(r"\(([^()]*)\)", summary)
    out = set()
    for part in (listed.group(1) if listed else "").split("; "):
        topic, _, numbers = part.rpartition(" ")
        for n in numbers.split(","):
            lo, _, hi = n.partition("-")
            if lo.isdigit():
                out |= {(topic, p) for p in range(int(lo), int(hi or lo) + 1)}
    return out


def _made_by(f: Finding, intact: Iterable[Finding]) -> bool:
    """Whether the intact copy makes the same claim: the same kind about the same thing (a topic, a
    controller epoch, a broker's imbalance, whose counts cover only what the history read shows), or,
    for offline partitions, partitions the intact copy also finds offline."""
    same = [g for g in intact if g.kind == f.kind]
    if f.kind == "partition.offline":
        return _partitions(f.summary) <= set().union(*(_partitions(g.summary) for g in same))
    keys = {
        "topic_id": ("topic",),
        "controller": ("epoch", "broker"),
        "leader": ("broker",),
        "broker.session_expired": ("broker", "cause"),  # told by the lines, without ZooKeeper's session
    }.get(f.kind if f.kind == "broker.session_expired" else f.kind.split(".")[0])
    if keys is None:
        return any(g.subject == f.subject for g in same)
    return any(all(g.subject.get(k) == f.subject.get(k) for k in keys) for g in same)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("sample", "zxid"),
    [
        ("topicid-mismatch-2.8", 0x97),  # the controller's session closing: the failover's cause (and the
        # topic id's removal at 0x8f is then before the history read)
        ("controller-failover-2.5", 0x70),  # a txn before the crash: the registrations before are unknown
    ],
)
def test_a_gap_makes_no_finding_the_intact_history_does_not(
    spark: SparkSession,
    triaged: Callable[[str], Triage],
    tmp_path: Path,
    sample: str,
    zxid: int,
) -> None:
    source = REPO / "sample_data" / sample
    intact = triaged(sample).findings
    bundle = tmp_path / "damaged"
    shutil.copytree(source, bundle)
    at = _damage(bundle, zxid)
    damaged = open_bundle(bundle, spark)
    t = triage(damaged)
    invented = [f.summary for f in t.findings if not _made_by(f, intact)]
    assert invented == []
    # What the gap hides is said, with the file and byte offset of the damage ...
    history = t.coverage["zk_history"]
    assert history.status == "partial"
    assert any(
        f"txns {zxid:#x} unreadable" in m and f"zk/txnlog/log.1 at byte {at}" in m for m in history.missing
    )
    assert any(f"read the history from {zxid + 1:#x} on" in m for m in history.missing)
    # ... and no check that read the history calls itself done.
    for name in ("controller", "health", "deletion"):
        assert t.coverage[name].status == "partial", name
    assert not [
        n for n, c in t.coverage.items() if c.status == "done" and any("history" in u for u in c.used)
    ]

    # The failover is still told, and its cause, which the history read no longer holds, is the one the
    # brokers' lines tell (the intact copy's), never invented: the controller chain is one history of both.
    def failovers(found: list[Finding]) -> list[tuple[object, ...]]:
        return [(f.subject["epoch"], f.subject["broker"], f.subject["cause"]) for f in found
                if f.kind == "controller.failover"]  # fmt: skip

    assert failovers(t.findings) == failovers(intact) and len(failovers(intact)) == 1
    # What happened before the gap is found from the history before it, as the intact copy finds it.
    at = [f for f in intact if kinds()[f.kind].event and "zxid" in f.subject]
    before = {named(f) for f in at if int(f.subject["zxid"], 16) < zxid}
    assert before and before <= {named(f) for f in t.findings}
    first = [f.subject["epoch"] for f in t.findings if f.subject.get("cause") == "first"]
    assert first == [1]  # the election before the gap, never the failover after it

    # Each time a broker was without a registration is still told: by ZooKeeper's history where the history
    # read holds the registration and its end, else by the controllers' lines (`history/brokers`), a
    # little after it (here every registration ended began before the gap, or ended in it).
    def windows(b: Bundle) -> list[tuple[int, float, int | None, str]]:
        rows = health.offline_windows(b).collect()  # a row per broker's stretch: a few
        return sorted((r.broker, r.down.timestamp(), r.down_zxid, r.source) for r in rows)

    whole, cut = windows(shared(spark, source)), windows(damaged)
    assert [w[0] for w in cut] == [w[0] for w in whole] and whole
    for (_, down, _, source), (_, was, _, _) in zip(cut, whole, strict=True):
        assert source == FROM_LINES and 0 <= down - was < 5
    assert {w[3] for w in whole} == {FROM_TXNS}


def test_before_a_gap_only_what_was_over_there_is_kept() -> None:
    """Plain Python: of what the history before a gap shows, an election is kept; an imbalance (a state
    at the end of what was read) is not; an outage still going on when the history stops is cut by the
    gap, said, never carried across it; a finding the history after the gap already makes is not repeated."""
    election = Finding("controller.election", "info", {"epoch": 1, "broker": 1, "zxid": "0x19"}, "elected")
    again = Finding("controller.election", "info", {"epoch": 2, "broker": 2, "zxid": "0x79"}, "elected")
    imbalance = Finding("leader.imbalance", "warning", {"broker": 1, "ratio": 1.0, "threshold": 0.1}, "x")
    ongoing = Finding("partition.offline", "warning", {"partitions": 2, "zxid": "0x60", "still": 2}, "x")
    ended = Finding("partition.offline", "warning", {"partitions": 7, "zxid": "0x50", "still": 0}, "y")
    seen = {named(again)}
    kept, lasting = kept_before([election, again, imbalance, ongoing, ended], seen)
    assert kept == [election, ended] and lasting == [ongoing]
    assert named(election) in seen  # a later gap's history does not repeat it
    assert kept_before([election], seen) == ([], [])


@pytest.mark.slow
def test_a_creation_after_a_gap_is_not_judged_by_brokers_it_cannot_see(
    spark: SparkSession, triaged: Callable[[str], Triage], tmp_path: Path
) -> None:
    """deletion-complete-3.6 without txns 0x36-0x37 (a log missing its middle): topic-0, -1 and -2 are
    created after the gap (0x38, 0x42, 0x4c), over brokers 1-3; broker 3 registered before it (0x35)
    and its session ended after (0x79). The history after the gap does not show broker 3 registered,
    which never makes it unregistered: the assignments are not judged ("not registered then" would be
    false), and coverage says so."""
    bundle = tmp_path / "cut"
    shutil.copytree(REPO / "sample_data" / "deletion-complete-3.6", bundle)
    log = _log(bundle)
    kept = [t for t in _txns(log) if not 0x36 <= t.zxid <= 0x37]
    log.write_bytes(log.read_bytes()[:16] + b"".join(write_txn_entry(write_txn(t)) for t in kept))
    t = triage(open_bundle(bundle, spark), only=["topic_lifecycle"])
    assert not triaged("deletion-complete-3.6").of_kind("topic.manual_assignment")
    assert not t.of_kind("topic.manual_assignment")
    said = t.coverage["topic_lifecycle"].missing
    assert any("3 creation(s) or addition(s) after a gap" in m and "not checked" in m for m in said), said


def _as_zookeeper_36_writes(txns: list[Txn]) -> list[Txn]:
    """The txns with each closeSession listing the ephemerals it deletes, as ZooKeeper 3.6+ writes
    CloseSessionTxn (PrepRequestProcessor, release-3.8.4: the session's ephemerals when it closes)."""
    owned: dict[str, int] = {}
    for t in txns:
        for s in t.ops or [t]:
            if t.failed or s.type == ERROR:
                continue
            if s.type in CREATES and s.ephemeral and s.path:
                owned[s.path] = t.session_id
            elif s.type in DELETES and s.path:
                owned.pop(s.path, None)
        if t.type == CLOSE_SESSION:
            t.paths = sorted(p for p, o in owned.items() if o == t.session_id)
            owned = {p: o for p, o in owned.items() if o != t.session_id}
    return txns


def _cut(bundle: Path, first: int, last: int, closes_list: bool) -> None:
    log = _log(bundle)
    txns = _txns(log)
    txns = _as_zookeeper_36_writes(txns) if closes_list else txns
    kept = [t for t in txns if not first <= t.zxid <= last]
    log.write_bytes(log.read_bytes()[:16] + b"".join(write_txn_entry(write_txn(t)) for t in kept))


@pytest.mark.slow
def test_registrations_a_gap_made_and_ended_none_of_are_carried_across_it(
    spark: SparkSession, tmp_path: Path
) -> None:
    """deletion-complete-3.6 without txns 0x36-0x37, its closeSessions as ZooKeeper 3.6 writes them: the
    captured cversion of /brokers/ids, less the creates and deletes of its children the history shows
    after the gap, is its cversion before it, so the gap made and ended no registration. Broker 3's,
    from 0x35 to its session's close at 0x79, is carried across, and the creations after the gap are
    judged by the brokers then (as over the intact history: no manual assignment). The same cut over a
    3.5 log (its closeSessions list nothing) and a gap holding broker 3's registration (0x35-0x37) prove
    nothing: the brokers then stay unknown."""
    bundle = tmp_path / "cut"
    shutil.copytree(REPO / "sample_data" / "deletion-complete-3.6", bundle)
    _cut(bundle, 0x36, 0x37, closes_list=True)
    b = open_bundle(bundle, spark)
    v = views(b)
    assert v.registrations_carried is not None and v.brokers_known and not v.history_base[1]
    regs = v.registrations.where("broker_id = 3").orderBy("czxid").collect()
    assert (regs[0].czxid, regs[0].ended_zxid) == (0x35, 0x79)
    assert v.partition_changes is not None
    led = v.partition_changes.where(f"leader = 3 and zxid > {0x37} and zxid < {0x79}").select("registered")
    assert {r.registered for r in led.collect()} == {True}  # a leader the history read knows registered
    t = triage(b, only=["topic_lifecycle"])
    assert not t.of_kind("topic.manual_assignment")
    assert not any("not checked" in m for m in t.coverage["topic_lifecycle"].missing)
    assert any("the brokers registered then are known" in m for m in t.coverage["zk_history"].missing)

    for first, lists in ((0x36, False), (0x35, True)):
        other = tmp_path / f"cut-{first:x}-{lists}"
        shutil.copytree(REPO / "sample_data" / "deletion-complete-3.6", other)
        _cut(other, first, 0x37, closes_list=lists)
        w = views(open_bundle(other, spark))
        assert w.registrations_carried is None and not w.brokers_known, (first, lists)


@pytest.mark.slow
def test_partition_states_a_gap_did_not_write_are_carried_across_it(
    spark: SparkSession, sample: Callable[[str], Bundle], triaged: Callable[[str], Triage], tmp_path: Path
) -> None:
    """controller-failover-2.5 without txns 0x7a-0x7c, 3.6's closeSessions (broker 1's session ended at
    0x78, just before; its seven partitions got new leaders from 0x8d): the capture holds every state
    znode made before the gap, and each one's first write after it is one version on, but topic-0's
    partitions 0-2, written inside it. Those 21 states are carried, each partition's changes after the gap
    are the intact history's, and the outage of the six carried ones broker 1 led is found from where the
    history resumes, its start said unknown. Without the capture nothing is proven."""
    source = REPO / "sample_data" / "controller-failover-2.5"
    bundle = tmp_path / "cut"
    shutil.copytree(source, bundle)
    _cut(bundle, 0x7A, 0x7C, closes_list=True)
    inside = {
        s.path
        for t in _txns(_log(source))
        if 0x7A <= t.zxid <= 0x7C
        for s in t.ops or [t]
        if s.path and s.path.endswith("/state")
    }
    assert inside == {f"/brokers/topics/topic-0/partitions/{p}/state" for p in range(3)}
    b = open_bundle(bundle, spark)
    v = views(b)
    assert v.znodes_carried is not None and not v.history_base[1]
    carried = {r.path for r in v.znodes_carried.collect() if r.path.endswith("/state")}
    intact = views(sample("controller-failover-2.5"))  # the session's: its history and triage made once
    states = {r.path for r in intact.bundle.znodes_at(0x79)[0].collect() if r.path.endswith("/state")}
    assert len(states) == 24 and carried == states - inside

    def after_gap(w: Any) -> set[tuple[Any, ...]]:
        rows = w.partition_changes.where(f"zxid > {0x7C} and not (topic = 'topic-0' and partition < 3)")
        return {
            (r.topic, r.partition, r.zxid, r.leader, tuple(r.isr or ()), r.registered) for r in rows.collect()
        }

    assert after_gap(v) == after_gap(intact)
    t = triage(b, only=["leaderless"])
    (offline,) = t.of_kind("partition.offline")
    assert "(events 0,4; topic-0 5; topic-1 1,5; topic-2 3)" in offline.summary
    # one outage across the gap, from its start before it, as the intact history tells it (less topic-0
    # 1, whose state the gap wrote): broker 1 silent from its last line, offline from 0x78 for 117 ms
    (whole,) = triaged("controller-failover-2.5").of_kind("partition.offline")
    assert {**offline.subject, "partitions": 7} == {**whole.subject, "across": "0x7a-0x7c"}
    assert "one outage across it" in offline.summary and "not known" not in offline.summary
    said = t.coverage["zk_history"].missing
    assert any("the states of 21 partition(s) are carried across it" in m for m in said), said
    # told once: the history before the gap shows the 7 going on, 6 of them are this finding
    assert any("(partitions 7, zxid 0x78, broker 1" in m and "6 of them told as one" in m for m in said)

    # a gap that holds the outage's start (broker 1's session's end, 0x78): nothing is carried back
    # before it, and when it began is not known
    inside = tmp_path / "cut-with-its-start"
    shutil.copytree(source, inside)
    _cut(inside, 0x78, 0x7C, closes_list=True)
    (unknown,) = triage(open_bundle(inside, spark), only=["leaderless"]).of_kind("partition.offline")
    assert unknown.subject["began"] == "unknown" and "when that began is not known" in unknown.summary
    assert "across" not in unknown.subject

    (bundle / "zk" / "znodes.jsonl").unlink()
    assert views(open_bundle(bundle, spark)).znodes_carried is None
