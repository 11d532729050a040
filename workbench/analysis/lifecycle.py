"""Topic lifecycle: how each topic came to be, and whether its layout and name are ones Kafka makes.

- `creations` (`model/creations.py`): every topic creation and partition addition in ZooKeeper's history,
  with the brokers then registered and whose session wrote it; else each creation the controllers' lines
  show, with the brokers then live.
- Findings, in two halves (`facts` asks Spark, `judge` words them in plain Python):
  - `topic.manual_assignment`: replicas Kafka's default assignment could not have given over the brokers
    then registered, for any start index and replica shift, rack aware or in any broker order
    (`kafka.assignment`): made by hand (--replica-assignment) or by a tool;
  - `topic.rack_concentrated`: a partition with every replica on one rack while the brokers span several;
  - `topic.auto_created`: a topic znode created by the session of a broker that was not the controller
    then. A CreateTopics request is served by the active controller only (any other broker answers
    NOT_CONTROLLER: KafkaApis.handleCreateTopicsRequest, 2.5.1:1656, 2.8.2:1729, 3.6.2:1905), while an
    automatic creation (auto.create.topics.enable, a client's Metadata request naming a missing topic) is
    written by the broker that received the request, through its own ZooKeeper client
    (AutoTopicCreationManager.createTopicsInZk, 2.8.2:129, 3.6.2:109; KafkaApis.createTopic at 2.5.1),
    unless ZooKeeper migration enables forwarding (3.4+, `zookeeper.metadata.migration.enable`). One made
    by the controller's own broker cannot be told from a CreateTopics request, so it is not guessed. The
    2.5 brokers' "Auto creation of topic" lines are read too; no version names the client at INFO;
  - `topic.name_collision` and `topic.invalid_name`: names Kafka's Topic rules refuse (`kafka.names`),
    which only a tool writing ZooKeeper directly gets past.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, TypeVar

from pyspark.sql import DataFrame, Row
from pyspark.sql import functions as F

from workbench.analysis.contract import INFO, WARNING, Analysis, Kind, Need
from workbench.analysis.findings import Coverage, Finding, file_ref, txn_ref, zk_ref
from workbench.kafka import behaviour
from workbench.kafka import znodes as paths
from workbench.kafka.names import LEGAL_CHARS, MAX_NAME_LENGTH, invalid_topic_message
from workbench.model.creations import creations, not_default, rack_concentrated, topic_names
from workbench.model.elections import elections
from workbench.model.views import views
from workbench.together import Ask, count, rows, together

if TYPE_CHECKING:
    from workbench.frames import Bundle

S = TypeVar("S")
SHOWN = 10  # topics named in a finding's text; the count says how many there are


# -- facts (Spark) ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Assigned:
    """A creation (first_partition 0) or partition addition Kafka's default assignment could not give, and
    the txn or the controller's line that tells it."""

    zxid: int | None  # None: a line tells it, which does not say who wrote it
    topic: str
    by: int | None  # the broker whose own session wrote it; None: a tool's (or not known)
    first_partition: int
    why: str
    ref: str


@dataclass(frozen=True)
class OnOneRack:
    topic: str
    rack: str
    n: int  # its partitions with every replica on `rack`


@dataclass(frozen=True)
class Written:
    """A topic znode a broker's own session created while another broker (or none) was the controller."""

    topic: str
    zxid: int
    time: datetime
    by: int
    controller: int | None


@dataclass(frozen=True)
class Logged:
    """A broker's first line saying it created the topic automatically (2.5's wording)."""

    topic: str
    ts: datetime
    broker_id: int
    file: str
    line_no: int


@dataclass(frozen=True)
class Facts:
    history: bool  # ZooKeeper's history was read: who wrote each topic znode, and with what assignment
    older: int  # topics now whose creation neither ZooKeeper's history nor the controllers' lines hold
    from_lines: int  # creations and additions read from the controllers' lines (no txn holds them)
    unjudged: int  # creations and additions after a gap over a tree not known: the brokers then unknown
    pre_28: bool
    with_logs: bool
    migration: bool  # zookeeper.metadata.migration.enable: automatic creations go to the controller
    manual: tuple[int, int, list[Assigned]]  # creations and additions, topics, the first SHOWN
    concentrated: tuple[int, int, list[OnOneRack]]  # partitions, topics, the first SHOWN topics
    written: list[Written]  # oldest first
    logged: list[Logged]
    invalid: list[tuple[str, str]]  # topic, a path it was seen at; the first SHOWN + 1
    collisions: list[list[str]]  # names equal but for '.' and '_'; the first SHOWN + 1 groups


def facts(bundle: Bundle) -> Facts:
    """What the findings need, asked of Spark at once: assignments not Kafka's, rack concentration, who
    wrote each topic znode and the brokers' lines, names Kafka refuses."""
    v = views(bundle)
    made = creations(bundle)
    # the topics now whose creation neither ZooKeeper's history nor the controllers' lines tell
    older = v.topics.join(made.where(F.col("first_partition") == 0).select("topic"), "topic", "left_anti")
    migration = any(
        c.get("zookeeper.metadata.migration.enable") == "true" for c in v.evidence.configs.values()
    )
    on_one = rack_concentrated(bundle)
    never_created = count(older)
    unjudged = count(made.where(~F.col("brokers_known")))
    from_lines = count(made.where(F.col("zxid").isNull()))
    manual = Ask(_manual(made), _counted(Assigned))
    concentrated = Ask(_concentrated(on_one) if on_one is not None else None, _counted(OnOneRack))
    written = Ask(
        _written_by_a_broker_not_controller(bundle, made) if not migration else None,
        lambda rs: [Written(**r.asDict()) for r in rs],
    )
    logged = Ask(_logged(bundle), lambda rs: [Logged(r.topic, **r.first.asDict()) for r in rs])
    refused = rows(_refused_names(topic_names(bundle)))
    got = together(never_created, unjudged, from_lines, manual, concentrated, written, logged, refused)
    names = got[refused][0]
    return Facts(
        history=v.watched_history is not None,
        older=got[never_created],
        unjudged=got[unjudged],
        from_lines=got[from_lines],
        pre_28=(behaviour.parse(v.evidence.kafka_version) or (2, 8)) < (2, 8),
        with_logs=bool(v.evidence.with_logs),
        migration=migration,
        manual=got[manual],
        concentrated=got[concentrated],
        written=got[written],
        logged=got[logged],
        invalid=[(r.topic, r.path) for r in names.invalid],
        collisions=[list(r.topics) for r in names.clashes],
    )


def _counted(of: Callable[..., S]) -> Callable[[list[Row]], tuple[int, int, list[S]]]:
    """How a one-row count is read: (n, topics, the first SHOWN), (0, 0, []) with no row."""
    return lambda rs: (
        (rs[0].n or 0, rs[0].topics, [of(**s.asDict()) for s in rs[0].some]) if rs else (0, 0, [])
    )


def _manual(made: DataFrame) -> DataFrame:
    """One row: creations whose assignment is not Kafka's (n), their topics, the first SHOWN: ZooKeeper's
    in zxid order, then the lines' in time order."""
    found = F.struct("zxid", "topic", "by", "first_partition", "why", "ref")
    in_order = F.struct(F.coalesce("zxid", F.lit(2**62)).alias("o"), "time", found.alias("a"))
    return not_default(made).agg(
        F.count("*").alias("n"),
        F.count_distinct("topic").alias("topics"),
        F.transform(F.slice(F.sort_array(F.collect_list(in_order)), 1, SHOWN), lambda x: x["a"]).alias(
            "some"
        ),
    )


def _concentrated(on_one: DataFrame) -> DataFrame:
    """One row: partitions on one rack (n), their topics, the first SHOWN topics and racks."""
    return (
        on_one.groupBy("topic", "rack")
        .agg(F.count("*").alias("n"))
        .agg(
            F.sum("n").alias("n"),
            F.count("*").alias("topics"),
            F.slice(F.sort_array(F.collect_list(F.struct("topic", "rack", "n"))), 1, SHOWN).alias("some"),
        )
    )


def _written_by_a_broker_not_controller(bundle: Bundle, made: DataFrame) -> DataFrame:
    """Topic creations whose znode a broker's own session wrote while another broker was the controller."""
    e = elections(bundle).select(
        F.col("zxid").alias("e_zxid"), F.col("broker").alias("controller"), F.col("gone_zxid").alias("e_gone")
    )
    created = made.where((F.col("first_partition") == 0) & F.col("by").isNotNull()).select(
        "topic", "zxid", "time", "by", "brokers_known"
    )
    during = (F.col("e_zxid") < F.col("zxid")) & (
        F.col("e_gone").isNull() | (F.col("zxid") < F.col("e_gone"))
    )
    return (  # one row per automatic creation
        created.join(e, during, "left")
        .groupBy("topic", "zxid", "time", "by", "brokers_known")
        .agg(F.max("controller").alias("controller"))
        .where(  # no controller: only where the history shows who was (not after a gap over a tree unknown)
            (F.col("controller").isNull() & F.col("brokers_known")) | (F.col("controller") != F.col("by"))
        )
        .select("topic", "zxid", "time", "by", "controller")
        .orderBy("zxid")
    )


def _logged(bundle: Bundle) -> DataFrame:
    """The first "Auto creation of topic" line of each topic (2.5 logs one; later versions do not)."""
    return (  # one row per topic created automatically
        bundle.cluster_events.where(F.col("event") == "topic.auto_created")
        .groupBy("topic")
        .agg(
            F.min_by(F.struct("ts", "broker_id", "file", "line_no"), F.struct("ts", "file", "line_no")).alias(
                "first"
            )
        )
    )


def _refused_names(names: DataFrame) -> DataFrame:
    """One row: the names Kafka refuses (with where each was seen) and the groups that collide once '.'
    and '_' are one (unify_collision_chars), the first SHOWN + 1 of each by name."""
    valid = (
        F.col("topic").rlike(f"^{LEGAL_CHARS}+$")
        & ~F.col("topic").isin(".", "..")
        & (F.length("topic") <= MAX_NAME_LENGTH)
    )
    return (
        names.groupBy("topic")
        .agg(F.min("path").alias("path"))
        .groupBy(F.translate("topic", ".", "_").alias("unified"))
        .agg(
            F.sort_array(F.collect_list("topic")).alias("topics"),
            F.collect_list(F.when(~valid, F.struct("topic", "path"))).alias("bad"),
        )
        .agg(
            F.slice(F.sort_array(F.flatten(F.collect_list("bad"))), 1, SHOWN + 1).alias("invalid"),
            F.slice(
                F.sort_array(F.collect_list(F.when(F.size("topics") > 1, F.struct("unified", "topics")))),
                1,
                SHOWN + 1,
            ).alias("clashes"),
        )
    )


# -- findings (plain Python) ---------------------------------------------------------------------------
def judge(f: Facts, coverage: Coverage) -> list[Finding]:
    """Assignments not Kafka's, rack concentration, automatic creations, colliding and invalid names, and
    what the evidence let it check; whether topics were created automatically is a check of its own
    (topic_auto_creation). Plain Python: tested from hand-written facts."""
    if f.older:
        coverage.add(
            "topic_lifecycle",
            [
                f"the creation of {f.older} topic(s), which neither ZooKeeper's history nor the controllers' "
                "lines hold: not checked"
            ],
        )
    if f.from_lines:
        coverage.add(
            "topic_lifecycle",
            used=[f'the active controllers\' "New topics" lines: {f.from_lines} assignment(s) no txn holds'],
        )
    if f.unjudged:
        coverage.add(
            "topic_lifecycle",
            [
                f"the assignment of {f.unjudged} creation(s) or addition(s) after a gap in ZooKeeper's "
                "history: not checked (which brokers were registered then is not known)"
            ],
        )
    auto_used = ["ZooKeeper's history (who wrote each topic znode)"] if f.history else []
    if f.pre_28 and f.with_logs:
        auto_used.append("broker logs")
    auto_missing = [] if auto_used else ["ZooKeeper's txn logs (zk/txnlog/): who wrote each topic znode"]
    if f.migration:
        auto_missing.append("ZooKeeper migration forwards automatic creations to the controller")
    coverage.record("topic_auto_creation", auto_used, auto_missing, needed=bool(auto_used))
    return [*_manual_finding(f), *_concentrated_finding(f), *_auto_created(f), *_names(f)]


ANALYSIS = Analysis(
    "topic_lifecycle",
    needs={Need.ZK_STATE: "the topics and their assignments"},
    wants={Need.ZK_HISTORY: "who created each topic"},
    facts=facts,
    judge=judge,
    checks=("topic_auto_creation",),
    reads=(
        "creations",
        "topics",
        "partitions",
        "delete_markers",
        "watched_history",
        "history_base",
        "brokers_known",
        "registrations",
        "elections",
        "live_brokers",
        "skew",
    ),
    kinds=(
        Kind("topic.manual_assignment", (INFO,), {"topics": int}),
        Kind("topic.rack_concentrated", (WARNING,), {"partitions": int, "topics": int}),
        Kind("topic.auto_created", (INFO,), {"topics": int}),
        Kind("topic.invalid_name", (WARNING,), {"topics": int}),
        Kind("topic.name_collision", (WARNING,), {"groups": int}),
    ),
)
findings = ANALYSIS.findings


def _manual_finding(f: Facts) -> list[Finding]:
    n, topics, some = f.manual
    if not n:
        return []
    shown = "; ".join(
        f"{s.topic} ({'created' if s.first_partition == 0 else f'partitions from {s.first_partition} added'} "
        f"{_by(s)}: {s.why})"
        for s in some
    )
    return [
        Finding(
            "topic.manual_assignment",
            INFO,
            {"topics": topics},
            f"{n} topic creation(s) or partition addition(s) in {topics} topic(s) have replicas "
            "that Kafka's default assignment could not have given over the brokers registered then (no "
            "start index and replica shift, rack aware or in any broker order, gives them): assigned by hand "
            f"(--replica-assignment) or by a tool. {shown}{' ...' if n > SHOWN else ''}",
            tuple(s.ref for s in some[:3]),
        )
    ]


def _by(a: Assigned) -> str:
    """Who wrote it: a broker's own session or a tool's, where ZooKeeper's txn tells it."""
    if a.by is not None:
        return f"by broker {a.by}"
    return "by a tool" if a.zxid is not None else "as the controller logged it, by a writer no line names"


def _concentrated_finding(f: Facts) -> list[Finding]:
    n, topics, some = f.concentrated
    if not n:
        return []
    shown = ", ".join(f"{s.topic} ({s.n} on rack {s.rack})" for s in some)
    return [
        Finding(
            "topic.rack_concentrated",
            WARNING,
            {"partitions": n, "topics": topics},
            f"{n} partition(s) of {topics} topic(s) keep every replica on one rack, though the "
            f"registered brokers span several: losing that rack takes them offline. {shown}"
            f"{' ...' if topics > SHOWN else ''}",
            tuple(zk_ref(paths.topic_path(s.topic)) for s in some[:3]),
        )
    ]


def _auto_created(f: Facts) -> list[Finding]:
    """Automatic creations: from who wrote the topic znode (any version), and the 2.5 brokers' lines."""
    said: dict[str, tuple[str, list[str]]] = {}
    for w in f.written:
        controller = f"broker {w.controller} was the controller" if w.controller is not None else (
            "no controller was elected"
        )  # fmt: skip
        said[w.topic] = (
            f"{w.topic} (written by broker {w.by}'s own ZooKeeper session at zxid {w.zxid:#x}, "
            f"{w.time:%Y-%m-%d %H:%M:%S} ZooKeeper time, while {controller})",
            [txn_ref(w.zxid)],
        )
    for g in f.logged:
        text, refs = said.get(g.topic, (f"{g.topic} (broker {g.broker_id}, {g.ts:%Y-%m-%d %H:%M:%S})", []))
        said[g.topic] = (text, [*refs, file_ref(g.file, g.line_no)])
    if not said:
        return []
    shown = [said[t] for t in sorted(said)[:SHOWN]]
    return [
        Finding(
            "topic.auto_created",
            INFO,
            {"topics": len(said)},
            f"{len(said)} topic(s) were created automatically (auto.create.topics.enable: a client's "
            f"Metadata request named a topic that did not exist): {', '.join(t for t, _ in shown)}"
            f"{' ...' if len(said) > SHOWN else ''}. Only the controller serves a CreateTopics request; "
            "the broker's log does not name the client (only kafka.request.logger does, at DEBUG).",
            tuple(ref for _, refs in shown[:3] for ref in refs),
        )
    ]


def _names(f: Facts) -> list[Finding]:
    out = []
    if f.invalid:
        out.append(
            Finding(
                "topic.invalid_name",
                WARNING,
                {"topics": len(f.invalid)},
                "Topic name(s) Kafka refuses, written to ZooKeeper by a tool that bypassed its checks: "
                + "; ".join(f"{t!r}: {invalid_topic_message(t)}" for t, _ in f.invalid[:SHOWN]),
                tuple(zk_ref(path) for _, path in f.invalid[:3]),
            )
        )
    if f.collisions:
        out.append(
            Finding(
                "topic.name_collision",
                WARNING,
                {"groups": len(f.collisions)},
                "Topics whose names differ only in '.' and '_' share their metric names, so their metrics "
                "collide; Kafka refuses to create one while the other exists: "
                + "; ".join(" and ".join(c) for c in f.collisions[:SHOWN]),
                tuple(zk_ref(paths.topic_path(t)) for t in f.collisions[0][:3]),
            )
        )
    return out
