"""The postmortem's story, drawn from triage's findings and the health analysis: summary, impact, detection,
root cause with its symptoms under it, repair and action items, in the order a team pastes them into its
postmortem (`report.py` renders them through the template notebook).

Nothing here is new analysis: each section reads findings and health episodes, and says where it has no
evidence (no txn logs: no impact measured) instead of writing a guess.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pandas as pd
from pyspark.sql import Window
from pyspark.sql import functions as F

from workbench.analysis.causes import Group, grouped, lead
from workbench.analysis.findings import Finding, bounds, duration, hex_col, readable_ref, tp_list
from workbench.analysis.leaderless import nobody_serves, unserved_when_lines_end
from workbench.kafka.behaviour import PRODUCER_DELIVERY_TIMEOUT_MS
from workbench.model.service import elected_at_once, outages
from workbench.model.timeline import in_order
from workbench.model.views import views

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from workbench.analysis.triage import Triage
    from workbench.frames import Bundle


@dataclass
class Outage:
    """Partitions counted one way (offline, or no acting leader) in ZooKeeper's history, and the longest
    outage's bounds as its finding tells them (`longest_told`)."""

    partitions: int = 0
    topics: list[str] = field(default_factory=list)
    longest_ms: tuple[int, int] = (0, 0)
    still: int = 0
    named: str = ""  # which partitions, as a finding writes them ('orders 0,3'); those still first
    # how long Kafka's OfflinePartitionsCount held one partition at the longest (0: never, each event that
    # took one offline elected its leader); None: none was offline, or not known
    offline_ms: int | None = None


# How a partition was without an acting leader (`service.outages`: one outage however it began and ran
# on), and how to say it.
OUTAGES = {
    "unserved": "without an acting leader (offline, or led by a replica that refused to lead or had gone "
    "silent)",
}


@dataclass
class Impact:
    """Partitions without an acting leader, by how, from ZooKeeper's history, and the findings of lost
    records. `measured` False: there is no history to measure every partition on; the outages are then
    those the findings tell from the brokers' lines (a partition in two outages counted in each)."""

    measured: bool
    outages: dict[str, Outage] = field(default_factory=dict)
    lost: list[Finding] = field(default_factory=list)
    # not measured: what told the outages (LINES, TREE) and how many partitions each says still unserved,
    # and how many the lines leave without a leader that the tree shows led again at the capture
    still_by: dict[str, int] = field(default_factory=dict)
    led_again: int = 0
    held: list[Finding] = field(default_factory=list)  # followers that held acks=all producers back

    @property
    def partitions(self) -> int:
        return sum(o.partitions for o in self.outages.values())

    @property
    def still(self) -> int:
        return sum(o.still for o in self.outages.values()) or sum(self.still_by.values())


HELD = "isr.high_watermark_held"


def impact(bundle: Bundle, result: Triage) -> Impact:
    lost = [f for f in result.findings if f.kind.startswith("data_loss.")]
    # measured on ZooKeeper's history; from the lines alone, what the findings tell (issue 74: to measure
    # the lines' outages too, with what the lines do not hold said)
    stretches = outages(bundle) if views(bundle).partition_changes is not None else None
    if stretches is None:
        return unmeasured(result.findings, views(bundle).evidence.zk_state)
    out = Impact(True, lost=lost, held=[f for f in result.findings if f.kind == HELD])
    for kind in OUTAGES:
        row = stretches.agg(
            F.count_distinct("topic", "partition").alias("n"),
            F.sort_array(F.collect_set("topic")).alias("topics"),
            F.max("lasted_ms").alias("longest"),
            F.count_distinct(F.when(F.col("ended_zxid").isNull(), F.struct("topic", "partition"))).alias(
                "still"
            ),
            F.sort_array(F.collect_set(F.struct("topic", "partition"))).alias("all"),
            F.sort_array(
                F.collect_set(F.when(F.col("ended_zxid").isNull(), F.struct("topic", "partition")))
            ).alias("open"),
            # how long Kafka's OfflinePartitionsCount held one: never where the event that took it offline
            # elected its leader
            F.max(F.when(elected_at_once(), F.lit(0)).otherwise(F.col("off_run_ms"))).alias("off"),
        ).first()
        if row is not None and row.n:
            named = tp_list(row.open or row.all)
            off = int(row.off) if row.off is not None else None
            longest = longest_told(result.findings) or (int(row.longest or 0),) * 2
            out.outages[kind] = Outage(row.n, list(row.topics), longest, row.still, named, off)
    return out


# The findings that tell an outage of partitions, each with its bounds (`outage_ms`)
OUTAGE_KINDS = ("partition.offline", "partition.no_acting_leader", "partition.leader_paused")


def longest_told(found: list[Finding]) -> tuple[int, int] | None:
    """The longest outage's bounds as its finding tells them, so that the report's number is the finding's
    (a silent leader's outage from its last sign of life, not from when ZooKeeper's expiry proves it)."""
    told = [
        (int(f.subject["outage_ms"][0]), int(f.subject["outage_ms"][1]))
        for f in found
        if f.kind in OUTAGE_KINDS and "outage_ms" in f.subject
    ]
    return max(told, key=lambda b: (b[1], b[0]), default=None)


# Without ZooKeeper's history, what tells an outage: the brokers' lines (up to when they end), or ZooKeeper's
# tree at the capture (a finding citing only znodes)
LINES, TREE = "the brokers' lines", "ZooKeeper's tree at the capture"


def told_by(f: Finding) -> str:
    return TREE if f.evidence and all(e.startswith("zk:/") for e in f.evidence) else LINES


def unmeasured(found: list[Finding], tree: bool = False) -> Impact:
    """Without ZooKeeper's history: the outages the findings tell from the lines and, where it was read
    (`tree`), ZooKeeper's tree, as one (no topics: a finding names its partitions in words), if any, and the
    findings of lost records."""
    lost = [f for f in found if f.kind.startswith("data_loss.")]
    held = [f for f in found if f.kind == HELD]
    told = [f for f in found if f.kind in OUTAGE_KINDS and "taken_at" not in f.subject]
    still = {LINES: unserved_when_lines_end(told)[0], TREE: nobody_serves(told)}
    by = {s: k for s, k in still.items() if k or any(told_by(f) == s for f in told) or (tree and s == TREE)}
    again = sum(int(f.subject.get("led_at_capture", 0)) for f in told)
    longest = longest_told(told)
    if longest is None:  # no outage bounded (a tree without the capture's time may leave one unbounded)
        return Impact(False, lost=lost, still_by=by, led_again=again, held=held)
    n = sum(int(f.subject["partitions"]) for f in told)
    # how long Kafka's OfflinePartitionsCount held them, where every offline finding tells it (0: never)
    offline = [f.subject.get("offline_ms") for f in told if f.kind == "partition.offline"]
    off = max(int(x) for x in offline if x is not None) if offline and None not in offline else None
    outage = Outage(n, [], longest, sum(still.values()), offline_ms=off)
    return Impact(False, {"unserved": outage}, lost, by, again, held)


def _still(hurt: Impact) -> str:
    """Where the partitions still unserved stand, without ZooKeeper's history: when the lines end, and at
    the capture as the tree holds it."""
    lines, tree, again = hurt.still_by.get(LINES, 0), hurt.still_by.get(TREE, 0), hurt.led_again
    said = [f"when the lines end, {lines + again} partition(s) still had none"] if lines or again else []
    if again:
        said[0] += f" ({again if lines else 'all'} of them led again in ZooKeeper's tree at the capture)"
    said += (
        [f"at the capture, ZooKeeper's tree shows {tree} partition(s) without a live leader"] if tree else []
    )
    if not said:
        said = ["none still when the lines end"]
        if TREE in hurt.still_by:
            said.append(
                "at the capture, a live leader in ZooKeeper's tree for every partition of a topic not "
                "queued for deletion"
            )
    return "; ".join(said)


def summary(result: Triage, hurt: Impact) -> str:
    """Three sentences: what happened, what it did, where it stands."""
    groups, _ = grouped(result.findings)
    if not result.findings:
        return "Triage found nothing wrong in the evidence it could check (see what could be checked)."
    # the headline is what the first group is about; where a chain explains it, its root follows
    g = groups[0] if groups else None
    first = lead(g) if g else min(result.findings, key=Finding.sort_key)
    what = _first_sentence(first.summary)
    if g is not None and first is not g.root:
        what += f" It began with this: {_first_sentence(g.root.summary)}"
    lost = f"; {len(hurt.lost)} finding(s) of lost records" if hurt.lost else ""
    if not hurt.measured and hurt.outages:
        (o,) = hurt.outages.values()
        did = (
            f"From {' and '.join(hurt.still_by)} alone (the bundle has no ZooKeeper txn logs to measure "
            f"every partition on), the findings tell {o.partitions} partition outage(s), the longest for "
            f"{bounds(*o.longest_ms)}{lost}."
        )
    elif not hurt.measured:
        did = f"How long partitions had no leader is not known: the bundle has no ZooKeeper txn logs{lost}."
    elif hurt.partitions:
        did = "; ".join(
            f"{o.partitions} partition(s) of {', '.join(o.topics)} were {OUTAGES[k]}, the longest for "
            f"{bounds(*o.longest_ms)}"
            for k, o in hurt.outages.items()
        )
        did = did[0].upper() + did[1:] + f"{lost}."
    else:
        did = f"No partition was without an acting leader in the history read{lost}."
    repair = any(g.root.kind.startswith("topic_id.") for g in groups)
    if not hurt.still and not hurt.measured and TREE in hurt.still_by:
        now = (
            "At the capture ZooKeeper's tree shows a live leader for every partition of a topic not queued "
            "for deletion (one that refuses to lead only the brokers' lines tell)."
        )
    elif not hurt.still and not hurt.measured:  # absent evidence is not read as healthy
        now = (
            "No finding shows a partition still without a leader when the lines end; whether every "
            "partition has an acting leader now is not known (the lines do not tell it)."
        )
    elif not hurt.still:
        now = "At the capture every partition had an acting leader."
    else:
        now = f"At the capture {hurt.still} partition(s) still had none" if hurt.measured else _still(hurt)
        now = now[0].upper() + now[1:] + ("; the repair plan below says how to end it." if repair else ".")
    return f"{what} {did} {now}"


def _first_sentence(text: str) -> str:
    """Up to the first full stop that ends a sentence (not the one in '2.8')."""
    m = re.match(r"(.+?[.!?])(\s|$)", text, re.S)
    return m.group(1) if m else text


def detection(result: Triage, hurt: Impact) -> list[str]:
    """What would have alerted, and what would not have (Markdown bullets)."""
    kinds = {f.kind for f in result.findings}
    out = []
    if "partition.no_acting_leader" in kinds:
        out.append(
            "Nothing Kafka counts: a partition whose ZooKeeper leader refused to lead is neither offline "
            "(`OfflinePartitionsCount`) nor under-replicated (`UnderReplicatedPartitions`). Producers saw "
            "`NOT_LEADER_OR_FOLLOWER`; the brokers logged the refusal at ERROR in `state-change.log`."
        )
    if "partition.offline" in kinds:
        offline = [o.offline_ms for o in hurt.outages.values()]
        if hurt.measured:  # ZooKeeper's history: an outage never counted offline has none
            out.append(_offline_alert(max((x or 0 for x in offline), default=0)))
        else:  # the lines: their one outage, as the findings tell Kafka's count (None: they do not)
            out.append(_offline_alert(next(iter(offline), None)))
    if "partition.under_replicated" in kinds:
        out.append("`UnderReplicatedPartitions` > 0 on the leaders (`kafka.server:type=ReplicaManager`).")
    if kinds & {"controller.failover", "controller.flapping"}:
        out.append("`ActiveControllerCount` summed over the brokers != 1 while no controller served.")
    if "deletion.stuck" in kinds:
        out.append(
            "`TopicsIneligibleToDeleteCount` > 0 on the controller, and `/admin/delete_topics` not empty."
        )
    if not out:
        out.append("Nothing in the findings needs an alert.")
    return out


SCRAPES_S = (30, 60)  # how often monitoring commonly reads a gauge: a stretch shorter can fall between


def _offline_alert(longest_ms: int | None) -> str:
    """Whether an alert on `OfflinePartitionsCount` fired, by how long the longest offline stretch lasted
    against a scrape every 30-60 s (a gauge is read at the scrape, not summed between); 0: Kafka never
    counted them; None: not known."""
    gauge = "`OfflinePartitionsCount` > 0 on the active controller (`kafka.controller:type=KafkaController`)"
    shown = (
        "What did show it: the controller's `state-change.log` (partitions moved to OfflinePartition), "
        "producers' retries (no leader, `NOT_LEADER_OR_FOLLOWER`) and, while it lasted, `kafka-topics "
        "--describe --unavailable-partitions`."
    )
    if longest_ms == 0:  # `offline_count_set_after_each_event`: taken offline and elected in one event
        return (
            f"{gauge}: never, for these partitions: the controller sets the gauge after each event it "
            "handles, and the event that took them offline elected their new leaders, so no alert on it "
            f"could fire. {shown}"
        )
    if longest_ms is None:
        return (
            f"{gauge}: how long it counted them is not in the evidence held (the brokers' lines do not "
            f"show every partition going offline), so whether an alert on it fired is not known. {shown}"
        )
    if longest_ms >= SCRAPES_S[1] * 1000:
        every = f"at a scrape every {SCRAPES_S[1]} s or less"
        return f"{gauge} for up to {duration(longest_ms)}: an alert on it fires {every}."
    low, high = (longest_ms / (s * 1000) for s in reversed(SCRAPES_S))
    chance = "under 1%" if high < 0.01 else f"about {low:.0%} to {high:.0%}"
    verdict = "most likely did not fire" if high < 0.5 else "may have missed it"
    return (
        f"{gauge} for at most {duration(longest_ms)}: a scrape every {SCRAPES_S[0]}-{SCRAPES_S[1]} s reads "
        f"the gauge during a stretch that short with a chance {chance}, so an alert on it {verdict}. {shown}"
    )


STORY_ROWS = 20  # the report's timeline: the moments the findings cite, most severe first, in time order
# A znode cited as of a write (`zk:/path@mzxid=0x..`) is that write's txn on the timeline
_ZNODE_AT = re.compile(r"^zk:/.*@[cm]zxid=(0x[0-9a-f]+)$")


def story(result: Triage, limit: int = STORY_ROWS) -> list[tuple[str, str]]:
    """The evidence the findings cite, as (timeline ref, the finding's kind): each finding's first two
    refs (what began it, then what followed), the most severe findings' first, at most `limit`."""
    out: dict[str, str] = {}
    for f in sorted(result.findings, key=Finding.sort_key):
        for ref in f.evidence[:2]:
            m = _ZNODE_AT.match(ref)
            ref = f"zk:txn@{m.group(1)}" if m else ref
            if len(out) < limit and ref not in out:
                out[ref] = f.kind
    return list(out.items())


def story_table(timeline: DataFrame, cited: list[tuple[str, str]]) -> pd.DataFrame:
    """The incident in a few rows, in time order: the moments the findings cite (`story`), each with what
    the evidence says (cut at a word, never mid-word), the finding it stands for and the evidence to open."""
    if not cited:
        return pd.DataFrame(columns=["time", "zxid", "broker", "what", "finding", "evidence"])
    spark = timeline.sparkSession
    findings = spark.createDataFrame(cited, "ref string, finding string")
    first = Window.partitionBy("ref").orderBy("time")
    rows = (
        timeline.join(F.broadcast(findings), "ref")
        .withColumn("n", F.row_number().over(first))
        .where("n = 1")
        .orderBy(*in_order())
        .select(
            F.date_format("time", "yyyy-MM-dd HH:mm:ss.SSS").alias("time"),
            hex_col("zxid"),
            F.when(F.col("broker_id").isNotNull(), F.concat(F.lit("broker "), F.col("broker_id"))).alias(
                "broker"
            ),
            F.concat_ws(": ", "kind", F.regexp_replace("detail", r"\s+", " ")).alias("what"),
            "finding",
            F.col("ref").alias("evidence"),
        )
    )
    table: pd.DataFrame = rows.toPandas()
    table = table.fillna("")
    table["what"] = table["what"].map(lambda s: _cut(str(s), 110))
    table["evidence"] = table["evidence"].map(readable_ref)
    return table


def _cut(text: str, width: int) -> str:
    """At most `width` characters, cut after a whole word."""
    return text if len(text) <= width else text[: width - 1].rsplit(" ", 1)[0] + " …"


# -- as Markdown, for the template --------------------------------------------------------------------
def impact_markdown(hurt: Impact) -> str:
    if not hurt.measured and hurt.outages:
        (o,) = hurt.outages.values()
        lines = [
            f"- **Partitions {OUTAGES['unserved']}**: not measured on every partition (without ZooKeeper's "
            f"txn logs there is no history of leaders); the findings below tell {o.partitions} partition "
            f"outage(s) from {' and '.join(hurt.still_by)}, the longest for {bounds(*o.longest_ms)}; "
            + f"{_still(hurt)}.",
            f"- **Clients affected**: {clients(hurt)}",
        ]
    elif not hurt.measured:
        lines = [
            "Not measured: without ZooKeeper's txn logs there is no history of leaders to measure it on"
            + (f"; {_still(hurt)}." if hurt.still else ".")
        ]
    elif not hurt.partitions:
        lines = ["- **Partitions without an acting leader**: none in the history read."]
    else:
        lines = [
            f"- **Partitions {OUTAGES[k]}**: {o.partitions}, of {', '.join(f'`{t}`' for t in o.topics)}; the "
            f"longest for {bounds(*o.longest_ms)}; "
            + (
                f"{o.still} still at the capture: {o.named}."
                if o.still
                else f"none at the capture ({o.named})."
            )
            for k, o in hurt.outages.items()
        ]
        lines.append(f"- **Clients affected**: {clients(hurt)}")
    lines += [f"- **Producers with acks=all held back**: {f.summary}" for f in hurt.held]
    if hurt.lost:
        lines += [f"- **Records lost**: {_first_sentence(f.summary)}" for f in hurt.lost]
    elif hurt.measured:
        lines.append(
            "- **Records lost**: none found (no unclean election, no truncation below a high watermark)."
        )
    return "\n".join(lines)


def clients(hurt: Impact) -> str:
    """What the outages did to producers and consumers, by how long the longest lasted against the
    producer's delivery timeout (`producer_retries_within_delivery_timeout`): where its bounds straddle the
    timeout, which sends failed is not known, and said so."""
    topics = ", ".join(f"`{t}`" for t in sorted({t for o in hurt.outages.values() for t in o.topics}))
    lower, upper = max((o.longest_ms for o in hurt.outages.values()), key=lambda b: (b[1], b[0]))
    timeout = duration(PRODUCER_DELIVERY_TIMEOUT_MS)
    which = f"those of {topics}" if topics else "those of the partitions the findings name"
    said = (
        f"{which}. Producers to those partitions got `NOT_LEADER_OR_FOLLOWER` or found no "
        f"leader and retried; consumers got nothing new from them. The longest outage lasted "
        f"{bounds(lower, upper)}. "
    )
    if upper < PRODUCER_DELIVERY_TIMEOUT_MS:
        return said + (
            f"That is within the producer's `delivery.timeout.ms` ({timeout} by default since 2.1, retries "
            "unbounded): with those settings their sends went through, late, once a leader served; a "
            "producer with a shorter delivery timeout, or `retries` set low, failed them."
        )
    failed = (
        f"Sends that waited longer than `delivery.timeout.ms` ({timeout} by default since 2.1) failed: "
        "those records were not written unless the application sent them again"
    )
    if lower >= PRODUCER_DELIVERY_TIMEOUT_MS:
        return said + failed + "."
    return said + (
        f"Whether it outlasted `delivery.timeout.ms` ({timeout} by default since 2.1) the evidence does not "
        "tell; if it did, sends that waited longer failed. The producers' send callbacks say which: a "
        "TimeoutException 'Expiring N record(s) for <partition>: ... ms has passed since batch creation'."
    )


def root_causes_markdown(groups: list[Group], alone: list[Finding]) -> str:
    """Each root cause with its evidence, and its symptoms under it; then the findings no root explains."""
    lines = []
    for g in groups:
        lines += [f"### {g.title}", "", f"**{g.root.severity}** `{g.root.kind}`: {g.root.summary}", ""]
        lines += [f"- evidence: `{e}`" for e in g.root.evidence[:6]]
        if g.symptoms:
            lines += ["", "Its symptoms:", ""]
            lines += [f"- `{f.kind}`: {_first_sentence(f.summary)}" for f in g.symptoms]
        lines.append("")
    if alone:
        lines += ["### Other findings", ""]
        lines += [f"- **{f.severity}** `{f.kind}`: {_first_sentence(f.summary)}" for f in alone]
    return (
        "\n".join(lines) if lines else "Triage found no root cause: nothing is wrong in what it could check."
    )


def bullets(items: list[str]) -> str:
    return "\n".join(f"- {i}" for i in items)
