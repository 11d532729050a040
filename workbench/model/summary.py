"""A bundle at a glance: rows of every DataFrame, how its log lines were typed, bad records by source and
reason, brokers and time span (`workbench load`)."""

from __future__ import annotations

from typing import Any

from pyspark.sql import functions as F

from workbench.frames import Bundle
from workbench.kafka.messages import source


def load_summary(bundle: Bundle) -> dict[str, Any]:
    """Row counts of every DataFrame, bad records by source and reason, brokers and time span."""
    area = F.substring_index(F.col("event"), ".", 1)
    by_logger = (  # in one parse (log_events is not cached, frames.Bundle); a row per logger
        bundle.log_events.groupBy("logger")
        .agg(
            F.count("*").alias("n"),
            F.count_if(F.col("event").isNull()).alias("untyped"),
            F.count_if(area == source.AREA).alias("from_source"),
            F.min("ts").alias("first"),
            F.max("ts").alias("last"),
            F.collect_set("broker_id").alias("ids"),
        )
        .collect()
    )
    n = sum(r.n for r in by_logger)
    first = min((r.first for r in by_logger if r.first is not None), default=None)
    last = max((r.last for r in by_logger if r.last is not None), default=None)
    untyped = sorted((r for r in by_logger if r.untyped), key=lambda r: (-r.untyped, r.logger or ""))
    typing = {
        "curated": n - sum(r.untyped + r.from_source for r in by_logger),
        "from_source": sum(r.from_source for r in by_logger),
        "untyped": sum(r.untyped for r in by_logger),
        "untyped_by_logger": [
            {"logger": r.logger, "count": r.untyped, "why": source.why_untyped(r.logger)}
            for r in untyped[:10]
        ],
    }
    counts = {name: n if name == "log_events" else getattr(bundle, name).count() for name in Bundle.FRAMES}
    bad = (
        bundle.bad_records.groupBy("source", "reason")
        .count()
        .orderBy(F.desc("count"), "source", "reason")
        .collect()
    )
    ids = bundle.datadir_files.where(F.col("broker_id").isNotNull()).select("broker_id").distinct().collect()
    brokers = sorted(
        {r.broker_id for r in ids}
        | {i for r in by_logger for i in r.ids}
        | set(bundle.manifest.get("brokers") or [])
    )
    return {
        "bundle": bundle.evidence.origin,
        "cluster": bundle.manifest.get("cluster"),
        "kafka_version": bundle.manifest.get("kafka_version"),
        "brokers": brokers,
        "first_event": first.isoformat(sep=" ") if first else None,
        "last_event": last.isoformat(sep=" ") if last else None,
        "log_files": len(bundle.evidence.log_files),
        "log_dirs": len(bundle.evidence.log_dirs),
        "rows": counts,
        "events_typed": typing,
        "files_not_read": [
            {"file": n.file, "why": n.why, "evidence": not n.known} for n in bundle.evidence.not_read
        ],
        "bad_records_by_reason": [{"source": r.source, "reason": r.reason, "count": r["count"]} for r in bad],
    }
