"""What a device graph saves a launch-bound step on `foo`: a small MLP's training step (forward,
backward, SGD with momentum: about a hundred small launches), run eagerly and as the replay of
one captured graph, in the same process. A script that prints figures, not a test.

Both variants copy a new batch into the same static input tensors and end with a stream
synchronisation, so each round times the whole step as the host sees it. ROUNDS rounds of STEPS
steps alternate between the two (after warm-up); the figure is the ratio of the medians,
eager / replay (above 1: the graph is faster). Always exits 0.

    python benchmarks/graph_replay.py
    python benchmarks/graph_replay.py --rounds 20 --steps 50 --width 32 --json
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

import torch


def build(width: int, depth: int, batch: int) -> tuple[Callable[[], None], Callable[[], None], Callable[[], None]]:
    """The eager step, the replay, and what feeds both a new batch."""
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

    def eager() -> None:
        feed()
        step()
        foo.synchronize()

    def replay() -> None:
        feed()
        graph.replay()
        foo.synchronize()

    return eager, replay, feed


def time_steps(run: Callable[[], None], steps: int) -> float:
    start = time.perf_counter()
    for _ in range(steps):
        run()
    return (time.perf_counter() - start) / steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--width", type=int, default=16)
    parser.add_argument("--depth", type=int, default=4)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--json", action="store_true", help="print the raw figures as JSON")
    args = parser.parse_args()
    eager, replay, _ = build(args.width, args.depth, args.batch)
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
