"""How long each broker took to restart, as the evidence shows it: what a step of a rolling restart (the
repair plan's) can expect of that broker.

A broker's own lines time its stop and its start, on its own clock (behaviour
`broker_start_and_stop_lines`, 0.10-3.9): "shutting down", its controlled shutdown, "shut down
completed"; then "starting" ... "started", once it is registered and serving. ZooKeeper's history times its
return into the ISRs: from its registration to the first write of each partition's state that gave it back
a place it had left, the last of those.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, NamedTuple

from pyspark.sql import functions as F

from workbench.model.reads import fact
from workbench.model.refs import Said, txn_ref
from workbench.model.views import views

if TYPE_CHECKING:
    from workbench.frames import Bundle

STOPPING = ("broker.shutting_down", "controlled_shutdown.started")
STOPPED = "broker.shut_down"
STARTING = "broker.starting"
STARTED = "broker.started"


class Line(NamedTuple):
    """One of a broker's start and stop lines."""

    broker: int
    event: str
    said: Said


@dataclass(frozen=True)
class Restart:
    """One restart of a broker, as its lines tell: its stop (from its first shutdown line to "shut down
    completed"; None after a crash or where the log does not hold it) and its start ("starting" to
    "started")."""

    broker: int
    stopping: Said | None
    stopped: Said | None
    starting: Said
    started: Said

    @property
    def stop_ms(self) -> int | None:
        if self.stopping is None or self.stopped is None:
            return None
        return _ms(self.stopping.ts, self.stopped.ts)

    @property
    def start_ms(self) -> int:
        return _ms(self.starting.ts, self.started.ts)


@dataclass(frozen=True)
class Rejoined:
    """A registration of a broker and the last time, within it, ZooKeeper put it back in a partition's
    ISR: how long it took to be a full replica again."""

    broker: int
    after_ms: int
    czxid: int
    last_zxid: int

    @property
    def ref(self) -> str:
        return txn_ref(self.last_zxid)


def _ms(a: datetime, b: datetime) -> int:
    return int((b - a).total_seconds() * 1000)


def restarts_in(lines: list[Line]) -> dict[int, list[Restart]]:
    """Each broker's restarts, oldest first, from its lines in its logs' order: a start ("starting" ...
    "started") with the stop just before it, if the lines hold one whole."""
    out: dict[int, list[Restart]] = {}
    state: dict[int, dict[str, Said]] = {}
    for line in lines:
        seen = state.setdefault(line.broker, {})
        if line.event in STOPPING:
            seen.setdefault("stopping", line.said)
        elif line.event == STOPPED and "stopping" in seen:
            seen["stopped"] = line.said
        elif line.event == STARTING:
            stop = {k: v for k, v in seen.items() if k in ("stopping", "stopped")}
            seen.clear()
            seen.update(stop, starting=line.said)
        elif line.event == STARTED and "starting" in seen:
            out.setdefault(line.broker, []).append(
                Restart(line.broker, seen.get("stopping"), seen.get("stopped"), seen["starting"], line.said)
            )
            seen.clear()
    return out


@fact
def restarts(bundle: Bundle) -> dict[int, list[Restart]]:
    """Each broker's restarts its lines show (`restarts_in`). One query."""
    rows = (
        bundle.cluster_events.where(F.col("event").isin(*STOPPING, STOPPED, STARTING, STARTED))
        .select("broker_id", "event", "ts", "file", "line_no")
        .orderBy("broker_id", "ts", "file", "line_no")
        .collect()  # a few lines per restart
    )
    return restarts_in([Line(r.broker_id, r.event, Said(r.ts, r.file, r.line_no)) for r in rows])


@fact
def rejoined(bundle: Bundle) -> dict[int, list[Rejoined]]:
    """Each broker's registrations with how long after it the last of the partitions whose ISR it had
    left was given it back (the first write of that partition's state with it in the ISR again, on
    ZooKeeper's clock). One query; empty without txn logs."""
    changes = views(bundle).partition_changes
    if changes is None:
        return {}
    regs = views(bundle).registrations.select(
        "broker_id", "czxid", F.col("registered").alias("since"), "ended_zxid"
    )
    during = F.col("ended_zxid").isNull() | (F.col("zxid") < F.col("ended_zxid"))
    back = F.array_contains("isr", F.col("broker_id")) & (F.col("zxid") > F.col("czxid")) & during
    per_partition = (
        changes.join(regs, F.array_contains("replicas", F.col("broker_id")))
        .groupBy("broker_id", "czxid", "since", "topic", "partition")
        .agg(
            F.max_by("isr", F.when(F.col("zxid") < F.col("czxid"), F.col("zxid"))).alias("isr_then"),
            F.min_by(F.struct("zxid", "time"), F.when(back, F.col("zxid"))).alias("back"),
        )
        # out of the ISR when it registered, and back in it during that registration
        .where(~F.array_contains("isr_then", F.col("broker_id")) & F.col("back.zxid").isNotNull())
    )
    rows = (
        per_partition.groupBy("broker_id", "czxid", "since")
        .agg(F.max_by("back", "back.zxid").alias("last"))
        .orderBy("broker_id", "czxid")
        .collect()  # one row per registration
    )
    out: dict[int, list[Rejoined]] = {}
    for r in rows:
        after = _ms(r.since, r.last.time)
        out.setdefault(r.broker_id, []).append(Rejoined(r.broker_id, after, r.czxid, r.last.zxid))
    return out
