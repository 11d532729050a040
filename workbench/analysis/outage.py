"""How long a failover really left the cluster without a working controller: from the old controller's last
sign of life to the new controller's "Ready to serve", not the few milliseconds between ZooKeeper's
session close and the next election.

A controller that crashes, hangs (a long GC pause, a stalled disk) or loses its network keeps its
ZooKeeper session until the session timeout runs out; it did no controller work from the moment it went
silent. ZooKeeper's expiry bounds that moment (`behaviour.went_silent`), on ZooKeeper's clock. The old
controller's own last log line and its session's last write before the end are its last signs of life:
the outage is at most from there. The end is the election txn plus the new controller's own election ->
"Ready to serve" time (one clock). A shutdown or a hand-deleted `/controller` ends the old controller at
the session's close, so the outage is the gap plus the new controller's start.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from pyspark.sql import functions as F

from workbench.analysis.cluster import views
from workbench.analysis.findings import file_ref, txn_ref
from workbench.kafka import behaviour

if TYPE_CHECKING:
    from workbench.frames import Bundle

# Causes after which the old controller may have stopped working before ZooKeeper noticed.
SILENT_CAUSES = ("crash", "session_expiry", "unknown")


@dataclass(frozen=True)
class Failover:
    """What the outage of one failover is read from (ZooKeeper's clock unless said)."""

    epoch: int
    old: int  # the old controller's broker id
    session: int | None  # its ZooKeeper session
    gone_zxid: int
    gone: datetime  # its session's close (or /controller's delete)
    cause: str
    elected: datetime  # the new controller's election txn
    ready_ms: int | None  # the new controller's own election -> "Ready to serve"


@dataclass(frozen=True)
class Outage:
    lower_ms: int
    upper_ms: int
    last_sign: datetime | None  # the old controller's last sign of life (ZooKeeper's clock)
    last_sign_is: str  # what it was
    timeout_ms: int | None
    timeout_from: str
    refs: tuple[str, ...]

    def headline(self) -> str:
        span = _span(self.lower_ms) if self.lower_ms == self.upper_ms else (
            f"{_span(self.lower_ms)} to {_span(self.upper_ms)}"
        )  # fmt: skip
        return f"leaving the cluster without a working controller for {span}"

    def detail(self) -> str:
        said = []
        if self.last_sign is not None:
            said.append(f"its last sign of life was {self.last_sign_is} at {self.last_sign:%H:%M:%S.%f}"[:-3])
        if self.timeout_ms is not None:
            said.append(f"its ZooKeeper session timeout was {self.timeout_ms} ms ({self.timeout_from})")
        return "; ".join(said)


def _span(ms: int) -> str:
    return f"{ms} ms" if ms < 1000 else f"{ms / 1000:.1f} s"


def outages(bundle: Bundle, failovers: list[Failover], skews: dict[int, int]) -> dict[int, Outage]:
    """Epoch -> the outage of each failover; `skews`: broker -> its clock minus ZooKeeper's (ms), where
    known (timeline.skew). A failover whose end is not known (no 'Ready to serve') counts to its election."""
    if not failovers:
        return {}
    timeouts = _timeouts(bundle, [f.session for f in failovers if f.session is not None])
    lines = _last_lines(bundle, failovers, skews)
    writes = _last_writes(bundle, failovers)
    out = {}
    for f in failovers:
        end = f.elected + timedelta(milliseconds=f.ready_ms or 0)
        timeout, source = _timeout(bundle, f, timeouts)
        signs = [s for s in (lines.get(f.epoch), writes.get(f.epoch)) if s is not None]
        last = max(signs, key=lambda s: s[0]) if signs else None
        lower = upper = _ms(end - f.gone)
        if f.cause in SILENT_CAUSES and timeout is not None:
            earliest, latest = behaviour.went_silent(_epoch_ms(f.gone), timeout)
            if last is not None:
                earliest = max(earliest, min(_epoch_ms(last[0]), latest))
            upper = _epoch_ms(end) - earliest
            if f.cause != "unknown":  # no log says a crash or an expiry: it may have been a clean close
                lower = _epoch_ms(end) - latest
        elif f.cause in SILENT_CAUSES and last is not None:
            upper = max(upper, _ms(end - last[0]))
        refs = (last[2],) if last is not None else ()
        if f.cause not in SILENT_CAUSES:  # it ended when its session closed: the timeout played no part
            timeout, source = None, ""
        out[f.epoch] = Outage(
            lower, upper, last[0] if last else None, last[1] if last else "", timeout, source, refs
        )
    return out


def _ms(d: timedelta) -> int:
    return round(d.total_seconds() * 1000)


def _epoch_ms(t: datetime) -> int:
    return round(t.timestamp() * 1000)


def _timeout(bundle: Bundle, f: Failover, known: dict[int, int]) -> tuple[int | None, str]:
    """The old controller's session timeout: as ZooKeeper negotiated it (its createSession), else what
    the broker asked for (server.properties, else Kafka's default for the version)."""
    if f.session is not None and f.session in known:
        return known[f.session], "negotiated, ZooKeeper's createSession"
    ev = views(bundle).evidence
    asked = ev.configs.get(f.old, {}).get("zookeeper.session.timeout.ms")
    if asked is not None and asked.strip().isdigit():
        return int(asked), f"asked for in broker {f.old}'s server.properties"
    default = behaviour.zk_session_timeout_default_ms(ev.kafka_version)
    return (default, f"Kafka {ev.kafka_version}'s default") if default is not None else (None, "")


def _timeouts(bundle: Bundle, sessions: list[int]) -> dict[int, int]:
    rows = (
        views(bundle)
        .history.where((F.col("op") == "createSession") & F.col("session_id").isin(sessions))
        .select("session_id", "session_timeout")
        .collect()  # one row per session asked for
    )
    return {r.session_id: r.session_timeout for r in rows if r.session_timeout is not None}


def _last_lines(bundle: Bundle, failovers: list[Failover], skews: dict[int, int]) -> dict[int, Any]:
    """Epoch -> (time on ZooKeeper's clock, what, ref) of the old controller's last log line before its
    session ended. Its clock is corrected by its skew where known."""
    spark = bundle.spark
    wanted = spark.createDataFrame(
        [(f.epoch, f.old, f.gone, skews.get(f.old, 0)) for f in failovers],
        "epoch int, broker_id int, gone timestamp, skew_ms long",
    )
    ev = bundle.cluster_events.select("broker_id", "ts", "file", "line_no", "event")
    at_zk = F.timestamp_millis(F.unix_millis("ts") - F.col("skew_ms"))
    rows = (
        ev.join(F.broadcast(wanted), "broker_id")
        .withColumn("zk_ts", at_zk)
        .where(F.col("zk_ts") <= F.col("gone"))
        .groupBy("epoch")
        .agg(F.max_by(F.struct("zk_ts", "file", "line_no", "event"), "zk_ts").alias("last"))
        .collect()  # one row per failover
    )
    clock = {
        f.epoch: "" if f.old in skews else ", on its own clock (its skew is not known)" for f in failovers
    }
    return {
        r.epoch: (
            r.last.zk_ts,
            f"its last log line ({r.last.event}{clock[r.epoch]})",
            file_ref(r.last.file, r.last.line_no),
        )
        for r in rows
    }


def _last_writes(bundle: Bundle, failovers: list[Failover]) -> dict[int, Any]:
    """Epoch -> (time, what, ref) of the old controller's session's last write before it ended."""
    by_session = {f.session: f for f in failovers if f.session is not None}
    if not by_session:
        return {}
    rows = (
        views(bundle)
        .history.where(F.col("session_id").isin(list(by_session)) & (F.col("op") != "closeSession"))
        .groupBy("session_id")
        .agg(F.max_by(F.struct("zxid", "time"), "zxid").alias("w"))
        .collect()  # one row per session
    )
    out = {}
    for r in rows:
        f = by_session[r.session_id]
        if r.w.zxid < f.gone_zxid:
            out[f.epoch] = (
                r.w.time,
                f"its session's last ZooKeeper write (zxid {r.w.zxid:#x})",
                txn_ref(r.w.zxid),
            )
    return out
