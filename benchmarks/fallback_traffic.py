"""What a team whose device memory the host cannot address pays for the CPU fallback.

Runs a training step of two small models (a CNN, a transformer encoder layer) on foo twice, each
in its own process: on the simulated device's default memory (host-addressable: the fallback
works on host views) and with SCAFFOLD_DEVICE_MEMORY=discrete (a GPU's situation: foo's kernels,
written on host views, decline, and every op goes through the fallback's copies). For each, it
prints the share of the step's ops that ran through the fallback, and the bytes the fallback
moved between host and device against the bytes the ops' device tensors hold
(`torch.foo.fallback_traffic()`), with the ops that moved the most.

With `--device NAME`, the same step runs once on the installed backend of a project made by
`scaffold-backend init NAME` (package torch_NAME), on whatever memory its driver has: an OpenCL
project's device kernels then compute what they cover, and the rest goes through the fallback.

    python benchmarks/fallback_traffic.py
    python benchmarks/fallback_traffic.py --device acl   # in an environment with torch_acl installed
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

STEP = r"""
import importlib, json, sys
import torch
from torch.utils._python_dispatch import TorchDispatchMode

DEVICE = sys.argv[1]
importlib.import_module(f"torch_{DEVICE}")
backend = getattr(torch, DEVICE)


class CountOps(TorchDispatchMode):
    def __init__(self) -> None:
        super().__init__()
        self.calls = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        self.calls += 1
        return func(*args, **(kwargs or {}))


def cnn():
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.BatchNorm2d(32), torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(32, 10),
    ), lambda: (torch.randn(8, 3, 32, 32), torch.randint(0, 10, (8,)))


def transformer():
    layer = torch.nn.TransformerEncoderLayer(64, 4, 128, dropout=0.1, batch_first=True)
    head = torch.nn.Linear(64, 10)
    model = torch.nn.Sequential(layer, torch.nn.Flatten(0, 1), head)
    return model, lambda: (torch.randn(4, 16, 64), torch.randint(0, 10, (64,)))


results = {}
for name, make in (("cnn", cnn), ("transformer", transformer)):
    torch.manual_seed(0)
    model, batch = make()
    model = model.to(DEVICE)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

    def step():
        inputs, target = (t.to(DEVICE) for t in batch())
        loss = torch.nn.functional.cross_entropy(model(inputs), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    step()  # warm-up: optimizer state, first-call initialisation
    backend.synchronize()
    backend.reset_fallback_counts()
    counter = CountOps()
    with counter:
        step()
    backend.synchronize()
    traffic = backend.fallback_traffic()
    results[name] = {
        "ops": counter.calls,
        "fallback_calls": sum(t["calls"] for t in traffic.values()),
        "declined_calls": sum(backend.declined_kernel_counts().values()),
        "bytes_moved": sum(t["bytes_moved"] for t in traffic.values()),
        "tensor_bytes": sum(t["tensor_bytes"] for t in traffic.values()),
        "top": sorted(traffic.items(), key=lambda item: -item[1]["bytes_moved"])[:5],
    }
json.dump(results, sys.stdout)
"""


def run(device: str, memory: str | None) -> dict[str, dict[str, object]]:
    env = dict(os.environ, PYTHONWARNINGS="ignore")
    if memory is not None:
        env["SCAFFOLD_DEVICE_MEMORY"] = memory
    completed = subprocess.run(
        [sys.executable, "-c", STEP, device], env=env, capture_output=True, text=True, check=True, timeout=1200
    )
    result: dict[str, dict[str, object]] = json.loads(completed.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default=None, help="an installed project's device (default: foo, both memories)")
    args = parser.parse_args()
    runs = [(args.device, None)] if args.device else [("foo", "host"), ("foo", "discrete")]
    for device, memory in runs:
        print(f"{device}: SCAFFOLD_DEVICE_MEMORY={memory}" if memory else f"{device}: its driver's memory")
        for model, r in run(device, memory).items():
            ops, calls = int(str(r["ops"])), int(str(r["fallback_calls"]))
            moved, held = int(str(r["bytes_moved"])), int(str(r["tensor_bytes"]))
            ratio = f"{moved / held:.2f}" if held else "-"
            print(
                f"  {model:12s} step: {ops} ops, {calls} through the fallback ({calls / ops:.0%}; "
                f"{r['declined_calls']} declined kernels); moved {moved / 1e6:.2f} MB, the ops' tensors hold "
                f"{held / 1e6:.2f} MB (moved/held {ratio})"
            )
            for op, t in r["top"]:  # type: ignore[attr-defined]
                if t["bytes_moved"]:
                    print(f"      {op:45s} {t['calls']:4d} calls {t['bytes_moved'] / 1e6:8.3f} MB moved")


if __name__ == "__main__":
    main()
