"""truth.json facts and triage findings as comparable keys: each truth fact names the finding it requires,
and each finding of these kinds must be required by a fact (tests/test_triage.py)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from workbench.analysis.findings import Finding
from workbench.analysis.registry import kinds
from workbench.analysis.triage import Triage

# Every finding kind an analysis may emit (analysis/registry.py): each instance must come from a truth
# fact, so a kind the simulated stories never make (topic.likely_typo, ...) must never be found.
KINDS = tuple(sorted(kinds()))
IMBALANCE_THRESHOLD, CHECK_INTERVAL_MS = 0.10, 300_000  # Kafka's defaults; the simulator keeps them
REASSIGNMENT_STUCK_MS = 30 * 60_000  # analysis/reassignment.py


def _cause(reason: str) -> str:
    if "stood still" in reason:
        return "hang"
    if "cut off from ZooKeeper" in reason:
        return "network_partition"
    if "lost its ZooKeeper session" in reason:
        return "crash"
    if "shut down" in reason:
        return "shutdown"
    return reason


def expected(truth: dict[str, Any]) -> set[tuple[Any, ...]]:
    """The findings a correct triage must produce, from the simulator's model alone."""
    out: set[tuple[Any, ...]] = set()
    controllers = truth["controllers"]
    for i, c in enumerate(controllers):
        if i == 0:
            out.add(("controller.election", c["broker"], c["epoch"]))
            continue
        resumed = frozenset(
            f"{m['topic']}-{m['partition']}"
            for m in truth["reassignments"]
            if m["started_by"] != c["broker"] and m.get("completed_by") == c["broker"]
        )
        out.add(("controller.failover", c["broker"], c["epoch"], _cause(c["reason"]), resumed))
    for f in truth["broker_failures"]:
        if f.get("session_expired_ms") is not None:
            out.add(("broker.session_expired", f["broker"]))
    stale: dict[tuple[str, int], set[int]] = {}
    for s in truth.get("stale_topic_ids", []):
        stale.setdefault((s["topic"], s["broker"]), set()).add(s["partition"])
    out |= {("topic_id.mismatch", t, b, frozenset(ps)) for (t, b), ps in stale.items()}
    out |= {("topic_id.replicas_disagree", t) for t in truth.get("disagreeing_topics", [])}
    refused: dict[tuple[str, int], set[int]] = {}
    for m in truth["topic_id_mismatches"]:
        refused.setdefault((m["topic"], m["broker"]), set()).add(m["partition"])
    out |= {("topic_id.refused", t, b, frozenset(ps)) for (t, b), ps in refused.items()}
    last_id: dict[str, Any] = {}
    for ch in truth["topic_id_changes"]:
        last_id[ch["topic"]] = ch["to"]
    missing = {t for t, to in last_id.items() if to is None and t in truth["topics"]}
    out |= {("topic_id.missing", t) for t in missing}
    removed_by_tool = {
        ch["topic"] for ch in truth["topic_id_changes"] if ch["by"] == "pre-2.8 client via ZooKeeper"
    }
    affected = (
        {t for t, _ in stale} | {t for t, _ in refused} | missing | set(truth.get("disagreeing_topics", []))
    )
    for t in affected:
        out.add(("topic_id.root_cause", t, 1 if t in removed_by_tool else "?"))
    for t in {t for t, _ in stale}:
        # out of the ISR at the capture: dropped by a shrink or gone offline, and refused since
        departed = frozenset(
            f"{s['partition']}@{s['broker']}"
            for s in truth["stale_topic_ids"]
            if s["topic"] == t and not s["in_isr"]
        )
        out.add(("topic_id.impact", t, departed))
    out |= {("controller.flapping", frozenset(g)) for g in _flaps(controllers)}
    health = truth["health"]
    out |= {("partition.offline", o["zxid"], o["leader"], o["partitions"]) for o in health["offline"]}
    out |= {
        ("partition.under_replicated", frozenset(u["out_of_isr"]), u["partitions"], u["still"])
        for u in health["under_replicated"]
    }
    refused: dict[tuple[int, int], list[bool]] = {}
    for w in truth["leaders_not_acting"]:
        refused.setdefault((w["broker"], w["zxid"]), []).append(w["to_ms"] is None)
    out |= {("partition.no_acting_leader", b, z, len(s), sum(s)) for (b, z), s in refused.items()}
    out |= {("leader.imbalance", b) for b in _imbalanced(truth)}
    out |= {
        ("data_loss.unclean_election", u["topic"], u["partition"], u["leader"], u["zxid"])
        for u in truth["unclean_elections"]
    }
    out |= {
        ("data_loss.truncation", t["topic"], t["partition"], t["broker"], t["offset"] < t["high_watermark"])
        for t in truth["truncations"]
        if t["offset"] < t["high_watermark"] or t["led_before"]
    }
    moving: dict[str, set[int]] = {}
    for m in truth["reassignments"]:
        if m["completed_ms"] is None and m["abandoned_ms"] is None:
            moving.setdefault(m["topic"], set()).add(m["partition"])
    out |= {("in_flight.reassignment", t, frozenset(ps)) for t, ps in moving.items()}
    queued = [
        t for t, d in truth["deletions"].items() if d["completed_ms"] is None and not d.get("refused_ms")
    ]
    if queued:
        out.add(("in_flight.deletion", frozenset(queued)))
    down = {f["broker"] for f in truth["broker_failures"] if f.get("started_ms") is None}
    for m in truth["reassignments"]:
        pending = m["completed_ms"] is None and m["abandoned_ms"] is None
        long = truth["captured_ms"] - m["started_ms"] >= REASSIGNMENT_STUCK_MS
        if pending and (set(m["to"]) & down or long):
            out.add(("reassignment.stuck", m["topic"], m["partition"]))
    for t, d in truth["deletions"].items():
        created = truth["topics"].get(t, {}).get("created_ms")
        if d["completed_ms"] is not None and created is not None and created > d["completed_ms"]:
            out.add(("deletion.recreated", t))
        if d.get("refused_ms") is not None:
            out.add(("deletion.refused", t))
        elif d["completed_ms"] is None:
            p = d["pending"]
            left = frozenset(f"{part}@{b}" for part, b in p["replicas_left"])
            out.add(("deletion.stuck", t, frozenset(p["brokers_down"]), left))
        else:
            out.add(("deletion.completed", t, frozenset(h["reason"] for h in d["halted"])))
    return out


def _flaps(controllers: list[dict[str, Any]]) -> list[list[int]]:
    """Epochs of each run of 3 or more elections within 10 minutes of the run's first (the model's clock)."""
    runs, i = [], 0
    while i < len(controllers):
        j = i
        while (
            j + 1 < len(controllers)
            and controllers[j + 1]["elected_ms"] - controllers[i]["elected_ms"] <= 600_000
        ):
            j += 1
        if j - i + 1 >= 3:
            runs.append([c["epoch"] for c in controllers[i : j + 1]])
            i = j + 1
        else:
            i += 1
    return runs


def _imbalanced(truth: dict[str, Any]) -> list[int]:
    """Brokers registered at the capture whose imbalance was above the threshold at every minute's end
    for longer than the controller's check interval."""
    down = {f["broker"] for f in truth["broker_failures"] if f.get("started_ms") is None}
    out = []
    for b, now in truth["leader_imbalance"].items():
        if int(b) in down or now["ratio"] <= IMBALANCE_THRESHOLD:
            continue
        since = None
        for m in truth["health"]["minutes"]:
            not_leading, preferred = m["imbalance"].get(b, [0, 0])
            above = preferred and not_leading / preferred > IMBALANCE_THRESHOLD
            since = (since or m["minute_ms"]) if above else None
        last = truth["health"]["minutes"][-1]["minute_ms"]
        if since is not None and last - since > CHECK_INTERVAL_MS:
            out.append(int(b))
    return out


def observed(findings: Iterable[Finding]) -> set[tuple[Any, ...]]:
    """The same keys from triage's findings (only the kinds in KINDS)."""
    out: set[tuple[Any, ...]] = set()
    for f in findings:
        s = f.subject
        k = f.kind
        if k == "controller.election":
            out.add((k, s["broker"], s["epoch"]))
        elif k == "controller.failover":
            out.add((k, s["broker"], s["epoch"], s["cause"], frozenset(s.get("reassignments", []))))
        elif k == "broker.session_expired":
            out.add((k, s["broker"]))
        elif k in ("topic_id.mismatch", "topic_id.refused"):
            out.add((k, s["topic"], s["broker"], frozenset(s["partitions"])))
        elif k == "controller.flapping":
            out.add((k, frozenset(s["epochs"])))
        elif k in (
            "topic_id.replicas_disagree",
            "topic_id.missing",
            "deletion.refused",
            "deletion.recreated",
        ):
            out.add((k, s["topic"]))
        elif k == "topic_id.root_cause":
            out.add((k, s["topic"], s["cause"] if s["cause"] == 1 else "?"))
        elif k == "topic_id.impact":
            out.add((k, s["topic"], frozenset(s["out_of_isr"])))
        elif k == "deletion.stuck":
            out.add((k, s["topic"], frozenset(s["brokers_down"]), frozenset(s["replicas_left"])))
        elif k == "deletion.completed":
            out.add((k, s["topic"], frozenset(s["halted"])))
        elif k == "partition.offline":
            at = int(s["zxid"], 16) if "zxid" in s else s.get("taken_at")  # from a paste: its moment
            out.add((k, at, s.get("broker"), s["partitions"]))
        elif k == "partition.no_acting_leader":
            out.add((k, s["broker"], int(s["zxid"], 16), s["partitions"], s["still"]))
        elif k == "data_loss.unclean_election":
            out.add((k, s["topic"], s["partition"], s["broker"], int(s["zxid"], 16)))
        elif k == "data_loss.truncation":
            out.add((k, s["topic"], s["partition"], s["broker"], s["below_hw"]))
        elif k == "in_flight.reassignment":
            out.add((k, s["topic"], frozenset(s["partitions"])))
        elif k == "in_flight.deletion":
            out.add((k, frozenset(s["topics"])))
        elif k == "partition.under_replicated":
            out.add((k, frozenset(s["brokers"]), s["partitions"], s["still"]))
        elif k == "leader.imbalance":
            out.add((k, s["broker"]))
        elif k == "reassignment.stuck":
            out.add((k, s["topic"], s["partition"]))
        elif k in KINDS:
            out.add((k, *sorted((a, str(b)) for a, b in s.items())))
    return out


def check(result: Triage, truth: dict[str, Any]) -> list[Finding]:
    """A bundle's triage: its findings must equal the truth fact by fact, each with evidence, every check
    done or not applicable, no bad record. Returns the findings."""
    want, got = expected(truth), observed(result.findings)
    assert got - want == set(), f"findings without a truth fact: {sorted(got - want, key=str)}"
    assert want - got == set(), f"truth facts without their finding: {sorted(want - got, key=str)}"
    assert result.bad_records == 0
    for f in result.findings:
        assert f.evidence, f"{f.kind} cites no evidence"
    _outages_hold(result.findings, truth)
    _leader_outages_hold(result.findings, truth)
    assert all(c.status in ("done", "not_applicable") for c in result.coverage.values()), result.coverage
    return result.findings


def _outages_hold(findings: Iterable[Finding], truth: dict[str, Any]) -> None:
    """Each failover's outage bounds hold the model's: from the old controller's crash or stop to the new
    one's 'Ready to serve' (half a second of slack: the model's ready and the logged one differ)."""
    controllers = {c["epoch"]: c for c in truth["controllers"]}
    ended: dict[int, list[int]] = {}
    for f in truth.get("broker_failures", []):
        ended.setdefault(f["broker"], []).append(f["crashed_ms"])
    for r in truth.get("broker_restarts", []):
        ended.setdefault(r["broker"], []).append(r["stopped_ms"])
    for f in findings:
        if f.kind != "controller.failover" or "outage_ms" not in f.subject:
            continue
        new = controllers[f.subject["epoch"]]
        began = [t for t in ended.get(f.subject["previous"], []) if t <= new["elected_ms"]]
        if not began:
            continue
        lower, upper = f.subject["outage_ms"]
        real = new["ready_ms"] - max(began)
        assert lower - 500 <= real <= upper + 500, (f.summary, real)


def _leader_outages_hold(findings: Iterable[Finding], truth: dict[str, Any]) -> None:
    """A crashed leader's partitions: the outage bounds hold the model's, from the crash to the session's
    expiry, then offline until a new leader (`offline_ms`, the longest); half a second of slack."""
    crashes = {f["broker"]: f for f in truth.get("broker_failures", []) if f.get("session_expired_ms")}
    for f in findings:
        if f.kind != "partition.offline" or "outage_ms" not in f.subject:
            continue
        crash = crashes.get(f.subject["broker"])
        assert crash is not None, f.summary  # only a leader that stopped without a shutdown has one
        real = crash["session_expired_ms"] - crash["crashed_ms"] + f.subject["offline_ms"]
        lower, upper = f.subject["outage_ms"]
        assert lower - 500 <= real <= upper + 500, (f.summary, real)
