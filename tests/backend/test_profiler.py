"""torch.profiler on foo: the device's kernels, timed by the driver (drvActivity*), in
prof.events(), key_averages() and the chrome trace, each under the op that launched it; CPU
fallback calls as such; profile_memory seeing device allocations and frees; the legacy
profiler's per-op device time (the PrivateUse1 profiler stubs). Real profiler, real kernels."""

from __future__ import annotations

import json
import subprocess
import sys
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import torch
import torch_foo
from torch.profiler import DeviceType, ProfilerActivity, profile

from foo_testing import foo, needs_host_views

DEVICE = "foo"
DEVICE_TYPE = torch.device(DEVICE).type


def _profile(fn: Any, **kwargs: Any) -> profile:
    prof = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1], **kwargs)
    with prof:
        fn()
        foo.synchronize()
    return prof


def _trace(prof: profile, tmp_path: Path) -> list[dict[str, Any]]:
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    events: list[dict[str, Any]] = json.loads(path.read_text())["traceEvents"]
    return events


def _device_events(prof: profile) -> list[Any]:
    return [e for e in prof.events() if e.device_type == DeviceType.PrivateUse1]


@needs_host_views  # foo's kernels on their streams
def test_each_kernel_is_a_device_event_under_the_op_that_launched_it(tmp_path: Path) -> None:
    a = torch.randn(64, 64, device=DEVICE)
    b = torch.randn(64, 64, device=DEVICE)
    foo.synchronize()
    prof = _profile(lambda: torch.relu(a @ b + 1))

    kernels = Counter(e.name for e in _device_events(prof))
    assert {"foo_kernel::mm.out", "foo_kernel::add", "foo_kernel::relu"} <= set(kernels)
    for event in _device_events(prof):
        assert event.device_index == 0 and event.time_range.elapsed_us() > 0
    # Device time belongs to the op that launched the kernel (Kineto's correlation).
    averages = {row.key: row for row in prof.key_averages()}
    for op, kernel in (("aten::mm", "foo_kernel::mm.out"), ("aten::add", "foo_kernel::add"),
                       ("aten::relu", "foo_kernel::relu")):
        assert averages[op].self_device_time_total == pytest.approx(averages[kernel].device_time_total)
        assert averages[op].self_device_time_total > 0
    ops = {e.name: e for e in prof.events() if e.device_type == DeviceType.CPU}
    assert [k.name for k in ops["aten::relu"].kernels] == ["foo_kernel::relu"]

    events = _trace(prof, tmp_path)
    on_device = [e for e in events if e.get("cat") == "kernel"]
    assert {e["name"] for e in on_device} == set(kernels)
    assert all(e["pid"] == 0 and e["args"]["stream"] == 0 and e["dur"] > 0 for e in on_device)
    assert all(e["args"]["External id"] > 0 for e in on_device)  # linked to its op
    # The host side of each launch, and a flow arrow from it to the kernel (both halves present).
    launches = [e for e in events if e.get("cat") == "privateuse1_runtime"]
    assert len(launches) >= len(on_device) and {e["name"] for e in launches} == {"drvLaunchHostFunc"}
    flows = Counter((e["id"], e["ph"]) for e in events if e.get("cat") == "ac2g")
    assert flows and all(flows[(flow_id, "s")] == flows[(flow_id, "f")] == 1 for flow_id, _ in flows)
    names = {e["args"]["name"] for e in events if e.get("ph") == "M" and e.get("name") == "process_name"}
    assert DEVICE in names


@needs_host_views  # foo's kernels on their streams
def test_kernels_on_other_streams_and_copies_are_on_their_rows(tmp_path: Path) -> None:
    side = foo.Stream()
    x = torch.randn(1000, device=DEVICE)
    pinned = torch.ones(1000).pin_memory()
    foo.synchronize()

    def work() -> None:
        with foo.stream(side):
            x.copy_(pinned, non_blocking=True)
            x.mul_(2)

    events = _trace(_profile(work), tmp_path)
    copies = [e for e in events if e.get("cat") == "gpu_memcpy"]
    assert [(e["name"], e["args"]["stream"], e["args"]["bytes"]) for e in copies] == [
        ("Memcpy HtoD", side.stream_id, 4000)
    ]
    kernels = [e for e in events if e.get("cat") == "kernel"]
    assert [(e["name"], e["args"]["stream"]) for e in kernels] == [("foo_kernel::mul_", side.stream_id)]
    rows = {e["tid"]: e["args"]["name"] for e in events if e.get("name") == "thread_name" and e["pid"] == 0}
    assert rows[side.stream_id] == f"stream {side.stream_id}"


def test_inline_kernels_and_fallback_calls_show_as_such(tmp_path: Path) -> None:
    x = torch.randn(16, 16, device=DEVICE)
    out = torch.empty(3, device=DEVICE)  # the wrong shape: add.out resizes it, inline
    foo.synchronize()

    def work() -> None:
        torch.add(x, x, out=out)
        torch.cumprod(x, 0)  # no foo kernel: the CPU fallback

    with warnings.catch_warnings():  # the fallback's warning, given once a process
        warnings.simplefilter("ignore")
        prof = _profile(work)
    events = _trace(prof, tmp_path)
    inline = [e for e in events if e.get("cat") == "kernel" and "inline" in e["args"]]
    assert [e["name"] for e in inline] == ["foo_kernel::add.out"]
    fallback = [e for e in events if e.get("name") == "cpu_fallback: aten::cumprod.out"]
    (call,) = fallback
    cumprod = [e for e in events if e.get("name") == "aten::cumprod" and e.get("cat") == "cpu_op"]
    assert any(op["ts"] <= call["ts"] and call["ts"] + call["dur"] <= op["ts"] + op["dur"] for op in cumprod)


def _training_step() -> Any:
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 64)
    ).to(DEVICE)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    inputs = torch.randn(128, 256, device=DEVICE)
    target = torch.randn(128, 64, device=DEVICE)

    def step() -> None:
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(model(inputs), target)
        loss.backward()
        optimizer.step()

    return step


@pytest.mark.slow  # compiles C++
def test_a_compiled_graphs_kernels_are_device_events_under_the_op_that_launched_them() -> None:
    torch._dynamo.reset()
    compiled = torch.compile(lambda t: (t.sin() * 2).relu().sum(dim=1), fullgraph=True)
    x = torch.randn(32, 32, device=DEVICE)
    compiled(x)
    foo.synchronize()
    prof = _profile(lambda: compiled(x))
    fused = [e for e in _device_events(prof) if e.name.startswith("foo_kernel::cpp_fused_")]
    assert fused and all(e.time_range.elapsed_us() > 0 for e in fused)
    launches = [e for e in prof.events() if e.name == "scaffold_runtime::launch_compiled_kernel"]
    assert sorted(k.name for e in launches for k in e.kernels) == sorted(e.name for e in fused)
    torch._dynamo.reset()


@needs_host_views  # foo's kernels on their streams
def test_a_training_step_shows_every_kernel_and_the_device_time_adds_up(tmp_path: Path) -> None:
    """Every native kernel of the step is on the device timeline with device time, and the device
    time of the kernels the driver timed adds up to the time the driver's stream worker spent
    running them (within 10 %): none lost or counted twice between the driver and the profile."""
    step = _training_step()
    step()  # warm: first-call costs are not the step's
    foo.synchronize()
    busy_before = torch_foo._C._device_busy_time_for_testing(0)
    prof = _profile(step)
    busy_ns = torch_foo._C._device_busy_time_for_testing(0) - busy_before

    events = _trace(prof, tmp_path)
    kernels = [e for e in events if e.get("cat") == "kernel"]
    names = {e["name"] for e in kernels}
    assert {"foo_kernel::addmm.out", "foo_kernel::mm.out", "foo_kernel::relu", "foo_kernel::mse_loss",
            "foo_kernel::threshold_backward", "foo_kernel::sum.IntList_out"} <= names
    assert all(e["dur"] > 0 and e["args"]["External id"] > 0 and e["pid"] == 0 for e in kernels)
    # Ops with a foo kernel of their own (not views, not the fallback) have device time.
    native = {"aten::addmm", "aten::mm", "aten::relu", "aten::threshold_backward", "aten::mse_loss"}
    averages = {row.key: row for row in prof.key_averages()}
    assert all(averages[op].device_time_total > 0 for op in native)
    timed = [e for e in events if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset") and "inline" not in e["args"]]
    listing = "\n".join(f"{e['ts']:.1f} {e['dur']:.1f} {e['pid']} {e['args']['stream']} {e['name']}" for e in timed)
    assert sum(e["dur"] for e in timed) == pytest.approx(busy_ns / 1000, rel=0.10), listing


def test_profiling_the_cpu_only_does_not_trace_the_device() -> None:
    x = torch.randn(100, device=DEVICE)
    foo.synchronize()
    busy_before = torch_foo._C._device_busy_time_for_testing(0)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        (x * 2).sum().item()
    assert _device_events(prof) == []
    assert torch_foo._C._device_busy_time_for_testing(0) == busy_before


@needs_host_views  # add's free by its launched kernel; declined, add runs through the fallback
def test_profile_memory_sees_device_allocations_and_frees() -> None:
    x = torch.randn(256, 256, device=DEVICE)
    foo.synchronize()

    def work() -> None:
        kept = torch.empty(1000, device=DEVICE)  # 4000 bytes, rounded to 4096
        (x + 1).sum()  # the temporary's last reference is the launched kernel's: freed on the stream's worker
        del kept

    prof = _profile(work, profile_memory=True)
    averages = {row.key: row for row in prof.key_averages()}
    assert averages["aten::empty"].self_device_memory_usage >= 4096
    assert averages["aten::add"].self_device_memory_usage == 256 * 256 * 4
    # Every device byte allocated in the block was freed in it, the worker's free included (a
    # free outside any op is a row of its own, "[memory]").
    assert sum(row.self_device_memory_usage for row in prof.key_averages()) == 0
    assert averages["[memory]"].self_device_memory_usage <= -256 * 256 * 4


def test_the_legacy_profiler_times_each_op_on_the_device() -> None:
    """use_kineto=False: PyTorch's PrivateUse1 profiler stubs record device events around each op."""
    a = torch.randn(128, 128, device=DEVICE)
    foo.synchronize()
    with torch.autograd.profiler.profile(use_device=DEVICE, use_kineto=False) as prof:
        (a @ a).relu()
        foo.synchronize()
    ops = {e.name: e for e in prof.function_events}
    assert ops["aten::mm"].device_time_total > 0 and ops["aten::relu"].device_time_total > 0


def test_a_driver_that_cannot_time_work_gives_host_events_and_says_so() -> None:
    """Exercised against the minimal driver in test_driver_seam.py; here the simulated driver
    says it can."""
    assert torch_foo._C._device_activity_supported() is True


def test_profiling_off_leaves_launches_untraced() -> None:
    """No profile: the driver keeps no records (its busy-time counter only runs while tracing)."""
    x = torch.randn(100, device=DEVICE)
    foo.synchronize()
    before = torch_foo._C._device_busy_time_for_testing(0)
    for _ in range(10):
        x.add_(1)
    foo.synchronize()
    assert torch_foo._C._device_busy_time_for_testing(0) == before


def test_profiling_in_a_fresh_process_with_launch_blocking(tmp_path: Path) -> None:
    """SCAFFOLD_LAUNCH_BLOCKING=1 runs kernels inside the launch: they are still device events."""
    code = (
        "import torch, torch_foo\n"
        "from torch.profiler import profile, ProfilerActivity\n"
        "x = torch.randn(32, 32, device='foo')\n"
        "with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:\n"
        "    (x @ x).relu()\n"
        "print(sorted({e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.PrivateUse1}))\n"
    )
    env = {"SCAFFOLD_LAUNCH_BLOCKING": "1", "PATH": "/usr/bin:/bin"}
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert ran.returncode == 0, ran.stderr[-3000:]
    assert ran.stdout.splitlines()[-1] == "['foo_kernel::mm.out', 'foo_kernel::relu']"
