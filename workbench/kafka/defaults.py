"""Kafka's broker config defaults the workbench relies on, in one place: the analyses read a broker's
`server.properties` and fall back to these; the simulator runs with them. Each is the same at every
release the workbench reads (0.10.2 to 3.6) unless said, checked in the source at the tags named. Those
that differ by version are functions in behaviour.py (zookeeper.session.timeout.ms, replica.lag.time.max.ms).
"""

from __future__ import annotations

# core/src/main/scala/kafka/server/KafkaConfig.scala, object Defaults: 0.10.2.2 l.101 and l.130-131,
# 1.1.1 l.107 and l.138-139, 2.8.2 l.131 and l.163-164; 3.6.2 l.152-153, and for file.delete.delay.ms
# storage/src/main/java/org/apache/kafka/storage/internals/log/LogConfig.java l.165.
FILE_DELETE_DELAY_MS = 60_000  # file.delete.delay.ms: how long a -delete dir waits before its files go
LEADER_IMBALANCE_PER_BROKER_PERCENTAGE = 10  # leader.imbalance.per.broker.percentage
LEADER_IMBALANCE_CHECK_INTERVAL_SECONDS = 300  # leader.imbalance.check.interval.seconds

# Defaults the simulator writes files and logs with (the analyses read the evidence, not these).
# log.segment.bytes and segment.index.bytes: KafkaConfig.scala Defaults 0.10.2.2 l.78 and l.98, 1.1.1
# l.84 and l.104, 2.8.2 l.107 and l.128; 3.6.2 storage/.../log/LogConfig.java l.158 and l.163.
SEGMENT_BYTES = 1024**3  # a segment is rolled when the next batch would not fit
SEGMENT_INDEX_BYTES = 10 * 1024 * 1024  # an active segment's index is preallocated to it
# offsets.topic.num.partitions and offsets.retention.check.interval.ms: OffsetConfig.scala 0.10.2.2 l.54-55
# (kafka/coordinator/), 1.1.1 l.54-55, 2.8.2 l.55-56, 3.6.2 l.59-60 (kafka/coordinator/group/).
OFFSETS_TOPIC_NUM_PARTITIONS = 50
OFFSETS_RETENTION_CHECK_INTERVAL_MS = 600_000
# group.initial.rebalance.delay.ms (KIP-134, 0.11.0+): KafkaConfig.scala Defaults 0.11.0.0 l.146, 1.1.1
# l.152, 2.8.2 l.177, 3.6.2 l.165; before 0.11 a group rebalanced at once.
GROUP_INITIAL_REBALANCE_DELAY_MS = 3_000

BROKER = {
    "file.delete.delay.ms": str(FILE_DELETE_DELAY_MS),
    "leader.imbalance.per.broker.percentage": str(LEADER_IMBALANCE_PER_BROKER_PERCENTAGE),
    "leader.imbalance.check.interval.seconds": str(LEADER_IMBALANCE_CHECK_INTERVAL_SECONDS),
}
