"""torch.compile with Inductor on the foo device: Inductor's C++ kernels are launched on the device's
stream, reach its memory through the host mapping (memory protection on) and give eager's results.

Each test compiles once (Inductor compiles C++: tens of seconds on a busy machine), so the models
are tiny and the tests marked slow.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
import torch
from torch import nn
from torch._dynamo.device_interface import DeviceInterface

from foo_testing import foo, grad, paused

DEVICE = "foo"

pytestmark = pytest.mark.slow


@pytest.fixture(autouse=True)
def _fresh_dynamo() -> Iterator[None]:
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def test_memory_protection_is_on() -> None:
    # The point of these tests: a generated kernel that dereferences a device pointer crashes.
    assert foo.memory_protection_enabled()


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
    # A fused C++ kernel reached the device tensors (launched on the stream), not a fallback to aten.
    assert "cpp_fused" in source
    assert "[arg0_1, arg1_1, buf0]" in source


def test_a_compiled_graph_is_launched_on_the_stream() -> None:
    """Its C++ kernels and its ATen kernels alike are queued on the current stream: the graph
    returns while the stream is paused, and its results come out once the stream runs."""
    from torch._inductor.utils import run_and_get_code

    def fn(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return ((a @ b).relu() + 1).sum(dim=0)  # an ATen kernel (mm), then a C++ one

    a = torch.randn(8, 8, device=DEVICE)
    b = torch.randn(8, 8, device=DEVICE)
    compiled = torch.compile(fn, fullgraph=True)
    _, (source, *_) = run_and_get_code(compiled, a, b)  # compiles: nothing paused meanwhile
    assert "_launch_kernel('cpp_fused_" in source and "_host_view(" not in source
    foo.synchronize()  # a and b were made on the default stream; s uses them
    s = foo.Stream()
    with paused(s), foo.stream(s):
        a.mul_(2)  # queued before the graph, which must read it
        got = compiled(a, b)
        assert not s.query()
    torch.testing.assert_close(got.cpu(), fn(a.cpu(), b.cpu()))


def test_a_launched_kernel_frees_what_python_dropped_without_the_gil() -> None:
    """A graph's output that Python drops while its kernel is queued is freed by the stream's worker
    once the kernel ran, without waiting for the launching thread to release the GIL: a kernel that
    held the tensor (and through it its Python object) took the GIL to free it, and so waited for
    the host's Python code, once a kernel."""
    import sys

    compiled = torch.compile(lambda t: t * 2 + 1, fullgraph=True)
    x = torch.randn(1024, device=DEVICE)
    compiled(x)
    foo.synchronize()
    s = foo.Stream()
    allocated = foo.memory_allocated()
    interval = sys.getswitchinterval()
    sys.setswitchinterval(60.0)  # this thread keeps the GIL while it runs Python
    try:
        with foo.stream(s):
            foo._pause_stream_for_testing(s, True)
            compiled(x)  # its output, dropped at once, lives on in the queued kernel
            assert foo.memory_allocated() > allocated
            foo._pause_stream_for_testing(s, False)
            # Python code (the GIL held) until the kernel's output is freed, for 10 s at most.
            deadline = time.monotonic() + 10
            while foo.memory_allocated() > allocated and time.monotonic() < deadline:
                pass
            freed_while_holding_the_gil = foo.memory_allocated() == allocated
    finally:
        sys.setswitchinterval(interval)
        s.synchronize()
    assert freed_while_holding_the_gil


def test_a_kernel_of_many_buffers_is_launched_on_the_stream() -> None:
    """Inductor fuses small updates of many buffers into one kernel -- a network's batch norms'
    num_batches_tracked, two pointers a layer -- with more arguments than a 64-bit mask has bits.
    Run inline it waited for the whole forward on the host; it is launched like any other."""
    import re

    from torch._inductor.utils import run_and_get_code

    def fn(*counters: torch.Tensor) -> None:
        for counter in counters:
            counter.add_(1)

    counters = [torch.full((), index, dtype=torch.int64, device=DEVICE) for index in range(48)]
    compiled = torch.compile(fn, fullgraph=True)
    _, (source, *_) = run_and_get_code(compiled, *counters)
    kinds = re.findall(r"_launch_kernel\('cpp_fused_\w*', \w+, '([ti]+)'", source)
    assert kinds and max(len(kind) for kind in kinds) > 63, source
    assert "_host_view(" not in source
    foo.synchronize()
    s = foo.Stream()
    with paused(s), foo.stream(s):
        compiled(*counters)
        assert not s.query()
    assert [counter.item() for counter in counters] == [index + 2 for index in range(48)]


def test_kernels_of_dynamic_shapes_are_launched_with_their_sizes() -> None:
    from torch._inductor.utils import run_and_get_code

    def fn(x: torch.Tensor) -> torch.Tensor:
        padded = torch.nn.functional.pad(x.sin(), (1, 2))
        return padded.softmax(dim=-1) * x.size(-1) + padded.sum(dim=0)

    compiled = torch.compile(fn, dynamic=True, fullgraph=True)
    _, (source, *_) = run_and_get_code(compiled, torch.randn(3, 5, device=DEVICE))
    assert "_launch_kernel('cpp_fused_" in source and ", [s" in source  # a size among the integers
    for shape in ((3, 5), (4, 9), (1, 17)):
        x = torch.randn(shape)
        torch.testing.assert_close(compiled(x.to(DEVICE)).cpu(), fn(x))


def test_python_floats_and_cpu_scalars_reach_launched_kernels_by_value() -> None:
    """Dynamo passes an unspecialized float, and Inductor a CPU scalar tensor, to the device's kernel
    as a 0-dim CPU tensor: the launch reads its value then."""

    def fn(x: torch.Tensor, a: float, scale: torch.Tensor) -> torch.Tensor:
        return (x * a).sin() * scale + a

    x, scale = torch.randn(6), torch.tensor(3.0)
    with torch._dynamo.config.patch(specialize_float=False):
        compiled = torch.compile(fn, dynamic=True, fullgraph=True)
        for a in (0.5, 1.5):
            torch.testing.assert_close(compiled(x.to(DEVICE), a, scale).cpu(), fn(x, a, scale))


def test_only_kernels_of_pointers_and_64_bit_integers_are_launched() -> None:
    """The runtime passes every argument in a 64-bit integer slot: a kernel that takes a double (in a
    floating-point register) or more arguments than the slots is called inline, on host views."""
    from torch_foo._inductor import _launchable

    assert _launchable(["const float*", "float*", "const int64_t", "long"])
    assert not _launchable(["float*", "const double"])
    assert not _launchable(["float*", "const int32_t"])
    assert not _launchable(["const int64_t"])  # no tensor: no device to launch on
    assert _launchable(["float*"] * 255) and not _launchable(["float*"] * 256)


def test_cached_compiled_graphs_are_keyed_on_the_wrapper_code() -> None:
    """A graph cached by another version of the backend is not loaded: its wrapper code may call
    helpers this version lacks, or expect other layouts of the convolutions' results (Inductor's FX
    graph cache outlives the process)."""
    import torch_foo._convolution_layout as convolution_layout
    import torch_foo._inductor as device_inductor
    from torch._inductor.codegen.common import custom_backend_passes
    from torch._inductor.custom_graph_pass import get_hash_for_files

    torch.compile(lambda t: t + 1)(torch.ones(2, device=DEVICE))  # registers the device
    # The cache key holds every custom backend pass's uuid (codecache.FxGraphHashDetails).
    uuids = {custom_pass.uuid() for custom_pass in custom_backend_passes.values() if custom_pass is not None}
    # ... and the compute threads its kernels are written for: another SCAFFOLD_DEVICE_THREADS
    # is another key.
    threads = foo.get_device_properties().multi_processor_count
    files = (device_inductor.__file__, convolution_layout.__file__)
    assert get_hash_for_files(files) + f" threads {threads}".encode() in uuids


def test_device_kernels_take_the_team_of_the_thread_that_runs_them() -> None:
    """Inductor writes the process's thread count into each parallel region of its C++ kernels
    (`num_threads(N)`). The device's kernels run on the stream's worker, whose OpenMP team is the
    device's compute threads, more of them while the host sleeps than while it works: its kernels
    leave the count to the OpenMP runtime (Inductor's dynamic threads), as ATen's kernels do, and
    are split for the most the device computes with (its multiprocessor count)."""
    import re

    from torch._inductor.utils import run_and_get_code

    def fn(x: torch.Tensor) -> torch.Tensor:
        return (x.sin() * 2).sum(dim=1) + x.cos().mean()

    def parallel_regions(source: str) -> list[str]:
        return re.findall(r"#pragma omp parallel\b.*", source)

    x = torch.randn(256, 1024)  # large enough for Inductor to split across the host's threads
    compiled = torch.compile(fn, fullgraph=True)
    got, (source, *_) = run_and_get_code(compiled, x.to(DEVICE))
    torch.testing.assert_close(got.cpu(), fn(x), rtol=1e-4, atol=1e-4)  # sums of 1024 in another order
    regions = parallel_regions(source)
    assert regions and not any("num_threads" in region for region in regions), regions
    assert "omp_get_max_threads()" in source  # reductions size their partial sums by the team
    if torch.get_num_threads() > 1:
        torch._dynamo.reset()
        _, (cpu_source, *_) = run_and_get_code(compiled, x)
        assert parallel_regions(cpu_source)


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


class _ChannelsLastBlock(nn.Module):
    """ConvNeXt's block: a convolution, then a layer norm over the channels through a permutation,
    which leaves the activations channels-last."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(4, 4, 3, padding=1, groups=4)
        self.norm = nn.LayerNorm(4)
        self.pointwise = nn.Conv2d(4, 6, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.norm(self.conv(x).permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
        result: torch.Tensor = self.pointwise(x)
        return result


def test_compiled_convolutions_are_laid_out_as_eager() -> None:
    # The device's convolution results are channels-last when the input or weight is, as the CPU's
    # and CUDA's; torch.compile plans PyTorch's contiguous default for an out-of-tree backend
    # unless told the device's rule, and then the compiled graph fails its stride checks.
    torch.manual_seed(0)
    model = _ChannelsLastBlock().to(DEVICE)
    x = torch.randn(2, 4, 5, 5, device=DEVICE, requires_grad=True)
    expected = model(x)
    expected.sum().backward()
    eager_grads = [grad(t).clone() for t in (x, *model.parameters())]
    x.grad = None
    model.zero_grad()
    got = torch.compile(model, fullgraph=True)(x)
    got.sum().backward()
    assert expected.is_contiguous(memory_format=torch.channels_last) and not expected.is_contiguous()
    assert got.stride() == expected.stride()
    torch.testing.assert_close(got.detach().cpu(), expected.detach().cpu(), rtol=1e-4, atol=1e-5)
    for compiled_grad, eager_grad in zip((grad(t) for t in (x, *model.parameters())), eager_grads, strict=True):
        torch.testing.assert_close(compiled_grad.cpu(), eager_grad.cpu(), rtol=1e-4, atol=1e-5)


def test_training_step_under_inductor_equals_eager() -> None:
    torch.manual_seed(0)
    eager_model = nn.Sequential(nn.Linear(6, 8), nn.GELU(), nn.Linear(8, 3)).to(DEVICE)
    compiled_model = nn.Sequential(nn.Linear(6, 8), nn.GELU(), nn.Linear(8, 3)).to(DEVICE)
    compiled_model.load_state_dict(eager_model.state_dict())
    x = torch.randn(4, 6, device=DEVICE)
    target = torch.randn(4, 3, device=DEVICE)

    # cross_entropy's backward has masked loads, which compile only with the C++ backend's
    # dtype propagation (see test_inductor_answers_cpp_for_the_device).
    def loss_of(model: nn.Module) -> torch.Tensor:
        return nn.functional.cross_entropy(model(x), target.softmax(dim=1))

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
        torch.testing.assert_close(grad(compiled_param).cpu(), grad(eager_param).cpu(), rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(compiled_param.detach().cpu(), eager_param.detach().cpu(), rtol=1e-4, atol=1e-5)


def test_named_dynamo_backend_runs_inductor_on_the_device() -> None:
    assert DEVICE in torch._dynamo.list_backends(exclude_tags=())
    x = torch.randn(3, 5, device=DEVICE)
    got = torch.compile(lambda t: torch.sigmoid(t) * 2, backend=DEVICE, fullgraph=True)(x)
    torch.testing.assert_close(got.cpu(), torch.sigmoid(x.cpu()) * 2)


def test_inductor_answers_cpp_for_the_device_and_keeps_every_other_answer() -> None:
    # Inductor asks get_current_backend(device_type) which language a device's kernels are in and
    # answers config.cuda_backend ("triton") for devices it does not know; foo's are C++.
    from torch._inductor import config
    from torch._inductor.codegen import common
    from torch._inductor.utils import get_current_backend
    from torch_foo import _inductor

    _inductor.register(DEVICE)
    assert get_current_backend(DEVICE) == "cpp"
    # The modules that imported the function by name ask the same one.
    # (torch does not list the name among common's exports: the import by name is what is checked)
    assert common.get_current_backend(DEVICE) == "cpp"  # type: ignore[attr-defined]
    # A real CUDA device in the same process keeps Inductor's answer, which follows its config.
    assert get_current_backend("cuda") == config.cuda_backend
    assert get_current_backend("cpu") == config.cpu_backend
    with config.patch(cuda_backend="halide", cpu_backend="triton"):
        assert get_current_backend("cuda") == "halide"
        assert common.get_current_backend("cuda") == "halide"  # type: ignore[attr-defined]  # (as above)
        assert get_current_backend("cpu") == "triton"
        assert get_current_backend(DEVICE) == "cpp"
    _inductor.register(DEVICE)  # idempotent: no wrapper around the wrapper
    # __wrapped__: set by functools.wraps, which torch's stubs of the function do not show
    assert get_current_backend.__wrapped__ is common.get_current_backend.__wrapped__  # type: ignore[attr-defined]


def test_masked_loads_casts_and_reductions_compile() -> None:
    # Padding (masked loads with a fill value), dtype casts both ways, and reductions: what real
    # CNNs and language models are made of, in one graph (one compile).
    def fn(x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        pooled = nn.functional.max_pool2d(x, 3, stride=2, padding=1)
        averaged = nn.functional.avg_pool2d(x, 3, stride=2, padding=1)
        padded = nn.functional.pad(x, (1, 2, 1, 0), value=-0.5) * 2
        half = (x.half() + 1).float()
        bf16 = (x.to(torch.bfloat16) * 3).to(torch.float32)
        logits = x.sum(dim=(2, 3))
        return pooled, averaged, padded, half, bf16, logits.softmax(-1), logits.amax(0), (x > 0).sum()

    x = torch.randn(2, 3, 7, 7)
    got = torch.compile(fn, fullgraph=True)(x.to(DEVICE))
    for actual, expected in zip(got, fn(x), strict=True):
        assert actual.device.type == DEVICE
        torch.testing.assert_close(actual.cpu(), expected, rtol=1e-2, atol=1e-2)


def test_compiled_training_step_under_autocast_equals_eager_autocast() -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                          nn.MaxPool2d(3, 2, padding=1), nn.Flatten(), nn.Linear(4 * 3 * 3, 5)).to(DEVICE)
    compiled = torch.compile(model)
    x = torch.randn(4, 3, 6, 6, device=DEVICE)
    labels = torch.tensor([0, 3, 1, 4], device=DEVICE)
    grads = []
    for run in (model, compiled):
        model.zero_grad()
        with torch.autocast(DEVICE, dtype=torch.bfloat16):
            logits = run(x)
            assert logits.dtype == torch.bfloat16
            loss = nn.functional.cross_entropy(logits, labels)
        loss.backward()
        grads.append([grad(p).cpu() for p in model.parameters()])
    for eager_grad, compiled_grad in zip(*grads, strict=True):
        torch.testing.assert_close(compiled_grad, eager_grad, rtol=5e-2, atol=5e-2)


@pytest.mark.skipif(
    not hasattr(DeviceInterface, "get_cache_system_info"),
    reason="torch 2.15's opt-in Inductor hooks (is_gpu, get_cache_system_info, _inductor_backend_init)",
)
def test_the_opt_in_hooks_of_torch_2_15() -> None:
    from torch._dynamo.device_interface import get_interface_for_device
    from torch._inductor.codegen.common import get_scheduling_for_device, init_backend_registration

    # Inductor's registration goes through the device module's hook, which registers everything.
    assert callable(foo._inductor_backend_init)
    init_backend_registration()
    assert get_scheduling_for_device(DEVICE) is not None
    interface = get_interface_for_device(DEVICE)
    assert interface.is_gpu() is False  # C++ kernels from the CPU's code generator: no GPU paths
    info = interface.get_cache_system_info()
    assert info is not None and info["compute_threads"] == foo.get_device_properties(0).multi_processor_count
    assert isinstance(info["package"], str) and info["package"] != "unknown"
