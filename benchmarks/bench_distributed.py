"""all_reduce bandwidth on foo tensors (the fooccl backend) vs CPU tensors through plain Gloo, in one
run. A script that prints figures, not a test.

Two processes on localhost (``--world`` to change) join one fooccl group; a second group with
``backend="gloo"`` is the baseline (ProcessGroupGloo on CPU tensors, nothing of ours in the path).
For each size, each rank all-reduces (SUM, float32) the same number of bytes on:

* ``cpu/gloo``         CPU tensors through plain Gloo (the baseline);
* ``foo/host_view``    foo tensors through fooccl, Gloo working on host views of device memory;
* ``foo/staging``      foo tensors through fooccl staging through pinned host buffers (the path of
                       a device whose memory the host cannot address).

Reported per size: the median time of one all_reduce over REPS timed calls (after warm-up), the
bus bandwidth as nccl-tests defines it (2 (n-1)/n x bytes / time) and its ratio to the baseline.
Goal: foo/host_view within 1.1x of the baseline's time for large tensors (no copy: same memory
traffic as Gloo on the CPU). Always exits 0.

    python benchmarks/bench_distributed.py [--world 2] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from typing import Any

SIZES = [4 << 10, 256 << 10, 4 << 20, 32 << 20]  # bytes per rank
REPS = {4 << 10: 200, 256 << 10: 100, 4 << 20: 20, 32 << 20: 8}
CONFIGS = ["cpu/gloo", "foo/host_view", "foo/staging"]


def worker() -> None:
    import torch
    import torch.distributed as dist
    import torch_foo

    foo: Any = torch.get_device_module("foo")  # torch.foo, which the backend adds at run time
    rank = int(os.environ["RANK"])
    foo.set_device(rank % foo.device_count())
    device = torch.device("foo", foo.current_device())
    dist.init_process_group()  # the device's default backend: fooccl, host views
    def member(group: object) -> dist.ProcessGroup:
        assert isinstance(group, dist.ProcessGroup)  # every rank is in every group
        return group

    groups = {"foo/host_view": member(dist.group.WORLD), "cpu/gloo": member(dist.new_group(backend="gloo"))}
    torch_foo.distributed.set_memory_mode("foo", "staging")
    groups["foo/staging"] = member(dist.new_group(backend="fooccl"))
    results: dict[str, dict[int, float]] = {c: {} for c in CONFIGS}
    for size in SIZES:
        for config in CONFIGS:
            on = "cpu" if config.startswith("cpu") else device
            t = torch.ones(size // 4, dtype=torch.float32, device=on)
            group = groups[config]
            for _ in range(3):
                dist.all_reduce(t, group=group)
            samples = []
            for _ in range(REPS[size]):
                dist.barrier(group=groups["cpu/gloo"])
                start = time.perf_counter()
                dist.all_reduce(t, group=group)
                samples.append(time.perf_counter() - start)
            results[config][size] = statistics.median(samples)
    if rank == 0:
        print(json.dumps(results))
    dist.destroy_process_group()


def launch(world: int) -> dict[str, dict[str, float]]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = [
        subprocess.Popen(
            [sys.executable, __file__, "--worker"],
            env=dict(
                os.environ, RANK=str(r), WORLD_SIZE=str(world), MASTER_ADDR="127.0.0.1",
                MASTER_PORT=str(port),
            ),
            stdout=subprocess.PIPE,
            text=True,
        )
        for r in range(world)
    ]
    outputs = [p.communicate()[0] for p in procs]
    if any(p.returncode for p in procs):
        raise SystemExit(f"a worker failed: exit codes {[p.returncode for p in procs]}")
    results: dict[str, dict[str, float]] = json.loads(outputs[0].strip().splitlines()[-1])
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--world", type=int, default=2)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker()
        return
    print(f"all_reduce, {args.world} processes on localhost ...", file=sys.stderr)
    results = launch(args.world)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    factor = 2 * (args.world - 1) / args.world
    header = f"{'bytes/rank':>11} " + " ".join(f"{c:>26}" for c in CONFIGS)
    print(header)
    print(f"{'':>11} " + " ".join(f"{'us   GB/s  x baseline':>26}" for _ in CONFIGS))
    for size in SIZES:
        base = results["cpu/gloo"][str(size)]
        cells = []
        for config in CONFIGS:
            seconds = results[config][str(size)]
            busbw = factor * size / seconds / 1e9
            cells.append(f"{seconds * 1e6:9.0f} {busbw:6.2f} {seconds / base:9.2f}x")
        print(f"{size:>11} " + " ".join(f"{c:>26}" for c in cells))
    print("x baseline: time of one all_reduce / time with CPU tensors through plain Gloo")




if __name__ == "__main__":
    main()
