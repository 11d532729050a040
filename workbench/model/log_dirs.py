"""Failed log dirs as the brokers' own lines tell them, ZooKeeper or not (ZooKeeper records only that a
broker had one, `/log_dir_event_notification`, not which dir or why).

A broker whose I/O on a log dir fails logs the error (`log_dir.io_error`, LogDirFailureChannel, 2.5.1-3.6.2),
then stops serving every replica in the dir ("Stopping serving replicas in dir", ReplicaManager
.handleLogDirFailure, 2.8.2 l.1840) and tells the controller, which elects other leaders for them. It halts
instead where its inter-broker protocol is older than 1.0 ("Halting broker because dir ... is offline",
ReplicaManager.LogDirFailureHandler, 2.8.2 l.272) and when the failed dir was its last one ("Shutdown broker
because all log dirs in ... have failed", LogManager.handleLogDirFailure, 2.8.2 l.193): then every replica
it held is offline until it restarts.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from pyspark.sql import functions as F

from workbench.model.views import views
from workbench.together import Ask, given

if TYPE_CHECKING:
    from workbench.frames import Bundle

HALTS = ("halting", "all_failed")  # the catalog's steps of `log_dir.failed` after which the broker halted


@dataclass(frozen=True)
class Said:
    """One line of a broker's log: when (broker's clock), where, and what it said."""

    ts: datetime
    file: str
    line_no: int
    message: str


@dataclass(frozen=True)
class DirFailed:
    """A log dir a broker's lines say failed: the first line about it, the I/O error it logged (None: not
    in the logs read) and the line saying the broker halted for it (None: it did not say so)."""

    broker: int
    log_dir: str
    first: Said
    error: Said | None
    halted: Said | None


def failed_dirs_logged(bundle: Bundle) -> Ask[list[DirFailed]]:
    """Per broker and log dir, what its lines say of the dir's failure (a row per dir); none without the
    brokers' logs."""
    if not views(bundle).evidence.with_logs:
        return given([])
    ev = bundle.cluster_events.where(F.col("event").isin("log_dir.io_error", "log_dir.failed"))
    said = F.struct("ts", "file", "line_no", "message")
    order = F.struct("ts", "file", "line_no")

    def first_where(cond: F.Column) -> F.Column:
        return F.min_by(F.when(cond, said), F.when(cond, order))

    rows = (
        ev.select(
            "broker_id",
            # "all log dirs in a, b have failed" names them all
            F.explode(F.split(F.col("attrs")["dir"], r",\s*")).alias("log_dir"),
            "ts",
            "file",
            "line_no",
            "message",
            "event",
            F.col("attrs")["step"].alias("step"),
        )
        .where(F.col("broker_id").isNotNull() & (F.col("log_dir") != ""))
        .groupBy("broker_id", "log_dir")
        .agg(
            F.min_by(said, order).alias("first"),
            first_where(F.col("event") == "log_dir.io_error").alias("error"),
            first_where(F.col("step").isin(*HALTS)).alias("halted"),
        )
        .orderBy("broker_id", "log_dir")  # one row per failed dir
    )
    return Ask(
        rows,
        lambda rs: [
            DirFailed(
                r.broker_id,
                r.log_dir,
                Said(**r.first.asDict()),
                Said(**r.error.asDict()) if r.error else None,
                Said(**r.halted.asDict()) if r.halted else None,
            )
            for r in rs
        ],
    )
