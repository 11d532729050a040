"""Kafka forensic workbench: evidence bundles of ZooKeeper-mode Kafka clusters as Spark DataFrames.

Re-exports only, loaded on first use, so that the stdlib-only parts (the broker-side collector) can be
imported on hosts without Spark.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = [
    "Bundle",
    "BundleError",
    "WorkbenchError",
    "health",
    "open_bundle",
    "spark_session",
    "state_at",
    "triage",
]

if TYPE_CHECKING:
    from workbench.analysis.triage import triage
    from workbench.errors import WorkbenchError
    from workbench.frames import Bundle, open_bundle
    from workbench.manifest import BundleError
    from workbench.model.health import health
    from workbench.model.state import state_at
    from workbench.spark import spark_session


def __getattr__(name: str) -> Any:
    if name == "WorkbenchError":  # the base of the errors about what the workbench was given
        from workbench.errors import WorkbenchError

        return WorkbenchError
    if name == "BundleError":
        from workbench.manifest import BundleError

        return BundleError
    if name in ("Bundle", "open_bundle"):
        from workbench import frames

        return getattr(frames, name)
    if name == "spark_session":
        from workbench.spark import spark_session

        return spark_session
    if name == "triage":
        from workbench.analysis.triage import triage

        return triage
    if name == "state_at":  # the cluster as of a zxid, a time or now (`model.state`)
        from workbench.model.state import state_at

        return state_at
    if name == "health":  # offline, under-replicated ... per bucket (`model.health`)
        from workbench.model.health import health

        return health
    raise AttributeError(f"module 'workbench' has no attribute {name!r}")
