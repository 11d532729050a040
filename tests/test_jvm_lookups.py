"""The session's JVM view remembers the classes and static methods it looked up (`jvm_lookups`): a column
function then crosses to the JVM once, for the call itself."""

from __future__ import annotations

import py4j.clientserver
import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F


def _round_trips(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The calls and reflective lookups sent to the JVM from now on (py4j's deletes of objects Python
    dropped, which the garbage collector times, left out)."""
    sent: list[str] = []
    send = py4j.clientserver.ClientServerConnection.send_command

    def counted(self: py4j.clientserver.ClientServerConnection, command: str) -> str:
        if command[:2] in ("c\n", "r\n"):
            sent.append(command.split("\n")[2 if command[0] == "c" else 1])
        return send(self, command)

    monkeypatch.setattr(py4j.clientserver.ClientServerConnection, "send_command", counted)
    return sent


def test_a_column_function_asked_again_is_one_call_each(
    spark: SparkSession, monkeypatch: pytest.MonkeyPatch
) -> None:
    F.upper(F.col("topic"))  # looked up once
    sent = _round_trips(monkeypatch)
    F.upper(F.col("topic"))
    assert sent == ["col", "upper"]


def test_remembered_lookups_answer_as_before(spark: SparkSession) -> None:
    df = spark.createDataFrame([("a", 1), ("b", 2)], "topic string, partition int")
    for _ in range(2):
        rows = (
            df.select(F.upper("topic").alias("t"), (F.col("partition") + 1).alias("p")).orderBy("t").collect()
        )
        assert [(r.t, r.p) for r in rows] == [("A", 2), ("B", 3)]
    assert spark.sparkContext._jvm.java.lang.Math.max(3, 7) == 7  # a package path still resolves
