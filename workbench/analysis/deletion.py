"""Topic deletion (seed 000): each deletion's timeline, the ones stuck and why, and what it leaves on disk.

`kafka-topics --delete` creates `/admin/delete_topics/<t>`; the controller's TopicDeletionManager takes the
replicas OfflineReplica -> ReplicaDeletionStarted (StopReplica with delete) -> ReplicaDeletionSuccessful,
then removes the topic's znodes and the marker. It halts while a replica's broker is offline, while a
partition is being reassigned, or after a replica deletion failed (a storage error); with
delete.topic.enable=false it drops the marker and keeps the topic. A broker renames the log to
`<t>-<p>.<uuid>-delete` and removes it file.delete.delay.ms later (LogManager.asyncDelete).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from workbench.analysis import described
from workbench.analysis.contract import CRITICAL, INFO, WARNING, Analysis, Kind, Need, maybe
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
from workbench.kafka.znode_frames import reassignment_requested
from workbench.kafka.znodes import TOPIC_PATH
from workbench.model.deletion_steps import IN_ORDER, timeline
from workbench.model.deletion_steps import replica_progress as replica_progress  # the notebooks' name
from workbench.model.views import views

if TYPE_CHECKING:
    from workbench.frames import Bundle

CHECK = "deletion"
CLOCK_MARGIN_MS = 30_000  # a broker's clock may be off by seconds from the capture's


def _run(bundle: Bundle, coverage: Coverage) -> list[Finding]:
    ev = views(bundle).evidence
    steps = timeline(bundle).cache()
    out: list[Finding] = []
    if ev.zk_state:
        out += _stuck(bundle, steps)
        out += _strays(bundle)
    else:  # what a paste shows marked stands in for the markers in ZooKeeper's tree, at its moment
        out += described.marked(bundle, coverage, CHECK)
    out += _completed(steps)
    out += _refused(steps)
    out += _lingering(bundle, steps)
    if ev.zk_history:
        out += _recreated(bundle)
    steps.unpersist()
    return out


def _stuck(bundle: Bundle, steps: DataFrame) -> list[Finding]:
    """Topics still marked for deletion, with what holds each up."""
    v = views(bundle)
    markers = v.delete_markers.collect()
    if not markers:
        return []
    names = [m.topic for m in markers]
    live = v.live_brokers
    parts = (
        v.partitions.where(F.col("topic").isin(names))
        .groupBy("topic")
        .agg(
            F.collect_list(F.struct("partition", "replicas")).alias("parts"),
            F.sort_array(
                F.collect_list(
                    F.when(
                        F.size(F.coalesce("adding", F.array())) + F.size(F.coalesce("removing", F.array()))
                        > 0,
                        F.col("partition"),
                    )
                )
            ).alias("reassigning"),
        )
        .collect()
    )
    per_topic = {r.topic: r for r in parts}
    halts = (
        steps.where(F.col("topic").isin(names) & F.col("step").isin("deletion.halted", "log_dir.io_error"))
        .groupBy("topic")
        .agg(F.max_by(F.struct("detail", "ref", "step"), F.struct(*IN_ORDER)).alias("last"))
        .collect()
    )
    halted = {r.topic: r.last for r in halts}
    requested = reassignment_requested(bundle.znodes).where(F.col("topic").isin(names))
    asked = {r.topic for r in requested.select("topic").distinct().collect()}
    # A replica is gone once its broker's data dir (when the bundle has it) holds no live dir for it.
    on_disk = {
        (r.topic, r.partition, r.broker_id)
        for r in v.replicas.where(F.col("topic").isin(names) & (F.col("dir_state") == "live"))
        .select("topic", "partition", "broker_id")
        .collect()
    }
    seen = v.listed_whole
    out = []
    for m in sorted(markers, key=lambda m: m.topic):
        t = per_topic.get(m.topic)
        assigned = [(p.partition, r) for p in (t.parts if t else []) for r in (p.replicas or [])]
        left = [(p, r) for p, r in assigned if r not in seen or (m.topic, p, r) in on_disk]
        down = sorted({r for _, r in left if r not in live}) if live else []
        reasons, refs = [], [zk_ref(m.path, czxid=m.czxid)]
        if down:
            reasons.append(f"replicas on offline broker(s) {', '.join(map(str, down))}")
            refs.append(zk_ref("/brokers/ids"))
        reassigning = [p for p in (t.reassigning if t else []) if p is not None]
        if reassigning or m.topic in asked:
            reasons.append(
                "a reassignment in progress (partitions "
                f"{ranges(reassigning) or 'in /admin/reassign_partitions'})"
            )
            refs.append(zk_ref(f"/brokers/topics/{m.topic}"))
        last = halted.get(m.topic)
        if last is not None:
            reasons.append(
                "a storage error"
                if last.step == "log_dir.io_error"
                else f"the controller halted it: {last.detail}"
            )
            refs.append(last.ref)
        if t is None:
            reasons.append("its topic znode is gone but the marker stayed")
        if not reasons:
            reasons.append("no blocker in the evidence: the controller may not have acted on it")
        brokers = sorted({r for _, r in left})
        text = (
            f"Deletion of {m.topic} is stuck: /admin/delete_topics/{m.topic} was created at zxid "
            f"{hex_zxid(m.czxid)} "
            f"({m.ctime:%Y-%m-%d %H:%M:%S}) and is still there; {len(left)} replica(s) left on broker(s) "
            f"{', '.join(map(str, brokers)) or 'none'}; held up by {'; '.join(reasons)}."
        )
        shown = sorted(f"{p}@{r}" for p, r in left)
        subject = {"topic": m.topic, "zxid": hex_zxid(m.czxid), "replicas_left": shown, "brokers_down": down,
                   "reassigning": reassigning, "halted": last.detail if last is not None else ""}  # fmt: skip
        out.append(Finding("deletion.stuck", CRITICAL, subject, text, tuple(dict.fromkeys(refs))))
    return out


def _completed(steps: DataFrame) -> list[Finding]:
    """Deletions that finished: the topic znode removed (ZooKeeper) or the controller's 'successfully
    completed' line; timed from the request to the marker's removal, the last step. A marker removed
    alone is no completion (delete.topic.enable=false removes it too)."""
    finished = F.col("step").isin("topic znode removed", "deletion.completed")
    done = (
        steps.where(finished | (F.col("step") == "marker removed"))
        .groupBy("topic")
        .agg(
            F.max_by(
                F.struct("ts", "ref", "zxid"), F.struct(F.coalesce(F.col("zxid"), F.lit(0)), *IN_ORDER)
            ).alias("done"),
            F.max(finished).alias("finished"),
        )
        .where("finished")
    )
    asked = (
        steps.where(F.col("step").isin("requested", "deletion.started"))
        .groupBy("topic")
        .agg(
            F.min_by(
                F.struct("ts", "ref", "zxid", "source"), F.struct(F.col("zxid").isNull(), *IN_ORDER)
            ).alias("asked")
        )
    )
    halts = (
        steps.where(F.col("step") == "deletion.halted")
        .groupBy("topic")
        .agg(
            F.sort_array(F.collect_set("detail")).alias("halted"),
            F.slice(F.sort_array(F.collect_list("ref")), 1, 2).alias("halt_refs"),
        )
    )
    rows = done.join(asked, "topic", "left").join(halts, "topic", "left").orderBy("topic").collect()
    out = []
    for r in rows:
        a, d = r.asked, r.done
        took = ""
        if a is not None and a.zxid is not None and d.zxid is not None:
            ms = round((d.ts - a.ts).total_seconds() * 1000)
            took = f" in {ms} ms" if ms < 10_000 else f" in {ms / 1000:.0f} s"
            took += f" (ZooKeeper's clock, zxid {hex_zxid(a.zxid)} to {hex_zxid(d.zxid)})"
        halted = [h for h in (r.halted or []) if h]
        text = f"Deletion of {r.topic} completed{took}" + (
            f", after halting for {'; '.join(halted)}" if halted else ""
        )
        refs = [x for x in ((a.ref if a else None), d.ref, *(r.halt_refs or [])) if x]
        out.append(
            Finding("deletion.completed", INFO, {"topic": r.topic, "halted": halted}, text + ".", tuple(refs))
        )
    return out


def _refused(steps: DataFrame) -> list[Finding]:
    """Deletions dropped because delete.topic.enable=false: the marker goes, the topic stays."""
    rows = (
        steps.where(F.col("step") == "deletion.disabled")
        .groupBy("topic")
        .agg(F.min("ref").alias("ref"))
        .collect()
    )
    return [
        Finding(
            "deletion.refused",
            WARNING,
            {"topic": r.topic},
            f"Deletion of {r.topic} was asked for and dropped: delete.topic.enable=false on the controller, "
            "so the topic and its data stay.",
            (r.ref,),
        )
        for r in rows
    ]


def _lingering(bundle: Bundle, steps: DataFrame) -> list[Finding]:
    """'-delete' dirs still on disk longer than file.delete.delay.ms after their rename (the broker's log
    says when), by the capture time."""
    v = views(bundle)
    captured = v.evidence.captured_ms
    if captured is None:
        return []
    delays = v.evidence.config("file.delete.delay.ms", str(FILE_DELETE_DELAY_MS))
    dirs = v.replicas.where(F.col("dir_state") == "delete").select(
        "broker_id", "log_dir", "dir_name", "topic", "partition"
    )
    renamed = steps.where(F.col("step") == "log.renamed_for_deletion").select(
        F.col("broker").alias("broker_id"),
        F.regexp_extract("detail", r"([^/]+)$", 1).alias("dir_name"),
        "ts",
        "ref",
    )
    rows = dirs.join(renamed, ["broker_id", "dir_name"], "left").collect()
    late: dict[tuple[int, str], list[Any]] = {}
    for r in rows:
        delay = int(delays.get(r.broker_id, FILE_DELETE_DELAY_MS))
        if r.ts is not None and captured - r.ts.timestamp() * 1000 > delay + CLOCK_MARGIN_MS:
            late.setdefault((r.broker_id, r.topic), []).append(r)
    out = []
    for (broker, topic), rs in sorted(late.items()):
        oldest = min(x.ts for x in rs)
        out.append(
            Finding(
                "deletion.lingering_dir",
                WARNING,
                {"topic": topic, "broker": broker, "partitions": sorted(x.partition for x in rs)},
                f"Broker {broker} still holds {len(rs)} '-delete' dir(s) of {topic} renamed as early as "
                f"{oldest:%Y-%m-%d %H:%M:%S} (broker time), past file.delete.delay.ms: the broker stopped "
                "before removing them or could not.",
                tuple(first_refs([x.ref for x in rs], 3)),
            )
        )
    return out


def _strays(bundle: Bundle) -> list[Finding]:
    """Live partition dirs of topics ZooKeeper does not have."""
    v = views(bundle)
    stray = (
        v.replicas.where(F.col("dir_state") == "live")
        .join(v.topics.select("topic"), "topic", "left_anti")
        .groupBy("broker_id", "topic")
        .agg(F.sort_array(F.collect_set("partition")).alias("partitions"), F.min("log_dir").alias("log_dir"))
        .orderBy("topic", "broker_id")
        .collect()
    )
    return [
        Finding(
            "deletion.stray_dir",
            WARNING,
            {"topic": r.topic, "broker": r.broker_id, "partitions": list(r.partitions)},
            f"Broker {r.broker_id} holds live dirs of {r.topic} (partitions {ranges(r.partitions)}), a topic "
            "ZooKeeper does not have: left by a deletion the broker missed, or by a wiped ZooKeeper.",
            (
                file_ref(f"brokers/{r.broker_id}/datadirs/{r.log_dir}/{r.topic}-{r.partitions[0]}"),
                zk_ref("/brokers/topics"),
            ),
        )
        for r in stray
    ]


def _recreated(bundle: Bundle) -> list[Finding]:
    """Topics created again under a name that was deleted (ZooKeeper's history): each create whose
    previous write to the topic znode was its delete."""
    h = (
        views(bundle)
        .history.where(
            F.col("applied") & F.col("path").rlike(TOPIC_PATH) & F.col("op").isin("create", "delete")
        )
        .select(F.regexp_extract("path", TOPIC_PATH, 1).alias("topic"), "op", "zxid")
    )
    w = Window.partitionBy("topic").orderBy("zxid")
    again = (
        h.select("*", F.lag("op").over(w).alias("before"), F.lag("zxid").over(w).alias("deleted"))
        .where((F.col("op") == "create") & (F.col("before") == "delete"))
        .orderBy("topic", "zxid")
        .collect()
    )
    return [
        Finding(
            "deletion.recreated",
            INFO,
            {"topic": r.topic, "zxid": hex_zxid(r.zxid)},
            f"{r.topic} was deleted at zxid {hex_zxid(r.deleted)} and created again at zxid "
            f"{hex_zxid(r.zxid)}: replicas offline in between keep the old topic's data and id.",
            (txn_ref(r.deleted), txn_ref(r.zxid)),
        )
        for r in again
    ]


_DIRS = {"topic": str, "broker": int, "partitions": list}
ANALYSIS = Analysis(
    CHECK,
    needs={
        Need.ZK_STATE: "pending deletions and strays cannot be seen",
        Need.LOGS: "the controller's deletion steps",
        Need.DATA_DIRS: "the replicas left on disk",
        Need.PASTED: "the topics a paste shows marked for deletion, at its moment",
    },
    wants={
        Need.ZK_HISTORY: "deletion requests and completions from the logs only",
        Need.CAPTURE_TIME: "lingering -delete dirs cannot be aged",
    },
    run=_run,
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
        ),
        Kind("deletion.marked", (WARNING,), {"topic": str, "taken_at": str, "replicas_left": list}),
        Kind("deletion.completed", (INFO,), {"topic": str, "halted": list}),
        Kind("deletion.refused", (WARNING,), {"topic": str}),
        Kind("deletion.lingering_dir", (WARNING,), _DIRS),
        Kind("deletion.stray_dir", (WARNING,), _DIRS),
        Kind("deletion.recreated", (INFO,), {"topic": str, "zxid": str}),
    ),
    plots="workbench.plots.standard:deletion",
)
findings = ANALYSIS.findings
