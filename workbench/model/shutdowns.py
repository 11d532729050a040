"""Controlled shutdowns that needed retries or failed, as the shutting-down broker's own lines tell them
(KafkaServer.controlledShutdown, 2.5.1-3.6.2; 2.8.2:560-650).

A broker asks the controller to move its leaderships away ("Starting controlled shutdown"); the controller
answers with the partitions it could not move yet ("Remaining partitions to move: ..."; from 3.x "... with N
partitions remaining to move"), and the broker retries after controlled.shutdown.retry.backoff.ms, up to
controlled.shutdown.max.retries times ("Retrying controlled shutdown after the previous attempt
failed..."). When every attempt failed it goes down anyway ("Proceeding to do an unclean shutdown as all the
controlled shutdown attempts failed"), still leading what was not moved.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from pyspark.sql import Window
from pyspark.sql import functions as F

from workbench.model.refs import file_ref
from workbench.model.views import views
from workbench.together import Ask, given

if TYPE_CHECKING:
    from workbench.frames import Bundle

GAVE_UP = "Proceeding to do an unclean shutdown"  # the final line, not an attempt's error


@dataclass(frozen=True)
class ControlledShutdown:
    """One controlled shutdown of a broker that was retried or failed: when it began (its clock), how many
    attempts, whether it gave up, what the controller last said was left to move, and the lines."""

    broker: int
    began: datetime
    attempts: int
    gave_up: bool
    remaining: str | None  # the partitions (or their count) left to move, as last logged
    began_ref: str
    last_ref: str


def troubled(bundle: Bundle, limit: int) -> Ask[list[ControlledShutdown]]:
    """The first `limit` controlled shutdowns that were retried or gave up (one query; none without the
    brokers' logs)."""
    if not views(bundle).evidence.with_logs:
        return given([])
    ev = bundle.cluster_events.where(
        F.col("event").startswith("controlled_shutdown.") & F.col("broker_id").isNotNull()
    )
    w = Window.partitionBy("broker_id").orderBy("ts", "line_no")
    line = F.struct("ts", "file", "line_no")
    started = F.col("event") == "controlled_shutdown.started"
    gave_up = (F.col("event") == "controlled_shutdown.failed") & F.col("message").startswith(GAVE_UP)
    left = F.coalesce(F.col("attrs")["partitions"], F.col("attrs")["count"])
    rows = (
        ev.select(
            "broker_id",
            line.alias("line"),
            "event",
            gave_up.alias("gave_up"),
            F.when(F.col("event") == "controlled_shutdown.remaining", left).alias("left"),
            F.last(F.when(started, line), ignorenulls=True)
            .over(w.rowsBetween(Window.unboundedPreceding, 0))
            .alias("began"),
        )
        .where(F.col("began").isNotNull())
        .groupBy("broker_id", "began")
        .agg(
            (1 + F.count_if(F.col("event") == "controlled_shutdown.retrying")).alias("attempts"),
            F.max("gave_up").alias("gave_up"),
            F.max_by("left", F.when(F.col("left").isNotNull(), F.col("line"))).alias("left"),
            F.max_by("line", "line").alias("last"),
        )
        .where((F.col("attempts") > 1) | F.col("gave_up"))
        .orderBy("began.ts", "broker_id")
        .limit(limit)  # at most `limit` shutdowns
    )
    return Ask(
        rows,
        lambda rs: [
            ControlledShutdown(
                r.broker_id,
                r.began.ts,
                r.attempts,
                bool(r.gave_up),
                _left(r.left) if r.left else None,
                file_ref(r.began.file, r.began.line_no),
                file_ref(r.last.file, r.last.line_no),
            )
            for r in rs
        ],
    )


def _left(text: str) -> str:
    """What the controller said was left to move: `[RemainingPartition(topicName='t', partitionIndex=1),
    ...]` (2.x) or a count (3.x), as a finding says it."""
    pairs = re.findall(r"topicName='([^']*)', partitionIndex=(\d+)", text)
    if pairs:
        shown = ", ".join(f"{t}-{p}" for t, p in pairs[:6]) + (", ..." if len(pairs) > 6 else "")
        return f"{len(pairs)} partition(s) ({shown})"
    return f"{text} partition(s)" if text.strip().isdigit() else text
