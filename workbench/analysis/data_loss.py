"""Records lost: unclean leader elections (the one history's, `model/history/partitions.py`: ZooKeeper's
txns, and the controller's own lines where no txn read holds the election) and truncations that dropped
records (the brokers' logs).

- Unclean election: a new leader that was not in the ISR of the state before, with an ISR of itself alone.
  Only the offline election with unclean.leader.election.enable picks such a leader, and it writes exactly
  that ISR (behaviour fact `only_unclean_election_leaves_the_isr`). What the ISR held beyond the new
  leader's log end is gone; its "starts at leader epoch E from offset O" line says where that log ended.
  Where no txn read holds it, the controller's lines tell the same (`model/partition_log.py`): its words
  until 1.0, RECOVERING from 3.2, else the ISR the lines printed before the election.
- Truncation below the high watermark: at least H - X committed records are gone from that replica. Its
  fetcher warned "Truncating <tp> to offset X below high watermark H" from 2.0 to 2.3
  (`truncation_below_high_watermark_warned`); from 2.6 its "Follower <tp> starts at leader epoch E from
  offset O with high watermark H" line, before "Truncating to offset X" (Log.truncateTo), gives H and its
  log end O (`follower_logs_its_log_end`): O - X records were dropped in all.
- A returning leader: "Truncating to offset X" from a broker that led the partition before: what it
  appended as leader beyond X is dropped; at or above its high watermark none of it had been acknowledged
  to an acks=all producer (`acks_all_waits_for_the_high_watermark`), only acks=0 or 1 writes are lost.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from workbench.analysis.contract import CRITICAL, NO_TXN, WARNING, Analysis, Kind, Need
from workbench.analysis.findings import (
    TP,
    Coverage,
    Finding,
    file_ref,
    file_ref_col,
    hex_zxid,
    tp_list,
    txn_ref,
)
from workbench.kafka import behaviour
from workbench.model.history.unclean import UncleanElection, unclean
from workbench.model.partition_log import OfflineElection
from workbench.model.views import views
from workbench.together import rows, together

if TYPE_CHECKING:
    from workbench.frames import Bundle

SHOWN = 100  # findings of each kind at most; coverage counts any beyond


def truncations(bundle: Bundle) -> DataFrame:
    """broker, topic, partition, ts, offset, high_watermark and log_end (the replica's before it, where
    its lines give them: null elsewhere), led_before (the broker had logged leading the partition
    earlier), ref: each truncation a broker logged. Those below the high watermark dropped committed
    records; a former leader's, records it took as leader; of the rest, without a high watermark, what
    they dropped is not known."""
    ev = bundle.cluster_events.where(F.col("partition").isNotNull())
    offset = F.col("attrs")["offset"].try_cast("long")
    tp = ["broker_id", "topic", "partition"]
    below = ev.where(F.col("event") == "log.truncated_below_hw").select(
        *tp,
        "ts",
        offset.alias("offset"),
        F.col("attrs")["high_watermark"].try_cast("long").alias("high_watermark"),
        file_ref_col("file", "line_no").alias("ref"),
    )
    plain = ev.where(F.col("event") == "log.truncated").select(
        *tp, "ts", offset.alias("offset"), file_ref_col("file", "line_no").alias("ref")
    )
    # the Log line of a truncation the fetcher also warned of is the same truncation
    alone = plain.join(below.select(*tp, "offset"), [*tp, "offset"], "left_anti")
    both = below.unionByName(alone.withColumn("high_watermark", F.lit(None).cast("long")))
    # what the broker did before on its own clock: led the partition, or became its follower, logging its
    # log end and high watermark then (`follower_logs_its_log_end`); the latest such line counts
    before = ev.where(F.col("event").isin("partition.became_leader", "partition.became_follower")).select(
        *[F.col(c).alias(f"b_{c}") for c in tp],
        F.col("ts").alias("at"),
        (F.col("event") == "partition.became_leader").alias("led"),
        F.col("attrs")["offset"].try_cast("long").alias("end"),
        F.col("attrs")["high_watermark"].try_cast("long").alias("hw"),
        file_ref_col("file", "line_no").alias("said"),
    )
    followed = F.max_by(
        F.when(~F.col("led"), F.struct("end", "hw", "said")), F.when(~F.col("led"), F.col("at"))
    )
    return (
        both.join(before, [*[F.col(c) == F.col(f"b_{c}") for c in tp], F.col("at") <= F.col("ts")], "left")
        .groupBy(*tp, "ts", "offset", "high_watermark", "ref")
        .agg(F.count_if(F.col("led")).alias("n"), followed.alias("f"))
        .select(
            F.col("broker_id").alias("broker"),
            "topic",
            "partition",
            "ts",
            "offset",
            F.coalesce("high_watermark", "f.hw").alias("high_watermark"),
            F.when(F.col("f.end") > F.col("offset"), F.col("f.end")).alias("log_end"),
            (F.col("n") > 0).alias("led_before"),
            "ref",
            F.col("f.said").alias("log_end_ref"),
        )
    )


@dataclass(frozen=True)
class Truncation:
    """A truncation that dropped committed records (below the replica's high watermark) or records the
    broker took as leader; its high watermark and log end before it where its lines give them."""

    broker: int
    topic: str
    partition: int
    ts: datetime
    offset: int
    high_watermark: int | None
    led_before: bool
    ref: str
    log_end: int | None = None
    log_end_ref: str | None = None  # the line that gave log_end and, without a warning, high_watermark

    @property
    def below_hw(self) -> bool:
        return self.high_watermark is not None and self.offset < self.high_watermark


@dataclass(frozen=True)
class Facts:
    elections: list[UncleanElection]  # the first SHOWN by zxid
    truncations: list[Truncation]  # the first SHOWN by time
    no_txn: bool  # ZooKeeper's history is held but none of its txns could be read
    # leaders the controller's lines elected alone from OfflinePartition, at epochs no txn read holds
    logged: list[OfflineElection] = dataclasses.field(default_factory=list)
    logged_total: int = 0
    lacking: list[str] = dataclasses.field(default_factory=list)  # the controller's journal, where absent
    unseen: str | None = None  # truncations whose high watermark no line gives


def facts(bundle: Bundle) -> Facts:
    """The unclean elections (the one history's: ZooKeeper's txns, and the controller's lines where no txn
    read holds them) and the truncations, asked together."""
    ev = views(bundle).evidence
    elected = unclean(bundle, SHOWN)
    every = truncations(bundle)
    cut = (F.col("offset") < F.col("high_watermark")) | F.col("led_before")
    order = ["ts", "broker", "topic", "partition"]
    shown = F.struct(*order, *[f.name for f in dataclasses.fields(Truncation) if f.name not in order])
    unknown = F.col("high_watermark").isNull() & ~F.col("led_before")
    first = every.agg(  # one row: the first SHOWN that cut records, and the partitions not known to
        F.slice(F.sort_array(F.collect_list(F.when(cut, shown))), 1, SHOWN).alias("cut"),
        F.count_distinct(F.when(unknown, F.struct("topic", "partition"))).alias("n"),
        F.slice(F.sort_array(F.collect_set(F.when(unknown, F.struct("topic", "partition")))), 1, SHOWN).alias(
            "tps"
        ),
    )
    truncated = rows(first)
    got = together(elected, truncated)
    u = got[elected]
    (row,) = got[truncated]
    return Facts(
        u.txns,
        [Truncation(**r.asDict()) for r in row.cut],
        u.unread,
        u.lines,
        u.lines_total,
        u.lacking,
        _unseen([TP(r.topic, r.partition) for r in row.tps], row.n, ev.kafka_version),
    )


def _unseen(tps: list[TP], n: int, version: str | None) -> str | None:
    """Truncations by replicas that had not led their partition, with no line giving their high
    watermark: whether they dropped committed records is not known. Kafka 2.4 to 2.5 (and before 2.0)
    logs neither the fetcher's warning nor a follower's log end, so there it is every such truncation."""
    if not tps:
        return None
    warned = behaviour.holds("truncation_below_high_watermark_warned", version)
    silent = warned is False and behaviour.holds("follower_logs_its_log_end", version) is False
    why = f" (Kafka {version} logs neither the fetcher's warning nor a follower's log end)" if silent else ""
    return (
        f"whether {n} partition(s)' truncations by replicas that had not led them ({tp_list(tps)}) "
        f"dropped committed records: no line gives their high watermark{why}"
    )


def judge(facts: Facts, coverage: Coverage) -> list[Finding]:
    """Each unclean election and each truncation that dropped records, critical where records are lost.
    Plain Python: tested from hand-written facts."""
    if facts.no_txn:
        coverage.add("data_loss", [NO_TXN])
    coverage.add("data_loss", [*facts.lacking, *([facts.unseen] if facts.unseen else [])])
    out: list[Finding] = []
    for r in facts.elections:
        since = f" from offset {r.from_offset}" if r.from_offset is not None else ""
        out.append(
            Finding(
                "data_loss.unclean_election",
                CRITICAL,
                {"topic": r.topic, "partition": r.partition, "broker": r.leader, "zxid": hex_zxid(r.zxid)},
                f"{r.topic}-{r.partition}: broker {r.leader}, not in the ISR {list(r.isr_before)}, was "
                f"elected leader at zxid {hex_zxid(r.zxid)} ({r.time:%Y-%m-%d %H:%M:%S} ZooKeeper time, "
                f"leader epoch {r.leader_epoch}{since}): an unclean election. Records the ISR held "
                f"beyond broker {r.leader}'s log end are lost, acknowledged ones included.",
                (
                    txn_ref(r.before_zxid),
                    txn_ref(r.zxid),
                    *([file_ref(r.file, r.line_no)] if r.file else []),
                ),
            )
        )
    out += logged_elections(facts.logged, facts.logged_total, coverage)
    for t in facts.truncations:
        out.append(_truncation(t))
    return out


def verdict(e: OfflineElection) -> str | None:
    """'unclean', 'clean', or None where the lines cannot tell: until 1.0 the controller says so, from 3.2
    it writes RECOVERING; else the leader was not in the ISR before
    (`only_unclean_election_leaves_the_isr`)."""
    if e.said_unclean or e.recovering:
        return "unclean"
    if e.isr_before is None:
        return None
    return "clean" if e.leader in e.isr_before else "unclean"


def logged_elections(logged: list[OfflineElection], total: int, coverage: Coverage) -> list[Finding]:
    """The unclean elections the controller's lines show, and in coverage those they cannot tell."""
    out, untold = [], []
    for e in logged:
        v = verdict(e)
        if v is None:
            untold.append(e)
        if v != "unclean":
            continue
        subject = {"topic": e.topic, "partition": e.partition, "broker": e.leader}
        if e.leader_epoch is not None:
            subject["leader_epoch"] = e.leader_epoch
        epoch = f", leader epoch {e.leader_epoch}" if e.leader_epoch is not None else ""
        if e.from_offset is not None:
            epoch += f" from offset {e.from_offset}"
        refs = [file_ref(e.file, e.line_no)]
        if e.said_unclean:
            how = 'the controller warned that no broker in the ISR was alive ("There\'s potential data loss")'
        elif e.recovering:
            how = "the controller wrote its state RECOVERING, as it does only for a leader outside the ISR"
        else:
            how = f"it was not in the ISR {e.isr_before}"
            if e.went_offline:
                how += f" (the ISR {e.isr_printed} printed before, less the replicas taken offline since)"
            if e.isr_file is not None:
                refs.insert(0, file_ref(e.isr_file, e.isr_line))
        out.append(
            Finding(
                "data_loss.unclean_election",
                CRITICAL,
                subject,
                f"{e.topic}-{e.partition}: broker {e.leader} was elected leader of the offline partition at "
                f"{e.ts:%Y-%m-%d %H:%M:%S} (the controller's clock{epoch}), though {how}: an unclean "
                f"election, from the controller's lines. Records the ISR held beyond broker {e.leader}'s "
                "log end are lost, acknowledged ones included.",
                tuple(refs),
            )
        )
    if untold:
        coverage.add(
            "data_loss",
            [
                f"the ISR before {len(untold)} leader election(s) from OfflinePartition with the new "
                f"leader alone in its ISR ({tp_list(untold)}): no line before prints it, so a clean "
                "election cannot be told from an unclean one"
            ],
        )
    if total:
        said = f"the controller's lines: {total} election(s) from OfflinePartition no txn holds"
        coverage.add("data_loss", used=[said])
    if total > len(logged):
        coverage.add("data_loss", [f"{total - len(logged)} more offline elections in the logs, not examined"])
    return out


def _truncation(r: Truncation) -> Finding:
    """Below the high watermark, committed records are gone (critical); else what a former leader dropped,
    counted where its lines give its log end, none of it acknowledged to acks=all producers where its
    high watermark is known (`acks_all_waits_for_the_high_watermark`)."""
    subject: dict[str, object] = {"topic": r.topic, "partition": r.partition, "broker": r.broker}
    dropped = r.log_end - r.offset if r.log_end is not None else None
    if dropped is not None:
        subject["records"] = dropped
    refs = tuple(x for x in (r.log_end_ref, r.ref) if x)
    at = f"({r.ts:%Y-%m-%d %H:%M:%S} broker time)"
    counted = f"; it dropped {dropped} record(s) in all (its log ended at {r.log_end})" if dropped else ""
    if r.below_hw:
        assert r.high_watermark is not None
        return Finding(
            "data_loss.truncation",
            CRITICAL,
            {**subject, "below_hw": True},
            f"Broker {r.broker} truncated {r.topic}-{r.partition} to offset {r.offset}, below its "
            f"high watermark {r.high_watermark} {at}: at least {r.high_watermark - r.offset} committed "
            f"record(s) are gone from its copy, whatever acks they were written with{counted}; the "
            "leader's log diverged from what was committed (an unclean election, or a leader that lost "
            "them).",
            refs,
        )
    if dropped is not None and r.high_watermark is not None:
        what = (
            f"the {dropped} record(s) it held beyond that offset (its log ended at {r.log_end}) are "
            f"dropped; none had reached its high watermark {r.high_watermark}, so no producer with "
            "acks=all was told they were written, and writes acknowledged with acks=0 or 1 are lost."
        )
    else:
        what = (
            "records it appended as leader beyond that offset are dropped, and any a producer had been "
            "told were written (acks=1, or acks=all while it was alone in the ISR) are lost."
        )
    return Finding(
        "data_loss.truncation",
        WARNING,
        {**subject, "below_hw": False},
        f"Broker {r.broker}, which had led {r.topic}-{r.partition}, truncated it to offset {r.offset} {at}: "
        + what,
        refs,
    )


_REPLICA = {"topic": str, "partition": int, "broker": int}
ANALYSIS = Analysis(
    "data_loss",
    needs={
        Need.ZK_HISTORY: "unclean leader elections in zxid order",
        Need.LOGS: "truncations",
    },
    facts=facts,
    judge=judge,
    reads=("partition_changes", "logged_states", "history_span", "resumed_after"),
    kinds=(
        Kind(
            "data_loss.unclean_election",
            (CRITICAL,),
            _REPLICA,
            {"zxid": str, "leader_epoch": int},
            key=("topic", "partition", "broker"),
            event=True,
        ),
        Kind(
            "data_loss.truncation",
            (CRITICAL, WARNING),
            {**_REPLICA, "below_hw": bool},
            {"records": int},  # dropped in all, where the broker's lines give its log end before
            key=("topic", "partition", "broker", "below_hw"),
            event=True,
        ),
    ),
)
findings = ANALYSIS.findings
