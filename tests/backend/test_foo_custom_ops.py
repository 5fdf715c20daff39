"""foo's custom op foo::mymuladd (yaml/foo.yaml `custom_ops`): defined by the generated
TORCH_LIBRARY, kernels in runtime/kernels/custom_ops/mymuladd.cpp (CPU and device), fake kernel and
autograd formula in runtime/kernels/custom_ops/mymuladd.py. Checked against the CPU, with
torch.library.opcheck, under torch.compile and through torch.export save/load."""

from __future__ import annotations

import io
from collections.abc import Iterator

import pytest
import torch
from torch import nn

from foo_testing import foo, grad

DEVICE = "foo"
DEVICES = ("cpu", DEVICE)


@pytest.fixture(autouse=True)
def _fresh_dynamo() -> Iterator[None]:
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


@pytest.mark.parametrize("device", DEVICES)
def test_mymuladd_gives_the_seed_result(device: str) -> None:
    a = torch.tensor([1.0, 2.0, 3.0], device=device)
    b = torch.tensor([4.0, 5.0, 6.0], device=device)
    result = torch.ops.foo.mymuladd(a, b, 2)
    assert result.device.type == device
    assert result.cpu().tolist() == [6.0, 12.0, 20.0]


def test_device_kernel_equals_cpu_kernel_on_non_contiguous_inputs() -> None:
    a = torch.randn(6, 5)
    b = torch.randn(5, 6).t()
    expected = torch.ops.foo.mymuladd(a, b, -0.5)
    torch.testing.assert_close(expected, a * b - 0.5)
    got = torch.ops.foo.mymuladd(a.to(DEVICE), b.to(DEVICE), -0.5)
    torch.testing.assert_close(got.cpu(), expected)


@pytest.mark.parametrize("device", DEVICES)
def test_kernels_reject_bad_operands_by_name(device: str) -> None:
    with pytest.raises(RuntimeError, match="foo::mymuladd: a and b must have the same shape"):
        torch.ops.foo.mymuladd(torch.ones(3, device=device), torch.ones(4, device=device), 1.0)
    with pytest.raises(RuntimeError, match="must be float32"):
        torch.ops.foo.mymuladd(
            torch.ones(3, device=device, dtype=torch.int64), torch.ones(3, device=device), 1.0
        )


def test_device_kernel_rejects_a_host_tensor() -> None:
    with pytest.raises(RuntimeError, match="foo::mymuladd"):
        torch.ops.foo.mymuladd(torch.ones(3, device=DEVICE), torch.ones(3), 1.0)


@pytest.mark.parametrize("device", DEVICES)
def test_opcheck_passes(device: str) -> None:
    samples = [
        (torch.randn(3, device=device, requires_grad=True), torch.randn(3, device=device), 2.0),
        (torch.randn(2, 3, device=device), torch.randn(2, 3, device=device, requires_grad=True), -1.0),
        (torch.randn(0, device=device), torch.randn(0, device=device), 0.5),
    ]
    # PyTorch's autograd-registration check knows only CPU/CUDA/XPU ("NYI devices other than
    # CPU/CUDA/XPU"); on foo the test below checks the same thing directly.
    utils = (
        ("test_schema", "test_autograd_registration", "test_faketensor", "test_aot_dispatch_dynamic")
        if device == "cpu"
        else ("test_schema", "test_faketensor", "test_aot_dispatch_dynamic")
    )
    for args in samples:
        torch.library.opcheck(torch.ops.foo.mymuladd.default, args, test_utils=utils)


def test_autograd_kernel_covers_the_device() -> None:
    # What opcheck's autograd-registration check does for CPU, on foo: with PyTorch's autograd
    # fallback silenced, only a real autograd kernel makes the output require grad.
    from torch.testing._internal.optests.autograd_registration import set_autograd_fallback_mode

    assert torch._C._dispatch_has_kernel_for_dispatch_key("foo::mymuladd", "Autograd")
    assert torch._C._dispatch_has_kernel_for_dispatch_key("foo::mymuladd", "PrivateUse1")
    a = torch.randn(3, device=DEVICE, requires_grad=True)
    with set_autograd_fallback_mode("nothing"):
        result = torch.ops.foo.mymuladd(a, torch.randn(3, device=DEVICE), 1.0)
    assert result.requires_grad and result.grad_fn is not None


def test_gradients_match_cpu() -> None:
    torch.manual_seed(0)
    a = torch.randn(4, 3, requires_grad=True)
    b = torch.randn(4, 3, requires_grad=True)
    weights = torch.randn(4, 3)
    (torch.ops.foo.mymuladd(a, b, 3.0) * weights).sum().backward()
    a_device = a.detach().to(DEVICE).requires_grad_()
    b_device = b.detach().to(DEVICE).requires_grad_()
    (torch.ops.foo.mymuladd(a_device, b_device, 3.0) * weights.to(DEVICE)).sum().backward()
    assert a.grad is not None and b.grad is not None
    assert a_device.grad is not None and b_device.grad is not None
    torch.testing.assert_close(a_device.grad.cpu(), a.grad)
    torch.testing.assert_close(b_device.grad.cpu(), b.grad)
    torch.testing.assert_close(a.grad, b.detach() * weights)


def test_gradcheck_on_cpu() -> None:
    # The formula itself, in float64 through the op's float32 kernels: a loose check.
    a = torch.randn(5, requires_grad=True)
    b = torch.randn(5, requires_grad=True)
    assert torch.autograd.gradcheck(
        lambda x, y: torch.ops.foo.mymuladd(x, y, 1.0), (a, b), eps=1e-2, atol=1e-2, rtol=1e-2
    )


class MulAdd(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.tensor([0.5, -1.0, 2.0]))

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        out: torch.Tensor = torch.ops.foo.mymuladd(x * self.weight, y, 2.0).relu()
        return out


def _inputs(device: str) -> tuple[torch.Tensor, torch.Tensor]:
    return (
        torch.tensor([1.0, 2.0, 3.0], device=device),
        torch.tensor([4.0, 5.0, 6.0], device=device),
    )


@pytest.mark.parametrize("device", DEVICES)
def test_under_compile_aot_eager_fullgraph(device: str) -> None:
    model = MulAdd().to(device)
    compiled = torch.compile(model, backend="aot_eager", fullgraph=True)
    x, y = _inputs(device)
    expected = model(x, y)
    got = compiled(x, y)
    torch.testing.assert_close(got.cpu(), expected.cpu())
    # And backward through the compiled graph.
    got.sum().backward()
    assert model.weight.grad is not None
    torch.testing.assert_close(model.weight.grad.cpu(), (x * y * (expected > 0)).cpu())


@pytest.mark.slow
def test_under_inductor_on_the_device() -> None:
    # Inductor has no lowering for foo::mymuladd: it calls the op as an extern kernel, between
    # its own generated C++ kernels (the multiply by the weight and the relu).
    model = MulAdd().to(DEVICE)
    compiled = torch.compile(model, fullgraph=True)
    x, y = _inputs(DEVICE)
    with torch.no_grad():
        expected = model(x, y)
        got = compiled(x, y)
    assert got.device.type == DEVICE
    torch.testing.assert_close(got.cpu(), expected.cpu())


def _round_trip(program: torch.export.ExportedProgram) -> torch.export.ExportedProgram:
    buffer = io.BytesIO()
    torch.export.save(program, buffer)
    buffer.seek(0)
    return torch.export.load(buffer)


def test_export_with_the_custom_op_round_trips_and_runs_on_the_device() -> None:
    model = MulAdd().to(DEVICE)
    x, y = _inputs(DEVICE)
    program = torch.export.export(model, (x, y))
    targets = {str(node.target) for node in program.graph.nodes if node.op == "call_function"}
    assert "foo.mymuladd.default" in targets
    loaded = _round_trip(program)
    got = loaded.module()(x, y)
    assert got.device.type == DEVICE
    torch.testing.assert_close(got.cpu(), model(x, y).detach().cpu())
    # Other inputs than the ones traced with: the program is not a recording of one call.
    x2, y2 = torch.randn(3, device=DEVICE), torch.randn(3, device=DEVICE)
    torch.testing.assert_close(loaded.module()(x2, y2).cpu(), model(x2, y2).detach().cpu())


def test_export_of_a_plain_model_round_trips_and_runs_on_the_device() -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)).to(DEVICE)
    x = torch.randn(5, 4, device=DEVICE)
    loaded = _round_trip(torch.export.export(model, (x,)))
    got = loaded.module()(x)
    assert got.device.type == DEVICE
    torch.testing.assert_close(got.cpu(), model(x).detach().cpu())


# ---------------------------------------------------------------------------------------------
# The device guard of the generated registration (generated/RegisterCustomOps.cpp, the YAML's
# device_guard: true): the device kernel runs with its tensors' device current, as aten kernels
# do. mymuladd's device kernel refuses to run otherwise (runtime/kernels/custom_ops/mymuladd.cpp).
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def second_device() -> Iterator[torch.device]:
    if foo.device_count() < 2:
        pytest.skip("needs two foo devices (SCAFFOLD_DEVICE_COUNT)")
    previous = foo.current_device()
    foo.set_device(0)
    yield torch.device(DEVICE, 1)
    foo.set_device(previous)


def test_device_kernel_runs_with_its_tensors_device_current(second_device: torch.device) -> None:
    a, b = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([4.0, 5.0, 6.0])
    result = torch.ops.foo.mymuladd(a.to(second_device), b.to(second_device), 2)
    assert result.device == second_device
    assert result.cpu().tolist() == [6.0, 12.0, 20.0]
    # The guard restores the caller's current device.
    assert foo.current_device() == 0
    # And the other way round: device 0's tensors from a thread whose current device is 1.
    foo.set_device(1)
    assert torch.ops.foo.mymuladd(a.to(DEVICE + ":0"), b.to(DEVICE + ":0"), 2).device == torch.device(DEVICE, 0)
    assert foo.current_device() == 1


def test_the_guard_holds_through_autograd_and_compile(second_device: torch.device) -> None:
    a = torch.randn(4, device=second_device, requires_grad=True)
    b = torch.randn(4, device=second_device)
    torch.ops.foo.mymuladd(a, b, 1.0).sum().backward()
    torch.testing.assert_close(grad(a).cpu(), b.cpu())
    compiled = torch.compile(lambda x, y: torch.ops.foo.mymuladd(x, y, 2.0), backend="aot_eager", fullgraph=True)
    torch.testing.assert_close(compiled(a.detach(), b).cpu(), (a.detach() * b + 2.0).cpu())


def test_for_each_add_on_a_second_device_queue(second_device: torch.device) -> None:
    tq = torch.classes.foo.TensorQueue(torch.empty(0, device=second_device))
    x = torch.arange(3.0, device=second_device)
    tq.push(x)
    torch.ops.foo.for_each_add_(tq, torch.ones(3, device=second_device))
    assert x.cpu().tolist() == [1.0, 2.0, 3.0]
    assert foo.current_device() == 0
