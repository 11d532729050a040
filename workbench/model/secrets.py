"""Credentials a bundle holds in clear: a bundle made by hand (a ZooKeeper dataDir copied, a broker's
server.properties, a pasted `get`) skips the redaction `capture` does, and must not be shared as it is.
Triage says so on its first lines. The secrets are those `capture.redact` replaces, by the same rules: a
SCRAM mechanism's credentials under /config/users/<user>, a PASSWORD-type config under /config/brokers/<id>
(kept there encrypted with password.encoder.secret, still not to leave the cluster) and in
server.properties.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pyspark.sql import DataFrame, Row
from pyspark.sql import functions as F

from workbench.capture.redact import (
    BROKERS,
    CONFIG_IN_CLEAR,
    SCRAM_IN_CLEAR,
    USERS,
    is_redacted,
    is_secret_config,
)
from workbench.model.views import views
from workbench.together import Ask

if TYPE_CHECKING:
    from workbench.frames import Bundle


@dataclass(frozen=True)
class InClear:
    """A file of the bundle that holds credentials in clear, and whose: znode paths or config keys."""

    file: str
    holds: tuple[str, ...]

    def said(self) -> str:
        shown = ", ".join(self.holds[:5]) + (
            f" and {len(self.holds) - 5} more" if len(self.holds) > 5 else ""
        )
        return f"{self.file} ({shown})"


def in_clear(bundle: Bundle) -> Ask[list[InClear]]:
    """Each file holding credentials in clear, by file name; one query over ZooKeeper's txns, tree and
    pastes (only the config znodes' rows leave Spark), server.properties read as the bundle holds it."""
    held = bundle.evidence
    parts = []
    if any(f.kind == "log" for f in held.zk_files):
        parts.append(bundle.znode_history.select("path", "data", "file"))
    if any(f.kind == "snapshot" for f in held.zk_files) or held.znodes_jsonl is not None:
        parts.append(_tree_files(bundle.znodes))
    if held.pasted:
        parts.append(bundle.znodes_observed.select("path", "data", "file"))
    by_file = None
    if parts:
        znodes = functools.reduce(DataFrame.unionByName, parts)
        path, data = F.col("path"), F.coalesce(F.col("data"), F.lit(""))
        secret = (path.rlike(USERS.pattern) & data.rlike(SCRAM_IN_CLEAR)) | (
            path.rlike(BROKERS.pattern) & data.rlike(CONFIG_IN_CLEAR)
        )  # a row per file holding secrets
        by_file = znodes.where(secret).groupBy("file").agg(F.sort_array(F.collect_set("path")).alias("p"))
    ev = views(bundle).evidence

    def read(rows: list[Row]) -> list[InClear]:
        found: dict[str, set[str]] = {r.file: set(r.p) for r in rows}
        for broker, config in sorted(ev.configs.items()):
            keys = [k for k, v in config.items() if is_secret_config(k) and v and not is_redacted(v.strip())]
            if keys:
                found.setdefault(ev.config_files[broker], set()).update(keys)
        return [InClear(f, tuple(sorted(h))) for f, h in sorted(found.items())]

    return Ask(by_file, read)


def _tree_files(znodes: DataFrame) -> DataFrame:
    """The tree's znodes with the file they come from: a snapshot holds those it had written by its zxid
    (later ones, and a tree replayed from txn logs alone, come from the txn logs read above); a
    capture's znodes.jsonl, all."""
    snapshot = F.regexp_extract("source", r"^(\S*snapshot\.[0-9a-fA-F]+)", 1)
    written_by = F.conv(F.regexp_extract(snapshot, r"snapshot\.([0-9a-fA-F]+)$", 1), 16, 10).cast("long")
    jsonl = F.col("source").endswith(".jsonl")
    return znodes.where(jsonl | ((snapshot != "") & (F.col("mzxid") <= written_by))).select(
        "path", "data", F.when(jsonl, F.col("source")).otherwise(snapshot).alias("file")
    )
