"""What a broker's LogManager does with its log dir: load the logs at start-up (a '-delete' dir queued again),
and remove a renamed log once file.delete.delay.ms passed, or fail to and take the log dir offline
(LogManager.loadLogs, asyncDelete and deleteLogs; LogDirFailureChannel; 2.5.1, 2.8.2, 3.6.2)."""

from __future__ import annotations

from typing import Any

from workbench.kafka.defaults import FILE_DELETE_DELAY_MS
from workbench.kafka.jvm_order import topic_partition_hash
from workbench.simulate import wording
from workbench.simulate.cluster import DATA_DIR, Broker, Cluster


def load_logs(c: Cluster, b: Broker) -> None:
    """LogManager.loadLogs: every partition dir comes back with the topic id its partition.metadata holds."""
    live = [r for r in b.log_dir.replicas.values() if r.delete_dir is None]
    tag = wording.tag(c.version)
    if tag == "2.5.1":
        c.say(b.id, "log_manager.loading")
    else:
        c.say(b.id, "log_manager.loading", dirs=f"ArraySeq({DATA_DIR})")
    clean = b.log_dir.clean_shutdown
    pick = (
        ("Skipping recovery" if clean else "Recover")
        if tag == "3.6.2"
        else ("Skipping" if clean else "Attempting")
    )
    if tag == "3.6.2" and live:
        c.say(b.id, "log_manager.recovery", pick=pick, count=len(live), dir=DATA_DIR)
    elif tag == "2.8.2":
        c.say(b.id, "log_manager.recovery", pick=pick, dir=DATA_DIR)
    b.log_dir.clean_shutdown = False  # the marker is removed at startup
    b.log_dir.offline = False  # a new process opens its log dirs again
    took = c.jitter(5, 20) + len(live) * c.jitter(2, 8) + (0 if clean else len(live) * 30)
    c.tick(took)
    b.log_topic_ids = {f"{r.topic}-{r.partition}": r.topic_id for r in live}
    for pending in [r.delete_dir for r in b.log_dir.replicas.values() if r.delete_dir is not None]:
        schedule_removal(c, b, pending)  # loadLog: a '-delete' dir is queued for deletion again
    b.loaded.clear()
    b.at_epoch.clear()
    b.following.clear()
    b.fetch_epoch.clear()
    b.stuck_since.clear()
    b.leading.clear()
    if tag == "2.5.1":
        c.say(b.id, "log_manager.loaded", ms=took)
    else:
        c.say(b.id, "log_manager.loaded", count=len(live), ms=took)


def removal_failed(c: Cluster, b: Broker, r: Any, dir_name: str) -> None:
    """LogManager.deleteLogs cannot rename a segment of the '-delete' dir to .deleted (its files belong to
    another user): the I/O error takes the log dir offline (LogDirFailureChannel), and as it is the
    broker's only one, the broker halts (ReplicaManager and LogManager.handleLogDirFailure, 2.8.2
    l.1837-1874 and l.188-195; `failed_log_dir_takes_its_replicas_offline`). The dir stays on disk."""
    from workbench.simulate import (
        story,
    )  # the halt is the story's crash (story imports broker, which imports this)

    b.log_dir.offline = True  # one failure halts the broker: removals due meanwhile find the dir offline
    tp, path = f"{r.topic}-{r.partition}", f"{DATA_DIR}/{dir_name}"
    segment = f"{path}/{r.segments[0][0]:020d}.log"
    cause = f"java.nio.file.AccessDeniedException: {segment} -> {segment}.deleted"
    # UnifiedLog.delete's inner LocalLog.deleteAllSegments (3.6.2 l.250); Log.delete before (2.8.2 l.2139)
    what = "deleting all segments" if wording.tag(c.version) == "3.6.2" else "deleting log"
    operation = f"Error while {what} for {tp}"
    said = f"{operation} in dir {DATA_DIR}"
    c.say(
        b.id,
        "log_dir.io_error",
        "ERROR",
        pick="{operation} in dir",
        operation=operation,
        dir=DATA_DIR,
        thrown=cause,
    )
    log = f"Log(dir={path}, topic={r.topic}, partition={r.partition}, highWatermark={r.high_watermark}, "
    log += f"lastStableOffset={r.high_watermark}, logStartOffset=0, logEndOffset={r.log_end_offset})"
    storage = f"org.apache.kafka.common.errors.KafkaStorageException: {said}\nCaused by: {cause}"
    c.say(b.id, "log.delete_failed", "ERROR", log_name=log, dir=DATA_DIR, thrown=storage)
    c.tick(c.jitter(1, 5))
    c.say(b.id, "log_dir.failed", "WARN", pick="Stopping serving replicas", dir=DATA_DIR)
    hosted = sorted((x.topic, x.partition) for x in b.log_dir.replicas.values() if x.delete_dir is None)
    hashes = [topic_partition_hash(t, p) for t, p in hosted]
    c.say(
        b.id,
        "log_dir.failed",
        "WARN",
        pick="stopped fetcher",
        broker=b.id,
        partitions=",".join(wording.set_order([f"{t}-{p}" for t, p in hosted], c.version, hashes=hashes)),
        future_partitions="",
        dir=DATA_DIR,
    )
    c.say(b.id, "log_dir.failed", "WARN", pick="Stopping serving logs", dir=DATA_DIR)
    c.say(b.id, "log_dir.failed", "FATAL", pick="Shutdown broker", dir=DATA_DIR)
    c.truth["log_dirs_failed"].append(dict(broker=b.id, log_dir=DATA_DIR, halted=True, at_ms=c.now))
    story.crash(c, b.id, halted=True)


def delete_dir_name(topic: str, partition: int, unique_id: str) -> str:
    """Log.logDeleteDirName (2.8.2 l.2555): the topic is cut so the name stays within 255 characters."""
    suffix = f"-{partition}.{unique_id}-delete"
    return topic[: min(len(topic), 255 - len(suffix))] + suffix


def schedule_removal(c: Cluster, b: Broker, dir_name: str) -> None:
    """LogManager.deleteLogs: the kafka-delete-logs task removes a renamed log once the delay passed,
    if the broker is still running then (a '-delete' dir left by a crash is queued again at startup)."""

    def remove() -> None:
        r = b.log_dir.replicas.get(dir_name)
        if not b.alive or r is None or b.log_dir.offline:
            return
        if r.topic in b.log_dir.denied:
            removal_failed(c, b, r, dir_name)
            return
        del b.log_dir.replicas[dir_name]
        c.say(b.id, "log.deleted", tp=f"{r.topic}-{r.partition}", dir=f"{DATA_DIR}/{dir_name}")

    c.after(FILE_DELETE_DELAY_MS + c.jitter(0, 50), remove)
