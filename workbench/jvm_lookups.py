"""The driver remembers the JVM classes and static methods it has looked up.

Every PySpark column function (`F.col`, `F.when`, ...) and every list of columns handed to the JVM asks py4j
for a class (`org.apache.spark.sql.functions`, `PythonUtils`) and then for its static method before it
calls it: two round trips to the JVM that answer the same each time, a third of a triage's py4j calls
(13,000 of 41,000 on topicid-mismatch-2.8; bench/README.md). py4j's view of the JVM forgets both; here
the session's view keeps the classes it found and each class keeps its methods, so only the call itself
crosses. Fields are not kept (their values can change), nor are packages.
"""

from __future__ import annotations

from typing import Any

from py4j.java_gateway import JavaClass, JavaMember, JVMView
from pyspark.sql import SparkSession


class RememberedClass(JavaClass):
    """A JVM class that keeps the static methods it was asked for."""

    def __getattr__(self, name: str) -> Any:
        found = super().__getattr__(name)
        if isinstance(found, JavaMember):
            self.__dict__[name] = found  # found as an attribute from now on, without a round trip
        return found


class RememberedView(JVMView):
    """py4j's view of the JVM that keeps the classes it resolved (by short or qualified name)."""

    def __getattr__(self, name: str) -> Any:
        found = super().__getattr__(name)
        if isinstance(found, JavaClass):
            found.__class__ = RememberedClass
            self.__dict__[name] = found
        return found


def remember_lookups(spark: SparkSession) -> None:
    """Make the session's JVM view remember its lookups; a session without a py4j gateway (Spark
    Connect) is left as it is."""
    context = getattr(spark, "_sc", None)
    view = getattr(context, "_jvm", None)
    if isinstance(view, JVMView) and not isinstance(view, RememberedView):
        view.__class__ = RememberedView
