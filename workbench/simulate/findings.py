"""The findings a correct triage of a simulated bundle must give, from the model alone: truth.json's
`findings`, each fact under the finding kind it proves, holding that kind's key (`contract.Kind.key`: the
subject fields that name one finding) in the subject's own words and formats (zxids as ZooKeeper prints
them, lists for sets). The truth tests compare them with triage's findings kind by kind
(tests/truth_facts.py); a new analysis's story adds its facts here.

The thresholds below are the findings' own definitions (Kafka's defaults, which the simulator keeps, and
the workbench's), held equal to the analyses' by tests/test_contract.py.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from workbench.kafka.defaults import (
    FILE_DELETE_DELAY_MS,
    LEADER_IMBALANCE_CHECK_INTERVAL_SECONDS,
    LEADER_IMBALANCE_PER_BROKER_PERCENTAGE,
)
from workbench.simulate.story import PRE_28_CLIENT
from workbench.zookeeper.txns import hex_zxid

IMBALANCE_THRESHOLD = LEADER_IMBALANCE_PER_BROKER_PERCENTAGE / 100
CHECK_INTERVAL_MS = LEADER_IMBALANCE_CHECK_INTERVAL_SECONDS * 1000
REASSIGNMENT_STUCK_MS = 30 * 60_000  # analysis/reassignment.py STUCK_AFTER_MS
FLAPPING_WINDOW_MS, FLAPPING_ELECTIONS = 10 * 60_000, 3  # analysis/controller.py
ISR_FLAPPING_WINDOW_MS, ISR_FLAPPING_DEPARTURES = 10 * 60_000, 3  # model/isr.py
CAUSE_BY_TOOL, CAUSE_RECREATED = 1, 4  # analysis/topic_id_cause.py CAUSES
CLOCK_MARGIN_MS = 30_000  # analysis/deletion.py: a '-delete' dir this much past the delay lingers

Facts = dict[str, list[dict[str, Any]]]


def findings(truth: dict[str, Any]) -> Facts:
    """Per finding kind, the facts of the findings the model says a triage must give."""
    out: Facts = {}

    def add(kind: str, **key: Any) -> None:
        out.setdefault(kind, []).append(
            {k: sorted(v) if isinstance(v, (set, frozenset)) else v for k, v in key.items()}
        )

    _controllers(truth, add)
    _topic_ids(truth, add)
    _health(truth, add)
    _in_flight(truth, add)
    _deletions(truth, add)
    _brokers(truth, add)
    for u in truth["unclean_elections"]:
        add(
            "data_loss.unclean_election",
            topic=u["topic"],
            partition=u["partition"],
            broker=u["leader"],
            zxid=hex_zxid(u["zxid"]),
        )
    for b in truth["brokers_down"]:
        add("broker.down", broker=b)
    for b in sorted({h["broker"] for h in truth["held_back"]}):
        add("isr.high_watermark_held", broker=b)
    for b, n in sorted(_isr_flapped(truth["isr_departures"]).items()):
        add("isr.flapping", broker=b, partitions=n)
    for p in truth.get("pauses", []):
        if not p["partitions"]:
            continue
        if p.get("taken_back"):  # its session expired, and no leader was elected: no txn began the outage
            add("partition.offline", zxid=None, broker=p["broker"], partitions=p["partitions"])
        else:
            add("partition.leader_paused", broker=p["broker"], partitions=p["partitions"])
    for t in truth["truncations"]:
        below = t["offset"] < t["high_watermark"] and t["logged_hw"]
        if below or t["led_before"]:
            add(
                "data_loss.truncation",
                topic=t["topic"],
                partition=t["partition"],
                broker=t["broker"],
                below_hw=below,
            )
    return {k: sorted(v, key=str) for k, v in sorted(out.items())}


# A logs-only twin (the bundle with its `zk/` removed) and the kinds whose facts its triage cannot give:
# what each needs that the brokers' lines at Kafka's default log levels do not hold. The analyses say the
# same in coverage.
NOT_IN_LOGS = {
    "leader.imbalance": "which brokers are registered at the capture, and how long an imbalance lasted",
    "broker.down": "which brokers are registered at the capture (ZooKeeper's state)",
    "broker.only_in_sync": "the ISR at the capture (ZooKeeper's state)",
    # the controller takes a dead broker's replicas out of the ISR in lines at TRACE, not logged from 2.6
    # (behaviour `replica_state_changes_logged_by_default`); the replicas are the assignment's
    "partition.under_replicated": "each partition's replicas and ISR over time (ZooKeeper's txns)",
    "topic_id.mismatch": "the topic id in ZooKeeper to compare the data dirs with",
    "topic_id.root_cause": "the write that removed or changed the id (ZooKeeper's txns)",
    "topic_id.impact": "the ISR at the capture (ZooKeeper's state)",
    "in_flight.deletion": "what was under way at the capture (deletion.unfinished: what the logs show)",
    "in_flight.reassignment": "what was under way at the capture (ZooKeeper's state)",
    "reassignment.stuck": "what was under way at the capture (ZooKeeper's state)",
}

LOGGED_AS = {"deletion.stuck": "deletion.unfinished"}  # a kind the logs tell in their own form


def logs_findings(facts: Facts) -> Facts:
    """The findings a triage of the bundle's logs-only twin must give: the facts the controller's and the
    brokers' own lines show, in the form the logs give them: no zxid for an outage (the controller's clock
    instead), a stuck deletion as one the lines show begun and not completed."""
    out: Facts = {}
    for kind, fs in facts.items():
        if kind in NOT_IN_LOGS:
            continue
        if kind in ("partition.offline", "partition.no_acting_leader"):
            # the controller's clock instead; a deletion a new controller held back is not read from the
            # lines yet (its partitions count offline again without any leader lost)
            fs = [{**f, "zxid": None} for f in fs if not f.get("held")]
        for f in fs:
            if kind == "deletion.stuck":
                f = {"topic": f["topic"]}
            out.setdefault(LOGGED_AS.get(kind, kind), []).append(f)
    return {k: sorted(v, key=str) for k, v in sorted(out.items())}


def _isr_flapped(departures: list[dict[str, Any]]) -> Counter[int]:
    """Per broker, the partitions whose ISR its replica left ISR_FLAPPING_DEPARTURES times or more within
    ISR_FLAPPING_WINDOW_MS."""
    at: dict[tuple[int, str, int], list[int]] = {}
    for d in departures:
        at.setdefault((d["broker"], d["topic"], d["partition"]), []).append(d["at_ms"])
    out: Counter[int] = Counter()
    for (b, _, _), ts in at.items():
        if any(
            sum(1 for u in ts if t - ISR_FLAPPING_WINDOW_MS <= u <= t) >= ISR_FLAPPING_DEPARTURES for t in ts
        ):
            out[b] += 1
    return out


def _controllers(truth: dict[str, Any], add: Any) -> None:
    controllers = truth["controllers"]
    for i, c in enumerate(controllers):
        if i == 0:
            add("controller.election", broker=c["broker"], epoch=c["epoch"])
            continue
        resumed = {
            f"{m['topic']}-{m['partition']}"
            for m in truth["reassignments"]
            if m["started_by"] != c["broker"] and m.get("completed_by") == c["broker"]
        }
        add(
            "controller.failover",
            broker=c["broker"],
            epoch=c["epoch"],
            cause=_cause(c["reason"]),
            reassignments=resumed,
        )
    for run in _flaps(controllers):
        add("controller.flapping", epochs=run)
    for f in truth["broker_failures"]:
        if f.get("session_expired_ms") is not None:
            add("broker.session_expired", broker=f["broker"])


def _cause(reason: str) -> str:
    """The cause a failover finding names (controller.py's CAUSE_TEXT keys), from the model's reason."""
    for words, cause in (
        ("stood still", "hang"),
        ("cut off from ZooKeeper", "network_partition"),
        ("lost its ZooKeeper session", "crash"),
        ("shut down", "shutdown"),
    ):
        if words in reason:
            return cause
    return reason


def _flaps(controllers: list[dict[str, Any]]) -> list[list[int]]:
    """Epochs of each run of FLAPPING_ELECTIONS or more elections within FLAPPING_WINDOW_MS of the run's
    first (the model's clock)."""
    runs, i = [], 0
    while i < len(controllers):
        j = i
        while (
            j + 1 < len(controllers)
            and controllers[j + 1]["elected_ms"] - controllers[i]["elected_ms"] <= FLAPPING_WINDOW_MS
        ):
            j += 1
        if j - i + 1 >= FLAPPING_ELECTIONS:
            runs.append([c["epoch"] for c in controllers[i : j + 1]])
            i = j + 1
        else:
            i += 1
    return runs


def _topic_ids(truth: dict[str, Any], add: Any) -> None:
    stale: dict[tuple[str, int], set[int]] = {}
    for s in truth.get("stale_topic_ids", []):
        stale.setdefault((s["topic"], s["broker"]), set()).add(s["partition"])
    for (t, b), ps in stale.items():
        add("topic_id.mismatch", topic=t, broker=b, partitions=ps)
    disagreeing = truth.get("disagreeing_topics", [])
    for t in disagreeing:
        add("topic_id.replicas_disagree", topic=t)
    refused: dict[tuple[str, int], set[int]] = {}
    for m in truth["topic_id_mismatches"]:
        refused.setdefault((m["topic"], m["broker"]), set()).add(m["partition"])
    for (t, b), ps in refused.items():
        add("topic_id.refused", topic=t, broker=b, partitions=ps)
    last_id: dict[str, Any] = {}
    for ch in truth["topic_id_changes"]:
        last_id[ch["topic"]] = ch["to"]
    missing = {t for t, to in last_id.items() if to is None and t in truth["topics"]}
    for t in missing:
        add("topic_id.missing", topic=t)
    by_tool = {ch["topic"] for ch in truth["topic_id_changes"] if ch["by"] == PRE_28_CLIENT}
    recreated = {t for t, d in truth["deletions"].items() if _recreated(truth, t, d)}
    for t in {t for t, _ in stale} | {t for t, _ in refused} | missing | set(disagreeing):
        # the model knows why: a tool's write, or a deletion and re-creation; else it says it does not
        cause = CAUSE_BY_TOOL if t in by_tool else CAUSE_RECREATED if t in recreated else None
        add("topic_id.root_cause", topic=t, cause=cause)
    for t in {t for t, _ in stale}:
        # out of the ISR at the capture: dropped by a shrink or gone offline, and refused since
        departed = {
            f"{s['partition']}@{s['broker']}"
            for s in truth["stale_topic_ids"]
            if s["topic"] == t and not s["in_isr"]
        }
        add("topic_id.impact", topic=t, out_of_isr=departed)


def _offline(truth: dict[str, Any]) -> list[dict[str, Any]]:
    """The partition.offline facts: per txn and leader, the partitions that went offline; an episode that
    ran on into a refusal by the leader elected as it ended is one finding, apart from those of its txn and
    leader that recovered. Those that went offline within an outage that began with a refusal are that
    outage's (partition.no_acting_leader)."""
    ran_on = Counter(
        tuple(w["after_offline"])
        for w in truth["leaders_not_acting"]
        if w.get("after_offline") and not w.get("within")
    )
    out = []
    for o in truth["health"]["offline"]:
        n = o["partitions"] - o.get("within", 0)
        on = ran_on[(o["zxid"], o["leader"])]
        held = {"held": True} if o.get("held") else {}  # a new controller held its topic's deletion back
        out += [
            {"zxid": hex_zxid(o["zxid"]), "broker": o["leader"], "partitions": k, **held}
            for k in (n - on, on)
            if k
        ]
    return out


def _health(truth: dict[str, Any], add: Any) -> None:
    health = truth["health"]
    for o in _offline(truth):
        add("partition.offline", **o)
    for u in health["under_replicated"]:
        add(
            "partition.under_replicated",
            brokers=set(u["out_of_isr"]),
            partitions=u["partitions"],
            still=u["still"],
        )
    refused: dict[tuple[int, int], list[bool]] = {}
    for w in truth["leaders_not_acting"]:
        if w.get("after_offline") or w.get("continues"):  # part of the outage it ran on from
            continue
        refused.setdefault((w["broker"], w["zxid"]), []).append(_still_unserved(health["unserved"], w))
    for (b, z), still in refused.items():
        add("partition.no_acting_leader", broker=b, zxid=hex_zxid(z), partitions=len(still), still=sum(still))
    for b in _imbalanced(truth):
        add("leader.imbalance", broker=b)


def _still_unserved(stretches: list[dict[str, Any]], w: dict[str, Any]) -> bool:
    """Whether the outage a refusal window `w` began is still at the capture (it may run on offline)."""
    return any(
        (u["topic"], u["partition"]) == (w["topic"], w["partition"])
        and u["began_ms"] <= w["from_ms"]
        and u["ended_ms"] is None
        for u in stretches
    )


def _imbalanced(truth: dict[str, Any]) -> list[int]:
    """Brokers registered at the capture whose imbalance was above the threshold at every minute's end
    for longer than the controller's check interval."""
    down = _down(truth)
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


def _down(truth: dict[str, Any]) -> set[int]:
    """Brokers that failed and were not started again before the capture."""
    return {f["broker"] for f in truth["broker_failures"] if f.get("started_ms") is None}


def _in_flight(truth: dict[str, Any], add: Any) -> None:
    moving: dict[str, set[int]] = {}
    for m in _pending(truth["reassignments"]):
        moving.setdefault(m["topic"], set()).add(m["partition"])
    for t, ps in moving.items():
        add("in_flight.reassignment", topic=t, partitions=ps)
    queued = {
        t for t, d in truth["deletions"].items() if d["completed_ms"] is None and not d.get("refused_ms")
    }
    if queued:
        add("in_flight.deletion", topics=queued)
    down = _down(truth)
    for m in _pending(truth["reassignments"]):
        if set(m["to"]) & down or truth["captured_ms"] - m["started_ms"] >= REASSIGNMENT_STUCK_MS:
            add("reassignment.stuck", topic=m["topic"], partition=m["partition"])


def _pending(reassignments: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in reassignments if m["completed_ms"] is None and m["abandoned_ms"] is None]


def _recreated(truth: dict[str, Any], topic: str, d: dict[str, Any]) -> bool:
    created = truth["topics"].get(topic, {}).get("created_ms")
    return d["completed_ms"] is not None and created is not None and created > d["completed_ms"]


def _deletions(truth: dict[str, Any], add: Any) -> None:
    for t, d in truth["deletions"].items():
        if _recreated(truth, t, d):
            add("deletion.recreated", topic=t)
        if d.get("refused_ms") is not None:
            add("deletion.refused", topic=t)
        elif d["completed_ms"] is None:
            p = d["pending"]
            left = {f"{part}@{b}" for part, b in p["replicas_left"]}
            add("deletion.stuck", topic=t, brokers_down=set(p["brokers_down"]), replicas_left=left)
        else:
            add("deletion.completed", topic=t, halted={h["reason"] for h in d["halted"]})
    lingering: dict[tuple[str, int], set[int]] = {}
    for x in truth["delete_dirs_left"]:  # past the delay (and the analysis' clock margin), or failed
        if x["failed"] or x["age_ms"] > FILE_DELETE_DELAY_MS + CLOCK_MARGIN_MS:
            lingering.setdefault((x["topic"], x["broker"]), set()).add(x["partition"])
    for (t, b), parts in sorted(lingering.items()):
        add("deletion.lingering_dir", topic=t, broker=b, partitions=parts)


def _brokers(truth: dict[str, Any], add: Any) -> None:
    """What the brokers leave at the capture: log dirs failed, and the partitions each leads alone in
    their ISR."""
    for b, tps in truth["only_in_sync"].items():
        add("broker.only_in_sync", broker=int(b), partitions=len(tps))
    for f in truth["log_dirs_failed"]:
        add("log_dir.offline", broker=f["broker"], log_dir=f["log_dir"])
