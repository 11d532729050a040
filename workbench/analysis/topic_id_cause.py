"""Why a topic's id changed, classified with its evidence, and what the stale replicas break.

The four causes (seed 001): (1) a pre-2.8 tool or CMAK rewrote the topic znode without `topic_id` and a later
controller minted a new id (KAFKA-14190); (2) a controller with IBP < 2.8 rewrote it (KAFKA-12835);
(3) ZooKeeper was wiped or replaced while the brokers' disks survived (`meta.properties` cluster.id differs
from `/cluster/id`); (4) the topic was deleted and created again while a replica was offline. With
ZooKeeper's txn logs the cause is proved from the writes themselves; with its state only it is "likely",
and the finding says which evidence would settle it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pyspark.sql import functions as F

from workbench.analysis.contract import CRITICAL, WARNING, Kind, maybe
from workbench.analysis.findings import Finding, file_ref, hex_zxid, ranges, txn_ref, zk_ref
from workbench.kafka import behaviour
from workbench.model.history import controllers
from workbench.model.history.controllers import Election
from workbench.model.topic_ids import Impact, Stale, Write, Znode, foreign_cluster, id_changes, impact
from workbench.model.views import views
from workbench.together import Ask, Joined, given, together

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


@dataclass
class Facts:
    """What the causes are judged from: brokers whose meta.properties names another cluster (broker ->
    (disk id, ZooKeeper's, file)); each affected topic's id-changing writes (with ZooKeeper's history) and
    znode; controller epoch -> (election zxid, broker); the stale replicas' impact; whether the version
    refuses against the log on disk (3.x); how far the history reaches, as said."""

    foreign: dict[int, tuple[str, str, str]]
    history: dict[str, list[Write]]
    elections: dict[int, tuple[int, int | None]]
    known: dict[str, Znode]
    impact: list[Impact]
    checks_disk: bool
    history_read: str
    zk_history: bool


def facts(
    bundle: Bundle, affected: list[str], stale: Sequence[Stale], ids: DataFrame, writes: DataFrame
) -> Facts:
    """`ids` and `writes` are topic_ids' replica_ids and znode_history (no rows without ZooKeeper's
    history)."""
    v = views(bundle)
    version = behaviour.parse(v.evidence.kafka_version)
    with_stale = sorted({r.topic for r in stale} & set(affected))
    known = Ask(
        v.topics.where(F.col("topic").isin(affected)).select(
            "topic", "path", "topic_id", "znode_version", "czxid", "mzxid", "data_version"
        ),
        lambda rs: {r.topic: Znode(**r.asDict()) for r in rs},
    )
    foreign = foreign_cluster(bundle)
    changes = id_changes(writes, affected)
    epochs = _elections(bundle)
    hurt = impact(bundle, ids, with_stale) if stale else given([])
    got = together(known, foreign, changes, epochs, hurt)
    return Facts(
        got[foreign],
        got[changes],
        got[epochs],
        got[known],
        got[hurt],
        bool(version and version >= (3, 0)),
        v.history_read,
        v.evidence.zk_history,
    )


def causes(f: Facts, affected: list[str], stale: Sequence[Stale]) -> list[Finding]:
    """A `topic_id.root_cause` for each affected topic, a `topic_id.impact` for each with stale replicas."""
    stale_ids: dict[str, set[str]] = {}
    stale_brokers: dict[str, set[int]] = {}
    for r in stale:
        stale_ids.setdefault(r.topic, set()).add(r.disk_topic_id)
        stale_brokers.setdefault(r.topic, set()).add(r.broker_id)
    out = []
    for topic in affected:
        on_foreign = sorted(stale_brokers.get(topic, set()) & set(f.foreign))
        if on_foreign:
            out.append(_wiped(topic, on_foreign, f.foreign))
        elif topic in f.history:
            out.append(
                _proved(topic, f.history[topic], f.elections, stale_ids.get(topic, set()), f.history_read)
            )
        elif topic in f.known:
            out.append(_likely(topic, f.known[topic], f.zk_history))
    return out + [_impact_finding(i, f.checks_disk) for i in f.impact]


# -- evidence ---------------------------------------------------------------------------------------
def _elections(bundle: Bundle) -> Ask[dict[int, tuple[int, int | None]]]:
    """Controller epoch -> (zxid of its election, the elected broker), where ZooKeeper's history holds it."""

    def by_epoch(chain: list[Election]) -> dict[int, tuple[int, int | None]]:
        return {e.epoch: (e.zxid, e.broker) for e in chain if e.epoch is not None and e.zxid is not None}

    return Joined(by_epoch, controllers.chain(bundle))


def _session(r: Write) -> str:
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
    topic: str, changes: list[Write], elections: dict[int, tuple[int, int | None]], stale: set[str], read: str
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


def _count(changes: list[Write], r: Write) -> int | None:
    before = [c for c in changes if c.zxid < r.zxid and c.partitions]
    return before[-1].partitions if before else None


def _writer(r: Write) -> str:
    if r.writer_broker is not None:
        return f"broker {r.writer_broker}"
    return "controller (fenced)" if r.fenced else "outside tool"


def _likely(topic: str, t: Znode, have_history: bool) -> Finding:
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


def _impact_finding(r: Impact, checks_disk: bool) -> Finding:
    """What the stale replicas do now (the ISRs they left, the partitions nobody serves) apart from what
    they will do (the replicas that would leave the ISR, the partitions lost once leadership moves)."""
    rule = (
        "3.x checks the log on disk, so every LeaderAndIsr for them is refused"
        if checks_disk
        else "at 2.8 a broker refuses it once the partition is loaded: from the second LeaderAndIsr "
        "after its start"
    )
    text = (
        f"{r.topic}: {r.replicas} replica(s) hold a stale topic id, which their brokers refuse ({rule}); "
        f"{len(r.out_of_isr)} are out of the ISR ({', '.join(r.out_of_isr) or 'none'}), and "
        f"{len(r.will_leave)} still in it would leave it at their broker's next LeaderAndIsr for them "
        f"({', '.join(r.will_leave) or 'none'})"
    )
    if r.unavailable:
        now = ranges(r.unavailable)
        text += f". Now: partitions {now} are unavailable (no live leader, or one that refused them)"
    if r.at_risk:
        leaders = ", ".join(map(str, r.at_risk_leaders))
        served = (
            f"are served now by their leader (broker(s) {leaders})"
            if r.acting_known
            else f"have a registered leader (broker(s) {leaders}; whether it serves them is not known "
            "without ZooKeeper's history)"
        )
        text += (
            f". Next, a forecast: partitions {ranges(r.at_risk)} {served}, but no replica in their ISR holds "
            "the current id: if leadership moves (that broker restarted or shut down, a preferred or "
            "reassignment election), the new leader would refuse them and they would be unavailable. Do not "
            f"restart broker(s) {leaders} before the stale replicas are repaired"
        )
    return Finding(
        "topic_id.impact",
        CRITICAL if r.unavailable else WARNING,
        {
            "topic": r.topic,
            "out_of_isr": r.out_of_isr,
            "will_leave": r.will_leave,
            "unavailable": r.unavailable,
            "at_risk": r.at_risk,
        },
        text + ".",
        tuple(zk_ref(p) for p in r.paths),
    )


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
        key=("topic", "cause"),
    ),
    Kind(
        "topic_id.impact",
        (CRITICAL, WARNING),
        {"topic": str, "out_of_isr": list, "will_leave": list, "unavailable": list, "at_risk": list},
        key=("topic", "out_of_isr"),
    ),
)
