"""How long a failover really left the cluster without a working controller: from the old controller's last
sign of life to the new controller's "Ready to serve", not the few milliseconds between ZooKeeper's
session close and the next election.

A controller that crashes, hangs (a long GC pause, a stalled disk) or loses its network keeps its
ZooKeeper session until the session timeout runs out; it did no controller work from the moment it went
silent. ZooKeeper's expiry bounds that moment (`behaviour.went_silent`), on ZooKeeper's clock. The old
controller's own last log line and its session's last write before the end are its last signs of life:
the outage is at most from there. The end is the election txn plus the new controller's own election ->
"Ready to serve" time (one clock). Its ZooKeeper client's time-out line says when it last heard from
ZooKeeper: it stopped within a ping interval after, and what it logged from then to that line it wrote
when it ran again, or while cut off, so none of it is a sign of life (`session_ends.signs_of_life`: a
process that wakes just before ZooKeeper expires its session logs them before the end). Cut off from
ZooKeeper (a network partition) a broker logs on without doing a controller's work, so its log lines are
then no sign of life. A shutdown or a hand-deleted `/controller` ends the old
controller at the session's close, so the outage is the gap plus the new controller's start.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from functools import partial
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from pyspark.sql import DataFrame, Row
from pyspark.sql import functions as F

from workbench.kafka import behaviour
from workbench.model.channel import LOOKBACK_S, SENDS
from workbench.model.refs import file_ref, txn_ref
from workbench.model.session_ends import (
    HALTED,
    SILENT_ENDINGS,
    Heard,
    ended_registrations,
    last_heard,
    negotiated_timeouts,
    session_timeout,
    signs_of_life,
)
from workbench.model.skew import skew_col, skew_ms
from workbench.model.views import views
from workbench.together import Ask, answer, given, together

if TYPE_CHECKING:
    from workbench.frames import Bundle

# Causes after which the old controller may have stopped working before ZooKeeper noticed.
SILENT_CAUSES = (*SILENT_ENDINGS, "unknown")


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
    # its client was still heard after last_sign: ZooKeeper expires a session `timeout` after it last
    # heard from it, so the session's pings are a later sign of life than a line this old
    pinged_after: bool = False
    # the lines alone: when ZooKeeper expired the session is not in them, so what that expiry let happen
    # stands for it (the election of a new controller, the controller's handling of a broker's failure, on
    # its clock), which came after it by as long as the brokers took to learn of it: what that was and when
    expiry_said: str = ""
    # the controller's first failed send to it after its last sign of life (ZooKeeper's clock where the
    # controller's skew is known): it was gone by then
    unreachable: datetime | None = None

    def headline(self) -> str:
        lower, upper = _span(self.lower_ms), _span(self.upper_ms)
        span = lower if lower == upper else f"{lower} to {upper}"
        return f"leaving the cluster without a working controller for {span}"

    def detail(self) -> str:
        said = []
        if self.last_sign is not None:
            at = f"{self.last_sign:%H:%M:%S.%f}"[:-3]
            # its client's pings came later than a line this old: that line was not its last sign of life
            said.append(
                f"{self.last_sign_is} was at {at}"
                if self.pinged_after
                else f"its last sign of life was {self.last_sign_is} at {at}"
            )
        if self.timeout_ms is not None:
            heard = (
                f", so its client was still heard after that, until about {_span(self.timeout_ms)} "
                "before the expiry"
                if self.pinged_after
                else ""
            )
            said.append(
                f"its ZooKeeper session timeout was {self.timeout_ms} ms ({self.timeout_from}){heard}"
            )
        if self.unreachable is not None:
            at = f"{self.unreachable:%H:%M:%S.%f}"[:-3]
            said.append(f"it was already unreachable at {at} (the controller's first failed send to it)")
        if self.expiry_said:
            said.append(
                "the lines do not show when ZooKeeper expired its session, so the timeout is counted back "
                f"from {self.expiry_said} (the longest may be that much longer)"
            )
        return "; ".join(said)


def _span(ms: int) -> str:
    if ms >= 2 * 3_600_000:
        return f"{ms / 3_600_000:.1f} h"
    if ms >= 120_000:
        return f"{ms / 60_000:.1f} min"
    return f"{ms} ms" if ms < 1000 else f"{ms / 1000:.1f} s"


class Silence(NamedTuple):
    """When a broker whose session expired went silent (ms since the epoch), and whether its client was
    still heard after its last sign of life."""

    earliest: int
    latest: int
    pinged_after: bool


def silence(
    expired_ms: int, timeout_ms: int, heard_ms: int | None, last_ms: int | None, sent_ms: int | None
) -> Silence:
    """When a broker went silent: within `behaviour.went_silent` of its session's expiry (`expired_ms`, or
    what stands for it), not after the controller's first failed send to it after its last sign of life
    (`sent_ms`, `behaviour.failed_send_means_unreachable`: proof it was gone, where the expiry's bounds
    are an inference), and not before its last
    sign of life (`last_ms`). The one reckoning of a silent broker's outage, with ZooKeeper's history and
    from the lines alone."""
    earliest, latest = behaviour.went_silent(expired_ms, timeout_ms, heard_ms=heard_ms)
    if sent_ms is not None:
        latest = min(latest, sent_ms)
        earliest = min(earliest, latest)
    pinged_after = False
    if last_ms is not None:
        pinged_after = last_ms < earliest
        earliest = max(earliest, min(last_ms, latest))
    return Silence(earliest, latest, pinged_after)


def outages(bundle: Bundle, failovers: list[Failover], skews: dict[int, int]) -> dict[int, Outage]:
    """Epoch -> the outage of each failover; `skews`: broker -> its clock minus ZooKeeper's (ms), where
    known (model.skew). A failover whose end is not known (no 'Ready to serve') counts to its election."""
    if not failovers:
        return {}
    negotiated = negotiated_timeouts(bundle, [f.session for f in failovers if f.session is not None])
    last_heard, last_writes = _last_heard(bundle, failovers, skews), _last_writes(bundle, failovers)
    last_lines = _last_lines(bundle, failovers, skews, last_heard.frame)
    lookback = timedelta(seconds=LOOKBACK_S)
    failed_sends = _failed_sends(
        bundle, [(f.epoch, f.old, f.gone - lookback, f.gone) for f in failovers], skews
    )
    got = together(negotiated, last_heard, last_writes, last_lines, failed_sends)
    timeouts, heard, writes, lines = got[negotiated], got[last_heard], got[last_writes], got[last_lines]
    lasts = {}
    for f in failovers:
        # cut off from ZooKeeper, a broker logs on without doing a controller's work
        line = None if f.cause == "network_partition" else lines.get(f.epoch)
        signs = [s for s in (line, writes.get(f.epoch), heard.get(f.epoch)) if s is not None]
        lasts[f.epoch] = max(signs, key=lambda s: s[0]) if signs else None
    # a send that failed before its last sign of life says nothing (it lived after): the first after it,
    # asked again only where the first in the lookback came before it
    sends = got[failed_sends]
    again = [
        (f.epoch, f.old, last[0], f.gone)
        for f in failovers
        if (last := lasts[f.epoch]) is not None and f.epoch in sends and sends[f.epoch][0] <= last[0]
    ]
    if again:
        sends = {**sends, **{e: None for e, *_ in again}, **answer(_failed_sends(bundle, again, skews))}
    out = {}
    for f in failovers:
        end = f.elected + timedelta(milliseconds=f.ready_ms or 0)
        timeout, source = session_timeout(bundle, f.old, f.session, timeouts)
        last, sent = lasts[f.epoch], sends.get(f.epoch)
        lower = upper = ms(end - f.gone)
        pinged_after = False
        if f.cause == HALTED and last is not None:  # it stopped at its last line, its halt
            lower = upper = ms(end - last[0])
        elif f.cause in SILENT_CAUSES and timeout is not None:
            silent_from = silence(
                epoch_ms(f.gone),
                timeout,
                epoch_ms(heard[f.epoch][0]) if f.epoch in heard else None,
                epoch_ms(last[0]) if last is not None else None,
                epoch_ms(sent[0]) if sent is not None else None,
            )
            pinged_after = silent_from.pinged_after
            upper = epoch_ms(end) - silent_from.earliest
            if f.cause != "unknown":  # no log says a crash or an expiry: it may have been a clean close
                lower = epoch_ms(end) - silent_from.latest
        elif f.cause in SILENT_CAUSES and last is not None:
            upper = max(upper, ms(end - last[0]))
        if f.cause not in SILENT_CAUSES or f.cause == HALTED or timeout is None:
            sent = None  # it bounds only the silence the expiry bounds
        refs = tuple(x[2] for x in (last, sent) if x is not None)
        if f.cause not in SILENT_CAUSES:  # it ended when its session closed: the timeout played no part
            timeout, source = None, ""
        out[f.epoch] = Outage(
            lower,
            upper,
            last[0] if last else None,
            last[1] if last else "",
            timeout,
            source,
            refs,
            pinged_after,
            unreachable=sent[0] if sent is not None else None,
        )
    return out


def ms(d: timedelta) -> int:
    return round(d.total_seconds() * 1000)


def epoch_ms(t: datetime) -> int:
    return round(t.timestamp() * 1000)


def _last_lines(
    bundle: Bundle, failovers: list[Failover], skews: dict[int, int], heard: DataFrame | None
) -> Ask[dict[int, Any]]:
    """Epoch -> (time on ZooKeeper's clock, what, ref) of the old controller's last log line that shows it
    at work (`signs_of_life`) before its session ended, and before its client last heard from ZooKeeper
    (`heard`: `session_ends.last_heard`'s rows, where its time-out line tells it, read as `_heard` reads
    them): what it logged after, it logged when it ran again or cut off. Its clock is corrected by its skew
    where known. Asked with `heard`, not after it."""
    wanted = bundle.spark.createDataFrame(
        [(f.epoch, f.old, f.session, f.gone, skews.get(f.old, 0)) for f in failovers],
        "epoch int, broker_id int, session_id long, gone timestamp, skew_ms long",
    )
    gone = F.col("gone")
    if heard is not None:  # its first time-out line after it last (re)connected, as `_heard` takes it
        after = F.get(
            F.filter("outs", lambda o: F.col("connected").isNull() | (o["ts"] > F.col("connected"))), 0
        )
        told = heard.select("broker_id", "session_id", after.alias("t")).where(F.col("t.idle_ms").isNotNull())
        wanted = wanted.join(told, ["broker_id", "session_id"], "left")
        last_heard = F.unix_millis("t.ts") - F.col("t.idle_ms") - F.col("skew_ms")
        gone = F.least(gone, F.timestamp_millis(last_heard))  # least skips a null: no line tells it
    ev = signs_of_life(bundle.cluster_events).select("broker_id", "ts", "file", "line_no", "event")
    at_zk = F.timestamp_millis(F.unix_millis("ts") - F.col("skew_ms"))
    rows = (
        ev.join(wanted.select("epoch", "broker_id", "skew_ms", gone.alias("gone")), "broker_id")
        .withColumn("zk_ts", at_zk)
        .where(F.col("zk_ts") <= F.col("gone"))
        .groupBy("epoch")
        .agg(
            F.max_by(
                F.struct("zk_ts", "file", "line_no", "event"), F.struct("zk_ts", "file", "line_no")
            ).alias("last")
        )  # one row per failover
    )
    clock = {
        f.epoch: "" if f.old in skews else ", on its own clock (its skew is not known)" for f in failovers
    }
    return Ask(
        rows,
        lambda rs: {
            r.epoch: (
                r.last.zk_ts,
                f"its last log line ({r.last.event}{clock[r.epoch]})",
                file_ref(r.last.file, r.last.line_no),
            )
            for r in rs
        },
    )


def _failed_sends(
    bundle: Bundle, asked: list[tuple[int, int, datetime, datetime]], skews: dict[int, int]
) -> Ask[dict[int, Any]]:
    """Epoch -> (time on ZooKeeper's clock, what, ref) of a controller's first failed send to the broker gone
    (`channel.SENDS`) after `after` and by its session's end, for each (epoch, broker, after, gone) asked;
    the sender's clock corrected by its skew where known."""
    if not asked:
        return given({})
    wanted = bundle.spark.createDataFrame(asked, "epoch int, broker int, after timestamp, gone timestamp")
    skew = F.coalesce(skew_col(skews), F.lit(0))  # the sender's; its own clock where not known
    sends = bundle.cluster_events.where(F.col("event").isin(*SENDS)).select(
        F.regexp_extract(F.col("attrs")["broker_node"], r"\(id: (-?\d+)", 1).cast("int").alias("broker"),
        F.timestamp_millis(F.unix_millis("ts") - skew).alias("zk_ts"),
        "file",
        "line_no",
    )
    rows = (
        sends.join(F.broadcast(wanted), "broker")
        .where((F.col("zk_ts") <= F.col("gone")) & (F.col("zk_ts") > F.col("after")))
        .groupBy("epoch")
        .agg(F.min(F.struct("zk_ts", "file", "line_no")).alias("first"))  # one row per failover
    )
    return Ask(
        rows,
        lambda rs: {
            r.epoch: (r.first.zk_ts, "its first failed send", file_ref(r.first.file, r.first.line_no))
            for r in rs
        },
    )


def _last_heard(bundle: Bundle, failovers: list[Failover], skews: dict[int, int]) -> Ask[dict[int, Any]]:
    """Epoch -> (time, what, ref): when the old controller's ZooKeeper client last heard from its server
    (`session_ends.last_heard`)."""
    by_session = {f.session: f for f in failovers if f.session is not None}
    heard = last_heard(bundle, {s: f.old for s, f in by_session.items()}, skews)

    def said(h: Heard) -> str:
        clock = "" if h.aligned else ", on its own clock (its skew is not known)"
        return (
            f"when its ZooKeeper client last heard from ZooKeeper ({h.idle_ms} ms before its time-out{clock})"
        )

    return Ask(
        heard.frame,
        lambda rows: {by_session[s].epoch: (h.at, said(h), h.ref) for s, h in heard.read(rows).items()},
    )


def _last_writes(bundle: Bundle, failovers: list[Failover]) -> Ask[dict[int, Any]]:
    """Epoch -> (time, what, ref) of the old controller's session's last write before it ended."""
    by_session = {f.session: f for f in failovers if f.session is not None}
    if not by_session:
        return given({})
    rows = (
        views(bundle)
        .history.where(F.col("session_id").isin(list(by_session)) & (F.col("op") != "closeSession"))
        .groupBy("session_id")
        .agg(F.max_by(F.struct("zxid", "time"), "zxid").alias("w"))  # one row per session
    )
    return Ask(rows, partial(_written, by_session))


def _written(by_session: dict[int, Failover], rows: list[Row]) -> dict[int, Any]:
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


class Lost(Protocol):
    """Partitions that lost their leader at `began_zxid` (`began`; None: not a txn), offline for up to
    `longest_ms`."""

    @property
    def leader(self) -> int | None: ...
    @property
    def began_zxid(self) -> int | None: ...
    @property
    def began(self) -> datetime: ...
    @property
    def longest_ms(self) -> int: ...


def silent_leaders(bundle: Bundle, groups: Sequence[Lost]) -> dict[int, tuple[Outage, str]]:
    """began_zxid -> (the outage from the leader's last sign of life to the group's longest episode's
    end, how its session ended), for the groups whose leader's registration ended at began_zxid and whose
    session ended without a shutdown (the leaderless analysis's offline groups): its registration's
    outage (`registration_outages`) carried on to that end."""
    if not groups:
        return {}
    ended = {(r.broker_id, r.ended_zxid): r for r in ended_registrations(bundle)}
    bounded = registration_outages(bundle)
    out = {}
    for g in groups:
        if g.leader is None or g.began_zxid is None:
            continue
        r = ended.get((g.leader, g.began_zxid))
        if r is None or r.session_id not in bounded:
            continue
        said = "gone" if r.how == "crash" and r.told is None else r.how
        later = ms(g.began + timedelta(milliseconds=g.longest_ms) - r.ended)
        o = bounded[r.session_id]
        out[g.began_zxid] = (replace(o, lower_ms=o.lower_ms + later, upper_ms=o.upper_ms + later), said)
    return out


def registration_outages(bundle: Bundle) -> dict[int, Outage]:
    """Session -> the outage of each registration ZooKeeper's history saw end without a shutdown, from
    its broker's last sign of life to the registration's end (`outages`, one query): what the service
    timeline (`acting.silent_leaders`) and the leaderless findings read, so that both say one number.
    Made once per bundle."""

    def made() -> dict[int, Outage]:
        regs = [r for r in ended_registrations(bundle) if r.how in SILENT_CAUSES]
        gone = [
            Failover(i, r.broker_id, r.session_id, r.ended_zxid, r.ended, r.how, r.ended, 0)
            for i, r in enumerate(regs)
        ]
        return {regs[i].session_id: o for i, o in outages(bundle, gone, skew_ms(bundle)).items()}

    return views(bundle).memo("registration_outages", made)
