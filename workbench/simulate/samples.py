"""The incidents committed under `sample_data/`, one simulated bundle each (`make sample-data`).

A test regenerates them and compares bytes, so a change to the simulator that changes what they hold
shows up in review as a change to sample_data/.
"""

from __future__ import annotations

import sys
from pathlib import Path

from workbench.simulate.run import simulate
from workbench.simulate.scenarios import Scale

SEED = 1
# name -> (scenario, Kafka version, scale): each flow once, in the three wordings between them.
SAMPLES: dict[str, tuple[str, str, Scale]] = {
    "healthy-3.6": ("healthy", "3.6.2", Scale()),
    "topicid-mismatch-2.8": ("topicid-mismatch", "2.8.2", Scale()),
    "deletion-stuck-2.8": ("deletion-stuck", "2.8.2", Scale()),
    "deletion-complete-3.6": ("deletion-complete", "3.6.2", Scale()),
    "controller-failover-2.5": ("controller-failover", "2.5.1", Scale(brokers=4)),
}


def write(root: Path, names: list[str] | None = None) -> list[Path]:
    """Write the samples (all, or those named) under `root`, each replacing its earlier self."""
    written = []
    for name in names or list(SAMPLES):
        scenario, version, scale = SAMPLES[name]
        simulate(scenario, root / name, seed=SEED, kafka_version=version, scale=scale)
        written.append(root / name)
    return written


if __name__ == "__main__":
    for path in write(Path(sys.argv[1] if len(sys.argv) > 1 else "sample_data")):
        print(path)
