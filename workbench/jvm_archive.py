"""Build the driver JVM's class-data sharing archive (`spark.jvm_archive`): `python -m workbench.jvm_archive
[BUNDLE]`, which `make` runs once per environment.

A fresh JVM reads, parses and verifies every class Spark loads, at each start: the CLI and every notebook's
kernel pay it. The JDK's dynamic archive (JEP 350) records the classes a run loaded and maps them at the
next start. The run recorded here starts Spark and triages a bundle, so the classes of the analyses' queries
are in it too.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from workbench.spark import JVM_ARCHIVE_DUMP_ENV, jvm_archive

DEFAULT_BUNDLE = Path(__file__).resolve().parent.parent / "sample_data" / "handmade-2.8"


def build(bundle: Path, archive: Path) -> None:
    """Record a triage of `bundle` into `archive`, written whole or not at all."""
    archive.parent.mkdir(parents=True, exist_ok=True)
    partial = archive.with_suffix(".partial")
    partial.unlink(missing_ok=True)
    env = {**os.environ, JVM_ARCHIVE_DUMP_ENV: str(partial)}
    # The JVM writes the archive as it exits, after the Python process that started it (PySpark's JVM
    # quits when its stdin closes): the recording runs in a process group of its own, waited for whole.
    # Its stderr is the JVM's list of the classes it cannot keep (generated ones, signed jars): shown only
    # when the run fails.
    command = [sys.executable, "-m", "workbench.jvm_archive", "--record", str(bundle)]
    run = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True, start_new_session=True)
    _, stderr = run.communicate()
    _wait_for_group(run.pid)
    if run.returncode != 0 or not partial.is_file():
        sys.exit(f"{stderr[-4000:]}\nno JVM archive written at {partial} (exit {run.returncode})")
    partial.replace(archive)


def _wait_for_group(group: int, timeout_s: float = 600) -> None:
    """Until no process of the process group `group` is left (the JVM, once the Python process is gone)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return
        time.sleep(0.2)
    raise TimeoutError(f"the JVM recording the archive (process group {group}) runs after {timeout_s} s")


def _record(bundle: Path) -> None:
    """Triage `bundle` in this process's Spark; the JVM writes the archive when this process has exited."""
    import workbench

    spark = workbench.spark_session()
    workbench.triage(workbench.open_bundle(bundle, spark))
    spark.stop()


def main() -> None:
    if sys.argv[1:2] == ["--record"]:
        _record(Path(sys.argv[2]))
        return
    bundle = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_BUNDLE
    archive = jvm_archive()
    print(f"recording the driver JVM's classes into {archive}, from a triage of {bundle} ...", flush=True)
    build(bundle, archive)
    print(f"{archive}: {archive.stat().st_size // 2**20} MB, recorded from a triage of {bundle}")


if __name__ == "__main__":
    main()
