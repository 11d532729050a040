"""Why a topic's id changed, classified with its evidence, and what the stale replicas break.

The four causes (seed 001): (1) a pre-2.8 tool or CMAK rewrote the topic znode without `topic_id` and a later
controller minted a new id (KAFKA-14190); (2) a controller with IBP < 2.8 rewrote it (KAFKA-12835);
(3) ZooKeeper was wiped or replaced while the brokers' disks survived (`meta.properties` cluster.id differs
from `/cluster/id`); (4) the topic was deleted and created again while a replica was offline. With
ZooKeeper's txn logs the cause is proved from the writes themselves; with its state only it is "likely",
and the finding says which evidence would settle it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pyspark.sql import functions as F

from workbench.analysis.contract import CRITICAL, WARNING, Kind, maybe
from workbench.analysis.elections import elected
from workbench.analysis.findings import Finding, file_ref, hex_zxid, ranges, txn_ref, zk_ref
from workbench.kafka import behaviour
from workbench.model.views import views

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from workbench.frames import Bundle

CAUSES = {
    1: "a pre-2.8 tool rewrote the topic znode without topic_id and a later controller minted a new id "
    "(KAFKA-14190)",
    2: "a controller with inter.broker.protocol.version < 2.8 rewrote the topic znode without topic_id "
    "(KAFKA-12835)",
    3: "ZooKeeper was wiped or replaced while the brokers' disks survived",
    4: "the topic was deleted and created again while a replica was offline",
}


def causes(
    bundle: Bundle, affected: list[str], stale: list[Any], ids: DataFrame, writes: DataFrame | None
) -> list[Finding]:
    """A `topic_id.root_cause` for each affected topic, a `topic_id.impact` for each with stale replicas.
    `ids` and `writes` are topic_ids' replica_ids and znode_history (None without ZooKeeper's history)."""
    v = views(bundle)
    foreign = _foreign_cluster(bundle)
    history = _changes(writes, affected) if writes is not None else {}
    elections = _elections(bundle) if v.evidence.zk_history else {}
    known = {
        r.topic: r
        for r in v.topics.where(F.col("topic").isin(affected))
        .select("topic", "path", "topic_id", "znode_version", "czxid", "mzxid", "data_version")
        .collect()
    }
    stale_ids: dict[str, set[str]] = {}
    stale_brokers: dict[str, set[int]] = {}
    for r in stale:
        stale_ids.setdefault(r.topic, set()).add(r.disk_topic_id)
        stale_brokers.setdefault(r.topic, set()).add(r.broker_id)
    out = []
    for topic in affected:
        on_foreign = sorted(stale_brokers.get(topic, set()) & set(foreign))
        if on_foreign:
            out.append(_wiped(topic, on_foreign, foreign))
        elif topic in history:
            out.append(_proved(topic, history[topic], elections, stale_ids.get(topic, set()), v.history_read))
        elif topic in known:
            out.append(_likely(topic, known[topic], v.evidence.zk_history))
    if stale:
        out += _impact(bundle, ids, [t for t in affected if t in stale_ids])
    return out


# -- evidence ---------------------------------------------------------------------------------------
def _foreign_cluster(bundle: Bundle) -> dict[int, tuple[str, str, str]]:
    """Brokers whose meta.properties names another cluster than `/cluster/id`:
    broker -> (disk id, zk id, file)."""
    zk = bundle.znodes.where(F.col("path") == "/cluster/id").select(
        F.get_json_object("data", "$.id").alias("id")
    )
    rows = zk.collect()
    if not rows or rows[0].id is None:
        return {}
    zk_id = rows[0].id
    disks = bundle.meta_properties.where(F.col("cluster_id").isNotNull() & (F.col("cluster_id") != zk_id))
    return {
        r.broker_id: (r.cluster_id, zk_id, r.file)
        for r in disks.select("broker_id", "cluster_id", "file").collect()
    }


def _changes(writes: DataFrame, topics: list[str]) -> dict[str, list[Any]]:
    """The writes that changed each topic's id (or created or deleted it), in zxid order."""
    rows = writes.where(F.col("topic").isin(topics) & (F.col("change") != "kept")).orderBy("zxid").collect()
    out: dict[str, list[Any]] = {}
    for r in rows:
        out.setdefault(r.topic, []).append(r)
    return out


def _elections(bundle: Bundle) -> dict[int, tuple[int, int | None]]:
    """Controller epoch -> (zxid of its election, the elected broker), from ZooKeeper's history."""
    rows = elected(bundle).where(F.col("epoch").isNotNull()).select("epoch", "zxid", "broker")
    return {r.epoch: (r.zxid, r.broker) for r in rows.collect()}


def _session(r: Any) -> str:
    sid = f"session 0x{r.session_id:x}" if r.session_id is not None else "a session"
    if r.writer_broker is not None:
        return f"{sid} (broker {r.writer_broker}'s)"
    return f"{sid} (no broker's: an outside tool)"


# -- causes -----------------------------------------------------------------------------------------
def _cause(topic: str, cause: int, certainty: str, summary: str, refs: list[str], **subject: Any) -> Finding:
    return Finding(
        "topic_id.root_cause",
        CRITICAL,
        {"topic": topic, "cause": cause, "certainty": certainty, **subject},
        summary,
        tuple(refs),
    )


def _wiped(topic: str, brokers: list[int], foreign: dict[int, tuple[str, str, str]]) -> Finding:
    disk, zk, _ = foreign[brokers[0]]
    return _cause(
        topic,
        3,
        "proved",
        f"{topic}: {CAUSES[3]}: broker(s) {', '.join(map(str, brokers))} keep cluster id {disk} in "
        "meta.properties "
        f"while ZooKeeper's /cluster/id is {zk}, so their replicas carry ids from the old ZooKeeper.",
        [zk_ref("/cluster/id"), *[file_ref(foreign[b][2]) for b in brokers]],
        brokers=brokers,
    )


def _proved(
    topic: str, changes: list[Any], elections: dict[int, tuple[int, int | None]], stale: set[str], read: str
) -> Finding:
    """From the znode's writes: a deletion and re-creation that left a replica's old id behind (4), or the
    write that removed topic_id (1 or 2) and the mint after it."""
    deleted = [c for c in changes if c.change == "deleted"]
    earlier_ids = {c.topic_id for c in changes if c.topic_id} - {changes[-1].topic_id}
    if deleted and stale & earlier_ids:
        d = deleted[-1]
        again = next((c for c in changes if c.zxid > d.zxid and c.change == "created"), None)
        refs = [txn_ref(d.zxid)] + ([txn_ref(again.zxid)] if again else [])
        return _cause(
            topic,
            4,
            "proved",
            f"{topic}: {CAUSES[4]}: it was deleted at zxid {hex_zxid(d.zxid)} and created again"
            + (f" at zxid {hex_zxid(again.zxid)} with id {again.topic_id}" if again else "")
            + f"; replicas still hold the old id {', '.join(sorted(stale & earlier_ids))}.",
            refs,
            zxid=hex_zxid(d.zxid),
        )
    removed = [c for c in changes if c.change == "removed"]
    if not removed:
        mint = next((c for c in reversed(changes) if c.change in ("minted", "replaced")), None)
        return _cause(
            topic,
            0,
            "unknown",
            f"{topic}: ZooKeeper's history shows no write that removed its topic_id"
            + (f"; the id {mint.topic_id} was written at zxid {hex_zxid(mint.zxid)}" if mint else "")
            + f": the removal is older than {read}.",
            [txn_ref(mint.zxid)] if mint else [],
        )
    r = removed[-1]
    mint = next((c for c in changes if c.zxid > r.zxid and c.change == "minted"), None)
    by_tool = r.writer_broker is None and not r.fenced
    cause = 1 if by_tool else 2
    grew = f", partitions {_count(changes, r)} -> {r.partitions}" if r.partitions else ""
    text = (
        f"{topic}: {CAUSES[cause]}. At zxid {hex_zxid(r.zxid)} {_session(r)} rewrote /brokers/topics/{topic} "
        f"without topic_id (znode version {r.znode_version}{grew}"
        + (", fenced by the controller epoch" if r.fenced else "")
        + ")"
    )
    refs = [txn_ref(r.zxid)]
    subject: dict[str, Any] = {
        "zxid": hex_zxid(r.zxid),
        "session": f"0x{r.session_id:x}",
        "writer": _writer(r),
    }
    if mint is not None:
        epoch = mint.controller_epoch
        elected = elections.get(epoch) if epoch is not None else None
        text += (
            f"; after the failover to controller epoch {epoch}"
            + (f" (broker {elected[1]}, elected at zxid {hex_zxid(elected[0])})" if elected else "")
            + f" the controller minted the new id {mint.topic_id} at zxid {hex_zxid(mint.zxid)}, replacing "
            f"{r.previous_id}"
        )
        refs += ([txn_ref(elected[0])] if elected else []) + [txn_ref(mint.zxid)]
        subject.update(epoch=epoch, minted_zxid=hex_zxid(mint.zxid), topic_id=mint.topic_id)
    else:
        text += "; no controller has minted a new id yet (the next one to start will)"
    return _cause(topic, cause, "proved", text + ".", refs, **subject)


def _count(changes: list[Any], r: Any) -> int | None:
    before = [c for c in changes if c.zxid < r.zxid and c.partitions]
    return before[-1].partitions if before else None


def _writer(r: Any) -> str:
    if r.writer_broker is not None:
        return f"broker {r.writer_broker}"
    return "controller (fenced)" if r.fenced else "outside tool"


def _likely(topic: str, t: Any, have_history: bool) -> Finding:
    """From the state only: the znode's form and versions point at a cause; txn logs would settle it."""
    settle = (
        f"ZooKeeper's txn logs covering zxid {hex_zxid(t.mzxid)} would show the session that wrote it"
        if not have_history
        else "the txn logs in the bundle do not reach back to that write"
    )
    ref = [zk_ref(t.path, t.mzxid)]
    if t.topic_id is None:
        form = "a pre-2.8 form" if (t.znode_version or 0) < 3 else "version 3 without an id"
        return _cause(
            topic,
            1,
            "likely",
            f"{topic}: likely {CAUSES[1]}, or cause 2 (KAFKA-12835): its znode was last written at zxid "
            f"{hex_zxid(t.mzxid)} in {form}; {settle}.",
            ref,
            zxid=hex_zxid(t.mzxid),
        )
    if (t.data_version or 0) == 0:
        return _cause(
            topic,
            4,
            "likely",
            f"{topic}: likely {CAUSES[4]}: its znode still holds the id {t.topic_id} it was created with at "
            f"zxid {hex_zxid(t.czxid)}, so replicas with another id are from an earlier topic of that name "
            "(or from "
            f"another cluster); {settle.replace(hex_zxid(t.mzxid), hex_zxid(t.czxid))}.",
            [zk_ref(t.path, czxid=t.czxid)],
            zxid=hex_zxid(t.czxid),
        )
    return _cause(
        topic,
        1,
        "likely",
        f"{topic}: likely {CAUSES[1]}: its znode was rewritten {t.data_version} time(s) after its creation, "
        f"last at zxid {hex_zxid(t.mzxid)}, and now holds the id {t.topic_id}; {settle}.",
        ref,
        zxid=hex_zxid(t.mzxid),
    )


# -- impact -----------------------------------------------------------------------------------------
def _impact(bundle: Bundle, ids: DataFrame, topics: list[str]) -> list[Finding]:
    """Per topic: which replicas will be refused, which ISRs they left or will leave, and which partitions
    have no in-sync replica left that accepts the current id."""
    v = views(bundle)
    version = behaviour.parse(v.evidence.kafka_version)
    stale = (
        ids.where((F.col("state") == "mismatch") & F.col("topic").isin(topics))
        .groupBy("topic", "partition")
        .agg(F.collect_set("broker_id").alias("stale"))
    )
    parts = v.partitions.where(F.col("topic").isin(topics)).select(
        "topic", "partition", "isr", "leader", "state_path"
    )
    joined = stale.join(parts, ["topic", "partition"], "left").select(
        "topic",
        "partition",
        "stale",
        "state_path",
        F.array_except("stale", F.coalesce("isr", F.array())).alias("out"),
        F.array_intersect("stale", F.coalesce("isr", F.array())).alias("leaving"),
        (F.size(F.array_except(F.coalesce("isr", F.array()), "stale")) == 0).alias("unavailable"),
    )
    pair = F.transform(
        "out", lambda b: F.concat(F.col("partition").cast("string"), F.lit("@"), b.cast("string"))
    )
    leave = F.transform(
        "leaving", lambda b: F.concat(F.col("partition").cast("string"), F.lit("@"), b.cast("string"))
    )
    per_topic = (
        joined.groupBy("topic")
        .agg(
            F.sum(F.size("stale")).alias("replicas"),
            F.flatten(F.collect_list(pair)).alias("out_of_isr"),
            F.flatten(F.collect_list(leave)).alias("will_leave"),
            F.sort_array(F.collect_list(F.when(F.col("unavailable"), F.col("partition")))).alias(
                "unavailable"
            ),
            F.slice(F.sort_array(F.collect_list("state_path")), 1, 3).alias("paths"),
        )
        .collect()
    )
    rule = (
        "3.x checks the log on disk, so every LeaderAndIsr for them is refused"
        if version and version >= (3, 0)
        else "at 2.8 a broker refuses it once the partition is loaded: from the second LeaderAndIsr "
        "after its start"
    )
    out = []
    for r in per_topic:
        unavailable = [p for p in r.unavailable if p is not None]
        severity = CRITICAL if unavailable else WARNING
        text = (
            f"{r.topic}: {r.replicas} replica(s) with a stale topic id will be refused by their brokers "
            f"({rule}); "
            f"{len(r.out_of_isr)} are out of the ISR ({', '.join(sorted(r.out_of_isr)) or 'none'}), "
            f"{len(r.will_leave)} in it will leave it ({', '.join(sorted(r.will_leave)) or 'none'})"
        )
        if unavailable:
            text += (
                f"; partitions {ranges(unavailable)} have no in-sync replica with the current id: unavailable"
            )
        out.append(
            Finding(
                "topic_id.impact",
                severity,
                {
                    "topic": r.topic,
                    "out_of_isr": sorted(r.out_of_isr),
                    "will_leave": sorted(r.will_leave),
                    "unavailable": unavailable,
                },
                text + ".",
                tuple(zk_ref(p) for p in r.paths if p),
            )
        )
    return out


KINDS = (
    Kind(
        "topic_id.root_cause",
        (CRITICAL,),
        {"topic": str, "cause": int, "certainty": str},
        {
            "brokers": list,
            "zxid": str,
            "session": str,
            "writer": str,
            "epoch": maybe(int),
            "minted_zxid": str,
            "topic_id": str,
        },
    ),
    Kind(
        "topic_id.impact",
        (CRITICAL, WARNING),
        {"topic": str, "out_of_isr": list, "will_leave": list, "unavailable": list},
    ),
)
