"""The operations a scenario is told in: start the cluster, create topics, produce, restart brokers.

Each one drives the cluster the way the operation reaches Kafka: an admin tool's ZooKeeper writes, the
controller's reaction (controller.py) and the brokers' (broker.py).
"""

from __future__ import annotations

from workbench.kafka import names
from workbench.kafka import topic_id as topic_ids
from workbench.kafka.assignment import (
    BrokerMetadata,
    assign_replicas_to_brokers,
    create_new_partitions_assignment,
)
from workbench.kafka.behaviour import PING_EVERY_OF_TIMEOUT, went_silent
from workbench.kafka.zkdata import ConfigEntityZNode, encode_config
from workbench.simulate import broker as brokers
from workbench.simulate import controller as ctl
from workbench.simulate import replication, wording
from workbench.simulate import requests as req
from workbench.simulate.cluster import (
    ZK_CONNECT,
    ZK_SERVER,
    Broker,
    Cluster,
    Partition,
    Topic,
)

PRE_28_CLIENT = "pre-2.8 client via ZooKeeper"  # truth.json's `by` of a topic_id removed by an old client


def start_cluster(c: Cluster) -> None:
    """Brokers start one after another; the first finds no /controller and becomes the controller."""
    for b in c.brokers.values():
        brokers.start(c, b)
        if c.controller is None:
            ctl.elect(c, b, "first broker to start")
        else:
            ctl.on_broker_startup(c, b)
        c.tick(c.jitter(2_000, 8_000))


def create_topic(
    c: Cluster,
    name: str,
    partitions: int,
    replication: int,
    old_client: bool = False,
    assignment: dict[int, list[int]] | None = None,
    auto_by: int | None = None,
) -> Topic:
    """AdminZkClient.createTopicWithAssignment: /config/topics/<t>, then /brokers/topics/<t>. A 2.8+
    broker (CreateTopics) writes a new topic id; an old tool writing to ZooKeeper writes none. An
    `assignment` is one given by hand (--replica-assignment); `auto_by` is the broker that creates the
    topic on its own (auto.create.topics.enable) with its own ZooKeeper session."""
    names.validate(name)
    meta = [BrokerMetadata(b.id, b.rack) for b in c.live()]
    if assignment is None:
        assignment = assign_replicas_to_brokers(meta, partitions, replication, rng=c.rng)
    with_id = not old_client and c.version_at_least(2, 8)
    t = Topic(name, topic_ids.random_uuid(c.rng, c.version) if with_id else None)
    own = c.brokers[auto_by].session if auto_by is not None else None
    session = own if own is not None else c.admin_session()
    if auto_by is not None:
        shown = ", ".join(
            f"{p} -> ArrayBuffer({', '.join(map(str, r))})" for p, r in sorted(assignment.items())
        )
        c.say(auto_by, "topic.creating", topic=name, config="{}", assignment=f"Map({shown})")
    config = encode_config(ConfigEntityZNode(1, {}))  # no overrides
    c.zk.create_recursive(c.now, session, f"/config/topics/{name}", config)
    parts = [Partition(name, p, replicas) for p, replicas in sorted(assignment.items())]
    written = Topic(name, t.topic_id, {p.partition: p for p in parts})  # the controller adds them to t
    version = 1 if old_client else None
    c.zk.create(c.now, session, f"/brokers/topics/{name}", req.topic_json(c, written, version))
    if own is None:
        c.zk.close_session(c.now + 5, session)
    elif auto_by is not None and not c.version_at_least(2, 8):
        c.say(
            auto_by, "topic.auto_created", topic=name, partitions=partitions, replication_factor=replication
        )
    c.topics[name] = t
    c.tick(c.jitter(10, 50))
    assert c.controller is not None
    shown = ", ".join(f"{p.tp} -> {p.assignment}" for p in parts)
    if c.version_at_least(2, 8):
        some = f"Some({t.topic_id})" if t.topic_id else "None"
        shown = f"Set(TopicIdReplicaAssignment({name},{some},Map({shown})))"
    else:
        shown = f"Map({shown})"
    c.say(c.controller, "topic.change", new_topics=f"Set({name})", deleted_topics="Set()", assignment=shown)
    ctl.mint_missing_topic_ids(c, [name], "new topic without an id")
    ctl.create_partitions(c, t, parts)
    c.truth["topics"][name] = {"created_ms": c.now, "topic_id": t.topic_id, "partitions": partitions}
    return t


def add_partitions(c: Cluster, name: str, count: int, old_client: bool) -> list[Partition]:
    """kafka-topics.sh --alter --partitions: the assignment grows (AdminZkClient.addPartitions). An old
    tool rewrites /brokers/topics/<t> itself in the version-1 form, dropping topic_id."""
    t = c.topics[name]
    existing = {p.partition: p.replicas for p in t.partitions.values()}
    meta = [BrokerMetadata(b.id, b.rack) for b in c.live()]
    added = create_new_partitions_assignment(name, existing, meta, count)
    new = [Partition(name, p, replicas) for p, replicas in sorted(added.items())]
    grown = Topic(name, t.topic_id, {**t.partitions, **{p.partition: p for p in new}})
    session = c.admin_session()
    c.zk.set_data(
        c.now, session, f"/brokers/topics/{name}", req.topic_json(c, grown, 1 if old_client else None)
    )
    c.zk.close_session(c.now + 5, session)
    if old_client and t.topic_id is not None:
        c.truth["topic_id_changes"].append(
            {
                "topic": name,
                "from": t.topic_id,
                "to": None,
                "at_ms": c.now,
                "zxid": c.zk.zxid - 1,
                "by": PRE_28_CLIENT,
            }
        )
    c.tick(c.jitter(10, 50))
    assert c.controller is not None
    c.say(
        c.controller, "topic.partitions_to_add", assignment=", ".join(f"{p.tp} -> {p.replicas}" for p in new)
    )
    ctl.create_partitions(c, t, new)
    c.truth["topics"][name]["partitions"] = len(t.partitions)
    return new


def produce(c: Cluster, minutes: float, per_second: float) -> None:
    """Records arrive at every leader, and its followers fetch them or fall behind (`replication`)."""
    steps = max(1, int(minutes))
    for _ in range(steps):
        for p in c.partitions():
            leader = c.brokers.get(p.leader)
            if leader is None or not leader.alive or p.tp not in leader.leading:
                continue  # no acting leader: producers get NOT_LEADER_OR_FOLLOWER
            lr = c.replica(leader, p)
            appended = int(c.rng.uniform(0.5, 1.5) * per_second * 60 * minutes / steps)
            replication.rolled(c, leader, p, lr.grow(lr.log_end_offset + appended, c.now))
            replication.fetched(c, p, leader)
        c.tick(60_000 * minutes / steps)
    for b in c.live():
        b.log_dir.checkpointed_ms = c.now


def stall_fetches(c: Cluster, broker: int) -> None:
    """A follower's replica fetchers stand still (its disk stalls, its network saturates): it stays alive
    and registered, so it stays in the ISRs until its leaders drop it, replica.lag.time.max.ms later."""
    c.brokers[broker].stalled_since = c.now


def resume_fetches(c: Cluster, broker: int) -> None:
    """Its fetchers run again: it catches up and its leaders take it back into the ISRs."""
    c.brokers[broker].stalled_since = None


def restart(c: Cluster, broker: int, controlled: bool = True, down_ms: int = 20_000) -> None:
    """A rolling restart of one broker: controlled shutdown, stop, start, and the controller's reaction."""
    stop(c, broker, controlled)
    c.tick(down_ms)
    start(c, broker)


def stop(c: Cluster, broker: int, controlled: bool = True) -> None:
    """A broker shut down cleanly (controlled shutdown first unless it is the controller) and the
    controller's reaction: its leaderships move, or, if it was the controller, another is elected."""
    b = c.brokers[broker]
    c.say(b.id, "broker.shutting_down")  # then its controlled shutdown (broker_start_and_stop_lines)
    if controlled and c.controller is not None and c.controller != broker:
        ctl.controlled_shutdown(c, b)
    brokers.stop(c, b, clean=True)
    c.truth["broker_restarts"].append({"broker": broker, "stopped_ms": c.now})
    c.tick(c.jitter(5, 30))  # the registration's deletion reaches the controller (or the brokers)
    if c.controller == broker:
        c.controller = None
        ctl.elect(c, c.live()[0], f"controller {broker} shut down")
    else:
        ctl.on_broker_failure(c, [b])


def start(c: Cluster, broker: int) -> None:
    """A stopped broker starts again and the controller tells it what it hosts."""
    b = c.brokers[broker]
    brokers.start(c, b)
    c.truth["broker_restarts"][-1]["started_ms"] = c.now
    assert c.controller is not None
    ctl.on_broker_startup(c, b)


def crash(c: Cluster, broker: int, halted: bool = False) -> None:
    """A broker dies without shutting down (or halts, `halted`: its last line says so). Nothing happens
    until ZooKeeper expires its session (zookeeper.session.timeout.ms): then its registration goes and the
    controller reacts, or, if it was the controller, /controller goes and the other brokers elect a new
    one."""
    b = c.brokers[broker]
    session = brokers.crash(c, b)
    failure: dict[str, object] = {"broker": broker, "crashed_ms": c.now, "session_expired_ms": None}
    failure["was_controller"] = c.controller == broker
    c.truth["broker_failures"].append(failure)
    at = c.now + c.session_timeout_ms + c.jitter(0, 2_000)
    _expire_at(c, b, session, failure, at, silent_at=c.now if halted else None)


def _expire_at(
    c: Cluster,
    b: Broker,
    session: int | None,
    failure: dict[str, object],
    at: int,
    heard: int | None = None,
    silent_at: int | None = None,
) -> None:
    """ZooKeeper expires the silent broker's session at `at`; from the moment that expiry proves it
    silent (behaviour.went_silent's latest bound, as the analysis reads it: `heard`, when its client
    last heard from ZooKeeper, where its time-out line will tell it), or from `silent_at` where its own
    last line tells when it stopped (a halt), its leaderships count as without an acting leader."""
    surely = went_silent(at, c.session_timeout_ms, heard_ms=heard)[1] if silent_at is None else silent_at
    c.after(max(0, surely - c.now), lambda: c.health.went_silent(b.id, c.now))
    c.after(at - c.now, lambda: _expire(c, b, session, failure))


def _expire(c: Cluster, b: Broker, session: int | None, failure: dict[str, object]) -> None:
    """ZooKeeper expires a silent broker's session: its registration goes, the controller reacts."""
    if session is not None:
        c.zk.close_session(c.now, session)
    c.not_acting_ended(broker=b.id)
    failure["session_expired_ms"] = c.now
    c.tick(c.jitter(5, 30))
    if c.controller == b.id:
        c.controller = None
        how = " (it stood still)" if failure.get("hung_ms") else ""
        how = " (cut off from ZooKeeper)" if failure.get("isolated") else how
        meanwhile = failure.pop("meanwhile", None)  # what happens before the new controller's first read
        reason = f"controller {b.id} lost its ZooKeeper session{how}"
        ctl.elect(c, c.live()[0], reason, meanwhile if callable(meanwhile) else None)
    else:
        ctl.on_broker_failure(c, [b])


def pause(
    c: Cluster,
    broker: int,
    ms: int,
    per_second: float,
    isolated: bool = False,
    woke_first: bool = False,
    back_before_read: bool = False,
) -> None:
    """A broker stands still for `ms` (a stop-the-world GC pause, a stalled disk, a frozen VM): no lines,
    no fetches, no pings; or, `isolated`, it runs on cut off from ZooKeeper and the other brokers (a
    network partition; producers beside it still reach it), its ZooKeeper client timing out after the
    read timeout and trying to reconnect. ZooKeeper expires its session as if it had crashed. Producers
    with acks=1 append to the partitions it still believes it leads (all along when isolated, for a
    moment after a pause). Then its client finds the session expired (`behaviour.stood_still` tells the
    two apart by the idle time it reports); it resigns (KafkaController.processExpire, every broker),
    registers anew, and the controller makes it follow the new leaders: it truncates what it appended
    alone. `woke_first`: it runs again (its lines, its time-out line) just before ZooKeeper, a tick late,
    expires its session, and its reconnect finds the session gone (`ms` is then that moment's).
    `back_before_read` (a controller that woke first): it registers anew before the controller elected
    in its place reads /brokers/ids, which takes it as live (behaviour fact
    `new_controller_takes_registrations_as_it_finds_them`): nobody elects new leaders for what it led,
    and no partition state is written."""
    b = c.brokers[broker]
    session, heard = b.session, c.now - c.jitter(0, c.session_timeout_ms / 3)  # its last ping's answer
    woke_first = woke_first or back_before_read
    expiry = heard + c.session_timeout_ms + c.jitter(1_000, 2_000) if woke_first else None
    if expiry is not None:
        ms = expiry - c.jitter(100, 800) - c.now
    assert b.alive and session is not None and ms + c.now - heard > c.session_timeout_ms
    hex_session = f"0x{session:x}"
    failure: dict[str, object] = {"broker": broker, "crashed_ms": c.now, "session_expired_ms": None}
    failure.update(was_controller=c.controller == broker, hung_ms=0 if isolated else ms, isolated=isolated)
    c.truth["broker_failures"].append(failure)
    if back_before_read:
        assert failure["was_controller"], "only a new controller's first read can miss its session's end"
        failure["meanwhile"] = lambda: _registers_again(c, b, hex_session)
        # no controller sees its registration go: its pause is the outage, as a pause its session survived
        c.health.taken_back(b.id)
        taken = {"broker": broker, "paused_ms": c.now, "partitions": len(b.leading), "taken_back": True}
        c.truth.setdefault("pauses", []).append(taken)
    b.alive = False  # to the cluster: nothing reaches it, nothing of it reaches anyone
    _expire_at(c, b, session, failure, expiry or heard + c.session_timeout_ms + c.jitter(0, 2_000), heard)
    if isolated:
        read_timeout = c.session_timeout_ms * 2 // 3
        c.tick(heard + read_timeout + c.jitter(1, 10) - c.now)
        c.say(b.id, "zk.session_timed_out", "WARN", idle_ms=c.now - heard, session=hex_session)
        while c.now < failure["crashed_ms"] + ms:  # type: ignore[operator]
            _connecting(c, b)
            _appended_alone(c, b, per_second * 5)
            c.tick(c.jitter(4_000, 6_000))
    else:
        c.tick(ms)
    if expiry is None:
        assert failure["session_expired_ms"] is not None, "back before ZooKeeper expired its session"
    woke, b.alive = c.now, failure["session_expired_ms"] is not None  # to the cluster, once ZooKeeper let go
    _appended_alone(c, b, per_second * c.rng.uniform(0.2, 0.6))
    late = c.jitter(20, 200)
    if back_before_read and expiry is not None:  # its time-out line before it registers anew
        late = min(late, expiry - 1 - c.now)
    c.tick(late)
    if not isolated:
        c.say(b.id, "zk.session_timed_out", "WARN", idle_ms=c.now - heard, session=hex_session)
    if back_before_read:  # it runs again, and leads what it led (`expired_session_keeps_leaderships`)
        c.health.ran_again(b.id, c.now)
        taken["woke_ms"] = woke
    _connecting(c, b)
    while failure["session_expired_ms"] is None:  # woke first: its reconnect reaches ZooKeeper after
        c.tick(c.jitter(20, 60))
    failure["started_ms"] = woke  # the same process runs on: not a restart
    if back_before_read:
        assert "meanwhile" not in failure, "the controller elected in its place read /brokers/ids first"
        return
    b.alive = True
    c.tick(c.jitter(5, 40))
    _registers_again(c, b, hex_session)
    assert c.controller is not None
    ctl.on_broker_startup(c, b)


def _registers_again(c: Cluster, b: Broker, hex_session: str) -> None:
    """A broker whose session ZooKeeper expired learns it on reconnecting: it resigns (processExpire),
    opens a new session and registers anew (processRegisterBrokerAndReelect)."""
    b.alive = True
    c.say(b.id, "zk.session_expired", "WARN", session=hex_session)
    c.say(b.id, "zk.client_session_expired")
    c.say(b.id, "controller.resigned", role="controller")
    c.say(b.id, "zk.client_reinitializing", zk_connect=ZK_CONNECT)
    c.tick(c.jitter(5, 40))
    b.session = c.zk.create_session(c.now, c.session_timeout_ms)
    shown = f"0x{b.session:x}"
    c.say(b.id, "zk.session_established", server=ZK_SERVER, session=shown, timeout_ms=c.session_timeout_ms)
    brokers.register(c, b)


def pause_kept(c: Cluster, broker: int) -> None:
    """A broker stands still for most of its session timeout (a long GC pause) and runs on: ZooKeeper has
    not expired its session, so its client, having logged that it heard nothing, reconnects in it; its
    registration and leaderships stay, and nothing in ZooKeeper shows that the partitions it leads had no
    working leader meanwhile (`model.pauses`)."""
    b = c.brokers[broker]
    assert b.alive and b.session is not None
    heard = c.now - c.jitter(0, 500)  # its last ping's answer
    idle = round(c.session_timeout_ms * c.rng.uniform(0.86, 0.93))
    pause = {"broker": broker, "paused_ms": c.now, "woke_ms": heard + idle, "partitions": len(b.leading)}
    c.truth.setdefault("pauses", []).append(pause)
    # what the analysis can prove: it stood still from a ping interval after it was last heard
    c.tick(heard + round(c.session_timeout_ms * PING_EVERY_OF_TIMEOUT) - c.now)
    c.health.went_silent(b.id, c.now)
    c.tick(heard + idle - c.now)
    hex_session = f"0x{b.session:x}"
    c.say(b.id, "zk.session_timed_out", "WARN", idle_ms=c.now - heard, session=hex_session)
    c.health.ran_again(b.id, c.now)
    _connecting(c, b)
    c.tick(c.jitter(5, 40))
    c.say(
        b.id, "zk.session_established", server=ZK_SERVER, session=hex_session, timeout_ms=c.session_timeout_ms
    )


def _appended_alone(c: Cluster, b: Broker, records: float) -> None:
    """acks=1 producers with stale metadata append to what `b` still leads; nobody fetches it."""
    for tp in list(b.leading):
        p = next(x for x in c.partitions() if x.tp == tp)
        r = c.replica(b, p)
        replication.rolled(c, b, p, r.grow(r.log_end_offset + max(1, int(records)), c.now))


def _connecting(c: Cluster, b: Broker) -> None:
    """ClientCnxn's reconnect attempt, in the wording of the client this Kafka bundles."""
    if wording.zk_client(c.version) == "release-3.8.4":
        c.say(b.id, "zk.connecting", server=ZK_SERVER)
    else:
        sasl = "not attempt to authenticate using SASL (unknown error)"
        c.say(b.id, "zk.connecting", server=ZK_SERVER, sasl=sasl)


def start_again(c: Cluster, broker: int) -> None:
    """A crashed broker is started again, once its old session has expired (until then its
    registration would still exist)."""
    failure = [f for f in c.truth["broker_failures"] if f["broker"] == broker][-1]
    while failure["session_expired_ms"] is None:
        c.tick(1_000)
    b = c.brokers[broker]
    brokers.start(c, b)
    failure["started_ms"] = c.now
    assert c.controller is not None
    ctl.on_broker_startup(c, b)


def controller_failover(c: Cluster) -> None:
    """The controller's broker is restarted: another broker wins the election."""
    assert c.controller is not None
    restart(c, c.controller, controlled=True)
