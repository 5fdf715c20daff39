"""Tests of the reference backend `foo` (runtime/ + generated/ + runtime/kernels/), run against the
installed build: `pip install --no-build-isolation ./runtime`, then `python -m pytest tests/backend`.

A missing or broken install is a failure, never a skip: these tests are how the backend is known
to work at all.
"""

from __future__ import annotations

import importlib.util
import sys
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

from foo_testing import REACHED_THE_FALLBACK, foo  # noqa: E402  (torch.foo exists: checked above)

COPYING_FALLBACK_PASS = "test_host_view_fallback.py::test_backend_tests_pass_with_the_copying_fallback"
# Whether the running test started a process (Python's audit events): what a child process does
# with the fallback is not in this process's counters.
_started_a_process = [False]
_PROCESS_EVENTS = frozenset({"subprocess.Popen", "os.system", "os.posix_spawn", "os.fork", "os.exec"})


def _note_processes(event: str, _arguments: tuple[object, ...]) -> None:
    if event in _PROCESS_EVENTS:
        _started_a_process[0] = True


sys.addaudithook(_note_processes)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The copying-fallback pass runs last: it runs again the tests this session saw reach the
    fallback, so they must all have run."""
    last = [item for item in items if item.nodeid.endswith(COPYING_FALLBACK_PASS)]
    items[:] = [item for item in items if item not in last] + last


@pytest.fixture(autouse=True)
def _note_the_fallback_reached(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test reached the CPU fallback when the fallback's counters moved (a test that resets them
    counts too: they differ after it), or may have, in a process it started."""
    before = foo.fallback_counts()
    _started_a_process[0] = False
    yield
    if foo.fallback_counts() != before or _started_a_process[0]:
        request.config.stash.setdefault(REACHED_THE_FALLBACK, []).append(request.node.nodeid)


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
