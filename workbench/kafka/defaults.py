"""Kafka's broker config defaults the workbench relies on, in one place: the analyses read a broker's
`server.properties` and fall back to these; the simulator runs with them. Each is the same at every
release the workbench reads (0.10.2 to 3.6), checked in the source at the tags named.
"""

from __future__ import annotations

# core/src/main/scala/kafka/server/KafkaConfig.scala, object Defaults: 0.10.2.2 l.101 and l.130-131,
# 1.1.1 l.107 and l.138-139, 2.8.2 l.131 and l.163-164; 3.6.2 l.152-153, and for file.delete.delay.ms
# storage/src/main/java/org/apache/kafka/storage/internals/log/LogConfig.java l.165.
FILE_DELETE_DELAY_MS = 60_000  # file.delete.delay.ms: how long a -delete dir waits before its files go
LEADER_IMBALANCE_PER_BROKER_PERCENTAGE = 10  # leader.imbalance.per.broker.percentage
LEADER_IMBALANCE_CHECK_INTERVAL_SECONDS = 300  # leader.imbalance.check.interval.seconds

BROKER = {
    "file.delete.delay.ms": str(FILE_DELETE_DELAY_MS),
    "leader.imbalance.per.broker.percentage": str(LEADER_IMBALANCE_PER_BROKER_PERCENTAGE),
    "leader.imbalance.check.interval.seconds": str(LEADER_IMBALANCE_CHECK_INTERVAL_SECONDS),
}
