"""Brokers the controller could not reach, as its own lines tell it (ControllerChannelManager, 2.5.1-3.6.2).

The controller sends its requests (LeaderAndIsr, UpdateMetadata, StopReplica) to each live broker from one
RequestSendThread per broker; a failed connection is logged and retried ("Controller 1's connection to
broker b:9092 (id: 3 rack: null) was unsuccessful", ControllerChannelManager.scala 2.8.2:301; "fails to send
request ...", 258 and 283). A broker that died is reached in vain until its session expires and the
controller handles its failure ("Broker failure callback for 3"); failures that no such line follows are a
registered broker the controller could not reach. The channel to a broker is made from its endpoint for the
controller's listener (ControllerChannelManager.addNewBroker 2.8.2:115-117): a broker registered without one
fails the controller's event ("Error processing event BrokerChange...", KafkaController.process 2.8.2:2477)
with "End point with listener name L not found for broker N" (Broker.node, cluster/Broker.scala 2.8.2:89).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from pyspark.sql import functions as F

from workbench.kafka import printed
from workbench.model.refs import Said
from workbench.model.session_ends import halted, signs_of_life, unheard
from workbench.model.views import views
from workbench.together import Ask, given

if TYPE_CHECKING:
    from workbench.frames import Bundle

SENDS = ("controller.broker_unreachable", "controller.send_failed")
# A send that fails a little after the controller handled the broker's failure is still that failure's
# (its RequestSendThread stops once the broker is removed); one long before it is not.
AFTER_FAILURE_S, BEFORE_FAILURE_S = 5, 60
_NO_ENDPOINT = r"End point with listener name (\S+) not found for broker (\d+)"


@dataclass(frozen=True)
class Unreachable:
    """A registered broker the controller failed to send to, from its first failed send to its last, with
    no failure of that broker handled after: the controller (its broker) and how many lines said so."""

    controller: int | None
    broker: int
    first: Said
    last: Said
    failures: int


@dataclass(frozen=True)
class NoEndpoint:
    """A broker registered without an endpoint for the controller's listener: the controller's events that
    failed on it, the first and last, and the event first failed."""

    broker: int
    listener: str
    controller: int | None
    first: Said
    last: Said
    failures: int
    event: str


def unreachable(bundle: Bundle, limit: int) -> Ask[list[Unreachable]]:
    """The first `limit` brokers the controllers could not reach while they stayed registered. One query;
    none without the brokers' logs."""
    if not views(bundle).evidence.with_logs:
        return given([])
    ev = bundle.cluster_events
    a = F.col("attrs")
    sends = ev.where(F.col("event").isin(*SENDS)).select(
        F.col("broker_id").alias("controller"),
        F.regexp_extract(a["broker_node"], r"\(id: (-?\d+)", 1).cast("int").alias("broker"),
        F.struct("ts", "file", "line_no").alias("line"),
    )
    failed = ev.where(F.col("event") == "controller.broker_failure").select(
        F.explode(printed.ints(a["brokers"])).alias("broker"), F.col("ts").alias("handled")
    )
    handled = (F.col("handled") >= F.col("line.ts") - F.expr(f"INTERVAL {AFTER_FAILURE_S} SECONDS")) & (
        F.col("handled") <= F.col("line.ts") + F.expr(f"INTERVAL {BEFORE_FAILURE_S} SECONDS")
    )
    rows = (
        sends.where(F.col("broker").isNotNull())
        .join(failed, "broker", "left")
        .groupBy("controller", "broker", "line")
        .agg(F.max(handled).alias("handled"))
        .where(F.col("handled").isNull() | ~F.col("handled"))
        .groupBy("controller", "broker")
        .agg(F.min("line").alias("first"), F.max("line").alias("last"), F.count("*").alias("n"))
        .orderBy("first.ts")
        .limit(limit)  # at most `limit` (controller, broker) pairs
    )
    return Ask(
        rows,
        lambda rs: [
            Unreachable(r.controller, r.broker, Said(**r.first.asDict()), Said(**r.last.asDict()), r.n)
            for r in rs
        ],
    )


def no_endpoint(bundle: Bundle, limit: int) -> Ask[list[NoEndpoint]]:
    """The first `limit` brokers whose missing endpoint failed a controller's events. One query; none
    without the brokers' logs."""
    if not views(bundle).evidence.with_logs:
        return given([])
    ev = bundle.cluster_events
    said = F.coalesce(F.col("attrs")["exception"], F.col("stack_trace"), F.lit(""))
    rows = (
        ev.where((F.col("event") == "controller.event_error") & said.rlike(_NO_ENDPOINT))
        .select(
            F.regexp_extract(said, _NO_ENDPOINT, 2).cast("int").alias("broker"),
            F.regexp_extract(said, _NO_ENDPOINT, 1).alias("listener"),
            F.col("broker_id").alias("controller"),
            F.struct("ts", "file", "line_no").alias("line"),
            F.col("attrs")["controller_event"].alias("event"),
        )
        .groupBy("broker", "listener")
        .agg(
            F.min_by("controller", "line").alias("controller"),
            F.min("line").alias("first"),
            F.max("line").alias("last"),
            F.count("*").alias("n"),
            F.min_by("event", "line").alias("event"),
        )
        .orderBy("first.ts")
        .limit(limit)  # at most `limit` brokers
    )
    return Ask(
        rows,
        lambda rs: [
            NoEndpoint(
                r.broker,
                r.listener,
                r.controller,
                Said(**r.first.asDict()),
                Said(**r.last.asDict()),
                r.n,
                r.event or "?",
            )
            for r in rs
        ],
    )


LOOKBACK_S = 600  # how far before an election its leader's silence is looked for


@dataclass(frozen=True)
class Quiet:
    """Before the controller elected new leaders for a broker's partitions at `at`: the broker's last line
    before then (its clock) and the controller's first failed send to it after that line, within
    LOOKBACK_S before `at` (the controller's clock): it was gone by that send
    (`behaviour.failed_send_means_unreachable`), and alive at its last line."""

    last_line: Said | None
    unreachable: Said | None
    heard: bool = False  # `last_line` is its time-out line, at when its client last heard from ZooKeeper
    halted: bool = False  # `last_line` is its halt for failed log dirs: it stopped then


def went_quiet(bundle: Bundle, asked: list[tuple[int, datetime]]) -> dict[tuple[int, datetime], Quiet]:
    """(broker, election time) -> Quiet, for the pairs asked. One query."""
    if not asked:
        return {}
    wanted = bundle.spark.createDataFrame(sorted(set(asked)), "broker int, at timestamp")
    ev = bundle.cluster_events
    line = F.struct("ts", "file", "line_no", F.lit(False).alias("heard"), halted().alias("halted"))
    target = F.regexp_extract(F.col("attrs")["broker_node"], r"\(id: (-?\d+)", 1).cast("int")
    sends = ev.where(F.col("event").isin(*SENDS)).select(
        target.alias("broker"), line.alias("line"), F.lit(True).alias("send")
    )
    # its own lines that show it at work, and the moments its ZooKeeper client last heard from ZooKeeper
    heard = F.struct(
        F.col("heard").alias("ts"),
        "file",
        "line_no",
        F.lit(True).alias("heard"),
        F.lit(False).alias("halted"),
    )
    own = (
        signs_of_life(ev)
        .select(F.col("broker_id").alias("broker"), line.alias("line"))
        .unionByName(unheard(ev).select(F.col("broker_id").alias("broker"), heard.alias("line")))
        .withColumn("send", F.lit(False))
    )
    since = F.col("at") - F.expr(f"INTERVAL {LOOKBACK_S} SECONDS")
    rows = (
        sends.unionByName(own)
        .join(wanted, "broker")
        .where((F.col("line.ts") <= F.col("at")) & (~F.col("send") | (F.col("line.ts") >= since)))
        .groupBy("broker", "at")
        .agg(
            F.collect_list(F.when(F.col("send"), F.col("line"))).alias("sends"),
            F.max(F.when(~F.col("send"), F.col("line"))).alias("last_line"),
        )
        # a send that failed before its last line proves nothing: it lived after (on two clocks, as said)
        .select(
            "broker",
            "at",
            "last_line",
            F.array_min(
                F.filter("sends", lambda s: F.col("last_line").isNull() | (s.ts > F.col("last_line.ts")))
            ).alias("unreachable"),
        )
        .collect()  # one row per pair asked
    )
    said = lambda x: Said(x.ts, x.file, x.line_no) if x is not None else None  # noqa: E731
    return {
        (r.broker, r.at): Quiet(
            said(r.last_line),
            said(r.unreachable),
            bool(r.last_line and r.last_line.heard),
            bool(r.last_line and r.last_line.halted),
        )
        for r in rows
    }
