"""Kafka forensic workbench: evidence bundles of ZooKeeper-mode Kafka clusters as Spark DataFrames.

Re-exports only, loaded on first use, so that the stdlib-only parts (the broker-side collector) can be
imported on hosts without Spark.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = ["Bundle", "BundleError", "open_bundle", "spark_session", "triage"]

if TYPE_CHECKING:
    from workbench.analysis.triage import triage
    from workbench.bundle import BundleError
    from workbench.frames import Bundle, open_bundle
    from workbench.spark import spark_session


def __getattr__(name: str) -> Any:
    if name == "BundleError":
        from workbench.bundle import BundleError

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
    raise AttributeError(f"module 'workbench' has no attribute {name!r}")
