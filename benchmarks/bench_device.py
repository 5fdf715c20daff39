"""Latency of the reference backend `foo` against the CPU. A script that prints figures, not a test.

What is compared (each figure is the median over many timed samples, time.perf_counter; every
measurement is taken in ROUNDS interleaved rounds and the lowest round median is reported, so that a
transient slow spell of the machine -- a shared 2-core VM shows them -- skews neither side):

* native ops:  the same call on foo -- the backend's own kernels, no CPU fallback -- and on the CPU,
               for a spread of the ops foo implements natively: functional binary ops with tensor and
               Python-scalar operands (add, mul, div, maximum), unary ops (exp, sigmoid, relu), an
               in-place op (add_), and where and index_select. Small tensors: every op, each with its
               ratio, then their geometric mean and the worst ratio. Large tensors: add, maximum, exp,
               timed to their completion (a synchronize per call on foo).
* fallback op: torch.fmax(a, b) on foo. fmax is maximum's twin (same ATen CPU kernel
               structure and cost) but has no foo kernel, so it runs through the boxed CPU fallback
               (arguments copied to the host, result copied back). Compared with maximum on foo
               (native) and with fmax on the CPU.
* allocation:  torch.empty(256) (1 KiB float32) on foo (caching device allocator) vs the CPU.
* launch path: on a side stream (its context entered once, outside the timed loop: what is measured
               is the launch, not Python's context manager), dst.copy_(pinned, non_blocking=True) and
               torch.add(a, b) -- both enqueued on the driver stream's worker thread, the host does
               not wait -- vs the same copy between two CPU tensors and the same add on the CPU.
               Small tensors: the cost of the launch alone (the queue is drained after each sample,
               outside the timing). Large tensors: launch and completion (a synchronize per call),
               i.e. the worker's throughput.

* profiling:   16-element native ops (add, a * 2.0, relu, add_) inside torch.profiler.profile, against
               the same ops unprofiled in the same run: with the device's activity
               (activities=[CPU, PrivateUse1]: every kernel timed by the driver, correlated, its
               launch recorded), with the CPU activity only (PyTorch's own op recording, no device
               tracing), and the same ops on the CPU with the CPU activity (the profiler's cost on a
               backend without a device). Asynchronous mode only. Goal: profiling on costs at most
               2x per op. Profiling off is the native-op figures above (the hooks are a relaxed
               load each).

for small (16 elements) and large (4M elements) float32 tensors, in three configurations, each in
its own subprocess since the variables are read once at startup: streams asynchronous with device
memory protection on (the default), protection off (SCAFFOLD_PROTECT_MEMORY=0), and every stream
synchronous (SCAFFOLD_LAUNCH_BLOCKING=1). Goals: native small ops within 1.2x of the CPU
(every native kernel is itself launched on the current stream, so in the asynchronous modes this is
the launch path of the default stream), native large ops within 1.05x, allocation within 2x, the
asynchronous launch of 16-element work within 2x and 4M-element work within 1.05x. Always exits 0.

    python benchmarks/bench_device.py           # table on stdout, progress on stderr
    python benchmarks/bench_device.py --json    # the raw figures
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

from harness import geomean, median_seconds, run_worker, verdict

torch: Any = None  # the worker imports it

SMALL, LARGE = 16, 4 * 1024 * 1024
ROUNDS = 5
GOALS = {"small": 1.2, "large": 1.05, "alloc": 2.0, "launch/small": 2.0, "launch/large": 1.05, "profiling": 2.0}
PROFILED_OPS = ("add", "mul_scalar", "relu", "add_")
# what a profiled measurement records -> (title, the device its ops run on, with the device's activity)
PROFILINGS = {
    "foo+device": ("foo, activities=[CPU, PrivateUse1]", "foo", True),
    "foo+cpu": ("foo, activities=[CPU]", "foo", False),
    "cpu+cpu": ("CPU, activities=[CPU]", "cpu", False),
}
# mode -> environment of its worker
MODES = {
    "on": {"SCAFFOLD_PROTECT_MEMORY": "1", "SCAFFOLD_LAUNCH_BLOCKING": "0"},
    "off": {"SCAFFOLD_PROTECT_MEMORY": "0", "SCAFFOLD_LAUNCH_BLOCKING": "0"},
    "blocking": {"SCAFFOLD_PROTECT_MEMORY": "1", "SCAFFOLD_LAUNCH_BLOCKING": "1"},
}
MODE_TITLES = {
    "on": "asynchronous streams, memory protection on",
    "off": "asynchronous streams, memory protection off",
    "blocking": "SCAFFOLD_LAUNCH_BLOCKING=1 (every stream synchronous), memory protection on",
}

# name -> (what the table calls it, the call on tensors t: a, b (randn), mask (bool), index, buffer
# (a tensor the in-place op may change), the native foo op(s) it must run on).
NATIVE_OPS: dict[str, tuple[str, Callable[[dict[str, Any]], object], tuple[str, ...]]] = {
    "add": ("add(a, b)", lambda t: torch.add(t["a"], t["b"]), ("aten::add.Tensor",)),
    "mul_scalar": ("a * 2.0", lambda t: t["a"] * 2.0, ("aten::mul.Tensor",)),
    "div": ("div(a, b)", lambda t: torch.div(t["a"], t["b"]), ("aten::div.Tensor",)),
    "maximum": ("maximum(a, b)", lambda t: torch.maximum(t["a"], t["b"]), ("aten::maximum",)),
    "exp": ("exp(a)", lambda t: torch.exp(t["a"]), ("aten::exp",)),
    "sigmoid": ("sigmoid(a)", lambda t: torch.sigmoid(t["a"]), ("aten::sigmoid",)),
    "relu": ("relu(a)", lambda t: torch.relu(t["a"]), ("aten::relu",)),
    "add_": ("buffer.add_(b), in place", lambda t: t["buffer"].add_(t["b"]), ("aten::add_.Tensor",)),
    "where": ("where(mask, a, b)", lambda t: torch.where(t["mask"], t["a"], t["b"]), ("aten::where.self",)),
    "index_select": (
        "index_select(a, 0, index)",
        lambda t: torch.index_select(t["a"], 0, t["index"]),
        ("aten::index_select",),
    ),
}
LARGE_OPS = ("add", "maximum", "exp")


def _then(call: Callable[[], object], finish: Callable[[], object]) -> None:
    """``call``, then ``finish`` (a synchronisation: what is measured is the work's completion)."""
    call()
    finish()


def _tensors(n: int, device: str) -> dict[str, Any]:
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(n, generator=g), torch.randn(n, generator=g)
    index = torch.randint(0, n, (n // 2,), generator=g)
    cpu = {"a": a, "b": b, "mask": a > 0, "index": index, "buffer": torch.zeros(n)}
    return {name: t.to(device) for name, t in cpu.items()}


def profiled(results: dict[str, float]) -> None:
    """The 16-element ops of PROFILED_OPS inside torch.profiler.profile (PROFILINGS), one profile
    per measurement; ROUNDS rounds, the lowest median kept, as everywhere."""
    from torch.profiler import ProfilerActivity, profile

    tensors = {device: _tensors(SMALL, device) for device in ("cpu", "foo")}
    for round_ in range(ROUNDS):
        for op in PROFILED_OPS:
            for kind, (_, device, with_device) in PROFILINGS.items():
                fn = lambda t=tensors[device], f=NATIVE_OPS[op][1]: f(t)  # noqa: E731
                activities = [ProfilerActivity.CPU] + ([ProfilerActivity.PrivateUse1] if with_device else [])
                with profile(activities=activities):
                    us = 1e6 * median_seconds(fn, batch=100, samples=30, warmup=50, after=torch.foo.synchronize)
                key = f"profiled/{op}/{kind}"
                results[key] = min(us, results.get(key, math.inf))
                print(f"  round {round_ + 1}: {key}: {us:.2f} us", file=sys.stderr)


def worker(profiling: bool) -> dict[str, float]:
    """Runs in a subprocess (memory protection is fixed at startup): all timings, in microseconds."""
    global torch  # imported here only: the parent process just runs workers and prints
    import torch
    import torch_foo  # noqa: F401  (autoloaded already, unless TORCH_DEVICE_BACKEND_AUTOLOAD=0)

    foo: Any = torch.get_device_module("foo")  # torch.foo, which the backend adds at run time

    warnings.simplefilter("ignore")  # the fallback's once-per-op warning
    results: dict[str, float] = {"protected": float(foo.memory_protection_enabled())}
    for label, n in (("small", SMALL), ("large", LARGE)):
        batch, samples, warmup = (200, 100, 200) if label == "small" else (1, 60, 5)
        tensors = {device: _tensors(n, device) for device in ("cpu", "foo")}
        ops = list(NATIVE_OPS) if label == "small" else list(LARGE_OPS)
        cases: dict[str, Callable[[], object]] = {}
        for op in ops + ["fmax"]:
            for device, t in tensors.items():
                call: Callable[[], object]
                if op == "fmax":  # foo: the CPU fallback
                    call = functools.partial(torch.fmax, t["a"], t["b"])
                else:
                    call = functools.partial(NATIVE_OPS[op][1], t)
                if label == "large" and device == "foo":
                    # The kernel's completion, not its launch: a launch returns before a 4M-element
                    # kernel has run, which made the asynchronous modes look 50x faster than the CPU.
                    call = functools.partial(_then, call, foo.synchronize)
                cases[f"{op}/{device}"] = call
        for round_ in range(ROUNDS):
            for name, fn in cases.items():
                key = f"{name}/{label}"
                # (drained after each sample: foo's kernels are launched on the default stream)
                us = 1e6 * median_seconds(fn, batch=batch, samples=samples, warmup=warmup, after=foo.synchronize)
                results[key] = min(us, results.get(key, math.inf))
                print(f"  round {round_ + 1}: {key}: {us:.2f} us", file=sys.stderr)
    side = foo.Stream()
    for label, n in (("small", SMALL), ("large", LARGE)):
        batch, samples, warmup = (200, 60, 200) if label == "small" else (1, 40, 5)
        pinned, host_dst, device_dst = torch.randn(n).pin_memory(), torch.empty(n), torch.empty(n, device="foo")
        host = _tensors(n, "cpu")
        with foo.stream(side):
            dev = _tensors(n, "foo")  # on the side stream, as everything launched below

        def complete(fn: Callable[[], object], label: str = label) -> Callable[[], object]:
            return fn if label == "small" else functools.partial(_then, fn, side.synchronize)

        launches: dict[str, Callable[[], object]] = {
            "copy/cpu": functools.partial(host_dst.copy_, pinned),
            "copy/foo": complete(functools.partial(device_dst.copy_, pinned, non_blocking=True)),
            "add/cpu": functools.partial(torch.add, host["a"], host["b"]),
            "add/foo": complete(functools.partial(torch.add, dev["a"], dev["b"])),
        }
        with foo.stream(side):  # entered once: the launch is measured, not the context manager
            for round_ in range(ROUNDS):
                for name, fn in launches.items():
                    key = f"launch/{name}/{label}"
                    us = 1e6 * median_seconds(fn, batch=batch, samples=samples, warmup=warmup, after=side.synchronize)
                    results[key] = min(us, results.get(key, math.inf))
                    print(f"  round {round_ + 1}: {key}: {us:.2f} us", file=sys.stderr)
    for round_ in range(ROUNDS):
        for device in ("cpu", "foo"):
            fn = functools.partial(torch.empty, 256, device=device)
            us = 1e6 * median_seconds(fn, batch=500, samples=60, warmup=500)
            results[f"alloc/{device}"] = min(us, results.get(f"alloc/{device}", math.inf))
            print(f"  round {round_ + 1}: alloc/{device}: {us:.3f} us", file=sys.stderr)
    if profiling:
        profiled(results)
    fell_back = foo.fallback_counts()
    native = {name for _, _, names in NATIVE_OPS.values() for name in names}
    assert not native & set(fell_back), f"native ops ran through the CPU fallback: {fell_back}"
    assert fell_back.get("aten::fmax.out", 0) > 0, "fmax did not run through the fallback"
    return results


def run_worker_of(mode: str) -> dict[str, float]:
    print(f"measuring: {MODE_TITLES[mode]} ...", file=sys.stderr)
    return run_worker(__file__, ["--profiling"] if mode == "on" else [], MODES[mode], timeout=900)


def report(runs: dict[str, dict[str, float]]) -> None:
    header = f"{'measurement':<48}{'CPU us':>10}{'foo us':>10}{'foo/CPU':>9}  goal"
    for mode, r in runs.items():
        print(f"\n{MODE_TITLES[mode]}")
        print(header)
        print("-" * len(header))
        for label in ("small", "large"):
            size = f"{SMALL} el" if label == "small" else "4M el, with completion"
            goal = GOALS[label]
            ops = list(NATIVE_OPS) if label == "small" else list(LARGE_OPS)
            ratios = {}
            for op in ops:
                cpu, foo = r[f"{op}/cpu/{label}"], r[f"{op}/foo/{label}"]
                ratios[op] = foo / cpu
                name = f"native {NATIVE_OPS[op][0]}, {size}"
                print(f"{name:<48}{cpu:>10.2f}{foo:>10.2f}{ratios[op]:>9.2f}  <= {goal}: {verdict(ratios[op], goal)}")
            if len(ops) > 1:
                mean = geomean(ratios.values())
                worst = max(ratios, key=ratios.__getitem__)
                mean_label = f"  native ops, {size}: geometric mean"
                worst_label = f"  native ops, {size}: worst ({worst})"
                print(f"{mean_label:<68}{mean:>9.2f}  <= {goal}: {verdict(mean, goal)}")
                print(f"{worst_label:<68}{ratios[worst]:>9.2f}  <= {goal}: {verdict(ratios[worst], goal)}")
            cpu, foo = r[f"fmax/cpu/{label}"], r[f"fmax/foo/{label}"]
            native = r[f"maximum/foo/{label}"]
            print(
                f"{'fmax via CPU fallback, ' + size:<48}{cpu:>10.2f}{foo:>10.2f}{foo / cpu:>9.2f}"
                f"  (no goal; {foo / native:.1f}x foo-native maximum)"
            )
        cpu, foo = r["alloc/cpu"], r["alloc/foo"]
        ratio = foo / cpu
        goal = GOALS["alloc"]
        allocation = "torch.empty(256) allocation"
        print(f"{allocation:<48}{cpu:>10.3f}{foo:>10.3f}{ratio:>9.2f}  <= {goal}: {verdict(ratio, goal)}")
        print(f"{'  -> allocations per second':<48}{1e6 / cpu:>10.0f}{1e6 / foo:>10.0f}")
        for label in ("small", "large"):
            size = f"{SMALL} el" if label == "small" else "4M el, with completion"
            goal = GOALS[f"launch/{label}"]
            for what, title in (("copy", "non_blocking copy from pinned"), ("add", "add(a, b)")):
                cpu, foo = r[f"launch/{what}/cpu/{label}"], r[f"launch/{what}/foo/{label}"]
                name = f"side stream: {title}, {size}"
                print(f"{name:<48}{cpu:>10.2f}{foo:>10.2f}{foo / cpu:>9.2f}  <= {goal}: {verdict(foo / cpu, goal)}")
    report_profiling(runs["on"])
    on, off, blocking = runs["on"], runs["off"], runs["blocking"]
    print("\ncost of memory protection (foo, on/off): " + ", ".join(
        f"{key.replace('/foo', '')} {on[key] / off[key]:.2f}x"
        for key in ("add/foo/small", "add/foo/large", "fmax/foo/small", "fmax/foo/large", "alloc/foo")
    ))
    print("cost of asynchronous streams (foo, async/blocking): " + ", ".join(
        f"{key.replace('/foo', '')} {on[key] / blocking[key]:.2f}x"
        for key in ("add/foo/small", "add/foo/large", "launch/add/foo/small", "launch/copy/foo/small", "alloc/foo")
    ))


def report_profiling(r: dict[str, float]) -> None:
    goal = GOALS["profiling"]
    print(f"\nprofiling, {SMALL} el, asynchronous streams (each op profiled / the same op unprofiled, same run)")
    header = f"{'op':<28}" + "".join(f"{title:>38}" for title, _, _ in PROFILINGS.values())
    print(header)
    print("-" * len(header))
    ratios: dict[str, list[float]] = {kind: [] for kind in PROFILINGS}
    for op in PROFILED_OPS:
        cells = []
        for kind, (_, device, _) in PROFILINGS.items():
            plain, profiled_us = r[f"{op}/{device}/small"], r[f"profiled/{op}/{kind}"]
            ratios[kind].append(profiled_us / plain)
            cells.append(f"{plain:.2f} -> {profiled_us:.2f} us: {profiled_us / plain:.2f}x")
        print(f"{NATIVE_OPS[op][0]:<28}" + "".join(f"{cell:>38}" for cell in cells))
    for kind, (title, _, _) in PROFILINGS.items():
        worst = max(ratios[kind])
        mean = geomean(ratios[kind])
        verdicts = f"  <= {goal}: {verdict(worst, goal)}" if kind == "foo+device" else ""
        print(f"  {title}: geometric mean {mean:.2f}x, worst {worst:.2f}x{verdicts}")
    device_share = [r[f"profiled/{op}/foo+device"] / r[f"profiled/{op}/foo+cpu"] for op in PROFILED_OPS]
    print(f"  the device's activity alone (foo: [CPU, PrivateUse1] / [CPU]): worst {max(device_share):.2f}x")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="print the raw figures as JSON")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--profiling", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.profiling)))
        return 0
    try:
        started = time.perf_counter()
        runs = {mode: run_worker_of(mode) for mode in MODES}
        if args.json:
            print(json.dumps(runs, indent=2))
        else:
            report(runs)
        print(f"\n(total {time.perf_counter() - started:.0f} s)", file=sys.stderr)
    except Exception as err:  # noqa: BLE001 -- a benchmark reports, it does not fail
        print(f"benchmark failed: {err}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
