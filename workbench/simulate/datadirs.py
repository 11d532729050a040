"""A broker's `log.dirs` as the simulated story leaves them, written as a bundle holds them.

What is written is what `workbench capture broker` writes (DESIGN.md): `listing.tsv` of every file (segment
files only as names and sizes) and copies of the metadata files, each in Kafka's own format (FORMATS.md
part A): meta.properties (`Properties.store`), the offset checkpoints, `leader-epoch-checkpoint`, and
`partition.metadata` (2.8+). A deleted partition's dir is renamed `<tp>.<uuid hex>-delete` until
`file.delete.delay.ms` has passed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from workbench.bundle import LISTING
from workbench.kafka import defaults, logdir

INDEX_BYTES = defaults.SEGMENT_INDEX_BYTES  # an active segment's index is preallocated to it
TIMEINDEX_BYTES = INDEX_BYTES // 12 * 12  # ... and its time index to a multiple of 12-byte entries
AVG_RECORD_BYTES = 180  # on disk, with batch overhead
SEGMENT_BYTES = defaults.SEGMENT_BYTES


@dataclass
class Replica:
    """One partition dir in one log dir."""

    topic: str
    partition: int
    created_ms: int
    topic_id: str | None = None  # what partition.metadata says (None: no file, as before 2.8)
    epochs: list[tuple[int, int]] = field(default_factory=list)  # leader-epoch-checkpoint entries
    log_end_offset: int = 0
    high_watermark: int = 0
    modified_ms: int = 0
    caught_up_ms: int = 0  # as a follower, when it last reached its leader's end (Replica.lastCaughtUpTimeMs)
    delete_dir: str | None = None  # '<tp>.<uuid hex>-delete' once LogManager.asyncDelete renamed it
    # Its segments: (base offset, when it was rolled); the last is the active one.
    segments: list[tuple[int, int]] = field(default_factory=lambda: [(0, 0)])

    @property
    def dir_name(self) -> str:
        return self.delete_dir or f"{self.topic}-{self.partition}"

    def grow(self, log_end_offset: int, ms: int) -> list[int]:
        """Append up to `log_end_offset`; returns the base offsets of the segments that rolled on the
        way (Log.maybeRoll: the active segment is full at log.segment.bytes)."""
        per_segment = SEGMENT_BYTES // AVG_RECORD_BYTES
        rolled = []
        while log_end_offset - self.segments[-1][0] > per_segment:
            base = self.segments[-1][0] + per_segment
            self.segments.append((base, ms))
            rolled.append(base)
        self.log_end_offset, self.modified_ms = log_end_offset, ms
        return rolled

    def truncate(self, offset: int, ms: int) -> None:
        """Log.truncateTo: records at and beyond `offset` go, with the segments and leader epochs that
        begin there (LeaderEpochFileCache.truncateFromEnd)."""
        self.segments = [s for s in self.segments if s[0] <= offset] or [(0, ms)]
        self.epochs = [e for e in self.epochs if e[1] < offset] or self.epochs[:1]
        self.log_end_offset, self.high_watermark = offset, min(self.high_watermark, offset)
        self.modified_ms = ms

    def copy_epochs(self, leader_epochs: list[tuple[int, int]], ms: int) -> None:
        """A follower that caught up holds the leader's log, so its epochs begin where the leader's do
        (LeaderEpochFileCache.assign as each fetched batch arrives)."""
        if self.epochs != leader_epochs:
            self.epochs = list(leader_epochs)
            self.modified_ms = max(self.modified_ms, ms)

    def record_epoch(self, epoch: int, ms: int) -> None:
        """LeaderEpochFileCache.assign: a new epoch starts at the current log end offset."""
        if not self.epochs or epoch > self.epochs[-1][0]:
            self.epochs.append((epoch, self.log_end_offset))
            self.modified_ms = max(self.modified_ms, ms)


@dataclass
class LogDir:
    """One entry of a broker's `log.dirs`."""

    path: str  # as configured, e.g. /var/lib/kafka/data
    broker_id: int
    cluster_id: str | None
    created_ms: int
    replicas: dict[str, Replica] = field(default_factory=dict)  # by dir name
    clean_shutdown: bool = False
    checkpointed_ms: int = 0
    denied: set[str] = field(default_factory=set)  # topics whose files the broker may no longer rename
    offline: bool = False  # an I/O error took it offline (LogDirFailureChannel); the broker halts

    def write(self, out: Path, at_ms: int) -> int:
        """Write listing.tsv and the metadata copies under `out`; returns the number of files listed."""
        out.mkdir(parents=True, exist_ok=True)
        files: list[tuple[str, bytes | None, int, int]] = []  # (relative path, copy or None, size, mtime)

        def add(rel: str, content: bytes | None, ms: int, size: int | None = None) -> None:
            files.append((rel, content, len(content) if content is not None else size or 0, ms))

        add(
            logdir.META_PROPERTIES,
            meta_properties(self.broker_id, self.cluster_id, self.created_ms),
            self.created_ms,
        )
        add(".lock", b"", self.created_ms)
        if self.clean_shutdown:
            add(logdir.CLEAN_SHUTDOWN, b"", at_ms)
        live = [r for r in self.replicas.values() if r.delete_dir is None]
        ck = max(self.checkpointed_ms, self.created_ms)
        add(
            "replication-offset-checkpoint",
            checkpoint([(r.topic, r.partition, r.high_watermark) for r in live]),
            ck,
        )
        add(
            "recovery-point-offset-checkpoint",
            checkpoint([(r.topic, r.partition, r.log_end_offset) for r in live]),
            ck,
        )
        add("log-start-offset-checkpoint", checkpoint([]), ck)
        add("cleaner-offset-checkpoint", checkpoint([]), self.created_ms)
        for r in sorted(self.replicas.values(), key=lambda r: r.dir_name):
            d = r.dir_name
            mtime = max(r.modified_ms, r.created_ms)
            suffix = ".deleted" if r.delete_dir else ""
            last = len(r.segments) - 1
            for i, (base, rolled) in enumerate(r.segments):
                end, closed = r.segments[i + 1] if i < last else (r.log_end_offset, mtime)
                size = (end - base) * AVG_RECORD_BYTES
                if i < last:  # LogSegment.onBecomeInactiveSegment trims a closed segment's indexes to
                    entries = size // 4096  # their entries, one per index.interval.bytes of log
                    index, timeindex, born = entries * 8, entries * 12, closed
                else:
                    index, timeindex, born = INDEX_BYTES, TIMEINDEX_BYTES, max(rolled, r.created_ms)
                add(f"{d}/{base:020d}.log{suffix}", None, closed, size)
                add(f"{d}/{base:020d}.index{suffix}", None, born, index)
                add(f"{d}/{base:020d}.timeindex{suffix}", None, born, timeindex)
            add(f"{d}/{logdir.LEADER_EPOCH_CHECKPOINT}", checkpoint(r.epochs), mtime)
            if r.topic_id is not None:
                add(f"{d}/{logdir.PARTITION_METADATA}", partition_metadata(r.topic_id), r.created_ms)
        with open(out / LISTING, "w", encoding="utf-8", newline="\n") as listing:
            for rel, content, size, ms in sorted(files):
                listing.write(f"{rel}\t{size}\t{ms // 1000}.{ms % 1000:03d}0000000\n")
                if content is not None:
                    (out / rel).parent.mkdir(parents=True, exist_ok=True)
                    (out / rel).write_bytes(content)
        return len(files)


def checkpoint(entries: list[tuple[str, int, int]] | list[tuple[int, int]]) -> bytes:
    """CheckpointFile.write: version 0, the count, one entry a line (offset checkpoints and leader epochs)."""
    lines = ["0", str(len(entries)), *(" ".join(map(str, e)) for e in entries)]
    return ("\n".join(lines) + "\n").encode()


def partition_metadata(topic_id: str) -> bytes:
    """PartitionMetadataFile (2.8.2 l.40): no trailing newline."""
    return f"version: 0\ntopic_id: {topic_id}".encode()


def meta_properties(broker_id: int, cluster_id: str | None, ms: int) -> bytes:
    """BrokerMetadataCheckpoint.write: Properties.store with an empty comment, the date line, and the keys
    in java.util.Hashtable's order for these three keys (as the real file shows)."""
    date = datetime.fromtimestamp(ms // 1000, tz=timezone.utc).strftime("%a %b %d %H:%M:%S UTC %Y")
    keys = [("cluster.id", cluster_id), ("version", "0"), ("broker.id", str(broker_id))]
    body = "".join(f"{k}={v}\n" for k, v in keys if v is not None)
    return f"#\n#{date}\n{body}".encode()
