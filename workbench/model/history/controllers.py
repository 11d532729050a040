"""The controller chain: every election, from ZooKeeper's history (`elections.elections`: the create of
/controller and the epoch it wrote, and how that znode ended) and from the elected brokers' own lines
(`elections.elected_lines`), one election per epoch whichever tells it.

An epoch is won once: it is written to /controller_epoch by a conditional update (from 2.1 in the same
multi as the create of /controller, KafkaZkClient.registerControllerAndIncrementControllerEpoch 2.1.1:97;
before, just after it, KafkaController.incrementControllerEpoch 1.1.1:612), so the txn and the line of an
election name the same (epoch, broker). ZooKeeper's zxids order the elections it holds, epochs place those
only the lines show, and an election's time is ZooKeeper's where it has one (one clock for every
broker), else its line's (the broker's clock). An election is linked to the one before it only when no
epoch lies between them: a chain with an epoch neither source shows does not know who held it. The
sessions brokers lost (`sessions.lost`) are asked in the chain's Spark job: both read only ZooKeeper's
txns and the lines.
"""

from __future__ import annotations

import bisect
import itertools
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from pyspark.sql import Row

from workbench.model.elections import elected_lines, elections
from workbench.model.history import sessions
from workbench.model.history.sessions import Expired
from workbench.model.reads import declare
from workbench.model.refs import file_ref, txn_ref
from workbench.model.tenures import TenureEnd, ended_before
from workbench.model.views import views
from workbench.together import Ask, Joined, together

if TYPE_CHECKING:
    from workbench.frames import Bundle

TXN, LINE = "ZooKeeper txn", "controller line"


@dataclass
class Election:
    """One election, linked to the one before it (`previous`), with how its controller's tenure ended:
    `gone_zxid`/`gone_time` the close of its session or /controller's delete, `gone_by` the session that
    deleted it, `session` the controller's own; `line`/`line_time` the elected broker's own line where
    its logs show it; without ZooKeeper's account of its end, `cause` and the line saying it
    (model.tenures)."""

    epoch: int | None
    broker: int | None
    zxid: int | None
    time: datetime  # ZooKeeper's clock where its history holds the election, else the broker's
    ref: str  # the txn where ZooKeeper's history holds it, else the line
    previous: Election | None = None
    gone_zxid: int | None = None
    gone_time: datetime | None = None
    gone_by: int | None = None
    session: int | None = None
    cause: tuple[str, str | None] | None = None  # how its tenure ended, where the lines alone tell it
    line: str | None = None
    line_time: datetime | None = None  # the broker's clock

    @property
    def sources(self) -> tuple[str, ...]:
        """What tells this election: ZooKeeper's txn, the controller's line, or both."""
        return tuple(s for s, held in ((TXN, self.zxid is not None), (LINE, self.line is not None)) if held)

    @property
    def logged_time(self) -> datetime:
        """When the broker's own clock says it was elected (ZooKeeper's time where no line tells it)."""
        return self.line_time or self.time


def chain(bundle: Bundle) -> Ask[list[Election]]:
    """Every election the evidence shows, in order, each linked to the one before it where no epoch lies
    between them. Two queries, asked together."""
    txns = Ask(elections(bundle), from_txns)
    lines = Ask(elected_lines(bundle), from_lines)
    return Joined(merged, txns, lines)


def controller_chain(bundle: Bundle) -> list[Election]:
    """The chain, asked once per bundle: what the controller and leaderless analyses, the report's chart
    and the notebooks read."""
    return views(bundle).memo("controller_chain", lambda: _asked(bundle)[0], "controller_chain")


def sessions_lost(bundle: Bundle) -> list[Expired]:
    """Every session a broker lost (`sessions.lost`), asked once per bundle in the chain's job: what the
    controller and leaderless analyses read of the brokers' ends."""
    return views(bundle).memo("sessions_lost", lambda: _asked(bundle)[1], "sessions_lost")


def _asked(bundle: Bundle) -> tuple[list[Election], list[Expired]]:
    """The chain and the sessions lost in one Spark job: both read ZooKeeper's txns and the lines only, and
    every triage reads both (a job costs tens of milliseconds however small its data)."""

    def made() -> tuple[list[Election], list[Expired]]:
        elected, lost = chain(bundle), sessions.lost(bundle)
        got = together(elected, lost)
        return got[elected], got[lost]

    return views(bundle).memo("history.chain_and_sessions_lost", made)


def tenure_ends(bundle: Bundle) -> dict[int, TenureEnd]:
    """Epoch -> how the tenure before each election ended, where ZooKeeper's history does not tell it, as
    the brokers' lines tell it (`tenures.ended_before`): the old controller's last act, how it stopped and
    its session timeout. One query, made once per bundle."""

    def made() -> dict[int, TenureEnd]:
        elected = controller_chain(bundle)
        return ended_before(bundle, [(e.epoch, e.logged_time) for e in elected if e.epoch and end_untold(e)])

    return views(bundle).memo("tenure_ends", made, "tenure_ends")


declare(controller_chain)
declare(sessions_lost)
declare(tenure_ends)


def end_untold(e: Election) -> bool:
    """Whether ZooKeeper's history does not tell how the tenure before `e` ended, so the brokers' lines are
    read for it. Epoch 1 is the cluster's first controller in every release: before 2.1 the first election
    creates /controller_epoch with 1 (KafkaController.incrementControllerEpoch 1.1.1:616-629), from 2.1
    with 0 and adds one (KafkaZkClient.registerControllerAndIncrementControllerEpoch 2.8.2:108-118,
    159-163; KafkaController.InitialControllerEpoch 2.8.2:61)."""
    if e.epoch is None or e.epoch == 1:
        return False
    return e.previous is None or e.previous.gone_zxid is None


def from_txns(found: list[Row]) -> list[Election]:
    return [
        Election(
            r.epoch,
            r.broker,
            r.zxid,
            r.time,
            txn_ref(r.zxid),
            gone_zxid=r.gone_zxid,
            gone_time=r.gone_time,
            gone_by=r.gone_by,
            session=r.session_id,
        )
        for r in sorted(found, key=lambda r: r.zxid)
    ]


def from_lines(found: list[Row]) -> list[Election]:
    """One election per (epoch, broker), its first line; a line without an epoch is an election of its own."""
    out: dict[object, Election] = {}
    for r in sorted(found, key=lambda r: (r.ts, r.file, r.line_no)):
        key = (r.epoch, r.broker_id) if r.epoch is not None else (r.file, r.line_no)
        if key not in out:
            ref = file_ref(r.file, r.line_no)
            out[key] = Election(r.epoch, r.broker_id, None, r.ts, ref, line=ref, line_time=r.ts)
    return list(out.values())


def merged(txns: list[Election], lines: list[Election]) -> list[Election]:
    """ZooKeeper's elections in zxid order, each given its line; those only the lines show placed by epoch
    (before the first later epoch), or without one by time; then each linked to the one before it."""
    by_epoch: dict[tuple[int | None, int | None], Election] = {
        (e.epoch, e.broker): e for e in txns if e.epoch is not None
    }
    out = list(txns)
    for e in sorted(lines, key=lambda e: (e.epoch is None, e.epoch or 0, e.time)):
        told = by_epoch.get((e.epoch, e.broker))
        if told is not None:
            told.line, told.line_time = e.line, e.line_time
            continue
        if e.epoch is not None:
            at = next((i for i, o in enumerate(out) if o.epoch is not None and o.epoch > e.epoch), len(out))
        else:
            at = bisect.bisect_right([o.logged_time for o in out], e.time)
        out.insert(at, e)
    for before, after in itertools.pairwise(out):
        apart = None if before.epoch is None or after.epoch is None else after.epoch - before.epoch
        after.previous = before if apart in (None, 1) else None
    return out
