"""The controller chain of the one history (`model/history/controllers.py`), merged from ZooKeeper's txns and
the elected brokers' lines without Spark: one election per epoch whichever source tells it, ZooKeeper's zxids
and the epochs ordering them, and a link to the election before only where no epoch lies between."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from pyspark.sql import Row

from workbench.analysis.controller import Facts, judge
from workbench.analysis.findings import Coverage
from workbench.model.history.controllers import LINE, TXN, Election, from_lines, merged

T0 = datetime(2024, 3, 12, 8, 0, tzinfo=timezone.utc)


def txn(epoch: int | None, broker: int, zxid: int, at_s: float) -> Election:
    return Election(epoch, broker, zxid, T0 + timedelta(seconds=at_s), f"zk:txn@{zxid:#x}")


def line(epoch: int | None, broker: int, at_s: float, n: int = 1) -> Election:
    ref = f"broker-{broker}:logs/controller.log:{n}"
    at = T0 + timedelta(seconds=at_s)
    return Election(epoch, broker, None, at, ref, line=ref, line_time=at)


def test_an_election_both_sources_tell_is_one_on_zookeepers_clock_with_its_line() -> None:
    (e,) = merged([txn(2, 1, 0x20, 10)], [line(2, 1, 12.5)])
    assert e.sources == (TXN, LINE)
    assert (e.ref, e.line) == ("zk:txn@0x20", "broker-1:logs/controller.log:1")
    assert (e.time, e.logged_time) == (T0 + timedelta(seconds=10), T0 + timedelta(seconds=12.5))


def test_an_election_only_the_lines_show_goes_where_its_epoch_puts_it_whatever_its_clock_says() -> None:
    # broker 3's clock runs a minute ahead: its line of epoch 2 still comes between ZooKeeper's 1 and 3
    got = merged([txn(1, 1, 0x10, 0), txn(3, 2, 0x30, 20)], [line(2, 3, 70)])
    assert [(e.epoch, e.broker, e.sources) for e in got] == [(1, 1, (TXN,)), (2, 3, (LINE,)), (3, 2, (TXN,))]
    assert [e.previous.epoch if e.previous else None for e in got] == [None, 1, 2]


def test_no_election_is_linked_across_an_epoch_neither_source_shows() -> None:
    got = merged([txn(5, 2, 0x50, 30)], [line(3, 1, 0)])
    assert [(e.epoch, e.previous) for e in got] == [(3, None), (5, None)]
    out = judge(Facts(got, {}, {}, frozenset({1, 2}), None, {}, []), Coverage())
    assert [(f.kind, f.subject["cause"]) for f in out] == [
        ("controller.election", "first"),
        ("controller.failover", "unknown"),
    ]
    assert (
        "from a controller the evidence does not show: no txn or line tells epoch 4 before it"
        in out[1].summary
    )


def test_the_lines_alone_give_one_election_per_epoch_and_one_without_an_epoch_by_its_time() -> None:
    # broker 2 logs epoch 2 twice (controller.log and its rolled copy); a pre-2.1 election line whose
    # epoch line is missing is an election of its own, placed by its time
    def row(epoch: int | None, broker: int, at_s: float, file: str, n: int) -> Row:
        ts = T0 + timedelta(seconds=at_s)
        return Row(broker_id=broker, file=file, line_no=n, ts=ts, epoch=epoch, failover_file=file)

    c = "brokers/{}/logs/controller.log"
    rows = [row(2, 2, 31, c.format(2) + ".1", 7), row(1, 1, 0, c.format(1), 1), row(2, 2, 30, c.format(2), 4)]
    got = merged([], from_lines([*rows, row(None, 3, 40, c.format(3), 9)]))
    assert [(e.epoch, e.broker, e.line) for e in got] == [
        (1, 1, "broker-1:logs/controller.log:1"),
        (2, 2, "broker-2:logs/controller.log:4"),
        (None, 3, "broker-3:logs/controller.log:9"),
    ]
    assert [e.previous.broker if e.previous else None for e in got] == [None, 1, 2]
    assert all(e.sources == (LINE,) and e.zxid is None for e in got)
