"""What the device benchmarks share: timing a call in batches, running a measurement in a worker
process of its own (each with its own environment, so a mode switched by an environment variable
is measured apart), and the summary numbers. The scripts run from this directory, where Python
finds this module."""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Mapping


def median_seconds(
    fn: Callable[[], object],
    *,
    batch: int,
    samples: int,
    warmup: int,
    finish: Callable[[], object] | None = None,
    after: Callable[[], object] | None = None,
) -> float:
    """Median over `samples` of the mean time of `batch` back-to-back calls of `fn`. `finish` runs
    at the end of each batch, inside its time (a synchronize, so that work enqueued on a stream
    is timed, not only its launch); `after` runs after each batch, outside it."""
    for _ in range(warmup):
        fn()
    for settle in (finish, after):
        if settle is not None:
            settle()
    times = []
    for _ in range(samples):
        start = time.perf_counter()
        for _ in range(batch):
            fn()
        if finish is not None:
            finish()
        times.append((time.perf_counter() - start) / batch)
        if after is not None:
            after()
    return statistics.median(times)


def run_worker(script: str, arguments: Iterable[str], environment: Mapping[str, str], timeout: int) -> dict[str, float]:
    """Run `script --worker ARGUMENTS` with `environment` added to this one; its last line of
    output is the JSON object of its measurements."""
    command = [sys.executable, script, "--worker", *arguments]
    process = subprocess.run(
        command, env=dict(os.environ, **environment), stdout=subprocess.PIPE, text=True, timeout=timeout, check=False
    )
    if process.returncode != 0:
        raise RuntimeError(f"benchmark worker failed (exit {process.returncode})")
    result: dict[str, float] = json.loads(process.stdout.strip().splitlines()[-1])
    return result


def geomean(values: Iterable[float]) -> float:
    return math.exp(statistics.fmean(math.log(value) for value in values))


def verdict(ratio: float, goal: float) -> str:
    return "met" if ratio <= goal else "not met"
