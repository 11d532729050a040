"""How long each broker took to restart, as the evidence shows it: what a step of a rolling restart (the
repair plan's) can expect of that broker.

A broker's own lines time its stop and its start, on its own clock (behaviour
`broker_start_and_stop_lines`, 0.10-3.9): "shutting down", its controlled shutdown, "shut down
completed"; then "starting" ... "started", once it is registered and serving. The one history times its
return into the ISRs: from its registration again (`history.brokers.offline_windows`) to the first change
of each partition's ISR that gave it back a place it had left (`history.partitions.isr_changes`), the last
of those.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, NamedTuple

from pyspark.sql import Column, Window
from pyspark.sql import functions as F

from workbench.model.history.brokers import registrations
from workbench.model.history.partitions import isr_changes
from workbench.model.reads import fact
from workbench.model.refs import Said, file_ref, txn_ref

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
    """A broker registered again and the last change, within that registration, that put it back in a
    partition's ISR it had left: how long it took to be a full replica again. `since_zxid` and `last_zxid`
    are the txns where ZooKeeper's history tells them (None: the controller's line, or the line printing
    the ISR, told it, on its broker's clock); `ref` cites that last change."""

    broker: int
    after_ms: int
    since_zxid: int | None
    last_zxid: int | None
    ref: str

    @property
    def from_txns(self) -> bool:
        return self.since_zxid is not None and self.last_zxid is not None


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
    """Each broker's registrations (`history.brokers.registrations`), oldest first, with how long after
    it the last of the partitions whose ISR it had left (its last ISR change before the registration:
    'left') was given it back (its first 'joined' after it, before its next registration). In zxid order
    where the history's txns tell both, else by the lines' times. One query, a row per registration."""
    w = Window.partitionBy("broker").orderBy("at", "zxid")
    lives = registrations(bundle).select(
        "broker",
        F.col("at").alias("up"),
        F.col("zxid").alias("up_zxid"),
        F.lead(F.struct("at", "zxid")).over(w).alias("next"),
    )
    back = lives.alias("r")
    c = isr_changes(bundle).alias("c")
    order = F.struct("c.zxid", "c.time", "c.file", "c.line_no")
    before = _before(F.col("c.zxid"), F.col("c.time"), F.col("r.up_zxid"), F.col("r.up"))
    within = F.col("r.next").isNull() | _before(
        F.col("c.zxid"), F.col("c.time"), F.col("r.next.zxid"), F.col("r.next.at")
    )
    joined = (F.col("c.change") == "joined") & ~before & within
    per_partition = (
        back.join(c, F.col("c.broker") == F.col("r.broker"))
        .groupBy("r.broker", "r.up", "r.up_zxid", "c.topic", "c.partition")
        .agg(
            F.max_by("c.change", F.when(before, order)).alias("then"),
            F.min_by(F.struct("c.time", "c.zxid", "c.file", "c.line_no"), F.when(joined, order)).alias(
                "in_again"
            ),
        )
        .where((F.col("then") == "left") & F.col("in_again").isNotNull())
    )
    found = (
        per_partition.groupBy("broker", "up", "up_zxid")
        .agg(F.max_by("in_again", F.struct("in_again.zxid", "in_again.time")).alias("last"))
        .orderBy("broker", "up")
        .collect()  # one row per registration
    )
    out: dict[int, list[Rejoined]] = {}
    for r in found:
        last = r.last
        ref = txn_ref(last.zxid) if last.zxid is not None else file_ref(last.file, last.line_no)
        out.setdefault(r.broker, []).append(
            Rejoined(r.broker, _ms(r.up, last.time), r.up_zxid, last.zxid, ref)
        )
    return out


def _before(zxid: Column, time: Column, than_zxid: Column, than: Column) -> Column:
    """Whether a moment comes before another: by zxid where both are txns, else by time."""
    return F.when(zxid.isNotNull() & than_zxid.isNotNull(), zxid < than_zxid).otherwise(time < than)
