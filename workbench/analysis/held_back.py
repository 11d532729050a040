"""Producers held back by a follower: a replica in the ISR that stopped keeping up holds its partition's
high watermark, and a produce request with acks=all is answered only once the high watermark passes its
records (`acks_all_answered_at_the_high_watermark`); a request still waiting at its timeout, the producer's
request.timeout.ms (30 s by default), is answered REQUEST_TIMED_OUT and retried
(`produce_request_times_out`). The leader's 'Shrinking ISR' line, as it drops the replica, prints the high
watermark at the replica's end offset, short of its own (`model.isr.held_high_watermarks`), and from 3.6
when the replica last caught up, so how long those producers waited.

In two halves: `facts` asks Spark (one query, per follower), `judge` words the findings in plain Python.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from pyspark.sql import Row
from pyspark.sql import functions as F

from workbench.analysis.contract import WARNING, Analysis, Kind, Need
from workbench.analysis.findings import TP, Coverage, Finding, bounds, duration, file_ref, tp_list
from workbench.kafka import behaviour
from workbench.kafka.behaviour import PRODUCER_REQUEST_TIMEOUT_MS
from workbench.model.isr import held_high_watermarks
from workbench.model.views import views
from workbench.together import Ask, answer

if TYPE_CHECKING:
    from workbench.frames import Bundle

SHOWN = 12  # partitions named per follower


@dataclass(frozen=True)
class HeldBy:
    """One follower's drops from the ISR while it held its partitions' high watermark."""

    broker: int
    times: int
    partitions: int
    tps: list[TP]  # the first SHOWN, by name
    leaders: list[int]
    records: int  # the most records one drop found waiting beyond the high watermark
    waited: tuple[int, int] | None  # the shortest and longest wait the lines print (3.6+), ms
    timed: int  # drops whose line prints the wait
    past: int  # of them, waits longer than the producers' default request.timeout.ms
    first: datetime
    last: datetime
    refs: list[str]  # the first lines


@dataclass(frozen=True)
class Facts:
    held: list[HeldBy]
    version: str | None
    lag_ms: int | None  # replica.lag.time.max.ms where the brokers agree, else the version's default


def facts(bundle: Bundle) -> Facts:
    """Per follower, its drops that held a high watermark (one query)."""
    ev = views(bundle).evidence
    default = behaviour.replica_lag_time_max_default_ms(ev.kafka_version)
    lag = ev.agreed("replica.lag.time.max.ms", str(default))
    h = held_high_watermarks(bundle)
    waited = F.col("waited_ms")
    per = (
        h.groupBy("broker")
        .agg(
            F.count("*").alias("times"),
            F.count_distinct("topic", "partition").alias("partitions"),
            F.slice(F.array_sort(F.collect_set(F.struct("topic", "partition"))), 1, SHOWN).alias("tps"),
            F.array_sort(F.collect_set("leader")).alias("leaders"),
            F.max("records").alias("records"),
            F.min(waited).alias("shortest"),
            F.max(waited).alias("longest"),
            F.count(waited).alias("timed"),
            F.count_if(waited > PRODUCER_REQUEST_TIMEOUT_MS).alias("past"),
            F.min("ts").alias("first"),
            F.max("ts").alias("last"),
            F.slice(F.array_sort(F.collect_list(F.struct("ts", "file", "line_no"))), 1, 3).alias("lines"),
        )
        .orderBy("broker")
    )
    got = answer(Ask(per, lambda rs: [_held_by(r) for r in rs]))
    return Facts(got, ev.kafka_version, int(lag) if lag.isdigit() else None)


def _held_by(r: Row) -> HeldBy:
    return HeldBy(
        r.broker,
        r.times,
        r.partitions,
        [TP(t.topic, t.partition) for t in r.tps],
        list(r.leaders),
        r.records,
        None if r.shortest is None else (r.shortest, r.longest),
        r.timed,
        r.past,
        r.first,
        r.last,
        [file_ref(x.file, x.line_no) for x in r.lines],
    )


def judge(f: Facts, coverage: Coverage) -> list[Finding]:
    """A warning per follower that held its partitions' high watermark until it was dropped: what
    acks=all producers waited for, and how long where the lines print it."""
    return [_finding(f, h) for h in f.held]


def _finding(f: Facts, h: HeldBy) -> Finding:
    clocks = (
        f"leader {h.leaders[0]}'s clock"
        if len(h.leaders) == 1
        else f"the clocks of leaders {', '.join(map(str, h.leaders))}"
    )
    when = (
        f"once, at {h.first:%Y-%m-%d %H:%M:%S} ({clocks}): its leader's"
        if h.times == 1
        else f"{h.times} times, between {h.first:%Y-%m-%d %H:%M:%S} and {h.last:%H:%M:%S} ({clocks}): each "
        "time its leader's"
    )
    text = (
        f"Broker {h.broker}'s replica held the high watermark of {h.partitions} partition(s) "
        f"({tp_list(h.tps)}) {when} high watermark stood at its end offset, "
        f"{'up to ' if h.times > 1 else ''}{h.records} record(s) short of the leader's own, until the leader "
        "dropped it from the ISR. Producers with acks=all are answered only once the high watermark passes "
        "their records, so theirs waited "
    )
    subject: dict[str, object] = {"broker": h.broker, "partitions": h.partitions, "times": h.times}
    timeout = duration(PRODUCER_REQUEST_TIMEOUT_MS)
    if h.waited is not None:
        shortest, longest = h.waited
        subject["waited_ms"] = [shortest, longest]
        each = " each time" if h.times > 1 else ""
        text += f"up to {bounds(shortest, longest)}{each} (the line's time less the replica's "
        text += "lastCaughtUpTimeMs)"
        if h.timed < h.times:
            text += f" where the line says it ({h.timed} of {h.times})"
        text += (
            f"; {h.past} of those waits ran past the producers' default request.timeout.ms ({timeout}), "
            "where requests failed with REQUEST_TIMED_OUT and were retried"
            if h.past
            else f"; none ran past the producers' default request.timeout.ms ({timeout})"
        )
    else:
        lag = f" ({f.lag_ms} ms)" if f.lag_ms else ""
        text += (
            f"for up to as long as it had been behind, more than replica.lag.time.max.ms{lag} at "
            f"{'each drop' if h.times > 1 else 'the drop'} "
            f"({f'Kafka {f.version}' if f.version else 'this version'}'s line does not say how much more; "
            "from 3.6 it prints "
            "lastCaughtUpTimeMs); "
        )
        text += (
            f"that is past the producers' default request.timeout.ms ({timeout}), so requests failed with "
            "REQUEST_TIMED_OUT and were retried unless it is set higher"
            if f.lag_ms is not None and f.lag_ms >= PRODUCER_REQUEST_TIMEOUT_MS
            else f"a request still waiting at its request.timeout.ms ({timeout} by default) failed with "
            "REQUEST_TIMED_OUT and was retried"
        )
    text += ". Producers with acks=0 or 1 were not held."
    return Finding("isr.high_watermark_held", WARNING, subject, text, tuple(h.refs))


ANALYSIS = Analysis(
    "held_back",
    needs={Need.LOGS: "the leaders' 'Shrinking ISR' lines"},
    facts=facts,
    judge=judge,
    reads=("held_high_watermarks",),
    kinds=(
        Kind(
            "isr.high_watermark_held",
            (WARNING,),
            {"broker": int, "partitions": int, "times": int},
            {"waited_ms": list},
            key=("broker",),
        ),
    ),
)
findings = ANALYSIS.findings
