"""The driver JVM's class-data sharing archive (workbench/jvm_archive.py, built by `make`): a session maps
Spark's classes from it, and an archive the JVM refuses costs only the speed, never a notebook's output."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.spark import (
    JIT_ENV,
    JVM_ARCHIVE_ENV,
    SMALL_EVIDENCE_MB,
    driver_java_options,
    jit_for,
    jvm_archive,
)

# Starts this repo's Spark in a process of its own, as the CLI and a notebook's kernel do.
ARCHIVED = "shared objects file (top)"  # how the JVM names the dynamic archive as a class's source
START = "from workbench.spark import spark_session; spark_session().range(3).count(); print('started')"


def _start(tmp_path: Path, **env: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """Start Spark with the JVM logging where each class came from; returns the run and where Spark's
    classes were read from: 'shared objects file (top)' (the archive) or a jar's URL. Classes made at run
    time (lambdas: their source is the class that made them) are left out."""
    log = tmp_path / "class-load.log"
    options = f"-Xlog:class+load=info:file={log}"
    run = subprocess.run(
        [sys.executable, "-c", START],
        env={**os.environ, **env, "WORKBENCH_JAVA_OPTIONS": options},
        capture_output=True,
        text=True,
        timeout=300,
    )
    spark = [line for line in log.read_text().splitlines() if " org.apache.spark." in line]
    sources = [line.rsplit("source: ", 1)[-1] for line in spark]
    return run, [s for s in sources if s == ARCHIVED or s.startswith(("file:", "jar:"))]


@pytest.mark.slow
def test_a_session_maps_sparks_classes_from_the_archive(tmp_path: Path) -> None:
    if not jvm_archive().is_file():
        if os.environ.get("CI") == "true":
            pytest.fail(
                f"{jvm_archive()} is missing: `make test` builds it (python -m workbench.jvm_archive)"
            )
        pytest.skip(f"no JVM archive at {jvm_archive()}: python -m workbench.jvm_archive builds it")
    run, sources = _start(tmp_path)
    assert run.returncode == 0, run.stderr[-3000:]
    mapped = sources.count(ARCHIVED)
    # The archive was recorded from a triage: nearly every class a bare start loads is in it.
    assert len(sources) > 1000
    assert mapped > 0.9 * len(sources), f"{mapped} of {len(sources)} Spark classes from the archive"


@pytest.mark.slow
def test_an_archive_the_jvm_refuses_costs_only_the_speed(tmp_path: Path) -> None:
    stale = tmp_path / "stale.jsa"
    stale.write_bytes(b"not an archive of this JDK" * 100)
    run, sources = _start(tmp_path, **{JVM_ARCHIVE_ENV: str(stale)})
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.strip() == "started"  # the JVM's warning went to stderr, not into a cell's output
    assert len(sources) > 1000 and ARCHIVED not in sources


def test_a_session_for_small_evidence_compiles_with_the_first_compiler_only(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A CLI run or a notebook on small evidence asks few questions: C1 alone answers them sooner; the
    suite's long session and large evidence keep both compilers (the suite's with C2 inlining less deep);
    WORKBENCH_JIT says otherwise."""
    monkeypatch.delenv(JIT_ENV, raising=False)
    small, large = SMALL_EVIDENCE_MB * 2**20 - 1, SMALL_EVIDENCE_MB * 2**20
    assert (jit_for(small), jit_for(large)) == ("quick", "full")
    assert "-XX:TieredStopAtLevel=1" in driver_java_options("log4j.properties", jit_for(small))
    assert "TieredStopAtLevel" not in driver_java_options("log4j.properties", jit_for(large))
    shallow = driver_java_options("log4j.properties", "shallow")
    assert "TieredStopAtLevel" not in shallow and "-XX:MaxInlineLevel=9" in shallow
    monkeypatch.setenv(JIT_ENV, "full")
    assert jit_for(small) == "full"
    with pytest.raises(ValueError, match="WORKBENCH_JIT='fast': expected one of quick, full, shallow"):
        driver_java_options("log4j.properties", "fast")
