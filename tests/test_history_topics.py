"""Topics deleted and created again, in the one history (`model/history/topics.py`), without Spark: each
incarnation of a topic's znode that ended in a delete and was followed by a create, with the ids it held;
the controller's lines of the same re-creation joined to ZooKeeper's, and those only the lines show kept."""

from __future__ import annotations

from datetime import datetime, timedelta

from pyspark.sql import Row

from workbench.model.deletion_log import Recreated
from workbench.model.history.topics import Recreation, _from_txns, merged
from workbench.model.refs import Said

T0 = datetime(2024, 3, 12, 8, 0)


def life(topic: str, n: int, created: int | None, deleted: int | None, *ids: str) -> Row:
    at = T0 + timedelta(seconds=created or 0)
    return Row(
        topic=topic, life=n, created_zxid=created, created_time=at, deleted_zxid=deleted, ids=list(ids)
    )


def test_an_incarnation_deleted_and_followed_by_a_create_is_a_recreation_with_the_ids_it_held() -> None:
    lives = [
        life("orders", 1, 0x40, None, "B", "C"),  # the new topic: minted B, then a tool's rewrite to C
        life("orders", 0, None, 0x30, "A"),  # the history began after its create
        life("audit", 1, 0x15, 0x25, "X"),  # deleted, never created again
    ]
    assert _from_txns(lives) == [
        Recreation("orders", T0 + timedelta(seconds=0x40), 0x30, 0x40, frozenset({"A"}))
    ]


def test_the_lines_of_a_recreation_zookeeper_holds_join_it_and_the_others_stand_alone() -> None:
    zk = Recreation("orders", T0 + timedelta(seconds=100), 0x30, 0x40, frozenset({"A"}))

    def logged(topic: str, at_s: float) -> Recreated:
        at = T0 + timedelta(seconds=at_s)
        return Recreated(
            topic, Said(at, "brokers/1/logs/controller.log", 4), Said(at, "brokers/1/logs/controller.log", 5)
        )

    near, earlier, other = logged("orders", 110), logged("orders", 10), logged("audit", 100)
    got = merged([zk], [near, earlier, other])
    assert [(r.topic, r.created_zxid, r.created) for r in got] == [
        ("audit", None, other.created),
        ("orders", None, earlier.created),  # before the txn logs began: the lines' alone
        ("orders", 0x40, near.created),
    ]
