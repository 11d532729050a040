"""`make bench`: every bench in one run, its output shown and written to bench/RESULTS.md with the machine,
the versions and the commands, so that the figures there are always from one run on one machine.

    .venv/bin/python bench/run_all.py --sizes 0.1,1,10
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
from datetime import datetime, timezone
from importlib.metadata import version
from pathlib import Path

HERE = Path(__file__).parent


def machine() -> list[str]:
    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in Path("/proc/cpuinfo").read_text().splitlines()
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    memory = next(
        int(line.split()[1])
        for line in Path("/proc/meminfo").read_text().splitlines()
        if line.startswith("MemTotal")
    )
    java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0]
    return [
        f"- machine: {os.cpu_count()} cores ({cpu}), {memory / 1024**2:.0f} GB memory, {platform.platform()}",
        f"- Python {platform.python_version()}, pyspark {version('pyspark')}, "
        f"pyarrow {version('pyarrow')}, {java}",
        f"- date: {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="0.1,1,10")
    parser.add_argument("--out", type=Path, default=HERE / "RESULTS.md")
    args = parser.parse_args()
    benches = [
        [sys.executable, str(HERE / "load_logs.py"), "--sizes", args.sizes],
        [sys.executable, str(HERE / "zk_history.py")],
        [sys.executable, str(HERE / "triage_jobs.py")],
        [sys.executable, str(HERE / "notebooks_ci.py")],
    ]
    lines = [
        "# Benchmark results",
        "",
        "Written by `make bench` (bench/run_all.py); what each bench compares is in README.md.",
        "",
    ]
    lines += machine()
    failed = False
    for command in benches:
        shown = " ".join(["python", *(Path(c).name if c.endswith(".py") else c for c in command[1:])])
        lines += ["", f"## `{shown}`", "", "```"]
        print(f"$ {shown}", flush=True)
        proc = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, cwd=HERE)
        assert proc.stdout is not None
        for line in proc.stdout:
            print(line, end="", flush=True)
            lines.append(line.rstrip("\n"))
        failed |= proc.wait() != 0
        lines += [f"(exit {proc.returncode})" if proc.returncode else "", "```"]
    args.out.write_text("\n".join(lines) + "\n")
    print(f"written: {args.out}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
