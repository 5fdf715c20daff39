"""A CPU tensor next to foo tensors is an error, as next to CUDA tensors, whichever path the op
takes: the boxed CPU fallback (zero-copy host views, or copies with
SCAFFOLD_HOST_VIEW_FALLBACK=0), the typed explicit fallback, or a native kernel. The error is
ATen's own ("Expected all tensors to be on the same device ...", naming both devices and,
from the fallback's and the kernels' checks, the op), raised before anything runs, so nothing
is written: not the out= tensor, not the CPU running statistics of a batch norm. CPU 0-dim
tensors that are only read (wrapped scalars) and CPU index tensors stay allowed, as for CUDA."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

# Each case runs in both fallback modes, in a fresh process per mode (the mode is read once).
_CASES = textwrap.dedent(
    r"""
    import json, warnings
    import torch
    import torch_foo  # noqa: F401
    from torch import nn

    warnings.simplefilter("ignore")
    D = "foo"
    results = {}

    def case(name):
        def run(function):
            try:
                outcome = function()
                results[name] = {"raised": False, "outcome": outcome}
            except RuntimeError as error:
                results[name] = {"raised": True, "message": str(error).splitlines()[0]}
        return run

    x = torch.randn(2, 3, 5, 5)

    @case("conv2d with a CPU input (boxed fallback)")
    def _():
        return str(nn.functional.conv2d(x, torch.randn(4, 3, 3, 3, device=D)).device)

    bn = nn.BatchNorm2d(3).to(D)
    bn.running_mean = torch.zeros(3)
    bn.running_var = torch.ones(3)

    @case("batch_norm with CPU running statistics")
    def _():
        return str(bn(x.to(D)).device)

    results["running statistics untouched"] = {
        "raised": False,
        "outcome": bool(bn.running_mean.eq(0).all() and bn.running_var.eq(1).all()),
    }

    @case("layer_norm with a CPU weight (explicit fallback)")
    def _():
        return str(nn.functional.layer_norm(x.to(D), (5,), torch.ones(5), torch.zeros(5, device=D)).device)

    out = torch.full((2, 3), -1.0)

    @case("out= a CPU tensor (explicit fallback)")
    def _():
        return str(torch.cumprod(torch.ones(2, 3, device=D), 1, out=out).device)

    out_boxed = torch.full((2, 3), -1.0)

    @case("out= a CPU tensor (boxed fallback)")
    def _():
        return str(torch.logaddexp(torch.ones(2, 3, device=D), torch.ones(2, 3, device=D), out=out_boxed).device)

    results["out= tensors untouched"] = {
        "raised": False, "outcome": bool(out.eq(-1).all() and out_boxed.eq(-1).all()),
    }

    @case("a CPU matrix in a boxed op")
    def _():
        return str(torch.logaddexp(torch.ones(2, 3, device=D), torch.ones(2, 3)).device)

    @case("a CPU matrix in a native kernel")
    def _():
        return str(torch.mm(torch.ones(2, 3, device=D), torch.ones(3, 2)).device)

    @case("in place on a CPU tensor with a device argument")
    def _():
        return str(torch.ones(2, 3).hypot_(torch.ones(2, 3, device=D)).device)

    @case("a CPU scalar is allowed")
    def _():
        return str(torch.logaddexp(torch.ones(2, 3, device=D), torch.tensor(1.0)).device)

    @case("a CPU scalar first is allowed")
    def _():
        return str(torch.logaddexp(torch.tensor(1.0), torch.ones(2, 3, device=D)).device)

    @case("CPU indices are allowed")
    def _():
        return str(torch.arange(6.0, device=D)[torch.tensor([0, 4])].device)

    if torch.foo.device_count() > 1:
        @case("two devices of the backend")
        def _():
            return str(torch.logaddexp(torch.ones(2, device="foo:0"), torch.ones(2, device="foo:1")).device)

    print(json.dumps(results))
    """
)

_RAISES = [
    "conv2d with a CPU input (boxed fallback)",
    "batch_norm with CPU running statistics",
    "layer_norm with a CPU weight (explicit fallback)",
    "out= a CPU tensor (explicit fallback)",
    "out= a CPU tensor (boxed fallback)",
    "a CPU matrix in a boxed op",
    "a CPU matrix in a native kernel",
    "in place on a CPU tensor with a device argument",
]
_ALLOWED = ["a CPU scalar is allowed", "a CPU scalar first is allowed", "CPU indices are allowed"]


@pytest.fixture(scope="module", params=["host_view", "copy"])
def results(request: pytest.FixtureRequest) -> dict[str, dict[str, object]]:
    env = dict(os.environ, SCAFFOLD_HOST_VIEW_FALLBACK="1" if request.param == "host_view" else "0")
    process = subprocess.run([sys.executable, "-c", _CASES], capture_output=True, text=True, env=env, timeout=300)
    assert process.returncode == 0, process.stderr[-3000:]
    parsed: dict[str, dict[str, object]] = json.loads(process.stdout.strip().splitlines()[-1])
    return parsed


@pytest.mark.parametrize("name", _RAISES)
def test_a_tensor_on_another_device_raises(results: dict[str, dict[str, object]], name: str) -> None:
    result = results[name]
    assert result["raised"], f"{name}: ran, result on {result['outcome']}"
    message = str(result["message"])
    if message.startswith("Input type"):
        # PyTorch's convolution checks its input against its weight first, as for CUDA.
        assert "fooFloatType" in message and "should be the same" in message, message
        return
    assert message.startswith("Expected all tensors to be on the same device"), message
    assert "foo:0" in message and "cpu" in message, message
    # The check of the fallback and of the kernels names the op; TensorIterator's own (an op
    # whose CPU kernel builds one sees the devices first) names the two devices only, as for CUDA.
    assert "aten::" in message or "found at least two devices" in message, message


def test_nothing_is_written_before_the_error(results: dict[str, dict[str, object]]) -> None:
    assert results["running statistics untouched"]["outcome"] is True
    assert results["out= tensors untouched"]["outcome"] is True


@pytest.mark.parametrize("name", _ALLOWED)
def test_cpu_scalars_and_cpu_indices_are_allowed(results: dict[str, dict[str, object]], name: str) -> None:
    assert results[name] == {"raised": False, "outcome": "foo:0"}, results[name]


def test_two_devices_of_the_backend_raise(results: dict[str, dict[str, object]]) -> None:
    result = results.get("two devices of the backend")
    if result is None:
        pytest.skip("one foo device (SCAFFOLD_DEVICE_COUNT)")
    assert result["raised"] and "foo:1" in str(result["message"]), result
