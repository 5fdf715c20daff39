"""torch.compile with Inductor on the foo device: Inductor's C++ kernels run on device memory
(through host views, memory protection on) and give eager's results.

Each test compiles once (Inductor compiles C++: tens of seconds on a busy machine), so the models
are tiny and the tests marked slow.
"""

from __future__ import annotations

import pytest
import torch
from torch import nn

DEVICE = "foo"

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _fresh_dynamo():
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def test_memory_protection_is_on() -> None:
    # The point of these tests: a generated kernel that dereferences a device pointer crashes.
    assert torch.foo.memory_protection_enabled()


def test_mlp_under_inductor_equals_eager() -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4), nn.Tanh()).to(DEVICE)
    x = torch.randn(5, 8, device=DEVICE)
    compiled = torch.compile(model, fullgraph=True)
    with torch.no_grad():
        expected = model(x)
        got = compiled(x)
    assert got.device.type == DEVICE
    torch.testing.assert_close(got.cpu(), expected.cpu())


def test_inductor_generates_cpp_kernels_for_the_device() -> None:
    from torch._inductor.utils import run_and_get_code

    def fn(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return (a * b + 1).relu().sum(dim=1)

    a = torch.randn(4, 6, device=DEVICE)
    b = torch.randn(4, 6, device=DEVICE)
    got, (source, *_) = run_and_get_code(torch.compile(fn, fullgraph=True), a, b)
    torch.testing.assert_close(got.cpu(), fn(a.cpu(), b.cpu()))
    # A fused C++ kernel reached the device tensors through host views, not a fallback to aten.
    assert "cpp_fused" in source
    assert "_host_view(arg0_1)" in source


def test_small_cnn_under_inductor_equals_eager() -> None:
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(2, 4, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(4 * 3 * 3, 3),
    ).to(DEVICE)
    x = torch.randn(2, 2, 6, 6, device=DEVICE)
    compiled = torch.compile(model, fullgraph=True)
    with torch.no_grad():
        expected = model(x)
        got = compiled(x)
    torch.testing.assert_close(got.cpu(), expected.cpu(), rtol=1e-4, atol=1e-5)


def test_training_step_under_inductor_equals_eager() -> None:
    torch.manual_seed(0)
    eager_model = nn.Sequential(nn.Linear(6, 8), nn.GELU(), nn.Linear(8, 3)).to(DEVICE)
    compiled_model = nn.Sequential(nn.Linear(6, 8), nn.GELU(), nn.Linear(8, 3)).to(DEVICE)
    compiled_model.load_state_dict(eager_model.state_dict())
    x = torch.randn(4, 6, device=DEVICE)
    target = torch.randn(4, 3, device=DEVICE)

    # mse_loss, not cross_entropy: the latter's backward needs Inductor's C++ `masked` dtype
    # propagation, which Inductor applies only when get_current_backend() says "cpp" -- and it
    # says "triton" for any device it does not know.
    def loss_of(model: nn.Module) -> torch.Tensor:
        return nn.functional.mse_loss(model(x), target)

    compiled_loss = torch.compile(loss_of, fullgraph=True)
    optimizers = [torch.optim.SGD(m.parameters(), lr=0.1) for m in (eager_model, compiled_model)]
    for _ in range(2):
        for model, optimizer, fn in zip(
            (eager_model, compiled_model), optimizers, (loss_of, compiled_loss), strict=True
        ):
            optimizer.zero_grad()
            loss = fn(model)
            loss.backward()
            optimizer.step()
    for eager_param, compiled_param in zip(eager_model.parameters(), compiled_model.parameters(), strict=True):
        assert compiled_param.grad is not None and compiled_param.grad.device.type == DEVICE
        torch.testing.assert_close(compiled_param.grad.cpu(), eager_param.grad.cpu(), rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(compiled_param.detach().cpu(), eager_param.detach().cpu(), rtol=1e-4, atol=1e-5)


def test_named_dynamo_backend_runs_inductor_on_the_device() -> None:
    assert DEVICE in torch._dynamo.list_backends(exclude_tags=())
    x = torch.randn(3, 5, device=DEVICE)
    got = torch.compile(lambda t: torch.sigmoid(t) * 2, backend=DEVICE, fullgraph=True)(x)
    torch.testing.assert_close(got.cpu(), torch.sigmoid(x.cpu()) * 2)
