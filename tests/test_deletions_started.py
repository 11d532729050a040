"""Which deletions the controller had begun (`model.deletions_started.started`), the one deletion state
OfflinePartitionsCount leaves out from 2.3: Kafka's rule on hand-made txns, without Spark, where a
deletion must begin and where it must wait; and on the samples, the counts it gives."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta, timezone

from workbench.frames import Bundle
from workbench.model.deletions_started import (
    BROKER,
    CONTROLLER_ELECTED,
    MARKER,
    REASSIGN,
    TOPIC,
    Change,
    Said,
    Started,
    started,
)
from workbench.model.partition_history import partition_changes

T = "orders"
REPLICAS = frozenset({1, 2, 3})


def registered(zxid: int, *brokers: int) -> list[Change]:
    return [Change(zxid, None, BROKER, broker=b) for b in brokers]


def topic(zxid: int, moving: frozenset[tuple[str, int]] = frozenset(), present: bool = True) -> Change:
    return Change(zxid, None, TOPIC, T, present, replicas=REPLICAS if present else frozenset(), moving=moving)


def marker(zxid: int, present: bool = True) -> Change:
    return Change(zxid, None, MARKER, T, present)


def elected(zxid: int) -> Change:
    return Change(zxid, None, CONTROLLER_ELECTED)


def gone(zxid: int, broker: int) -> Change:
    return Change(zxid, None, BROKER, present=False, broker=broker)


def spans(found: list[Started]) -> list[tuple[int, int | None]]:
    return [(s.began_zxid, s.ended_zxid) for s in found]


BASE = [*registered(1, 1, 2, 3), elected(2), topic(3)]


def test_a_deletion_begins_at_its_queueing_and_ends_with_its_topic() -> None:
    found = started([*BASE, marker(10), topic(20, present=False), marker(21, present=False)], None, "2.8.2")
    assert spans(found) == [(10, 20)]


def test_a_reassignment_holds_it_at_a_new_controller_until_one_partition_completes() -> None:
    moving = frozenset({(T, 0), (T, 1)})
    # at its queueing a reassignment holds nothing (the mark takes only topics already queued)
    changes = [*BASE, topic(5, moving), marker(10)]
    assert spans(started(changes, None, "3.6.2")) == [(10, None)]
    # a new controller holds it; one partition's completion resumes it
    changes += [elected(20), topic(30, frozenset({(T, 1)})), topic(40)]
    assert spans(started(changes, None, "3.6.2")) == [(10, 20), (30, None)]
    # asked through /admin/reassign_partitions (before 2.4 the only place): its removal completes it
    asked = [*BASE, Change(5, None, REASSIGN, moving=frozenset({(T, 0)})), marker(10), elected(20)]
    asked.append(Change(30, None, REASSIGN))
    assert spans(started(asked, None, "2.3.1")) == [(10, 20), (30, None)]


def test_a_new_controller_holds_a_deletion_with_a_replica_offline_until_its_broker_registers() -> None:
    changes = [*BASE, marker(10), gone(15, 3), elected(20), *registered(30, 3)]
    assert spans(started(changes, None, "2.8.2")) == [(10, 20), (30, None)]
    # every replica registered at the election: it runs on, one stretch
    assert spans(started([*BASE, marker(10), elected(20)], None, "2.8.2")) == [(10, None)]
    # a broker holding none of its replicas changes nothing
    other = [*BASE, marker(10), gone(15, 3), elected(20), *registered(30, 4)]
    assert spans(started(other, None, "2.8.2")) == [(10, 20)]


def test_before_2_3_every_topic_queued_is_left_out() -> None:
    changes = [*BASE, topic(5, frozenset({(T, 0)})), marker(10), gone(15, 3), elected(20), marker(40, False)]
    assert spans(started(changes, None, "2.2.2")) == [(10, 40)]
    assert spans(started(changes, None, "3.6.2")) == [(10, 20)]  # held from the new controller on


def test_nothing_begins_where_deletion_is_disabled_or_nothing_is_marked() -> None:
    assert started([*BASE, marker(10), marker(11, present=False)], None, "2.8.2", enabled=False) == []
    assert started([*BASE, elected(20), *registered(30, 4)], None, "2.8.2") == []


def test_a_marker_in_the_tree_the_history_starts_from() -> None:
    # the controller in office began it at its queueing
    assert spans(started([*BASE, marker(3)], 3, "2.8.2")) == [(3, None)]
    # held by the next controller; registrations in that tree resume nothing: older than the history
    held = [*registered(1, 1, 2), topic(3), marker(3), elected(5)]
    assert spans(started([*held, *registered(3, 4)], 3, "2.8.2")) == [(3, 5)]
    assert spans(started([*held, *registered(6, 3)], 3, "2.8.2")) == [(3, 5), (6, None)]


def test_offline_leaves_out_only_deletions_begun_and_under_replicated_nothing(
    sample: Callable[[str], Bundle],
) -> None:
    """deletion-stuck-2.8: clickstream-old's deletion began at its queueing (zxid 0x5f), timed by the
    controller's "(re)started" line, so its partitions, left without a leader by the deletion, are not
    offline; they stay queued throughout."""
    changes = partition_changes(sample("deletion-stuck-2.8"))
    rows = changes.where("topic = 'clickstream-old' and zxid >= 95").orderBy("zxid", "time").collect()
    queued = [r for r in rows if r.zxid == 95 and not r.deleting]
    assert queued and all(r.queued for r in queued)  # the marker, before the controller began
    begun = [r for r in rows if r.deleting]
    assert begun[0].time > queued[0].time  # its line follows the marker
    assert all(r.queued and r.deleting for r in rows if r.zxid > begun[0].zxid)
    counted = {c["count"] for r in begun for c in r.counted_as}
    assert "offline" not in counted and not counted & {"preferred", "not_leading"}
    before = changes.where("topic = 'clickstream-old' and zxid < 95").collect()
    assert before and not any(r.queued or r.deleting for r in before)


def test_the_controllers_lines_time_what_the_txns_order() -> None:
    t0 = datetime(2024, 3, 12, 8, 0, tzinfo=timezone.utc)

    def at(ms: int) -> datetime:
        return t0 + timedelta(milliseconds=ms)

    changes = [
        *registered(1, 1, 2, 3),
        Change(2, at(0), CONTROLLER_ELECTED),
        topic(3),
        Change(10, at(1000), MARKER, T),
        Change(15, at(2000), BROKER, present=False, broker=3),
        Change(20, at(3000), CONTROLLER_ELECTED),
        Change(30, at(9000), BROKER, broker=3),
    ]
    said = Said({T: [at(1020), at(9400), at(500_000)]}, [(at(3050), frozenset({T}))])
    (first, second) = started(changes, None, "2.8.2", said=said)
    assert (first.began, first.ended, second.began) == (at(1020), at(3050), at(9400))
    assert (first.began_zxid, first.ended_zxid, second.began_zxid) == (10, 20, 30)  # the txns order
    # a line too long after its txn times nothing; before 2.3 the queueing itself counts
    late = Said({T: [at(500_000)]})
    assert started(changes[:6], None, "2.8.2", said=late)[0].began == at(1000)
    assert started(changes[:6], None, "2.2.2", said=said)[0].began == at(1000)
