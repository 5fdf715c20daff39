"""Printing a foo tensor is PyTorch's own formatting (torch/_tensor_str.py) of device tensors:
internal work, not the user's ops, so it must neither warn nor reach the CPU fallback, and it must
print what the CPU prints. A floating tensor's formatter picks its finite nonzero values
(masked_select), takes their smallest and largest magnitudes (min, max) and asks whether each is an
integer (ceil); a large tensor is summarised by slicing, cat and stack; a complex one formats its
real and imaginary views apart. The ops themselves are tested against the CPU in test_ops.py.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable

import pytest
import torch

from foo_testing import DEVICE, assert_still_waiting, blocked_call, foo, needs_host_views, no_fallback, paused

# name: the tensor, built on the CPU; each is printed on the CPU and, moved, on foo.
PRINTED: dict[str, Callable[[], torch.Tensor]] = {
    "float32": lambda: torch.arange(6.0) / 3,
    "float64": lambda: torch.arange(6.0, dtype=torch.float64) / 3,
    "float16": lambda: (torch.arange(6.0) / 3).half(),
    "bfloat16": lambda: (torch.arange(6.0) / 3).bfloat16(),
    "int64": lambda: torch.arange(-3, 3),
    "int8": lambda: torch.arange(-3, 3, dtype=torch.int8),
    "bool": lambda: torch.arange(6) % 2 == 0,
    "complex64": lambda: torch.complex(torch.arange(4.0) / 3, torch.ones(4)),
    "integral floats": lambda: torch.tensor([1.0, -2.0, 300.0]),
    "scientific": lambda: torch.tensor([1e-5, 1.0, 1e9]),
    "non-finite": lambda: torch.tensor([float("nan"), float("inf"), -float("inf"), 1.5, 0.0]),
    "all zero": lambda: torch.zeros(3),
    "transposed": lambda: (torch.arange(12.0).reshape(3, 4) / 7).t(),
    "summarised 1-d": lambda: torch.arange(2000.0) / 7,
    "summarised 2-d": lambda: torch.arange(2000.0).reshape(40, 50) / 7,
    "summarised int64": lambda: torch.arange(2000),
    "summarised complex": lambda: torch.complex(torch.arange(2000.0), torch.ones(2000)),
    "0-dim": lambda: torch.tensor(2.5),
    "0-dim int64": lambda: torch.tensor(7),
    "empty": lambda: torch.empty(0),
    "empty 2-d": lambda: torch.empty(0, 3),
}


def _without_device(text: str) -> str:
    """A tensor's repr without its device suffix, the suffixes after it on one line with the data:
    the CPU's repr of the same tensor, where the device suffix had moved them."""
    text = re.sub(r",\s*device='foo:0'", "", text)
    return re.sub(r",\s+(?=[a-z_]+=)", ", ", text)


@pytest.mark.parametrize("name", list(PRINTED))
def test_printing_a_tensor_warns_about_nothing_and_prints_what_the_cpu_prints(name: str) -> None:
    cpu = PRINTED[name]()
    x = cpu.to(DEVICE)
    with warnings.catch_warnings(record=True) as caught, no_fallback():
        warnings.simplefilter("always")
        text = str(x)
    assert not caught, [str(w.message) for w in caught]
    assert "device='foo:0'" in text
    assert _without_device(text) == _without_device(str(cpu))


LAUNCHED = pytest.mark.skipif(
    foo.launch_blocking(), reason="SCAFFOLD_LAUNCH_BLOCKING=1 runs every stream synchronously"
)


@LAUNCHED
def test_printing_waits_for_the_work_that_computes_the_tensor() -> None:
    """Printing right after the op that computed the tensor (launched on a paused stream) waits for
    that op: masked_select runs inline, after the work queued before it."""
    x = torch.arange(6.0, device=DEVICE)
    s = foo.Stream()
    s.wait_stream(foo.current_stream())

    def divide_and_print() -> str:
        with foo.stream(s):
            return str(x / 3)

    with paused(s):
        thread, printed = blocked_call(divide_and_print)
        assert_still_waiting(thread)
    thread.join()
    assert printed == [str(torch.arange(6.0) / 3)[:-1] + ", device='foo:0')"]


@LAUNCHED
@needs_host_views  # launched: foo's kernels, which decline where the host cannot address memory
def test_min_max_and_ceil_are_launched() -> None:
    """min, max and ceil return before their work runs, as CUDA's kernels; the results are the
    CPU's once it has."""
    cpu = torch.tensor([-1.5, 2.25, 0.5, -3.0])
    x = cpu.to(DEVICE)
    s = foo.Stream()
    s.wait_stream(foo.current_stream())
    with paused(s), foo.stream(s):
        results = [x.min(), x.max(), torch.ceil(x), x.clone().ceil_(), torch.max(x, out=x.new_empty(()))]
        assert not s.query()  # all returned before running
    expected = [cpu.min(), cpu.max(), torch.ceil(cpu), torch.ceil(cpu), cpu.max()]
    for got, want in zip(results, expected, strict=True):
        torch.testing.assert_close(got.cpu(), want)
