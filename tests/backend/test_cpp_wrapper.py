"""Inductor's C++ wrapper (cpp_wrapper=True) on the foo device: its compiled kernels are launched on
the device's stream through the runtime's C ABI (memory protection on), its ATen calls reach the
device's kernels, and results equal eager's on the device and the CPU's. AOTInductor packages the same
wrapper into a model that aoti_load_package runs on the device, in this process or another.

Each test compiles C++ (tens of seconds on a busy machine): the models are tiny, the tests slow.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn
from torch._inductor.codegen.cpp_wrapper_cpu import CppWrapperCpu

from foo_testing import foo, paused

DEVICE = "foo"
CPP_WRAPPER: dict[str, str | int | bool | Callable[..., Any]] = {"cpp_wrapper": True}

pytestmark = pytest.mark.slow
AOT_INDUCTOR = hasattr(CppWrapperCpu, "_write_constants_unpacking")
"""Where AOTInductor's C++ wrapper lets the device move a model's constants to it: torch 2.14 on."""


@pytest.fixture(autouse=True)
def _fresh_dynamo() -> Iterator[None]:
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def _compiled_code(model: nn.Module, *inputs: torch.Tensor) -> tuple[torch.Tensor, str]:
    from torch._inductor.utils import run_and_get_code

    compiled = torch.compile(model, fullgraph=True, options=CPP_WRAPPER)
    with torch.no_grad():
        got, (source, *_) = run_and_get_code(compiled, *inputs)
    return got, source


def test_mlp_under_the_cpp_wrapper_equals_eager_and_the_cpu() -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4), nn.Tanh())
    x = torch.randn(5, 8)
    with torch.no_grad():
        on_cpu = model(x)
    model.to(DEVICE)
    with torch.no_grad():
        eager = model(x.to(DEVICE))
    got, source = _compiled_code(model, x.to(DEVICE))
    assert got.device.type == DEVICE
    # A C++ wrapper whose fused kernels are launched through the runtime, not handed device pointers.
    assert "cpp_wrapper_src" in source and 'scaffold_wrapper::launch("cpp_fused_' in source
    assert re.search(r"\(\w+\*\)\(\w+\.data_ptr\(\)\)", source) is None, source
    torch.testing.assert_close(got.cpu(), eager.cpu())
    torch.testing.assert_close(got.cpu(), on_cpu)


def test_conv_model_under_the_cpp_wrapper_equals_eager_and_the_cpu() -> None:
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 4, 3, padding=1),
        nn.BatchNorm2d(4),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Linear(4 * 4 * 4, 3),
    ).eval()
    x = torch.randn(2, 3, 8, 8)
    with torch.no_grad():
        on_cpu = model(x)
    model.to(DEVICE)
    with torch.no_grad():
        eager = model(x.to(DEVICE))
    from torch._inductor.codegen.cpp_wrapper_cpu import CppWrapperCpu

    if not hasattr(CppWrapperCpu, "_generate_fallback_kernel_jit"):
        # Older Inductor has no runtime lookup of an extern kernel's result: refused, not guessed.
        with pytest.raises(Exception, match="no runtime lookup of an extern kernel's result"):
            _compiled_code(model, x.to(DEVICE))
        return
    got, source = _compiled_code(model, x.to(DEVICE))
    # The convolution reaches the device's own kernel through the dispatcher.
    assert "aoti_torch_call_dispatcher" in source or "convolution" in source
    torch.testing.assert_close(got.cpu(), eager.cpu(), rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(got.cpu(), on_cpu, rtol=1e-4, atol=1e-5)


def test_the_cpp_wrapper_launches_its_kernels_on_the_stream() -> None:
    """Its kernels are queued on the current stream after the work before them: the graph returns
    while the stream is paused, and its result comes out once the stream runs."""

    def fn(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return (a * b + 1).relu().sum(dim=1)

    a = torch.randn(4, 6, device=DEVICE)
    b = torch.randn(4, 6, device=DEVICE)
    compiled = torch.compile(fn, fullgraph=True, options=CPP_WRAPPER)
    compiled(a, b)  # compiles: nothing paused meanwhile
    foo.synchronize()
    s = foo.Stream()
    with paused(s), foo.stream(s):
        a.mul_(2)  # queued before the graph, which must read it
        got = compiled(a, b)
        assert not s.query()
    torch.testing.assert_close(got.cpu(), fn(a.cpu(), b.cpu()))


def test_kernels_with_sizes_and_doubles_under_the_cpp_wrapper() -> None:
    """Dynamic sizes reach launched kernels as integers; a kernel taking a double runs inline on
    host addresses once the stream's work is done."""

    def fn(x: torch.Tensor, scale: float) -> torch.Tensor:
        padded = torch.nn.functional.pad(x.sin(), (1, 2))
        return padded.softmax(dim=-1) * scale + padded.sum(dim=0)

    compiled = torch.compile(fn, dynamic=True, fullgraph=True, options=CPP_WRAPPER)
    for rows in (3, 5):
        x = torch.randn(rows, 7, device=DEVICE)
        torch.testing.assert_close(compiled(x, 0.5).cpu(), fn(x.cpu(), 0.5))


def _small_cnn() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1),
        nn.BatchNorm2d(8),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(8, 5),
        nn.Softmax(dim=-1),
    ).eval()


@pytest.mark.skipif(not AOT_INDUCTOR, reason=f"torch {torch.__version__}: AOTInductor on the device needs 2.14")
def test_aot_inductor_packages_a_model_that_runs_on_the_device_here_and_in_a_fresh_process(tmp_path: Path) -> None:
    model = _small_cnn()
    example = torch.randn(2, 3, 12, 12)
    exported = torch.export.export(_small_cnn().to(DEVICE), (example.to(DEVICE),))
    package = torch._inductor.aoti_compile_and_package(exported, package_path=str(tmp_path / "cnn.pt2"))
    loaded = torch._inductor.aoti_load_package(package)
    for scale in (1.0, 3.0):  # the constants moved to the device at the first run serve the next
        inputs = example * scale
        result = loaded(inputs.to(DEVICE))
        assert result.device.type == DEVICE
        with torch.no_grad():
            torch.testing.assert_close(result.cpu(), model(inputs))
    torch.save({"inputs": example, "expected": model(example).detach()}, tmp_path / "case.pt")
    deployed = subprocess.run(
        [
            sys.executable,
            "-c",
            (
                "import sys, torch, torch_foo\n"
                "case = torch.load(sys.argv[2])\n"
                "result = torch._inductor.aoti_load_package(sys.argv[1])(case['inputs'].to('foo'))\n"
                "torch.testing.assert_close(result.cpu(), case['expected'])\n"
                "print(result.device)\n"
            ),
            package,
            str(tmp_path / "case.pt"),
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert deployed.returncode == 0, deployed.stderr[-3000:]
    assert deployed.stdout.strip() == "foo:0"


@pytest.mark.skipif(AOT_INDUCTOR, reason="this torch has what AOTInductor on the device needs")
def test_aot_inductor_before_torch_2_14_says_what_it_needs(tmp_path: Path) -> None:
    model = nn.Linear(4, 2).to(DEVICE)
    exported = torch.export.export(model, (torch.randn(3, 4, device=DEVICE),))
    with pytest.raises(Exception, match=r"AOTInductor on the 'foo' device needs torch 2.14"):
        torch._inductor.aoti_compile_and_package(exported, package_path=str(tmp_path / "model.pt2"))
