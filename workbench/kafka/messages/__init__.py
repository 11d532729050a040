"""Catalog of the log lines Kafka writes in ZooKeeper mode (2.5, 2.8, 3.x) -> event kinds and fields.

Each entry cites its source file in apache/kafka (or apache/zookeeper for the client and server lines) and
the tags where the text exists, with line numbers, as `tag:line` (reference: LOG_TEMPLATES.md). Templates
are the Scala/Java strings with `{field}` for interpolations (see templates.py). Order matters: the first
match wins, so a specific wording comes before a general one. Kinds are dotted: `<area>.<what happened>`.
"""

from __future__ import annotations

from workbench.kafka.messages import background, broker, controller, lifecycle, source, zookeeper
from workbench.kafka.templates import Template

# Written by hand: what a line means to the analyses.
CURATED: list[Template] = [
    *controller.CONTROLLER,
    *controller.TOPICS,
    *controller.DELETION,
    *controller.REPLICA_STATES,
    *controller.ELECTIONS,
    *broker.ISR,
    *broker.REQUESTS,
    *broker.TOPIC_IDS,
    *broker.LOG_DIRS,
    *broker.BROKER,
    *zookeeper.ZOOKEEPER,
    *controller.REASSIGNMENT,
    *background.BACKGROUND,
    *lifecycle.LIFECYCLE,
]
# Then every other message of the classes that matter, made from the listing of Kafka's log calls.
CATALOG: list[Template] = [*CURATED, *source.templates(CURATED)]
KINDS = sorted({t.kind for t in CATALOG})
# Areas (a kind's first part) that no analysis of the cluster's state reads, typed for searches
# (`frames.Bundle.cluster_events` leaves them out): what a busy broker writes by the million while nothing
# goes wrong (fetch sessions, consumer groups: background.py) and the messages made from Kafka's source.
BACKGROUND_AREAS = ("fetcher", "group", source.AREA)
