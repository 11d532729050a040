"""What the benches share: the best of several timed runs."""

from __future__ import annotations

import time
from collections.abc import Callable


def best(fn: Callable[[], int], repeat: int) -> tuple[float, int]:
    """The fastest of `repeat` runs of `fn`, in seconds, and what it counted."""
    times, n = [], 0
    for _ in range(repeat):
        start = time.perf_counter()
        n = fn()
        times.append(time.perf_counter() - start)
    return min(times), n
