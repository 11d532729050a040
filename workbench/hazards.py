"""What must be put right before a broker starts again, from the findings about it: one list that the
repair plan checks before each step stops or starts its broker (PLAN.md, and each script's `--check`,
which refuses to go on) and that triage's next steps put before the steps that bring a broker back.

A broker that starts queues every '-delete' dir it finds for removal again
(`delete_dirs_queued_again_at_startup`); a removal that fails on an I/O error takes the log dir holding it
offline, with every replica in it, and the broker halts if that was its last log dir
(`failed_log_dir_takes_its_replicas_offline`). So a start on such a dir ends in a halt
`file.delete.delay.ms` later, after a script waiting only for the registration has said "done"."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from workbench.analysis.findings import Finding, Severity, ranges

# The kinds whose finding holds a broker's start back, and the analyses that emit them (`analyses`)
KINDS = ("deletion.lingering_dir", "log_dir.offline")


@dataclass(frozen=True)
class Hazard:
    """Something about `broker` to put right before it starts: what, what a start does otherwise, and
    where on its host the check looks (`owned`: names in each of its log dirs, globs, or absolute paths,
    that the broker's user must own and may write in)."""

    broker: int
    kind: str  # the finding's
    first: str
    otherwise: str
    owned: tuple[str, ...]
    evidence: tuple[str, ...]

    def said(self, kind: bool = True) -> str:
        """As PLAN.md says it (`kind`: naming the finding that shows it; the next steps name it beside)."""
        which = f" ({self.kind})" if kind else ""
        return f"before broker {self.broker} starts again, {self.first}{which}: {self.otherwise}."


def hazards(found: Iterable[Finding]) -> list[Hazard]:
    """Every hazard the findings show, by broker and kind: a '-delete' dir whose removal failed (its topic's
    dirs named: an error that is not the dirs' owner or permissions the check does not see, but the
    start still meets it), and a log dir that failed."""
    out = []
    for f in found:
        broker = f.subject.get("broker")
        if not isinstance(broker, int):
            continue
        if f.kind == "deletion.lingering_dir" and f.severity is Severity.CRITICAL:  # its removal failed
            topic, partitions = f.subject["topic"], f.subject["partitions"]
            out.append(
                Hazard(
                    broker,
                    f.kind,
                    f"give its user back its '-delete' dirs of {topic} (partitions {ranges(partitions)}: "
                    "their owner and permissions), or remove them by hand",
                    "as it starts it queues them for removal again; the removal fails file.delete.delay.ms "
                    "later and takes the log dir holding them offline, with every replica in it, and the "
                    "broker halts if that is its last log dir",
                    tuple(f"{topic}-{p}.*-delete" for p in partitions),
                    f.evidence,
                )
            )
        elif f.kind == "log_dir.offline" and isinstance(f.subject.get("log_dir"), str):
            where = f.subject["log_dir"]
            out.append(
                Hazard(
                    broker,
                    f.kind,
                    f"repair its failed log dir {where} (the error its finding quotes: its disk, or its "
                    "files' owner and permissions), or take it out of log.dirs",
                    "it fails the same way, and the broker halts if that is its last log dir",
                    (where,),
                    f.evidence,
                )
            )
    return sorted(set(out), key=lambda h: (h.broker, h.kind, h.owned))


def of_broker(found: Iterable[Hazard], broker: int) -> list[Hazard]:
    return [h for h in found if h.broker == broker]


def analyses() -> tuple[str, ...]:
    """The analyses whose findings can hold a broker's start back."""
    from workbench.analysis.registry import ANALYSES

    return tuple(a.name for a in ANALYSES if any(k.name in KINDS for k in a.kinds))
