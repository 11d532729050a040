"""What a broker does with the controller's requests: LeaderAndIsr, UpdateMetadata, StopReplica.

Sequences and texts follow ReplicaManager.becomeLeaderOrFollower with Partition.makeLeader/makeFollower
(2.5.1, 2.8.2, 3.6.2; LOG_TEMPLATES.md). The topic-ID check is Partition.checkOrSetTopicId (2.8.2 l.455) /
ReplicaManager (3.6.2 l.1830): a LeaderAndIsr whose topic id differs from the log's is refused with
INCONSISTENT_TOPIC_ID, and the partition is not started, so a follower never fetches and drops out of the
ISR.
"""

from __future__ import annotations

import uuid
from typing import Any

from workbench.kafka import behaviour
from workbench.kafka.jvm_order import topic_partition_hash
from workbench.simulate import wording
from workbench.simulate.cluster import DATA_DIR, Broker, Cluster, Partition
from workbench.simulate.log_manager import delete_dir_name, schedule_removal

INCONSISTENT_TOPIC_ID = "INCONSISTENT_TOPIC_ID"


def handle_leader_and_isr(
    c: Cluster, b: Broker, controller: int, parts: list[tuple[Partition, str | None]], correlation_id: int
) -> dict[str, str]:
    """ReplicaManager.becomeLeaderOrFollower for the partitions this broker hosts; returns the errors.

    The topic-ID check (2.8.2 Partition.checkOrSetTopicId l.438-463) runs only for a partition already
    loaded in this process, so the first request after a restart passes; 3.6.2 checks the log on disk
    (ReplicaManager.hasConsistentTopicId l.1966). A refused request changes nothing: a follower whose
    leader moved keeps fetching from the old one and gets nowhere. partition.metadata is written when
    the log is created at 3.x, and at 2.8.2 by the first request with an id for a loaded log without one.
    A request at no newer leader epoch than the one the partition runs at in this process (a new
    controller's at its failover) is ignored (`leader_and_isr_at_a_held_epoch_ignored`); at 3.x one at
    the same epoch assigns the topic id a log lacks instead. Returns the topic-id errors.
    """
    errors: dict[str, str] = {}
    tag = wording.tag(c.version)
    c.say(
        b.id,
        "request.leader_and_isr.handling",
        correlation_id=correlation_id,
        controller=controller,
        count=len(parts),
    )
    started = c.now
    for p, topic_id in parts:
        loaded = p.tp in b.loaded
        log_id = b.log_topic_ids.get(p.tp)
        checked = loaded or tag == "3.6.2"
        if checked and log_id is not None and topic_id is not None and log_id != topic_id:
            c.say(b.id, "topic_id.mismatch", "ERROR", log_topic_id=log_id, tp=p.tp, request_topic_id=topic_id)
            errors[p.tp] = INCONSISTENT_TOPIC_ID
            if p.leader != b.id and b.following.get(p.tp) != p.leader:
                b.stuck_since.setdefault(p.tp, c.now)
            if p.leader == b.id and p.tp not in b.leading:
                not_acting(c, b, p, INCONSISTENT_TOPIC_ID)
            continue
        r = c.replica(b, p)
        if p.tp not in b.log_topic_ids:
            c.say(b.id, "log.created", tp=p.tp, dir=f"{DATA_DIR}/{p.tp}", properties="{}")
            b.log_topic_ids[p.tp] = None
        if topic_id is not None and log_id is None and loaded and tag == "2.8.2":
            r.topic_id = b.log_topic_ids[p.tp] = topic_id  # checkOrSetTopicId, whatever the epoch
        previous = b.at_epoch.get(p.tp, -1) if loaded else -1  # Partition.leaderEpoch in this process
        if loaded and p.leader_epoch <= previous:
            ids = (topic_id, controller, correlation_id)
            _ignored(c, b, p, previous, log_id is None and tag == "3.6.2", *ids)
            continue
        if topic_id is not None and log_id is None and (loaded or tag == "3.6.2"):
            r.topic_id = b.log_topic_ids[p.tp] = topic_id
        b.loaded.add(p.tp)
        b.stuck_since.pop(p.tp, None)
        if p.leader == b.id or (p.leader >= 0 and c.brokers[p.leader].alive):
            b.at_epoch[p.tp] = p.leader_epoch  # makeLeader, makeFollower (not for a leader not alive)
        if p.leader == b.id:
            b.following.pop(p.tp, None)
            b.leading[p.tp] = p.leader_epoch
            b.led.add(p.tp)
            c.not_acting_ended(p.topic, p.partition, b.id)
            r.record_epoch(p.leader_epoch, c.now)
            became_leader(c, b, p, r.log_end_offset, r.high_watermark, previous)
            continue
        before = b.following.get(p.tp)
        b.leading.pop(p.tp, None)
        if p.leader < 0 or not c.brokers[p.leader].alive:  # ReplicaManager.makeFollowers
            c.say(
                b.id,
                "request.leader_and_isr.cannot_follow",
                "ERROR",
                correlation_id=correlation_id,
                controller=controller,
                controller_epoch=c.controller_epoch,
                tp=p.tp,
                last_controller_epoch=p.controller_epoch,
                leader=p.leader,
            )
            b.following.pop(p.tp, None)
            continue
        b.following[p.tp] = p.leader
        b.fetch_epoch[p.tp] = p.leader_epoch
        # makeFollower logs its log end before its fetcher truncates (follower_logs_its_log_end)
        fields: dict[str, Any] = dict(tp=p.tp, leader_epoch=p.leader_epoch, offset=r.log_end_offset)
        fields.update(high_watermark=r.high_watermark)
        if tag == "3.6.2":
            fields.update(partition_epoch=p.zk_version, leader=p.leader, previous_leader=before or "None")
        c.say(b.id, "partition.became_follower", previous_leader_epoch=previous, **fields)
        truncate_to_leader(c, b, p, r)
    c.tick(c.jitter(2, 10) + len(parts) // 20)
    c.say(
        b.id,
        "request.leader_and_isr.finished",
        ms=c.now - started,
        correlation_id=correlation_id,
        controller=controller,
        count=len(parts),
    )
    return errors


def _ignored(
    c: Cluster,
    b: Broker,
    p: Partition,
    held: int,
    assigns: bool,
    topic_id: str | None,
    controller: int,
    correlation_id: int,
) -> None:
    """A LeaderAndIsr at no newer leader epoch than the partition's in this process: ignored (the error
    STALE_CONTROLLER_EPOCH), logged at WARN before 2.3 and for an older epoch, the same epoch at DEBUG in
    2.3-2.5 and at INFO from 2.6 (ReplicaManager 1.1.1:1060-1067, 2.5.1:1226-1235, 2.8.2:1386-1398); at 3.x
    the same epoch with a topic id the log lacks assigns it (ReplicaManager 3.6.2:1854-1862)."""
    same = p.leader_epoch == held
    if same and assigns and topic_id is not None:
        c.replica(b, p).topic_id = b.log_topic_ids[p.tp] = topic_id
        c.say(
            b.id,
            "topic_id.assigned",
            tp=p.tp,
            topic_id=topic_id,
            controller=controller,
            correlation_id=correlation_id,
            controller_epoch=c.controller_epoch,
        )
        return
    epochs = f"since its associated leader epoch {p.leader_epoch}"
    if not c.version_at_least(2, 3):
        level, reason = "WARN", f"{epochs} is not higher than the current leader epoch {held}"
    elif not same:
        level, reason = "WARN", f"{epochs} is smaller than the current leader epoch {held}"
    elif c.version_at_least(2, 6):
        level, reason = "INFO", f"{epochs} matches the current leader epoch"
    else:
        return  # at DEBUG
    fields: dict[str, Any] = dict(controller=controller, correlation_id=correlation_id, tp=p.tp)
    fields.update(controller_epoch=c.controller_epoch, reason=reason)
    c.say(b.id, "request.leader_and_isr.ignored", level, **fields)


def truncate_to_leader(c: Cluster, b: Broker, p: Partition, r: Any) -> None:
    """The follower's first fetch (OffsetsForLeaderEpoch): what it holds beyond the point where the
    leader's log moved past the follower's latest epoch diverged and is truncated (Log.truncateTo);
    below its high watermark, committed records are lost; the fetcher's warning of it is written only
    where `truncation_below_high_watermark_warned` holds."""
    leader = c.brokers.get(p.leader)
    if leader is None or not leader.alive or p.tp not in leader.leading:
        return
    # KIP-279: the leader answers the follower's latest epoch with where its own log moved past it
    lr = c.replica(leader, p)
    mine = r.epochs[-1][0] if r.epochs else -1
    end = min([lr.log_end_offset, *(start for epoch, start in lr.epochs if epoch > mine)])
    if r.log_end_offset <= end:
        return
    hw, dropped = r.high_watermark, r.log_end_offset - end
    c.say(b.id, "log.truncated", of=p.tp, offset=end)
    if end < hw and behaviour.holds("truncation_below_high_watermark_warned", c.version):
        ident = f"[ReplicaFetcher replicaId={b.id}, leaderId={p.leader}, fetcherId=0] "
        c.say(b.id, "log.truncated_below_hw", "WARN", ident=ident, tp=p.tp, offset=end, high_watermark=hw)
    r.truncate(end, c.now)
    c.truth["truncations"].append(
        dict(
            topic=p.topic,
            partition=p.partition,
            broker=b.id,
            offset=end,
            high_watermark=hw,
            dropped=dropped,
            led_before=p.tp in b.led,
            at_ms=c.now,
            # its lines state its high watermark: the fetcher's warning, or its log end and high watermark
            # as it became follower
            logged_hw=bool(
                behaviour.holds("truncation_below_high_watermark_warned", c.version)
                or behaviour.holds("follower_logs_its_log_end", c.version)
            ),
        )
    )


def not_acting(c: Cluster, b: Broker, p: Partition, error: str) -> None:
    """ZooKeeper names `b` leader but it refused the LeaderAndIsr and did not lead before: nobody serves
    the partition (Partition.makeLeader never ran) until another leader is elected or `b` accepts."""
    if any(
        w["to_ms"] is None and w["topic"] == p.topic and w["partition"] == p.partition
        for w in c.truth["leaders_not_acting"]
    ):
        return
    zxid = c.health.refused((p.topic, p.partition), b.id)  # the write of the epoch it refused
    # nobody served it since before that write (a refusing leader's leadership moved to another that
    # refuses): the outage under way runs on, told by what began it
    since = c.health.unserved_since.get((p.topic, p.partition))
    continues = (
        zxid is not None and since is not None and since < c.health.epoch_written[(p.topic, p.partition)][2]
    )
    # elected as the partition came back from offline: one episode with it (no leader all along)
    after = zxid is not None and c.health.offline_ended.get((p.topic, p.partition)) == zxid
    offline = c.health.offline_began[(p.topic, p.partition)] if after else None
    c.truth["leaders_not_acting"].append(
        dict(
            topic=p.topic,
            partition=p.partition,
            broker=b.id,
            leader_epoch=p.leader_epoch,
            error=error,
            zxid=zxid,
            from_ms=c.now,
            to_ms=None,
            after_offline=list(offline) if offline else None,  # that offline episode's [zxid, leader]
            # that episode went offline within an outage that began with a refusal: it runs on, one outage
            within=after and c.health.offline_within.get((p.topic, p.partition), False),
            continues=continues,
        )
    )


def became_leader(c: Cluster, b: Broker, p: Partition, offset: int, hw: int, previous: int) -> None:
    isr = ",".join(map(str, p.isr))
    tag = wording.tag(c.version)
    if tag == "2.5.1":
        c.say(
            b.id,
            "partition.became_leader",
            tp=p.tp,
            leader_epoch=p.leader_epoch,
            offset=offset,
            high_watermark=hw,
            previous_leader_epoch=previous,
        )
        return
    fields: dict[str, Any] = dict(
        tp=p.tp, leader_epoch=p.leader_epoch, offset=offset, high_watermark=hw, isr=isr
    )
    adding, removing = (",".join(map(str, x)) for x in (p.adding, p.removing))
    fields.update(adding_replicas=adding, removing_replicas=removing, previous_leader_epoch=previous)
    if tag == "3.6.2":
        topic = c.topics[p.topic]
        fields.update(topic_id=topic.topic_id, partition_epoch=p.zk_version, previous_leader="None")
    c.say(b.id, "partition.became_leader", **fields)


def handle_update_metadata(
    c: Cluster, b: Broker, controller: int, added: int, correlation_id: int, deleted: int = 0
) -> None:
    """ZkMetadataCache.updateMetadata: partitions of topics being deleted (leader -2) leave the cache."""
    c.say(
        b.id,
        "request.update_metadata.handled",
        added=added,
        deleted=deleted,
        controller=controller,
        controller_epoch=c.controller_epoch,
        correlation_id=correlation_id,
    )


def handle_stop_replica(
    c: Cluster, b: Broker, controller: int, parts: list[Partition], delete: bool, correlation_id: int
) -> list[Partition]:
    """ReplicaManager.stopReplicas: fetchers stop; with delete, each log is renamed to
    `<tp>.<uuid>-delete` (LogManager.asyncDelete) and removed after file.delete.delay.ms. Returns the
    partitions stopped without error (all of them: no log dir is offline here)."""
    tag = wording.tag(c.version)
    if tag != "2.5.1":
        c.say(
            b.id,
            "request.stop_replica.handling",
            correlation_id=correlation_id,
            controller=controller,
            count=len(parts),
        )
    followed = [p for p in parts if b.following.pop(p.tp, None) is not None]
    for p in parts:
        b.leading.pop(p.tp, None)
    if followed:
        tps, hashes = [p.tp for p in followed], [topic_partition_hash(p.topic, p.partition) for p in followed]
        c.say(b.id, "fetcher.removed", partitions=wording.scala_set(tps, c.version, hashes=hashes))
    for p in parts:
        if tag == "2.5.1":
            c.say(b.id, "request.stop_replica.handling", "TRACE", delete=str(delete).lower(), tp=p.tp)
        r = b.log_dir.replicas.get(p.tp)
        if delete and r is not None and r.delete_dir is None:
            b.loaded.discard(p.tp)
            b.at_epoch.pop(p.tp, None)
            b.log_topic_ids.pop(p.tp, None)
            b.stuck_since.pop(p.tp, None)
            r.delete_dir = delete_dir_name(p.topic, p.partition, uuid.UUID(int=c.rng.getrandbits(128)).hex)
            r.modified_ms = c.now
            b.log_dir.replicas[r.delete_dir] = b.log_dir.replicas.pop(p.tp)  # a new log may take its place
            c.say(b.id, "log.renamed_for_deletion", tp=p.tp, dir=f"{DATA_DIR}/{r.delete_dir}")
            schedule_removal(c, b, r.delete_dir)
        if tag == "2.5.1":
            c.say(b.id, "request.stop_replica.finished", "TRACE", delete=str(delete).lower(), tp=p.tp)
    c.tick(c.jitter(1, 5) + len(parts) // 10)
    return parts
