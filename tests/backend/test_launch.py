"""Kernels of foo are launched, not run inline: their work runs on the current stream of their device,
after everything enqueued there before, and the call returns at once (runtime/csrc/streams/launch.h).

As in test_streams.py, asynchrony is shown without timing: the driver's test hook pauses a stream (it
queues work but runs none). Each test is one in which a missing synchronisation in the runtime would
give a wrong result or a call that returns too early, compared with the same computation on the CPU.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from typing import cast

import pytest
import torch

from foo_testing import assert_still_waiting, blocked_call, foo, needs_host_views, paused, run_with_launch_blocking

pytestmark = [
    pytest.mark.skipif(foo.launch_blocking(), reason="SCAFFOLD_LAUNCH_BLOCKING=1 runs every stream synchronously"),
    needs_host_views,  # the launched kernels are foo's, on host views
]


def matrices(n: int = 48) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    return torch.randn(n, n, generator=g), torch.randn(n, n, generator=g)


def test_matmul_on_a_paused_stream_runs_only_when_the_stream_does() -> None:
    a, b = matrices()
    x = a.to("foo")
    s = foo.Stream()
    with paused(s):
        with foo.stream(s):
            y = x @ x  # returns: the product is launched on s
            done = foo.Event()
            done.record()
        assert not s.query() and not done.query()
        # The default stream is not paused: this pageable copy completes now, before the product
        # runs -- so the product, computed later, must see b.
        x.copy_(b)
    assert s.query() and done.query()
    torch.testing.assert_close(y.cpu(), b @ b)


# One call of each kind of launched kernel, on (x, y, a boolean mask).
LAUNCHED_KINDS: dict[str, Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]] = {
    "mm": lambda x, y, m: x @ y,
    "addmm": lambda x, y, m: torch.addmm(x, x, y, beta=0.5, alpha=2.0),
    "bmm": lambda x, y, m: torch.bmm(x.unsqueeze(0), y.unsqueeze(0)),
    "add": lambda x, y, m: x + 2 * y,
    "mul": lambda x, y, m: x * y,
    "relu": lambda x, y, m: torch.relu(x),
    "sum": lambda x, y, m: x.sum(dim=1),
    "mean": lambda x, y, m: x.mean(),
    "amax": lambda x, y, m: x.amax(dim=0),
    "argmax": lambda x, y, m: x.argmax(dim=1),
    "abs": lambda x, y, m: x.abs(),
    "where": lambda x, y, m: torch.where(m, x, y),
}


def test_launched_kernels_of_every_kind_match_the_cpu() -> None:
    a, b = matrices(16)
    # Made before pausing: a pageable copy or an inline kernel (gt) would wait for the paused stream.
    x, y, positive = a.to("foo"), b.to("foo"), (a > 0).to("foo")
    s = foo.Stream()
    s.wait_stream(foo.current_stream())
    with paused(s):
        with foo.stream(s):
            results = {name: fn(x, y, positive) for name, fn in LAUNCHED_KINDS.items()}
            inplace = x.clone()
            inplace.mul_(y).add_(1).relu_()
            zeros = torch.zeros(5, device="foo")
        assert not s.query()
    expected = {name: fn(a, b, a > 0) for name, fn in LAUNCHED_KINDS.items()}
    for name, value in results.items():
        torch.testing.assert_close(value.cpu(), expected[name], msg=name)
    torch.testing.assert_close(inplace.cpu(), (a * b + 1).relu())
    assert zeros.cpu().eq(0).all()


CONVOLUTIONS = {
    # name: (input shape, weight shape, stride, padding, dilation, transposed, output padding, groups)
    "2d": ((2, 6, 9, 9), (4, 6, 3, 3), [2, 2], [1, 1], [1, 1], False, [0, 0], 1),
    "2d grouped dilated": ((2, 6, 9, 9), (6, 2, 3, 3), [1, 1], [2, 2], [2, 2], False, [0, 0], 3),
    "2d transposed": ((2, 6, 5, 5), (6, 4, 3, 3), [2, 2], [1, 1], [1, 1], True, [1, 1], 1),
    "1d": ((2, 3, 11), (5, 3, 4), [1], [0], [1], False, [0], 1),
    "3d": ((1, 2, 5, 5, 5), (3, 2, 2, 2, 2), [1, 1, 1], [1, 1, 1], [1, 1, 1], False, [0, 0, 0], 1),
}


@pytest.mark.parametrize("channels_last", [False, True])
@pytest.mark.parametrize("case", list(CONVOLUTIONS))
def test_convolutions_and_their_backward_are_launched(case: str, channels_last: bool) -> None:
    input_shape, weight_shape, stride, padding, dilation, transposed, output_padding, groups = CONVOLUTIONS[case]
    g = torch.Generator().manual_seed(0)
    x, w = torch.randn(input_shape, generator=g), torch.randn(weight_shape, generator=g)
    if channels_last and x.dim() == 4:
        x = x.to(memory_format=torch.channels_last)
    out_channels = w.size(1) * groups if transposed else w.size(0)
    b = torch.randn(out_channels, generator=g)
    args = (stride, padding, dilation, transposed, output_padding, groups)
    expected = torch.ops.aten.convolution(x, w, b, *args)
    grad = torch.randn(expected.shape, generator=g)
    expected_grads = torch.ops.aten.convolution_backward(grad, x, w, [out_channels], *args, [True, True, True])
    xd, wd, bd, gd = (t.to("foo") for t in (x, w, b, grad))
    s = foo.Stream()
    with paused(s), foo.stream(s):
        y = torch.ops.aten.convolution(xd, wd, bd, *args)
        grads = torch.ops.aten.convolution_backward(gd, xd, wd, [out_channels], *args, [True, True, True])
        assert not s.query()  # both returned before running
    torch.testing.assert_close(y.cpu(), expected)
    for got, want in zip(grads, expected_grads, strict=True):
        torch.testing.assert_close(got.cpu(), want)
    # Laid out as the CPU's: a channels-last network stays channels-last.
    assert [t.stride() for t in (y, *grads)] == [t.stride() for t in (expected, *expected_grads)]
    # Only what output_mask asks for is computed.
    grad_input, grad_weight, grad_bias = torch.ops.aten.convolution_backward(
        gd, xd, wd, [out_channels], *args, [False, True, False]
    )
    assert grad_input is None and grad_bias is None
    torch.testing.assert_close(grad_weight.cpu(), expected_grads[1])


@pytest.mark.parametrize("channels_last", [False, True])
@pytest.mark.parametrize("training", [True, False])
def test_batch_norm_and_its_backward_are_launched(training: bool, channels_last: bool) -> None:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(4, 3, 5, 5, generator=g)
    if channels_last:
        x = x.to(memory_format=torch.channels_last)
    weight, bias, grad = torch.randn(3, generator=g), torch.randn(3, generator=g), torch.randn(4, 3, 5, 5, generator=g)
    running_mean, running_var = torch.randn(3, generator=g), torch.rand(3, generator=g) + 0.5
    device = [t.to("foo") for t in (x, weight, bias, running_mean, running_var, grad)]

    def step(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, rm: torch.Tensor, rv: torch.Tensor,
             go: torch.Tensor) -> list[torch.Tensor]:
        out, save_mean, save_invstd = torch.ops.aten.native_batch_norm(x, w, b, rm, rv, training, 0.1, 1e-5)
        grads = torch.ops.aten.native_batch_norm_backward(
            go, x, w, rm, rv, save_mean, save_invstd, training, 1e-5, [True, True, True]
        )
        return [out, save_mean, save_invstd, *grads, rm, rv]  # the running stats are updated in place

    expected = step(x, weight, bias, running_mean, running_var, grad)
    s = foo.Stream()
    with paused(s), foo.stream(s):
        got = step(*device)
        assert not s.query()  # returned before running
    layout = torch.channels_last if channels_last else torch.contiguous_format
    assert got[0].is_contiguous(memory_format=layout) and expected[0].is_contiguous(memory_format=layout)
    for value, want in zip(got, expected, strict=True):
        torch.testing.assert_close(value.cpu(), want)


def test_layer_norm_and_its_backward_are_launched() -> None:
    g = torch.Generator().manual_seed(0)
    x, grad = torch.randn(3, 4, 8, generator=g), torch.randn(3, 4, 8, generator=g)
    weight, bias = torch.randn(8, generator=g), torch.randn(8, generator=g)
    out, mean, rstd = torch.ops.aten.native_layer_norm(x, [8], weight, bias, 1e-5)
    grads = torch.ops.aten.native_layer_norm_backward(grad, x, [8], mean, rstd, weight, bias, [True, True, True])
    expected = [out, mean, rstd, *grads]
    xd, gd, wd, bd = (t.to("foo") for t in (x, grad, weight, bias))
    s = foo.Stream()
    with paused(s), foo.stream(s):
        out_d, mean_d, rstd_d = torch.ops.aten.native_layer_norm(xd, [8], wd, bd, 1e-5)
        grads_d = torch.ops.aten.native_layer_norm_backward(gd, xd, [8], mean_d, rstd_d, wd, bd, [True, False, True])
        assert not s.query()  # returned before running
    assert grads_d[1] is None  # only what output_mask asks for
    got = [out_d, mean_d, rstd_d, grads_d[0], expected[4], grads_d[2]]
    for value, want in zip(got, expected, strict=True):
        torch.testing.assert_close(value.cpu(), want)


FLASH_ATTENTION_CASES = {
    # name: (query shape, key/value shape, dtype, mask shape or None, causal, query laid out (B, L, H, E))
    "plain": ((2, 3, 8, 16), (2, 3, 8, 16), torch.float32, None, False, False),
    "causal, longer keys": ((1, 2, 5, 8), (1, 2, 9, 8), torch.float32, None, True, False),
    "grouped query heads": ((2, 4, 6, 8), (2, 2, 6, 8), torch.float32, None, False, False),
    "broadcast 4-d mask": ((2, 3, 5, 8), (2, 3, 7, 8), torch.float32, (2, 1, 1, 7), False, False),
    "2-d mask, bfloat16": ((1, 2, 5, 8), (1, 2, 7, 8), torch.bfloat16, (5, 7), False, False),
    "query from a linear layer": ((2, 3, 5, 8), (2, 3, 5, 8), torch.float32, None, False, True),
}


@pytest.mark.parametrize("case", list(FLASH_ATTENTION_CASES))
def test_flash_attention_and_its_backward_are_launched(case: str) -> None:
    """The CPU's flash attention runs on the stream, not on the calling thread (autograd's device
    thread for the backward), with results laid out as the CPU's: Inductor checks the strides."""
    q_shape, kv_shape, dtype, mask_shape, causal, transposed_query = FLASH_ATTENTION_CASES[case]
    g = torch.Generator().manual_seed(0)
    if transposed_query:
        b, h, length, e = q_shape
        q = torch.randn(b, length, h, e, generator=g).transpose(1, 2).to(dtype)
    else:
        q = torch.randn(q_shape, generator=g).to(dtype)
    k, v = (torch.randn(kv_shape, generator=g).to(dtype) for _ in range(2))
    mask = torch.randn(mask_shape, generator=g).to(dtype) if mask_shape else None
    attention = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default
    backward = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu_backward.default
    out, logsumexp = attention(q, k, v, 0.0, causal, attn_mask=mask)
    grad = torch.randn(out.shape, generator=g).to(dtype)
    expected = [out, logsumexp, *backward(grad, q, k, v, out, logsumexp, 0.0, causal, attn_mask=mask)]
    qd, kd, vd, gd = (t.to("foo") for t in (q, k, v, grad))
    md = mask.to("foo") if mask is not None else None
    s = foo.Stream()
    s.wait_stream(foo.current_stream())
    with paused(s), foo.stream(s):
        out_d, logsumexp_d = attention(qd, kd, vd, 0.0, causal, attn_mask=md)
        grads_d = backward(gd, qd, kd, vd, out_d, logsumexp_d, 0.0, causal, attn_mask=md)
        assert not s.query()  # returned before running
    for got, want in zip([out_d, logsumexp_d, *grads_d], expected, strict=True):
        assert (got.dtype, got.shape, got.stride()) == (want.dtype, want.shape, want.stride())
        torch.testing.assert_close(got.cpu(), want)


def test_flash_attention_the_cpu_kernel_refuses_raises_at_the_call() -> None:
    """Inputs outside what is known to launch run inline: the CPU kernel's own error, at the call."""
    q = torch.ones(1, 2, 4, 8, device="foo")
    attention = torch.ops.aten._scaled_dot_product_flash_attention_for_cpu.default
    with pytest.raises(RuntimeError, match="same head size"):
        attention(q, q, torch.ones(1, 2, 4, 6, device="foo"))
    with pytest.raises(RuntimeError, match="dim in"):
        attention(q, q, q, attn_mask=torch.ones(2, 4, 4, device="foo"))


@pytest.mark.parametrize("reduction", [0, 1, 2])
def test_nll_loss_and_its_backward_are_launched(reduction: int) -> None:
    """A classifier's loss and the first kernel of its backward: inline, they would wait for the
    whole forward (the backward on autograd's device thread) and hold back every launch after."""
    g = torch.Generator().manual_seed(0)
    scores = torch.randn(4, 10, generator=g).log_softmax(1)
    target = torch.tensor([1, 3, 9, -100])
    out, total_weight = torch.ops.aten.nll_loss_forward(scores, target, None, reduction, -100)
    grad = torch.randn(out.shape, generator=g)
    expected = torch.ops.aten.nll_loss_backward(grad, scores, target, None, reduction, -100, total_weight)
    scores_d, target_d, grad_d = scores.to("foo"), target.to("foo"), grad.to("foo")
    s = foo.Stream()
    s.wait_stream(foo.current_stream())
    with paused(s), foo.stream(s):
        out_d, total_weight_d = torch.ops.aten.nll_loss_forward(scores_d, target_d, None, reduction, -100)
        got = torch.ops.aten.nll_loss_backward(grad_d, scores_d, target_d, None, reduction, -100, total_weight_d)
        assert not s.query()  # returned before running
    for value, want in ((out_d, out), (total_weight_d, total_weight), (got, expected)):
        assert value.shape == want.shape
        torch.testing.assert_close(value.cpu(), want)


# Kernels of the layers and masks real models use whose CPU kernel writes an out= tensor, allocates
# its result or works in place: each case maps (x, y, positive mask, small integer indices) to its
# results.
F = torch.nn.functional
MODEL_KERNELS: dict[str, Callable[..., object]] = {
    "pow (a variance)": lambda x, y, m, i: x.pow(2),
    "pow, fractional": lambda x, y, m, i: x.abs().pow(0.5),
    "silu in place": lambda x, y, m, i: F.silu(x.clone(), inplace=True),
    "sigmoid backward": lambda x, y, m, i: torch.ops.aten.sigmoid_backward(y, x.sigmoid()),
    "tanh backward": lambda x, y, m, i: torch.ops.aten.tanh_backward(y, x.tanh()),
    "hardsigmoid": lambda x, y, m, i: F.hardsigmoid(x),
    "hardsigmoid backward": lambda x, y, m, i: torch.ops.aten.hardsigmoid_backward(y, x),
    "hardswish backward": lambda x, y, m, i: torch.ops.aten.hardswish_backward(y, x),
    "minimum": lambda x, y, m, i: torch.minimum(x, y),
    "isneginf": lambda x, y, m, i: torch.isneginf(x.log()),
    "comparisons with a tensor": lambda x, y, m, i: (x == y, x != y, x > y, x < y, x >= y, x <= y),
    "comparison into a float out=": lambda x, y, m, i: torch.lt(x, y, out=torch.empty_like(x)),
    "comparisons with a scalar": lambda x, y, m, i: (x == 0.5, x != 0.5, x > 0, x < 0, x >= 0, x <= 0),
    "masks combined and checked": lambda x, y, m, i: (m & (y > 0), m.all(), m.all(1), (i > 0).all(0, keepdim=True)),
    "gather (a token's score)": lambda x, y, m, i: (torch.gather(x, 1, i.view(2, 3)), torch.gather(y, 0, i.view(6, 1))),
    "cumsum (position ids over a padding mask)": lambda x, y, m, i: (torch.cumsum(m.int(), 1), x.cumsum(0)),
    "embedding backward": lambda x, y, m, i: torch.ops.aten.embedding_dense_backward(y[:6, :5], i, 9, -1, False),
    "embedding backward, padding and frequency": lambda x, y, m, i: torch.ops.aten.embedding_dense_backward(
        y[:6, :5], i, 9, 2, True
    ),
    "arange (position ids)": lambda x, y, m, i: (torch.arange(x.shape[0], device=x.device),
                                                 torch.arange(2, 9, 0.5, dtype=torch.float16, device=x.device),
                                                 torch.arange(0, 16, out=torch.empty(16, device=x.device))),
    "roll": lambda x, y, m, i: (torch.roll(x, (3, -2), (0, 1)), torch.roll(x, 5, -1)),
    "contiguous copy of a transpose": lambda x, y, m, i: x.t().contiguous(),
    # A strided view's overlap with itself or the source is "too hard" to tell, for the CPU as here.
    "select backward (a class token's gradient)": lambda x, y, m, i: (
        torch.ops.aten.select_backward(y[0], [16, 16], 0, 3), torch.ops.aten.select_backward(y[:, 2], [16, 16], 1, 5)
    ),
    "slice backward (a rotary half's gradient)": lambda x, y, m, i: torch.ops.aten.slice_backward(
        y[:, :8], [16, 16], 1, 8, 16, 1
    ),
    "copy into every other column": lambda x, y, m, i: x.clone()[:, ::2].copy_(y.t()[:, :8]),
    "copy into a strided tensor, broadcast": lambda x, y, m, i: y.clone().t().copy_(x[0]),
    "casts (autocast's weights, masks to float)": lambda x, y, m, i: (x.half(), x.t().to(torch.bfloat16), m.float(),
                                                                      x.to(torch.int64), x.to(torch.complex64)),
    "cast into a strided tensor": lambda x, y, m, i: torch.empty_like(x, dtype=torch.float64).t().copy_(x),
    "hardswish in place": lambda x, y, m, i: F.hardswish(x.clone(), inplace=True),
    "masked fill in place": lambda x, y, m, i: (x.clone().masked_fill_(m, -1e4), x.clone().masked_fill_(m[0], 1.5)),
}


@pytest.mark.parametrize("case", list(MODEL_KERNELS))
def test_kernels_of_model_layers_are_launched(case: str) -> None:
    """Inline, each would wait for all the work before it: a step of a model that uses it would stop
    feeding the stream there (a squeeze-and-excitation block, an RMS norm, an attention mask)."""
    fn = MODEL_KERNELS[case]
    x, y = matrices(16)
    indices = torch.tensor([1, 2, 2, 8, 0, 2])
    operands = (x, y, x > 0, indices)
    on_device = tuple(t.to("foo") for t in operands)
    s = foo.Stream()
    s.wait_stream(foo.current_stream())
    with paused(s), foo.stream(s):
        got = fn(*on_device)
        assert not s.query()  # returned before running
    expected = fn(*operands)
    got_all = got if isinstance(got, tuple) else (got,)
    expected_all = expected if isinstance(expected, tuple) else (expected,)
    for value, want in zip(got_all, expected_all, strict=True):
        assert isinstance(value, torch.Tensor) and isinstance(want, torch.Tensor)
        assert (value.shape, value.dtype, value.stride()) == (want.shape, want.dtype, want.stride()), case
        torch.testing.assert_close(value.cpu(), want, msg=case)


def test_roll_masked_fill_and_hardswish_raise_what_the_cpu_refuses_at_the_call() -> None:
    x = torch.randn(4, 4, device="foo")
    with pytest.raises(RuntimeError, match="shifts and dimensions must align"):
        torch.roll(x, (1, 2), (0,))
    with pytest.raises(IndexError, match="Dimension out of range"):
        torch.roll(x, 1, 2)
    with pytest.raises(RuntimeError, match="cannot be converted to type .*Half without overflow"):
        x.half().masked_fill_(x > 0, -1e9)
    with pytest.raises(RuntimeError, match="argument .mask. is a 2-dim tensor on cpu"):
        x.masked_fill_(torch.ones(4, 4, dtype=torch.bool), 1.0)
    with pytest.raises(NotImplementedError, match="Long"):
        F.hardswish(torch.ones(3, dtype=torch.long, device="foo"), inplace=True)
    torch.testing.assert_close(torch.roll(x.t(), 1, 0).cpu(), torch.roll(x.cpu().t(), 1, 0))  # inline


def test_a_copy_within_the_device_raises_what_the_cpu_refuses_at_the_call() -> None:
    x = torch.arange(8.0, device="foo")
    with pytest.raises(RuntimeError, match="refer to a single memory location"):
        x[1:].copy_(x[:-1])
    with pytest.raises(RuntimeError, match="must match the size"):
        torch.empty(3, device="foo").copy_(torch.ones(4, device="foo"))
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        torch.empty(1, device="foo").expand(4).copy_(x[:4])
    z = torch.randn(3, dtype=torch.complex64)
    torch.testing.assert_close(z.to("foo").t().contiguous().cpu(), z)  # complex: inline


def test_a_target_out_of_range_fails_the_launched_loss_at_the_next_synchronisation() -> None:
    scores = torch.randn(2, 3, device="foo").log_softmax(1)
    with pytest.raises(IndexError, match="Target 7 is out of bounds.*reported at the next synchronisation"):
        torch.ops.aten.nll_loss_forward(scores, torch.tensor([0, 7], device="foo"), None, 1, -100)
        foo.synchronize()


CAT_CASES: dict[str, tuple[list[tuple[int, ...]], int]] = {
    "rows": ([(2, 3), (4, 3), (1, 3)], 0),
    "last dim, negative": ([(2, 3, 4), (2, 3, 2)], -1),
    "one tensor": ([(5,)], 0),
    "after a legacy empty tensor": ([(0,), (2, 2, 3)], -2),  # a key cache's first concatenation
}


@pytest.mark.parametrize("case", list(CAT_CASES))
def test_cat_is_launched(case: str) -> None:
    shapes, dim = CAT_CASES[case]
    g = torch.Generator().manual_seed(0)
    parts = [torch.randn(shape, generator=g) for shape in shapes]
    on_device = [t.to("foo") for t in parts]
    s = foo.Stream()
    s.wait_stream(foo.current_stream())
    with paused(s), foo.stream(s):
        got = torch.cat(on_device, dim)
        assert not s.query()  # returned before running
    torch.testing.assert_close(got.cpu(), torch.cat(parts, dim))


def test_cat_outside_what_launches_runs_inline_as_on_the_cpu() -> None:
    x = torch.randn(2, 3)
    # Dtype promotion, a legacy empty tensor, an out= of the wrong shape: the CPU kernel decides.
    torch.testing.assert_close(torch.cat([x.to("foo"), x.double().to("foo")]).cpu(), torch.cat([x, x.double()]))
    torch.testing.assert_close(torch.cat([x.to("foo"), torch.empty(0, device="foo")]).cpu(), x)
    out = torch.empty(1, device="foo")
    torch.cat([x.to("foo"), x.to("foo")], 1, out=out)
    torch.testing.assert_close(out.cpu(), torch.cat([x, x], 1))
    with pytest.raises(RuntimeError, match="Sizes of tensors must match"):
        torch.cat([x.to("foo"), torch.ones(2, 4, device="foo")])
    with pytest.raises(RuntimeError, match="cpu"):
        torch.cat([x.to("foo"), x])


def test_a_convolution_with_unexpanded_arguments_runs_inline_as_on_the_cpu() -> None:
    # A direct call of the backend's op: ATen's entry points expand the arguments first; the
    # runtime does not size a result from anything else, so the CPU kernel decides, at the call.
    x, w = torch.randn(1, 2, 6, 6), torch.randn(3, 2, 3, 3)
    y = torch.ops.aten.convolution_overrideable(x.to("foo"), w.to("foo"), None, [1], [0], [1], False, [0], 1)
    torch.testing.assert_close(y.cpu(), torch.ops.aten.convolution(x, w, None, [1], [0], [1], False, [0], 1))
    with pytest.raises(RuntimeError, match="scalar type"):
        torch.ops.aten.convolution(x.to("foo"), w.double().to("foo"), None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1)


def test_an_out_tensor_of_the_wrong_shape_is_resized_inline() -> None:
    a, b = matrices(8)
    x, y = a.to("foo"), b.to("foo")
    out = torch.empty(0, device="foo")
    s = foo.Stream()
    with foo.stream(s):
        torch.mm(x, y, out=out)  # resized: runs inline, after waiting for s
    assert out.shape == (8, 8)
    torch.testing.assert_close(out.cpu(), a @ b)


def test_event_orders_launched_kernels_on_two_streams() -> None:
    a, _ = matrices(16)
    x = a.to("foo")
    acc = torch.zeros(16, 16, device="foo")  # its fill is launched on the current stream
    producer, consumer = foo.Stream(), foo.Stream()
    producer.wait_stream(foo.current_stream())
    consumer.wait_stream(foo.current_stream())
    with paused(producer):
        with foo.stream(producer):
            acc.add_(x)  # launched on the paused producer
            written = foo.Event()
            written.record()
        consumer.wait_event(written)
        with foo.stream(consumer):
            doubled = acc * 2  # launched on the consumer, held back by the event
        assert not consumer.query()
    consumer.synchronize()
    torch.testing.assert_close(doubled.cpu(), a * 2)


def test_without_the_event_the_consumer_kernel_reads_stale_memory() -> None:
    # The control for the test above: the ordering comes from wait_event alone.
    a, _ = matrices(16)
    x = a.to("foo")
    acc = torch.zeros(16, 16, device="foo")  # its fill is launched on the current stream
    producer, consumer = foo.Stream(), foo.Stream()
    producer.wait_stream(foo.current_stream())
    consumer.wait_stream(foo.current_stream())
    with paused(producer):
        with foo.stream(producer):
            acc.add_(x)
        with foo.stream(consumer):
            doubled = acc * 2
        consumer.synchronize()
        assert doubled.cpu().eq(0).all()  # computed before the producer's add ran


# Unusual sizes, so that no block freed by earlier tests fits better.
ODD_COPY, ODD_KERNEL = 20011, 30011


def test_record_stream_keeps_a_block_an_enqueued_copy_reads_from_reuse() -> None:
    # A device-to-device copy reads its source through a raw device address, like a real device's
    # kernel: only record_stream keeps the freed source from being handed out again meanwhile.
    src = torch.arange(ODD_COPY, dtype=torch.float32)
    x = src.to("foo")
    y = torch.empty(ODD_COPY, device="foo")
    s = foo.Stream()
    with paused(s):
        with foo.stream(s):
            y.copy_(x)  # enqueued on the paused s: reads x later
        x.record_stream(s)
        address = x.data_ptr()
        del x
        z = torch.full((ODD_COPY,), -1.0, device="foo")  # the default stream runs its fill now
        assert z.data_ptr() != address
    torch.testing.assert_close(y.cpu(), src)


def test_a_launched_kernel_keeps_its_inputs_alive_until_it_has_run() -> None:
    src = torch.arange(ODD_KERNEL, dtype=torch.float32)
    x = src.to("foo")
    s = foo.Stream()
    with paused(s):
        with foo.stream(s):
            y = x * 2
        address = x.data_ptr()
        held = foo.memory_allocated()
        del x  # the launched kernel still holds x's storage
        z = torch.full((ODD_KERNEL,), -1.0, device="foo")
        assert z.data_ptr() != address
        assert foo.memory_allocated() > held  # x's block and z's
    torch.testing.assert_close(y.cpu(), src * 2)
    # Once the kernel has run and dropped it, x's block is freed (z holds one of the same size).
    assert foo.memory_allocated() == held


def test_item_waits_for_a_queued_kernel() -> None:
    a, b = matrices(16)
    x, y = a.to("foo"), b.to("foo")
    s = foo.Stream()

    def total() -> float:
        with foo.stream(s):
            return (x @ y).sum().item()

    with paused(s):
        thread, result = blocked_call(total)
        assert_still_waiting(thread)
    thread.join()
    assert result == [pytest.approx((a @ b).sum().item(), rel=1e-5)]


def test_the_cpu_fallback_waits_for_queued_kernels() -> None:
    # minimum has no foo kernel: it runs on the CPU through the fallback, which must wait.
    a, b = matrices(16)
    x, y = a.to("foo"), b.to("foo")
    s = foo.Stream()

    def smallest() -> torch.Tensor:
        with foo.stream(s):
            return torch.minimum(x * 2, y).cpu()

    with paused(s):
        thread, result = blocked_call(smallest)
        assert_still_waiting(thread)
    thread.join()
    torch.testing.assert_close(result[0], torch.minimum(a * 2, b))


def test_mixed_dtypes_wait_for_queued_work_before_meta_reads_them() -> None:
    # ATen's TensorIterator converts an int64 input of a float add in meta(), on the caller: that
    # read must come after the argmax queued before it (the amax backward found this race).
    a, _ = matrices(16)
    x = a.to("foo")
    s = foo.Stream()
    s.wait_stream(foo.current_stream())

    def mixed() -> torch.Tensor:
        with foo.stream(s):
            return (x.sum(dim=1) + x.argmax(dim=1)).cpu()

    with paused(s):
        thread, result = blocked_call(mixed)
        assert_still_waiting(thread)
    thread.join()
    torch.testing.assert_close(result[0], a.sum(dim=1) + a.argmax(dim=1))


def test_an_in_place_op_with_mixed_dtypes_waits_for_queued_work_before_meta_reads_them() -> None:
    # self of an in-place op is one of TensorIterator's inputs: complex self.mul_(float other)
    # converts other to complex in meta(), on the caller, which must come after the exp queued
    # before it (test_ops found the complex-by-channels-last-float case reading stale memory).
    a, _ = matrices(16)
    x = a.to("foo")
    z = torch.complex(a, -a).to("foo")
    s = foo.Stream()
    s.wait_stream(foo.current_stream())

    def scale() -> torch.Tensor:
        with foo.stream(s):
            return z.clone().mul_(x.exp()).cpu()

    with paused(s):
        thread, result = blocked_call(scale)
        assert_still_waiting(thread)
    thread.join()
    torch.testing.assert_close(result[0], torch.complex(a, -a) * a.exp())


WAIT_HOLDING_THE_GIL = """
import threading
import torch
import torch_foo
from torch._dispatch.python import enable_python_dispatcher

foo = torch.foo
s = foo.Stream()
x = torch.arange(1000.0, device="foo")
y = torch.ones(1000, device="foo")
s.wait_stream(foo.current_stream())
foo._pause_stream_for_testing(s, True)
with foo.stream(s):
    doubled = y * 2  # queued: its work holds y's storage
storage = y.untyped_storage()
del y, storage  # the storage's Python object is now owned by the queued work, freed on the worker
result = []

def total() -> None:
    # Through Python's dispatcher (as Inductor's constant folding calls it), .item() runs holding
    # the GIL; the worker needs it to free y's storage.
    with foo.stream(s), enable_python_dispatcher():
        result.append(x.sum().item())

thread = threading.Thread(target=total)
thread.start()
thread.join(0.5)  # returns only once the waiting thread has let go of the GIL
assert thread.is_alive(), "item() returned before the paused stream ran"
foo._pause_stream_for_testing(s, False)
thread.join()
print(result[0], doubled.sum().item())
"""


def test_a_host_thread_waiting_for_the_stream_releases_the_gil() -> None:
    # Kept by the waiting thread, the GIL deadlocked Inductor's compile of GPT-2: .item() waited
    # for the stream while the worker waited for the GIL to free a storage's Python object.
    try:
        process = subprocess.run([sys.executable, "-c", WAIT_HOLDING_THE_GIL], capture_output=True, text=True,
                                 timeout=60)
    except subprocess.TimeoutExpired:
        pytest.fail("deadlock: a thread waiting for the stream kept the GIL")
    assert process.returncode == 0, process.stderr[-3000:]
    assert process.stdout.split() == ["499500.0", "2000.0"]


@pytest.mark.parametrize(
    "compute",
    [lambda t: t / (1 + t.abs()), lambda t: t.abs() > 0.5, lambda t: (t.abs() > 0) == 1],
    ids=["int64 / int64", "int64 > 0.5", "bool == 1"],
)
def test_integer_inputs_that_meta_converts_wait_for_queued_work(
    compute: Callable[[torch.Tensor], torch.Tensor],
) -> None:
    # meta() converts integer inputs on the caller where the op computes in floating point (int64 /
    # int64 is a float division: the OpInfo sweep found softsign, cov and corrcoef on int64 reading
    # the denominator before it was computed) or beside a scalar of a higher category (int64 > 0.5,
    # bool == 1; comparisons otherwise keep integer inputs and launch without waiting). That read
    # must come after the work queued before it.
    ints = torch.arange(-8, 8)
    x = ints.to("foo")
    s = foo.Stream()
    s.wait_stream(foo.current_stream())

    def run() -> torch.Tensor:
        with foo.stream(s):
            return compute(x).cpu()

    with paused(s):
        thread, result = blocked_call(run)
        assert_still_waiting(thread)
    thread.join()
    torch.testing.assert_close(result[0], compute(ints))


def test_non_blocking_copy_to_pinned_memory_is_asynchronous() -> None:
    a, b = matrices(16)
    x, y = a.to("foo"), b.to("foo")
    host = torch.zeros(16, 16).pin_memory()
    s = foo.Stream()
    with paused(s):
        with foo.stream(s):
            host.copy_(x @ y, non_blocking=True)  # as CUDA: returns before the data is there
            ready = foo.Event()
            ready.record()
        assert not ready.query()
        assert host.eq(0).all()
    ready.synchronize()
    torch.testing.assert_close(host, a @ b)


def test_an_error_in_a_launched_kernel_surfaces_at_the_next_synchronisation() -> None:
    x = torch.arange(8, dtype=torch.float32, device="foo")
    bad_index = torch.tensor([0, 99], device="foo")
    s = foo.Stream()
    foo._pause_stream_for_testing(s, True)
    try:
        with foo.stream(s):
            torch.index_select(x, 0, bad_index)  # the index is checked when the kernel runs
        assert not s.query()
    finally:
        foo._pause_stream_for_testing(s, False)
    with pytest.raises(IndexError, match=r"(?s)index out of range in self.*raised by index_select"):
        s.synchronize()
    s.synchronize()  # reported once: the stream goes on working
    with foo.stream(s):
        assert (x + 1).sum().item() == 36


def test_foreach_lists_laid_out_alike_take_one_launch() -> None:
    """A depthwise convolution's weight (C, 1, k, k) and its channels-last gradient differ in
    strides only where the size is 1: the same layout. An optimizer's foreach ops take such lists
    at once, as CUDA's fast route does, not one op per tensor."""
    from torch.profiler import ProfilerActivity, profile

    weights = [torch.randn(8, 1, 3, 3), torch.randn(8)]
    grads = [torch.randn(8, 1, 3, 3), torch.randn(8)]
    on_device = [w.to("foo") for w in weights]
    channels_last = torch.empty_strided((8, 1, 3, 3), (9, 1, 3, 1), device="foo").copy_(grads[0])
    grads_on_device = [channels_last, grads[1].to("foo")]
    assert on_device[0].stride() == (9, 9, 3, 1)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        torch._foreach_lerp_(on_device, grads_on_device, 0.1)
        torch._foreach_addcmul_(on_device, grads_on_device, grads_on_device, 0.5)
    called = {event.name for event in prof.events()}
    assert {"aten::_foreach_lerp_", "aten::_foreach_addcmul_"} <= called
    assert not called & {"aten::lerp_", "aten::addcmul_"}, called
    torch._foreach_lerp_(weights, grads, 0.1)
    torch._foreach_addcmul_(weights, grads, grads, 0.5)
    for got, expected in zip(on_device, weights, strict=True):
        torch.testing.assert_close(got.cpu(), expected)


# A compiled kernel is an `extern "C"` entry point of a loaded shared object taking pointers and
# 64-bit integers: libc's memset(pointer, byte, count) is one (runtime/csrc/ops/compiled_kernel_launch.h).
load_compiled_kernel = torch.ops.scaffold_runtime.load_compiled_kernel.default
launch_compiled_kernel = torch.ops.scaffold_runtime.launch_compiled_kernel.default


def test_a_compiled_kernel_is_launched_on_the_stream_with_its_arguments_in_order() -> None:
    memset = load_compiled_kernel("libc.so.6", "memset", "memset")
    assert memset >= 0
    x = torch.zeros(4, 6, dtype=torch.uint8, device="foo")
    column = x[:, 2]  # a view: the kernel gets its data pointer, offset included
    foo.synchronize()  # x is filled on the default stream; s uses it
    s = foo.Stream()
    with paused(s), foo.stream(s):
        x.add_(1)  # queued before the kernel, which must run after it
        launch_compiled_kernel(memset, "tii", [x[1]], [7, 3])  # memset(&x[1][0], 7, 3)
        assert not s.query()
    expected = torch.ones(4, 6, dtype=torch.uint8)
    expected[1, :3] = 7
    assert torch.equal(x.cpu(), expected)
    with foo.stream(s):
        launch_compiled_kernel(memset, "tii", [column], [9, 1])
        assert column.cpu().tolist() == [9, 7, 1, 1]  # x[0][2], then x[1][2] from the first launch


def test_a_cpu_scalar_argument_is_read_by_its_value_at_the_launch() -> None:
    """Dynamo passes a Python float to a compiled kernel as a 0-dim CPU tensor: as in a CUDA kernel's
    arguments, the value at the launch counts, not the host memory when the kernel runs."""
    memcpy = load_compiled_kernel("libc.so.6", "memcpy", "memcpy")
    x = torch.zeros(2, dtype=torch.int32, device="foo")
    scalar = torch.tensor(7, dtype=torch.int32)
    foo.synchronize()
    s = foo.Stream()
    with paused(s), foo.stream(s):
        launch_compiled_kernel(memcpy, "tti", [x, scalar], [4])  # memcpy(&x[0], &scalar, 4)
        scalar.fill_(9)
    assert x.cpu().tolist() == [7, 0]


def test_a_compiled_kernel_launch_refuses_what_it_cannot_call() -> None:
    memset = load_compiled_kernel("libc.so.6", "memset", "memset")
    x = torch.zeros(8, dtype=torch.uint8, device="foo")
    with pytest.raises(RuntimeError, match=r"memset: argument 1 is on cpu, the kernel's other tensors on foo:0"):
        launch_compiled_kernel(memset, "tti", [x, torch.zeros(8, dtype=torch.uint8)], [8])
    with pytest.raises(RuntimeError, match=r"memset: argument kinds 'itt' \(t: tensor, i: integer\) do not fit 1 "):
        launch_compiled_kernel(memset, "itt", [x], [0, 8])
    with pytest.raises(RuntimeError, match=r"memset: argument kinds 'tix' .* do not fit 1 tensors and 2 integers"):
        launch_compiled_kernel(memset, "tix", [x], [0, 8])
    with pytest.raises(RuntimeError, match=r"12345 is not a loaded kernel's handle"):
        launch_compiled_kernel(12345, "t", [x], [])
    # Never loads a library: only entry points of shared objects already loaded are found.
    assert load_compiled_kernel("/nonexistent/kernel.so", "kernel", "k") == -1
    assert load_compiled_kernel("libc.so.6", "no_such_symbol_anywhere", "k") == -1
    assert x.cpu().eq(0).all()


def test_a_kernel_without_an_entry_point_runs_inline_on_host_views() -> None:
    """The wrapper's launch() calls a kernel it cannot launch (no shared object behind its binding) on
    the calling thread, with host views that wait for the stream's earlier work."""
    from torch_foo._compiled_kernels import launch

    seen: list[tuple[str, list[float], int]] = []

    def kernel(out: torch.Tensor, size: int, source: torch.Tensor) -> None:
        seen.append((out.device.type, source.tolist(), size))
        out.copy_(source * size)

    source = torch.arange(3, dtype=torch.float32, device="foo")
    out = torch.empty(3, device="foo")
    foo.synchronize()
    s, upstream = foo.Stream(), foo.Stream()
    with paused(upstream):
        with foo.stream(upstream):
            source.add_(1)
            ready = foo.Event()
            ready.record()

        def launch_on_s() -> None:
            s.wait_event(ready)
            with foo.stream(s):
                launch("k", kernel, "tit", [out, source], [2])

        thread, _ = blocked_call(launch_on_s)
        assert_still_waiting(thread)  # the host view waits for source's update
    thread.join()
    assert seen == [("cpu", [1.0, 2.0, 3.0], 2)]
    assert out.cpu().tolist() == [2.0, 4.0, 6.0]


LAUNCH_BLOCKING = """
import torch
foo = torch.foo
s = foo.Stream()
x = torch.arange(16, dtype=torch.float32).reshape(4, 4)
with foo.stream(s):
    y = x.to("foo") @ x.to("foo")
    done = s.query()
    try:
        torch.index_select(x.to("foo"), 0, torch.tensor([9], device="foo"))
        error = "none"
    except IndexError as e:
        # named, and not said to come from an earlier launch
        error = "at the call" if "index_select" in str(e) and "synchronisation" not in str(e) else str(e)
print(foo.launch_blocking(), done, error, y.cpu().equal(x @ x))
"""


def test_launch_blocking_runs_kernels_at_the_call() -> None:
    result = run_with_launch_blocking(LAUNCH_BLOCKING)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "True", "at", "the", "call", "True"]


KEPT_VIEW = """
import torch
x = torch.arange(4096, dtype=torch.float32, device="foo")
with_x = torch.foo.memory_allocated()
kept = torch.ops.scaffold_runtime._kept_kernel_view_for_testing(x)
del x
torch.foo.synchronize()
owned = torch.foo.memory_allocated() == with_x  # the kept view holds x's memory
y = torch.full((4096,), -1.0, device="foo")  # would take x's block, were it free
intact = kept.equal(torch.arange(4096, dtype=torch.float32))
del kept
torch.foo.synchronize()
print(owned, intact, torch.foo.memory_allocated() == with_x)  # x's block is free again
"""


@pytest.mark.parametrize("mode", ["asynchronous", "launch blocking"])
def test_a_host_view_a_kernel_keeps_owns_the_device_memory(mode: str) -> None:
    """A host view a CPU kernel keeps past its op keeps the device memory alive after the device
    tensor is freed: views for launched work own it from the start; with launch blocking, views of
    the tensors the caller holds only borrow it while the op runs and are made owning when kept."""
    if mode == "asynchronous":
        result = subprocess.run([sys.executable, "-c", KEPT_VIEW], capture_output=True, text=True, timeout=120)
    else:
        result = run_with_launch_blocking(KEPT_VIEW)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "True", "True"]


STICKY_VIEWS = """
import torch
ok = []
def check(device_tensor, cpu_tensor):
    ok.append(torch.equal(device_tensor.cpu(), cpu_tensor))
x, cx = torch.zeros(8, device="foo"), torch.zeros(8)
one, cone = torch.ones(8, device="foo"), torch.ones(8)
for _ in range(3):  # the same tensors op after op: their views are kept between the ops
    x.add_(one); cx.add_(cone)
check(x, cx)
# x changes under its kept view: size, strides, storage, dtype; each op must see the new x
x.resize_(4); cx.resize_(4); x.add_(one[:4]); cx.add_(cone[:4]); check(x, cx)
x.resize_(2, 2); cx.resize_(2, 2); x.t_(); cx.t_()
x.mul_(torch.arange(4.0, device="foo").reshape(2, 2)); cx.mul_(torch.arange(4.0).reshape(2, 2)); check(x, cx)
x.set_(torch.full((3,), 7.0, device="foo")); cx.set_(torch.full((3,), 7.0)); x.add_(1); cx.add_(1); check(x, cx)
x.data = torch.arange(3, dtype=torch.float64, device="foo"); cx.data = torch.arange(3, dtype=torch.float64)
x.add_(0.5); cx.add_(0.5); check(x, cx)
w = torch.arange(6.0, device="foo"); cw = torch.arange(6.0)
w[3:].add_(w[:3]); cw[3:].add_(cw[:3]); check(w, cw)  # two views of one storage
z = torch.ones(4, device="foo"); z.add_(z); check(z, torch.full((4,), 2.0))  # one tensor twice
check(torch.add(one, one), torch.full((8,), 2.0))
many = [torch.full((2,), float(i), device="foo") for i in range(6)]  # more tensors than views kept
for _ in range(2):
    for t in many:
        t.add_(1)
for i, t in enumerate(many):
    check(t, torch.full((2,), i + 2.0))
for i in range(20):  # freed tensors whose memory (and objects) the next ones get
    t = torch.full((16,), float(i), device="foo"); t.add_(1); check(t, torch.full((16,), i + 1.0)); del t
k = torch.arange(4096, dtype=torch.float32, device="foo")
for _ in range(2):
    k.add_(0)
with_k = torch.foo.memory_allocated()
kept = torch.ops.scaffold_runtime._kept_kernel_view_for_testing(k)  # a kernel keeps k's view
del k
torch.foo.synchronize()
ok.append(torch.foo.memory_allocated() == with_k)  # the kept view owns k's memory now
y = torch.full((4096,), -1.0, device="foo")
ok.append(kept.equal(torch.arange(4096, dtype=torch.float32)))
print(all(ok), ok)
"""


def test_views_kept_between_blocking_ops_follow_their_tensors() -> None:
    """With launch blocking, a thread keeps the host views of the tensors its last ops used and
    hands one back unchanged while its tensor is unchanged (runtime/csrc/host_view/host_view_cache.h, sticky views).
    A tensor resized, transposed, re-pointed, given another dtype, used twice in one op, or freed
    and replaced gets a view of what it is now; a view a kernel keeps owns the memory."""
    result = run_with_launch_blocking(STICKY_VIEWS)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("True "), result.stdout


PROFILED_STICKY_VIEWS = """
import torch
from torch.profiler import ProfilerActivity, profile
torch.manual_seed(0)
a, w = torch.randn(4, 3), torch.randn(5, 3)
device_a, device_w = a.to("foo").requires_grad_(), w.to("foo").requires_grad_()
a.requires_grad_()
w.requires_grad_()
with profile(activities=[ProfilerActivity.CPU], record_shapes=True):
    for _ in range(2):  # the second pass accumulates into the gradients in place
        torch.nn.functional.linear(device_a, device_w).sum().backward()
        torch.nn.functional.linear(a, w).sum().backward()
print(torch.allclose(device_a.grad.cpu(), a.grad), torch.allclose(device_w.grad.cpu(), w.grad))
"""


def test_views_the_profiler_recorded_are_not_kept_between_blocking_ops() -> None:
    """The profiler, recording shapes, keeps weak references to the inputs of the CPU ops a kernel
    calls: the host views. A view kept between blocking ops must have no other holder, weak ones
    included; one kept anyway was made owning of its device tensor's storage only when replaced,
    after that tensor was freed (a crash in the second backward pass)."""
    result = run_with_launch_blocking(PROFILED_STICKY_VIEWS)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["True", "True"]


def test_integer_arithmetic_that_keeps_its_dtype_launches_without_waiting() -> None:
    # meta() converts nothing for ops that keep integer dtypes (add, sub, mul, neg, maximum,
    # minimum), so they need not wait for the work queued before them. Batch norm's
    # num_batches_tracked.add_(1) waited for all of it, once a layer of every training step.
    ints = torch.arange(-8, 8)
    x, floats = ints.to("foo"), ints.double().to("foo")
    count = torch.tensor(0, device="foo")
    s = foo.Stream()
    s.wait_stream(foo.current_stream())

    def run() -> tuple[torch.Tensor, torch.Tensor]:
        with foo.stream(s):
            floats.mul_(2)  # queued first: a wait would now block on the paused stream
            count.add_(1)
            return torch.maximum(-x, x * 3 - x), torch.minimum(x, x.sub(1))

    with paused(s):
        thread, result = blocked_call(run)
        thread.join(timeout=10)
        assert not thread.is_alive(), "an integer op waited for the paused stream"
        assert not s.query()  # returned before running
    maxed, mined = cast(tuple[torch.Tensor, torch.Tensor], result[0])
    assert count.item() == 1
    torch.testing.assert_close(maxed.cpu(), torch.maximum(-ints, ints * 3 - ints))
    torch.testing.assert_close(mined.cpu(), torch.minimum(ints, ints - 1))
    torch.testing.assert_close(floats.cpu(), ints.double() * 2)
