"""Tests of the reference backend `foo` (runtime/ + generated/ + runtime/kernels/), run against the
installed build: `pip install --no-build-isolation ./runtime`, then `python -m pytest tests/backend`.

A missing or broken install is a failure, never a skip: these tests are how the backend is known
to work at all.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator

import pytest
import torch  # autoloads torch_foo through its entry point when installed

if importlib.util.find_spec("torch_foo") is None:
    raise RuntimeError(
        "tests/backend needs the foo backend installed: run "
        "`pip install --no-build-isolation ./runtime` from the repository root"
    )

import torch_foo  # noqa: E402,F401  (fails loudly if the extension does not load)

if not hasattr(torch, "foo") or torch.get_device_module("foo").device_count() < 1:
    raise RuntimeError(
        "torch_foo is installed but torch.foo is missing or reports no devices "
        "(check SCAFFOLD_DEVICE_COUNT)"
    )

from foo_testing import foo  # noqa: E402  (torch.foo exists: checked above)


@pytest.fixture(autouse=True)
def _restore_device_state() -> Iterator[None]:
    """Tests that change the current device or the memory capacity must not leak it."""
    device = foo.current_device()
    capacities = [foo.get_memory_capacity(i) for i in range(foo.device_count())]
    yield
    foo.set_device(device)
    for i, capacity in enumerate(capacities):
        if foo.get_memory_capacity(i) != capacity:
            foo.set_memory_capacity(capacity, i)
