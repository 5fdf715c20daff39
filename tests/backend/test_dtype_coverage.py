"""CUDA's dtype coverage through the CPU fallback (runtime/csrc/fallback/dtype_fallback.h).

Library code picks dtypes CUDA's kernels accept for every device that is not the CPU. Where the
CPU kernel behind foo's fallback refuses such a dtype, the fallback computes the op in a wider
dtype the CPU supports and casts the results back (exactly, or within the half types' tolerance),
or raises an error naming the device, the op and the dtype, never the CPU kernel. Each device
result here is compared with the CPU's result computed in the wider dtype.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from torch.torch_version import TorchVersion

from foo_testing import DEVICE, assert_same

INTEGERS = (torch.int8, torch.uint8, torch.int16, torch.int32, torch.int64)


def _assert_device_error(error: BaseException, op: str, dtype: str) -> None:
    message = str(error)
    assert f"'{DEVICE}' device" in message and op in message and dtype in message, message
    assert "_cpu" not in message and "CPU" not in message and "not implemented for" not in message


def _histc_as_cuda_bins(x: torch.Tensor, bins: int, lo: float, hi: float) -> torch.Tensor:
    """CUDA's histc of an integer tensor, written out: bounds truncated to integers (the data's
    range when they are equal), bin = (x - min) * bins // (max - min), max in the last bin."""
    values = [int(v) for v in x.flatten().tolist()]
    low, high = math.trunc(lo), math.trunc(hi)
    if low == high and values:
        low, high = min(values), max(values)
    if low == high:
        low, high = low - 1, high + 1
    counts = [0] * bins
    for v in values:
        if low <= v <= high:
            counts[min((v - low) * bins // (high - low), bins - 1)] += 1
    return torch.tensor(counts, dtype=x.dtype)


@pytest.mark.parametrize("dtype", INTEGERS, ids=str)
@pytest.mark.parametrize(("bins", "lo", "hi"), [(4, 0, 0), (5, -3, 7), (3, 0.5, 6.9), (7, -2, 2)])
def test_histc_of_integers_bins_as_cuda_does(dtype: torch.dtype, bins: int, lo: float, hi: float) -> None:
    low = 0 if dtype == torch.uint8 else -5
    if dtype == torch.uint8 and lo < 0:  # a negative bound for uint8 is the CPU's overflow error first
        lo, hi = lo + 3, hi + 3
    x = torch.randint(low, 9, (64,), generator=torch.Generator().manual_seed(bins), dtype=dtype)
    result = torch.histc(x.to(DEVICE), bins=bins, min=lo, max=hi)
    assert result.device.type == DEVICE and result.dtype == dtype
    expected = _histc_as_cuda_bins(x, bins, lo, hi)
    assert_same(result, expected)
    # The CPU's float64 histc with the truncated bounds bins integers alike.
    low_bound, high_bound = math.trunc(lo), math.trunc(hi)
    if low_bound != high_bound:
        assert_same(result, torch.histc(x.double(), bins, low_bound, high_bound).to(dtype))
    out = torch.empty(0, dtype=dtype, device=DEVICE)
    torch.histc(x.to(DEVICE), bins=bins, min=lo, max=hi, out=out)
    assert_same(out, expected)


def test_histc_of_integers_refuses_an_empty_range_as_cuda_does() -> None:
    with pytest.raises(RuntimeError, match="max must be larger than min"):
        torch.histc(torch.arange(4, device=DEVICE), bins=2, min=3, max=1)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_avg_pool3d_in_half_types_computes_in_float32(dtype: torch.dtype) -> None:
    x = torch.randn(2, 3, 6, 6, 6, generator=torch.Generator().manual_seed(0)).to(dtype)
    x_device = x.to(DEVICE).requires_grad_()
    result = F.avg_pool3d(x_device, 2, stride=2, padding=1)
    assert result.dtype == dtype
    x_cpu = x.requires_grad_()
    expected = F.avg_pool3d(x_cpu.float(), 2, stride=2, padding=1).to(dtype)
    assert_same(result, expected)
    grad = torch.randn(expected.shape, generator=torch.Generator().manual_seed(1)).to(dtype)
    result.backward(grad.to(DEVICE))
    expected.backward(grad)
    assert x_device.grad is not None and x_device.grad.dtype == dtype
    assert_same(x_device.grad, x_cpu.grad)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_margin_losses_in_half_types_compute_in_float32(dtype: torch.dtype) -> None:
    generator = torch.Generator().manual_seed(2)
    x = torch.randn(4, 5, generator=generator).to(dtype)
    target = torch.randint(0, 5, (4,), generator=generator)
    result = F.multi_margin_loss(x.to(DEVICE), target.to(DEVICE))
    assert result.dtype == dtype
    assert_same(result, F.multi_margin_loss(x.float(), target).to(dtype))


def test_abs_of_bool_is_the_identity() -> None:
    x = torch.tensor([True, False, True, True])
    assert_same(torch.abs(x.to(DEVICE)), x)
    assert_same(F.softsign(x.to(DEVICE)), F.softsign(x.long()))


def test_trace_of_bool_counts_in_int64() -> None:
    x = torch.rand(5, 4, generator=torch.Generator().manual_seed(3)) > 0.4
    result = torch.trace(x.to(DEVICE))
    assert result.dtype == torch.int64
    assert_same(result, torch.trace(x.long()))


@pytest.mark.parametrize("dtype", [torch.complex64, torch.complex128], ids=str)
def test_nansum_of_complex_skips_elements_with_a_nan_part(dtype: torch.dtype) -> None:
    x = torch.randn(3, 4, dtype=dtype, generator=torch.Generator().manual_seed(4))
    x[0, 1] = torch.tensor(complex(math.nan, 1.0))
    x[2, 3] = torch.tensor(complex(2.0, math.nan))
    nan = torch.isnan(x)  # a NaN in either part
    expected = torch.where(nan, torch.zeros((), dtype=dtype), x)
    assert_same(torch.nansum(x.to(DEVICE)), expected.sum())
    assert_same(torch.nansum(x.to(DEVICE), dim=1, keepdim=True), expected.sum(1, keepdim=True))
    # nanmean is PyTorch's composite over nansum.
    assert_same(torch.nanmean(x.to(DEVICE), dim=0), expected.sum(0) / (~nan).sum(0))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_batch_norm_in_half_types_without_cudnn(dtype: torch.dtype) -> None:
    generator = torch.Generator().manual_seed(5)
    x = torch.randn(4, 3, 5, 5, generator=generator).to(dtype)
    weight, bias = torch.rand(3, generator=generator).to(dtype), torch.randn(3, generator=generator).to(dtype)
    mean, var = torch.zeros(3, dtype=dtype), torch.ones(3, dtype=dtype)
    result = F.batch_norm(x.to(DEVICE), mean.to(DEVICE), var.to(DEVICE), weight.to(DEVICE), bias.to(DEVICE),
                          training=True)
    expected = F.batch_norm(x.float(), mean.float(), var.float(), weight.float(), bias.float(), training=True)
    assert result.dtype == dtype
    assert_same(result, expected.to(dtype), atol=1e-2, rtol=1e-2)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_grid_sample_in_half_types_computes_as_cuda_not_as_the_cpus_half_kernels(dtype: torch.dtype) -> None:
    # The CPU's half-precision grid samplers compute coordinates in the half type: the 2-d one
    # gives NaNs on an image of a few hundred pixels (its backward corrupts the heap, not run
    # here), the 3-d one is off by whole pixels. CUDA computes them in float32, and so does the
    # device.
    generator = torch.Generator().manual_seed(11)
    image = torch.randn(2, 3, 345, 456, generator=generator).to(dtype)
    grid = (torch.rand(2, 345, 456, 2, generator=generator) * 2.2 - 1.1).to(dtype)
    result = F.grid_sample(image.to(DEVICE), grid.to(DEVICE), align_corners=False)
    assert result.dtype == dtype and not result.isnan().any()
    expected = F.grid_sample(image.float(), grid.float(), align_corners=False)
    assert_same(result, expected.to(dtype), atol=1e-2, rtol=1e-2)

    volume = torch.randn(1, 2, 6, 7, 8, generator=generator).to(dtype)
    grid_3d = (torch.rand(1, 6, 7, 8, 3, generator=generator) * 2.2 - 1.1).to(dtype)
    volume_on_device = volume.to(DEVICE).requires_grad_()
    grid_on_device = grid_3d.to(DEVICE).requires_grad_()
    volume_wide, grid_wide = volume.float().requires_grad_(), grid_3d.float().requires_grad_()
    F.grid_sample(volume_on_device, grid_on_device, align_corners=False).sum().backward()
    F.grid_sample(volume_wide, grid_wide, align_corners=False).sum().backward()
    assert grid_on_device.grad is not None and grid_wide.grad is not None
    scale = grid_wide.grad.abs().max().item()
    assert_same(grid_on_device.grad, grid_wide.grad.to(dtype), atol=2e-2 * scale, rtol=2e-2)


def test_a_dtype_cuda_lacks_too_is_refused_in_the_device_name() -> None:
    # No wider dtype for complex: refused at once.
    with pytest.raises(NotImplementedError) as caught:
        F.avg_pool3d(torch.ones(1, 2, 4, 4, 4, dtype=torch.complex64, device=DEVICE), 2)
    _assert_device_error(caught.value, "aten::avg_pool3d", "torch.complex64")
    # CUDA has no integer avg_pool3d: the CPU's int64 kernel would answer, the device refuses as CUDA does.
    with pytest.raises(NotImplementedError) as caught:
        F.avg_pool3d(torch.ones(1, 2, 4, 4, 4, dtype=torch.int32, device=DEVICE), 2)
    _assert_device_error(caught.value, "aten::avg_pool3d", "torch.int32")
    # histc on bool: the CPU refuses int64 too, and CUDA's integer binning is for integers.
    with pytest.raises(NotImplementedError) as caught:
        torch.histc(torch.ones(8, dtype=torch.bool, device=DEVICE))
    _assert_device_error(caught.value, "aten::histc", "torch.bool")


TRANSFORMS = (torch.fft.fft, torch.fft.ifft, torch.fft.rfft, torch.fft.irfft, torch.fft.hfft, torch.fft.ihfft,
              torch.fft.fft2, torch.fft.rfftn, torch.fft.ifftn)


def _meta_dtype(fn: Callable[[torch.Tensor], torch.Tensor], dtype: torch.dtype) -> torch.dtype | None:
    """The dtype CUDA's composite gives `fn` of `dtype` (meta tensors take CUDA's branch), or None
    where it refuses the dtype (bfloat16 before torch 2.15)."""
    try:
        return fn(torch.ones(4, 8, dtype=dtype, device="meta")).dtype
    except (RuntimeError, NotImplementedError):
        return None


def _weighted_sum(t: torch.Tensor, weights: torch.Tensor) -> torch.Tensor:
    """A real loss of every part of `t` (real and imaginary, each with its weights)."""
    if t.is_complex():
        return (t.real * weights[0] + t.imag * weights[1]).sum()
    return (t * weights[0]).sum()


@pytest.mark.parametrize("fn", TRANSFORMS, ids=lambda fn: fn.__name__)
def test_fft_in_float16_as_cuda_computes_it(fn: Callable[[torch.Tensor], torch.Tensor]) -> None:
    # torch.fft's composites refuse float16 on devices other than CUDA before a backend is reached;
    # the runtime registers them for the device with CUDA's rule: computed in float32, the results
    # rounded to float16 or complex32, differentiable.
    x = torch.randn(4, 8, generator=torch.Generator().manual_seed(6)).half()
    on_device = x.to(DEVICE).requires_grad_()
    result = fn(on_device)
    assert result.dtype == _meta_dtype(fn, torch.float16)
    x_wide = x.float().requires_grad_()
    expected = fn(x_wide)
    assert_same(result, expected.to(result.dtype), atol=1e-2, rtol=1e-2)
    weights = torch.randn(2, *expected.shape, generator=torch.Generator().manual_seed(7))
    _weighted_sum(result.to(expected.dtype), weights.to(DEVICE)).backward()
    _weighted_sum(expected, weights).backward()
    assert on_device.grad is not None and x_wide.grad is not None
    assert on_device.grad.dtype == torch.float16
    assert_same(on_device.grad, x_wide.grad.half(), atol=2e-2, rtol=1e-2)


def test_fft_in_float16_round_trips_out_and_inference_mode() -> None:
    x = torch.randn(16, generator=torch.Generator().manual_seed(8)).half()
    on_device = x.to(DEVICE)
    # complex32 results go on through the fallback's own rule (computed in complex64).
    spectrum = torch.fft.fft(on_device)
    assert spectrum.dtype == torch.complex32
    assert_same(torch.fft.ifft(spectrum).real, x, atol=1e-2, rtol=1e-2)
    out = torch.empty(0, dtype=torch.complex32, device=DEVICE)
    assert torch.fft.rfft(on_device, out=out) is out
    assert_same(out, torch.fft.rfft(x.float()).to(torch.complex32), atol=1e-2, rtol=1e-2)
    with torch.inference_mode():
        assert_same(torch.fft.irfft(torch.fft.rfft(on_device)), x, atol=1e-2, rtol=1e-2)


@pytest.mark.parametrize("fn", [torch.fft.fft, torch.fft.irfft, torch.fft.rfft2], ids=lambda fn: fn.__name__)
def test_fft_in_bfloat16_as_cuda_computes_it(fn: Callable[[torch.Tensor], torch.Tensor]) -> None:
    # From torch 2.15 CUDA promotes bfloat16 to float32 (there is no complex bfloat16), and so
    # does the device; before it CUDA refuses bfloat16, and so does the device.
    x = torch.randn(4, 8, generator=torch.Generator().manual_seed(9)).bfloat16()
    cuda_dtype = _meta_dtype(fn, torch.bfloat16)
    if cuda_dtype is None:
        with pytest.raises((RuntimeError, NotImplementedError), match="Unsupported dtype"):
            fn(x.to(DEVICE))
        return
    result = fn(x.to(DEVICE))
    assert result.dtype == cuda_dtype
    assert_same(result, fn(x.float()))


@pytest.mark.skipif(TorchVersion(torch.__version__) < "2.15", reason=(
    f"torch {torch.__version__}: CUDA's stft takes bfloat16 (promoted to float32) from torch 2.15 on"))
def test_stft_in_bfloat16_promotes_as_on_cuda() -> None:
    x = torch.randn(2, 64, generator=torch.Generator().manual_seed(10)).bfloat16()
    result = torch.stft(x.to(DEVICE), 16, return_complex=True)
    assert result.dtype == torch.complex64
    assert_same(result.to(torch.complex64), torch.stft(x.float(), 16, return_complex=True), atol=1e-2, rtol=1e-2)


def test_the_conformance_harness_tests_cuda_dtypes_against_a_wider_cpu_reference(tmp_path: Path) -> None:
    import subprocess

    report_path = tmp_path / "report.json"
    result = subprocess.run(
        [sys.executable, "-m", "torch_foo.conformance", "--ops", "histc", "trace", "nn.functional.avg_pool3d",
         "nn.functional.grid_sample",
         "--dtypes", "int32", "uint8", "bool", "float16", "float32", "--jobs", "1",
         "--json", str(report_path)],
        capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
    report = json.loads(report_path.read_text())
    ops = report["ops"]
    # Dtypes OpInfo lists for CUDA only are run, reported per dtype, and pass against the CPU's
    # result in a wider dtype.
    for op, dtype in (("histc", "int32"), ("trace", "bool"), ("nn.functional.avg_pool3d", "float16")):
        counts = ops[op][dtype]
        assert counts["cpu_dtype"] is False, (op, dtype, counts)
        assert counts["passed"] > 0 and counts["failed"] == 0, (op, dtype, counts)
    # uint8: CUDA converts a negative bound to uint8 (wrapping) and then refuses min > max, as the
    # device does; the float64 reference cannot: samples with such bounds (torch 2.11's OpInfo has
    # them) fail with CUDA's error, and only with it.
    uint8 = ops["histc"]["uint8"]
    assert uint8["cpu_dtype"] is False and uint8["passed"] > 0, uint8
    causes = {failure["cause"] for failure in report["failures"] if failure.get("op") == "histc"}
    assert causes <= {"RuntimeError: max must be larger than min"}, causes
    assert ops["histc"]["float32"]["cpu_dtype"] is True
    # The CPU lists float16 for grid_sample, but its kernel is wrong there (NaNs): the expectations
    # file's [[wider_reference]] computes the reference in float32, which the device matches.
    grid_sample = ops["nn.functional.grid_sample"]["float16"]
    assert grid_sample["cpu_dtype"] is False and grid_sample["passed"] > 0 and grid_sample["failed"] == 0, grid_sample
    # avg_pool3d lists neither bool nor integers for CUDA: not run.
    assert "bool" not in ops["nn.functional.avg_pool3d"] and "int32" not in ops["nn.functional.avg_pool3d"]
    summary = report["summary"]
    assert summary["tests_beyond_cpu_dtypes"] >= 4
    assert "dtypes CUDA lists and the CPU does not" in result.stdout
