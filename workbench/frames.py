"""An opened bundle as Spark DataFrames: the bundle's files (`bundle.Evidence`) joined to `sources/`.
It holds only DataFrames; what is derived from them is `model/` (views) and `analysis/` (findings).

Kept apart from `bundle.py`, which uses only the standard library so the broker-side collector can share it.
"""

from __future__ import annotations

import os
from dataclasses import replace
from functools import reduce
from typing import TYPE_CHECKING, Any

from workbench.bundle import ZNODES_JSONL, Evidence
from workbench.once import once

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

    from workbench.sources.datadirs import DataDirFrames
    from workbench.sources.pasted import PastedFrames


class Bundle:
    """An opened bundle: each DataFrame of DESIGN.md as a lazily loaded, cached property.

    `bundle.log_events`, `bundle.datadir_files`, ... read like the question a notebook cell asks.
    `bad_records` holds what every source could not parse, with a reason.
    """

    def __init__(self, evidence: Evidence, spark: SparkSession | None = None) -> None:
        self.evidence = evidence
        self._spark = spark

    def __enter__(self) -> Bundle:
        return self

    def __exit__(self, *_: object) -> None:
        self.release()

    def release(self) -> None:
        """Let go of what this bundle keeps in Spark (its cached frames, its views' checkpoints), and of
        nothing another bundle keeps: call it when done with a bundle in a long-lived session."""
        from workbench.model.views import forget

        forget(self)
        made = self.__dict__
        frames = [made["_kept_logs"]] if "_kept_logs" in made else []
        if "_datadirs" in made:
            frames += made["_datadirs"].frames()
        for frame in frames:
            frame.unpersist()

    def __repr__(self) -> str:
        return (
            f"<Bundle {self.evidence.origin}: {len(self.evidence.log_files)} log files, "
            f"{len(self.evidence.log_dirs)} log dirs>"
        )

    @once
    def spark(self) -> SparkSession:
        """The bundle's own session (`spark.planned_for`): the one it was opened with, or this process's,
        with the plans fitted to the bundle's size; that session's own settings stay as they were."""
        from workbench.spark import jit_for, planned_for, spark_session

        size = self.evidence.size_bytes()
        return planned_for(self._spark or spark_session(jit=jit_for(size)), size)

    @property
    def manifest(self) -> dict[str, Any]:
        return self.evidence.manifest

    @once
    def _parsed_logs(self) -> tuple[DataFrame, DataFrame]:
        from workbench.sources.logs import parse_logs

        return parse_logs(self.spark, self.evidence.log_files)

    @once
    def _kept_logs(self) -> DataFrame:
        """What is reused of the parse, cached: the bad lines, the cluster's events and the untyped lines
        of loggers whose lines should all be typed (not `messages.source.UNLISTED`'s). The rest of
        log_events (requests, fetch sessions, consumer groups: most of a busy broker's log) is parsed
        again when asked for, so that a bundle of many GB never has to fit in the cache."""
        from pyspark.sql import functions as F

        from workbench.kafka.messages import BACKGROUND_AREAS, source
        from workbench.spark import narrowed

        parsed = self._parsed_logs[0]  # starts Spark, which a column needs
        area = F.substring_index(F.col("event"), ".", 1)
        cluster = F.col("event").isNotNull() & ~area.isin(*BACKGROUND_AREAS)
        logger = F.coalesce(F.col("logger"), F.lit(""))
        noise = [logger.startswith(family) for family in source.UNLISTED]
        untyped = F.col("event").isNull() & ~reduce(lambda a, b: a | b, noise)  # a catalog's gap: few
        return narrowed(parsed.where(F.col("reason").isNotNull() | cluster | untyped)).cache()

    @once
    def _datadirs(self) -> DataDirFrames:
        from workbench.sources.datadirs import read_log_dirs

        return read_log_dirs(self.spark, self.evidence.log_dirs).cache()

    @property
    def log_events(self) -> DataFrame:
        """Every event of every log file, parsed again on each use (only `cluster_events` is cached)."""
        from workbench.sources.logs import events_of

        return events_of(self._parsed_logs[0])

    @once
    def cluster_events(self) -> DataFrame:
        """The typed events about the cluster's state, cached: log_events without untyped lines and the
        background areas (`kafka.messages.BACKGROUND_AREAS`). What every analysis reads, so the frame is
        made once (each making is a select Spark analyses and a few dozen round trips to the JVM)."""
        from pyspark.sql import functions as F

        from workbench.sources.logs import events_of

        return events_of(self._kept_logs).where(F.col("event").isNotNull())

    @once
    def untyped_lines(self) -> DataFrame:
        """The lines no template types, of loggers whose lines should all be typed (not those
        `messages.source.UNLISTED` says why), cached: what the catalog misses, said in coverage."""
        from pyspark.sql import functions as F

        from workbench.sources.logs import events_of

        return events_of(self._kept_logs).where(F.col("event").isNull())

    @once
    def _pasted(self) -> PastedFrames:
        from workbench.sources.pasted import read_pasted

        return read_pasted(self.spark, self.evidence.pasted)

    @property
    def partition_descriptions(self) -> DataFrame:
        """What pasted `kafka-topics --describe` output says of each partition, when it was taken."""
        return self._pasted.partition_descriptions

    @property
    def log_dir_descriptions(self) -> DataFrame:
        """What pasted `kafka-log-dirs --describe` output says of each broker's log dirs and replicas."""
        return self._pasted.log_dir_descriptions

    @property
    def znodes_observed(self) -> DataFrame:
        """The znodes pasted ZooKeeper shell transcripts and exports show, each as its command showed it:
        a few znodes at the moments they were taken, not ZooKeeper's tree (that is `znodes`)."""
        return self._pasted.znodes_observed

    @property
    def datadir_files(self) -> DataFrame:
        return self._datadirs.datadir_files

    @property
    def partition_metadata(self) -> DataFrame:
        return self._datadirs.partition_metadata

    @property
    def leader_epochs(self) -> DataFrame:
        return self._datadirs.leader_epochs

    @property
    def checkpoints(self) -> DataFrame:
        return self._datadirs.checkpoints

    @property
    def meta_properties(self) -> DataFrame:
        return self._datadirs.meta_properties

    @once
    def _zk_history(self) -> tuple[DataFrame, DataFrame]:
        from workbench.sources.zk_files import read_znode_history

        logs = [f for f in self.evidence.zk_files if f.kind == "log"]
        return read_znode_history(self.spark, logs)

    @once
    def _znodes(self) -> tuple[DataFrame, DataFrame]:
        if self.evidence.znodes_jsonl is not None:
            from workbench.sources.zk_dump import read_znodes_jsonl

            return read_znodes_jsonl(self.spark, self.evidence.znodes_jsonl, ZNODES_JSONL)
        return self.znodes_at(None)

    def znodes_at(self, zxid: int | None) -> tuple[DataFrame, DataFrame]:
        """ZooKeeper's tree as of a zxid, from zk/txnlog/: the newest snapshot holding no later change,
        plus the txns after it replayed (None: the newest state).
        Returns (znodes, bad records of the snapshot)."""
        from workbench.sources.zk_files import read_zk_state

        snaps = [f for f in self.evidence.zk_files if f.kind == "snapshot"]
        logs = [f for f in self.evidence.zk_files if f.kind == "log"]
        return read_zk_state(self.spark, snaps, logs, zxid)

    @property
    def znodes(self) -> DataFrame:
        return self._znodes[0]

    @property
    def znode_history(self) -> DataFrame:
        """Every txn the txn logs hold, as read; `views(bundle).history` is what the analyses read."""
        return self._zk_history[0]

    @property
    def txn_log_damage(self) -> DataFrame:
        """The txn logs' bad records: where each is damaged (file, byte offset) and why."""
        return self._zk_history[1]

    @property
    def datadir_bad_records(self) -> DataFrame:
        """The log dirs' bad records alone (cached with their frames): files a check could not read."""
        return self._datadirs.bad_records

    @once
    def bad_records(self) -> DataFrame:
        """Every source's bad records, one frame (made once: a union Spark analyses anew at each making)."""
        from workbench.sources.logs import bad_lines_of

        return (
            self._parsed_logs[1]
            .unionByName(bad_lines_of(self._kept_logs))
            .unionByName(self._datadirs.bad_records)
            .unionByName(self._znodes[1])
            .unionByName(self._zk_history[1])
            .unionByName(self._pasted.bad_records)
        )

    FRAMES = (
        "log_events",
        "datadir_files",
        "partition_metadata",
        "leader_epochs",
        "checkpoints",
        "meta_properties",
        "znodes",
        "znode_history",
        "partition_descriptions",
        "log_dir_descriptions",
        "znodes_observed",
        "bad_records",
    )


class View(Bundle):
    """A view of a whole bundle with part of its evidence left out: the brokers' lines are the whole's,
    parsed and cached once (properties, so that `release` leaves them to the whole bundle)."""

    def __init__(self, whole: Bundle, evidence: Evidence) -> None:
        super().__init__(evidence, whole.spark)
        self.whole = whole

    @property
    def _parsed_logs(self) -> tuple[DataFrame, DataFrame]:
        return self.whole._parsed_logs

    @property
    def _kept_logs(self) -> DataFrame:
        return self.whole._kept_logs


class Until(View):
    """The evidence as it stood at zxid `end`, the last txn before a gap in ZooKeeper's history: its txn
    logs up to `end`, its tree replayed there, and nothing else ZooKeeper's later state or the capture
    says (data dirs, pastes, the capture's time). The brokers' lines stay whole: the gap hides none, and
    what a failover before it did is logged after it. What the analyses find in it is what precedes the
    gap (`analysis.gaps.before_gaps`)."""

    def __init__(self, whole: Bundle, end: int) -> None:
        ev = whole.evidence
        manifest = {k: v for k, v in ev.manifest.items() if k != "captured_at"}
        files = [f for f in ev.zk_files if f.kind == "log" or f.zxid <= end]
        taken_later = replace(ev, log_dirs=[], znodes_jsonl=None, pasted=[], not_read=[])
        super().__init__(whole, replace(taken_later, manifest=manifest, zk_files=files))
        self.end = end

    @once
    def _zk_history(self) -> tuple[DataFrame, DataFrame]:
        from pyspark.sql import functions as F

        txns, damage = self.whole._zk_history
        return txns.where(F.col("zxid") <= self.end), damage

    @once
    def _znodes(self) -> tuple[DataFrame, DataFrame]:
        return self.znodes_at(self.end)


class WithoutZooKeeper(View):
    """The bundle as if its zk/ had not been captured: what an SRE holds who has only the brokers' logs,
    data dirs and pastes. A view of the whole bundle, as `Until` is, not a copy parsed again: it shares the
    whole's logs and data dirs, which are read only under brokers/ (`strays._placed`), never under zk/."""

    def __init__(self, whole: Bundle) -> None:
        evidence = Evidence.open(whole.evidence.root, without_zookeeper=True)
        super().__init__(whole, replace(evidence, origin=whole.evidence.origin))

    @property
    def _datadirs(self) -> DataDirFrames:
        return self.whole._datadirs


class WithoutTxnLogs(View):
    """The bundle as a capture through ZooKeeper's client gives it (`workbench capture`, kazoo): its tree
    and the brokers' evidence, without the txn logs only the server's disk holds. A view of the whole."""

    def __init__(self, whole: Bundle) -> None:
        ev = whole.evidence
        super().__init__(whole, replace(ev, zk_files=[f for f in ev.zk_files if f.kind != "log"]))

    @property
    def _datadirs(self) -> DataDirFrames:
        return self.whole._datadirs


def open_bundle(path: str | os.PathLike[str], spark: SparkSession | None = None) -> Bundle:
    """Open a bundle directory, a .tar.gz bundle or a bare Kafka log dir."""
    return Bundle(Evidence.open(path), spark)
