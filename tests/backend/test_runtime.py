"""The foo backend as a whole: the CPU fallback, training, serialization, pinned memory, several
devices, error paths (never-fallback ops, out of memory, protected memory), threads and the
torch.foo module."""

from __future__ import annotations

import copy
import gc
import io
import os
import subprocess
import sys
import threading
import warnings
from collections.abc import Callable
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
import yaml

from foo_testing import DEVICE, assert_same, fallback_counts, foo, needs_host_views

REPO = Path(__file__).resolve().parents[2]
POLICY = yaml.safe_load((REPO / "yaml" / "foo.yaml").read_text())["fallback"]


# ---- CPU fallback -----------------------------------------------------------------------------


def _fallback_warnings(caught: list[warnings.WarningMessage], op: str) -> list[str]:
    return [str(w.message) for w in caught if f"'{op}' has no kernel for the 'foo' backend" in str(w.message)]


FALLBACK_CASES: list[tuple[str, Callable[[torch.Tensor], object]]] = [
    ("aten::cumprod.out", lambda t: torch.cumprod(t, 1)),  # fallback.explicit
    ("aten::sort.values_stable", lambda t: tuple(torch.sort(t, 1))),
    ("aten::topk.values", lambda t: tuple(torch.topk(t, 2, 1))),  # fallback.explicit
    ("aten::flip", lambda t: torch.flip(t, (0,))),
    ("aten::median", lambda t: torch.median(t)),
]


def test_fallback_policy_matches_the_yaml() -> None:
    """The cases below cover the explicit fallbacks of yaml/foo.yaml."""
    explicit = {f"aten::{op}" for op in POLICY["explicit"]}
    assert explicit <= {op for op, _ in FALLBACK_CASES}


@pytest.mark.parametrize("op,fn", FALLBACK_CASES, ids=[op for op, _ in FALLBACK_CASES])
def test_cpu_fallback(op: str, fn: Callable[[torch.Tensor], object]) -> None:
    x = torch.randn(4, 5, generator=torch.Generator().manual_seed(1))
    foo.reset_fallback_counts()  # also re-arms the once-per-op warning
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        first = fn(x.to(DEVICE))
        second = fn(x.to(DEVICE).t().contiguous().t())  # non-contiguous input too
    assert_same(first, fn(x))
    assert_same(second, fn(x))
    assert fallback_counts().get(op) == 2, fallback_counts()
    messages = _fallback_warnings(caught, op)
    assert len(messages) == 1, f"expected one warning for {op}, got {messages}"
    assert "runs on the CPU" in messages[0]
    # counts keep increasing, warnings stay quiet
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn(x.to(DEVICE))
    assert fallback_counts().get(op) == 3
    assert _fallback_warnings(caught, op) == []


def test_fallback_with_out_argument_and_inplace() -> None:
    x = torch.randn(3, 4)
    out = torch.empty(0, device=DEVICE)
    torch.cumprod(x.to(DEVICE), 0, out=out)
    assert_same(out, torch.cumprod(x, 0))
    y = x.to(DEVICE)
    y.tril_()  # in place, through the fallback: the device tensor itself is updated
    assert_same(y, x.tril())


@pytest.mark.parametrize(
    "fn,op",
    [
        (
            lambda: torch._cslt_sparse_mm(torch.eye(4, device=DEVICE), torch.eye(4, device=DEVICE)),
            "_cslt_sparse_mm",
        ),
    ],
    ids=["_cslt_sparse_mm"],
)
def test_never_fallback_ops_raise(fn: Callable[[], object], op: str) -> None:
    assert op in POLICY["never"]
    before = fallback_counts()
    with pytest.raises(NotImplementedError) as info:
        fn()
    message = str(info.value)
    assert f"aten::{op}" in message and "'foo'" in message and "fallback.never" in message
    assert fallback_counts().get(f"aten::{op}", 0) == before.get(f"aten::{op}", 0)


# ---- Training -------------------------------------------------------------------------------------


def _train(device: str, model: torch.nn.Module, optimizer_cls: type, loss_name: str, steps: int = 6) -> list[float]:
    model = copy.deepcopy(model).to(device)
    optimizer = optimizer_cls(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(3)
    x = torch.randn(32, 8, generator=g).to(device)
    if loss_name == "cross_entropy":
        target = torch.randint(0, 4, (32,), generator=g).to(device)
        loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] = F.cross_entropy
    else:
        target = torch.randn(32, 4, generator=g).to(device)
        loss_fn = F.mse_loss
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        loss = loss_fn(model(x), target)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    for p in model.parameters():
        assert p.device.type == device.split(":")[0]
    return losses


@pytest.mark.parametrize("optimizer_cls", [torch.optim.SGD, torch.optim.Adam], ids=["sgd", "adam"])
@pytest.mark.parametrize("loss_name", ["cross_entropy", "mse"])
def test_mlp_training_matches_cpu(optimizer_cls: type, loss_name: str) -> None:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    on_cpu = _train("cpu", model, optimizer_cls, loss_name)
    on_foo = _train(DEVICE, model, optimizer_cls, loss_name)
    assert on_cpu[-1] < on_cpu[0]  # it does train
    torch.testing.assert_close(on_foo, on_cpu, rtol=1e-5, atol=1e-6)


# ---- Serialization and pinned memory ---------------------------------------------------------------


@pytest.mark.parametrize("map_location", [None, "cpu", "foo", "foo:1"])
def test_save_load_roundtrip(map_location: str | None) -> None:
    x = torch.randn(3, 4)
    base = x.to(DEVICE)
    tensors = {"a": base, "view": base[1:, ::2], "ints": torch.arange(5).to(DEVICE)}
    buffer = io.BytesIO()
    torch.save(tensors, buffer)
    buffer.seek(0)
    loaded = torch.load(buffer, map_location=map_location)
    expected_device = torch.device(map_location or "foo:0")
    if expected_device.type == "foo" and expected_device.index is None:
        expected_device = torch.device("foo:0")
    for name, tensor in tensors.items():
        assert loaded[name].device == expected_device
        assert torch.equal(loaded[name].cpu(), tensor.cpu())
    assert loaded["view"].stride() == tensors["view"].stride()  # views keep their layout
    # the view still shares the loaded storage with its base, as saved
    assert loaded["view"].untyped_storage().data_ptr() == loaded["a"].untyped_storage().data_ptr()


def test_save_load_module_state_dict() -> None:
    model = torch.nn.Linear(4, 2).to(DEVICE)
    buffer = io.BytesIO()
    torch.save(model.state_dict(), buffer)
    buffer.seek(0)
    state = torch.load(buffer)
    assert all(v.device.type == DEVICE for v in state.values())
    other = torch.nn.Linear(4, 2).to(DEVICE)
    other.load_state_dict(state)
    assert torch.equal(other.weight.cpu(), model.weight.cpu())


def test_pin_memory() -> None:
    x = torch.randn(64, 3)
    assert not x.is_pinned()
    pinned = x.pin_memory()
    assert pinned.is_pinned() and not x.is_pinned()
    assert torch.equal(pinned, x)
    on_device = pinned.to(DEVICE, non_blocking=True)
    foo.synchronize()
    assert torch.equal(on_device.cpu(), x)
    back = torch.empty(64, 3).pin_memory()
    back.copy_(on_device, non_blocking=True)  # into pinned memory: enqueued, as in CUDA
    foo.synchronize()
    assert torch.equal(back, x)
    assert torch.empty(4, pin_memory=True).is_pinned()


# ---- Several devices ------------------------------------------------------------------------------


def test_two_devices_current_device() -> None:
    assert foo.device_count() >= 2
    assert torch.empty(2, device=DEVICE).device == torch.device("foo:0")
    foo.set_device(1)
    assert foo.current_device() == 1
    assert torch.empty(2, device=DEVICE).device == torch.device("foo:1")
    assert torch.randn(2, device=DEVICE).device == torch.device("foo:1")
    foo.set_device(0)
    with foo.device(1):
        assert foo.current_device() == 1
        assert torch.zeros(2, device=DEVICE).device == torch.device("foo:1")
    assert foo.current_device() == 0
    with pytest.raises(IndexError, match="invalid foo device index"):
        foo.set_device(foo.device_count())


def test_device_guard_allocates_on_the_operands_device() -> None:
    """With foo:0 current, ops on foo:1 tensors allocate their results on foo:1."""
    foo.set_device(0)
    a = torch.randn(256, 256).to("foo:1")
    before = [foo.memory_allocated(i) for i in (0, 1)]
    results = [a + a, a @ a, torch.relu(a), a.sum(0), torch.cat([a, a]), torch.softmax(a, 1), a.clone()]
    after = [foo.memory_allocated(i) for i in (0, 1)]
    assert all(r.device == torch.device("foo:1") for r in results)
    assert after[0] == before[0], "nothing may be allocated on foo:0"
    assert after[1] - before[1] >= sum(r.numel() * r.element_size() for r in results)
    assert foo.current_device() == 0  # the guard restored the current device
    assert_same(results[1], a.cpu() @ a.cpu())


@pytest.mark.parametrize(
    "fn",
    [
        lambda a, b: a + b,  # structured functional: meta check
        lambda a, b: torch.add(a, b, out=torch.empty(0, device=a.device)),  # kernel's own check
        lambda a, b: torch.mm(a, b),  # generated wrapper's check
        lambda a, b: torch.cat([a, b]),
        lambda a, b: torch.where(a > 0, a, b, out=torch.empty(0, device=a.device)),
        lambda a, b: torch.index_select(a, 0, b[0].long(), out=torch.empty(0, device=a.device)),
    ],
    ids=["add", "add.out", "mm", "cat", "where.out", "index_select.out"],
)
def test_mixing_devices_is_an_error(fn: Callable[[torch.Tensor, torch.Tensor], object]) -> None:
    a = torch.ones(2, 2, device="foo:0")
    b = torch.zeros(2, 2, device="foo:1")
    with pytest.raises(RuntimeError, match=r"foo:0.*foo:1|foo:1.*foo:0"):
        fn(a, b)


def test_mixing_cpu_and_device_is_an_error_except_for_scalars() -> None:
    a = torch.ones(2, 2, device=DEVICE)
    with pytest.raises(RuntimeError, match="cpu"):
        torch.add(a, torch.ones(2, 2), out=torch.empty(0, device=DEVICE))
    with pytest.raises(RuntimeError):
        a + torch.ones(2, 2)
    assert_same(a + torch.tensor(2.0), torch.full((2, 2), 3.0))  # a CPU 0-dim tensor is a scalar
    assert_same(torch.tensor(2.0) * a, torch.full((2, 2), 2.0))


def test_copy_between_devices_keeps_both() -> None:
    x = torch.randn(100)
    a = x.to("foo:0")
    b = a.to("foo:1")
    c = b.to("foo:0")
    assert (a.device, b.device, c.device) == (torch.device("foo:0"), torch.device("foo:1"), torch.device("foo:0"))
    assert torch.equal(c.cpu(), x)


# ---- Memory ---------------------------------------------------------------------------------------


def test_out_of_memory_is_reported_and_recoverable() -> None:
    capacity = foo.get_memory_capacity()
    keep = torch.ones(1024, device=DEVICE)
    try:
        foo.set_memory_capacity(64 << 20)
        with pytest.raises(torch.OutOfMemoryError) as info:
            torch.empty(100 << 20, dtype=torch.uint8, device=DEVICE)
        message = str(info.value)
        assert "foo:0" in message
        assert "100.00 MiB" in message and "64.00 MiB" in message  # requested size and capacity
        assert foo.memory_stats()["oom_count"] >= 1
        small = torch.ones(1000, device=DEVICE)  # within capacity: still fine
        assert small.sum().item() == 1000
    finally:
        foo.set_memory_capacity(capacity)
    assert foo.get_memory_capacity() == capacity
    big = torch.ones(100 << 20, dtype=torch.uint8, device=DEVICE)  # works again
    assert big[-1].item() == 1 and keep.sum().item() == 1024


def test_memory_stats_move() -> None:
    foo.synchronize()
    start = foo.memory_allocated()
    foo.reset_peak_memory_stats()
    x = torch.empty(1 << 20, device=DEVICE)  # 4 MiB
    assert foo.memory_allocated() - start >= 4 << 20
    assert foo.memory_reserved() >= foo.memory_allocated()
    stats = foo.memory_stats()
    assert stats["active_blocks"] >= 1 and stats["alloc_requests"] >= 1
    del x
    assert foo.memory_allocated() == start
    assert foo.max_memory_allocated() >= start + (4 << 20)
    foo.empty_cache()
    assert foo.memory_reserved() <= foo.memory_stats()["reserved_bytes"] + 1


def test_freed_small_blocks_are_reused_and_never_make_the_device_reserve_more() -> None:
    """A freed small block is parked for the next allocation of its size (what a loop of small ops
    does), and parked blocks are coalesced back before the allocator would map memory: 4000 freed
    1 KiB blocks make room for a 1 MiB tensor in the segments already reserved. They need two 2 MiB
    segments, so one holds nothing else and empty_cache can release it (with 2000, tensors earlier
    tests left alive could share their one segment: it failed so on torch 2.11)."""
    gc.collect()  # an earlier test's tensors, held by a reference cycle, must not be freed midway
    foo.synchronize()
    start = foo.memory_allocated()
    a = torch.empty(256, device=DEVICE)
    address = a.data_ptr()
    del a
    assert torch.empty(256, device=DEVICE).data_ptr() == address

    blocks = [torch.empty(256, device=DEVICE) for _ in range(4000)]
    reserved, maps = foo.memory_reserved(), foo.memory_stats()["segment_maps"]
    del blocks
    assert foo.memory_allocated() == start
    big = torch.ones(1 << 18, device=DEVICE)  # 1 MiB: no parked 1 KiB block fits it
    assert (foo.memory_reserved(), foo.memory_stats()["segment_maps"]) == (reserved, maps)
    assert big.sum().item() == 1 << 18
    del big
    foo.empty_cache()  # parked blocks too: the segments they filled are released
    assert foo.memory_reserved() < reserved


# Variables the tests set themselves: the caller's must not leak in.
_SET_BY_TESTS = (
    "PYTHONFAULTHANDLER", "SCAFFOLD_PROTECT_MEMORY", "SCAFFOLD_DEVICE_ADDRESS_SPAN_GIB", "SCAFFOLD_DEVICE_THREADS"
)


def _run_python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k not in _SET_BY_TESTS}
    environment.update(env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environment, timeout=120)


READ_DEVICE_POINTER = """
import ctypes, torch
t = torch.full((4,), 2.5, device="foo")
torch.foo.synchronize()  # the fill is launched on the stream, as a CUDA kernel is
print("protected:", torch.foo.memory_protection_enabled(), flush=True)
print("value:", ctypes.c_float.from_address(t.data_ptr()).value, flush=True)
"""


def test_host_read_of_device_memory_segfaults() -> None:
    result = _run_python(READ_DEVICE_POINTER)
    assert result.returncode == -11, (result.returncode, result.stdout, result.stderr)
    assert "protected: True" in result.stdout and "value:" not in result.stdout


def test_host_read_works_without_memory_protection() -> None:
    result = _run_python(READ_DEVICE_POINTER, SCAFFOLD_PROTECT_MEMORY="0")
    assert result.returncode == 0, result.stderr
    assert "protected: False" in result.stdout and "value: 2.5" in result.stdout


def test_kernels_work_without_memory_protection() -> None:
    result = _run_python(
        "import torch\n"
        "a = torch.randn(50, 40); b = torch.randn(40, 30)\n"
        "r = (a.to('foo') @ b.to('foo')).relu().sum(1)\n"
        "assert torch.allclose(r.cpu(), (a @ b).relu().sum(1)), 'mismatch'\n"
        "print('ok', torch.foo.memory_protection_enabled())\n",
        SCAFFOLD_PROTECT_MEMORY="0",
    )
    assert result.returncode == 0 and "ok False" in result.stdout, result.stderr


SMALL_ADDRESS_SPACE = """
import resource
resource.setrlimit(resource.RLIMIT_AS, (48 << 30, 48 << 30))  # as `ulimit -v` would
import torch
try:
    x = torch.ones(1024, device="foo")
    print("ok", torch.foo.get_device_properties(0).total_memory, (x + 1).sum().item())
except RuntimeError as e:
    print("refused", e)
"""


@pytest.mark.parametrize("span", [None, "1"], ids=["default span", "1 GiB per device"])
def test_an_address_space_limit_needs_a_smaller_device_span(span: str | None) -> None:
    """The driver reserves device count x span twice (256 GiB per device by default): under a
    48 GiB address-space limit the first allocation fails, saying how much it reserved and what
    makes it smaller; with SCAFFOLD_DEVICE_ADDRESS_SPAN_GIB=1 the devices work, 1 GiB each."""
    environment = {} if span is None else {"SCAFFOLD_DEVICE_ADDRESS_SPAN_GIB": span}
    result = _run_python(SMALL_ADDRESS_SPACE, **environment)
    assert result.returncode == 0, result.stderr
    if span is None:
        assert result.stdout.startswith("refused"), result.stdout
        assert "GiB: SCAFFOLD_DEVICE_ADDRESS_SPAN_GIB sets the GiB per device" in result.stdout
    else:
        assert result.stdout.split() == ["ok", str(1 << 30), "2048.0"], result.stdout


# A configuration error fails `import torch_foo`; `import torch` alone (the autoload entry point)
# only warns with the same message, so that the process can still use torch.
IMPORT_BOTH = """
import warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import torch
print("import torch warned:", [str(w.message) for w in caught if "torch_foo was not loaded" in str(w.message)])
import torch_foo
"""


def test_a_malformed_device_span_fails_the_import_naming_it() -> None:
    result = _run_python(IMPORT_BOTH, SCAFFOLD_DEVICE_ADDRESS_SPAN_GIB="3")
    assert result.returncode != 0
    message = "SCAFFOLD_DEVICE_ADDRESS_SPAN_GIB='3' must be a power of two from 1 to 256"
    assert message in result.stderr and message in result.stdout


def test_a_malformed_device_thread_count_fails_the_import_naming_it() -> None:
    result = _run_python(IMPORT_BOTH, SCAFFOLD_DEVICE_THREADS="0")
    assert result.returncode != 0
    message = "SCAFFOLD_DEVICE_THREADS='0' must be an integer in 1..4096"
    assert message in result.stderr and message in result.stdout


COUNT_COMPUTE_THREADS = """
import os, torch
x = torch.randn(512, 512)
(x @ x).sum().item()  # the host thread's own OpenMP team, if it has one, exists from here on
before = len(os.listdir("/proc/self/task"))
y = x.to("foo")
for _ in range(3):
    y = torch.tanh(y @ y)  # launched: computed on the stream's worker
torch.foo.synchronize()
print(torch.foo.get_device_properties().multi_processor_count, len(os.listdir("/proc/self/task")) - before)
"""


@needs_host_views  # the simulated device's kernels on its stream workers
def test_the_stream_worker_computes_with_the_configured_number_of_threads() -> None:
    """SCAFFOLD_DEVICE_THREADS is the OpenMP team of a stream's worker: with 2 threads, the worker
    starts one helper that it does not with 1 (the worker itself and the copy helpers are the same
    in both runs). ATen caps a thread's team at the cores, so 2 is the most a 2-core machine shows.
    The device reports them as its multiprocessor count, which Inductor writes its kernels for."""
    new_threads = {}
    for threads in ("1", "2"):
        result = _run_python(COUNT_COMPUTE_THREADS, SCAFFOLD_DEVICE_THREADS=threads)
        assert result.returncode == 0, result.stderr
        multiprocessors, started = result.stdout.split()[-2:]
        assert multiprocessors == threads
        new_threads[threads] = int(started)
    assert new_threads["2"] - new_threads["1"] == 1, new_threads


LEND_THE_HOST_CORE = """
import os, threading, time, torch
def threads(): return len(os.listdir("/proc/self/task"))
x = torch.randn(1024, 1024, device="foo")
torch.foo.synchronize()
seen, start, stop = [], threading.Event(), threading.Event()
def sample():
    start.wait()
    while not stop.is_set():
        seen.append(threads())
        time.sleep(0.001)
sampler = threading.Thread(target=sample)
sampler.start()
time.sleep(0.2)  # the stream's worker started, idle
before = threads()  # the sampler's thread included
y = x
for _ in range(12):  # 24 kernels: fewer than a host thread runs itself (below)
    y = torch.tanh(y @ x)  # about half a second of matrix products, queued on the stream
start.set()
torch.foo.synchronize()  # the host thread sleeps until they are done
stop.set()
sampler.join()
time.sleep(0.2)
print(max(seen) - before, threads() + 1 - before)
"""


@needs_host_views  # the simulated device's kernels on its stream workers
@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: nothing to lend")
def test_the_device_computes_on_the_host_core_while_the_host_sleeps_in_a_synchronize() -> None:
    """The stream's worker leaves a core to the host thread that launches its work, and takes it
    once the host has been asleep in a synchronisation for 5 ms: its OpenMP team grows by
    the one thread, and lets it go when the device is done (a pooled thread would spin on the
    host's core). With SCAFFOLD_DEVICE_THREADS the count is fixed and nothing is lent."""
    for env, lent in (({}, 1), ({"SCAFFOLD_DEVICE_THREADS": "1"}, 0)):
        result = _run_python(LEND_THE_HOST_CORE, **env)
        assert result.returncode == 0, result.stderr
        while_sleeping, after = (int(n) for n in result.stdout.split()[-2:])
        assert (while_sleeping, after) == (lent, 0), (env, result.stdout)


HOST_RUNS_THE_QUEUE = """
import os, threading, torch
from torch.utils._python_dispatch import TorchDispatchMode
class SeenOps(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.ops = []
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(str(func))
        return func(*args, **(kwargs or {}))
kernel = torch.ops.scaffold_runtime._kernel_thread_for_testing
x = torch.randn(1 << 20, device="foo")
(x + 1).sum().item()  # the worker's first ATen kernels set its OpenMP count (ATen's lazy start)
count, micros = int(os.environ["KERNELS"]), int(os.environ["MICROS"])
first_micros = int(os.environ.get("FIRST_MICROS", micros))
recent = torch.zeros(64, 3, dtype=torch.int64, device="foo")
for row in range(64):  # the stream's recent kernels take `micros` each: its mean forgets the first ones
    kernel(recent, row, 0, micros)
    if row % 16 == 15:
        torch.foo.synchronize()  # a short queue, which the worker runs
out = torch.zeros(count, 3, dtype=torch.int64, device="foo")
before = (os.sched_getaffinity(0), torch.get_num_threads())
for row in range(count):  # the queue is long when the host synchronizes
    kernel(out, row, 1 if row == count - 1 else 0, first_micros if row == 0 else micros)
with SeenOps() as seen:
    torch.foo.synchronize()
rows = out.cpu().tolist()
host = [row for row in rows if row[0] == threading.get_native_id()]
print(len(host), rows[-2][1], rows[-1][1], torch.get_num_threads())
print([row[2] for row in rows] == list(range(rows[0][2], rows[0][2] + count)), seen.ops,
      (os.sched_getaffinity(0), torch.get_num_threads()) == before)
"""


@needs_host_views  # the simulated device's kernels on its stream workers
@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="one core: the host's is the device's")
def test_a_host_thread_synchronizing_with_a_long_queue_runs_it_itself() -> None:
    """A host thread about to sleep in a synchronisation with 32 or more pieces of work queued, expected
    to take 2 ms or more by the stream's recent kernels, runs them itself, with its own OpenMP team,
    instead of leaving its core idle while the worker computes on one: in stream order (the worker
    hands over between two pieces), with the dispatch state of a worker (a Python mode active around
    the synchronize sees none of the kernels' own CPU ops), a kernel's thread limit for that kernel
    only, and the host thread's affinity and thread count as they were. With fewer queued, or a
    long queue of short kernels (here behind a slow one), the worker finishes them, and with
    SCAFFOLD_DEVICE_THREADS (the device's threads fixed) the host never computes for it."""
    for env, host_runs in (({"KERNELS": "40", "MICROS": "1000"}, True),
                           ({"KERNELS": "8", "MICROS": "1000"}, False),
                           ({"KERNELS": "40", "MICROS": "0", "FIRST_MICROS": "50000"}, False),
                           ({"KERNELS": "40", "MICROS": "1000", "SCAFFOLD_DEVICE_THREADS": "1"}, False)):
        result = _run_python(HOST_RUNS_THE_QUEUE, **env)
        assert result.returncode == 0, result.stderr
        counts, in_order = result.stdout.strip().split("\n")[-2:]
        on_host, second_to_last, last, host_threads = (int(n) for n in counts.split())
        assert in_order == "True [] True", (env, result.stdout)
        if host_runs:  # the rest from where the worker handed over
            assert on_host >= 2 and (second_to_last, last) == (host_threads, 1), (env, result.stdout)
        else:
            assert on_host == 0 and last == 1, (env, result.stdout)


KERNEL_THREADS = """
import torch
x = torch.randn(1 << 20, device="foo")
(x + 1).sum().item()  # the worker's first ATen kernels set its OpenMP count (ATen's lazy start)
out = torch.zeros(2, dtype=torch.int64, device="foo")
for limit in (0, 1, 0):
    torch.ops.scaffold_runtime._kernel_threads_for_testing(out, limit)
    print(*out.tolist())
print(torch.get_num_threads())
"""


@needs_host_views  # the simulated device's kernels on its stream workers
def test_a_kernel_may_compute_on_fewer_threads_than_the_device_has() -> None:
    """A launched kernel that limits itself (drvLimitKernelThreads; oneDNN's small convolutions run
    faster on one thread) computes on that many, and the kernel after it on the device's threads
    again. Run inline (launch blocking), on the caller's thread, the limit changes nothing there."""
    result = _run_python(KERNEL_THREADS, SCAFFOLD_DEVICE_THREADS="2")
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:3] == ["2 2", "1 2", "2 2"], result.stdout
    result = _run_python(KERNEL_THREADS, SCAFFOLD_DEVICE_THREADS="2", SCAFFOLD_LAUNCH_BLOCKING="1")
    assert result.returncode == 0, result.stderr
    *per_kernel, host = result.stdout.split()
    assert per_kernel == [host] * 6, result.stdout


# ---- Threads --------------------------------------------------------------------------------------


def test_threads_compute_like_cpu() -> None:
    """Several Python threads running foo ops at once (on both devices) get the CPU's results."""
    errors: list[BaseException] = []
    results: dict[int, list[torch.Tensor]] = {}

    def work(index: int) -> None:
        try:
            g = torch.Generator().manual_seed(index)
            a, b = torch.randn(64, 48, generator=g), torch.randn(48, 32, generator=g)
            foo.set_device(index % 2)  # per-thread current device
            fa, fb = a.to(DEVICE), b.to(DEVICE)
            out = []
            for step in range(30):
                y = torch.softmax(torch.relu(fa @ fb + step), 1).sum(0)
                out.append(y)
            assert all(t.device == torch.device(f"foo:{index % 2}") for t in out)
            expected = [torch.softmax(torch.relu(a @ b + step), 1).sum(0) for step in range(30)]
            for got, want in zip(out, expected, strict=True):
                torch.testing.assert_close(got.cpu(), want)
            results[index] = out
        except BaseException as err:  # noqa: BLE001 -- reported by the main thread
            errors.append(err)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    assert sorted(results) == list(range(6))
    assert foo.current_device() == 0  # other threads' set_device did not leak here


# ---- torch.foo --------------------------------------------------------------------------------------


def test_torch_foo_api() -> None:
    expected_count = int(os.environ.get("SCAFFOLD_DEVICE_COUNT", "2"))
    assert foo.device_count() == expected_count
    assert foo.is_available()
    assert foo.current_device() == 0
    foo.set_device("foo:1")
    assert foo.current_device() == 1
    foo.set_device(torch.device("foo", 0))
    assert foo.current_device() == 0
    foo.synchronize()
    foo.synchronize(1)
    assert torch.device(DEVICE).type == "foo"
    # Methods torch_foo generates on Tensor and Module at import time (mypy cannot see them).
    assert getattr(torch.ones(2), DEVICE)().device == torch.device("foo:0")  # Tensor.foo()
    assert getattr(torch.ones(2, device=DEVICE), f"is_{DEVICE}")
    assert next(getattr(torch.nn.Linear(2, 2), DEVICE)().parameters()).device.type == "foo"


def test_manual_seed_reproducibility() -> None:
    foo.manual_seed(42)
    first = torch.randn(1000, device=DEVICE).cpu()
    foo.manual_seed(42)
    again = torch.randn(1000, device=DEVICE).cpu()
    foo.manual_seed(43)
    other = torch.randn(1000, device=DEVICE).cpu()
    assert torch.equal(first, again) and not torch.equal(first, other)
    assert foo.initial_seed() == 43
    state = foo.get_rng_state()
    a = torch.rand(10, device=DEVICE).cpu()
    foo.set_rng_state(state)
    assert torch.equal(torch.rand(10, device=DEVICE).cpu(), a)
    # per-device generators: seeding foo:0 leaves foo:1 alone
    foo.manual_seed_all(5)
    x1 = torch.randn(10, device="foo:1").cpu()
    foo.manual_seed(6)
    foo.set_device(1)
    foo.manual_seed(5)
    assert torch.equal(torch.randn(10, device="foo:1").cpu(), x1)
    # and a foo generator gives the CPU's stream for the same seed
    foo.manual_seed(9)
    torch.manual_seed(9)
    assert torch.equal(torch.randn(5, 5, device="foo:1").cpu(), torch.randn(5, 5))


def test_random_ops_through_the_fallback_use_the_cpu_generator() -> None:
    """exponential_ has no foo kernel: it runs on the CPU, drawing from the CPU generator.
    torch.manual_seed seeds both, so it is reproducible that way; torch.foo.manual_seed alone does
    not govern it (only native random kernels: normal_, uniform_, bernoulli_, random_, dropout)."""
    torch.manual_seed(1)
    a = torch.empty(10000, device=DEVICE).exponential_()
    torch.manual_seed(1)
    b = torch.empty(10000, device=DEVICE).exponential_()
    assert a.device.type == DEVICE and torch.equal(a.cpu(), b.cpu())
    assert 0.9 < a.cpu().mean().item() < 1.1
    assert fallback_counts().get("aten::exponential_", 0) >= 2
