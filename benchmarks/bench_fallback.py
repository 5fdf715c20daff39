"""The CPU fallback of the reference backend `foo`: copying vs zero-copy vs native vs the CPU.
A script that prints figures, not a test.

Ops foo has no kernel for run through the boxed CPU fallback. With `fallback.mode: host_view`
(yaml/foo.yaml) the CPU kernel runs on host views of device memory; with
SCAFFOLD_HOST_VIEW_FALLBACK=0 the same build copies every tensor to the host and back (ATen's
cpu_fallback). Each mode runs in its own subprocess (the switch is read once), measuring the same
calls on foo and on the CPU, so every ratio is against a CPU baseline taken in the same process.

The ops cover elementwise (atan2, fmax), reductions (prod, std), in-place (clamp_min_, atan2_)
and out= (atan2, fmax); no view reaches the fallback any more (see OPS). Where foo has a native
kernel for a twin of the op (same ATen CPU kernel structure: maximum for fmax, sum for prod,
relu_ for clamp_min_), its time is shown as "native". Each figure is the median over many timed samples, the
lowest of ROUNDS interleaved rounds. Goals: zero-copy within 2x of the CPU for 16
elements and 1.2x for 4M elements (geometric means, in-place ops included). Always exits 0.

    python benchmarks/bench_fallback.py           # table on stdout, progress on stderr
    python benchmarks/bench_fallback.py --json    # the raw figures
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

from harness import geomean, median_seconds, run_worker

torch: Any = None  # the worker imports it

SMALL, LARGE = 16, 4 * 1024 * 1024
ROUNDS = 3
GOALS = {"small": 2.0, "large": 1.2}

Case = Callable[[dict[str, Any]], object]
# name -> (what the table calls it, kind, the call, the op the fallback must count, native twin or None)
OPS: dict[str, tuple[str, str, Case, str, Case | None]] = {
    "atan2": ("atan2(a, b)", "elementwise", lambda t: torch.atan2(t["a"], t["b"]), "aten::atan2.out", None),
    "fmax": (
        "fmax(a, b)", "elementwise", lambda t: torch.fmax(t["a"], t["b"]), "aten::fmax.out",
        lambda t: torch.maximum(t["a"], t["b"]),
    ),
    "prod": ("prod(a)", "reduction", lambda t: torch.prod(t["a"]), "aten::prod", lambda t: torch.sum(t["a"])),
    "std": ("std(a)", "reduction", lambda t: torch.std(t["a"]), "aten::std.correction", None),
    "clamp_min_": (
        "buffer.clamp_min_(0)", "in-place", lambda t: t["buffer"].clamp_min_(0.0), "aten::clamp_min.out",
        lambda t: t["buffer"].relu_(),
    ),
    "atan2_": ("buffer.atan2_(b)", "in-place", lambda t: t["buffer"].atan2_(t["b"]), "aten::atan2.out", None),
    "atan2_out": (
        "atan2(a, b, out=out)", "out=", lambda t: torch.atan2(t["a"], t["b"], out=t["out"]), "aten::atan2.out", None,
    ),
    "fmax_out": (
        "fmax(a, b, out=out)", "out=", lambda t: torch.fmax(t["a"], t["b"], out=t["out"]),
        "aten::fmax.out", lambda t: torch.maximum(t["a"], t["b"], out=t["out"]),
    ),
}
# No view: the dense view ops without a default kernel (unfold, view_as_real, view_as_complex) are
# core ops of the runtime, since a view of a host copy loses the writes made through it; the
# copying fallback refuses view ops (error_on_views). The zero-copy fallback still returns views of
# the device tensor for backends that lack those kernels, but no dense op of foo reaches it.


def _tensors(n: int, device: str) -> dict[str, Any]:
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(n, generator=g), torch.randn(n, generator=g)
    cpu = {"a": a, "b": b, "buffer": torch.randn(n, generator=g), "out": torch.empty(n)}
    return {name: t.to(device) for name, t in cpu.items()}


def worker() -> dict[str, float]:
    """All timings of one fallback mode, in microseconds (runs in a subprocess)."""
    global torch  # imported here only: the parent process just runs workers and prints
    import torch

    warnings.simplefilter("ignore")  # the fallback's once-per-op warning
    torch.set_num_threads(1)  # both sides single-threaded: the machine is shared
    results: dict[str, float] = {}
    finishers: dict[str, Callable[[], object]] = {"cpu": lambda: None, "foo": torch.foo.synchronize}
    for label, n in (("small", SMALL), ("large", LARGE)):
        batch, samples, warmup = (200, 60, 200) if label == "small" else (1, 15, 3)
        tensors = {device: _tensors(n, device) for device in ("cpu", "foo")}
        cases: dict[str, tuple[Callable[[], object], Callable[[], object]]] = {}
        for op, (_, _, call, _, twin) in OPS.items():
            for device, t in tensors.items():
                cases[f"{op}/{device}"] = (functools.partial(call, t), finishers[device])
            if twin is not None:
                cases[f"{op}/native"] = (functools.partial(twin, tensors["foo"]), finishers["foo"])
        for round_ in range(ROUNDS):
            for name, (fn, finish) in cases.items():
                key = f"{name}/{label}"
                us = 1e6 * median_seconds(fn, batch=batch, samples=samples, warmup=warmup, finish=finish)
                results[key] = min(us, results.get(key, math.inf))
                print(f"  round {round_ + 1}: {key}: {us:.2f} us", file=sys.stderr)
    counts = torch.foo.fallback_counts()
    missing = sorted({op for _, _, _, op, _ in OPS.values()} - set(counts))
    assert not missing, f"these did not run through the CPU fallback: {missing}"
    return results


def run_worker_of(zero_copy: bool) -> dict[str, float]:
    print(f"measuring the {'zero-copy' if zero_copy else 'copying'} fallback ...", file=sys.stderr)
    return run_worker(__file__, [], {"SCAFFOLD_HOST_VIEW_FALLBACK": "1" if zero_copy else "0"}, timeout=1200)


def report(runs: dict[str, dict[str, float]]) -> None:
    zero, copying = runs["zero_copy"], runs["copy"]
    for label in ("small", "large"):
        size = f"{SMALL} elements" if label == "small" else "4M elements"
        print(f"\n{size} (us; ratios against the CPU measured in the same process)")
        header = (
            f"{'op':<26}{'kind':<13}{'CPU':>10}{'zero-copy':>11}{'ratio':>8}"
            f"{'copying':>11}{'ratio':>8}{'native':>10}{'ratio':>8}"
        )
        print(header)
        print("-" * len(header))
        zero_ratios, copy_ratios = [], []
        for op, (title, kind, _, _, twin) in OPS.items():
            cpu, foo = zero[f"{op}/cpu/{label}"], zero[f"{op}/foo/{label}"]
            copy_cpu, copy_foo = copying[f"{op}/cpu/{label}"], copying[f"{op}/foo/{label}"]
            zero_ratios.append(foo / cpu)
            copy_ratios.append(copy_foo / copy_cpu)
            native = ""
            if twin is not None:
                twin_us = zero[f"{op}/native/{label}"]
                native = f"{twin_us:>10.2f}{twin_us / cpu:>8.2f}"
            print(
                f"{title:<26}{kind:<13}{cpu:>10.2f}{foo:>11.2f}{foo / cpu:>8.2f}"
                f"{copy_foo:>11.2f}{copy_foo / copy_cpu:>8.2f}{native}"
            )
        goal = GOALS[label]
        zero_mean, copy_mean = geomean(zero_ratios), geomean(copy_ratios)
        verdict = "met" if zero_mean <= goal else "not met"
        print(
            f"geometric mean: zero-copy {zero_mean:.2f}x CPU (goal <= {goal}: {verdict}),"
            f" copying {copy_mean:.2f}x CPU"
        )
        in_place = [r for r, (_, kind, _, _, _) in zip(zero_ratios, OPS.values(), strict=True) if kind == "in-place"]
        print(f"in-place ops: zero-copy {geomean(in_place):.2f}x CPU, worst op {max(zero_ratios):.2f}x")


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
        runs = {"zero_copy": run_worker_of(True), "copy": run_worker_of(False)}
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
