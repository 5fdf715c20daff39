"""One training step of real models on the device against the same step on the CPU, in one run.

    python benchmarks/bench_models.py                      # the harness's CI subset, eager
    python benchmarks/bench_models.py --all --compiled     # the whole catalogue, eager and compiled
    python benchmarks/bench_models.py --models transformers.gpt2 --steps 20

A step is forward + backward + AdamW on the model of the harness's catalogue (the package's
`models` extra: torchvision, timm, transformers), from the same weights and inputs on both sides.
Each side is warmed up first (and compiled, with --compiled); the timed steps alternate between
the device and the CPU, and the median of each is compared. Goals: eager within 1.2x of the CPU
for every model and 1.05x as a geometric mean; compiled within 1.1x of the CPU compiled.
"""

from __future__ import annotations

import argparse
import copy
import math
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from typing import Any

import torch
import torch_foo  # noqa: F401  (the device, also when autoloading is off)
from torch_foo.models.catalogue import BY_NAME, CATALOGUE

DEVICE = "foo"
EAGER_GOAL = 1.2
EAGER_MEAN_GOAL = 1.05
COMPILED_GOAL = 1.1


def _to(value: Any, device: str) -> Any:
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, dict):
        return {key: _to(item, device) for key, item in value.items()}
    return value


def training_step(model: torch.nn.Module, call: Any, inputs: dict[str, Any], loss_of: Callable[[Any], torch.Tensor],
                  device: str) -> Callable[[], None]:
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    synchronize = getattr(torch, device).synchronize if device != "cpu" else (lambda: None)

    def step() -> None:
        optimizer.zero_grad(set_to_none=True)
        loss_of(call(**inputs)).backward()
        optimizer.step()
        synchronize()

    return step


def measure(name: str, device: str, compiled: bool, warmup: int, steps: int) -> tuple[float, float]:
    """Median seconds of one training step on the device and on the CPU."""
    torch.manual_seed(0)
    workload = BY_NAME[name].build()
    runs = {}
    for where in (device, "cpu"):
        model = copy.deepcopy(workload.model).to(where)
        call = torch.compile(model) if compiled else model
        runs[where] = training_step(model, call, _to(workload.inputs, where), workload.loss, where)
    for step in runs.values():
        for _ in range(warmup):
            step()
    times: dict[str, list[float]] = {where: [] for where in runs}
    for _ in range(steps):
        for where, step in runs.items():
            started = time.perf_counter()
            step()
            times[where].append(time.perf_counter() - started)
    return statistics.median(times[device]), statistics.median(times["cpu"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--all", action="store_true", help="the whole catalogue (default: the CI subset)")
    parser.add_argument("--models", nargs="+", metavar="NAME")
    parser.add_argument("--compiled", action="store_true", help="also the step under torch.compile")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--steps", type=int, default=10)
    args = parser.parse_args()

    warnings.simplefilter("ignore")  # the fallback's once-per-op warnings
    device = DEVICE
    names = args.models or [spec.name for spec in CATALOGUE if args.all or spec.ci]
    missing = [name for name in names if name not in BY_NAME or not BY_NAME[name].available()]
    if missing:
        print(f"unknown or not installed: {', '.join(missing)} (the package's 'models' extra)", file=sys.stderr)
        return 2

    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; median of {args.steps} steps after "
          f"{args.warmup} warm-up steps; ratio = {device} / cpu")
    modes = [False, True] if args.compiled else [False]
    ratios: dict[bool, list[float]] = {mode: [] for mode in modes}
    for name in names:
        cells = []
        for compiled in modes:
            on_device, on_cpu = measure(name, device, compiled, args.warmup, args.steps)
            ratio = on_device / on_cpu
            ratios[compiled].append(ratio)
            goal = COMPILED_GOAL if compiled else EAGER_GOAL
            label = "compiled" if compiled else "eager"
            cells.append(f"{label} {on_device * 1e3:8.1f} ms vs {on_cpu * 1e3:8.1f} ms = {ratio:5.2f}x"
                         f" ({'met' if ratio <= goal else 'NOT met'}: <= {goal}x)")
        print(f"{name:34} " + "   ".join(cells), flush=True)
    for compiled, values in ratios.items():
        mean = math.exp(sum(math.log(r) for r in values) / len(values))
        goal = COMPILED_GOAL if compiled else EAGER_MEAN_GOAL
        print(f"{'compiled' if compiled else 'eager'} geometric mean: {mean:.2f}x, worst {max(values):.2f}x"
              f" (goal {goal}x: {'met' if mean <= goal else 'NOT met'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
