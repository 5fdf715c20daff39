"""Helpers of the foo backend's tests (tests/backend): `foo`, the typed torch.foo; comparing the
backend with the CPU, where the same function runs on CPU inputs and on the same values on foo -- in
several memory layouts -- and the results must agree; pausing streams. (It lives in tests/, beside
scaffold_testing.py, so that tests/ alone is the import root of the tests' helpers.)"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
import types
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypedDict

import pytest
import torch

DEVICE = "foo"
# torch.foo, the device module that importing torch_foo registers on torch: mypy cannot see an
# attribute added at run time, so the tests reach it through this name, typed by torch's own lookup.
foo: types.ModuleType = torch.get_device_module(DEVICE)


def grad(tensor: torch.Tensor) -> torch.Tensor:
    """`tensor.grad`, which a backward pass must have filled in."""
    assert tensor.grad is not None, "no gradient: the backward pass did not reach this tensor"
    return tensor.grad


def fallback_counts() -> dict[str, int]:
    """How often each op ran through the CPU fallback for want of a kernel. Where the host cannot
    address device memory, foo's kernels decline and their ops run there too: those runs are the
    ops' own kernels at work, and are not counted here."""
    counts, declined = foo.fallback_counts(), foo.declined_kernel_counts()
    return {op: n - declined.get(op, 0) for op, n in counts.items() if n > declined.get(op, 0)}


# The node ids of this session's tests that reached the CPU fallback (tests/backend/conftest.py
# notes them): what the copying-fallback pass runs again with SCAFFOLD_HOST_VIEW_FALLBACK=0.
REACHED_THE_FALLBACK = pytest.StashKey[list[str]]()


# False with SCAFFOLD_DEVICE_MEMORY=discrete: the host cannot address device memory, so foo's
# kernels (ATen's CPU kernels on host views) decline and their ops run through the copying fallback.
HOST_ADDRESSABLE = bool(foo.device_memory_is_host_addressable())
# For a test of what foo's kernels do on host views (their calls, their host-view caches).
needs_host_views = pytest.mark.skipif(
    not HOST_ADDRESSABLE, reason="the kernels decline where the host cannot address device memory"
)


@contextlib.contextmanager
def no_fallback() -> Iterator[None]:
    """Asserts that nothing inside the block ran through the CPU fallback: a native op must run
    on its own kernel, not silently on the CPU (fallback_counts() says what counts)."""
    before = fallback_counts()
    yield
    after = fallback_counts()
    fell_back = {op: n - before.get(op, 0) for op, n in after.items() if n != before.get(op, 0)}
    assert not fell_back, f"expected native kernels only, but these ran through the CPU fallback: {fell_back}"


class Fixed:
    """An argument moved to the device as is, whatever the layout under test (index tensors)."""

    def __init__(self, tensor: torch.Tensor):
        self.tensor = tensor


class Host:
    """An argument that stays on the CPU in both runs (a CPU 0-dim scalar tensor, or a CPU tensor
    that must be rejected)."""

    def __init__(self, tensor: torch.Tensor):
        self.tensor = tensor


class View:
    """An argument in a layout of its own, whatever the layout under test: `view(base)`, with `base`
    copied to the device as is (e.g. View(x, lambda t: t.permute(0, 2, 3, 1)) for channels-last)."""

    def __init__(self, base: torch.Tensor, view: Callable[[torch.Tensor], torch.Tensor]):
        self.base = base
        self.view = view


def _fresh(x: torch.Tensor, device: str) -> torch.Tensor:
    # .to("cpu") of a CPU tensor is the tensor itself; in-place ops need a copy.
    return x.clone() if device == "cpu" else x.to(device)


def _transposed(x: torch.Tensor, device: str) -> torch.Tensor:
    if x.dim() < 2:
        return _fresh(x, device)
    return x.transpose(0, -1).contiguous().to(device).transpose(0, -1)


def _sliced(x: torch.Tensor, device: str) -> torch.Tensor:
    # Every other element of a twice-as-large last dimension: stride 2, not dense.
    return torch.stack([x, torch.zeros_like(x)], dim=-1).to(device).select(-1, 0)


def _expanded(x: torch.Tensor, device: str) -> torch.Tensor:
    # Row 0 broadcast over dim 0 (stride 0): other values than x, but the same on both devices.
    if x.dim() == 0 or x.shape[0] == 0:
        return _fresh(x, device)
    return _fresh(x.narrow(0, 0, 1), device).expand(x.shape)


LAYOUTS: dict[str, Callable[[torch.Tensor, str], torch.Tensor]] = {
    "contiguous": _fresh,
    "transposed": _transposed,
    "sliced": _sliced,
    "expanded": _expanded,
}
ALL_LAYOUTS = tuple(LAYOUTS)
WRITABLE_LAYOUTS = ("contiguous", "transposed", "sliced")  # in-place ops can't write expanded tensors


def place(args: Sequence[Any], device: str, layout: str) -> list[Any]:
    placed: list[Any] = []
    for a in args:
        if isinstance(a, Fixed):
            placed.append(_fresh(a.tensor, device))
        elif isinstance(a, Host):
            placed.append(a.tensor)
        elif isinstance(a, View):
            placed.append(a.view(_fresh(a.base, device)))
        elif isinstance(a, torch.Tensor):
            placed.append(LAYOUTS[layout](a, device))
        elif isinstance(a, (list, tuple)) and a and all(isinstance(t, torch.Tensor) for t in a):
            placed.append(type(a)(LAYOUTS[layout](t, device) for t in a))
        else:
            placed.append(a)
    return placed


class Tolerance(TypedDict, total=False):
    """The tolerances assert_same (and the checks built on it) take, as torch.testing.assert_close."""

    rtol: float
    atol: float


def assert_same(actual: Any, expected: Any, *, check_stride: bool = False, **tol: Any) -> None:
    """`actual` computed on foo equals `expected` computed on the CPU (values, dtype, shape)."""
    if isinstance(expected, (tuple, list)):
        assert isinstance(actual, (tuple, list)) and len(actual) == len(expected)
        for a, e in zip(actual, expected, strict=True):
            assert_same(a, e, check_stride=check_stride, **tol)
        return
    if not isinstance(expected, torch.Tensor):
        assert actual == expected or (actual != actual and expected != expected), (actual, expected)
        return
    assert isinstance(actual, torch.Tensor), type(actual)
    assert actual.device.type == DEVICE, f"result is on {actual.device}, expected {DEVICE}"
    if check_stride and actual.numel() > 1:
        assert actual.stride() == expected.stride(), f"strides {actual.stride()} != CPU {expected.stride()}"
    torch.testing.assert_close(actual.cpu(), expected, check_stride=False, equal_nan=True, **tol)


def check(
    fn: Callable[..., Any],
    *args: Any,
    layouts: Sequence[str] = ALL_LAYOUTS,
    native: bool = True,
    check_stride: bool = True,
    **tol: Any,
) -> None:
    """fn(*args) on foo equals fn(*args) on the CPU, for each memory layout of the tensor
    arguments. With `native`, the foo run must not touch the CPU fallback."""
    for layout in layouts:
        cpu_args = place(args, "cpu", layout)
        foo_args = place(args, DEVICE, layout)
        expected = fn(*cpu_args)
        with no_fallback() if native else contextlib.nullcontext():
            actual = fn(*foo_args)
        try:
            assert_same(actual, expected, check_stride=check_stride, **tol)
        except AssertionError as err:
            raise AssertionError(f"layout {layout!r}: {err}") from None


def check_outcome(
    fn: Callable[..., Any],
    *args: Any,
    layouts: Sequence[str] = ALL_LAYOUTS,
    check_stride: bool = True,
    **tol: Any,
) -> None:
    """Like check (natively, strides included), but where fn raises on the CPU it must raise on foo
    too, with the same exception type and message: at the call, or -- for an error that depends on
    the data, like an index out of range -- at the next synchronisation, as CUDA reports a
    device-side assert, with the CPU's message followed by the op that launched it."""
    for layout in layouts:
        cpu_args = place(args, "cpu", layout)
        foo_args = place(args, DEVICE, layout)
        try:
            expected = fn(*cpu_args)
        except Exception as cpu_error:  # noqa: BLE001 -- compared below
            with no_fallback():
                try:
                    fn(*foo_args)
                    foo.synchronize()
                except Exception as foo_error:  # noqa: BLE001
                    message = str(foo_error)
                    deferred = message.startswith(str(cpu_error) + " ((raised by ")
                    assert type(foo_error) is type(cpu_error) and (message == str(cpu_error) or deferred), (
                        f"layout {layout!r}: foo raised {type(foo_error).__name__}({foo_error}), "
                        f"CPU {type(cpu_error).__name__}({cpu_error})"
                    )
                else:
                    raise AssertionError(f"layout {layout!r}: CPU raised {cpu_error!r}, foo did not") from None
            continue
        with no_fallback():
            actual = fn(*foo_args)
        try:
            assert_same(actual, expected, check_stride=check_stride, **tol)
        except AssertionError as err:
            raise AssertionError(f"layout {layout!r}: {err}") from None


def check_inplace(fn_: Callable[..., Any], *args: Any, layouts: Sequence[str] = WRITABLE_LAYOUTS, **tol: Any) -> None:
    """fn_(self, *rest) modifies self in place and returns it, like the CPU."""

    def run(self: torch.Tensor, *rest: Any) -> torch.Tensor:
        result: object = fn_(self, *rest)
        assert result is self, "an in-place op must return self"
        return self

    check(run, *args, layouts=layouts, **tol)


def _resize_warnings(caught: list[warnings.WarningMessage]) -> int:
    return sum("was resized" in str(w.message) for w in caught)


def _out_tensors(kind: str, dtypes: list[torch.dtype], shapes: list[torch.Size], device: str) -> list[torch.Tensor]:
    outs = []
    for d, shape in zip(dtypes, shapes, strict=True):
        numel = max(1, torch.Size(shape).numel())
        if kind == "empty":
            outs.append(torch.empty(0, dtype=d, device=device))
        elif kind == "too_small":
            outs.append(torch.zeros(1 if numel > 1 else 0, dtype=d, device=device))
        elif kind == "too_large":
            outs.append(torch.zeros(numel + 7, dtype=d, device=device))
        else:  # right shape, every other element of a larger buffer
            outs.append(torch.zeros(*shape, 2, dtype=d, device=device).select(-1, 0))
    return outs


def check_out(
    fn: Callable[..., Any],
    *args: Any,
    dtype: torch.dtype | tuple[torch.dtype, ...] | None = None,
    layouts: Sequence[str] = ("contiguous", "transposed"),
    **tol: Any,
) -> None:
    """fn(*args, out=o) with out tensors that are empty, too small, too large and right-shaped but
    non-contiguous: the result lands in `o` (resized on the device when needed), fn returns `o`,
    and foo warns about resizing a non-empty out exactly when the CPU does."""
    for layout in layouts:
        cpu_args = place(args, "cpu", layout)
        foo_args = place(args, DEVICE, layout)
        multi = isinstance(dtype, tuple)
        dtypes = list(dtype) if isinstance(dtype, tuple) else [
            dtype or next(a for a in cpu_args if isinstance(a, torch.Tensor)).dtype
        ]
        ref_outs = [torch.empty(0, dtype=d) for d in dtypes]
        fn(*cpu_args, out=tuple(ref_outs) if multi else ref_outs[0])
        shapes = [r.shape for r in ref_outs]

        for kind in ("empty", "too_small", "too_large", "strided"):
            results = {}
            for device, call_args in (("cpu", cpu_args), (DEVICE, foo_args)):
                outs = _out_tensors(kind, dtypes, shapes, device)
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    with no_fallback() if device == DEVICE else contextlib.nullcontext():
                        returned = fn(*call_args, out=tuple(outs) if multi else outs[0])
                if multi:
                    assert all(r is o for r, o in zip(returned, outs, strict=True)), "out= must return the out tensors"
                else:
                    assert returned is outs[0], "out= must return the out tensor"
                results[device] = (outs, _resize_warnings(caught))
            (cpu_outs, cpu_warned), (foo_outs, foo_warned) = results["cpu"], results[DEVICE]
            assert foo_warned == cpu_warned, f"{layout}/{kind}: foo warned {foo_warned}x, CPU {cpu_warned}x"
            for f, c in zip(foo_outs, cpu_outs, strict=True):
                assert f.shape == c.shape, f"{layout}/{kind}: out shape {tuple(f.shape)} != CPU {tuple(c.shape)}"
                try:
                    assert_same(f, c, check_stride=True, **tol)
                except AssertionError as err:
                    raise AssertionError(f"{layout}/{kind}: {err}") from None


# Streams: pausing them, and calls that must wait for them.


@contextlib.contextmanager
def paused(*streams: torch.Stream) -> Iterator[None]:
    """Pause `streams` inside the block; resume them (and wait for them) on the way out."""
    for s in streams:
        foo._pause_stream_for_testing(s, True)
    try:
        yield
    finally:
        for s in streams:
            foo._pause_stream_for_testing(s, False)
        for s in streams:
            s.synchronize()


def blocked_call(fn: Callable[[], object]) -> tuple[threading.Thread, list[object]]:
    """Start `fn` in a thread and return it with the list its result lands in."""
    result: list[object] = []
    thread = threading.Thread(target=lambda: result.append(fn()), daemon=True)
    thread.start()
    return thread, result


def assert_still_waiting(thread: threading.Thread) -> None:
    thread.join(timeout=0.3)
    assert thread.is_alive(), "the call returned before the paused stream's work could run"



def run_with_launch_blocking(script: str) -> subprocess.CompletedProcess[str]:
    """Runs `script` in a fresh interpreter with SCAFFOLD_LAUNCH_BLOCKING=1 (read at start-up)."""
    environment = {k: v for k, v in os.environ.items() if k != "PYTHONFAULTHANDLER"}
    environment["SCAFFOLD_LAUNCH_BLOCKING"] = "1"
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=environment, timeout=120
    )
