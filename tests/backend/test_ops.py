"""Every native op of yaml/foo.yaml against the CPU.

The list of ops comes from the YAML itself: an op added there without a test here fails
test_op[<name>]. Each test compares foo with CPU on several shapes and dtypes, in contiguous,
transposed, sliced and expanded layouts (foo_testing.LAYOUTS), checks out= variants with empty,
too small, too large and strided outs, and in-place variants -- all without the CPU fallback.
"""

from __future__ import annotations

import contextlib
import functools
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.nn.functional as F
import yaml

from foo_testing import (
    DEVICE,
    WRITABLE_LAYOUTS,
    Fixed,
    Host,
    Tolerance,
    View,
    assert_same,
    check,
    check_inplace,
    check_out,
    check_outcome,
    foo,
    needs_host_views,
    no_fallback,
    place,
)

REPO = Path(__file__).resolve().parents[2]
SUPPORTED: list[str] = yaml.safe_load((REPO / "yaml" / "foo.yaml").read_text())["supported"]

F32, F64, I64, BOOL = torch.float32, torch.float64, torch.int64, torch.bool
FLOATS = (F32, F64)
SHAPES = [(5,), (3, 4), (2, 3, 4)]

OP_TESTS: dict[str, Callable[[], None]] = {}


def op_test(*names: str) -> Callable[[Callable[[], None]], Callable[[], None]]:
    def register(fn: Callable[[], None]) -> Callable[[], None]:
        for name in names:
            assert name not in OP_TESTS, name
            OP_TESTS[name] = fn
        return fn

    return register


def rand(
    shape: tuple[int, ...], dtype: torch.dtype = F32, *, low: float = -3, high: float = 3, seed: int = 0
) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed + 7 * len(shape) + sum(shape))
    if dtype == BOOL:
        return torch.rand(shape, generator=g) > 0.5
    if dtype.is_complex:
        return torch.complex(
            rand(shape, F32, low=low, high=high, seed=seed), rand(shape, F32, low=low, high=high, seed=seed + 1)
        ).to(dtype)
    if dtype.is_floating_point:
        return torch.rand(shape, generator=g, dtype=dtype) * (high - low) + low
    return torch.randint(int(low), int(high) + 1, shape, generator=g, dtype=dtype)


@pytest.mark.parametrize("op", SUPPORTED)
def test_op(op: str) -> None:
    assert op in OP_TESTS, f"native op {op} of yaml/foo.yaml has no test in {__file__}"
    OP_TESTS[op]()


def test_no_test_for_an_op_outside_the_yaml() -> None:
    assert sorted(set(OP_TESTS) - set(SUPPORTED)) == []


# ---- Factories, views, copies (the core ops) --------------------------------------------------


@op_test("empty.memory_format")
def _empty() -> None:
    for dtype in (F32, F64, I64, BOOL, torch.complex64):
        t = torch.empty(2, 3, dtype=dtype, device=DEVICE)
        assert (t.device, t.dtype, t.shape, t.stride()) == (torch.device("foo:0"), dtype, (2, 3), (3, 1))
    cl = torch.empty(2, 3, 4, 5, device=DEVICE, memory_format=torch.channels_last)
    assert cl.stride() == torch.empty(2, 3, 4, 5, memory_format=torch.channels_last).stride()
    assert torch.empty(0, device=DEVICE).numel() == 0
    assert torch.empty(3, device="foo:1").device == torch.device("foo:1")
    with pytest.raises(RuntimeError, match="pinned"):
        torch.empty(3, device=DEVICE, pin_memory=True)
    with pytest.raises(RuntimeError, match="negative"):
        torch.empty(-1, device=DEVICE)
    # factories built on empty + fill_ / copy
    with no_fallback():
        made = [
            torch.zeros(3, 4, device=DEVICE),
            torch.full((2, 2), 7, device=DEVICE),
            torch.ones(2, dtype=I64, device=DEVICE),
        ]
    assert_same(made, [torch.zeros(3, 4), torch.full((2, 2), 7), torch.ones(2, dtype=I64)])
    assert_same(torch.tensor([1.5, 2.5], device=DEVICE), torch.tensor([1.5, 2.5]))


@op_test("empty_strided")
def _empty_strided() -> None:
    t = torch.empty_strided((2, 3), (1, 2), device=DEVICE)
    assert t.stride() == (1, 2) and t.untyped_storage().nbytes() == 6 * 4
    t.copy_(torch.arange(6.0).view(2, 3))
    assert_same(t, torch.arange(6.0).view(2, 3))
    assert torch.empty_strided((2, 2), (0, 1), device=DEVICE).untyped_storage().nbytes() == 2 * 4
    # empty_like of a transposed tensor keeps its layout (empty_strided underneath)
    x = torch.randn(3, 4, device=DEVICE).t()
    assert torch.empty_like(x).stride() == x.stride()
    with pytest.raises(RuntimeError):
        torch.empty_strided((2, 3), (1,), device=DEVICE)


@op_test("as_strided")
def _as_strided() -> None:
    x = rand((4, 5))
    check(lambda t: t.as_strided((3, 2), (2, 3), 1), x, layouts=("contiguous",))
    check(lambda t: t.as_strided((5,), (4,)), x, layouts=("contiguous", "transposed"))
    check(lambda t: torch.as_strided(t, (2, 2), (0, 1), 3), x, layouts=("contiguous",))
    with pytest.raises(RuntimeError, match="out of bounds"):
        torch.randn(4, device=DEVICE).as_strided((3,), (2,))
    with pytest.raises(RuntimeError, match="Negative strides"):
        torch.randn(4, device=DEVICE).as_strided((2,), (-1,), 3)


@op_test("view")
def _view() -> None:
    x = rand((2, 3, 4))
    check(lambda t: t.view(6, 4), x, layouts=("contiguous",))
    check(lambda t: t.view(-1), x, layouts=("contiguous",))
    check(lambda t: t.view(torch.int32), x, layouts=("contiguous",))  # view.dtype: same bytes
    v = torch.zeros(6, device=DEVICE)
    v.view(2, 3)[1, 2] = 5.0  # a view shares memory
    assert v[5].item() == 5.0
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        torch.randn(3, 4, device=DEVICE).t().view(12)


@op_test("_reshape_alias")
def _reshape_alias() -> None:
    x = rand((3, 4))
    check(lambda t: torch.ops.aten._reshape_alias(t, (2, 6), (6, 1)), x, layouts=("contiguous",))
    check(lambda t: torch.ops.aten._reshape_alias(t, (4, 3), (1, 4)), x, layouts=("contiguous",))
    check(lambda t: t.reshape(12), x, layouts=("contiguous", "sliced"))


@op_test("unfold")
def _unfold() -> None:
    x = rand((4, 6))
    check(lambda t: t.unfold(1, 3, 2), x)
    check(lambda t: t.unfold(0, 2, 1).clone(), x)
    check(lambda t: t.unfold(1, 0, 1), x, layouts=("contiguous",))
    v = torch.zeros(6, device=DEVICE)
    v.unfold(0, 2, 2).fill_(3.0)  # a view shares memory
    assert_same(v, torch.full((6,), 3.0))
    with pytest.raises(RuntimeError, match="size"):
        torch.randn(3, device=DEVICE).unfold(0, 4, 1)


@op_test("view_as_real")
def _view_as_real() -> None:
    x = rand((3, 4), torch.complex64)
    check(torch.view_as_real, x, layouts=("contiguous", "sliced"))
    check(lambda t: torch.view_as_real(t.conj().resolve_conj()), x, layouts=("contiguous",))
    v = torch.zeros(2, dtype=torch.complex64, device=DEVICE)
    torch.view_as_real(v)[:, 1] = 1.0  # a view shares memory
    assert_same(v, torch.tensor([1j, 1j]))
    with pytest.raises(RuntimeError, match="conjugate"):
        torch.view_as_real(torch.zeros(2, dtype=torch.complex64, device=DEVICE).conj())


@op_test("view_as_complex")
def _view_as_complex() -> None:
    x = rand((3, 2))
    check(torch.view_as_complex, x, layouts=("contiguous",))
    v = torch.zeros(2, 2, device=DEVICE)
    torch.view_as_complex(v).fill_(1 + 2j)  # a view shares memory
    assert_same(v, torch.tensor([[1.0, 2.0], [1.0, 2.0]]))
    with pytest.raises(RuntimeError, match="last dimension with stride 1"):
        torch.view_as_complex(torch.zeros(2, 2, device=DEVICE).t())


@op_test("resize_")
def _resize_() -> None:
    for dtype in (F32, I64):
        base = rand((6,), dtype)

        def grow(t: torch.Tensor) -> torch.Tensor:
            t.resize_(2, 3)  # same numel: contents kept
            kept = t.clone()
            t.resize_(40)  # grows the storage on the device; the first 6 elements survive
            return torch.cat([kept.flatten(), t[:6]])

        check(grow, base, layouts=("contiguous",))
        check(lambda t: t.resize_(2).clone(), base, layouts=("contiguous",))
        g = torch.empty(0, dtype=dtype, device=DEVICE)
        g.resize_(1000)
        assert g.untyped_storage().nbytes() >= 1000 * g.element_size()
    t = torch.empty(2, 3, 4, 5, device=DEVICE).resize_(2, 3, 4, 5, memory_format=torch.channels_last)
    assert t.stride() == torch.empty(2, 3, 4, 5).resize_(2, 3, 4, 5, memory_format=torch.channels_last).stride()
    on1 = torch.ones(2, device="foo:1")
    on1.resize_(100000)  # grows on the tensor's own device
    assert on1.device == torch.device("foo:1") and on1[:2].cpu().tolist() == [1.0, 1.0]
    with pytest.raises(RuntimeError, match="negative"):
        torch.empty(2, device=DEVICE).resize_(-2)


@op_test("_copy_from")
def _copy_from() -> None:
    for dtype in (F32, F64, I64, BOOL, torch.complex64, torch.float16):
        x = rand((3, 5), dtype) if dtype != torch.complex64 else torch.randn(3, 5, dtype=dtype)
        assert torch.equal(x.to(DEVICE).cpu(), x)  # host -> device -> host
    x = rand((4, 6))
    # non-contiguous on either side, device <-> device, dtype conversion
    assert torch.equal(x.t().to(DEVICE).cpu(), x.t())
    assert torch.equal(x[:, ::2].to(DEVICE).cpu(), x[:, ::2])
    assert torch.equal(x.to(DEVICE)[:, 1::2].cpu(), x[:, 1::2])
    assert torch.equal(x.to(DEVICE).t().contiguous().cpu(), x.t().contiguous())
    for src, dst in [(F32, I64), (F32, F64), (F64, F32), (I64, F32), (F32, BOOL), (BOOL, F32)]:
        y = rand((3, 4), src)
        assert_same(y.to(DEVICE).to(dst), y.to(dst))  # device -> device with conversion
        assert_same(y.to(DEVICE, dst), y.to(dst))  # host -> device with conversion
        assert torch.equal(y.to(DEVICE).to("cpu", dst), y.to(dst))  # device -> host with conversion
    d = torch.zeros(4, 6, device=DEVICE)
    d[1:3, ::2].copy_(x[:2, :3])  # strided destination on the device
    ref = torch.zeros(4, 6)
    ref[1:3, ::2].copy_(x[:2, :3])
    assert_same(d, ref)
    d.copy_(torch.arange(6.0))  # broadcasting copy from the host
    assert_same(d, torch.arange(6.0).expand(4, 6))
    d.copy_(torch.tensor(2.5))  # 0-dim
    assert_same(d, torch.full((4, 6), 2.5))
    # across devices
    a = x.to("foo:0")
    b = a.to("foo:1")
    assert b.device == torch.device("foo:1") and torch.equal(b.cpu(), x)
    c = torch.empty(6, 4, device="foo:1").t()
    c.copy_(a)
    assert torch.equal(c.cpu(), x)
    # non_blocking: the copy to the host lands in pinned memory and is asynchronous, as in CUDA,
    # so reading it needs a synchronisation first
    on_host = x.to(DEVICE, non_blocking=True).to("cpu", non_blocking=True)
    assert on_host.is_pinned()
    foo.synchronize()
    assert torch.equal(on_host, x)
    # overlapping device copy (memmove semantics through a view)
    o = torch.arange(10.0, device=DEVICE)
    o[2:].copy_(o[:-2].clone())
    assert o.cpu().tolist() == [0.0, 1.0] + list(map(float, range(8)))
    # conj bit resolved on the way
    z = torch.randn(3, dtype=torch.complex64)
    assert torch.equal(z.to(DEVICE).conj().cpu().resolve_conj(), z.conj().resolve_conj())


@op_test("_copy_from_and_resize")
def _copy_from_and_resize() -> None:
    src = rand((3, 4))
    dst = torch.empty(0, device=DEVICE)
    torch.ops.aten._copy_from_and_resize(src, dst)
    assert dst.shape == (3, 4) and torch.equal(dst.cpu(), src)
    # the CPU fallback writes out= results back with it
    out = torch.empty(1, device=DEVICE)
    torch.cumprod(src.to(DEVICE), 1, out=out)
    assert out.shape == (3, 4)
    assert_same(out, torch.cumprod(src, 1))


@op_test("_local_scalar_dense")
def _local_scalar_dense() -> None:
    assert torch.tensor(2.5, device=DEVICE).item() == 2.5
    assert torch.tensor([7], dtype=I64, device=DEVICE).item() == 7
    assert torch.tensor(True, device=DEVICE).item() is True
    x = torch.arange(12.0, device=DEVICE).view(3, 4)
    assert x[2, 1].item() == 9.0 and x.t()[1, 2].item() == 9.0
    assert float(x[1, 1]) == 5.0 and int(x[0, 3]) == 3
    with pytest.raises(RuntimeError, match="cannot be converted to Scalar"):
        x.item()


@op_test("set_.source_Storage", "set_.source_Storage_storage_offset", "set_.source_Tensor", "set_")
def _set_() -> None:
    x = rand((3, 4))
    fx = x.to(DEVICE)
    # set_(Storage): a 1-D view of the whole storage
    y = torch.empty(0, device=DEVICE)
    y.set_(fx.untyped_storage())
    assert_same(y, x.flatten())
    # set_(Storage, offset, size, stride)
    z = torch.empty(0, device=DEVICE).set_(fx.untyped_storage(), 2, (2, 3), (1, 2))
    assert_same(z, torch.empty(0).set_(x.untyped_storage(), 2, (2, 3), (1, 2)))
    # a new shape that needs more memory grows the (device) storage, as on CPU...
    storage = torch.arange(12.0, device=DEVICE).untyped_storage()
    grown = torch.empty(0, device=DEVICE).set_(storage, 10, (2, 3), (3, 1))
    assert (
        storage.nbytes()
        == torch.empty(0).set_(torch.arange(12.0).untyped_storage(), 10, (2, 3), (3, 1)).untyped_storage().nbytes()
    )
    assert grown.flatten()[:2].cpu().tolist() == [10.0, 11.0]
    # ...but keeping the shape with an offset out of bounds is an error
    with pytest.raises(RuntimeError, match="out of bounds"):
        torch.empty(2, 3, device=DEVICE).set_(torch.arange(12.0, device=DEVICE).untyped_storage(), 10, (2, 3), (3, 1))
    with pytest.raises(RuntimeError, match="out of bounds"):
        torch.empty(2, 3).set_(torch.arange(12.0).untyped_storage(), 10, (2, 3), (3, 1))
    # set_(Tensor): shares memory
    w = torch.empty(0, device=DEVICE).set_(fx)  # type: ignore[call-overload]  # torch's stubs lack set_(Tensor)
    assert w.shape == (3, 4) and w.data_ptr() == fx.data_ptr()
    fx[0, 0] = 100.0
    assert w[0, 0].item() == 100.0
    # set_(): empty
    fx.set_()  # type: ignore[call-overload]  # torch's stubs lack set_() without arguments
    assert fx.shape == (0,) and fx.numel() == 0
    fx.resize_(5).fill_(1.0)  # and usable again
    assert fx.cpu().tolist() == [1.0] * 5
    with pytest.raises(RuntimeError):
        torch.empty(0, device=DEVICE).set_(torch.empty(3).untyped_storage())


@op_test("fill_.Scalar")
def _fill_() -> None:
    for dtype, value in [(F32, 3.5), (F64, -1.25), (I64, 7), (BOOL, True)]:
        check_inplace(lambda t, v=value: t.fill_(v), rand((3, 4), dtype))
    with no_fallback():
        full = torch.full((2, 3), 4.0, device=DEVICE)
    assert_same(full, torch.full((2, 3), 4.0))
    # fill_.Tensor is not native (CPU fallback) but must still write device memory
    check_inplace(lambda t: t.fill_(torch.tensor(2.0)), rand((3, 4)), native=False)


@op_test("zero_")
def _zero_() -> None:
    for dtype in (F32, I64, BOOL):
        check_inplace(lambda t: t.zero_(), rand((3, 4), dtype))
    with no_fallback():
        zeros = torch.zeros(5, dtype=I64, device=DEVICE)
    assert_same(zeros, torch.zeros(5, dtype=I64))


@op_test("_efficientzerotensor")
def _efficientzerotensor() -> None:
    with no_fallback():
        z = torch.ops.aten._efficientzerotensor([2, 3], dtype=F32, device=DEVICE)
    assert z.device.type == "foo" and torch._is_zerotensor(z) and z.shape == (2, 3)
    assert_same(z, torch.zeros(2, 3))  # .cpu() materialises it
    assert_same(z + rand((2, 3)), rand((2, 3)))
    # autograd hands one out for sgn's gradient of a real tensor (it crashed through the fallback)
    for dtype in (F32, F64):
        x = rand((4, 5), dtype).to(DEVICE).requires_grad_()
        torch.sgn(x).backward(torch.ones(4, 5, dtype=dtype, device=DEVICE))
        assert_same(x.grad, torch.zeros(4, 5, dtype=dtype))


# ---- Elementwise arithmetic ---------------------------------------------------------------------


def _binary_suite(
    name: str,
    fn: Callable[..., torch.Tensor],
    dtypes: tuple[torch.dtype, ...],
    *,
    alpha: bool = False,
    nonzero_other: bool = False,
) -> None:
    low = 1 if nonzero_other else -3
    for dtype in dtypes:
        for shape in SHAPES:
            a, b = rand(shape, dtype), rand(shape, dtype, low=low, seed=1)
            check(fn, a, b)
            check(lambda x, y: fn(x, y[-1]), a, b)  # broadcasting
            check(lambda x, dtype=dtype: fn(x, torch.tensor(2, dtype=dtype)), a)  # CPU 0-dim scalar operand
            check(lambda x: fn(x, 2), a)  # Python scalar
            if dtype.is_floating_point or name != "div":  # int.div_ would need a float result
                check_inplace(lambda x, y: getattr(x, name + "_")(y), a, b)
            if alpha:
                check(lambda x, y: fn(x, y, alpha=2), a, b)
        check_out(
            lambda x, y, out: fn(x, y, out=out),
            rand((3, 4), dtype),
            rand((3, 4), dtype, low=low, seed=1),
            dtype=F32 if name == "div" else dtype,
        )
    check(fn, rand((3, 4), I64), rand((3, 4), F32, low=low))  # type promotion
    check(lambda x: fn(torch.tensor(3.0), x), rand((3, 4), F32, low=low))  # CPU scalar as self


@op_test("add.out")
def _add() -> None:
    _binary_suite("add", torch.add, (F32, F64, I64), alpha=True)


@op_test("sub.out")
def _sub() -> None:
    _binary_suite("sub", torch.sub, (F32, F64, I64), alpha=True)


@op_test("mul.out")
def _mul() -> None:
    _binary_suite("mul", torch.mul, (F32, F64, I64))
    check(torch.mul, rand((3, 4), BOOL), rand((3, 4), BOOL, seed=2))


@op_test("div.out")
def _div() -> None:
    _binary_suite("div", torch.div, (F32, F64, I64), nonzero_other=True)


def _unary_suite(
    name: str, *, dtypes: tuple[torch.dtype, ...] = FLOATS, low: float = -3, high: float = 3, inplace: bool = True
) -> None:
    fn = getattr(torch, name)
    for dtype in dtypes:
        for shape in SHAPES + [()]:
            check(fn, rand(shape, dtype, low=low, high=high))
        if inplace:
            check_inplace(lambda t: getattr(t, name + "_")(), rand((3, 4), dtype, low=low, high=high))
        check_out(lambda t, out: fn(t, out=out), rand((3, 4), dtype, low=low, high=high))


@op_test("neg.out")
def _neg() -> None:
    _unary_suite("neg", dtypes=(F32, F64, I64))


@op_test("abs.out")
def _abs() -> None:
    _unary_suite("abs", dtypes=(F32, F64, I64))


@op_test("exp.out")
def _exp() -> None:
    _unary_suite("exp")
    check(torch.exp, rand((3, 4), I64))  # integer -> float


@op_test("log.out")
def _log() -> None:
    _unary_suite("log", low=0.1)
    check(torch.log, torch.tensor([0.0, -1.0, 1.0]))  # -inf, nan


@op_test("sqrt.out")
def _sqrt() -> None:
    _unary_suite("sqrt", low=0.0)


@op_test("rsqrt.out")
def _rsqrt() -> None:
    _unary_suite("rsqrt", low=0.1)


@op_test("sin.out")
def _sin() -> None:
    _unary_suite("sin")


@op_test("cos.out")
def _cos() -> None:
    _unary_suite("cos")


@op_test("ceil.out")
def _ceil() -> None:
    # Integral tensors are copied; the floating types have the CPU's loops.
    _unary_suite("ceil", dtypes=(F32, F64, I64, torch.float16, torch.bfloat16))
    check(torch.ceil, rand((3, 4), torch.uint8, low=0))
    check(torch.ceil, torch.tensor([-1.5, -0.5, -0.0, 0.5, 2.0, float("inf"), -float("inf"), float("nan")]))
    for dtype in (BOOL, torch.complex64):  # the CPU's errors, at the call
        check_outcome(lambda t: torch.ceil(t, out=torch.empty_like(t)), rand((3, 4), dtype))
    check_outcome(lambda t: torch.ceil(t, out=torch.empty_like(t, dtype=F64)), rand((3, 4)))  # another dtype


@op_test("pow.Tensor_Scalar_out")
def _pow() -> None:
    for dtype in FLOATS:
        for exponent in (2, 3, 0.5, -1, 0):
            check(lambda t, e=exponent: torch.pow(t, e), rand((3, 4), dtype, low=0.5))
        check_inplace(lambda t: t.pow_(2), rand((3, 4), dtype))
        check_out(lambda t, out: torch.pow(t, 3, out=out), rand((3, 4), dtype))
    check(lambda t: t**3, rand((3, 4), I64))
    check(lambda t: t**2.5, rand((3, 4), I64, low=0))  # promotes to float


# ---- Functional and in-place variants ----------------------------------------------------------
#
# PyTorch has default kernels for these (structured wrappers around the .out kernels); foo
# overrides them to run in one pass (runtime/csrc/ops/kernel_support.h). Whatever path a call takes
# inside foo -- ATen's own meta function on host views, the contiguous fast path, or the default
# kernel for inputs foo does not handle itself -- the result must be the CPU's: values, dtype,
# shape and strides, or the same error.

CHANNELS_LAST = torch.channels_last
BINARY_DTYPES = [
    (F32, F32), (F64, F64), (I64, I64), (BOOL, BOOL), (I64, F32), (F32, I64), (F32, F64), (F64, F32),
    (torch.int32, I64), (BOOL, F32), (I64, BOOL), (torch.float16, F32), (torch.complex64, F32),
]
BROADCAST_SHAPES = [
    ((3, 4), (3, 4)), ((3, 4), (4,)), ((4,), (3, 4)), ((3, 1), (1, 4)), ((2, 1, 4), (3, 1)),
    ((), (3, 4)), ((3, 4), ()), ((), ()), ((0, 3), (3,)), ((2, 0), (2, 1)), ((3, 4), (3, 5)),
]
# Python numbers and CPU 0-dim tensors of every kind take part in type promotion as scalars.
SCALARS = [2, 2.5, True, -1]
HOST_SCALARS = [
    torch.tensor(2),
    torch.tensor(2.5, dtype=F64),
    torch.tensor(True),
    torch.tensor(1.5, dtype=torch.float16),
]


def _channels_last(t: torch.Tensor) -> torch.Tensor:
    return t.contiguous(memory_format=CHANNELS_LAST)


def _odd_unit_strides(shape: tuple[int, ...], strides: tuple[int, ...]) -> Callable[[torch.Tensor], torch.Tensor]:
    """A contiguous view whose size-1 dimensions have strides a fresh tensor would not have (they
    take part in TensorIterator's choice of output strides)."""
    return lambda t: t.as_strided(shape, strides)


def _layout_cases(dtype_a: torch.dtype, dtype_b: torch.dtype) -> list[tuple[object, object]]:
    """Operand pairs in layouts of their own (mixed, channels-last, odd strides of size-1 dims)."""
    x4, y4 = rand((2, 3, 4, 5), dtype_a), rand((2, 3, 4, 5), dtype_b, seed=1)
    col = rand((3,), dtype_a)
    return [
        (View(x4, _channels_last), View(y4, _channels_last)),
        (View(x4, _channels_last), y4),
        (x4, View(y4, _channels_last)),
        (View(x4, _channels_last), rand((3, 1, 1), dtype_b, seed=1)),
        (View(x4, lambda t: t.permute(0, 2, 3, 1)), rand((3,), dtype_b, seed=1)),
        (View(x4, lambda t: t.transpose(1, 2)), y4.transpose(1, 2).contiguous()),
        (View(col, _odd_unit_strides((3, 1), (1, 5))), rand((3, 1), dtype_b, seed=1)),
        (View(col, _odd_unit_strides((3, 1), (1, 5))), rand((3, 4), dtype_b, seed=1)),
        (rand((1, 4), dtype_b, seed=1), View(col, _odd_unit_strides((3, 1), (1, 5)))),
        (View(col, _odd_unit_strides((1, 3, 1), (1, 1, 7))), rand((2, 1, 1), dtype_b, seed=1)),
    ]


def _functional_binary(
    fn: Callable[..., torch.Tensor], *, alpha: bool = False, reflected: Callable[..., torch.Tensor] | None = None
) -> None:
    for dtype_a, dtype_b in BINARY_DTYPES:
        for shape_a, shape_b in BROADCAST_SHAPES:
            check_outcome(fn, rand(shape_a, dtype_a), rand(shape_b, dtype_b, seed=1))
        for a, b in _layout_cases(dtype_a, dtype_b):
            check_outcome(fn, a, b, layouts=("contiguous",))
    for dtype in (F32, I64, BOOL, torch.float16):
        x = rand((3, 4), dtype)
        for s in HOST_SCALARS:
            check_outcome(fn, x, Host(s))
            check_outcome(fn, Host(s), x)
        for scalar in SCALARS:
            check_outcome(lambda t, scalar=scalar: fn(t, scalar), x)
            if reflected is not None:
                check_outcome(lambda t, scalar=scalar: reflected(scalar, t), x)
        if alpha:
            for a in (2, 0.5, True):
                check_outcome(lambda t, u, a=a: fn(t, u, alpha=a), x, rand((4,), dtype, seed=1))
    # the default dtype decides what integers promote to
    with _default_dtype(F64):
        check_outcome(fn, rand((3, 4), I64), rand((3, 4), I64, low=1, seed=1))
        check_outcome(fn, rand((3, 4), I64), Host(torch.tensor(2.5)))
    # devices: the result lives on the operands' device, whichever argument is the CPU scalar
    on1 = rand((3, 4)).to("foo:1")
    for result in (fn(on1, torch.tensor(2.0)), fn(torch.tensor(2.0), on1), fn(on1, on1)):
        assert result.device == torch.device("foo:1")
    with pytest.raises(RuntimeError, match=r"foo:0.*foo:1|foo:1.*foo:0"):
        fn(rand((3, 4)).to("foo:0"), on1)
    with pytest.raises(RuntimeError, match="cpu"):
        fn(rand((3, 4)).to(DEVICE), rand((3, 4)))


def _inplace_binary(name: str, *, alpha: bool = False) -> None:
    def run(x: torch.Tensor, *rest: object, **kwargs: object) -> torch.Tensor:
        result: object = getattr(x, name + "_")(*rest, **kwargs)
        assert result is x, "an in-place op must return self"
        return x

    for dtype_a, dtype_b in BINARY_DTYPES:
        for shape_a, shape_b in [
            ((3, 4), (3, 4)),
            ((3, 4), (4,)),
            ((3, 4), ()),
            ((), ()),
            ((4,), (3, 4)),
            ((0, 3), (3,)),
        ]:
            check_outcome(run, rand(shape_a, dtype_a), rand(shape_b, dtype_b, seed=1), layouts=WRITABLE_LAYOUTS)
        x4, y4 = rand((2, 3, 4, 5), dtype_a), rand((2, 3, 4, 5), dtype_b, seed=1)
        check_outcome(run, View(x4, _channels_last), y4, layouts=("contiguous",))
        check_outcome(run, x4, View(y4, _channels_last), layouts=("contiguous",))
        check_outcome(run, x4, View(y4[:1], lambda t: t.expand(2, 3, 4, 5)), layouts=("contiguous",))
    for dtype in (F32, I64, BOOL):
        x = rand((3, 4), dtype)
        for s in HOST_SCALARS:
            check_outcome(run, x, Host(s), layouts=WRITABLE_LAYOUTS)
        for scalar in SCALARS:
            check_outcome(lambda t, scalar=scalar: run(t, scalar), x, layouts=WRITABLE_LAYOUTS)
        if alpha:
            check_outcome(lambda t, u: run(t, u, alpha=2), x, rand((4,), dtype, seed=1))
            check_outcome(lambda t, u: run(t, u, alpha=0.5), x, rand((4,), dtype, seed=1))
    # memory overlap: writing an expanded tensor, or into memory another operand reads
    x = rand((4, 3))
    check_outcome(lambda t: run(t, t), x, layouts=WRITABLE_LAYOUTS)
    check_outcome(lambda t: run(t.t(), t), rand((3, 3)), layouts=("contiguous",))
    check_outcome(lambda t: run(t[1:], t[:-1]), x, layouts=("contiguous",))
    check_outcome(lambda t: run(t, t[0]), x, layouts=("contiguous",))
    check_outcome(run, View(rand((3,)), lambda t: t.expand(4, 3)), rand((4, 3), seed=1), layouts=("contiguous",))
    with pytest.raises(RuntimeError, match=r"foo:0.*foo:1|foo:1.*foo:0"):
        run(rand((3, 4)).to("foo:0"), rand((3, 4)).to("foo:1"))
    with pytest.raises(RuntimeError, match="cpu"):
        run(rand((3, 4)).to(DEVICE), rand((3, 4)))


@contextlib.contextmanager
def _default_dtype(dtype: torch.dtype) -> Iterator[None]:
    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(previous)


@op_test("add.Tensor")
def _add_functional() -> None:
    _functional_binary(torch.add, alpha=True, reflected=lambda s, t: s + t)


@op_test("add_.Tensor")
def _add_inplace() -> None:
    _inplace_binary("add", alpha=True)


@op_test("sub.Tensor")
def _sub_functional() -> None:
    _functional_binary(torch.sub, alpha=True, reflected=lambda s, t: s - t)


@op_test("sub_.Tensor")
def _sub_inplace() -> None:
    _inplace_binary("sub", alpha=True)


@op_test("mul.Tensor")
def _mul_functional() -> None:
    _functional_binary(torch.mul, reflected=lambda s, t: s * t)


@op_test("mul_.Tensor")
def _mul_inplace() -> None:
    _inplace_binary("mul")


@op_test("div.Tensor")
def _div_functional() -> None:
    _functional_binary(torch.div)


@op_test("div_.Tensor")
def _div_inplace() -> None:
    _inplace_binary("div")


@op_test("maximum")
def _maximum_functional() -> None:
    _functional_binary(torch.maximum)
    check(torch.maximum, torch.tensor([float("nan"), 1.0, -0.0]), torch.tensor([0.0, float("nan"), 0.0]))


UNARY_DTYPES = (F32, F64, I64, BOOL, torch.float16, torch.complex64)
UNARY_SHAPES = [(5,), (3, 4), (2, 3, 4), (), (0, 3)]


def _unary_layout_cases(dtype: torch.dtype) -> list[View]:
    return [
        View(rand((2, 3, 4, 5), dtype), _channels_last),
        View(rand((2, 3, 4, 5), dtype), lambda t: t.permute(0, 2, 3, 1)),
        View(rand((3,), dtype), _odd_unit_strides((3, 1), (1, 5))),
        View(rand((3,), dtype), _odd_unit_strides((1, 3, 1), (1, 1, 7))),
    ]


# Unary ops and dtypes CUDA computes where some supported torch's CPU kernel refuses (abs of bool:
# torch 2.11's CPU raises), and what CUDA gives: the device gives the same, whatever the CPU does.
CUDA_UNARY = {("abs", BOOL): lambda t: t.clone()}


def _cuda_unary(name: str, dtype: torch.dtype, inplace: bool) -> bool:
    """Checks `name` on `dtype` against CUDA's result where CUDA_UNARY has it; False elsewhere."""
    expected = CUDA_UNARY.get((name, dtype))
    if expected is None:
        return False
    for shape in UNARY_SHAPES:
        x = rand(shape, dtype)
        on_device = x.to(DEVICE)
        result = getattr(on_device, name + "_")() if inplace else getattr(torch, name)(on_device)
        assert_same(result, expected(x))
    return True


def _functional_unary(name: str) -> None:
    fn = getattr(torch, name)
    for dtype in UNARY_DTYPES:
        if _cuda_unary(name, dtype, inplace=False):
            continue
        for shape in UNARY_SHAPES:
            check_outcome(fn, rand(shape, dtype))
        for view in _unary_layout_cases(dtype):
            check_outcome(fn, view, layouts=("contiguous",))
    check_outcome(fn, torch.tensor([0.0, -0.0, 1.0, -1.0, float("inf"), -float("inf"), float("nan")]))
    with _default_dtype(F64):
        check_outcome(fn, rand((3, 4), I64))
    assert fn(rand((3,)).to("foo:1")).device == torch.device("foo:1")


def _inplace_unary(name: str) -> None:
    def run(x: torch.Tensor) -> torch.Tensor:
        result: object = getattr(x, name + "_")()
        assert result is x, "an in-place op must return self"
        return x

    for dtype in UNARY_DTYPES:
        if _cuda_unary(name, dtype, inplace=True):
            continue
        for shape in UNARY_SHAPES:
            check_outcome(run, rand(shape, dtype), layouts=WRITABLE_LAYOUTS)
        for view in _unary_layout_cases(dtype):
            check_outcome(run, view, layouts=("contiguous",))
    check_outcome(run, View(rand((3,)), lambda t: t.expand(4, 3)), layouts=("contiguous",))  # overlap


for _name in ("neg", "abs", "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "ceil"):
    op_test(_name)(functools.partial(_functional_unary, _name))
    op_test(_name + "_")(functools.partial(_inplace_unary, _name))


@op_test("where.self")
def _where_functional() -> None:
    def cond(shape: tuple[int, ...]) -> torch.Tensor:
        return rand(shape, BOOL, seed=2)

    for dtype_a, dtype_b in BINARY_DTYPES:
        for shape_c, shape_a, shape_b in [
            ((3, 4), (3, 4), (3, 4)), ((3, 4), (4,), (3, 1)), ((4,), (3, 4), ()), ((), (3, 4), (3, 4)),
            ((), (), ()), ((0, 3), (3,), (3,)), ((3, 4), (3, 5), (3, 4)),
        ]:
            check_outcome(torch.where, cond(shape_c), rand(shape_a, dtype_a), rand(shape_b, dtype_b, seed=1))
        x4, y4 = rand((2, 3, 4, 5), dtype_a), rand((2, 3, 4, 5), dtype_b, seed=1)
        c4 = cond((2, 3, 4, 5))
        check_outcome(
            torch.where,
            View(c4, _channels_last),
            View(x4, _channels_last),
            View(y4, _channels_last),
            layouts=("contiguous",),
        )
        check_outcome(torch.where, c4, View(x4, _channels_last), y4, layouts=("contiguous",))
        check_outcome(
            torch.where,
            View(cond((3,)), _odd_unit_strides((3, 1), (1, 5))),
            rand((3, 1), dtype_a),
            rand((3, 4), dtype_b),
            layouts=("contiguous",),
        )
    x, y = rand((3, 4)), rand((3, 4), I64, seed=1)
    for s in HOST_SCALARS:
        check_outcome(torch.where, cond((3, 4)), x, Host(s))
        check_outcome(torch.where, cond((3, 4)), Host(s), y)
    check_outcome(torch.where, Host(torch.tensor(True)), x, y)  # a CPU 0-dim condition
    for scalar in SCALARS:  # where.ScalarOther / ScalarSelf / Scalar, built on where.self
        check_outcome(lambda c, t, scalar=scalar: torch.where(c, t, scalar), cond((3, 4)), x)
        check_outcome(lambda c, t, scalar=scalar: torch.where(c, scalar, t), cond((3, 4)), y)
        check_outcome(lambda c, scalar=scalar: torch.where(c, scalar, 0.5), cond((3, 4)))
    check_outcome(torch.where, rand((3, 4), torch.uint8, low=0, high=1), x, y)  # deprecated, still works
    check_outcome(torch.where, rand((3, 4), F32), x, y)  # not a boolean condition: an error
    with _default_dtype(F64):
        check_outcome(lambda c, t: torch.where(c, t, 1.5), cond((3, 4)), rand((3, 4), I64))
    with pytest.raises(RuntimeError, match=r"foo:0.*foo:1|foo:1.*foo:0"):
        torch.where(cond((3, 4)).to("foo:0"), x.to("foo:0"), y.to("foo:1"))
    with pytest.raises(RuntimeError):
        torch.where(cond((3, 4)).to(DEVICE), x.to(DEVICE), y)
    assert torch.where(cond(()), torch.tensor(1.0), x.to("foo:1")).device == torch.device("foo:1")


@op_test("index_select")
def _index_select_functional() -> None:
    for dtype in (F32, F64, I64, BOOL, torch.float16):
        x = rand((5, 6, 3), dtype)
        for index_dtype in (I64, torch.int32):
            for values in ([2, 0, 1, 1], [], [1]):
                index = torch.tensor(values, dtype=index_dtype)
                for dim in (0, 1, 2, -1):
                    check_outcome(lambda t, i, d=dim: torch.index_select(t, d, i), x, Fixed(index))
            check_outcome(lambda t, i: torch.index_select(t, 1, i), x, Fixed(torch.tensor(4, dtype=index_dtype)))
        check_outcome(
            lambda t, i: torch.index_select(t, 0, i),
            View(rand((2, 3, 4, 5), dtype), _channels_last),
            Fixed(torch.tensor([1, 0, 1])),
            layouts=("contiguous",),
        )
        check_outcome(lambda t, i: torch.index_select(t, 0, i), rand((), dtype), Fixed(torch.tensor([0])))
        check_outcome(lambda t, i: torch.index_select(t, -1, i), rand((), dtype), Fixed(torch.tensor(0)))
        check_outcome(lambda t, i: torch.index_select(t, 1, i), rand((0, 3), dtype), Fixed(torch.tensor([2, 0])))
    x = rand((5, 6))
    # errors, with the CPU's messages
    check_outcome(lambda t, i: torch.index_select(t, 0, i), x, Fixed(torch.tensor([[0, 1]])))  # not a vector
    check_outcome(lambda t, i: torch.index_select(t, 0, i), x, Fixed(torch.tensor([5])))  # out of range
    check_outcome(lambda t, i: torch.index_select(t, 0, i), x, Fixed(torch.tensor([1.0])))  # not an integer
    check_outcome(lambda t, i: torch.index_select(t, 2, i), x, Fixed(torch.tensor([1])))  # no such dim
    check_outcome(lambda t, i: torch.index_select(t, 0, i), rand(()), Fixed(torch.tensor([0, 0])))
    with pytest.raises(RuntimeError, match="cpu"):
        torch.index_select(x.to(DEVICE), 0, torch.tensor([1]))  # the index must be on the device too
    with pytest.raises(RuntimeError, match=r"foo:0.*foo:1|foo:1.*foo:0"):
        torch.index_select(x.to("foo:0"), 0, torch.tensor([1], device="foo:1"))
    assert torch.index_select(x.to("foo:1"), 0, torch.tensor([1], device="foo:1")).device == torch.device("foo:1")


def _native_unary(name: str, a: torch.Tensor, b: torch.Tensor, s: torch.Tensor, i: torch.Tensor) -> object:
    return getattr(torch, name)(a)


def _native_unary_inplace(name: str, a: torch.Tensor, b: torch.Tensor, s: torch.Tensor, i: torch.Tensor) -> object:
    return getattr(a, name + "_")()


UNARY_NATIVE = ("neg", "abs", "exp", "log", "sqrt", "rsqrt", "sin", "cos", "tanh", "sigmoid", "relu")
NATIVE_CALLS: dict[str, Callable[[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor], object]] = {
    "add": lambda a, b, s, i: a + b,
    "add_scalar": lambda a, b, s, i: a + 2,
    "sub": lambda a, b, s, i: torch.sub(a, b, alpha=2),
    "mul": lambda a, b, s, i: a * 2.5,
    "div": lambda a, b, s, i: a / b,
    "maximum": lambda a, b, s, i: torch.maximum(a, b),
    "add_": lambda a, b, s, i: a.add_(b),
    "sub_": lambda a, b, s, i: a.sub_(s),
    "mul_": lambda a, b, s, i: a.mul_(b),
    "div_": lambda a, b, s, i: a.div_(2),
    "where": lambda a, b, s, i: torch.where(s, a, b),
    "index_select": lambda a, b, s, i: torch.index_select(a, 1, i),
    **{name: functools.partial(_native_unary, name) for name in UNARY_NATIVE},
    **{name + "_": functools.partial(_native_unary_inplace, name) for name in UNARY_NATIVE},
}


@needs_host_views
@pytest.mark.parametrize("call", sorted(NATIVE_CALLS))
@pytest.mark.parametrize("layout", ["contiguous", "transposed", "channels_last"])
def test_functional_and_inplace_ops_do_what_the_cpu_does(call: str, layout: str) -> None:
    """The overrides are what runs, and they do no more than the CPU: every op the profiler records
    on foo, it records (in that order) for the same call on the CPU -- none of the extra
    empty_strided / .out dispatches of PyTorch's default kernels, no CPU fallback -- whatever the
    layout. (foo may record fewer: its kernels call ATen's CPU kernels directly.)"""
    from torch.profiler import ProfilerActivity, profile

    def events(device: str) -> list[str]:
        a, b = rand((2, 3, 4, 5), low=0.5), rand((2, 3, 4, 5), low=0.5, high=3, seed=1)
        if layout == "transposed":
            a, b = a.transpose(1, 3), b.transpose(1, 3)
        elif layout == "channels_last":
            a, b = _channels_last(a), _channels_last(b)
        a, b = a.to(device), b.to(device)
        s = a > 1 if call.startswith("where") else torch.tensor(1.0)
        i = torch.tensor([2, 0, 1], device=device)
        NATIVE_CALLS[call](a, b, s, i)  # warm up (first-call initialisation)
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            NATIVE_CALLS[call](a, b, s, i)
        return [event.name for event in prof.events()]

    expected = events("cpu")
    with no_fallback():
        actual = events(DEVICE)
    remaining = iter(expected)  # actual must be a subsequence of expected
    assert all(name in remaining for name in actual), f"foo: {actual}, CPU: {expected}"


def test_functional_ops_release_device_memory() -> None:
    """Host views used by the native functional and in-place kernels do not keep device memory
    alive after the call (they are recycled, see runtime/csrc/host_view/host_view_cache.h)."""
    start = foo.memory_allocated()
    a, b = torch.randn(1000, device=DEVICE), torch.randn(1000, device=DEVICE)
    c = torch.exp(a + b * 2).add_(a)
    d = torch.where(c > 0, a, b).index_select(0, torch.tensor([1, 2], device=DEVICE))
    del a, b, c, d
    # Launched kernels hold their operands until they have run (launch.h), as CUDA's caching
    # allocator keeps a block in use until the stream's work on it is done.
    foo.synchronize()
    assert foo.memory_allocated() == start


def test_functional_ops_inside_and_outside_inference_mode() -> None:
    """Kernels called under torch.inference_mode and outside it, alternately, behave as on the CPU
    (a host view made in one mode is never reused in a way the other would refuse)."""
    x, y = rand((3, 4)), rand((3, 4), seed=1)
    fx, fy = x.to(DEVICE), y.to(DEVICE)
    for _ in range(3):
        with torch.inference_mode():
            inner = torch.sigmoid(fx + fy)
            inner.mul_(fy)
        outer = torch.sigmoid(fx + fy)
        outer.mul_(fy)
        fx.add_(1.0)
        x.add_(1.0)
        assert not outer.is_inference() and inner.is_inference()
        assert_same(outer, torch.sigmoid(x - 1 + y) * y)
        assert_same(inner, torch.sigmoid(x - 1 + y) * y)
    assert_same(fx, x)


OVERLAPPING_OUT: dict[str, Callable[[torch.Tensor], object]] = {
    "add.out": lambda x: torch.add(x[:4], 1, out=x[1:5]),
    "clamp.out": lambda x: torch.clamp(x[:4], 0, 3, out=x[1:5]),
    "index_select.out": lambda x: torch.index_select(x[:4], 0, torch.tensor([0, 1], device=x.device), out=x[1:3]),
    "cat.out": lambda x: torch.cat([x[:2], x[2:4]], out=x[1:5]),
    "max.dim_max": lambda x: torch.max(
        x[:4].view(2, 2), 1, out=(x[1:3], torch.empty(2, dtype=torch.int64, device=x.device))
    ),
    "index.Tensor_out": lambda x: torch.ops.aten.index.Tensor_out(
        x[:4], [torch.tensor([0, 1], device=x.device)], out=x[1:3]
    ),
    "index_put_": lambda x: x.index_put_((torch.tensor([0, 1, 2, 3], device=x.device),), x[2:6]),
}


@pytest.mark.parametrize("op", list(OVERLAPPING_OUT))
def test_an_output_overlapping_an_input_is_refused_as_on_the_cpu(op: str) -> None:
    """A kernel's host views of one device storage are separate CPU storages; the kernel views its
    inputs on the output's host storage where they share device memory, so the CPU kernel's overlap
    checks refuse a partial overlap as on the CPU (and CUDA), with nothing written, instead of
    computing from memory it is overwriting."""
    with pytest.raises(RuntimeError, match="unsupported operation"):
        OVERLAPPING_OUT[op](torch.arange(8.0))
    x = torch.arange(8.0, device=DEVICE)
    with pytest.raises(RuntimeError, match="unsupported operation"):
        OVERLAPPING_OUT[op](x)
    assert_same(x, torch.arange(8.0))


def test_an_output_that_is_its_input_computes_as_on_the_cpu() -> None:
    """The same memory as input and output (out= the input itself) is allowed for elementwise ops,
    on the CPU and here."""
    x, fx = torch.arange(8.0), torch.arange(8.0, device=DEVICE)
    torch.add(x[:4], x[:4], out=x[:4])
    torch.add(fx[:4], fx[:4], out=fx[:4])
    assert_same(fx, x)


# ---- Activations and gradients ------------------------------------------------------------------


@op_test("relu", "relu_")
def _relu() -> None:
    for dtype in (F32, F64, I64):
        for shape in SHAPES:
            check(torch.relu, rand(shape, dtype))
            check_inplace(torch.relu_, rand(shape, dtype))
    check(torch.relu, torch.tensor([float("nan"), -0.0, 1.0]))
    with pytest.raises(RuntimeError, match="[Bb]oolean"):
        torch.relu(torch.ones(2, dtype=BOOL, device=DEVICE))


def _activation_suite(name: str, fn: Callable[..., torch.Tensor]) -> None:
    for dtype in FLOATS:
        for shape in SHAPES:
            check(fn, rand(shape, dtype))
        check_out(lambda t, out: fn(t, out=out), rand((3, 4), dtype))
        check_inplace(lambda t: getattr(t, name + "_")(), rand((3, 4), dtype))


@op_test("tanh.out")
def _tanh() -> None:
    _activation_suite("tanh", torch.tanh)


@op_test("sigmoid.out")
def _sigmoid() -> None:
    _activation_suite("sigmoid", torch.sigmoid)


@op_test("gelu.out", "gelu")
def _gelu() -> None:
    for approximate in ("none", "tanh"):
        for dtype in FLOATS:
            check(lambda t, approximate=approximate: F.gelu(t, approximate=approximate), rand((3, 4), dtype))
            check_inplace(
                lambda t, approximate=approximate: torch.ops.aten.gelu_(t, approximate=approximate), rand((3, 4), dtype)
            )
        check_out(
            lambda t, out, approximate=approximate: torch.ops.aten.gelu.out(t, approximate=approximate, out=out),
            rand((2, 5)),
        )
    with pytest.raises(RuntimeError, match="approximate"):
        F.gelu(torch.ones(2, device=DEVICE), approximate="bogus")


@op_test("silu.out", "silu")
def _silu() -> None:
    for dtype in FLOATS:
        for shape in SHAPES:
            check(F.silu, rand(shape, dtype))
        check_inplace(lambda t: F.silu(t, inplace=True), rand((3, 4), dtype))
        check_out(lambda t, out: torch.ops.aten.silu.out(t, out=out), rand((3, 4), dtype))


def _grad_of(fn: Callable[[torch.Tensor], torch.Tensor]) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    def grad(x: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
        x = x.detach().requires_grad_()
        (grad_x,) = torch.autograd.grad(fn(x), x, g)
        return grad_x

    return grad


@op_test("silu_backward.grad_input", "silu_backward")
def _silu_backward() -> None:
    # float16 too: PyTorch's composite, which ran without this kernel, rounded every step in half
    # precision; ATen's kernel computes in float32 and rounds once, as CUDA's does.
    for dtype in (*FLOATS, torch.float16):
        g, x = rand((3, 4), dtype, seed=3), rand((3, 4), dtype)
        check(torch.ops.aten.silu_backward, g, x)
        check(_grad_of(F.silu), x, g, layouts=("contiguous", "transposed"))
        check_out(lambda g, x, out: torch.ops.aten.silu_backward.grad_input(g, x, grad_input=out), g, x)


@op_test("mish_backward")
def _mish_backward() -> None:
    for dtype in (*FLOATS, torch.float16):
        g, x = rand((3, 4), dtype, seed=3), rand((3, 4), dtype)
        check(torch.ops.aten.mish_backward, g, x)
        # mish's forward has no kernel in foo: the fallback runs it.
        check(_grad_of(F.mish), x, g, layouts=("contiguous", "transposed"), native=False)


@op_test("threshold_backward.grad_input", "threshold_backward")
def _threshold_backward() -> None:
    for dtype in FLOATS:
        g, x = rand((3, 4), dtype, seed=3), rand((3, 4), dtype)
        check(lambda g, x: torch.ops.aten.threshold_backward(g, x, 0.5), g, x)
        check(_grad_of(torch.relu), x, g, layouts=("contiguous", "transposed"))
        check_out(lambda g, x, out: torch.ops.aten.threshold_backward.grad_input(g, x, 0.0, grad_input=out), g, x)


@op_test("sigmoid_backward.grad_input")
def _sigmoid_backward() -> None:
    for dtype in FLOATS:
        g, y = rand((3, 4), dtype, seed=3), rand((3, 4), dtype, low=0, high=1)
        check(torch.ops.aten.sigmoid_backward, g, y)
        check(_grad_of(torch.sigmoid), rand((3, 4), dtype), g, layouts=("contiguous", "transposed"))
        check_out(lambda g, y, out: torch.ops.aten.sigmoid_backward.grad_input(g, y, grad_input=out), g, y)


@op_test("tanh_backward.grad_input")
def _tanh_backward() -> None:
    for dtype in FLOATS:
        g, y = rand((3, 4), dtype, seed=3), rand((3, 4), dtype, low=-1, high=1)
        check(torch.ops.aten.tanh_backward, g, y)
        check(_grad_of(torch.tanh), rand((3, 4), dtype), g, layouts=("contiguous", "transposed"))
        check_out(lambda g, y, out: torch.ops.aten.tanh_backward.grad_input(g, y, grad_input=out), g, y)


@op_test("gelu_backward.grad_input", "gelu_backward")
def _gelu_backward() -> None:
    for approximate in ("none", "tanh"):
        for dtype in FLOATS:
            g, x = rand((3, 4), dtype, seed=3), rand((3, 4), dtype)
            check(
                lambda g, x, approximate=approximate: torch.ops.aten.gelu_backward(g, x, approximate=approximate), g, x
            )
            check(
                _grad_of(functools.partial(F.gelu, approximate=approximate)),
                x,
                g,
                layouts=("contiguous", "transposed"),
            )
        check_out(
            lambda g, x, out, approximate=approximate: torch.ops.aten.gelu_backward.grad_input(
                g, x, approximate=approximate, grad_input=out
            ),
            g,
            x,
        )


# ---- Reductions -----------------------------------------------------------------------------------


@op_test("sum.IntList_out")
def _sum() -> None:
    for dtype in (F32, F64, I64, BOOL):
        x = rand((3, 4, 5), dtype)
        check(torch.sum, x)
        for dim in (0, 1, -1, (0, 2)):
            check(lambda t, d=dim: t.sum(d), x)
            check(lambda t, d=dim: t.sum(d, keepdim=True), x)
        check_out(lambda t, out: torch.sum(t, 1, out=out), x, dtype=I64 if dtype == BOOL else dtype)
    check(lambda t: t.sum(1, dtype=F64), rand((3, 4)))
    check(lambda t: t.sum(()), rand((3, 4)))  # empty dim list: full reduction
    check(torch.sum, torch.empty(0, 3))


@op_test("mean.out")
def _mean() -> None:
    for dtype in FLOATS:
        x = rand((3, 4, 5), dtype)
        check(torch.mean, x)
        for dim in (0, -1, (1, 2)):
            check(lambda t, d=dim: t.mean(d), x)
            check(lambda t, d=dim: t.mean(d, keepdim=True), x)
        check_out(lambda t, out: torch.mean(t, 0, out=out), x)
    check(lambda t: t.mean(1, dtype=F64), rand((3, 4)))
    with pytest.raises(RuntimeError, match="mean"):
        torch.mean(torch.ones(3, dtype=I64, device=DEVICE))


@op_test("amax.out")
def _amax() -> None:
    for dtype in (F32, F64, I64):
        x = rand((3, 4, 5), dtype)
        check(torch.amax, x)
        for dim in (0, (1, 2), -1):
            check(lambda t, d=dim: torch.amax(t, d), x)
            check(lambda t, d=dim: torch.amax(t, d, keepdim=True), x)
        check_out(lambda t, out: torch.amax(t, 1, out=out), x)
    check(lambda t: torch.amax(t, 0), torch.tensor([[1.0, float("nan")], [2.0, 3.0]]))


@op_test("argmax.out")
def _argmax() -> None:
    for dtype in (F32, F64, I64):
        x = rand((3, 4, 5), dtype)
        check(torch.argmax, x)
        for dim in (0, 1, -1):
            check(lambda t, d=dim: torch.argmax(t, d), x)
            check(lambda t, d=dim: torch.argmax(t, d, keepdim=True), x)
        check_out(lambda t, out: torch.argmax(t, 1, out=out), x, dtype=I64)


@op_test("max.dim_max")
def _max_dim() -> None:
    for dtype in (F32, F64, I64):
        x = rand((3, 4, 5), dtype)
        for dim in (0, 1, -1):
            check(lambda t, d=dim: tuple(torch.max(t, d)), x, layouts=("contiguous", "transposed", "sliced"))
            check(lambda t, d=dim: tuple(torch.max(t, d, keepdim=True)), x, layouts=("contiguous", "sliced"))
        check_out(lambda t, out: torch.max(t, 1, out=out), x, dtype=(dtype, I64))


@op_test("min", "min.unary_out", "max", "max.unary_out")
def _min_max() -> None:
    unsigned = (torch.uint8, torch.uint16)
    dtypes = (F32, F64, I64, BOOL, torch.float16, torch.bfloat16, torch.int8, *unsigned, torch.complex64)
    for fn in (torch.min, torch.max):
        for dtype in dtypes:  # uint16, complex64: the CPU's error, at the call
            for shape in [*SHAPES, (), (0,), (0, 3)]:  # empty: the CPU's error
                check_outcome(fn, rand(shape, dtype, low=0 if dtype in unsigned else -3))
        check_outcome(fn, torch.tensor([1.0, float("nan"), -2.0]))
        check_outcome(fn, torch.tensor([-float("inf"), -0.0, float("inf")]))
        check_out(lambda t, out, fn=fn: fn(t, out=out), rand((3, 4)))
        check_out(lambda t, out, fn=fn: fn(t, out=out), rand((3, 4), I64), dtype=F64)  # a wider out
        check_outcome(lambda t, fn=fn: fn(t, out=t.new_empty((), dtype=I64)), rand((3, 4)))  # cannot cast
        check_outcome(lambda t, fn=fn: fn(t, out=t.new_empty(())), rand((0, 3)))  # the identity
        with pytest.raises(RuntimeError, match="not implemented for 'ComplexFloat'"):
            fn(torch.ones(3, dtype=torch.complex64, device=DEVICE))  # raised at the call


# ---- Linear algebra -------------------------------------------------------------------------------


@op_test("mm.out")
def _mm() -> None:
    for dtype in (F32, F64, I64):
        a, b = rand((4, 6), dtype), rand((6, 3), dtype, seed=1)
        check(torch.mm, a, b, layouts=("contiguous", "transposed", "sliced"))
        check(lambda x, y: x.t() @ y.t(), rand((6, 4), dtype), rand((3, 6), dtype, seed=1), layouts=("contiguous",))
        check_out(lambda x, y, out: torch.mm(x, y, out=out), a, b)
    check(torch.mm, rand((0, 3)), rand((3, 2)))
    with pytest.raises(RuntimeError, match="2-D"):
        torch.ops.aten.mm.out(
            torch.ones(3, device=DEVICE), torch.ones(3, 1, device=DEVICE), out=torch.empty(0, device=DEVICE)
        )


@op_test("addmm.out")
def _addmm() -> None:
    for dtype in FLOATS:
        bias, a, b = rand((3,), dtype, seed=2), rand((4, 6), dtype), rand((6, 3), dtype, seed=1)
        check(torch.addmm, bias, a, b)
        check(lambda c, x, y: torch.addmm(c, x, y, beta=0.5, alpha=2), rand((4, 3), dtype), a, b)
        check(lambda c, x, y: torch.addmm(c, x, y, beta=0), rand((4, 3), dtype), a, b)
        check_out(lambda c, x, y, out: torch.addmm(c, x, y, out=out), bias, a, b)
        check_inplace(lambda c, x, y: c.addmm_(x, y), rand((4, 3), dtype), a, b)
    # nn.Linear's forward
    check(
        lambda x, w, b: F.linear(x, w, b),
        rand((5, 6)),
        rand((3, 6), seed=1),
        rand((3,), seed=2),
        layouts=("contiguous",),
    )


@op_test("addr")
def _addr() -> None:
    # float16 too: PyTorch's composite (math_addr) rounded the outer product before adding it.
    for dtype in (*FLOATS, torch.float16):
        m, u, v = rand((4, 3), dtype, seed=2), rand((4,), dtype), rand((3,), dtype, seed=1)
        check(torch.addr, m, u, v)
        check(lambda m, u, v: torch.addr(m, u, v, beta=0.5, alpha=2), m, u, v)
        check(torch.addr, rand((3,), dtype, seed=4), u, v)  # self broadcasts
    check(torch.addr, rand((4, 3), I64), rand((4,), I64), rand((3,), I64, seed=1))


@op_test("bmm.out")
def _bmm() -> None:
    for dtype in FLOATS:
        a, b = rand((2, 4, 6), dtype), rand((2, 6, 3), dtype, seed=1)
        check(torch.bmm, a, b, layouts=("contiguous", "transposed", "sliced"))
        check(lambda x, y: x.transpose(1, 2) @ y, rand((2, 6, 4), dtype), b, layouts=("contiguous",))
        check_out(lambda x, y, out: torch.bmm(x, y, out=out), a, b)
    with pytest.raises(RuntimeError, match="3-D"):
        torch.ops.aten.bmm.out(
            torch.ones(2, 2, device=DEVICE), torch.ones(2, 2, device=DEVICE), out=torch.empty(0, device=DEVICE)
        )


@op_test("convolution_overrideable")
def _convolution_overrideable() -> None:
    # at::convolution sends every foo tensor to convolution_overrideable (its default kernel only
    # raises): conv1d/2d/3d, strided, padded, dilated, grouped and transposed all land here.
    for dtype in FLOATS:
        x2, w2, b2 = rand((2, 4, 7, 6), dtype), rand((6, 2, 3, 3), dtype, seed=1), rand((6,), dtype, seed=2)
        check(lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1, groups=2), x2, w2, b2, check_stride=False)
        check(lambda x, w: F.conv2d(x, w, dilation=2), x2, rand((3, 4, 2, 2), dtype, seed=3), check_stride=False)
        check(lambda x, w, b: F.conv1d(x, w, b, padding=2), rand((2, 3, 9), dtype), rand((5, 3, 3), dtype, seed=1),
              rand((5,), dtype, seed=2), check_stride=False)
        check(lambda x, w: F.conv3d(x, w), rand((1, 2, 4, 5, 5), dtype), rand((3, 2, 2, 2, 2), dtype, seed=1),
              layouts=("contiguous",), check_stride=False)
        check(lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2, output_padding=1), rand((2, 3, 4, 5), dtype),
              rand((3, 2, 3, 3), dtype, seed=1), rand((2,), dtype, seed=2), check_stride=False)


@op_test("convolution_backward_overrideable")
def _convolution_backward_overrideable() -> None:
    for dtype in FLOATS:
        def grads(
            x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, transposed: bool = False
        ) -> tuple[torch.Tensor | None, ...]:
            x, w, b = (t.detach().requires_grad_() for t in (x, w, b))
            conv = F.conv_transpose2d if transposed else F.conv2d
            out = conv(x, w, b, stride=2, padding=1)
            out.backward(torch.ones_like(out))
            return x.grad, w.grad, b.grad

        check(grads, rand((2, 4, 7, 6), dtype), rand((3, 4, 3, 3), dtype, seed=1), rand((3,), dtype, seed=2),
              layouts=("contiguous",), check_stride=False)
        check(lambda x, w, b: grads(x, w, b, transposed=True), rand((2, 3, 4, 5), dtype),
              rand((3, 2, 3, 3), dtype, seed=1), rand((2,), dtype, seed=2), layouts=("contiguous",), check_stride=False)


# ---- Softmax and losses -------------------------------------------------------------------------


@op_test("_softmax.out", "_softmax", "_log_softmax.out", "_log_softmax")
def _softmax() -> None:
    for fn in (torch.softmax, torch.log_softmax):
        for dtype in FLOATS:
            for shape, dim in [((5,), 0), ((3, 4), 1), ((3, 4), 0), ((2, 3, 4), -1)]:
                check(lambda t, d=dim, fn=fn: fn(t, d), rand(shape, dtype))
        check(lambda t, fn=fn: fn(t, 1, dtype=F64), rand((3, 4)))
    check_out(lambda t, out: torch.ops.aten._softmax.out(t, 1, False, out=out), rand((3, 4)))
    check_out(lambda t, out: torch.ops.aten._log_softmax.out(t, 1, False, out=out), rand((3, 4)))


@op_test(
    "_softmax_backward_data.out",
    "_softmax_backward_data",
    "_log_softmax_backward_data.out",
    "_log_softmax_backward_data",
)
def _softmax_backward() -> None:
    for fn, op in (
        (torch.softmax, torch.ops.aten._softmax_backward_data),
        (torch.log_softmax, torch.ops.aten._log_softmax_backward_data),
    ):
        for dtype in FLOATS:
            g, x = rand((3, 4), dtype, seed=3), rand((3, 4), dtype)
            check(
                lambda g, y, op=op, dtype=dtype: op(g, y, 1, dtype),
                g,
                fn(x, 1),
                layouts=("contiguous", "transposed", "sliced"),
            )
            check(_grad_of(functools.partial(fn, dim=0)), x, g, layouts=("contiguous", "transposed"))
        out_name = "grad_input" if op is torch.ops.aten._softmax_backward_data else "out"
        check_out(
            lambda g, y, out, op=op, out_name=out_name: op.out(g, y, 1, F32, **{out_name: out}),
            rand((3, 4), seed=3),
            fn(rand((3, 4)), 1),
        )


def _nll_inputs(n: int = 6, c: int = 4) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    logp = torch.log_softmax(rand((n, c)), 1)
    target = torch.randint(0, c, (n,), generator=torch.Generator().manual_seed(5))
    weight = rand((c,), low=0.5, high=2, seed=4)
    return logp, target, weight


@op_test("nll_loss_forward.output")
def _nll_loss_forward() -> None:
    logp, target, weight = _nll_inputs()
    for reduction in ("mean", "sum", "none"):
        check(
            lambda x, t, reduction=reduction: F.nll_loss(x, t, reduction=reduction),
            logp,
            Fixed(target),
            layouts=("contiguous", "transposed"),
        )
        check(
            lambda x, t, w, reduction=reduction: F.nll_loss(x, t, w, reduction=reduction),
            logp,
            Fixed(target),
            Fixed(weight),
            layouts=("contiguous", "transposed"),
        )
        check(
            lambda x, t, reduction=reduction: F.nll_loss(x, t, reduction=reduction, ignore_index=int(target[0])),
            logp,
            Fixed(target),
            layouts=("contiguous",),
        )
    check(lambda x, t: F.cross_entropy(x, t), rand((6, 4)), Fixed(target), layouts=("contiguous",))
    # 1-D input
    check(lambda x, t: F.nll_loss(x, t), torch.log_softmax(rand((4,)), 0), Fixed(target[0]), layouts=("contiguous",))
    check_out(
        lambda x, t, out: torch.ops.aten.nll_loss_forward.output(
            x, t, None, 1, -100, output=out[0], total_weight=out[1]
        ),
        logp,
        Fixed(target),
        dtype=(F32, F32),
        layouts=("contiguous",),
    )
    # A class index out of range: an error of the launched kernel, at the next synchronisation
    # (as CUDA's device-side assert).
    with pytest.raises((RuntimeError, IndexError), match="out of bounds"):
        F.nll_loss(logp.to(DEVICE), torch.full((6,), 9, device=DEVICE))
        foo.synchronize()


@op_test("nll_loss_backward.grad_input")
def _nll_loss_backward() -> None:
    logp, target, weight = _nll_inputs()
    for reduction in ("mean", "sum", "none"):
        g = rand((6,), seed=9) if reduction == "none" else torch.tensor(1.5)
        check(
            lambda x, t, w, g, reduction=reduction: _grad_of(lambda y: F.nll_loss(y, t, w, reduction=reduction))(x, g),
            logp, Fixed(target), Fixed(weight), Fixed(g), layouts=("contiguous", "transposed"),
        )
    total = torch.tensor(6.0)
    check(
        lambda g, x, t, tw: torch.ops.aten.nll_loss_backward(g, x, t, None, 1, -100, tw),
        Fixed(torch.tensor(1.0)),
        logp,
        Fixed(target),
        Fixed(total),
    )
    check_out(
        lambda g, x, t, tw, out: torch.ops.aten.nll_loss_backward.grad_input(
            g, x, t, None, 1, -100, tw, grad_input=out
        ),
        Fixed(torch.tensor(1.0)),
        logp,
        Fixed(target),
        Fixed(total),
        dtype=F32,
    )


@op_test("mse_loss.out", "mse_loss")
def _mse_loss() -> None:
    for dtype in FLOATS:
        a, b = rand((3, 4), dtype), rand((3, 4), dtype, seed=1)
        for reduction in ("mean", "sum", "none"):
            check(lambda x, y, r=reduction: F.mse_loss(x, y, reduction=r), a, b)
            # The functional warns on neither: on the CPU it never goes through an out= tensor
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                with no_fallback():
                    F.mse_loss(a.to(DEVICE), b.to(DEVICE), reduction=reduction)
        check_out(lambda x, y, out: torch.ops.aten.mse_loss.out(x, y, 1, out=out), a, b)
        check_out(lambda x, y, out: torch.ops.aten.mse_loss.out(x, y, 0, out=out), a, b)


# ---- Indexing, comparison, selection ----------------------------------------------------------


@op_test("index_select.out")
def _index_select() -> None:
    for dtype in (F32, I64, BOOL):
        x = rand((5, 6), dtype)
        for index_dtype in (I64, torch.int32):
            idx = torch.tensor([4, 0, 2, 2], dtype=index_dtype)
            for dim in (0, 1):
                check(lambda t, i, d=dim: torch.index_select(t, d, i, out=t.new_empty(0)), x, Fixed(idx))
                check(lambda t, i, d=dim: torch.index_select(t, d, i), x, Fixed(idx))
        check_out(lambda t, i, out: torch.index_select(t, 1, i, out=out), x, Fixed(torch.tensor([5, 1])))
    with pytest.raises((RuntimeError, IndexError)):
        # An index out of range depends on the data: reported at the next synchronisation, as
        # CUDA's device-side assert is.
        torch.index_select(torch.ones(3, device=DEVICE), 0, torch.tensor([3], device=DEVICE))
        foo.synchronize()
    with pytest.raises(RuntimeError, match="int64 or int32"):
        torch.index_select(
            torch.ones(3, device=DEVICE), 0, torch.tensor([1.0], device=DEVICE), out=torch.empty(0, device=DEVICE)
        )


@op_test("gather.out")
def _gather() -> None:
    g = torch.Generator().manual_seed(3)
    for dtype in (F32, F64, I64):
        x = rand((4, 5), dtype)
        for dim in (0, 1):
            idx = torch.randint(0, x.shape[dim], (3, 4), generator=g)
            check(lambda t, i, d=dim: torch.gather(t, d, i), x, Fixed(idx))
        check_out(lambda t, i, out: torch.gather(t, 1, i, out=out), x, Fixed(torch.randint(0, 5, (4, 2), generator=g)))
    check(
        _grad_of(lambda t: torch.gather(t, 1, torch.tensor([[0, 0], [1, 0], [2, 2]], device=t.device))),
        rand((3, 4)),
        Fixed(torch.ones(3, 2)),
        layouts=("contiguous",),
    )
    # An index out of range: the CPU's error, at the next synchronisation (the kernel is launched)
    check_outcome(lambda t, i: torch.gather(t, 1, i), torch.ones(2, 2), Fixed(torch.tensor([[5]])),
                  layouts=("contiguous",))


@op_test("index.Tensor_out")
def _index() -> None:
    for dtype in (F32, I64, BOOL):
        x = rand((5, 6, 3), dtype)
        i = torch.tensor([4, 0, 2, 2])
        j = torch.tensor([1, 5, 0, 3])
        check(lambda t, i: t[i], x, Fixed(i))
        check(lambda t, i, j: t[i, j], x, Fixed(i), Fixed(j))
        check(lambda t, j: t[:, j], x, Fixed(j))
        check(lambda t, i: t[i.view(2, 2)], x, Fixed(i), layouts=("contiguous", "transposed"))
        # the result's shape from the metadata alone: indices apart put theirs first, indices
        # broadcast together, int32 indices, a 0-dim index
        check(lambda t, i, k: t[i, :, k], x, Fixed(i), Fixed(torch.tensor([2, 0, 1, 1], dtype=torch.int32)))
        check(lambda t, i, j: t[i.view(4, 1), j.view(1, 4)], x, Fixed(i), Fixed(j))
        check(lambda t, i: t[:, i], x, Fixed(torch.tensor(3)))
        check_out(lambda t, i, out: torch.ops.aten.index.Tensor_out(t, [i], out=out), x, Fixed(i))
    x = rand((5, 6))
    # CPU index tensors are valid indices of device tensors (as for CUDA)
    assert_same(x.to(DEVICE)[torch.tensor([1, 3])], x[torch.tensor([1, 3])])
    # a boolean mask needs nonzero, which runs through the CPU fallback
    mask = x > 0
    assert_same(x.to(DEVICE)[mask.to(DEVICE)], x[mask])
    # An index out of range depends on the data: reported at the next synchronisation, as CUDA's
    # device-side assert is; indices that do not broadcast are an error of the call.
    with pytest.raises((RuntimeError, IndexError), match="out of bounds"):
        x.to(DEVICE)[torch.tensor([7], device=DEVICE)]
        foo.synchronize()
    with pytest.raises(IndexError, match="shape mismatch"):
        x.to(DEVICE)[torch.tensor([1, 2], device=DEVICE), torch.tensor([1, 2, 3], device=DEVICE)]
    y = torch.arange(8.0, device=DEVICE)
    with pytest.raises(RuntimeError, match="unsupported operation"):  # out overlapping self
        torch.ops.aten.index.Tensor_out(y[:4], [torch.tensor([0, 1], device=DEVICE)], out=y[1:3])


@op_test("masked_fill_.Scalar")
def _masked_fill() -> None:
    for dtype, value in [(F32, -1.5), (F64, 2.0), (I64, 9), (BOOL, True)]:
        x, mask = rand((4, 5), dtype), rand((4, 5), BOOL, seed=2)
        check_inplace(lambda t, m, v=value: t.masked_fill_(m, v), x, Fixed(mask))
        check(lambda t, m, v=value: t.masked_fill(m, v), x, Fixed(mask))
        check_inplace(lambda t, m, v=value: t.masked_fill_(m, v), x, Fixed(mask[0]))  # broadcast mask
    check(lambda t, m: t.masked_fill(m, float("nan")), rand((3, 4)), Fixed(rand((3, 4), BOOL)))
    with pytest.raises(RuntimeError, match="boolean"):
        torch.ones(3, device=DEVICE).masked_fill_(torch.ones(3, dtype=I64, device=DEVICE), 0.0)


@op_test("masked_select", "masked_select.out")
def _masked_select() -> None:
    for dtype in (F32, F64, I64, BOOL, torch.float16, torch.complex64):
        x = rand((4, 5), dtype)
        for mask in (rand((4, 5), BOOL, seed=2), rand((5,), BOOL, seed=3), torch.zeros(4, 5, dtype=BOOL)):
            check(torch.masked_select, x, Fixed(mask))
        check(torch.masked_select, x, rand((4, 5), BOOL, seed=2))  # the mask in each layout too
        check(torch.masked_select, x[0], Fixed(rand((3, 5), BOOL, seed=4)))  # self broadcast
        check_out(lambda t, m, out: torch.masked_select(t, m, out=out), x, Fixed(rand((4, 5), BOOL, seed=2)))
    check(torch.masked_select, rand(()), Fixed(torch.tensor(True)))
    check(torch.masked_select, rand((0, 3)), Fixed(rand((0, 3), BOOL)))
    for mask in (rand((4, 5), I64, low=0, high=1), rand((3, 5), BOOL)):  # not boolean; not broadcastable
        check_outcome(torch.masked_select, rand((4, 5)), Fixed(mask))
    check_outcome(  # an out of another dtype
        lambda t, m: torch.masked_select(t, m, out=t.new_empty(0, dtype=F64)), rand((4, 5)), Fixed(rand((4, 5), BOOL))
    )


@op_test("where.self_out")
def _where() -> None:
    for dtype in (F32, F64, I64, BOOL):
        cond, a, b = rand((3, 4), BOOL, seed=2), rand((3, 4), dtype), rand((3, 4), dtype, seed=1)
        check(lambda c, x, y: torch.where(c, x, y, out=x.new_empty(0)), cond, a, b)
        check(lambda c, x, y: torch.where(c, x, y[0], out=x.new_empty(0)), cond, a, b)  # broadcasting
        check(torch.where, cond, a, b)
        check_out(lambda c, x, y, out: torch.where(c, x, y, out=out), cond, a, b, dtype=dtype)
    # a CPU 0-dim operand is accepted like a scalar
    check(lambda c, x: torch.where(c, x, torch.tensor(-1.0), out=x.new_empty(0)), rand((3, 4), BOOL), rand((3, 4)))
    check(lambda c, x: torch.where(c, x, 0.0), rand((3, 4), BOOL), rand((3, 4)))


@op_test("scatter_add.out")
def _scatter_add() -> None:
    g = torch.Generator().manual_seed(4)
    for dtype in (F32, F64, I64):
        x = rand((4, 5), dtype)
        for dim in (0, 1):
            idx = torch.randint(0, x.shape[dim], (3, 4), generator=g)
            src = rand((3, 4), dtype, seed=6)
            check(
                lambda t, i, s, d=dim: torch.scatter_add(t, d, i, s),
                x,
                Fixed(idx),
                Fixed(src),
                layouts=("contiguous", "transposed", "sliced"),
            )
            check_inplace(lambda t, i, s, d=dim: t.scatter_add_(d, i, s), x, Fixed(idx), Fixed(src))
        check_out(
            lambda t, i, s, out: torch.scatter_add(t, 0, i, s, out=out),
            x,
            Fixed(torch.randint(0, 4, (2, 5), generator=g)),
            Fixed(rand((2, 5), dtype)),
        )
    # int32 indices are valid on the CPU: the device takes them too, and refuses uint8 as the CPU does
    x, src = rand((4, 5)), rand((3, 4), seed=6)
    idx32 = torch.randint(0, 4, (3, 4), generator=g, dtype=torch.int32)
    check(lambda t, i, s: torch.scatter_add(t, 0, i, s), x, Fixed(idx32), Fixed(src))
    check_outcome(lambda t, i, s: torch.scatter_add(t, 0, i, s), x, Fixed(idx32.to(torch.uint8)), Fixed(src))


@op_test("eq.Tensor_out")
def _eq() -> None:
    for dtype in (F32, F64, I64, BOOL):
        a = rand((3, 4), dtype, low=-1, high=1)
        b = rand((3, 4), dtype, low=-1, high=1, seed=1)
        check(torch.eq, a, b)
        check(torch.eq, a, a)
        check(lambda x, y: torch.eq(x, y[1]), a, b)  # broadcasting
        check_out(lambda x, y, out: torch.eq(x, y, out=out), a, b, dtype=BOOL)
        check_inplace(lambda x, y: x.eq_(y), a, b)
    check(torch.eq, torch.tensor([float("nan"), 1.0]), torch.tensor([float("nan"), 1.0]))
    check(torch.eq, rand((3, 4), I64), rand((3, 4), F32))  # promotion


@op_test("gt.Scalar_out")
def _gt() -> None:
    for dtype in (F32, F64, I64, BOOL):
        x = rand((3, 4), dtype)
        check(lambda t: t > 0, x)
        check(lambda t: torch.gt(t, 1.5), x)
        check_out(lambda t, out: torch.gt(t, 0, out=out), x, dtype=BOOL)
        check_inplace(lambda t: t.gt_(0), x)
    check(lambda t: t > 0, torch.tensor([float("nan"), 1.0, -1.0]))


@op_test("maximum.out")
def _maximum() -> None:
    for dtype in (F32, F64, I64, BOOL):
        a, b = rand((3, 4), dtype), rand((3, 4), dtype, seed=1)
        check(torch.maximum, a, b)
        check(lambda x, y: torch.maximum(x, y[0]), a, b)
        check_out(lambda x, y, out: torch.maximum(x, y, out=out), a, b)
    check(torch.maximum, torch.tensor([float("nan"), 1.0]), torch.tensor([0.0, float("nan")]))


@op_test("clamp.out")
def _clamp() -> None:
    for dtype in (F32, F64, I64):
        x = rand((3, 4), dtype)
        check(lambda t: torch.clamp(t, -1, 1), x)
        check(lambda t: torch.clamp(t, min=0), x)
        check(lambda t: torch.clamp(t, max=0), x)
        check(lambda t: torch.clamp(t, 2, -2), x)  # min > max: everything is max
        check_inplace(lambda t: t.clamp_(-1, 1), x)
        check_out(lambda t, out: torch.clamp(t, -1, 2, out=out), x)
    check(lambda t: torch.clamp(t, 0.5, 1), rand((3, 4), I64))  # promotes
    with pytest.raises(RuntimeError, match="min.*max"):
        torch.clamp(torch.ones(2, device=DEVICE))



@op_test("clamp_min.Tensor_out")
def _clamp_min_tensor() -> None:
    for dtype in (F32, F64, I64):
        a, b = rand((3, 4), dtype), rand((3, 4), dtype, seed=1)
        check(torch.clamp_min, a, b)
        check(lambda x, y: torch.clamp_min(x, y[0]), a, b)
        check_inplace(lambda x, y: x.clamp_min_(y), a, b)
        check_out(lambda x, y, out: torch.clamp_min(x, y, out=out), a, b)
    check(torch.clamp_min, torch.tensor([float("nan"), 1.0]), torch.tensor([0.0, float("nan")]))


@op_test("cat.out")
def _cat() -> None:
    for dtype in (F32, I64, BOOL):
        a, b, c = rand((2, 3), dtype), rand((4, 3), dtype, seed=1), rand((1, 3), dtype, seed=2)
        check(lambda x, y, z: torch.cat([x, y, z]), a, b, c)
        check(lambda x, y: torch.cat([x.t(), y.t()], 1), a, b)
        check(lambda x: torch.cat([x]), a)
        check_out(lambda x, y, out: torch.cat([x, y], out=out), a, b)
    check(lambda x, y: torch.cat([x, y], -1), rand((2, 3, 2)), rand((2, 3, 5)))
    check(lambda x, y: torch.cat([x, y]), rand((2, 3)), torch.empty(0))  # legacy empty 1-D input
    check(lambda x, y: torch.cat([x, y]), rand((2, 3)), rand((2, 3), F64))  # promotion
    check(lambda x: torch.stack([x, x + 1]), rand((2, 3)), layouts=("contiguous",))
    with pytest.raises(RuntimeError):
        torch.cat([torch.ones(2, 3, device=DEVICE), torch.ones(2, 4, device=DEVICE)])


# ---- Layers of CNNs and transformers --------------------------------------------------------------
#
# Normalisation, pooling, resampling, embeddings and dropout: forward and backward against the CPU
# in the layouts a model hands them (contiguous, transposed or sliced activations, channels-last),
# with the per-channel tensors contiguous as a module holds them.

BF16 = torch.bfloat16
LOW_PRECISION: Tolerance = {"rtol": 2e-2, "atol": 2e-2}


def _grads_of(fn: Callable[..., torch.Tensor], n_inputs: int) -> Callable[..., tuple[torch.Tensor, ...]]:
    """fn's gradients with respect to its first n_inputs arguments, for an output gradient g (the
    last argument); None inputs take no gradient."""

    def grads(*args: torch.Tensor | None) -> tuple[torch.Tensor, ...]:
        *inputs, g = args
        leaves = [t.detach().requires_grad_() if t is not None and i < n_inputs else t for i, t in enumerate(inputs)]
        out = fn(*leaves)
        wanted = [t for i, t in enumerate(leaves) if i < n_inputs and t is not None]
        return torch.autograd.grad(out, wanted, g)

    return grads


def _per_channel(c: int, dtype: torch.dtype, seed: int, *, positive: bool = False) -> Fixed:
    return Fixed(rand((c,), dtype, low=0.5 if positive else -1, high=2 if positive else 1, seed=seed))


@op_test("native_batch_norm")
def _native_batch_norm() -> None:
    for dtype in FLOATS:
        for shape in [(4, 3), (4, 3, 7), (4, 3, 5, 6), (2, 3, 2, 3, 4)]:
            x = rand(shape, dtype)
            w, b = _per_channel(3, dtype, 1), _per_channel(3, dtype, 2)
            mean, var = _per_channel(3, dtype, 3), _per_channel(3, dtype, 4, positive=True)

            def train(
                t: torch.Tensor, w: torch.Tensor, b: torch.Tensor, rm: torch.Tensor, rv: torch.Tensor
            ) -> tuple[torch.Tensor, ...]:
                # the running statistics are updated in place, on the device
                return (*torch.native_batch_norm(t, w, b, rm, rv, True, 0.2, 1e-3), rm, rv)

            check(train, x, w, b, mean, var, layouts=("contiguous", "transposed", "sliced"))
            check(lambda t, rm, rv: torch.native_batch_norm(t, None, None, rm, rv, False, 0.1, 1e-5), x, mean, var)
            check(lambda t, w, b: torch.native_batch_norm(t, w, b, None, None, True, 0.1, 1e-5), x, w, b)
            check(lambda t, w, b, rm, rv: F.batch_norm(t, rm, rv, w, b, training=False), x, w, b, mean, var)
        x4 = rand((2, 3, 4, 5), dtype)
        check(train, View(x4, _channels_last), w, b, mean, var, layouts=("contiguous",))
    # bfloat16 activations with float32 parameters and statistics (autocast's mixed types)
    check(
        lambda t, w, b, rm, rv: torch.native_batch_norm(t, w, b, rm, rv, True, 0.1, 1e-5),
        rand((4, 3, 5), BF16),
        _per_channel(3, F32, 1),
        _per_channel(3, F32, 2),
        _per_channel(3, F32, 3),
        _per_channel(3, F32, 4, positive=True),
        **LOW_PRECISION,
    )
    x = torch.ones(2, 3, 4, device=DEVICE)
    with pytest.raises(RuntimeError, match="weight should contain 3 elements"):
        torch.native_batch_norm(x, torch.ones(4, device=DEVICE), None, None, None, True, 0.1, 1e-5)
    with pytest.raises(RuntimeError, match="evaluation mode"):
        torch.native_batch_norm(x, None, None, None, None, False, 0.1, 1e-5)
    with pytest.raises(RuntimeError, match="foo:1"):
        torch.native_batch_norm(x, torch.ones(3, device="foo:1"), None, None, None, True, 0.1, 1e-5)
    with pytest.raises(RuntimeError, match="cpu"):
        torch.native_batch_norm(x, torch.ones(3), None, None, None, True, 0.1, 1e-5)


@op_test("_native_batch_norm_legit", "_native_batch_norm_legit.no_stats")
def _native_batch_norm_legit() -> None:
    legit = torch.ops.aten._native_batch_norm_legit
    for dtype in FLOATS:
        x = rand((4, 3, 5), dtype)
        w, b = _per_channel(3, dtype, 1), _per_channel(3, dtype, 2)
        mean, var = _per_channel(3, dtype, 3), _per_channel(3, dtype, 4, positive=True)
        for training in (True, False):
            check(
                lambda t, w, b, rm, rv, tr=training: (*legit(t, w, b, rm, rv, tr, 0.1, 1e-5), rm, rv),
                x,
                w,
                b,
                mean,
                var,
            )
        check(lambda t, w, b: legit.no_stats(t, w, b, True, 0.1, 1e-5), x, w, b)
    with pytest.raises(RuntimeError, match="evaluation mode"):
        legit.no_stats(torch.ones(2, 3, device=DEVICE), None, None, False, 0.1, 1e-5)


@op_test("native_batch_norm_backward")
def _native_batch_norm_backward() -> None:
    for dtype in FLOATS:
        for shape in [(4, 3), (4, 3, 5, 6)]:
            x, g = rand(shape, dtype), rand(shape, dtype, seed=9)
            w, b = _per_channel(3, dtype, 1), _per_channel(3, dtype, 2)
            mean, var = _per_channel(3, dtype, 3), _per_channel(3, dtype, 4, positive=True)
            train = _grads_of(lambda t, w, b: F.batch_norm(t, None, None, w, b, training=True), 3)
            check(train, x, w, b, g, layouts=("contiguous", "transposed", "sliced"))
            evaluate = _grads_of(lambda t, w, b, rm, rv: F.batch_norm(t, rm, rv, w, b, training=False), 3)
            check(evaluate, x, w, b, mean, var, g, layouts=("contiguous", "transposed"))
        # the functional op, with output masks
        x, g = rand((4, 3, 5), dtype), rand((4, 3, 5), dtype, seed=9)
        out, save_mean, save_invstd = torch.native_batch_norm(x, None, None, None, None, True, 0.1, 1e-5)
        for mask in ([True, True, True], [True, False, False], [False, True, True]):
            check(
                lambda g, t, w, sm, si, m=mask: torch.ops.aten.native_batch_norm_backward(
                    g, t, w, None, None, sm, si, True, 1e-5, m
                ),
                g,
                x,
                _per_channel(3, dtype, 1),
                Fixed(save_mean),
                Fixed(save_invstd),
            )
    x4, g4 = rand((2, 3, 4, 5)), rand((2, 3, 4, 5), seed=9)
    check(
        _grads_of(lambda t, w, b: F.batch_norm(t, None, None, w, b, training=True), 3),
        View(x4, _channels_last),
        _per_channel(3, F32, 1),
        _per_channel(3, F32, 2),
        View(g4, _channels_last),
        layouts=("contiguous",),
    )
    with pytest.raises(RuntimeError, match="grad_out's sizes"):
        torch.ops.aten.native_batch_norm_backward(
            torch.ones(2, 3, device=DEVICE),
            torch.ones(2, 3, 1, device=DEVICE),
            None,
            None,
            None,
            torch.ones(3, device=DEVICE),
            torch.ones(3, device=DEVICE),
            True,
            1e-5,
            [True, True, True],
        )


LAYER_NORM_CASES = [((4, 5), (5,)), ((2, 3, 8), (8,)), ((2, 3, 4), (3, 4)), ((3, 1), (1,)), ((0, 4), (4,))]


@op_test("native_layer_norm")
def _native_layer_norm() -> None:
    for dtype in FLOATS:
        for shape, normalized in LAYER_NORM_CASES:
            x = rand(shape, dtype)
            w, b = Fixed(rand(normalized, dtype, seed=1)), Fixed(rand(normalized, dtype, seed=2))
            check(lambda t, w, b, n=normalized: torch.native_layer_norm(t, n, w, b, 1e-5), x, w, b)
            check(lambda t, n=normalized: F.layer_norm(t, n), x)
    check(lambda t, w, b: F.layer_norm(t, (8,), w, b), rand((2, 3, 8), BF16), Fixed(rand((8,), BF16, seed=1)),
          Fixed(rand((8,), BF16, seed=2)), **LOW_PRECISION)
    # shape mismatch: the CPU's error
    check_outcome(lambda t, w: F.layer_norm(t, (4,), w), rand((2, 5)), Fixed(rand((4,))))
    with pytest.raises(RuntimeError, match="cpu"):
        F.layer_norm(torch.ones(2, 4, device=DEVICE), (4,), torch.ones(4))


@op_test("native_layer_norm_backward")
def _native_layer_norm_backward() -> None:
    for dtype in FLOATS:
        for shape, normalized in LAYER_NORM_CASES:
            x, g = rand(shape, dtype), rand(shape, dtype, seed=9)
            w, b = Fixed(rand(normalized, dtype, seed=1)), Fixed(rand(normalized, dtype, seed=2))
            check(
                _grads_of(lambda t, w, b, n=normalized: F.layer_norm(t, n, w, b), 3),
                x,
                w,
                b,
                g,
                layouts=("contiguous", "transposed", "sliced"),
            )
            check(_grads_of(lambda t, n=normalized: F.layer_norm(t, n), 1), x, g, layouts=("contiguous", "transposed"))
    with pytest.raises(RuntimeError, match="mean and rstd"):
        x = torch.ones(2, 4, device=DEVICE)
        mean, rstd = torch.ones(3, device=DEVICE), torch.ones(2, device=DEVICE)
        torch.ops.aten.native_layer_norm_backward(x, x, [4], mean, rstd, None, None, [True, False, False])


@op_test("native_group_norm")
def _native_group_norm() -> None:
    for dtype in FLOATS:
        for shape, groups in [((2, 6, 4, 5), 3), ((2, 4, 7), 2), ((3, 4), 4), ((1, 6, 2, 2, 2), 1)]:
            x = rand(shape, dtype)
            w, b = _per_channel(shape[1], dtype, 1), _per_channel(shape[1], dtype, 2)
            check(lambda t, w, b, gr=groups: F.group_norm(t, gr, w, b), x, w, b, layouts=("contiguous", "transposed"))
            check(lambda t, gr=groups: F.group_norm(t, gr), x, layouts=("contiguous",))
    check(
        lambda t, w, b: F.group_norm(t, 3, w, b),
        View(rand((2, 6, 4, 5)), _channels_last),
        _per_channel(6, F32, 1),
        _per_channel(6, F32, 2),
        layouts=("contiguous",),
    )
    check_outcome(lambda t: F.group_norm(t, 4), rand((2, 6, 3)))  # 6 channels in 4 groups: the CPU's error
    with pytest.raises(RuntimeError, match="does not match"):
        torch.native_group_norm(torch.ones(2, 6, 3, device=DEVICE), None, None, 2, 6, 4, 3, 1e-5)


@op_test("native_group_norm_backward")
def _native_group_norm_backward() -> None:
    for dtype in FLOATS:
        for shape, groups in [((2, 6, 4, 5), 3), ((2, 4, 7), 2), ((3, 4), 4)]:
            x, g = rand(shape, dtype), rand(shape, dtype, seed=9)
            w, b = _per_channel(shape[1], dtype, 1), _per_channel(shape[1], dtype, 2)
            check(
                _grads_of(lambda t, w, b, gr=groups: F.group_norm(t, gr, w, b), 3),
                x,
                w,
                b,
                g,
                layouts=("contiguous", "transposed"),
            )
    with pytest.raises(RuntimeError, match="mean and rstd"):
        x = torch.ones(2, 6, 3, device=DEVICE)
        mean, rstd = torch.ones(5, device=DEVICE), torch.ones(6, device=DEVICE)
        torch.ops.aten.native_group_norm_backward(x, x, mean, rstd, None, 2, 6, 3, 3, [True, True, True])


# ---- Attention ----------------------------------------------------------------------------------

# (query, key/value) shapes: batch and heads, then sequence and head size; a longer key sequence.
ATTENTION_SHAPES = [((2, 3, 8, 16), (2, 3, 8, 16)), ((1, 2, 5, 8), (1, 2, 9, 8))]
FLASH_ATTENTION = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default


@op_test("_scaled_dot_product_flash_attention_for_cpu")
def _flash_attention() -> None:
    for dtype in (F32, F64, BF16):
        tol: Tolerance = LOW_PRECISION if dtype == BF16 else {}
        for q_shape, kv_shape in ATTENTION_SHAPES:
            q, k, v = rand(q_shape, dtype), rand(kv_shape, dtype, seed=1), rand(kv_shape, dtype, seed=2)
            mask = Fixed(rand((q_shape[2], kv_shape[2]), dtype, seed=3))
            check(lambda q, k, v: FLASH_ATTENTION(q, k, v), q, k, v, layouts=("contiguous",), **tol)
            check(lambda q, k, v, m: FLASH_ATTENTION(q, k, v, attn_mask=m, scale=0.25), q, k, v, mask,
                  layouts=("contiguous",), **tol)
        q = rand((2, 3, 8, 16), dtype)
        check(lambda q: FLASH_ATTENTION(q, q, q, is_causal=True), q, layouts=("contiguous",), **tol)
    with pytest.raises(RuntimeError, match="cpu"):
        FLASH_ATTENTION(torch.ones(1, 1, 2, 4, device=DEVICE), torch.ones(1, 1, 2, 4), torch.ones(1, 1, 2, 4))
    # Heads whose elements are not adjacent: the CPU kernel reads the wrong elements (the attention
    # op never passes it such inputs); foo raises, as CUDA's flash attention does.
    q = torch.ones(1, 1, 4, 2, device=DEVICE).transpose(-1, -2)
    with pytest.raises(RuntimeError, match="contiguous last dimension"):
        FLASH_ATTENTION(q, q, q)


@op_test("_scaled_dot_product_flash_attention_for_cpu_backward")
def _flash_attention_backward() -> None:
    for dtype in FLOATS:
        for q_shape, kv_shape in ATTENTION_SHAPES:
            q, k, v = rand(q_shape, dtype), rand(kv_shape, dtype, seed=1), rand(kv_shape, dtype, seed=2)
            g = rand(q_shape, dtype, seed=4)
            check(_grads_of(lambda q, k, v: FLASH_ATTENTION(q, k, v)[0], 3), q, k, v, g, layouts=("contiguous",))
            check(_grads_of(lambda q, k, v: FLASH_ATTENTION(q, k, v, is_causal=q.shape == k.shape)[0], 3),
                  q, k, v, g, layouts=("contiguous",))


POOL_INPUTS = [(2, 3, 9, 8), (3, 7, 6)]


@op_test("max_pool2d_with_indices", "max_pool2d_with_indices.out")
def _max_pool2d() -> None:
    for dtype in (F32, F64, BF16):
        for shape in POOL_INPUTS:
            x = rand(shape, dtype)
            pool_options: tuple[dict[str, Any], ...] = (
                {"kernel_size": 3, "stride": 2, "padding": 1},
                {"kernel_size": 2},
                {"kernel_size": (3, 2), "stride": 1, "dilation": 2},
                {"kernel_size": 3, "stride": 2, "ceil_mode": True},
            )
            for kwargs in pool_options:
                check(lambda t, kw=kwargs: F.max_pool2d(t, return_indices=True, **kw), x)
        check(
            lambda t: F.max_pool2d(t, 3, 2, 1, return_indices=True),
            View(rand((2, 3, 9, 8), dtype), _channels_last),
            layouts=("contiguous",),
        )
        check_out(
            lambda t, out: torch.ops.aten.max_pool2d_with_indices.out(
                t, [3, 3], [2, 2], [1, 1], [1, 1], False, out=out[0], indices=out[1]
            ),
            rand((2, 3, 9, 8), dtype),
            dtype=(dtype, I64),
        )
    # padding over half the kernel: the CPU's error
    check_outcome(lambda t: F.max_pool2d(t, 3, padding=2), rand((1, 2, 6, 6)))
    check_outcome(lambda t: F.max_pool2d(t, 5), rand((1, 2, 3, 3)))  # output too small


@op_test("max_pool2d_with_indices_backward", "max_pool2d_with_indices_backward.grad_input")
def _max_pool2d_backward() -> None:
    for dtype in FLOATS:
        for shape in POOL_INPUTS:
            x = rand(shape, dtype)
            pool_options: tuple[dict[str, Any], ...] = (
                {"kernel_size": 3, "stride": 2, "padding": 1},
                {"kernel_size": 2},
                {"kernel_size": 3, "stride": 2, "ceil_mode": True},
            )
            for kwargs in pool_options:
                g = rand(F.max_pool2d(x, **kwargs).shape, dtype, seed=9)
                check(
                    _grads_of(lambda t, kw=kwargs: F.max_pool2d(t, **kw), 1),
                    x,
                    Fixed(g),
                    layouts=("contiguous", "transposed", "sliced"),
                )
        x = rand((2, 3, 9, 8), dtype)
        out, indices = F.max_pool2d(x, 3, 2, 1, return_indices=True)
        g = rand(out.shape, dtype, seed=9)
        check(
            _grads_of(lambda t: F.max_pool2d(t, 3, 2, 1), 1),
            View(x, _channels_last),
            View(g, _channels_last),
            layouts=("contiguous",),
        )
        backward = torch.ops.aten.max_pool2d_with_indices_backward.grad_input
        check_out(
            lambda g, t, i, out, backward=backward: backward(
                g, t, [3, 3], [2, 2], [1, 1], [1, 1], False, i, grad_input=out
            ),
            g,
            x,
            Fixed(indices),
        )
    with pytest.raises(RuntimeError, match="int64 indices"):
        x = torch.ones(1, 1, 4, 4, device=DEVICE)
        torch.ops.aten.max_pool2d_with_indices_backward(
            torch.ones(1, 1, 2, 2, device=DEVICE),
            x,
            [2, 2],
            [2, 2],
            [0, 0],
            [1, 1],
            False,
            torch.zeros(1, 1, 2, 2, dtype=torch.int32, device=DEVICE),
        )


AVG_POOL_KWARGS: list[dict[str, Any]] = [
    {"kernel_size": 3, "stride": 2, "padding": 1},
    {"kernel_size": 2},
    {"kernel_size": 3, "padding": 1, "count_include_pad": False},
    {"kernel_size": 3, "stride": 2, "ceil_mode": True},
    {"kernel_size": 2, "divisor_override": 3},
]


@op_test("avg_pool2d", "avg_pool2d.out")
def _avg_pool2d() -> None:
    for dtype in (F32, F64, BF16):
        tol: Tolerance = LOW_PRECISION if dtype == BF16 else {}
        for shape in POOL_INPUTS:
            for kwargs in AVG_POOL_KWARGS:
                check(lambda t, kw=kwargs: F.avg_pool2d(t, **kw), rand(shape, dtype), **tol)
        check(
            lambda t: F.avg_pool2d(t, 3, 2, 1),
            View(rand((2, 3, 9, 8), dtype), _channels_last),
            layouts=("contiguous",),
            **tol,
        )
        check_out(lambda t, out: torch.ops.aten.avg_pool2d.out(t, [2, 2], [2, 2], [0, 0], False, True, None, out=out),
                  rand((2, 3, 9, 8), dtype), **tol)
    check_outcome(lambda t: F.avg_pool2d(t, 2, divisor_override=0), rand((1, 2, 4, 4)))


@op_test("avg_pool2d_backward", "avg_pool2d_backward.grad_input")
def _avg_pool2d_backward() -> None:
    for dtype in FLOATS:
        for shape in POOL_INPUTS:
            x = rand(shape, dtype)
            for kwargs in AVG_POOL_KWARGS:
                g = rand(F.avg_pool2d(x, **kwargs).shape, dtype, seed=9)
                check(
                    _grads_of(lambda t, kw=kwargs: F.avg_pool2d(t, **kw), 1),
                    x,
                    Fixed(g),
                    layouts=("contiguous", "transposed"),
                )
        x = rand((2, 3, 9, 8), dtype)
        g = rand((2, 3, 4, 4), dtype, seed=9)
        check(
            _grads_of(lambda t: F.avg_pool2d(t, 2), 1),
            View(x, _channels_last),
            View(g, _channels_last),
            layouts=("contiguous",),
        )
        backward = torch.ops.aten.avg_pool2d_backward.grad_input
        check_out(
            lambda g, t, out, backward=backward: backward(
                g, t, [2, 2], [2, 2], [0, 0], False, True, None, grad_input=out
            ),
            g,
            x,
        )


@op_test("_adaptive_avg_pool2d")
def _adaptive_avg_pool2d() -> None:
    for dtype in (F32, F64, BF16):
        tol: Tolerance = LOW_PRECISION if dtype == BF16 else {}
        for shape in POOL_INPUTS:
            for size in ((3, 2), (7, 7), (1, 1), (2, 5)):
                check(lambda t, s=size: F.adaptive_avg_pool2d(t, s), rand(shape, dtype), **tol)
        check(
            lambda t: F.adaptive_avg_pool2d(t, (3, 3)),
            View(rand((2, 3, 9, 8), dtype), _channels_last),
            layouts=("contiguous",),
            **tol,
        )
    check_outcome(lambda t: torch.ops.aten._adaptive_avg_pool2d(t, [2, 2]), rand((3, 4)))


@op_test("_adaptive_avg_pool2d_backward")
def _adaptive_avg_pool2d_backward() -> None:
    for dtype in FLOATS:
        for shape in POOL_INPUTS:
            x = rand(shape, dtype)
            g = rand((*shape[:-2], 3, 2), dtype, seed=9)
            check(
                _grads_of(lambda t: F.adaptive_avg_pool2d(t, (3, 2)), 1),
                x,
                Fixed(g),
                layouts=("contiguous", "transposed"),
            )
        check(_grads_of(lambda t: F.adaptive_avg_pool2d(t, (3, 3)), 1), View(rand((2, 3, 9, 8), dtype), _channels_last),
              View(rand((2, 3, 3, 3), dtype, seed=9), _channels_last), layouts=("contiguous",))


@op_test("upsample_bilinear2d.out", "upsample_nearest2d.out")
def _upsample() -> None:
    for dtype in FLOATS:
        x = rand((2, 3, 4, 5), dtype)
        check(lambda t: F.interpolate(t, scale_factor=2, mode="bilinear"), x)
        check(lambda t: F.interpolate(t, size=(7, 3), mode="bilinear", align_corners=True), x)
        check(lambda t: F.interpolate(t, scale_factor=2, mode="nearest"), x)
        check(lambda t: F.interpolate(t, size=(9, 6), mode="nearest"), x)
        check(
            lambda t: F.interpolate(t, scale_factor=2, mode="bilinear"),
            View(x, _channels_last),
            layouts=("contiguous",),
        )
        check_out(lambda t, out: torch.ops.aten.upsample_bilinear2d.out(t, [6, 7], False, None, None, out=out), x)
        check_out(lambda t, out: torch.ops.aten.upsample_nearest2d.out(t, [6, 7], None, None, out=out), x)


@op_test("upsample_bilinear2d_backward.grad_input", "upsample_nearest2d_backward.grad_input")
def _upsample_backward() -> None:
    for dtype in FLOATS:
        x = rand((2, 3, 4, 5), dtype)
        for mode, extra in (
            ("bilinear", {"align_corners": False}),
            ("bilinear", {"align_corners": True}),
            ("nearest", {}),
        ):
            check(
                _grads_of(lambda t, m=mode, e=extra: F.interpolate(t, size=(7, 9), mode=m, **e), 1),
                x,
                Fixed(rand((2, 3, 7, 9), dtype, seed=9)),
                layouts=("contiguous", "transposed"),
            )
        g = rand((2, 3, 6, 7), dtype, seed=9)
        bilinear = torch.ops.aten.upsample_bilinear2d_backward.grad_input
        check_out(
            lambda g, out, bilinear=bilinear: bilinear(g, [6, 7], [2, 3, 4, 5], False, None, None, grad_input=out), g
        )
        check_out(
            lambda g, out: torch.ops.aten.upsample_nearest2d_backward.grad_input(
                g, [6, 7], [2, 3, 4, 5], None, None, grad_input=out
            ),
            g,
        )


@op_test("embedding_dense_backward")
def _embedding_dense_backward() -> None:
    indices = torch.tensor([[1, 4, 4, 0], [9, 1, 1, 1]])
    for dtype in FLOATS:
        w, g = rand((10, 6), dtype), rand((2, 4, 6), dtype, seed=9)
        for index_dtype in (I64, torch.int32):
            for kwargs in ({}, {"padding_idx": 1}, {"scale_grad_by_freq": True}):
                check(
                    lambda i, w, g, kw=kwargs: _grads_of(lambda w: F.embedding(i, w, **kw), 1)(w, g),
                    Fixed(indices.to(index_dtype)),
                    w,
                    g,
                    layouts=("contiguous", "transposed"),
                )
        check(lambda g, i: torch.ops.aten.embedding_dense_backward(g, i, 10, -1, False), g, Fixed(indices))
    with pytest.raises(RuntimeError, match="embedding_dim"):
        torch.ops.aten.embedding_dense_backward(
            torch.ones(3, 2, device=DEVICE), torch.tensor([1], device=DEVICE), 10, -1, False
        )


@op_test("native_dropout")
def _native_dropout() -> None:
    for dtype in (F32, F64, BF16):
        for p in (0.0, 0.3, 1.0):
            for shape in ((5,), (40, 30)):
                x = rand(shape, dtype)
                for layout in ("contiguous", "transposed"):
                    # the mask comes from the device's generator: the same seed draws the same mask as on the CPU
                    def dropout(dev: str, p: float = p, x: torch.Tensor = x, layout: str = layout) -> object:
                        return torch.native_dropout(place([x], dev, layout)[0], p, True)

                    _same_stream(dropout)
        check(lambda t: torch.native_dropout(t, 0.3, False), rand((4, 5), dtype))
        def functional_dropout(dev: str, dtype: torch.dtype = dtype) -> object:
            return F.dropout(rand((8, 9), dtype).to(dev), 0.25, training=True)

        _same_stream(functional_dropout)
    check(lambda t: torch.native_dropout(t, 0.3, True), torch.empty(0, 3))


@op_test("native_dropout_backward")
def _native_dropout_backward() -> None:
    for dtype in FLOATS:
        g, mask = rand((4, 5), dtype, seed=9), rand((4, 5), BOOL, seed=2)
        check(lambda g, m: torch.ops.aten.native_dropout_backward(g, m, 1.25), g, mask)
        def dropout_grad(dev: str, dtype: torch.dtype = dtype, g: torch.Tensor = g) -> object:
            return _grads_of(lambda t: F.dropout(t, 0.2, training=True), 1)(
                rand((6, 7), dtype).to(dev), g.new_ones(6, 7).to(dev)
            )[0]

        _same_stream(dropout_grad)
    with pytest.raises(RuntimeError, match="Bool"):
        torch.ops.aten.native_dropout_backward(torch.ones(3, device=DEVICE), torch.ones(3, device=DEVICE), 2.0)
    with pytest.raises(RuntimeError, match="cpu"):
        torch.ops.aten.native_dropout_backward(torch.ones(3, device=DEVICE), torch.tensor(True), 2.0)


# ---- Optimizers -----------------------------------------------------------------------------------


def _pointwise_ternary(
    fn: Callable[..., torch.Tensor], inplace: Callable[..., torch.Tensor], *, low: float = -3
) -> None:
    for dtype in FLOATS:
        a, b, c = rand((3, 4), dtype), rand((3, 4), dtype, seed=1), rand((3, 4), dtype, low=low, seed=2)
        check(fn, a, b, c)
        check(lambda x, y, z: fn(x, y[0], z[:, :1]), a, b, c)  # broadcasting
        check(lambda x, y, z: fn(x[0], y, z), a, b, c)
        check_inplace(inplace, a, b, c)
        check(
            fn,
            View(rand((2, 3, 4, 5), dtype), _channels_last),
            rand((2, 3, 4, 5), dtype, seed=1),
            rand((2, 3, 4, 5), dtype, low=low, seed=2),
            layouts=("contiguous",),
        )
    check_outcome(fn, rand((3, 4)), rand((3, 4), F64, seed=1), rand((3, 4), low=low, seed=2))  # promotion
    # shapes that do not broadcast
    check_outcome(inplace, rand((3, 4)), rand((4, 4), seed=1), rand((3, 4), low=low, seed=2))
    check_outcome(
        lambda x, y, z: fn(x, y, Host(z).tensor),
        rand((3, 4)),
        rand((3, 4), seed=1),
        torch.tensor(1.5),
        layouts=("contiguous",),
    )
    with pytest.raises(RuntimeError, match=r"foo:0.*foo:1|foo:1.*foo:0"):
        fn(torch.ones(2, device="foo:0"), torch.ones(2, device="foo:1"), torch.ones(2, device="foo:0"))
    with pytest.raises(RuntimeError, match="cpu"):
        inplace(torch.ones(2, device=DEVICE), torch.ones(2), torch.ones(2, device=DEVICE))


@op_test("addcmul.out", "addcmul", "addcmul_")
def _addcmul() -> None:
    _pointwise_ternary(lambda x, y, z: torch.addcmul(x, y, z, value=0.5), lambda x, y, z: x.addcmul_(y, z, value=-2))
    check(
        lambda x, y, z: torch.addcmul(x, y, z), rand((3, 4), I64), rand((3, 4), I64, seed=1), rand((3, 4), I64, seed=2)
    )
    check_out(
        lambda x, y, z, out: torch.addcmul(x, y, z, value=3, out=out),
        rand((3, 4)),
        rand((3, 4), seed=1),
        rand((4,), seed=2),
    )


@op_test("addcdiv.out", "addcdiv", "addcdiv_")
def _addcdiv() -> None:
    _pointwise_ternary(
        lambda x, y, z: torch.addcdiv(x, y, z, value=0.5), lambda x, y, z: x.addcdiv_(y, z, value=-2), low=0.5
    )
    check_outcome(
        lambda x, y, z: torch.addcdiv(x, y, z),
        rand((3, 4), I64),
        rand((3, 4), I64, seed=1),
        rand((3, 4), I64, low=1, seed=2),
    )
    check_out(
        lambda x, y, z, out: torch.addcdiv(x, y, z, value=3, out=out),
        rand((3, 4)),
        rand((3, 4), seed=1),
        rand((4,), low=0.5, seed=2),
    )


@op_test("lerp.Scalar_out", "lerp.Scalar", "lerp_.Scalar")
def _lerp_scalar() -> None:
    for weight in (0.1, 0.7, -1.5):
        _pointwise_ternary(
            lambda x, y, z, w=weight: torch.lerp(x, y + 0 * z, w), lambda x, y, z, w=weight: x.lerp_(y + 0 * z, w)
        )
    check_out(lambda x, y, out: torch.lerp(x, y, 0.25, out=out), rand((3, 4)), rand((4,), seed=1))


@op_test("lerp.Tensor_out", "lerp.Tensor", "lerp_.Tensor")
def _lerp_tensor() -> None:
    _pointwise_ternary(torch.lerp, lambda x, y, z: x.lerp_(y, z), low=0)
    check_out(
        lambda x, y, z, out: torch.lerp(x, y, z, out=out), rand((3, 4)), rand((4,), seed=1), rand((3, 1), low=0, seed=2)
    )


def _lists(shapes: Sequence[tuple[int, ...]], dtype: torch.dtype, seed: int, *, low: float = -3) -> list[torch.Tensor]:
    return [rand(s, dtype, low=low, seed=seed + i) for i, s in enumerate(shapes)]


# A model's parameters: weights, biases, a scalar; and lists foreach kernels take in a loop (mixed
# shapes, integer tensors, non-contiguous tensors).
FOREACH_SHAPES = [(4, 3), (3,), (), (2, 3, 2)]


def _foreach_case(
    fn: Callable[..., Any],
    n_lists: int,
    *,
    inplace: bool,
    low: float = -3,
    dtypes: Sequence[torch.dtype] = FLOATS,
    **tol: Any,
) -> None:
    def run(*lists: list[torch.Tensor]) -> Any:
        result = fn(*lists)
        return list(lists[0]) if inplace else result

    for dtype in dtypes:
        lists = [_lists(FOREACH_SHAPES, dtype, seed=10 * k, low=low if k else -3) for k in range(n_lists)]
        check(run, *lists, layouts=("contiguous", "transposed", "sliced"), **tol)
    # tensors of two shapes at one position (broadcast), and a list of one tensor
    if n_lists > 1:
        mixed = [_lists(FOREACH_SHAPES, F32, seed=10 * k, low=low if k else -3) for k in range(n_lists)]
        mixed[1][0] = rand((3,), seed=77, low=low)
        check_outcome(run, *mixed, layouts=("contiguous",))
    check(run, *[[rand((5,), seed=k, low=low if k else -3)] for k in range(n_lists)], layouts=("contiguous",))
    # lists of different lengths, and tensors on two devices or on the CPU: PyTorch's own errors
    if n_lists > 1:
        with pytest.raises(RuntimeError):
            fn([torch.ones(2, device=DEVICE)] * 2, *([[torch.ones(2, device=DEVICE)]] * (n_lists - 1)))
        with pytest.raises(RuntimeError, match=r"foo:0.*foo:1|foo:1.*foo:0|same device"):
            fn([torch.ones(2, device="foo:0")], *([[torch.ones(2, device="foo:1")]] * (n_lists - 1)))
        with pytest.raises(RuntimeError, match="cpu|same device"):
            fn([torch.ones(2, device=DEVICE)], *([[torch.ones(2)]] * (n_lists - 1)))


@op_test("_foreach_add_.Scalar", "_foreach_add_.List", "_foreach_add.List")
def _foreach_add() -> None:
    _foreach_case(lambda s: torch._foreach_add_(s, 0.5), 1, inplace=True)
    _foreach_case(lambda s, o: torch._foreach_add_(s, o, alpha=-0.1), 2, inplace=True)
    _foreach_case(lambda s, o: torch._foreach_add(s, o, alpha=2), 2, inplace=False)
    # integer lists take PyTorch's loop, with the CPU's promotion and errors
    check_outcome(
        lambda s, o: torch._foreach_add(s, o),
        _lists(FOREACH_SHAPES, I64, 0),
        _lists(FOREACH_SHAPES, F32, 5),
        layouts=("contiguous",),
    )
    check_outcome(
        lambda s: (torch._foreach_add_(s, 0.5), s)[1], _lists(FOREACH_SHAPES, I64, 0), layouts=("contiguous",)
    )


@op_test("_foreach_mul_.Scalar", "_foreach_mul.Scalar", "_foreach_mul_.Tensor")
def _foreach_mul() -> None:
    _foreach_case(lambda s: torch._foreach_mul_(s, 0.9), 1, inplace=True)
    _foreach_case(lambda s: torch._foreach_mul(s, -2), 1, inplace=False)
    for factor in (torch.tensor(0.25), torch.tensor(0.25, dtype=F64)):
        _foreach_case(lambda s, f=factor: torch._foreach_mul_(s, f.to(s[0].device)), 1, inplace=True)
        _foreach_case(lambda s, f=factor: torch._foreach_mul_(s, f), 1, inplace=True)  # a CPU scalar tensor
    with pytest.raises(RuntimeError):
        torch._foreach_mul_([torch.ones(2, device=DEVICE)], torch.ones(2, device=DEVICE))


@op_test("_foreach_lerp_.Scalar")
def _foreach_lerp() -> None:
    _foreach_case(lambda s, e: torch._foreach_lerp_(s, e, 0.1), 2, inplace=True)


@op_test("_foreach_addcmul_.Scalar")
def _foreach_addcmul() -> None:
    _foreach_case(lambda s, a, b: torch._foreach_addcmul_(s, a, b, 0.001), 3, inplace=True)
    _foreach_case(lambda s, a: torch._foreach_addcmul_(s, a, a, 0.5), 2, inplace=True)  # Adam: grads twice


@op_test("_foreach_addcdiv_.Scalar", "_foreach_addcdiv_.ScalarList")
def _foreach_addcdiv() -> None:
    _foreach_case(lambda s, a, b: torch._foreach_addcdiv_(s, a, b, -0.01), 3, inplace=True, low=0.5)
    _foreach_case(
        lambda s, a, b: torch._foreach_addcdiv_(s, a, b, [-0.1 * (i + 1) for i in range(len(s))]),
        3,
        inplace=True,
        low=0.5,
    )
    with pytest.raises(RuntimeError):
        x = [torch.ones(2, device=DEVICE)] * 2
        torch._foreach_addcdiv_(x, x, x, [1.0])


@op_test("_foreach_div_.ScalarList")
def _foreach_div() -> None:
    _foreach_case(lambda s: torch._foreach_div_(s, [0.5 + i for i in range(len(s))]), 1, inplace=True)
    with pytest.raises(RuntimeError):
        torch._foreach_div_([torch.ones(2, device=DEVICE)], [1.0, 2.0])


@op_test("_foreach_sqrt", "_foreach_sqrt_")
def _foreach_sqrt() -> None:
    _foreach_case(torch._foreach_sqrt, 1, inplace=False, low=0)
    _foreach_case(torch._foreach_sqrt_, 1, inplace=True, low=0)
    # promotes to float
    check_outcome(torch._foreach_sqrt, _lists(FOREACH_SHAPES, I64, 0, low=0), layouts=("contiguous",))


@op_test("_foreach_maximum_.List")
def _foreach_maximum() -> None:
    _foreach_case(torch._foreach_maximum_, 2, inplace=True)


@op_test("_foreach_neg")
def _foreach_neg() -> None:
    _foreach_case(torch._foreach_neg, 1, inplace=False)


@op_test("_foreach_zero_")
def _foreach_zero() -> None:
    _foreach_case(torch._foreach_zero_, 1, inplace=True, dtypes=(F32, F64, I64, BOOL))


@op_test("_foreach_norm.Scalar")
def _foreach_norm() -> None:
    for ord_ in (2, 1, float("inf")):
        _foreach_case(lambda s, o=ord_: torch._foreach_norm(s, o), 1, inplace=False)
    _foreach_case(lambda s: torch._foreach_norm(s, 2, dtype=F64), 1, inplace=False, dtypes=(F32,))
    # what clip_grad_norm_ does with them
    def clip(*grads: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor | None]]:
        params = [torch.zeros_like(g).requires_grad_() for g in grads]
        for p, g in zip(params, grads, strict=True):
            p.grad = g.clone()
        total = torch.nn.utils.clip_grad_norm_(params, 1.0)
        return total, [p.grad for p in params]

    check(clip, *_lists(FOREACH_SHAPES, F32, 3), layouts=("contiguous",))


def _optimizer_step(
    make: Callable[[list[torch.Tensor]], torch.optim.Optimizer], steps: int = 3
) -> Callable[..., list[torch.Tensor]]:
    """Parameters after `steps` steps of an optimizer, with gradients made from the parameters."""

    def run(*params: torch.Tensor) -> list[torch.Tensor]:
        leaves = [p.detach().clone().requires_grad_() for p in params]
        opt = make(leaves)
        for step in range(steps):
            for p in leaves:
                p.grad = torch.sin(p.detach() * (step + 1))
            opt.step()
        return [p.detach() for p in leaves] + [
            t for state in opt.state.values() for t in state.values() if isinstance(t, torch.Tensor) and t.dim()
        ]

    return run


@op_test("_fused_adam_", "_fused_adam_.tensor_lr", "_fused_adamw_", "_fused_adamw_.tensor_lr")
def _fused_adam() -> None:
    for optimizer in (torch.optim.Adam, torch.optim.AdamW):
        for dtype in (F32, F64):
            params = _lists(FOREACH_SHAPES, dtype, 0)
            options: tuple[dict[str, Any], ...] = (
                {}, {"weight_decay": 0.1, "amsgrad": True}, {"maximize": True}, {"lr": torch.tensor(0.01)}
            )
            for kwargs in options:
                check(
                    _optimizer_step(functools.partial(optimizer, fused=True, **kwargs)),
                    *params,
                    layouts=("contiguous",),
                )
            # the fused kernel computes as the for-loop one does, up to rounding
            fused = _optimizer_step(functools.partial(optimizer, fused=True))(
                *[p.to(DEVICE) for p in params]
            )
            looped = _optimizer_step(functools.partial(optimizer, foreach=False))(*params)
            assert_same(fused, looped, rtol=1e-5, atol=1e-6)
    fused_adam = torch.ops.aten._fused_adam_
    p = [torch.ones(2, 2, device=DEVICE)]
    steps = [torch.ones((), device=DEVICE)]
    common = {
        "lr": 0.1,
        "beta1": 0.9,
        "beta2": 0.99,
        "weight_decay": 0.0,
        "eps": 1e-8,
        "amsgrad": False,
        "maximize": False,
    }
    with pytest.raises(RuntimeError, match="must be contiguous"):
        fused_adam([torch.ones(2, 2, device=DEVICE).t()], p, p, p, [], steps, **common)
    with pytest.raises(RuntimeError, match="exp_avgs.*Float|Double"):
        fused_adam(p, p, [torch.ones(2, 2, dtype=F64, device=DEVICE)], p, [], steps, **common)
    with pytest.raises(RuntimeError, match="foo:1"):
        fused_adam(p, [torch.ones(2, 2, device="foo:1")], p, p, [], steps, **common)
    with pytest.raises(RuntimeError, match="state_steps"):
        fused_adam(p, p, p, p, [], [torch.ones(())], **common)
    with pytest.raises(RuntimeError, match="grad_scale"):
        fused_adam(p, p, p, p, [], steps, grad_scale=torch.ones((), dtype=F64, device=DEVICE), **common)


@op_test("_fused_sgd_", "_fused_sgd_.tensor_lr")
def _fused_sgd() -> None:
    for dtype in (F32, F64):
        params = _lists(FOREACH_SHAPES, dtype, 0)
        options: tuple[dict[str, Any], ...] = (
            {"momentum": 0.9},
            {"momentum": 0.9, "nesterov": True, "weight_decay": 0.01},
            {},
            {"lr": torch.tensor(0.05), "momentum": 0.5},
        )
        for kwargs in options:
            check(
                _optimizer_step(functools.partial(torch.optim.SGD, **{"lr": 0.1, **kwargs}, fused=True)),
                *params,
                layouts=("contiguous",),
            )
    with pytest.raises(RuntimeError, match="momentum_buffer_list"):
        p = [torch.ones(2, device=DEVICE)]
        torch.ops.aten._fused_sgd_(
            p,
            p,
            p,
            weight_decay=0.0,
            momentum=0.0,
            lr=0.1,
            dampening=0.0,
            nesterov=False,
            maximize=False,
            is_first_step=True,
        )


# ---- Elementwise, comparisons and factories of transformer blocks ------------------------------


@op_test("reciprocal.out")
def _reciprocal() -> None:
    for dtype in (F32, F64, I64):
        check(torch.reciprocal, rand((3, 4), dtype, low=1))
        check_out(
            lambda t, out: torch.reciprocal(t, out=out),
            rand((3, 4), dtype, low=1),
            dtype=F32 if dtype == I64 else dtype,
        )
    check_inplace(torch.reciprocal_, rand((3, 4), low=0.5))
    check(lambda t: 1.0 / t, rand((3, 4), low=0.5))


@op_test("minimum.out")
def _minimum() -> None:
    for dtype in (F32, F64, I64, BOOL):
        a, b = rand((3, 4), dtype), rand((3, 4), dtype, seed=1)
        check(torch.minimum, a, b)
        check(lambda x, y: torch.minimum(x, y[0]), a, b)
        check_out(lambda x, y, out: torch.minimum(x, y, out=out), a, b)
    check(torch.minimum, torch.tensor([float("nan"), 1.0]), torch.tensor([0.0, float("nan")]))


def _comparison(name: str) -> None:
    fn = getattr(torch, name)
    for dtype in (F32, F64, I64, BOOL):
        x = rand((3, 4), dtype, low=-2, high=2)
        for scalar in (0, 1.5, True):
            check(lambda t, s=scalar: fn(t, s), x)
        check_out(lambda t, out: fn(t, 1, out=out), x, dtype=BOOL)
        check_inplace(lambda t: getattr(t, name + "_")(1), x)
    check(lambda t: fn(t, 0.0), torch.tensor([float("nan"), 0.0, -1.0]))


@op_test("eq.Scalar_out")
def _eq_scalar() -> None:
    _comparison("eq")


@op_test("ne.Scalar_out")
def _ne_scalar() -> None:
    _comparison("ne")


@op_test("lt.Scalar_out")
def _lt_scalar() -> None:
    _comparison("lt")


@op_test("le.Scalar_out")
def _le_scalar() -> None:
    _comparison("le")


@op_test("ge.Scalar_out")
def _ge_scalar() -> None:
    _comparison("ge")


def _comparison_tensor(name: str) -> None:
    fn = getattr(torch, name)
    for dtype in (F32, F64, I64, BOOL):
        a, b = rand((3, 4), dtype, low=-1, high=1), rand((3, 4), dtype, low=-1, high=1, seed=1)
        check(fn, a, b)
        check(fn, a, a)
        check(lambda x, y: fn(x, y[1]), a, b)  # broadcasting
        check(lambda x: fn(x, torch.tensor(0)), a)  # a CPU scalar tensor
        check_out(lambda x, y, out: fn(x, y, out=out), a, b, dtype=BOOL)
        check_inplace(lambda x, y: getattr(x, name + "_")(y), a, b)
    check(fn, rand((3, 4), I64), rand((3, 4), F32))  # promotion
    check(fn, torch.tensor([float("nan"), 1.0]), torch.tensor([float("nan"), 2.0]))
    with pytest.raises(RuntimeError, match=r"foo:0.*foo:1|foo:1.*foo:0"):
        fn(torch.ones(2, device="foo:0"), torch.ones(2, device="foo:1"))


for _name in ("ge", "ne", "lt", "le", "gt"):
    op_test(_name + ".Tensor_out")(functools.partial(_comparison_tensor, _name))


@op_test("isneginf.out")
def _isneginf() -> None:
    for dtype in (F32, F64, I64, BOOL):
        check(torch.isneginf, rand((3, 4), dtype))
    x = torch.tensor([float("-inf"), float("inf"), float("nan"), 0.0, -1e38])
    check(torch.isneginf, x)
    check_out(lambda t, out: torch.isneginf(t, out=out), x, dtype=BOOL)


@op_test("bitwise_and.Tensor_out")
def _bitwise_and() -> None:
    for dtype in (BOOL, I64, torch.int32):
        a, b = rand((3, 4), dtype, low=-9, high=9), rand((3, 4), dtype, low=-9, high=9, seed=1)
        check(torch.bitwise_and, a, b)
        check(lambda x, y: x & y[0], a, b)
        check_out(lambda x, y, out: torch.bitwise_and(x, y, out=out), a, b)
        check_inplace(lambda x, y: x.bitwise_and_(y), a, b)
    check_outcome(torch.bitwise_and, rand((3, 4)), rand((3, 4), seed=1))  # floats: the CPU's error


@op_test("all.out", "all.all_out")
def _all() -> None:
    for dtype in (F32, I64, BOOL):
        x = rand((3, 4, 5), dtype, low=0, high=1)
        check(torch.all, x)
        for dim in (0, -1):
            check(lambda t, d=dim: torch.all(t, d), x)
            check(lambda t, d=dim: torch.all(t, d, keepdim=True), x)
        check_out(lambda t, out: torch.all(t, 1, out=out), x, dtype=BOOL)
        check_out(lambda t, out: torch.all(t, out=out), x, dtype=BOOL)
    check(torch.all, torch.ones(0, 3))


@op_test("linalg_vector_norm.out")
def _linalg_vector_norm() -> None:
    for dtype in FLOATS:
        x = rand((3, 4, 5), dtype)
        for ord_ in (2, 1, float("inf"), 0.5, 0):
            check(lambda t, o=ord_: torch.linalg.vector_norm(t, o), x)
            check(lambda t, o=ord_: torch.linalg.vector_norm(t, o, dim=(0, 2), keepdim=True), x)
        check_out(lambda t, out: torch.linalg.vector_norm(t, 2, dim=1, out=out), x)
    check(lambda t: torch.linalg.vector_norm(t, dtype=F64), rand((3, 4)))
    check(
        _grad_of(lambda t: torch.linalg.vector_norm(t)),
        rand((3, 4)),
        Fixed(torch.tensor(2.0)),
        layouts=("contiguous", "transposed"),
    )


@op_test("arange.start_out")
def _arange() -> None:
    # Each of arange's arities through one name (its overloads cannot take a tuple of any length).
    arange: Callable[..., torch.Tensor] = torch.arange
    for args, kwargs in [
        ((5,), {}),
        ((2, 9), {}),
        ((0, 1, 0.1), {}),
        ((10, 0, -3), {}),
        ((3,), {"dtype": F64}),
        ((1.5, 4.0), {"dtype": F32}),
    ]:
        with no_fallback():
            on_foo = arange(*args, device=DEVICE, **kwargs)
        assert_same(on_foo, arange(*args, **kwargs))
    check_out(lambda t, out: torch.arange(2, 11, 3, out=out), rand((3,)), dtype=I64)
    with pytest.raises(RuntimeError):
        torch.arange(0, 10, -1, device=DEVICE)


@op_test("cumsum.out")
def _cumsum() -> None:
    for dtype in (F32, F64, I64, BOOL, torch.float16):
        x = rand((3, 4, 5), dtype)
        for dim in (0, 1, -1):
            check(lambda t, d=dim: torch.cumsum(t, d), x)
        check(lambda t: torch.cumsum(t, 1, dtype=F64), x)
        check_out(lambda t, out: torch.cumsum(t, 2, out=out), x, dtype=I64 if dtype in (I64, BOOL) else dtype)
    check_inplace(lambda t: t.cumsum_(0), rand((3, 4)))
    check(lambda t: torch.cumsum(t, 0), rand(()))
    check(lambda t: torch.cumsum(t, 1), rand((2, 0)))
    check_outcome(lambda t: torch.cumsum(t, 2), rand((3, 4)))  # dim out of range: the CPU's error
    check(lambda t: torch.cumsum(t, 0, dtype=I64), rand((3, 4)))  # a float input summed as int64
    # RoBERTa's position ids: a running count over the padding mask, in int32
    check(lambda t: (torch.cumsum(t.ne(1).int(), 1).type_as(t) * t.ne(1).int()).long() + 1,
          torch.tensor([[0, 5, 7, 1, 1], [0, 3, 1, 1, 1]]))


@op_test("tril.out", "triu.out")
def _tril_triu() -> None:
    for fn in (torch.tril, torch.triu):
        for dtype in (F32, I64, BOOL):
            x = rand((4, 5), dtype)
            for diagonal in (0, 1, -2):
                check(lambda t, d=diagonal, fn=fn: fn(t, d), x)
            check(lambda t, fn=fn: fn(t), rand((2, 3, 4), dtype))
            check_out(lambda t, out, fn=fn: fn(t, 1, out=out), x)
            check_inplace(lambda t, fn=fn: getattr(t, fn.__name__ + "_")(-1), x)
        check_outcome(fn, rand((3,)))  # one dimension: the CPU's error
    # a causal mask, as transformers build it
    check(
        lambda t: torch.tril(torch.ones(5, 5, dtype=BOOL, device=t.device)) & (t > 0),
        rand((5, 5)),
        layouts=("contiguous",),
    )


@op_test("roll")
def _roll() -> None:
    for dtype in (F32, I64, BOOL):
        x = rand((4, 5, 3), dtype)
        check(lambda t: torch.roll(t, 2), x)
        check(lambda t: torch.roll(t, (1, -2), (0, 1)), x)
        check(lambda t: torch.roll(t, -3, 2), x)
    # Swin's shift
    check(lambda t: torch.roll(t, (-2, -2), (1, 2)), View(rand((2, 3, 6, 6)), _channels_last), layouts=("contiguous",))
    check_outcome(lambda t: torch.roll(t, (1, 2), (0,)), rand((3, 4)))


@op_test("_index_put_impl_")
def _index_put() -> None:
    for dtype in (F32, F64, I64):
        x, values = rand((6, 4), dtype), rand((3, 4), dtype, seed=1)
        i = torch.tensor([5, 0, 5])
        for accumulate in (False, True):
            check_inplace(lambda t, i, v, a=accumulate: t.index_put_((i,), v, accumulate=a), x, Fixed(i), Fixed(values))
            check(lambda t, i, v, a=accumulate: torch.index_put(t, (i,), v, accumulate=a), x, Fixed(i), Fixed(values))
        check_inplace(
            lambda t, i, j: t.index_put_((i, j), torch.tensor(7, dtype=t.dtype)),
            x,
            Fixed(i),
            Fixed(torch.tensor([1, 2, 3])),
        )
        check_inplace(lambda t, m: t.index_put_((m,), torch.tensor(2, dtype=t.dtype)), x, Fixed(rand((6, 4), BOOL)))
    # the gradient of indexing by a tensor (relative position biases) accumulates
    table, index = rand((7, 3)), torch.tensor([[0, 6, 6], [2, 2, 0]])
    check(lambda w, i, g: _grads_of(lambda w: w[i], 1)(w, g), table, Fixed(index), Fixed(rand((2, 3, 3), seed=9)),
          layouts=("contiguous", "transposed"))
    # An index out of range depends on the data: reported at the next synchronisation, as CUDA's
    # device-side assert is. Errors of the metadata raise at the call, with nothing written.
    with pytest.raises((RuntimeError, IndexError), match="out of bounds"):
        torch.zeros(3, device=DEVICE).index_put_((torch.tensor([5], device=DEVICE),), torch.tensor(1.0, device=DEVICE))
        foo.synchronize()
    target, index = torch.zeros(6, 4, device=DEVICE), torch.tensor([5, 0], device=DEVICE)
    with pytest.raises(RuntimeError, match="shape mismatch"):
        target.index_put_((index,), torch.ones(3, 4, device=DEVICE))
    with pytest.raises(RuntimeError, match="dtypes match"):
        target.index_put_((index,), torch.ones(2, 4, dtype=F64, device=DEVICE))
    with pytest.raises(IndexError, match="too many indices"):
        target.index_put_((index, index, index), torch.ones(2, device=DEVICE))
    assert_same(target, torch.zeros(6, 4))
    # values aliasing the target: the CPU kernel's overlap check, at the call
    with pytest.raises(RuntimeError, match="unsupported operation"):
        target.index_put_((torch.tensor([0, 1, 2, 3], device=DEVICE),), target[0])


# ---- Activations of mobile CNNs ---------------------------------------------------------------


@op_test("hardtanh.out", "hardtanh", "hardtanh_")
def _hardtanh() -> None:
    for dtype in (F32, F64, I64):
        for shape in SHAPES:
            x = rand(shape, dtype)
            check(lambda t: F.hardtanh(t, -1.5, 2), x)
            check(F.relu6, x)
            check_inplace(lambda t: F.hardtanh(t, -1, 1, inplace=True), x)
        check_out(lambda t, out: torch.ops.aten.hardtanh.out(t, -1, 1, out=out), rand((3, 4), dtype))
    check_outcome(F.hardtanh, rand((3,), BOOL))


@op_test("hardtanh_backward.grad_input", "hardtanh_backward")
def _hardtanh_backward() -> None:
    for dtype in FLOATS:
        g, x = rand((3, 4), dtype, seed=3), rand((3, 4), dtype)
        check(_grad_of(F.relu6), rand((3, 4), dtype, low=-2, high=8), g, layouts=("contiguous", "transposed"))
        check(lambda g, x: torch.ops.aten.hardtanh_backward(g, x, -1.0, 1.0), g, x)
        check_out(lambda g, x, out: torch.ops.aten.hardtanh_backward.grad_input(g, x, -1, 1, grad_input=out), g, x)


@op_test("hardswish.out", "hardswish", "hardswish_")
def _hardswish() -> None:
    for dtype in FLOATS:
        for shape in SHAPES:
            check(F.hardswish, rand(shape, dtype, low=-5, high=5))
        check_inplace(lambda t: F.hardswish(t, inplace=True), rand((3, 4), dtype, low=-5, high=5))
        check_out(lambda t, out: torch.ops.aten.hardswish.out(t, out=out), rand((3, 4), dtype))
    check(F.hardswish, View(rand((2, 3, 4, 5)), _channels_last), layouts=("contiguous",))


@op_test("hardswish_backward")
def _hardswish_backward() -> None:
    for dtype in FLOATS:
        g = rand((3, 4), dtype, seed=3)
        check(_grad_of(F.hardswish), rand((3, 4), dtype, low=-5, high=5), g, layouts=("contiguous", "transposed"))
        check(torch.ops.aten.hardswish_backward, g, rand((3, 4), dtype, low=-5, high=5))


@op_test("hardsigmoid.out")
def _hardsigmoid() -> None:
    for dtype in FLOATS:
        for shape in SHAPES:
            check(F.hardsigmoid, rand(shape, dtype, low=-5, high=5))
        check_inplace(lambda t: F.hardsigmoid(t, inplace=True), rand((3, 4), dtype, low=-5, high=5))
        check_out(lambda t, out: torch.ops.aten.hardsigmoid.out(t, out=out), rand((3, 4), dtype))


@op_test("hardsigmoid_backward.grad_input")
def _hardsigmoid_backward() -> None:
    for dtype in FLOATS:
        g = rand((3, 4), dtype, seed=3)
        check(_grad_of(F.hardsigmoid), rand((3, 4), dtype, low=-5, high=5), g, layouts=("contiguous", "transposed"))
        check_out(
            lambda g, x, out: torch.ops.aten.hardsigmoid_backward.grad_input(g, x, grad_input=out),
            g,
            rand((3, 4), dtype),
        )


# ---- Random numbers ------------------------------------------------------------------------


def _same_stream(make: Callable[[str], object]) -> None:
    foo.manual_seed(1234)
    torch.manual_seed(1234)
    with no_fallback():
        on_foo = make(DEVICE)
    assert_same(on_foo, make("cpu"), rtol=0, atol=0)


def _randn(n: int, dev: str) -> torch.Tensor:
    return torch.randn(n, device=dev)


def _rand(n: int, dev: str) -> torch.Tensor:
    return torch.rand(n, device=dev)


def _bernoulli_filled(p: float, dev: str) -> torch.Tensor:
    return torch.empty(40, 30, device=dev).bernoulli_(p)


def _random_filled(dtype: torch.dtype, to: int | None, dev: str) -> torch.Tensor:
    t = torch.empty(50, dtype=dtype, device=dev)
    return t.random_() if to is None else t.random_(to)


@op_test("normal_")
def _normal() -> None:
    for n in (5, 16, 1000):  # ATen's CPU kernel has a different path from 16 elements on
        _same_stream(functools.partial(_randn, n))
    _same_stream(lambda dev: torch.empty(7, 9, dtype=F64, device=dev).normal_(2.0, 0.5))
    _same_stream(lambda dev: torch.empty(6, 8, device=dev).t().normal_())
    g_foo = torch.Generator(device=DEVICE).manual_seed(7)
    g_cpu = torch.Generator().manual_seed(7)
    assert_same(torch.randn(100, device=DEVICE, generator=g_foo), torch.randn(100, generator=g_cpu), rtol=0, atol=0)
    x = torch.empty(100000, device=DEVICE).normal_(3.0, 2.0).cpu()
    assert abs(x.mean().item() - 3.0) < 0.05 and abs(x.std().item() - 2.0) < 0.05
    with pytest.raises(RuntimeError, match="std"):
        torch.empty(3, device=DEVICE).normal_(0.0, -1.0)


@op_test("uniform_")
def _uniform() -> None:
    for n in (5, 16, 1000):
        _same_stream(functools.partial(_rand, n))
    _same_stream(lambda dev: torch.empty(7, 9, dtype=F64, device=dev).uniform_(-2.0, 5.0))
    x = torch.empty(10000, device=DEVICE).uniform_(-1, 3).cpu()
    assert x.min().item() >= -1 and x.max().item() < 3
    with pytest.raises(RuntimeError, match="from"):
        torch.empty(3, device=DEVICE).uniform_(2.0, 1.0)


@op_test("bernoulli_.float")
def _bernoulli() -> None:
    for p in (0.0, 0.3, 1.0):
        _same_stream(functools.partial(_bernoulli_filled, p))
    _same_stream(lambda dev: torch.empty(6, 8, dtype=F64, device=dev).t().bernoulli_(0.5))
    _same_stream(lambda dev: torch.empty(100, dtype=BOOL, device=dev).bernoulli_(0.5))
    g_foo = torch.Generator(device=DEVICE).manual_seed(7)
    g_cpu = torch.Generator().manual_seed(7)
    assert_same(
        torch.empty(100, device=DEVICE).bernoulli_(0.4, generator=g_foo),
        torch.empty(100).bernoulli_(0.4, generator=g_cpu),
        rtol=0,
        atol=0,
    )
    with pytest.raises(RuntimeError, match="p"):
        torch.empty(3, device=DEVICE).bernoulli_(1.5)


@op_test("random_.from", "random_.to", "random_")
def _random() -> None:
    for dtype in (F32, F64, I64, torch.int32, BOOL):
        _same_stream(functools.partial(_random_filled, dtype, None))
        _same_stream(functools.partial(_random_filled, dtype, 2))
    _same_stream(lambda dev: torch.randint(-5, 10, (7, 9), device=dev))
    _same_stream(lambda dev: torch.empty(6, 8, device=dev).t().random_(3, 9))
    g_foo = torch.Generator(device=DEVICE).manual_seed(7)
    g_cpu = torch.Generator().manual_seed(7)
    assert_same(
        torch.randint(0, 100, (30,), device=DEVICE, generator=g_foo),
        torch.randint(0, 100, (30,), generator=g_cpu),
        rtol=0,
        atol=0,
    )
    with pytest.raises(RuntimeError):
        torch.empty(3, dtype=torch.uint8, device=DEVICE).random_(0, 1000)


def test_randn_after_global_manual_seed_matches_cpu() -> None:
    """torch.manual_seed seeds every device, so foo and CPU draw the same numbers."""
    torch.manual_seed(0)
    on_foo = torch.randn(3, 5, device=DEVICE)
    torch.manual_seed(0)
    assert torch.equal(on_foo.cpu(), torch.randn(3, 5))


def test_helpers_detect_wrong_results_and_fallbacks() -> None:
    """The comparison helpers can fail: a wrong result or a silent CPU fallback is caught."""
    with pytest.raises(AssertionError):
        check(lambda t: t + (1 if t.device.type == DEVICE else 0), rand((3,)), layouts=("contiguous",))
    with pytest.raises(AssertionError, match="fallback"):
        check(lambda t: torch.cumprod(t, 0), rand((3,)), layouts=("contiguous",))
