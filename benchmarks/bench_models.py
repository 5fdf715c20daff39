"""One training step of real models on the device against the same step on the CPU, in one run.

    python benchmarks/bench_models.py                      # the harness's CI subset, eager
    python benchmarks/bench_models.py --all --compiled     # the whole catalogue, eager and compiled
    python benchmarks/bench_models.py --models transformers.gpt2 --steps 20 --pairs 5

A step is forward + backward + AdamW on the model of the harness's catalogue (the package's
`models` extra: torchvision, timm, transformers), from the same weights and inputs on both sides.
Each side runs in its own process, as a user's training process would: in one process the device's
stream worker brings a second OpenMP team, and with more OpenMP threads than cores libgomp throttles
its spin-waiting, which slows the CPU's step by up to 3x. The two sides are built and warmed up
(and compiled, with --compiled) one after the other; then the timed steps alternate between them in
blocks, so the machine's noise hits both alike, and the median of each is compared. A training
loop runs its steps back to back; a block measures that steady state, not the wake-up of a side
that sat idle:
- it starts after QUIET_BEFORE_BLOCK_S of sleep: after a parallel region libgomp's threads
  spin-wait for the next one (~7 ms measured here), and the side that had just finished its block
  kept a core busy through the first milliseconds of the other's, a contention no single training
  process has;
- then untimed steps for WARM_BLOCK_S: after an idle spell the device's steps stay slow for
  several steps, not one (GPT-2 3.5 ms for the 2nd and 3rd steps after 30 ms asleep, 1.9 ms after
  50 ms of steps, 2.0 ms back to back; the CPU's 2.1 ms either way): each of its many hand-offs
  between the launching thread and the stream's worker wakes a core that had gone idle.
A pair of processes is not the whole story: the same model's step swings by up to 0.6x from one
process to the next on this machine, on both sides alike (a 2-7 ms step more than a 60 ms one), so
one pair can put a model over its goal that the next puts well under it, and the machine's slow
spells last longer than one model's measurement (qwen2 1.23-1.34x in three pairs back to back,
1.07-1.09x minutes later). So the list is measured --pairs times over, in rounds, each model's
pairs minutes apart, and a model's ratio is the median of its pairs', printed with their range.
Goals: eager within 1.2x of the CPU for every model and 1.05x as a geometric mean; compiled within
1.1x of the CPU compiled.
"""

from __future__ import annotations

import argparse
import copy
import math
import multiprocessing
import statistics
import sys
import time
import warnings
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any

import torch
import torch_foo  # noqa: F401  (the device, also when autoloading is off)
from torch_foo.models.catalogue import BY_NAME, CATALOGUE

DEVICE = "foo"
EAGER_GOAL = 1.2
EAGER_MEAN_GOAL = 1.05
COMPILED_GOAL = 1.1
# Longer than libgomp's spin-wait after a parallel region (~7 ms measured on this machine), so the
# other side's OpenMP threads are asleep when a block starts.
QUIET_BEFORE_BLOCK_S = 0.03
# Untimed steps at the start of each block, for at least this long (one step at the least).
WARM_BLOCK_S = 0.05


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


# A side's process: told "prepare" (build, warm up, compile), then "run" n steps at a time, then "stop".
Request = tuple[str, int]
Reply = tuple[str, Any]  # ("ready", None), ("times", [seconds, ...]) or ("error", "Type: message")


def _side(conn: Connection, name: str, where: str, compiled: bool, warmup: int) -> None:
    """The child process of one side: answers the parent's requests until it says stop."""
    warnings.simplefilter("ignore")  # the fallback's once-per-op warnings
    step: Callable[[], None] | None = None
    try:
        while True:
            try:
                request: Request = conn.recv()
            except EOFError:  # the parent is gone
                return
            command, count = request
            if command == "stop":
                return
            try:
                if command == "prepare":
                    torch.manual_seed(0)
                    workload = BY_NAME[name].build()
                    model = copy.deepcopy(workload.model).to(where)
                    call = torch.compile(model) if compiled else model
                    step = training_step(model, call, _to(workload.inputs, where), workload.loss, where)
                    for _ in range(warmup):
                        step()
                        if conn.poll():  # "stop" or the parent gone: it asks nothing while it waits
                            return
                    reply: Reply = ("ready", None)
                elif command == "run" and step is not None:
                    time.sleep(QUIET_BEFORE_BLOCK_S)
                    warming = time.perf_counter()
                    step()  # untimed: the steps after the other side's block wake this side's threads
                    while time.perf_counter() - warming < WARM_BLOCK_S:
                        step()
                    times: list[float] = []
                    for _ in range(count):
                        started = time.perf_counter()
                        step()
                        times.append(time.perf_counter() - started)
                        if conn.poll():
                            return
                    reply = ("times", times)
                else:
                    reply = ("error", f"unexpected request {command!r}")
            except Exception as exc:  # noqa: BLE001 -- any failure goes to the parent as one message
                reply = ("error", f"{type(exc).__name__}: {exc}")
            try:
                conn.send(reply)
            except OSError:  # the parent is gone
                return
            if reply[0] == "error":
                return
    except KeyboardInterrupt:  # Ctrl-C reaches the whole process group: the parent reports it
        return
    finally:
        conn.close()


class _Side:
    """The parent's end of one side's process."""

    def __init__(self, name: str, where: str, compiled: bool, warmup: int) -> None:
        self.name, self.where = name, where
        context = multiprocessing.get_context("spawn")
        self.conn, child_conn = context.Pipe()
        self.process = context.Process(target=_side, args=(child_conn, name, where, compiled, warmup),
                                       name=f"bench_models {name} on {where}")
        self.process.start()
        child_conn.close()  # so that recv() sees the end of the pipe if the child dies

    def ask(self, command: str, count: int = 0) -> Any:
        """Sends a request and returns the answer's value; a failure raises naming the model and side."""
        try:
            request: Request = (command, count)
            self.conn.send(request)
            answer, value = self.conn.recv()
        except (EOFError, OSError):
            self.process.join(timeout=5)
            raise RuntimeError(f"{self.name} on {self.where}: its process ended without an answer"
                               f" (exit code {self.process.exitcode})") from None
        if answer == "error":
            raise RuntimeError(f"{self.name} on {self.where}: {value}")
        return value

    def close(self) -> None:
        try:
            if self.process.is_alive():
                self.conn.send(("stop", 0))
        except OSError:
            pass
        self.conn.close()
        self.process.join(timeout=5)
        if self.process.is_alive():
            self.process.terminate()
            self.process.join(timeout=5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()


def measure(name: str, device: str, compiled: bool, warmup: int, steps: int) -> tuple[float, float]:
    """Median seconds of one training step on the device and on the CPU, each side in its own process.

    The sides are started and prepared one after the other (never competing for the cores); then
    each round times a block of steps on the device, then on the CPU, while the other waits idle.
    """
    sides: list[_Side] = []
    try:
        for where in (device, "cpu"):
            sides.append(_Side(name, where, compiled, warmup))
            sides[-1].ask("prepare")
        times: dict[str, list[float]] = {side.where: [] for side in sides}
        block = max(1, steps // 5)
        while len(times["cpu"]) < steps:
            count = min(block, steps - len(times["cpu"]))
            for side in sides:
                times[side.where] += side.ask("run", count)
    finally:
        for side in sides:
            side.close()
    return statistics.median(times[device]), statistics.median(times["cpu"])


def _mode(compiled: bool) -> str:
    return "compiled" if compiled else "eager"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--all", action="store_true", help="the whole catalogue (default: the CI subset)")
    parser.add_argument("--models", nargs="+", metavar="NAME")
    parser.add_argument("--compiled", action="store_true", help="also the step under torch.compile")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--pairs", type=int, default=3, help="pairs of processes per model, in rounds over the list")
    args = parser.parse_args()

    warnings.simplefilter("ignore")  # the fallback's once-per-op warnings
    device = DEVICE
    names = args.models or [spec.name for spec in CATALOGUE if args.all or spec.ci]
    missing = [name for name in names if name not in BY_NAME or not BY_NAME[name].available()]
    if missing:
        print(f"unknown or not installed: {', '.join(missing)} (the package's 'models' extra)", file=sys.stderr)
        return 2

    if args.pairs < 1 or args.steps < 1:
        print("--pairs and --steps must be at least 1", file=sys.stderr)
        return 2

    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads; median of {args.steps} steps after "
          f"{args.warmup} warm-up steps, in each of {args.pairs} pairs of processes; "
          f"ratio = {device} / cpu, the pairs' median (their range)")
    modes = [False, True] if args.compiled else [False]
    runs = [(name, compiled) for name in names for compiled in modes]
    pairs: dict[tuple[str, bool], list[tuple[float, float]]] = {run: [] for run in runs}
    for round_number in range(1, args.pairs + 1):
        for name, compiled in runs:
            on_device, on_cpu = measure(name, device, compiled, args.warmup, args.steps)
            pairs[name, compiled].append((on_device, on_cpu))
            print(f"  pair {round_number}/{args.pairs} {name} {_mode(compiled)}:"
                  f" {on_device * 1e3:.1f} ms vs {on_cpu * 1e3:.1f} ms = {on_device / on_cpu:.2f}x", flush=True)
    ratios: dict[bool, list[float]] = {mode: [] for mode in modes}
    for name in names:
        cells = []
        for compiled in modes:
            measured = pairs[name, compiled]
            pair_ratios = [on_device / on_cpu for on_device, on_cpu in measured]
            ratio = statistics.median(pair_ratios)
            on_device = statistics.median(on_device for on_device, _ in measured)
            on_cpu = statistics.median(on_cpu for _, on_cpu in measured)
            ratios[compiled].append(ratio)
            goal = COMPILED_GOAL if compiled else EAGER_GOAL
            cells.append(f"{_mode(compiled)} {on_device * 1e3:8.1f} ms vs {on_cpu * 1e3:8.1f} ms = {ratio:5.2f}x"
                         f" ({min(pair_ratios):.2f}-{max(pair_ratios):.2f})"
                         f" ({'met' if ratio <= goal else 'NOT met'}: <= {goal}x)")
        print(f"{name:34} " + "   ".join(cells), flush=True)
    for compiled, values in ratios.items():
        mean = math.exp(sum(math.log(r) for r in values) / len(values))
        goal = COMPILED_GOAL if compiled else EAGER_MEAN_GOAL
        print(f"{_mode(compiled)} geometric mean: {mean:.2f}x, worst {max(values):.2f}x"
              f" (goal {goal}x: {'met' if mean <= goal else 'NOT met'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
