"""What Spark's own logging shows a user (workbench/log4j2.properties, the session's JVM configured with
it): its errors on stderr, but not the accumulator updates a task reports after its query ended, which
read as a failed triage and are not one."""

from __future__ import annotations

from pyspark.sql import SparkSession


def test_a_late_accumulator_update_is_not_shown_and_other_errors_are(spark: SparkSession) -> None:
    jvm = spark._jvm
    assert jvm is not None
    log4j = jvm.org.apache.logging.log4j
    console = log4j.LogManager.getContext(False).getConfiguration().getAppender("console")

    def shown(message: str) -> bool:
        event = (
            log4j.core.impl.Log4jLogEvent.newBuilder()
            .setLoggerName("org.apache.spark.scheduler.DAGScheduler")
            .setLevel(log4j.Level.ERROR)
            .setMessage(log4j.message.SimpleMessage(message))
            .build()
        )
        return not console.isFiltered(event)

    assert not shown("Failed to update accumulator 4940 (Unknown class) for task 0")
    assert shown("Job 7 failed: Task 0 in stage 3.0 failed 1 times")
    assert shown("Exception while getting task result")
