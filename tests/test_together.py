"""`model.together.collect_together`: several frames' rows from one Spark job, each as its frame gives."""

from __future__ import annotations

from datetime import datetime

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from workbench.model.together import collect_together
from workbench.spark import fit_to_evidence


def test_each_frame_gets_its_own_rows_with_their_types_and_order_from_one_job(spark: SparkSession) -> None:
    events = spark.createDataFrame(
        [(3, "c", datetime(2024, 3, 1, 10, 0, 2)), (1, "a", datetime(2024, 3, 1, 10, 0)), (2, "b", None)],
        "zxid long, path string, time timestamp",
    )
    replicas = spark.createDataFrame([("orders", [1, 2, 3]), ("audit", [])], "topic string, isr array<int>")
    group = "collect-together"
    spark.sparkContext.setJobGroup(group, group)
    fit_to_evidence(spark, 0)  # small evidence's plan: no adaptive execution, whose stages are jobs
    try:
        ordered, nothing, grouped, empty, counted = collect_together(
            events.orderBy(F.col("zxid").desc()),
            None,
            replicas.select("topic", F.struct(F.size("isr").alias("n"), "isr").alias("s")),
            events.where(F.col("zxid") > 99),
            events.agg(F.count("*").alias("n")),
        )
        jobs = spark.sparkContext.statusTracker().getJobIdsForGroup(group)
    finally:
        spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)
        fit_to_evidence(spark, -1)
    assert [r.zxid for r in ordered] == [3, 2, 1]
    assert ordered[0].path == "c" and ordered[0].time == datetime(2024, 3, 1, 10, 0, 2)
    assert ordered[1].time is None
    assert nothing == [] and empty == []
    assert sorted((r.topic, r.s.n, list(r.s.isr)) for r in grouped) == [
        ("audit", 0, []),
        ("orders", 3, [1, 2, 3]),
    ]
    assert counted[0].n == 3 and counted[0]["n"] == 3
    assert len(jobs) == 1, jobs


def test_one_frame_or_none_is_collected_as_it_is(spark: SparkSession) -> None:
    frame = spark.range(3).withColumnRenamed("id", "zxid")
    (rows,) = collect_together(frame)
    assert [r.zxid for r in rows] == [0, 1, 2]
    assert collect_together(None, None) == [[], []]
