"""What a broker's log directory (`log.dirs` entry) holds, as Kafka names and writes it.

Sources, apache/kafka: `core/src/main/scala/kafka/log/Log.scala` @2.5.1 and @2.8.2 (logDirName,
logDeleteDirName, logFutureDirName, DeleteDirPattern, FutureDirPattern, parseTopicPartitionName),
`core/src/main/scala/kafka/log/LocalLog.scala` @3.6.2 (StrayDirSuffix), `kafka/server/checkpoints/*.scala`,
`kafka/server/PartitionMetadataFile.scala` and `kafka/server/BrokerMetadataCheckpoint.scala` @2.8.2.
Patterns are plain strings usable by Python's `re` and by Java's regex (Spark), so there is one copy.
"""

from __future__ import annotations

# Files at the root of a log dir.
META_PROPERTIES = "meta.properties"
CLEAN_SHUTDOWN = ".kafka_cleanshutdown"
# Offset checkpoint files (OffsetCheckpointFile): version 0, one "topic partition offset" line per entry.
# The kind is the file name without "-checkpoint", in Kafka's own words.
OFFSET_CHECKPOINTS = {
    "replication-offset-checkpoint": "replication-offset",  # ReplicaManager.HighWatermarkFilename
    "recovery-point-offset-checkpoint": "recovery-point-offset",  # LogManager.RecoveryPointCheckpointFile
    "log-start-offset-checkpoint": "log-start-offset",  # LogManager.LogStartOffsetCheckpointFile
    "cleaner-offset-checkpoint": "cleaner-offset",  # LogCleanerManager.offsetCheckpointFile
}
# Files in each partition dir.
PARTITION_METADATA = "partition.metadata"  # since 2.8 (KIP-516)
LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"  # version 0, "epoch start_offset" lines
CHECKPOINT_VERSION = 0
PARTITION_METADATA_VERSION = 0

ROOT_METADATA_FILES = frozenset({META_PROPERTIES, *OFFSET_CHECKPOINTS})
PARTITION_METADATA_FILES = frozenset({PARTITION_METADATA, LEADER_EPOCH_CHECKPOINT})

# Partition dir names. Live: "<topic>-<partition>". Marked for deletion, moving between log dirs
# (KIP-113) and stray (3.6+): "<topic>-<partition>.<uniqueId>-delete|-future|-stray", where uniqueId is
# a random UUID without dashes (not the topic id) and a -delete/-stray topic prefix may be cut so that
# the name stays within 255 characters.
TOPIC_CHARS = r"[A-Za-z0-9._-]"
LIVE_DIR = r"^(" + TOPIC_CHARS + r"+)-(\d+)$"
SUFFIXED_DIR = r"^(" + TOPIC_CHARS + r"*)-(\d+)\.([0-9A-Za-z]+)-(delete|future|stray)$"
DIR_STATES = ("live", "delete", "future", "stray")

# Kafka's Uuid.toString: url-safe base64 of the 16 bytes, without padding (clients/.../common/Uuid.java).
TOPIC_ID = r"[A-Za-z0-9_-]{22}"
ZERO_TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAA"  # Uuid.ZERO_UUID, refused in partition.metadata


def is_metadata_file(relpath: str) -> bool:
    """True for the small files an evidence bundle copies from a log dir (never segment data)."""
    parts = relpath.split("/")
    if len(parts) == 1:
        return parts[0] in ROOT_METADATA_FILES
    return len(parts) == 2 and parts[1] in PARTITION_METADATA_FILES
