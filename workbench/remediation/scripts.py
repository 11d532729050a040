"""Each step of the plan as a reviewed shell script (`scripts/repair-broker.sh` filled in): it checks its
host, stops the broker, backs up and removes the stale files, starts it, and waits for what the forecast
says the step brings about, and for nothing it cannot."""

from __future__ import annotations

import re
import textwrap
from importlib import resources
from typing import TYPE_CHECKING

from workbench import hazards
from workbench.analysis.findings import duration, readable_ref
from workbench.kafka import behaviour
from workbench.model.refs import file_ref
from workbench.remediation.forecast import StepForecast, during

if TYPE_CHECKING:
    from workbench.model.restarts import Restart
    from workbench.remediation.planner import BrokerStep, RepairPlan


def template() -> str:
    """scripts/repair-broker.sh, as shipped with the package."""
    return resources.files("workbench").joinpath("scripts/repair-broker.sh").read_text("utf-8")


def wait_default() -> int:
    """The seconds each wait of the script takes at most unless WAIT_SECONDS is set: as the script says."""
    found = re.search(r"WAIT_SECONDS:=(\d+)", template())
    assert found, "scripts/repair-broker.sh sets no WAIT_SECONDS default"
    return int(found.group(1))


def expected(p: RepairPlan, broker: int) -> str:
    """How long broker's step may take, from its last restart in its logs (else the slowest other
    broker's, said as such) and its last return to the ISRs in ZooKeeper's history: measured, never a
    default passed off as one."""
    own = p.restarts.get(broker, [])
    restart = next((r for r in reversed(own) if r.stop_ms is not None), own[-1] if own else None)
    whose = "its"
    if restart is None:
        others = [r for rs in p.restarts.values() for r in rs]
        restart = max(others, key=lambda r: (r.stop_ms or 0) + r.start_ms, default=None)
        whose = f"none of its own is in its logs; broker {restart.broker}'s" if restart else ""
    parts = [_restart(restart, whose)] if restart is not None else []
    back = p.rejoined.get(broker, [])
    if back:
        clocks = "" if back[-1].from_txns else ", on the clocks of the brokers whose lines tell it"
        parts.append(
            f"back in the ISRs it had left {duration(back[-1].after_ms)} after it registered (the last at "
            f"`{back[-1].ref}`{clocks}; the longer it is down and the more is written meanwhile, the longer)"
        )
    waits = f"each wait of the script takes at most `WAIT_SECONDS` ({wait_default()} s unless set)."
    if not parts:
        return "no restart of a broker is in the evidence to measure one by; " + waits
    return "; ".join(parts) + ". " + waits[0].upper() + waits[1:]


def _restart(r: Restart, whose: str) -> str:
    """A restart as the plan cites it: how long its stop and its start took, and the lines that say so."""
    first = r.stopping if r.stop_ms is not None and r.stopping is not None else r.starting
    lines = (
        f"`{file_ref(first.file)}` lines {first.line_no}-{r.started.line_no}"
        if first.file == r.started.file
        else f"`{readable_ref(first.ref)}` to `{readable_ref(r.started.ref)}`"
    )
    if r.stop_ms is None:
        return f"{whose} last start in the logs took {duration(r.start_ms)} ({lines})"
    took = f"stopped in {duration(r.stop_ms)}, started in {duration(r.start_ms)}"
    return f"{whose} last restart in the logs: {took} ({lines})"


def _var(folder: str) -> str:
    return "LOG_DIR_" + re.sub(r"\W", "_", folder)


def foretold(p: RepairPlan, n: int) -> StepForecast:
    """Step n's forecast. Without one (no partition states): a partition is waited for once no later
    step still holds a stale replica of it (one that may lead it and refuse); the others are named with
    the last step that repairs one (`later`)."""
    if p.forecast is not None:
        return p.forecast.steps[n - 1]
    step = p.steps[n - 1]
    last: dict[tuple[str, int], int] = {}
    for k, s in enumerate(p.steps, 1):
        for r in s.replicas:
            last[(r.topic, r.partition)] = k
    mine = sorted({(r.topic, r.partition) for r in step.replicas})
    return StepForecast(
        step.broker,
        rejoins=[tp for tp in mine if last[tp] <= n],
        later={tp: last[tp] for tp in mine if last[tp] > n},
    )


def broker_script(p: RepairPlan, n: int, step: BrokerStep) -> str:
    """Step n of the plan: the script run on `step`'s broker, from scripts/repair-broker.sh."""
    # 3.x writes partition.metadata at log creation; 2.8 only on a later LeaderAndIsr; unknown: no wait
    written_at_once = behaviour.holds("partition_metadata_written_at_log_creation", p.version)
    total = len(p.steps)
    f = foretold(p, n)
    fc = p.forecast  # the windows it opens: without a forecast (a plan by hand), none is known
    offline = [f'  "{w.tp[0]}-{w.tp[1]}: {during(w, fc.order)}"' for w in fc.windows_of(n)] if fc else []
    after = f"after step {n - 1} ({p.script_name(n - 1, p.steps[n - 2])}) has finished" if n > 1 else "first"
    nxt = (
        f"; next: {p.script_name(n + 1, p.steps[n])} on broker {p.steps[n].broker}'s host"
        if n < total
        else ""
    )
    role = " (the active controller)" if step.controller else ""
    internal = "".join(
        f"#\n# INTERNAL TOPIC {t} is affected on this broker: its partitions here move their "
        f"{'group coordinators' if t == '__consumer_offsets' else 'transaction coordinators'} while it "
        "restarts.\n"
        for t in step.internal
    )
    held = hazards.of_broker(p.hazards, step.broker)
    within = any(not o.startswith("/") for h in held for o in h.owned)  # names looked for in its log dirs
    log_dirs = "\n".join(
        f': "${{{_var(k)}:={v}}}"   # datadirs/{k} in the bundle'
        if v
        else f"# {_var(k)}: datadirs/{k} in the bundle; its path on the host is not in the bundle: export it"
        for k, v in sorted(step.log_dirs.items())
        if within or any(r.log_dir == k for r in step.replicas)
    )
    checked = "\n".join(
        f'  "{_var(k) if not o.startswith("/") else "-"} {o} {h.kind}"'
        for h in held
        for o in h.owned
        for k in (sorted(step.log_dirs) if not o.startswith("/") else [""])
    )
    before = "".join(  # what its --check refuses to go on without
        "#\n"
        + textwrap.fill(f"BEFORE THIS STEP: {h.said()}", 104, initial_indent="# ", subsequent_indent="#   ")
        + "\n"
        for h in held
    )
    rows = "\n".join(
        f'  "{_var(r.log_dir)} {r.dir_name} {r.topic} {r.partition} {r.disk_topic_id} {r.zk_topic_id}"'
        f"{'' if r.in_isr else '   # out of the ISR at the capture' if r.in_isr is False else ''}"
        for r in step.replicas
    )
    later = "".join(
        (
            f"# {t}-{q}: this broker gets back into its ISR only "
            + (f"at step {k}" if k else "after the plan (see PLAN.md)")
            if fc
            else f"# {t}-{q}: a replica of it holds the stale id until step {k} and may be its leader"
        )
        + ", so this step does not wait for it.\n"
        for (t, q), k in sorted(f.later.items())
    )
    cluster = p.manifest.get("cluster") or "unknown"
    fields = {
        "TITLE": f"Topic id repair, step {n} of {total}: broker {step.broker}{role}",
        "BUNDLE": p.bundle,
        "CLUSTER": str(cluster),
        "KAFKA_VERSION": p.version or "unknown",
        "CAPTURED_AT": str(p.manifest.get("captured_at") or "unknown"),
        "BROKER": str(step.broker),
        "WHEN": after,
        "EXPECTED": textwrap.fill(
            "Expected: " + expected(p, step.broker), 104, initial_indent="# ", subsequent_indent="#   "
        ),
        "SCRIPT": p.script_name(n, step),
        "INTERNAL": internal + before + ("\n" if internal or before else ""),
        "HAZARDS": checked,
        "ZOOKEEPER": p.zookeeper.get(step.broker) or next(iter(p.zookeeper.values()), "<zookeeper.connect>"),
        "WAIT_FOR_METADATA": "yes" if written_at_once else "no",
        "METADATA_WHEN": (
            "partition.metadata is written when the log is created, so the restart writes it"
            if written_at_once
            else "partition.metadata may be written only by a later LeaderAndIsr (2.8 writes it for a log "
            "already attached), so the script does not wait for it"
        ),
        "REJOINS": "\n".join(f'  "{t} {q}"' for t, q in f.rejoins),
        "LATER": later,
        "WHOLE": "\n".join(f'  "{t} {q}"' for t, q in f.whole),
        "OFFLINE": "\n".join(offline),
        "AUTO_REBALANCE": {True: "true", False: "false", None: "unknown"}[p.auto_rebalance],
        "SOLE_LEADER": "\n".join(f'  "{m.tp[0]}-{m.tp[1]}"' for m in f.moves if m.to < 0),
        "BACKUP_DIR": f"/var/tmp/topic-id-repair-{cluster}-broker-{step.broker}",
        "LOG_DIRS": log_dirs,
        "REPLICAS": rows,
        "NEXT": nxt,
    }
    return re.sub(r"@([A-Z_]+)@", lambda m: fields[m.group(1)], template())
