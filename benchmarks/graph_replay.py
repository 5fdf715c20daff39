"""What a device graph saves a launch-bound step on `foo`: a small MLP's training step (forward,
backward, SGD with momentum: about a hundred small launches), run eagerly and as the replay of
one captured graph, in the same process. A script that prints figures, not a test.

Both variants copy a new batch into the same static input tensors and end with a stream
synchronisation, so each round times the whole step as the host sees it. ROUNDS rounds of STEPS
steps alternate between the two (after warm-up); the figure is the ratio of the medians,
eager / replay (above 1: the graph is faster). Always exits 0.

With --instructions N, the host's work instead: the calling thread's instructions per step, eager
and replayed (N steps queued, one synchronisation at the end, no new batch), counted by callgrind
with each thread apart (the kernels run on the stream's worker thread), as count_instructions.py
counts an op: runs of 0 and N steps after the same warm-up, the difference divided by N. Needs
valgrind; takes some minutes.

    python benchmarks/graph_replay.py
    python benchmarks/graph_replay.py --rounds 20 --steps 50 --width 32 --json
    python benchmarks/graph_replay.py --instructions 200
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from count_instructions import ENVIRONMENT, callgrind_totals


@dataclass
class Steps:
    eager: Callable[[], None]
    replay: Callable[[], None]
    feed: Callable[[], None]
    """Copies a new batch into the static inputs."""
    synchronize: Callable[[], None]

    def synchronized(self, run: Callable[[], None]) -> Callable[[], None]:
        """`run` after a new batch, then a synchronisation: the whole step as the host sees it."""

        def step() -> None:
            self.feed()
            run()
            self.synchronize()

        return step


def build(width: int, depth: int, batch: int) -> Steps:
    """The eager step and the replay of its graph, on the same static inputs."""
    foo: Any = torch.get_device_module("foo")
    torch.manual_seed(0)
    layers: list[torch.nn.Module] = []
    for _ in range(depth):
        layers += [torch.nn.Linear(width, width), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers, torch.nn.Linear(width, 1)).to("foo")
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    static_x = torch.zeros(batch, width, device="foo")
    static_y = torch.zeros(batch, 1, device="foo")
    host_x = torch.randn(batch, width).pin_memory()
    host_y = torch.randn(batch, 1).pin_memory()

    def step() -> None:
        optimizer.zero_grad(set_to_none=True)
        # (output - target)^2 from launched kernels: foo runs mse_loss inline, which a capture refuses.
        (model(static_x) - static_y).pow(2).mean().backward()
        optimizer.step()

    def feed() -> None:
        static_x.copy_(host_x, non_blocking=True)
        static_y.copy_(host_y, non_blocking=True)

    side = foo.Stream()
    side.wait_stream(foo.current_stream())
    with foo.stream(side):
        for _ in range(3):  # warm-up: momentum buffers, the allocator's segments
            feed()
            step()
    foo.current_stream().wait_stream(side)
    graph = foo.FooGraph()
    with foo.graph(graph):
        step()

    return Steps(eager=step, replay=graph.replay, feed=feed, synchronize=foo.synchronize)


def time_steps(run: Callable[[], None], steps: int) -> float:
    start = time.perf_counter()
    for _ in range(steps):
        run()
    return (time.perf_counter() - start) / steps


def calling_thread_instructions(mode: str, steps: int, model: list[str], work: Path) -> float:
    """The calling thread's instructions per step of `mode` (eager or replay), under callgrind."""
    environment = dict(ENVIRONMENT)
    environment["SCAFFOLD_LAUNCH_BLOCKING"] = "0"  # the kernels run on the stream's worker thread
    # One compute thread, waiting or not: a synchronising host thread never runs the queued work
    # itself (the simulated driver's use of an idle core), which would count kernels as host work.
    environment["SCAFFOLD_DEVICE_THREADS"] = "1"

    def calling_thread(count: int) -> int:
        out = work / f"{mode}.{count}.out"
        return callgrind_totals([__file__, "--child", mode, str(count), *model], out, environment,
                                separate_threads=True)[0]

    with ThreadPoolExecutor(max_workers=2) as pool:
        empty, full = pool.map(calling_thread, (0, steps))
    return (full - empty) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--width", type=int, default=16)
    parser.add_argument("--depth", type=int, default=4)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--json", action="store_true", help="print the raw figures as JSON")
    parser.add_argument("--instructions", type=int, metavar="STEPS", help="count the host's instructions instead")
    parser.add_argument("--child", nargs=2, metavar=("MODE", "STEPS"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    model = ["--width", str(args.width), "--depth", str(args.depth), "--batch", str(args.batch)]
    if args.instructions is not None:
        with tempfile.TemporaryDirectory() as directory:
            eager_count, replay_count = (
                calling_thread_instructions(mode, args.instructions, model, Path(directory))
                for mode in ("eager", "replay"))
        print(f"MLP {args.depth}x{args.width}, batch {args.batch}: the calling thread's instructions per step")
        print(f"  eager   {eager_count:12.0f}")
        print(f"  replay  {replay_count:12.0f}")
        print(f"  replay / eager: {replay_count / eager_count:.3f}")
        return
    steps = build(args.width, args.depth, args.batch)
    if args.child is not None:
        mode, count = args.child[0], int(args.child[1])
        run = steps.eager if mode == "eager" else steps.replay
        warm_up = steps.synchronized(run)
        for _ in range(5):  # the same in the runs of 0 and N steps
            warm_up()
        for _ in range(count):
            run()
        steps.synchronize()
        return
    eager, replay = steps.synchronized(steps.eager), steps.synchronized(steps.replay)
    for run in (eager, replay):
        time_steps(run, 3)
    eager_times: list[float] = []
    replay_times: list[float] = []
    for _ in range(args.rounds):
        eager_times.append(time_steps(eager, args.steps))
        replay_times.append(time_steps(replay, args.steps))
    eager_us = statistics.median(eager_times) * 1e6
    replay_us = statistics.median(replay_times) * 1e6
    figures = {"eager_step_us": eager_us, "replay_step_us": replay_us, "speedup": eager_us / replay_us}
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"MLP {args.depth}x{args.width}, batch {args.batch}: training step (forward, backward, SGD)")
    print(f"  eager   {eager_us:9.1f} us/step")
    print(f"  replay  {replay_us:9.1f} us/step")
    print(f"  eager / replay: {figures['speedup']:.2f}x")


if __name__ == "__main__":
    main()
