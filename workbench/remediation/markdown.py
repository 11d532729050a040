"""PLAN.md: the plan for the people who run it: what is wrong, what to check first, what each step does to
leadership and availability (the forecast), how to undo it, and what the plan leaves alone."""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench import hazards
from workbench.analysis.findings import ranges
from workbench.remediation.forecast import TP, Forecast, during
from workbench.remediation.scripts import expected

if TYPE_CHECKING:
    from workbench.remediation.planner import RepairPlan

WARNING = (
    "This repair is not lossless for availability: each restart moves the broker's leaders away and "
    "clients see errors and retries while it is down; the forecast below says, step by step, which "
    "partitions are without an acting leader and for how long. Segments and offsets are not touched."
)


def _unforeseen() -> str:
    """The warning of a plan without a forecast: what it cannot say, and who says it instead."""
    first, _ = WARNING.split(";", 1)
    return (
        first + "; without ZooKeeper's state this plan cannot say which partitions are left without an "
        "acting leader: each script reads ZooKeeper and asks before it stops its broker. "
        + WARNING.rsplit(". ", 1)[-1]
    )


def summary(p: RepairPlan, gaps: bool = True) -> str:
    """One paragraph for the terminal (`gaps`: with what the plan could not cover; PLAN.md lists them)."""
    unsaid = "".join(" " + g for g in p.gaps) if gaps else ""
    if p.not_applicable:
        return f"No repair plan: {p.not_applicable}." + unsaid
    if not p.steps and p.recreated:
        return "Nothing this plan can repair: " + " ".join(p.recreated) + unsaid
    if not p.steps and p.current:
        return (
            f"No replica holds another id than the one the evidence names for {', '.join(sorted(p.current))}"
            ": nothing to repair there (the bundle has no ZooKeeper state to tell the other topics' ids)."
            + unsaid
        )
    if not p.steps:
        return "No replica holds a stale topic id: nothing to repair." + unsaid
    count = sum(len(s.replicas) for s in p.steps)
    topics = ", ".join(sorted({r.topic for s in p.steps for r in s.replicas}))
    order = ", ".join(f"broker {s.broker}" for s in p.steps)
    text = f"{count} stale replica(s) of {topics} on {len(p.steps)} broker(s); restart order: {order}."
    if p.current:
        text += (
            " The bundle has no ZooKeeper state: the current ids are those the brokers' refusals or "
            "pasted output name, and the order is by broker id, not forecast."
        )
    held = sorted({h.broker for h in p.hazards})
    if held:
        text += (
            f" Put right first what the findings about broker(s) {', '.join(map(str, held))} name (PLAN.md, "
            "Before you start): their scripts refuse to go on until it is."
        )
    f = p.forecast
    if f is not None:
        planned = [w for w in f.windows if w.start[0] > 0]
        if planned:
            text += f" {len(planned)} partition(s) without an acting leader during the plan (see PLAN.md)."
        else:
            text += " No partition loses its acting leader to the plan."
        now = f.windows_of(0)
        if now:
            gone = sum(1 for w in now if w.deleted)
            text += f" {len(now)} partition(s) have none at the capture" + (
                f", {gone} of them of topics queued for deletion whose deletion completes during the plan."
                if gone
                else "."
            )
    return text + unsaid


def in_report(p: RepairPlan | None, linked: str | None = None) -> str:
    """The report's repair section: the plan's summary, where its files are (`linked`: PLAN.md beside the
    page, else how to write them), and PLAN.md itself, its headings under the report's."""
    if p is None:
        return "No repair the workbench plans applies: see the action items."
    if p.not_applicable or not p.steps:
        return f"The topic-id repair plan: {summary(p)}"
    scripts = ", ".join(f"`{p.script_name(n, s)}`" for n, s in enumerate(p.steps, 1))
    where = (
        f"The plan is written beside this page: [{linked}]({linked}) and one script per broker ({scripts}), "
        "each run on its broker's host, a dry run unless given `--apply`."
        if linked
        else "`workbench remediate BUNDLE --out repair-plan` writes it: `repair-plan/PLAN.md` and one script "
        f"per broker ({scripts}), each run on its broker's host, a dry run unless given `--apply`."
    )
    plan = markdown(p).splitlines()[1:]  # its title is the report's section
    return "\n".join([where, "", *(f"##{line}" if line.startswith("#") else line for line in plan)])


def _tps(tps: list[TP] | set[TP]) -> str:
    by_topic: dict[str, list[int]] = {}
    for t, q in sorted(tps):
        by_topic.setdefault(t, []).append(q)
    return "; ".join(f"{t} {ranges(qs)}" for t, qs in by_topic.items())


def _forecast(p: RepairPlan, f: Forecast) -> list[str]:
    """What each step does, and the partitions without an acting leader, with how long."""
    lines = ["## What each step does (forecast)", ""]
    lines.append(
        "Played from ZooKeeper's state at the capture with Kafka's rules: a stopped broker's leaderships go "
        "to the first assigned replica alive and in the ISR; a replica with a stale id refuses them and "
        "keeps its old role; with nobody in the ISR left the partition is offline until its last ISR "
        "member is back; a follower rejoins only a leader that serves at ZooKeeper's epoch "
        "(`workbench/remediation/forecast.py`, facts in `workbench/kafka/behaviour.py`)."
    )
    lines.append("")
    stale = {x.tp for x in p.partitions if x.stale}
    for n, (step, s) in enumerate(zip(f.steps, p.steps, strict=True), 1):
        lines.append(f"**Step {n}, broker {s.broker}.**")
        refused = [m for m in step.moves if m.to >= 0 and not m.accepts]
        taken = [m for m in step.moves if m.to >= 0 and m.accepts]
        offline = [m for m in step.moves if m.to < 0]
        if taken:
            lines.append(f"- Its stop moves {_tps([m.tp for m in taken])} to replicas that accept.")
        if offline:
            lines.append(
                f"- {_tps([m.tp for m in offline])}: no other replica in the ISR, offline until it is back "
                "(it leads them again then)."
            )
        if refused:
            lines.append(
                f"- {_tps([m.tp for m in refused])}: leadership goes to a replica that will refuse it "
                "(no better order exists: see the windows below)."
            )
        if step.rejoins:
            mine = [tp for tp in step.rejoins if tp in stale]
            others = len(step.rejoins) - len(mine)
            shown = ", ".join(x for x in (_tps(mine), f"{others} other partition(s)" if others else "") if x)
            lines.append(f"- Back, it rejoins the ISR of {shown} (the script waits for it).")
        for k, tps in _by_value(step.later).items():
            when = f"only at step {k}" if k else "not within this plan"
            lines.append(f"- It gets back into the ISR of {_tps(tps)} {when}: the script does not wait.")
        if step.whole:
            lines.append(f"- Every replica of {_tps(step.whole)} is in the ISR again (the script waits).")
        if not (taken or offline or refused or step.rejoins or step.later or step.whole):
            lines.append("- Nothing it touches changes leadership or an ISR.")
        lines.append("")
    lines += ["### Partitions without an acting leader", ""]
    if not f.windows:
        lines += ["None: at every step each partition keeps a leader that serves.", ""]
        return lines
    lines += ["| partition | leader ZooKeeper names | without an acting leader |", "|---|---|---|"]
    for w in sorted(f.windows, key=lambda w: (w.start, w.tp)):
        leader = "none" if w.leader < 0 else f"broker {w.leader}"
        lines.append(f"| {w.tp[0]}-{w.tp[1]} | {leader} | {during(w, f.order)} |")
    lines.append("")
    window_steps = sorted({w.start[0] for w in f.windows if w.end and w.start == (w.end[0], "stopped")})
    if window_steps:
        lines.append(
            "Run step(s) "
            + ", ".join(map(str, window_steps))
            + " in a maintenance window: every replica of the partitions above is stale, so whichever "
            "order, they have no acting leader while their last leader restarts; this order keeps that to "
            "one restart."
        )
        lines.append("")
    if f.never_whole:
        lines.append(
            f"After the last step {_tps(f.never_whole)} still lack a replica in their ISR: see "
            "`workbench triage` for why (a broker down, a reassignment)."
        )
        lines.append("")
    return lines


def _by_value(later: dict[TP, int | None]) -> dict[int | None, list[TP]]:
    out: dict[int | None, list[TP]] = {}
    for tp, k in sorted(later.items()):
        out.setdefault(k, []).append(tp)
    return out


def _preflight(p: RepairPlan) -> list[str]:
    lines = ["## Before you start", ""]
    for n, s in enumerate(p.steps, 1):
        for h in hazards.of_broker(p.hazards, s.broker):
            where = ", ".join(f"`{o}`" for o in h.owned)
            where += "" if h.owned[0].startswith("/") else " in its log dirs"
            said = h.said()
            refs = ", ".join(e if e.startswith("...") else f"`{e}`" for e in h.evidence)
            lines.append(
                f"- **Put right first (step {n}):** {said[0].upper()}{said[1:]} Its script's `--check` and "
                f"`--apply` refuse to go on while broker {s.broker}'s user (`KAFKA_USER`, else the owner "
                f"of its log dir) does not own, or may not write in, {where}. Evidence: {refs}."
            )
    short = [x for x in p.partitions if len(set(x.isr)) < len(set(x.replicas))]
    if short:
        lines.append(
            f"- Under-replicated at the capture: {_tps([x.tp for x in short])}. Check them again now "
            "(`kafka-topics.sh --describe --under-replicated-partitions`, `--under-min-isr-partitions`): "
            "a partition short of more replicas than at the capture changes the forecast; capture again."
        )
    controller = next((s.broker for s in p.steps if s.controller), None)
    if controller is not None:
        n = next(i for i, s in enumerate(p.steps, 1) if s.broker == controller)
        lines.append(
            f"- The active controller was broker {controller} (step {n}). Before each step, check "
            "`/controller` (`zookeeper-shell.sh $ZOOKEEPER get /controller`): if it has moved, capture "
            "again, as the forecast assumes one failover, at that step."
        )
    refuses = [
        x
        for x in p.partitions
        if x.replicas and x.replicas[0] in x.stale and x.replicas[0] in x.isr and x.leader != x.replicas[0]
    ]
    if p.auto_rebalance is not False and refuses:
        lines.append(
            f"- `auto.leader.rebalance.enable` is {'on' if p.auto_rebalance else 'not known (on by default)'}"
            f": the controller may move {_tps([x.tp for x in refuses])} to their preferred replica, which is "
            "stale and in the ISR, and would refuse it. The order repairs those brokers early; until then "
            "watch those partitions, and do not run `kafka-leader-election.sh` during the plan."
        )
    if p.current:
        lines.append(
            "- This plan was made without ZooKeeper's state: which replicas are assigned, in the ISR or "
            "leaders, and so what each step takes offline, are not in the bundle. Run every script with "
            "`--check` before the first step; each `--apply` reads ZooKeeper before it stops its broker "
            "and asks about the partitions whose ISR is that broker alone."
        )
    lines += [
        "- Read the root cause in `workbench triage`: if a pre-2.8 tool (or a controller with "
        "inter.broker.protocol.version < 2.8) still rewrites topic znodes, stop it first, or the id "
        "changes again at the next controller failover.",
        "- Copy each script to its broker's host and run it with `--check` there: it verifies the host is "
        "that broker, every file still holds the stale id, and ZooKeeper still holds the new one and "
        "assigns the partition to that broker. If "
        "anything changed since the capture, capture again and make a new plan.",
        "- Each script with `--apply` says where `/controller` is, whether `auto.leader.rebalance.enable` "
        "is on (read from `SERVER_PROPERTIES` where set, else as the bundle says), which partitions "
        "ZooKeeper has now with its broker alone in the ISR (the forecast is of the capture), and which "
        "partitions its broker leads with no other ISR member (its controlled shutdown cannot move them: "
        "the broker retries, then logs "
        "'Proceeding to do an unclean shutdown', which is expected), and names the partitions the step "
        "takes offline and asks before it stops the broker (`--yes` for automation). If a wait runs out, "
        "put right what it names and run the script again with `--wait-only`: it waits again without "
        "restarting the broker.",
        "- Set what differs on your hosts: `KAFKA_BIN`, `ZOOKEEPER`, `STOP_BROKER`, `START_BROKER` "
        "(systemd unit `kafka` by default), `BACKUP_DIR`, `WAIT_SECONDS`, `SERVER_PROPERTIES`; for a "
        "ZooKeeper with TLS "
        "`ZK_TLS_CONFIG` (zookeeper-shell.sh `-zk-tls-config-file`, Kafka 2.5+), with SASL a JAAS file in "
        "`KAFKA_OPTS`.",
        "",
    ]
    return lines


def markdown(p: RepairPlan) -> str:
    m = p.manifest
    header = "current id" if p.current else "ZooKeeper's id"
    lines = [
        "# Topic id repair plan",
        "",
        f"Made by `workbench remediate` from `{p.bundle}`: cluster {m.get('cluster') or 'unknown'}, "
        f"Kafka {m.get('kafka_version') or 'unknown'}, captured {m.get('captured_at') or 'when unknown'}. "
        "The workbench writes these scripts and never runs them.",
        "",
        summary(p, gaps=False),
    ]
    if p.not_applicable or not p.steps:
        return "\n".join([*lines, *_not_in_plan(p), ""])
    lines += [
        "",
        "## What is wrong",
        "",
        f"| topic | {header} | id on disk | broker: partitions |",
        "|---|---|---|---|",
    ]
    by_id: dict[tuple[str, str, str], dict[int, list[int]]] = {}
    for s in p.steps:
        for r in s.replicas:
            by_id.setdefault((r.topic, r.zk_topic_id, r.disk_topic_id), {}).setdefault(s.broker, []).append(
                r.partition
            )
    for (topic, zk_id, disk_id), brokers in sorted(by_id.items()):
        held = "; ".join(f"{b}: {ranges(ps)}" for b, ps in sorted(brokers.items()))
        lines.append(f"| {topic} | {zk_id} | {disk_id} | {held} |")
    if p.current:
        lines += [
            "",
            *(f"The current id of {t} is the one named by {w}." for t, w in sorted(p.current.items())),
        ]
    lines += [
        "",
        "Each broker refuses the controller's LeaderAndIsr for these replicas (INCONSISTENT_TOPIC_ID) and "
        "keeps its old role: a follower stops following a new leader and leaves the ISR, and a replica "
        "made leader does not lead. Without `partition.metadata` the broker records ZooKeeper's id on a "
        "later LeaderAndIsr (Kafka 3.x when the restart loads the log; 2.8 only at the second request "
        "after the restart, so until then the dir has no partition.metadata and accepts any id). "
        "`leader-epoch-checkpoint` stays: after a clean shutdown Kafka does not rebuild the epoch cache, "
        "so without it a follower truncates to its high watermark (behaviour "
        "`leader_epochs_not_rebuilt_after_clean_shutdown`); the scripts remove it only with "
        "REMOVE_LEADER_EPOCH_CHECKPOINT=yes.",
        "",
        "## Warning",
        "",
        WARNING if p.forecast else _unforeseen(),
        "",
        *_preflight(p),
        "## Order (one broker at a time; each step waits before it says done)",
        "",
    ]
    for n, s in enumerate(p.steps, 1):
        parts = ", ".join(
            f"{t} {ranges(r.partition for r in s.replicas if r.topic == t)}"
            for t in sorted({r.topic for r in s.replicas})
        )
        notes = (
            [f"{len(s.replicas) - s.in_isr} of {len(s.replicas)} replica(s) already out of the ISR"]
            if all(r.in_isr is not None for r in s.replicas)
            else ["whether they are in the ISR is not in the bundle"]
        )
        if s.controller:
            notes.append("the active controller: its stop makes another broker controller")
        if not s.registered:
            notes.append("not registered at the capture (down): the files go before it starts")
        first = hazards.of_broker(p.hazards, s.broker)
        if first:
            kinds = ", ".join(dict.fromkeys(h.kind for h in first))
            notes.append(f"put right first what its findings ({kinds}) name: see Before you start")
        if s.internal:
            notes.append(f"INTERNAL TOPIC {', '.join(s.internal)}: its coordinators move during the restart")
        lines.append(f"{n}. `{p.script_name(n, s)}` on broker {s.broker}: {parts} ({'; '.join(notes)}).")
        lines.append(f"   - Expected: {expected(p, s.broker)}")
    lines += [
        "",
        "Each script waits until the broker is registered in `/brokers/ids`, every repaired dir has a "
        "`partition.metadata` with ZooKeeper's id (Kafka 3.x only), the broker is back in the ISRs "
        + (
            "the forecast says it rejoins at that step"
            if p.forecast
            else "of the partitions no later step holds a stale replica of (one that may lead and refuse)"
        )
        + " (`/brokers/topics/<t>/partitions/<p>/state`), and the partitions the step makes whole have "
        "every replica in their ISR. It stops and says what is missing after `WAIT_SECONDS`; do not "
        "start the next step until it says done.",
        "",
    ]
    if p.forecast is not None:
        lines += _forecast(p, p.forecast)
    lines += [
        "## Undo",
        "",
        "Each script copies the files into `$BACKUP_DIR/<LOG_DIR_n>/<topic>-<partition>/` before it "
        "removes them. To undo, stop the broker, copy them back with `cp -p`, and start it.",
        *_not_in_plan(p),
        "",
    ]
    return "\n".join(lines)


def _not_in_plan(p: RepairPlan) -> list[str]:
    notes = [
        f"- The topic znode of {t} has no topic_id: the next controller to start mints a new id, and every "
        "replica that recorded the old one will refuse it. Find what rewrote the znode first; this plan "
        "does not write ZooKeeper."
        for t in p.topics_without_id
    ]
    notes += [
        f"- Broker {r.broker} holds {r.dir_name} with the stale id {r.disk_topic_id} but is not in its "
        "assignment: left alone (see `deletion.stray_dir` in triage)."
        for r in p.left_alone
    ]
    notes += [f"- {r}" for r in p.recreated]
    notes += [f"- {g}" for g in p.gaps]
    return ["", "## Not in this plan", "", *notes] if notes else []
