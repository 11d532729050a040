"""Topic deletion (seed 000): each deletion's timeline, the ones stuck and why, and what it leaves on disk.

`kafka-topics --delete` creates `/admin/delete_topics/<t>`; the controller's TopicDeletionManager takes the
replicas OfflineReplica -> ReplicaDeletionStarted (StopReplica with delete) -> ReplicaDeletionSuccessful,
then removes the topic's znodes and the marker. It halts while a replica's broker is offline, while a
partition is being reassigned, or after a replica deletion failed (a storage error); with
delete.topic.enable=false it drops the marker and keeps the topic. A broker renames the log to
`<t>-<p>.<uuid>-delete` and removes it file.delete.delay.ms later (LogManager.asyncDelete).

In two halves (`contract.Analysis`): `facts` asks Spark what each deletion's steps, ZooKeeper's tree and the
data dirs say; `judge` words the findings in plain Python (tests/test_deletion.py calls it without Spark).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from workbench.analysis.contract import CRITICAL, INFO, WARNING, Analysis, Kind, Need, maybe
from workbench.analysis.deletion_lines import pasted, unfinished_findings
from workbench.analysis.findings import (
    Coverage,
    Finding,
    file_ref,
    first_refs,
    hex_zxid,
    ranges,
    txn_ref,
    zk_ref,
)
from workbench.kafka.defaults import FILE_DELETE_DELAY_MS
from workbench.model import deletion_steps
from workbench.model.deletion_log import Unfinished
from workbench.model.deletion_steps import DeleteDir, Marker, Steps, Stray, timeline
from workbench.model.deletion_steps import replica_progress as replica_progress  # the notebooks' name
from workbench.model.described import Marked
from workbench.model.history import topics
from workbench.model.history.topics import Recreation
from workbench.model.views import views
from workbench.together import given, together

if TYPE_CHECKING:
    from workbench.frames import Bundle

CHECK = "deletion"
CLOCK_MARGIN_MS = 30_000  # a broker's clock may be off by seconds from the capture's
SHOWN = 50  # unfinished deletions from the logs at most


# -- facts: what the steps, the tree and the data dirs say ---------------------------------------------------
@dataclass(frozen=True)
class Facts:
    """What the deletion analysis judges: the deletions under way (`history.topics.under_way`: ZooKeeper's
    markers, else the controller's lines' and the pastes'); `live`: the brokers registered; `whole`:
    brokers whose data dirs were listed whole (a replica missing there is gone); `delays`:
    file.delete.delay.ms per broker with server.properties; `captured_ms`: the capture (None: dirs cannot
    be aged); `recreated`: each topic deleted and created again (`history.topics.recreations`)."""

    markers: list[Marker]
    steps: dict[str, Steps]
    live: set[int]
    whole: frozenset[int]
    delete_dirs: list[DeleteDir]
    delays: dict[int, str]
    captured_ms: int | None
    strays: list[Stray]
    recreated: list[Recreation]
    pasted: list[Marked] = field(default_factory=list)
    unfinished: list[Unfinished] = field(default_factory=list)
    ends: datetime | None = None  # when the lines the unfinished deletions are read from end
    lacking: list[str] = field(default_factory=list)  # the controller's log, where it stands in and is absent


def facts(bundle: Bundle) -> Facts:
    v = views(bundle)
    ev = v.evidence
    steps = timeline(bundle)
    under = topics.under_way(bundle, SHOWN)
    by_topic = deletion_steps.steps_by_topic(steps, topics.marked(bundle))
    dirs = deletion_steps.delete_dirs(bundle, steps) if ev.captured_ms is not None else given([])
    strays = deletion_steps.strays(bundle)
    again = topics.recreations(bundle, SHOWN)
    got = together(under, by_topic, dirs, strays, again)
    u = got[under]
    return Facts(
        u.markers,
        got[by_topic],
        v.live_brokers if u.markers else set(),
        v.listed_whole if u.markers else frozenset(),
        got[dirs],
        ev.config("file.delete.delay.ms", str(FILE_DELETE_DELAY_MS)),
        ev.captured_ms,
        got[strays],
        got[again],
        u.pasted,
        u.unfinished,
        u.ends,
        u.lacking,
    )


# -- judge: the findings, in plain Python ------------------------------------------------------------------
def judge(f: Facts, coverage: Coverage) -> list[Finding]:
    out = _stuck(f) + pasted(f.pasted, coverage, CHECK) + unfinished_findings(f.unfinished, f.ends, f.pasted)
    coverage.add(CHECK, f.lacking)
    out += _completed(f)
    out += _refused(f)
    out += _lingering(f)
    return out + _stray(f) + _recreation(f)


def _stuck(f: Facts) -> list[Finding]:
    """Topics still marked for deletion, with what holds each up."""
    out = []
    for m in f.markers:
        assigned = [(p, r) for p, rs in (m.replicas or {}).items() for r in rs]
        left = [(p, r) for p, r in assigned if (p, r) in m.on_disk]
        unseen = [(p, r) for p, r in assigned if r not in f.whole and (p, r) not in m.on_disk]
        # a replica on a broker not live holds the deletion, on disk or not (offline_replicas_halt_deletion)
        down = sorted({r for _, r in left + unseen if r not in f.live}) if f.live else []
        reasons, refs = [], [zk_ref(m.path, czxid=m.czxid)]
        ways: list[str] = []  # what resumes it (behaviour `halted_deletion_resumes`)
        if down:
            reasons.append(f"replicas on offline broker(s) {', '.join(map(str, down))}")
            refs.append(zk_ref("/brokers/ids"))
            ways.append(
                f"it resumes when broker(s) {', '.join(map(str, down))} start again (or a replacement "
                "with the same broker.id)"
            )
        reassigning = [p for p in m.reassigning if p is not None]
        if reassigning or m.reassignment_asked:
            reasons.append(
                "a reassignment in progress (partitions "
                f"{ranges(reassigning) or 'in /admin/reassign_partitions'})"
            )
            refs.append(zk_ref(f"/brokers/topics/{m.topic}"))
            ways.append(
                "the reassignment cannot be cancelled or changed while the topic is queued for deletion "
                "(the controller refuses it: 'The partition does not exist.'), and a new controller holds "
                "the deletion back too: it resumes when the reassignment completes (each new replica "
                "caught up and in the ISR) or when a broker holding one of its replicas registers again; "
                "where a new replica does not join the ISR, find why (its broker down, lagging, or "
                "refusing the partition) before restarting that broker"
            )
        known = f.steps.get(m.topic)
        last = known.last_halt if known is not None else None
        if last is not None:
            reasons.append(
                "a storage error"
                if last.step == "log_dir.io_error"
                else f"the controller halted it: {last.detail}"
            )
            refs.append(last.ref)
        if m.replicas is None:
            reasons.append("its topic znode is gone but the marker stayed")
        if not reasons:
            reasons.append("no blocker in the evidence: the controller may not have acted on it")
        brokers = sorted({r for _, r in left})
        where = [f"{len(left)} replica(s) left on broker(s) {', '.join(map(str, brokers)) or 'none'}"]
        if unseen:  # a broker's evidence absent: unknown, never a fact
            unknown = ", ".join(map(str, sorted({r for _, r in unseen})))
            where[bool(left) :] = [  # none known left: only the unknown said
                f"whether its {len(unseen)} replica(s) on broker(s) {unknown} are still on disk is not known "
                "(their data dirs are not wholly in the bundle)"
            ]
        text = (
            f"Deletion of {m.topic} is stuck: /admin/delete_topics/{m.topic} was created at zxid "
            f"{hex_zxid(m.czxid)} ({m.ctime:%Y-%m-%d %H:%M:%S}) and is still there; "
            f"{', and '.join(where)}; held up by {'; '.join(reasons)}."
        )
        if ways:
            text += " Way out: " + "; ".join(ways) + "."
        shown = sorted(f"{p}@{r}" for p, r in left)
        subject = {"topic": m.topic, "zxid": hex_zxid(m.czxid), "replicas_left": shown, "brokers_down": down,
                   "reassigning": reassigning, "halted": last.detail if last is not None else ""}  # fmt: skip
        if unseen:
            subject["replicas_unknown"] = sorted(f"{p}@{r}" for p, r in unseen)
        out.append(Finding("deletion.stuck", CRITICAL, subject, text, tuple(dict.fromkeys(refs))))
    return out


def _completed(f: Facts) -> list[Finding]:
    """Deletions that finished: the topic znode removed (ZooKeeper) or the controller's 'successfully
    completed' line; timed from the request to the marker's removal, the last step. A marker removed
    alone is no completion (delete.topic.enable=false removes it too)."""
    out = []
    for s in sorted(
        (s for s in f.steps.values() if s.finished and s.done is not None), key=lambda s: s.topic
    ):
        a, d = s.asked, s.done
        assert d is not None
        took = ""
        if a is not None and a.zxid is not None and d.zxid is not None and a.ts and d.ts:
            ms = round((d.ts - a.ts).total_seconds() * 1000)
            took = f" in {ms} ms" if ms < 10_000 else f" in {ms / 1000:.0f} s"
            took += f" (ZooKeeper's clock, zxid {hex_zxid(a.zxid)} to {hex_zxid(d.zxid)})"
        halted = [h for h in s.halts if h]
        text = f"Deletion of {s.topic} completed{took}" + (
            f", after halting for {'; '.join(halted)}" if halted else ""
        )
        refs = [x for x in ((a.ref if a else None), d.ref, *s.halt_refs) if x]
        out.append(
            Finding("deletion.completed", INFO, {"topic": s.topic, "halted": halted}, text + ".", tuple(refs))
        )
    return out


def _refused(f: Facts) -> list[Finding]:
    """Deletions dropped because delete.topic.enable=false: the marker goes, the topic stays."""
    return [
        Finding(
            "deletion.refused",
            WARNING,
            {"topic": s.topic},
            f"Deletion of {s.topic} was asked for and dropped: delete.topic.enable=false on the controller, "
            "so the topic and its data stay.",
            (s.refused,),
        )
        for s in sorted(f.steps.values(), key=lambda s: s.topic)
        if s.refused is not None
    ]


def _lingering(f: Facts) -> list[Finding]:
    """'-delete' dirs still on disk longer than file.delete.delay.ms after their rename (the broker's log
    says when), by the capture time, or whose removal the broker logged failing. A failed removal is an
    I/O error on the log dir, which Kafka takes offline (`failed_log_dir_takes_its_replicas_offline`):
    critical, with the way out; a broker queues its '-delete' dirs again when it starts
    (`delete_dirs_queued_again_at_startup`)."""
    if f.captured_ms is None:
        return []
    late: dict[tuple[int, str], list[DeleteDir]] = {}
    for d in f.delete_dirs:
        delay = int(f.delays.get(d.broker, FILE_DELETE_DELAY_MS))
        aged = (
            d.renamed is not None and f.captured_ms - d.renamed.timestamp() * 1000 > delay + CLOCK_MARGIN_MS
        )
        if aged or d.failed:
            late.setdefault((d.broker, d.topic), []).append(d)
    out = []
    for (broker, topic), ds in sorted(late.items()):
        renamed = [d.renamed for d in ds if d.renamed is not None]
        since = f" renamed as early as {min(renamed):%Y-%m-%d %H:%M:%S} (broker time)," if renamed else ""
        said = f"Broker {broker} still holds {len(ds)} '-delete' dir(s) of {topic}{since} past "
        said += "file.delete.delay.ms"
        failed = [d for d in ds if d.failed]
        refs = [d.failed_ref for d in failed if d.failed_ref] + [d.ref for d in ds if d.ref]
        if failed:
            said += (
                f": removing them failed on an I/O error ({failed[0].failed}). Kafka takes a log dir offline "
                "on such an error, with every replica in it, and a broker whose last log dir it was halts. "
                f"Fix the cause (the dir's owner and permissions) before starting broker {broker} again: "
                "it removes its '-delete' dirs when it starts."
            )
        else:
            said += ": the broker stopped before removing them or could not."
        out.append(
            Finding(
                "deletion.lingering_dir",
                CRITICAL if failed else WARNING,
                {"topic": topic, "broker": broker, "partitions": sorted(d.partition for d in ds)},
                said,
                tuple(first_refs(refs, 3)),
            )
        )
    return out


def _stray(f: Facts) -> list[Finding]:
    """Live partition dirs of topics ZooKeeper does not have."""
    return [
        Finding(
            "deletion.stray_dir",
            WARNING,
            {"topic": s.topic, "broker": s.broker, "partitions": s.partitions},
            f"Broker {s.broker} holds live dirs of {s.topic} (partitions {ranges(s.partitions)}), a topic "
            "ZooKeeper does not have: left by a deletion the broker missed, or by a wiped ZooKeeper.",
            (
                file_ref(f"brokers/{s.broker}/datadirs/{s.log_dir}/{s.topic}-{s.partitions[0]}"),
                zk_ref("/brokers/topics"),
            ),
        )
        for s in sorted(f.strays, key=lambda s: (s.topic, s.broker))
    ]


def _recreation(f: Facts) -> list[Finding]:
    """Topics created again under a name that was deleted: ZooKeeper's txns where its history holds them,
    else the controller's lines."""
    out = []
    for r in f.recreated:
        if r.deleted_zxid is not None and r.created_zxid is not None:
            subject = {"topic": r.topic, "zxid": hex_zxid(r.created_zxid)}
            said = f"{r.topic} was deleted at zxid {hex_zxid(r.deleted_zxid)} and created again at zxid "
            said += f"{hex_zxid(r.created_zxid)}"
            lines = [x.ref for x in (r.deleted, r.created) if x is not None]
            refs: tuple[str, ...] = (txn_ref(r.deleted_zxid), txn_ref(r.created_zxid), *lines)
        elif r.deleted is not None and r.created is not None:
            subject = {"topic": r.topic}
            said = f"{r.topic} was deleted (completed at {r.deleted.ts:%Y-%m-%d %H:%M:%S}, the controller's "
            said += f"clock) and created again at {r.created.ts:%Y-%m-%d %H:%M:%S}"
            refs = (r.deleted.ref, r.created.ref)
        else:
            continue
        said += ": replicas offline in between keep the old topic's data and id."
        out.append(Finding("deletion.recreated", INFO, subject, said, refs))
    return out


_DIRS = {"topic": str, "broker": int, "partitions": list}
ANALYSIS = Analysis(
    CHECK,
    needs={
        Need.ZK_STATE: "pending deletions and strays at the capture (the controller's lines tell the "
        "deletions begun and not completed instead)",
        Need.LOGS: "the controller's deletion steps",
        Need.DATA_DIRS: "the replicas left on disk",
        Need.PASTED: "the topics a paste shows marked for deletion, at its moment",
    },
    wants={
        Need.ZK_HISTORY: "deletion requests and completions from the logs only",
        Need.CAPTURE_TIME: "lingering -delete dirs cannot be aged",
    },
    facts=facts,
    judge=judge,
    reads=(
        "topics",
        "partitions",
        "delete_markers",
        "replicas",
        "listed_whole",
        "live_brokers",
        "history",
        "span",
    ),
    kinds=(
        Kind(
            "deletion.stuck",
            (CRITICAL,),
            {
                "topic": str,
                "zxid": str,
                "replicas_left": list,
                "brokers_down": list,
                "reassigning": list,
                "halted": maybe(str),
            },
            {"replicas_unknown": list},
            key=("topic", "brokers_down", "replicas_left"),
        ),
        Kind(
            "deletion.marked",
            (WARNING,),
            {"topic": str, "taken_at": str, "replicas_left": list},
            {"brokers_down": list},
        ),
        Kind(
            "deletion.unfinished",
            (CRITICAL, WARNING),
            {"topic": str, "halted": list, "pending_at_start": bool},
            {"failed_on": list, "errors": list, "held_at_start": bool},
            key=("topic",),
        ),
        Kind(
            "deletion.completed", (INFO,), {"topic": str, "halted": list}, key=("topic", "halted"), event=True
        ),
        Kind("deletion.refused", (WARNING,), {"topic": str}, key=("topic",)),
        Kind("deletion.lingering_dir", (CRITICAL, WARNING), _DIRS),
        Kind("deletion.stray_dir", (WARNING,), _DIRS),
        Kind("deletion.recreated", (INFO,), {"topic": str}, {"zxid": str}, key=("topic",), event=True),
    ),
    plots="workbench.plots.standard:deletion",
)
findings = ANALYSIS.findings
