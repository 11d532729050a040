"""`collect_together`: the rows of several small frames in one Spark job.

An analysis asks several independent questions of its views. Asked together they run as one job over the
union of their plans (with small evidence's plan, `spark.fit_to_evidence`: adaptive execution runs each
shuffle as a job of its own). The work is the same; what goes is each job's scheduling. A join without an
equality still broadcasts a side first, in a job of its own.
Each frame becomes one struct column of a wide union, null in the other frames' rows, so every row comes
back with Spark's own types; a frame's rows keep its order (a union concatenates its children's
partitions in turn).
"""

from __future__ import annotations

from functools import reduce

from pyspark.sql import DataFrame, Row
from pyspark.sql import functions as F

_TAG = "_asked"


def collect_together(*frames: DataFrame | None) -> list[list[Row]]:
    """The rows of each frame, in the frames' order, from one job; a None frame (a question the evidence
    cannot answer) gives no rows and runs nothing."""
    asked = [(i, f) for i, f in enumerate(frames) if f is not None]
    out: list[list[Row]] = [[] for _ in frames]
    if len(asked) == 1:
        i, frame = asked[0]
        out[i] = frame.collect()
    if len(asked) <= 1:
        return out
    # Spark fills each branch's missing columns with typed nulls: no schema is fetched here
    branches = (
        f.select(F.lit(k).alias(_TAG), F.struct("*").alias(f"q{k}")) for k, (_, f) in enumerate(asked)
    )
    union = reduce(lambda a, b: a.unionByName(b, allowMissingColumns=True), branches)
    for row in union.collect():
        k = row[_TAG]
        out[asked[k][0]].append(row[f"q{k}"])
    return out
