"""Brokers that stood still and ran on in the same ZooKeeper session: a pause (a long GC, a stalled disk, a
frozen VM) shorter than the session timeout leaves no trace in ZooKeeper and moves no leadership, yet the
partitions the broker led had no working leader while it stood still.

Its ZooKeeper client tells it: as the process runs again, the client finds it has heard nothing for longer
than its read timeout, logs "Client session timed out, have not heard from server in <idle>ms", and
reconnects; the server, which had not yet expired the session, takes it back ("Session establishment
complete ..." for the same session). An idle time near the whole session timeout means the process stood
still (`behaviour.stood_still`); one of about the read timeout, that it ran on cut off from ZooKeeper,
which stops no leader. It stopped within a ping interval after it was last heard (`PING_EVERY_OF_TIMEOUT`)
and ran again at the time-out line.

A pause ZooKeeper's session did not survive is the same outage where nobody moved the leaderships: the
controller's broker stood still, and registered anew before the broker elected in its place read
/brokers/ids, which took it as live (`new_controller_takes_registrations_as_it_finds_them`): that new
controller's list of live brokers names it (`Paused.taken_back`), no leader was elected for what it led,
and only its own lines tell the outage.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from pyspark.sql import functions as F

from workbench.kafka import behaviour
from workbench.model.elections import elected_lines
from workbench.model.history.partitions import led_at
from workbench.model.refs import TP, Said
from workbench.model.session_ends import negotiated, session_timeout
from workbench.model.views import session_of
from workbench.together import answer

if TYPE_CHECKING:
    from workbench.frames import Bundle

CLIENT = ("zk.session_timed_out", "zk.session_established", "zk.session_expired")
ELECTED_WITHIN_S = 60  # a controller elected this long after the paused broker ran again is another story
LISTED_WITHIN_S = 60  # a new controller lists the live brokers this soon after its election line


@dataclass(frozen=True)
class Paused:
    """A broker that stood still and ran on in its session, on its own clock: last heard from ZooKeeper at
    `heard`, its time-out line (`said`: it ran again just before), its reconnection in the same session
    (`resumed`), the session and its timeout, and the partitions it led then (`led`, read from
    `led_from`). `taken_back`: its session expired instead (`resumed` is its client's line saying so) and
    the controller elected after it stood still listed it live at its start (that line)."""

    broker: int
    session: int
    heard: datetime
    said: Said
    resumed: Said
    timeout_ms: int
    led: list[TP]
    led_from: str
    taken_back: Said | None = None

    @property
    def bounds_ms(self) -> tuple[int, int]:
        """How long it stood still: from at most a ping interval after it was last heard to its time-out."""
        idle = round((self.said.ts - self.heard).total_seconds() * 1000)
        return max(0, idle - round(self.timeout_ms * behaviour.PING_EVERY_OF_TIMEOUT)), idle


def paused(bundle: Bundle, skews: dict[int, int], taken_back: bool = False) -> list[Paused]:
    """Each pause a broker's client logged and its session survived, with the partitions it led then: from
    ZooKeeper's partition states where its history is held (the broker's clock corrected by its skew where
    known), else from the last state the brokers' lines print before it; `taken_back`: also each whose
    session expired and whose broker the next controller took as live (`Paused.taken_back`). Two queries,
    the second only where a broker paused (a third where a session expired)."""
    rows = (
        bundle.cluster_events.where(F.col("event").isin(*CLIENT))
        .withColumn("session_id", session_of(F.col("attrs")["session"]))
        .where(F.col("session_id").isNotNull())
        .groupBy("broker_id", "session_id")
        .agg(
            F.sort_array(
                F.collect_list(
                    F.struct(
                        "ts",
                        "line_no",
                        "file",
                        "event",
                        F.col("attrs")["idle_ms"].cast("long").alias("idle_ms"),
                    )
                )
            ).alias("lines")
        )
        .join(negotiated(bundle), "session_id", "left")
        .collect()  # one row per session a client line names, with its few lines
    )
    found = []
    for r in rows:
        known = {r.session_id: (r.negotiated.ms, r.negotiated.told)} if r.negotiated is not None else {}
        timeout = session_timeout(bundle, r.broker_id, r.session_id, known)[0]
        if timeout is None:
            continue
        for out, after in zip(r.lines, r.lines[1:], strict=False):
            kept = after.event == "zk.session_established"
            if (
                out.event == "zk.session_timed_out"
                and (kept or (taken_back and after.event == "zk.session_expired"))
                and out.idle_ms is not None
                and behaviour.stood_still(out.idle_ms, timeout)
            ):
                heard = out.ts - timedelta(milliseconds=out.idle_ms)
                said, resumed = Said(out.ts, out.file, out.line_no), Said(after.ts, after.file, after.line_no)
                found.append((r.broker_id, r.session_id, heard, said, resumed, timeout, kept))
    listed = _listed_after(bundle, [(f[0], f[2], f[3].ts) for f in found if not f[6]])
    found = sorted((f for f in found if f[6] or (f[0], f[2]) in listed), key=lambda f: (f[2], f[0]))
    if not found:
        return []
    asked = [(i, f[0], f[2] - timedelta(milliseconds=skews.get(f[0], 0))) for i, f in enumerate(found)]
    led = answer(led_at(bundle, asked))
    return [Paused(*f[:6], *led[i], taken_back=listed.get((f[0], f[2]))) for i, f in enumerate(found)]


def _listed_after(
    bundle: Bundle, expired: list[tuple[int, datetime, datetime]]
) -> dict[tuple[int, datetime], Said]:
    """(broker, heard) -> the line of the first controller elected after `heard` (by its own clock, up to
    ELECTED_WITHIN after the broker ran again) listing the broker among the live ones as it started: it
    had registered anew before that controller read /brokers/ids. One query over the elections, where a
    session expired."""
    if not expired:
        return {}
    ev = bundle.cluster_events
    live = ev.where(F.col("event") == "controller.live_brokers").select(
        F.col("broker_id").alias("l_broker"),
        F.col("ts").alias("l_ts"),
        F.col("file").alias("l_file"),
        F.col("line_no").alias("l_line"),
        F.col("attrs")["brokers"].alias("brokers"),
    )
    within = F.expr(f"INTERVAL {LISTED_WITHIN_S} SECONDS")
    starts = (
        elected_lines(bundle)
        .join(
            live,
            (F.col("l_broker") == F.col("broker_id"))
            & F.col("l_ts").between(F.col("ts"), F.col("ts") + within),
        )
        .groupBy("broker_id", "ts")
        .agg(F.min_by(F.struct("brokers", "l_ts", "l_file", "l_line"), F.struct("l_ts", "l_line")).alias("l"))
        .collect()  # one row per election whose controller listed the live brokers
    )
    out = {}
    for broker, heard, ran in expired:
        after = [s for s in starts if heard <= s.ts <= ran + timedelta(seconds=ELECTED_WITHIN_S)]
        first = min(after, key=lambda s: s.ts, default=None)
        if first is not None and broker in {int(x) for x in re.findall(r"\d+", first.l.brokers or "")}:
            out[(broker, heard)] = Said(first.l.l_ts, first.l.l_file, first.l.l_line)
    return out
