"""Latency of the reference backend `foo` against the CPU. A script that prints figures, not a test.

What is compared (each figure is the median over many timed samples, time.perf_counter):

* native op:   torch.add(a, b) and torch.maximum(a, b) on foo -- the backend's own kernels
               (add.out / maximum.out, reached through PyTorch's structured functional wrappers,
               which allocate the result on the device first) -- vs the same call on the CPU.
* fallback op: torch.minimum(a, b) on foo. minimum is maximum's twin (same ATen CPU kernel
               structure and cost) but has no foo kernel, so it runs through the boxed CPU fallback
               (arguments copied to the host, result copied back). Compared with maximum on foo
               (native) and with minimum on the CPU.
* allocation:  torch.empty(256) (1 KiB float32) on foo (caching device allocator) vs the CPU.

for small (16 elements) and large (4M elements) float32 tensors, with device memory protection on
(default) and off (SCAFFOLD_PROTECT_MEMORY=0); each configuration runs in its own subprocess since
the variable is read once at startup. Goals: native small ops within 1.5x of CPU, native large
ops within 1.1x, allocation within 2x. Always exits 0.

    python benchmarks/bench_device.py           # table on stdout, progress on stderr
    python benchmarks/bench_device.py --json    # the raw figures
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import warnings
from collections.abc import Callable

SMALL, LARGE = 16, 4 * 1024 * 1024
GOALS = {"small": 1.5, "large": 1.1, "alloc": 2.0}


def _median_seconds(fn: Callable[[], object], *, batch: int, samples: int, warmup: int) -> float:
    """Median over `samples` of the mean time of `batch` back-to-back calls."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(samples):
        start = time.perf_counter()
        for _ in range(batch):
            fn()
        times.append((time.perf_counter() - start) / batch)
    return statistics.median(times)


def worker() -> dict[str, float]:
    """Runs in a subprocess (memory protection is fixed at startup): all timings, in microseconds."""
    import torch

    warnings.simplefilter("ignore")  # the fallback's once-per-op warning
    results: dict[str, float] = {"protected": float(torch.foo.memory_protection_enabled())}
    for label, n in (("small", SMALL), ("large", LARGE)):
        batch, samples, warmup = (200, 100, 200) if label == "small" else (1, 60, 5)
        g = torch.Generator().manual_seed(0)
        a_cpu, b_cpu = torch.randn(n, generator=g), torch.randn(n, generator=g)
        a_foo, b_foo = a_cpu.to("foo"), b_cpu.to("foo")
        cases = {
            "add/cpu": lambda: torch.add(a_cpu, b_cpu),
            "add/foo": lambda: torch.add(a_foo, b_foo),
            "maximum/cpu": lambda: torch.maximum(a_cpu, b_cpu),
            "maximum/foo": lambda: torch.maximum(a_foo, b_foo),
            "minimum/cpu": lambda: torch.minimum(a_cpu, b_cpu),
            "minimum/foo": lambda: torch.minimum(a_foo, b_foo),  # CPU fallback
        }
        for name, fn in cases.items():
            results[f"{name}/{label}"] = 1e6 * _median_seconds(fn, batch=batch, samples=samples, warmup=warmup)
            print(f"  {name}/{label}: {results[f'{name}/{label}']:.2f} us", file=sys.stderr)
    for device in ("cpu", "foo"):
        fn = lambda d=device: torch.empty(256, device=d)  # noqa: E731
        results[f"alloc/{device}"] = 1e6 * _median_seconds(fn, batch=500, samples=60, warmup=500)
        print(f"  alloc/{device}: {results[f'alloc/{device}']:.3f} us", file=sys.stderr)
    natively = torch.foo.fallback_counts()
    assert "aten::add.out" not in natively and "aten::maximum.out" not in natively, natively
    assert natively.get("aten::minimum.out", 0) > 0, "minimum did not run through the fallback"
    return results


def run_worker(protect: bool) -> dict[str, float]:
    env = dict(os.environ, SCAFFOLD_PROTECT_MEMORY="1" if protect else "0")
    print(f"measuring with memory protection {'on' if protect else 'off'} ...", file=sys.stderr)
    proc = subprocess.run(
        [sys.executable, __file__, "--worker"], env=env, stdout=subprocess.PIPE, text=True, timeout=600
    )
    if proc.returncode != 0:
        raise RuntimeError(f"benchmark worker failed (exit {proc.returncode})")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def verdict(ratio: float, goal: float) -> str:
    return "met" if ratio <= goal else "not met"


def report(runs: dict[str, dict[str, float]]) -> None:
    header = f"{'measurement':<44}{'CPU us':>10}{'foo us':>10}{'foo/CPU':>9}  goal"
    for mode, r in runs.items():
        print(f"\nmemory protection {mode}")
        print(header)
        print("-" * len(header))
        for label in ("small", "large"):
            size = f"{SMALL} el" if label == "small" else "4M el"
            goal = GOALS[label]
            for op in ("add", "maximum"):
                cpu, foo = r[f"{op}/cpu/{label}"], r[f"{op}/foo/{label}"]
                ratio = foo / cpu
                print(f"{op + ' native, ' + size:<44}{cpu:>10.2f}{foo:>10.2f}{ratio:>9.2f}  <= {goal}: {verdict(ratio, goal)}")
            cpu, foo = r[f"minimum/cpu/{label}"], r[f"minimum/foo/{label}"]
            native = r[f"maximum/foo/{label}"]
            print(
                f"{'minimum via CPU fallback, ' + size:<44}{cpu:>10.2f}{foo:>10.2f}{foo / cpu:>9.2f}"
                f"  (no goal; {foo / native:.1f}x foo-native maximum)"
            )
        cpu, foo = r["alloc/cpu"], r["alloc/foo"]
        ratio = foo / cpu
        print(f"{'torch.empty(256) allocation':<44}{cpu:>10.3f}{foo:>10.3f}{ratio:>9.2f}  <= {GOALS['alloc']}: {verdict(ratio, GOALS['alloc'])}")
        print(f"{'  -> allocations per second':<44}{1e6 / cpu:>10.0f}{1e6 / foo:>10.0f}")
    on, off = runs["on"], runs["off"]
    print("\ncost of memory protection (foo, on/off): " + ", ".join(
        f"{key.replace('/foo', '')} {on[key] / off[key]:.2f}x"
        for key in ("add/foo/small", "add/foo/large", "minimum/foo/small", "minimum/foo/large", "alloc/foo")
    ))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="print the raw figures as JSON")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker()))
        return 0
    try:
        started = time.perf_counter()
        runs = {"on": run_worker(True), "off": run_worker(False)}
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
