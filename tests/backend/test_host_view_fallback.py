"""The zero-copy CPU fallback (`fallback.mode: host_view` in yaml/foo.yaml): ops foo has no kernel
for run ATen's CPU kernel on host views of device memory. Every result is compared with the CPU;
with zero copy on, views must share the device storage and new outputs must not cost a copy.

SCAFFOLD_HOST_VIEW_FALLBACK=0 switches foo to the copying fallback; the slow test at the end runs
the backend tests that reached the fallback that way, so they pass in both modes.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import torch

from foo_testing import DEVICE, REACHED_THE_FALLBACK, assert_same, fallback_counts, foo

REPO = Path(__file__).resolve().parents[2]
ZERO_COPY = os.environ.get("SCAFFOLD_HOST_VIEW_FALLBACK", "1").lower() not in ("0", "false", "off", "no")
zero_copy_only = pytest.mark.skipif(not ZERO_COPY, reason="SCAFFOLD_HOST_VIEW_FALLBACK=0: copying fallback")


@contextmanager
def falls_back(*ops: str) -> Iterator[None]:
    """Asserts that each op ran through the CPU fallback inside the block (so the test tests it)."""
    before = fallback_counts()
    yield
    after = fallback_counts()
    missing = [op for op in ops if after.get(op, 0) <= before.get(op, 0)]
    assert not missing, f"expected these to run through the CPU fallback: {missing}; counts {after}"


def _randn(*shape: int, dtype: torch.dtype = torch.float32, seed: int = 0) -> torch.Tensor:
    return torch.randn(*shape, dtype=dtype, generator=torch.Generator().manual_seed(seed))


def _same_storage(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def test_functional_elementwise_and_reduction() -> None:
    a, b = _randn(6, 7), _randn(6, 7, seed=1)
    with falls_back("aten::atan2.out", "aten::prod"):
        result = torch.atan2(a.to(DEVICE), b.to(DEVICE))
        product = torch.prod(a.to(DEVICE) * 0.5 + 1)
    assert result.device.type == "foo" and product.device.type == "foo"
    assert_same(result, torch.atan2(a, b))
    assert_same(product, torch.prod(a * 0.5 + 1))


def test_out_argument_the_kernel_conjugates_lazily() -> None:
    """linalg_lu_solve with left=False sets the conjugate bit on its out= tensor; the device tensor
    must take it too, or the result is the conjugate of the CPU's (found by the conformance sweep)."""
    a, b = _randn(3, 3, dtype=torch.complex64), _randn(4, 3, dtype=torch.complex64, seed=1)
    lu, pivots = torch.linalg.lu_factor(a)
    for adjoint in (False, True):
        expected = torch.linalg.lu_solve(lu, pivots, b, left=False, adjoint=adjoint)
        with falls_back("aten::linalg_lu_solve.out"):
            result = torch.linalg.lu_solve(
                lu.to(DEVICE), pivots.to(DEVICE), b.to(DEVICE), left=False, adjoint=adjoint
            )
        assert_same(result, expected)


def test_non_contiguous_and_offset_inputs() -> None:
    a = _randn(8, 9)
    device = a.to(DEVICE)
    with falls_back("aten::atan2.out"):
        result = torch.atan2(device.t()[1:, 2:], device[2:, 1:].t())
    assert_same(result, torch.atan2(a.t()[1:, 2:], a[2:, 1:].t()))


def test_inplace_updates_the_device_tensor() -> None:
    a, b = _randn(5, 6), _randn(5, 6, seed=1)
    device = a.to(DEVICE)
    pointer = device.data_ptr()
    with falls_back("aten::atan2.out"):  # atan2_ runs atan2.out(out=self)
        returned = device.atan2_(b.to(DEVICE))
    assert returned is device and device.data_ptr() == pointer
    assert_same(device, a.clone().atan2_(b))
    # in place on a strided view: only the viewed elements change
    device = a.to(DEVICE)
    expected = a.clone()
    with falls_back("aten::clamp_min.out"):
        device[:, ::2].clamp_min_(0.25)
    expected[:, ::2].clamp_min_(0.25)
    assert_same(device, expected)
    # the argument aliases itself
    device = a.to(DEVICE)
    device.atan2_(device)
    assert_same(device, a.clone().atan2_(a.clone()))


@pytest.mark.parametrize("out_shape", [(4, 5), (0,), (30,)], ids=["exact", "empty", "too_large"])
def test_out_argument(out_shape: tuple[int, ...]) -> None:
    a, b = _randn(4, 5), _randn(4, 5, seed=1)
    out = torch.full(out_shape, 7.0, device=DEVICE)
    with falls_back("aten::atan2.out"):
        returned = torch.atan2(a.to(DEVICE), b.to(DEVICE), out=out)
    assert returned is out and out.device.type == "foo"
    assert_same(out, torch.atan2(a, b))
    # the storage the out= tensor ended with is device memory the runtime can free and reuse
    assert_same(out * 2, torch.atan2(a, b) * 2)


def test_out_argument_strided_view() -> None:
    a = _randn(4, 6)
    base = torch.zeros(4, 12, device=DEVICE)
    with falls_back("aten::atan2.out"):
        torch.atan2(a.to(DEVICE), a.to(DEVICE) + 1, out=base[:, ::2])
    expected = torch.zeros(4, 12)
    torch.atan2(a, a + 1, out=expected[:, ::2])
    assert_same(base, expected)


def _runs_natively(op: str, call: Callable[[], torch.Tensor]) -> torch.Tensor:
    before = fallback_counts().get(op, 0)
    result = call()
    assert fallback_counts().get(op, 0) == before, f"{op} ran through the CPU fallback"
    return result


def test_dense_views_alias_the_device_tensor_in_both_modes() -> None:
    """unfold, view_as_real and view_as_complex are core ops (codegen/core_ops.py): through the
    copying fallback they returned views of a host copy, and writes through them were lost (the
    full copying sweep found make_tensor's uniform_ on view_as_real leaving complex inputs
    uninitialised)."""
    a = _randn(10)
    device = a.to(DEVICE)
    windows = _runs_natively("aten::unfold", lambda: device[1:].unfold(0, 3, 2))
    assert_same(windows, a[1:].unfold(0, 3, 2))
    assert _same_storage(windows, device)
    assert windows.storage_offset() == 1 and windows.stride() == (2, 1)
    windows.mul_(0)  # a write through the view is a write to the device tensor
    expected = a.clone()
    expected[1:].unfold(0, 3, 2).mul_(0)
    assert_same(device, expected)

    c = _randn(3, 4, dtype=torch.complex64)
    complex_device = c.to(DEVICE)
    real = _runs_natively("aten::view_as_real", lambda: torch.view_as_real(complex_device))
    assert real.dtype == torch.float32
    assert_same(real, torch.view_as_real(c))
    assert _same_storage(real, complex_device)
    real.uniform_(-1, 1)  # what make_tensor does to fill a complex tensor
    assert_same(complex_device, torch.view_as_complex(real.cpu()))

    pairs = _randn(3, 2).to(DEVICE)
    as_complex = _runs_natively("aten::view_as_complex", lambda: torch.view_as_complex(pairs))
    assert _same_storage(as_complex, pairs)
    as_complex.fill_(1 + 2j)
    assert_same(pairs, torch.tensor([[1.0, 2.0]] * 3))


def test_conj_and_neg_bits_reach_the_cpu_kernel() -> None:
    a = _randn(8, dtype=torch.complex64)
    b = _randn(8, dtype=torch.complex64, seed=1)
    conj = a.to(DEVICE).conj()
    assert conj.is_conj()
    with falls_back("aten::dot"):
        result = torch.dot(conj, b.to(DEVICE))
    assert_same(result, torch.dot(a.conj(), b))
    negated = torch._neg_view(a.to(DEVICE))
    assert negated.is_neg()
    assert_same(torch.dot(negated, b.to(DEVICE)), torch.dot(torch._neg_view(a), b))
    # a view keeps the bits of the tensor it views
    windows = conj.unfold(0, 2, 2)
    assert windows.is_conj()
    assert_same(windows, a.conj().unfold(0, 2, 2))


def test_tensor_list_written_in_place() -> None:
    tensors = [_randn(3, seed=i) for i in range(3)] + [_randn(2, 2, seed=9)]
    tensors[1][0] = float("inf")
    device = [t.to(DEVICE) for t in tensors]
    pointers = [t.data_ptr() for t in device]
    found_inf = torch.zeros(1, device=DEVICE)
    with falls_back("aten::_amp_foreach_non_finite_check_and_unscale_"):
        torch._amp_foreach_non_finite_check_and_unscale_(device, found_inf, torch.full((1,), 0.5, device=DEVICE))
    expected_found = torch.zeros(1)
    torch._amp_foreach_non_finite_check_and_unscale_(tensors, expected_found, torch.full((1,), 0.5))
    for got, want in zip(device, tensors, strict=True):
        assert_same(got, want)
    assert_same(found_inf, expected_found)
    assert [t.data_ptr() for t in device] == pointers


def test_tensor_list_outputs() -> None:
    points = _randn(50, 2)
    with falls_back("aten::_histogramdd_bin_edges"):
        hist, edges = torch.histogramdd(points.to(DEVICE), bins=[3, 4])
    expected_hist, expected_edges = torch.histogramdd(points, bins=[3, 4])
    assert_same(hist, expected_hist)
    assert len(edges) == 2 and all(e.device.type == "foo" for e in edges)
    for got, want in zip(edges, expected_edges, strict=True):
        assert_same(got, want)


# An op with an optional tensor list (Tensor?[]) and a CPU kernel only. ATen's ops of that kind
# (index_put_'s _index_put_impl_, index) are foo kernels, so the test defines its own.
_OPTIONAL_LIST_OPS = torch.library.Library("scaffold_fallback_test", "DEF")
_OPTIONAL_LIST_OPS.define("index_put_accumulate(Tensor self, Tensor?[] indices, Tensor values) -> Tensor")
_OPTIONAL_LIST_OPS.impl(
    "index_put_accumulate", lambda self, indices, values: torch.ops.aten.index_put(self, indices, values, True), "CPU"
)


def test_optional_tensor_lists() -> None:
    a = _randn(5, 4)
    index = torch.tensor([0, 3, 3])
    rows, cols = _randn(3, 4, seed=2), _randn(3, seed=3)
    op = torch.ops.scaffold_fallback_test.index_put_accumulate
    with falls_back("scaffold_fallback_test::index_put_accumulate"):
        by_rows = op(a.to(DEVICE), [index.to(DEVICE)], rows.to(DEVICE))
        by_cols = op(a.to(DEVICE), [None, index.to(DEVICE)], cols.to(DEVICE))  # a None in the list
    assert_same(by_rows, op(a, [index], rows))
    assert_same(by_cols, op(a, [None, index], cols))


def test_factory_with_a_device_argument() -> None:
    with falls_back("aten::tril_indices"):
        indices = torch.tril_indices(4, 3, device=DEVICE)
    assert indices.device.type == "foo"
    assert_same(indices, torch.tril_indices(4, 3))


@zero_copy_only
def test_new_outputs_are_allocated_on_the_device_once() -> None:
    """A new output lives in the block the CPU kernel allocated: one device allocation per output,
    where copying would allocate twice (on the host, then on the device)."""
    a = _randn(1 << 16)
    device = a.to(DEVICE)
    torch.atan2(device, device)  # warm up (first-use warning, caches)
    before = foo.memory_stats()["alloc_requests"]
    result = torch.atan2(device, device)
    assert foo.memory_stats()["alloc_requests"] - before == 1
    assert_same(result, torch.atan2(a, a))


def test_multiple_outputs_and_a_stream() -> None:
    a = _randn(6, 5)
    stream = torch.Stream(device=DEVICE)
    with stream, falls_back("aten::sort.values_stable"):
        values, indices = torch.sort(a.to(DEVICE), dim=1)
    stream.synchronize()
    expected_values, expected_indices = torch.sort(a, dim=1)
    assert_same(values, expected_values)
    assert_same(indices, expected_indices)


def test_second_device() -> None:
    if foo.device_count() < 2:
        pytest.skip("one foo device")
    a = _randn(4)
    device = a.to("foo:1")
    result = torch.atan2(device, device)
    assert result.device == torch.device("foo:1")
    assert_same(result, torch.atan2(a, a))


@pytest.mark.slow
@pytest.mark.skipif(not ZERO_COPY, reason="already the copying run")
def test_backend_tests_pass_with_the_copying_fallback(request: pytest.FixtureRequest) -> None:
    """Every backend test that reaches the CPU fallback passes through the copying fallback too
    (SCAFFOLD_HOST_VIEW_FALLBACK changes nothing else). This test runs last (conftest.py) and takes
    the tests that reached the fallback in this session; run alone, it takes all of tests/backend."""
    reached = request.config.stash.get(REACHED_THE_FALLBACK, [])
    env = dict(os.environ, SCAFFOLD_HOST_VIEW_FALLBACK="0")
    completed = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-x", "-m", "not slow", "-p", "no:cacheprovider",
         *(reached or ["tests/backend"])],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert completed.returncode == 0, completed.stdout[-4000:] + completed.stderr[-2000:]
