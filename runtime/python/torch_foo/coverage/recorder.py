"""Turning the runtime's recording on and off, and reading its table (csrc/coverage/coverage.cpp:
torch.ops.scaffold_runtime._coverage_*)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from typing import Any

import torch

DEFAULT_MAX_SIGNATURES = 8
"""Distinct input signatures kept per op: the first ones seen."""


def _ops() -> Any:
    return torch.ops.scaffold_runtime


def start(max_signatures: int = DEFAULT_MAX_SIGNATURES) -> None:
    _ops()._coverage_start(max_signatures)


def stop() -> None:
    _ops()._coverage_stop()


def clear() -> None:
    _ops()._coverage_clear()


def table() -> dict[str, Any]:
    """What the runtime recorded so far (waits for the device work whose time it measures):
    {"device_timing": bool, "ops": [{"name", "path", "calls", "host_ns", "overhead_ns",
    "device_ns", "signatures": [{"shapes", "dtypes", "arguments"}]}]}."""
    result: dict[str, Any] = json.loads(_ops()._coverage_table())
    return result


@contextlib.contextmanager
def recording(max_signatures: int = DEFAULT_MAX_SIGNATURES) -> Iterator[None]:
    """Record from a clean table while the block runs; read `table()` (or `build_report`) after."""
    clear()
    start(max_signatures)
    try:
        yield
    finally:
        stop()
