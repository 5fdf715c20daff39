"""What recording costs: a real model's training steps on `foo`, with and without
`python -m torch_foo.coverage`. A script that prints figures, not a test.

The workload is torchvision's resnet18 (a CNN: convolutions, batch norm, pooling, linear, SGD) or
nn.TransformerEncoder (attention, layer norm, GELU, AdamW), training steps on random data. Two
measurements, each a ratio to a baseline taken in the same run:

- steps, in one process: after two warm-up steps, ROUNDS rounds of STEPS steps alternate between
  recording off and on (the recorder the command uses); the ratio of the medians. The steady
  state, and the least noisy figure on a shared machine.
- whole runs: the workload as a fresh process, plainly and under the command (interpreter start,
  imports, the report written), alternating, the ratio of the medians of RUNS runs each: what a
  user sees.

Goal: both within 1.1x. Then, in one process, what recording costs one small op (16 elements): a
native kernel (add) and a fallback op (hardtanh), timed with recording off, on, and off again
(the check that turning recording off leaves nothing behind). Always exits 0.

    python benchmarks/bench_coverage.py                       # resnet18, then the transformer
    python benchmarks/bench_coverage.py --model transformer --rounds 16 --runs 5
    python benchmarks/bench_coverage.py --json                # the raw figures
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

GOAL = 1.1

WORKLOAD = """
import sys, time
import torch
from torch import nn

model_name, steps, batch = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
torch.manual_seed(0)
if model_name == "resnet18":
    import torchvision
    model = torchvision.models.resnet18(num_classes=10).to("foo")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    def batch_of_data():
        return torch.randn(batch, 3, 224, 224, device="foo"), torch.randint(0, 10, (batch,), device="foo")
    def loss_of(x, y):
        return nn.functional.cross_entropy(model(x), y)
else:
    layer = nn.TransformerEncoderLayer(256, 4, 1024, batch_first=True, activation="gelu")
    model = nn.Sequential(nn.Embedding(1000, 256), nn.TransformerEncoder(layer, 4), nn.Linear(256, 1000)).to("foo")
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    def batch_of_data():
        tokens = torch.randint(0, 1000, (batch, 128), device="foo")
        return tokens, tokens
    def loss_of(x, y):
        return nn.functional.cross_entropy(model(x).flatten(0, 1), y.flatten())

def step():
    x, y = batch_of_data()
    loss = loss_of(x, y)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()

step()
step()  # warm-up: first calls initialise kernels and caches, no steady state
if sys.argv[4] == "alternate":
    import json, statistics
    from torch_foo.coverage import recorder
    times = {False: [], True: []}
    for index in range(int(sys.argv[5])):
        for recording in (False, True) if index % 2 == 0 else (True, False):
            if recording:
                recorder.start()
            start = time.perf_counter()
            for _ in range(steps):
                step()
            times[recording].append(time.perf_counter() - start)
            if recording:
                recorder.stop()
    print("alternate", json.dumps({"off": statistics.median(times[False]), "on": statistics.median(times[True])}))
else:
    for _ in range(steps):
        step()
"""


def _python(workdir: Path, *args: str) -> tuple[str, float]:
    command = [sys.executable, "-W", "ignore", *args]
    start = time.perf_counter()
    result = subprocess.run(command, cwd=workdir, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{result.stderr[-3000:]}")
    return result.stdout, wall


def measure(model: str, steps: int, batch: int, rounds: int, runs: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as directory:
        workdir = Path(directory)
        script = workdir / "workload.py"
        script.write_text(WORKLOAD)
        args = [str(script), model, str(steps), str(batch)]
        output, _ = _python(workdir, *args, "alternate", str(rounds))
        line = next(line for line in output.splitlines() if line.startswith("alternate "))
        alternate = json.loads(line.split(" ", 1)[1])
        print(f"  {model}: steps off {alternate['off']:.3f} s, on {alternate['on']:.3f} s", file=sys.stderr)
        walls: dict[str, list[float]] = {"plain": [], "coverage": []}
        report = workdir / "report.json"
        for index in range(runs):
            for name in ("plain", "coverage") if index % 2 == 0 else ("coverage", "plain"):
                prefix = ["-m", "torch_foo.coverage", "--json", str(report), "--top", "3"] if name == "coverage" else []
                walls[name].append(_python(workdir, *prefix, *args, "once")[1])
                print(f"  {model} run {index + 1} {name}: {walls[name][-1]:.2f} s", file=sys.stderr)
        recorded = json.loads(report.read_text())
    plain, covered = statistics.median(walls["plain"]), statistics.median(walls["coverage"])
    fallback = [op for op in recorded["ops"] if op["path"] == "fallback"]
    return {
        "model": model, "steps": steps, "batch": batch, "rounds": rounds, "runs": runs,
        "steps_off": alternate["off"], "steps_on": alternate["on"], "ratio_steps": alternate["on"] / alternate["off"],
        "walls": walls, "wall_plain": plain, "wall_coverage": covered, "ratio_wall": covered / plain,
        "ops_recorded": len(recorded["ops"]),
        "top_fallback": [(op["name"], op["calls"], op["seconds"]) for op in fallback[:3]],
    }


MICRO = """
import json, statistics, sys, time, warnings
import torch
import torch_foo
from torch_foo.coverage import recorder

warnings.simplefilter("ignore")
x, y = torch.randn(16, device="foo"), torch.randn(16, device="foo")
ops = {"add (native)": lambda: torch.add(x, y), "hardtanh (fallback)": lambda: torch.nn.functional.hardtanh(x)}

def per_call(fn, calls=2000, batches=7):
    times = []
    for _ in range(batches):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.foo.synchronize()
        times.append((time.perf_counter() - start) / calls)
    return statistics.median(times)

figures = {}
for name, fn in ops.items():
    per_call(fn, 200, 1)  # warm-up
    off = per_call(fn)
    recorder.clear()
    recorder.start()
    on = per_call(fn)
    recorder.stop()
    figures[name] = {"off_us": off * 1e6, "on_us": on * 1e6, "off_again_us": per_call(fn) * 1e6}
print(json.dumps(figures))
"""


def micro() -> dict[str, dict[str, float]]:
    result = subprocess.run([sys.executable, "-c", MICRO], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise RuntimeError(result.stderr[-3000:])
    figures: dict[str, dict[str, float]] = json.loads(result.stdout.splitlines()[-1])
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--model", choices=["resnet18", "transformer"], action="append")
    parser.add_argument("--steps", type=int, default=2, help="steps per round and per run (default 2)")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=12, help="in-process rounds of each setting (default 12)")
    parser.add_argument("--runs", type=int, default=3, help="whole runs of each setting (default 3)")
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    results = [
        measure(model, options.steps, options.batch, options.rounds, options.runs)
        for model in options.model or ["resnet18", "transformer"]
    ]
    small_ops = micro()
    if options.json:
        print(json.dumps({"models": results, "small_ops": small_ops}, indent=1))
        return 0
    print(f"| model | steps x batch | steps: off / on | ratio | whole run: plain / coverage | ratio | <= {GOAL}x |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for result in results:
        met = "met" if max(result["ratio_steps"], result["ratio_wall"]) <= GOAL else "not met"
        print(
            f"| {result['model']} | {result['steps']} x {result['batch']} "
            f"| {result['steps_off']:.3f} s / {result['steps_on']:.3f} s | {result['ratio_steps']:.3f} "
            f"| {result['wall_plain']:.2f} s / {result['wall_coverage']:.2f} s | {result['ratio_wall']:.3f} | {met} |"
        )
    for result in results:
        top = ", ".join(f"{name} ({calls} calls, {seconds:.3f} s)" for name, calls, seconds in result["top_fallback"])
        print(f"{result['model']}: {result['ops_recorded']} ops recorded; top fallback ops: {top}")
    print()
    print("| op, 16 elements | recording off | on | off again | on / off |")
    print("| --- | --- | --- | --- | --- |")
    for name, figures in small_ops.items():
        print(
            f"| {name} | {figures['off_us']:.2f} us | {figures['on_us']:.2f} us | {figures['off_again_us']:.2f} us "
            f"| {figures['on_us'] / figures['off_us']:.2f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
