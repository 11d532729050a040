"""Topics whose name is likely a typo of an older topic's: a producer (or a tool) wrote to a misspelt name
and a broker created it (`auto.create.topics.enable`), so the records went where no consumer reads.

A pair is a candidate when the newer name is one edit from the older (Levenshtein 1) or the older with two
neighbouring letters swapped, and the names differ in more than digits (`topic-1` and `topic-2` are a
series, not a typo) and in more than `.` against `_` (that is Kafka's own collision, `topic.name_collision`).
It is flagged only with a sign that nobody meant it: the newer topic was written by a broker's own
ZooKeeper session (an automatic creation, `lifecycle.creations`), or it has the brokers' default partition
count and replication factor (num.partitions, default.replication.factor) where the older has others.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from workbench.analysis.contract import WARNING, Analysis, Kind, Need
from workbench.analysis.findings import Coverage, Finding, zk_ref
from workbench.kafka import znodes as paths
from workbench.model.creations import creations
from workbench.model.views import views

if TYPE_CHECKING:
    from workbench.frames import Bundle

SHOWN = 20  # pairs named in findings


def _sorted_letters(name: Column) -> Column:
    return F.array_sort(F.split(name, ""))


def candidates(bundle: Bundle) -> DataFrame:
    """typo, sibling, the typo's partitions and replication factor and the sibling's, created (the
    typo's ctime), by (the broker whose session created it, where the history says): each pair of a
    newer name one slip from an older one."""
    t = views(bundle).topics.select(
        "topic",
        F.size(F.map_keys("assignment")).alias("partitions"),
        F.size(F.element_at(F.map_values("assignment"), 1)).alias("replication"),
        "ctime",
        "czxid",
    )
    t = t.where(~F.col("topic").startswith("__") & (F.length("topic") >= 4))
    a, b = t.alias("a"), t.alias("b")
    name, other = F.col("a.topic"), F.col("b.topic")
    distance = F.levenshtein(name, other)
    swapped = (
        (F.length(name) == F.length(other))
        & (distance == 2)
        & (_sorted_letters(name) == _sorted_letters(other))
    )
    series = F.regexp_replace(name, "[0-9]", "#") == F.regexp_replace(other, "[0-9]", "#")
    collision = F.translate(name, ".", "_") == F.translate(other, ".", "_")
    pairs = a.join(
        b,
        (F.col("a.czxid") > F.col("b.czxid")) & (F.abs(F.length(name) - F.length(other)) <= 1),
    ).where(((distance == 1) | swapped) & ~series & ~collision)
    made = creations(bundle).where(F.col("first_partition") == 0)
    by = made.groupBy("topic").agg(F.max_by("by", F.struct("zxid", "time")).alias("by"))
    return pairs.select(
        name.alias("typo"),
        other.alias("sibling"),
        F.col("a.partitions").alias("partitions"),
        F.col("a.replication").alias("replication"),
        F.col("b.partitions").alias("sibling_partitions"),
        F.col("b.replication").alias("sibling_replication"),
        F.col("a.ctime").alias("created"),
        F.col("a.czxid").alias("czxid"),
        swapped.alias("swapped"),
    ).join(by.withColumnRenamed("topic", "typo"), "typo", "left")


@dataclass(frozen=True)
class Pair:
    """A newer topic one slip from an older one (`candidates`), with what may show nobody meant it."""

    typo: str
    sibling: str
    partitions: int
    replication: int
    sibling_partitions: int
    sibling_replication: int
    created: datetime
    czxid: int
    swapped: bool  # two neighbouring letters swapped, else one edit apart
    by: int | None  # the broker whose own session created it (an automatic creation)


@dataclass(frozen=True)
class Facts:
    pairs: list[Pair]  # the first SHOWN, oldest first
    default: tuple[int, int] | None  # the brokers' num.partitions and default.replication.factor


def facts(bundle: Bundle) -> Facts:
    """The first SHOWN candidate pairs (one query), and the brokers' defaults where all agree on them."""
    v = views(bundle)
    partitions = set(v.evidence.config("num.partitions", "1").values()) or {"1"}
    replication = set(v.evidence.config("default.replication.factor", "1").values()) or {"1"}
    default = (
        (int(partitions.pop()), int(replication.pop()))
        if len(partitions) == len(replication) == 1 and all(x.isdigit() for x in (*partitions, *replication))
        else None
    )
    names = [f.name for f in dataclasses.fields(Pair)]
    rows = candidates(bundle).orderBy("created", "typo", "sibling").select(*names).limit(SHOWN).collect()
    return Facts([Pair(**r.asDict()) for r in rows], default)


def judge(facts: Facts, coverage: Coverage) -> list[Finding]:
    """A warning per likely typo, with the signs that nobody meant it; a pair without one is a name
    someone chose. Plain Python: tested from hand-written facts."""
    default = facts.default
    if not default:
        coverage.add("topic_typos", ["server.properties: num.partitions and default.replication.factor"])
    out = []
    for r in facts.pairs:
        signs = []
        if r.by is not None:
            signs.append(f"broker {r.by}'s own ZooKeeper session created it (an automatic creation)")
        shape, sibling_shape = (r.partitions, r.replication), (r.sibling_partitions, r.sibling_replication)
        if default is not None and shape == default and sibling_shape != default:
            signs.append(
                f"it has the brokers' defaults, {r.partitions} partition(s) and replication factor "
                f"{r.replication}, where {r.sibling} has {r.sibling_partitions} and {r.sibling_replication}"
            )
        if not signs:
            continue
        slip = "two letters swapped" if r.swapped else "one letter apart"
        out.append(
            Finding(
                "topic.likely_typo",
                WARNING,
                {"topic": r.typo, "sibling": r.sibling},
                f"Topic {r.typo} (created {r.created:%Y-%m-%d %H:%M:%S} ZooKeeper time) is likely a typo of "
                f"{r.sibling} ({slip}): {'; '.join(signs)}. Records written to it are where no consumer of "
                f"{r.sibling} reads.",
                (zk_ref(paths.topic_path(r.typo), czxid=r.czxid), zk_ref(paths.topic_path(r.sibling))),
            )
        )
    return out


ANALYSIS = Analysis(
    "topic_typos",
    needs={Need.ZK_STATE: "the topics"},
    wants={Need.ZK_HISTORY: "who created each topic"},
    facts=facts,
    judge=judge,
    reads=("creations", "topics"),
    kinds=(Kind("topic.likely_typo", (WARNING,), {"topic": str, "sibling": str}),),
)
findings = ANALYSIS.findings
