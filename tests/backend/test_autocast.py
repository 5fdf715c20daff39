"""torch.autocast on the foo device: PyTorch's lower-precision and fp32 op lists apply, as on the
CPU, and torch.foo.amp agrees with torch.autocast."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from foo_testing import foo

DEVICE = "foo"
AMP_DTYPES = (torch.bfloat16, torch.float16)


def test_amp_supported_dtypes_are_the_lower_precision_floats() -> None:
    assert set(foo.get_amp_supported_dtype()) == set(AMP_DTYPES)
    assert foo.amp.get_amp_supported_dtype() == foo.get_amp_supported_dtype()
    assert torch.amp.is_autocast_available(DEVICE)


@pytest.mark.parametrize("dtype", AMP_DTYPES, ids=str)
def test_lower_precision_ops_run_in_the_autocast_dtype(dtype: torch.dtype) -> None:
    torch.manual_seed(0)
    model = nn.Linear(8, 4)
    x = torch.randn(3, 8)
    with torch.autocast("cpu", dtype=dtype):
        expected = model(x)
    model_on_device = model.to(DEVICE)
    with torch.autocast(DEVICE, dtype=dtype):
        assert torch.is_autocast_enabled(DEVICE)
        assert torch.get_autocast_dtype(DEVICE) == dtype
        got = model_on_device(x.to(DEVICE))
        mm = torch.mm(x.to(DEVICE), x.to(DEVICE).t())
    assert got.dtype == dtype and mm.dtype == dtype
    torch.testing.assert_close(got.cpu(), expected)


@pytest.mark.parametrize("dtype", AMP_DTYPES, ids=str)
def test_fp32_ops_run_in_float32(dtype: torch.dtype) -> None:
    x = torch.rand(4, 5, device=DEVICE).to(dtype)
    with torch.autocast(DEVICE, dtype=dtype):
        assert torch.exp(x).dtype == torch.float32
        assert torch.softmax(x, dim=1).dtype == torch.float32
        assert nn.functional.mse_loss(x, x).dtype == torch.float32
        # Ops on no list keep their input dtype.
        assert torch.relu(x).dtype == dtype
    torch.testing.assert_close(torch.exp(x).cpu(), torch.exp(x.cpu()))


def test_promote_ops_take_the_widest_input_dtype() -> None:
    a = torch.rand(4, device=DEVICE, dtype=torch.bfloat16)
    b = torch.rand(4, device=DEVICE)
    with torch.autocast(DEVICE, dtype=torch.bfloat16):
        assert torch.addcmul(a, a, b).dtype == torch.float32


def test_device_amp_module_is_torch_autocast() -> None:
    x = torch.randn(2, 3, device=DEVICE)
    w = torch.randn(4, 3, device=DEVICE)
    with foo.amp.autocast(dtype=torch.float16):
        assert nn.functional.linear(x, w).dtype == torch.float16
    with foo.amp.autocast(enabled=False):
        assert nn.functional.linear(x, w).dtype == torch.float32
    assert nn.functional.linear(x, w).dtype == torch.float32


def test_autocast_backward_gives_float32_gradients() -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 5), nn.ReLU(), nn.Linear(5, 2)).to(DEVICE)
    x = torch.randn(3, 6, device=DEVICE)
    with torch.autocast(DEVICE, dtype=torch.bfloat16):
        loss = model(x).float().pow(2).mean()
    loss.backward()
    for param in model.parameters():
        assert param.grad is not None and param.grad.dtype == torch.float32


def test_unsupported_autocast_dtype_is_refused_with_a_warning() -> None:
    with pytest.warns(UserWarning, match="not supported"), torch.autocast(DEVICE, dtype=torch.float64):
        assert not torch.is_autocast_enabled(DEVICE)


# ---------------------------------------------------------------------------------------------
# The YAML's additions (yaml/foo.yaml `autocast:`, generated/RegisterAutocastPrivateUse1.cpp):
# outer joins lower_precision_fp, sqrt fp32, lerp promote. PyTorch casts none of them.
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", AMP_DTYPES, ids=str)
def test_an_op_the_yaml_adds_runs_in_the_autocast_dtype(dtype: torch.dtype) -> None:
    a, b = torch.randn(5), torch.randn(3)
    with torch.autocast(DEVICE, dtype=dtype):
        got = torch.outer(a.to(DEVICE), b.to(DEVICE))
        # An op on no list, PyTorch's or the YAML's, keeps float32.
        not_listed = torch.sin(a.to(DEVICE))
    assert got.dtype == dtype
    assert not_listed.dtype == torch.float32
    torch.testing.assert_close(got.cpu(), torch.outer(a.to(dtype), b.to(dtype)))
    # Outside autocast, outer is float32 again: the cast belongs to the autocast key alone.
    assert torch.outer(a.to(DEVICE), b.to(DEVICE)).dtype == torch.float32


def test_the_yaml_adds_outer_to_foo_only() -> None:
    # The CPU's autocast lists do not have outer: the addition is this backend's own.
    a = torch.randn(4)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert torch.outer(a, a).dtype == torch.float32


@pytest.mark.parametrize("dtype", AMP_DTYPES, ids=str)
def test_an_fp32_op_the_yaml_adds_runs_in_float32(dtype: torch.dtype) -> None:
    x = torch.rand(6, device=DEVICE).to(dtype)
    with torch.autocast(DEVICE, dtype=dtype):
        got = torch.sqrt(x)
        not_listed = torch.tanh(x)
    assert got.dtype == torch.float32
    assert not_listed.dtype == dtype
    torch.testing.assert_close(got.cpu(), torch.sqrt(x.cpu().float()))


def test_a_promote_op_the_yaml_adds_takes_the_widest_dtype() -> None:
    start = torch.rand(4, device=DEVICE, dtype=torch.bfloat16)
    end = torch.rand(4, device=DEVICE)
    weight = torch.rand(4, device=DEVICE)
    with pytest.raises(RuntimeError, match="dtype"):
        torch.lerp(start, end, 0.5)  # lerp itself refuses mixed floating types
    with torch.autocast(DEVICE, dtype=torch.bfloat16):
        scalar = torch.lerp(start, end, 0.5)
        tensor = torch.lerp(start, end, weight)
    assert scalar.dtype == torch.float32 and tensor.dtype == torch.float32
    torch.testing.assert_close(scalar.cpu(), torch.lerp(start.cpu().float(), end.cpu(), 0.5))
    torch.testing.assert_close(tensor.cpu(), torch.lerp(start.cpu().float(), end.cpu(), weight.cpu()))


def test_pinned_autocast_lists_cover_what_the_device_registers() -> None:
    # The generator refuses YAML entries already on PyTorch's lists by a list pinned in
    # codegen/autocast.py; every op the runtime registers for AutocastPrivateUse1, but the YAML's
    # own, must be on it, whatever the installed torch.
    from scaffold_backend.select.autocast import PYTORCH_AUTOCAST_OPS

    registered = {
        name.removeprefix("aten::")
        for name in torch._C._dispatch_get_all_op_names()
        if name.startswith("aten::") and torch._C._dispatch_has_kernel_for_dispatch_key(name, "AutocastPrivateUse1")
    }
    assert {"outer", "sqrt", "lerp.Tensor", "lerp.Scalar"} <= registered
    assert registered - {"outer", "sqrt", "lerp.Tensor", "lerp.Scalar"} <= PYTORCH_AUTOCAST_OPS
