"""The sessions brokers lost, in the one history (`model/history/sessions.py`), merged without Spark: one
loss per session whichever source tells it, ZooKeeper's account where its history holds the session, the
lines' where it does not, and a clean shutdown never a loss."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from workbench.frames import Bundle
from workbench.model.history.sessions import CLOCKS_APART_MS, Expired, merged
from workbench.model.outage import Outage
from workbench.model.session_ends import session_timeout

T0 = datetime(2024, 3, 12, 8, 0)


def ended(broker: int, session: int, how: str, at_s: float) -> Expired:
    """A registration ZooKeeper's history saw end."""
    return Expired(broker, session, how, None, T0 + timedelta(seconds=at_s), zxids=(0x10, 0x40))


def named(broker: int, session: int, at_s: float) -> Expired:
    """A session a client's line names expired."""
    return Expired(
        broker, session, "session_expiry", None, T0 + timedelta(seconds=at_s), f"b{broker}:server.log:9"
    )


def silent(broker: int, at_s: float) -> Expired:
    """A broker a controller saw fail, its own log holding no shutdown."""
    return Expired(broker, None, "crash", None, T0 + timedelta(seconds=at_s), "b2:controller.log:4")


def said(broker: int, at_s: float) -> Expired:
    """A broker's own "Session expired." lines."""
    return Expired(
        broker, None, "session_expiry", None, T0 + timedelta(seconds=at_s), "b1:server.log:7", lines=2
    )


def test_a_loss_both_sources_tell_is_zookeepers_once() -> None:
    zk = [ended(1, 0xA1, "session_expiry", 100)]
    # the client names the same session; the controller saw broker 1 fail 20 s off ZooKeeper's clock; its
    # own "Session expired." line: all the same loss
    got = merged(zk, [named(1, 0xA1, 103)], [silent(1, 120)], [said(1, 104)])
    assert got == zk


def test_what_zookeepers_history_does_not_hold_the_lines_tell() -> None:
    zk = [ended(1, 0xA1, "shutdown", 100)]  # a clean shutdown, never a loss
    before = named(2, 0xB2, 10)  # a session lost before the txn logs begin
    far = silent(1, 100 + CLOCKS_APART_MS / 1000 + 60)  # a failure no registration's end is near
    own = said(1, 400)  # broker 1's own lines: its only loss but a shutdown is the one above, told
    got = merged(zk, [before], [far], [own])
    assert got == [*zk, before, far]
    # without the controller's line, broker 1's own lines are its loss
    assert merged(zk, [before], [], [own]) == [*zk, before, own]


def test_from_the_lines_alone_a_broker_named_by_its_client_is_not_told_again_by_its_own_line() -> None:
    got = merged([], [named(1, 0xA1, 5)], [silent(3, 50)], [said(1, 6), said(2, 7)])
    assert [(e.broker, e.session, e.how, e.lines) for e in got] == [
        (1, 0xA1, "session_expiry", 0),
        (3, None, "crash", 0),
        (2, None, "session_expiry", 2),
    ]


def test_a_session_timeout_shorter_than_the_releases_default_is_said_so(
    sample: Callable[[str], Bundle],
) -> None:
    """What bounds a silent broker's outage says its session timeout and how it is known; where that is
    shorter than the release's default (`below_default`), the default beside it: the setting the fix
    names, with its number."""
    bundle = sample("deletion-stuck-2.8")  # Kafka 2.8.2: 18000 ms
    short = session_timeout(bundle, 3, 0xAB, {0xAB: (10_000, "ZooKeeper's createSession")})
    assert short == (10_000, "negotiated, ZooKeeper's createSession; below Kafka 2.8.2's default, 18000 ms")
    o = Outage(1_000, 2_000, None, "", *short, ())
    assert (
        "session timeout was 10000 ms (negotiated, ZooKeeper's createSession; below Kafka 2.8.2's"
        in o.detail()
    )
    as_shipped = session_timeout(bundle, 3, 0xAB, {0xAB: (18_000, "ZooKeeper's createSession")})
    assert as_shipped == (18_000, "negotiated, ZooKeeper's createSession")
