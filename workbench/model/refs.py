"""How a finding cites its evidence, so that a person can open it: a bundle file and line
(`broker-2:logs/state-change.log:12`), a znode as captured (`zk:/path@mzxid=0x1a`), a txn of ZooKeeper's
history (`zk:txn@0x1b`); zxids and session ids as ZooKeeper prints them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

from pyspark.sql import Column
from pyspark.sql import functions as F

from workbench.zookeeper.txns import hex_zxid


class TP(NamedTuple):
    """A topic partition, as a finding's facts carry it."""

    topic: str
    partition: int


_BROKER_FILE = re.compile(r"^brokers/([^/]+)/(.*)$")


def hex_col(name: str) -> Column:
    """A zxid or session id column as ZooKeeper prints it ('0x8f'); null stays null."""
    return F.when(F.col(name).isNotNull(), F.concat(F.lit("0x"), F.lower(F.hex(name)))).alias(name)


def zk_ref(path: str, mzxid: int | None = None, czxid: int | None = None) -> str:
    """A znode as captured: `zk:/brokers/topics/t@mzxid=0x1a`."""
    if mzxid is not None:
        return f"zk:{path}@mzxid={hex_zxid(mzxid)}"
    if czxid is not None:
        return f"zk:{path}@czxid={hex_zxid(czxid)}"
    return f"zk:{path}"


def txn_ref(zxid: int) -> str:
    """A txn in ZooKeeper's history: `zk:txn@0x1b`."""
    return f"zk:txn@{hex_zxid(zxid)}"


def file_ref(file: str, line: int | None = None) -> str:
    """A bundle file: `brokers/2/logs/state-change.log` line 12 -> `broker-2:logs/state-change.log:12`."""
    m = _BROKER_FILE.match(file)
    ref = f"broker-{m.group(1)}:{m.group(2)}" if m else file
    return ref if line is None else f"{ref}:{line}"


def file_ref_col(file: Column | str, line: Column | str | None = None) -> Column:
    """file_ref as a column expression, for refs built in Spark."""
    f = F.col(file) if isinstance(file, str) else file
    shown = F.when(
        f.rlike(_BROKER_FILE.pattern),
        F.concat(F.lit("broker-"), F.regexp_replace(f, _BROKER_FILE.pattern, "$1:$2")),
    ).otherwise(f)
    if line is None:
        return shown
    return F.concat(shown, F.lit(":"), (F.col(line) if isinstance(line, str) else line).cast("string"))


@dataclass(frozen=True)
class Said:
    """A line of a broker's log: when (its broker's clock), where, and how a finding cites it."""

    ts: datetime
    file: str
    line_no: int

    @property
    def ref(self) -> str:
        return file_ref(self.file, self.line_no)
