"""What each new controller's own log tells of its failover: facts `analysis/controller.py` judges, as
plain values (a query or two each).

The controllers one after another and the sessions brokers lost are the history's (`history/controllers.py`,
`history/sessions.py`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from pyspark.sql import Row
from pyspark.sql import functions as F

from workbench.model.elections import elected_lines, failover_steps
from workbench.together import Ask, Joined, rows

if TYPE_CHECKING:
    from workbench.frames import Bundle


@dataclass(frozen=True)
class Line:
    """A new controller's log line from its election to 'Ready to serve'."""

    event: str
    step: str | None
    ts: datetime
    file: str
    line_no: int


@dataclass
class FailoverLog:
    """A new controller's failover, as its own log tells it: its lines, its election and 'Ready to serve'
    lines, and what it resumed (kind -> what)."""

    steps: list[Line] = field(default_factory=list)
    elected: Line | None = None
    ready: Line | None = None
    resumed: dict[str, list[str]] = field(default_factory=dict)

    @property
    def ready_ms(self) -> int | None:
        if self.elected is None or self.ready is None:
            return None
        return round((self.ready.ts - self.elected.ts).total_seconds() * 1000)


def election_logs(bundle: Bundle) -> Ask[dict[tuple[int, int], FailoverLog]]:
    """Per (broker, epoch): its lines from its election to 'Ready to serve', and what it resumed."""

    def read(steps: list[Row], picked: list[Picked]) -> dict[tuple[int, int], FailoverLog]:
        out: dict[tuple[int, int], FailoverLog] = {}
        for r in steps:
            log = out.setdefault((r.broker_id, r.epoch), FailoverLog())
            if log.ready is not None:  # what it did after, resuming its work, is not its start
                continue
            line = Line(r.event, r.step, r.ts, r.file, r.line_no)
            log.steps.append(line)
            if r.event == "controller.elected":
                log.elected = line
            if r.event == "controller.ready":
                log.ready = line
        resumed = picked_up(picked)
        for key, log in out.items():
            log.resumed = resumed.get(key, {})
        return out

    steps = failover_steps(bundle).orderBy("broker_id", "epoch", "ts", "line_no")
    return Joined(read, rows(steps), picked_lines(bundle))


@dataclass(frozen=True)
class Picked:
    """A controller (broker, epoch) logged that it worked on `what`: a reassignment's partition, a deleted
    topic, preferred elections."""

    broker_id: int
    epoch: int
    kind: str
    what: str


def picked_lines(bundle: Bundle) -> Ask[list[Picked]]:
    """Per controller (broker, epoch) and thing: reassignments it sent or completed, deletions it
    (re)started, preferred elections it resumed, and the topics queued for deletion its failover listed
    (kind "listed deletions"; an empty list is one row with `what` ""); each line given to the broker's
    last election before it."""
    ev = bundle.cluster_events
    elected = elected_lines(bundle).select(
        "broker_id", F.col("failover_file").alias("file"), "epoch", F.col("ts").alias("from_ts")
    )
    kinds = {
        "reassignment.leader_and_isr_sent": "reassignments",
        "reassignment.caught_up": "reassignments",
        "reassignment.assignment_updated": "reassignments",
        "deletion.topic_started": "deletions",
        "leader_election.pending": "preferred elections",
        "controller.topics_to_delete": LISTED,
        "deletion.manager_initialized": LISTED,
    }
    picked = ev.where(F.col("event").isin(list(kinds))).where(
        (F.col("event") != "leader_election.pending") | (F.col("attrs")["step"] == "resuming")
    )
    attrs = F.col("attrs")
    # a partition's line names it; a list (preferred elections', the failover's deletions) is one per name
    listed = F.coalesce(attrs["partitions"], attrs["topics"], F.lit(""))
    names = F.split(F.regexp_replace(listed, r"^\w*(Set|List)\(|\)$|\s", ""), ",")
    what = F.explode(
        F.when(
            F.col("partition").isNotNull(),
            F.array(F.concat_ws("-", "topic", F.col("partition").cast("string"))),
        )
        .when(F.col("topic").isNotNull(), F.array("topic"))
        .otherwise(names)
    )
    kind = F.create_map(*[x for k, v in kinds.items() for x in (F.lit(k), F.lit(v))])[F.col("event")]
    lines = (
        picked.select("broker_id", "file", "line_no", "ts", kind.alias("kind"), what.alias("what"))
        .join(elected, ["broker_id", "file"])
        .where(F.col("ts") >= F.col("from_ts"))
        .groupBy("broker_id", "file", "line_no", "kind", "what")
        .agg(F.max("epoch").alias("epoch"))
        .where((F.col("what") != "") | (F.col("kind") == LISTED))
        .select("broker_id", "epoch", "kind", "what")
        .distinct()
    )
    return Ask(lines, lambda rs: [Picked(r.broker_id, r.epoch, r.kind, r.what) for r in rs])


LISTED = "listed deletions"


def picked_up(picked: list[Picked]) -> dict[tuple[int, int], dict[str, list[str]]]:
    """What each new controller picked up from ZooKeeper: a reassignment or a deletion that an earlier
    controller's log already shows under way (one an operator starts during its term is its own, not
    resumed; KafkaController.onControllerFailover resumes them after logging 'Ready to serve', 2.5.1:248-251,
    2.8.2:264-267, 3.6.2:319-322, so the log cannot tell them apart by place), and the preferred elections
    it says it resumes. Without an earlier controller's log nothing else is called resumed; a deletion
    the failover's own list of topics to be deleted leaves out was requested after it
    (fetchTopicDeletionsInProgress 2.8.2:964-975, TopicDeletionManager.init 2.8.2:96)."""
    first: dict[tuple[str, str], int] = {}
    listed: dict[tuple[int, int], set[str]] = {}
    for p in picked:
        if p.kind == LISTED:
            listed.setdefault((p.broker_id, p.epoch), set()).add(p.what)
        else:
            first[(p.kind, p.what)] = min(first.get((p.kind, p.what), p.epoch), p.epoch)
    out: dict[tuple[int, int], dict[str, set[str]]] = {}
    for p in picked:
        key = (p.broker_id, p.epoch)
        if p.kind == LISTED or (p.kind == "deletions" and p.what not in listed.get(key, {p.what})):
            continue
        if p.kind == "preferred elections" or first[(p.kind, p.what)] < p.epoch:
            out.setdefault(key, {}).setdefault(p.kind, set()).add(p.what)
    return {key: {k: sorted(v) for k, v in kinds.items()} for key, kinds in out.items()}
