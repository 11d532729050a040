"""The deletion findings made without ZooKeeper's state: what a paste shows marked for deletion
(`deletion.marked`) and the deletions the controller's lines show begun and not completed
(`deletion.unfinished`). Plain Python, part of the deletion analysis (`deletion.judge`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from workbench.analysis.contract import CRITICAL, WARNING
from workbench.analysis.findings import Coverage, Finding, file_ref, first_refs, moment, taken
from workbench.model.deletion_log import Unfinished
from workbench.model.described import Marked
from workbench.model.refs import Said


def pasted(rows: list[Marked], coverage: Coverage, check: str) -> list[Finding]:
    """deletion.marked: what each paste shows marked, with the replicas still on disk."""
    if not rows:
        return []
    coverage.add(check, used=["the topics a pasted output shows marked for deletion"])
    out = []
    for r in rows:
        on_disk = r.replicas_left
        dirs = (
            f"; the data dirs in the bundle still hold {len(on_disk)} live replica(s) of it "
            f"({', '.join(first_refs(on_disk, 6))})"
            if on_disk
            else ""
        )
        subject: dict[str, Any] = {"topic": r.topic, "taken_at": moment(r.taken_at), "replicas_left": on_disk}
        refs = [file_ref(r.file, r.line_no)]
        down, reg = r.left_unregistered, r.registered
        held = ""
        if down and reg is not None:  # `offline_replicas_halt_deletion`, `halted_deletion_resumes`
            names = ", ".join(map(str, down))
            subject["brokers_down"] = down
            refs.append(file_ref(reg.file, reg.line_no))
            held = (
                f" Broker(s) {names} hold replicas of it and were not registered when `ls /brokers/ids` "
                f"was {taken(reg.taken_at)}: the controller deletes no replica on a broker that is not live, "
                f"so the deletion waits until broker(s) {names} start again (or a replacement with the same "
                "broker.id)."
            )
        out.append(
            Finding(
                "deletion.marked",
                WARNING,
                subject,
                f"{r.topic} was marked for deletion when the paste was {taken(r.taken_at)} ({r.how}){dirs}."
                f"{held} Without ZooKeeper's tree and history, whether the controller went on to delete it "
                "is not known.",
                tuple(refs),
            )
        )
    return out


def unfinished_findings(
    unfinished: list[Unfinished], ends: datetime | None, marked: list[Marked] | None = None
) -> list[Finding]:
    """Without ZooKeeper's state: deletions the controller's lines show begun and not completed. Halted
    after its last (re)start, the deletion was stuck as far as the evidence goes (critical): the replies
    to requests already sent still come in, but only a "(re)started" line resumes it
    (TopicDeletionManager.resumeDeletions 2.8.2:342-344); else it was under way when the lines end.
    Whether it is still pending is ZooKeeper's marker, or a paste that shows the topic marked (`marked`)."""
    shown = {m.topic: m for m in marked or []}
    out = []
    for u in unfinished:
        began = "a controller found it pending at its start"
        if not u.pending_at_start:
            began = "the controller last (re)started it"
        text = f"Deletion of {u.topic} did not complete in the controller's lines: {began} at "
        text += f"{u.started.ts:%Y-%m-%d %H:%M:%S} (its clock)"
        refs = [u.started.ref]
        subject: dict[str, object] = {
            "topic": u.topic,
            "halted": u.halts,
            "pending_at_start": u.pending_at_start,
        }
        if u.held is not None:  # offline_replicas_halt_deletion, reassignment_blocks_deletion
            subject["held_at_start"] = True
            text += (
                " and held it back there, listing it ineligible for deletion (a replica of it offline: its "
                "broker not registered or its log dir failed; or a reassignment of it in progress), which it "
                "logs as no halt"
            )
            refs.append(u.held.ref)
        if u.halt is not None:
            why = "; ".join(u.halts) if u.halts else "no reason logged"
            text += f", and halted it at {u.halt.ts:%H:%M:%S} ({why})"
            refs.append(u.halt.ref)
        if u.failed:
            brokers = sorted({int(r.split("@")[1]) for r in u.failed})
            subject["failed_on"] = brokers
            text += f"; replica deletions failed on broker(s) {', '.join(map(str, brokers))} "
            text += f"({len(u.failed)} replica(s))"
        if u.errors:
            subject["errors"] = u.errors
            text += f"; brokers answered its StopReplica with {', '.join(u.errors)}"
        halted = u.halt is not None and _after(u.halt, u.started)
        until = f" (the evidence ends {ends:%Y-%m-%d %H:%M:%S})" if ends is not None else ""
        text += f". Its last line about it was at {u.last.ts:%H:%M:%S}{until}"
        if halted:
            text += ": no (re)start followed the halt, so it was stuck as far as the evidence goes"
        elif u.held is not None:  # halted_deletion_resumes
            text += (
                ": no (re)start followed, so it was stuck as far as the evidence goes (that replica's broker "
                "registering again, or that reassignment completing, resumes it)"
            )
        else:
            text += ": it was still under way when the lines end"
        refs.append(u.last.ref)
        paste = shown.get(u.topic)
        if paste is not None:
            text += f". A paste {taken(paste.taken_at)} shows it still marked for deletion ({paste.how})."
            refs.append(file_ref(paste.file, paste.line_no))
        else:
            text += ". Whether it is still pending needs ZooKeeper's /admin/delete_topics."
        severity = CRITICAL if halted or u.held is not None else WARNING
        out.append(Finding("deletion.unfinished", severity, subject, text, tuple(dict.fromkeys(refs))))
    return out


def _after(a: Said, b: Said) -> bool:
    """Line a comes after line b: by time, and by line within one file at the same millisecond."""
    return a.ts > b.ts or (a.ts == b.ts and a.file == b.file and a.line_no > b.line_no)
