"""What the bundle holds, per kind, from its file list alone (no Spark): which brokers have logs and data
dirs, whether there is ZooKeeper state and history, the Kafka version, the capture's time and each
broker's server.properties."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from workbench.bundle import Evidence


@dataclass(frozen=True)
class Held:
    """What the bundle holds, per kind, from its file list alone (no Spark)."""

    brokers: frozenset[int]  # every broker the bundle names (manifest, logs, data dirs)
    with_logs: frozenset[int]
    with_datadirs: frozenset[int]
    zk_state: bool  # a capture or snapshots: ZooKeeper's tree
    zk_history: bool  # txn logs: ZooKeeper's changes
    pasted: bool  # pasted/: kafka-topics --describe, ZooKeeper shell transcripts
    kafka_version: str | None
    captured_ms: int | None
    configs: dict[int, dict[str, str]]  # server.properties per broker, where present
    appenders: dict[int, frozenset[str]] = field(default_factory=dict)  # per broker: server, controller, ...
    config_files: dict[int, str] = field(default_factory=dict)  # the file each broker's config was read from

    def without_logs(self, brokers: set[int] | frozenset[int]) -> list[int]:
        return sorted(set(brokers) - self.with_logs)

    def config(self, key: str, default: str) -> dict[int, str]:
        """A broker config per broker that has server.properties (the default elsewhere is Kafka's)."""
        return {b: c.get(key, default) for b, c in self.configs.items()}

    def agreed(self, key: str, default: str) -> str:
        """The brokers' setting where their server.properties agree on it, else Kafka's default."""
        values = set(self.config(key, default).values())
        return values.pop() if len(values) == 1 else default


def lacking(ev: Held, appender: str, what: str) -> list[str]:
    """Coverage's word where no broker's `appender`.log is in the bundle: the log Kafka's shipped
    log4j.properties sends `what` to (kafka.controller to controller.log, state.change.logger to
    state-change.log, the rest to server.log: config/log4j.properties 0.10.2.2:64-82, 2.8.2:64-86)."""
    if any(appender in held for held in ev.appenders.values()):
        return []
    return [f"{appender}.log, where Kafka logs {what}: no broker's is in the bundle"]


def _read_properties(path: Path) -> dict[str, str]:
    """server.properties as java.util.Properties reads it: key, then "=", ":" or white space, then the
    value; a key alone has an empty value; a key given twice keeps its last."""
    out: dict[str, str] = {}
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return out
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith(("#", "!")):
            m = re.match(r"^([^=:\s]+)(?:\s*[=:]\s*|\s+)?(.*)$", line)
            if m:
                out[m.group(1)] = m.group(2).strip()
    return out


def evidence_of(files: Evidence) -> Held:
    """The bundle's evidence at a glance, from its files (`bundle.Evidence`)."""
    with_logs = frozenset(f.broker_id for f in files.log_files if f.broker_id is not None)
    with_dirs = frozenset(d.broker_id for d in files.log_dirs if d.broker_id is not None)
    named = {b for b in files.manifest.get("brokers") or [] if isinstance(b, int)}
    captured = None
    at = files.manifest.get("captured_at")
    if isinstance(at, str):
        try:
            captured = int(datetime.fromisoformat(at.replace("Z", "+00:00")).timestamp() * 1000)
        except ValueError:
            captured = None
    configs = {b: _read_properties(p) for b, p in sorted(files.server_properties.items())}
    config_files = {b: p.relative_to(files.root).as_posix() for b, p in files.server_properties.items()}
    return Held(
        brokers=frozenset(named | with_logs | with_dirs),
        with_logs=with_logs,
        with_datadirs=with_dirs,
        zk_state=files.znodes_jsonl is not None or bool(files.zk_files),
        zk_history=any(f.kind == "log" for f in files.zk_files),
        pasted=bool(files.pasted),
        kafka_version=files.manifest.get("kafka_version") if isinstance(files.manifest, dict) else None,
        captured_ms=captured,
        configs=configs,
        config_files=config_files,
        appenders={
            b: frozenset(f.log for f in files.log_files if f.broker_id == b) for b in sorted(with_logs)
        },
    )
