"""Instructions per op on foo against the CPU, counted by valgrind's callgrind. A script that prints
figures, not a test.

Timings of a 16-element op move by +-15 % between runs on a shared machine; instruction counts are
exact and repeatable, so they show what a change to the per-op path did. Each op runs in a loop
under `valgrind --tool=callgrind` twice, with 0 and N iterations after the same warm-up, and the
difference of the two totals divided by N is the op's cost: interpreter start-up, `import torch`
and the warm-up cancel out. The same is done on the CPU in the same run, for the ratio.

foo runs with SCAFFOLD_LAUNCH_BLOCKING=1 (kernels run at their launch, on the calling thread, which
callgrind counts; launched work would run on a stream's worker thread too), one device, and a
1 GiB address span per device (valgrind cannot reserve the default 256 GiB:
SCAFFOLD_DEVICE_ADDRESS_SPAN_GIB). Needs valgrind (Debian: `apt-get install valgrind`); each run
takes a minute or two, two run at a time.

    python benchmarks/count_instructions.py                 # add_ and add, 20,000 iterations
    python benchmarks/count_instructions.py --ops add_ --iterations 5000
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

# name -> the statement timed, on `a` and `b` (16-element float32 tensors on the device).
OPS = {
    "add_": "a.add_(b)",
    "add": "torch.add(a, b)",
    "mul_scalar": "a * 2.0",
    "relu": "torch.relu(a)",
    "exp": "torch.exp(a)",
}
WARMUP = 2000

LOOP = """
import sys, torch
device, iterations = sys.argv[1], int(sys.argv[2])
a, b = torch.randn(16).to(device), torch.randn(16).to(device)
for _ in range({warmup}):
    {statement}
for _ in range(iterations):
    {statement}
"""

ENVIRONMENT = {
    "PYTHONHASHSEED": "0",
    "OMP_NUM_THREADS": "1",
    "SCAFFOLD_LAUNCH_BLOCKING": "1",
    "SCAFFOLD_DEVICE_COUNT": "1",
    "SCAFFOLD_DEVICE_ADDRESS_SPAN_GIB": "1",
}


def callgrind_totals(
    command: list[str], out: Path, environment: dict[str, str], separate_threads: bool = False
) -> list[int]:
    """The instruction totals of `command` (a Python script and its arguments) under callgrind:
    one for the process, or one per thread in the order the threads started (the calling thread
    first) with `separate_threads`."""
    valgrind = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
    if separate_threads:
        valgrind.append("--separate-threads=yes")
    result = subprocess.run([*valgrind, sys.executable, *command], env=dict(os.environ, **environment),
                            capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed under valgrind:\n{result.stderr[-2000:]}")
    # With --separate-threads callgrind writes OUT-01, OUT-02, ... (a thread each).
    outputs = sorted(out.parent.glob(out.name + "-*")) if separate_threads else [out]
    totals = []
    for output in outputs:
        match = re.search(r"^totals:\s+(\d+)", output.read_text(), re.MULTILINE)
        if match is None:
            raise RuntimeError(f"no totals line in {output}")
        totals.append(int(match.group(1)))
    return totals


def total_instructions(script: Path, device: str, iterations: int, out: Path) -> int:
    """The program's instruction total under callgrind (its `totals:` line)."""
    (total,) = callgrind_totals([str(script), device, str(iterations)], out, ENVIRONMENT)
    return total


def per_op(op: str, device: str, iterations: int, work: Path) -> float:
    script = work / f"{op}.py"
    script.write_text(LOOP.format(warmup=WARMUP, statement=OPS[op]))
    with ThreadPoolExecutor(max_workers=2) as pool:
        empty, full = pool.map(
            lambda n: total_instructions(script, device, n, work / f"{op}.{device}.{n}.out"), (0, iterations)
        )
    return (full - empty) / iterations


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ops", nargs="+", choices=sorted(OPS), default=["add_", "add"])
    parser.add_argument("--iterations", type=int, default=20_000)
    args = parser.parse_args()
    if shutil.which("valgrind") is None:
        print("count_instructions: valgrind is not installed (Debian: apt-get install valgrind)", file=sys.stderr)
        return 1
    print(f"{'op':<12}{'CPU':>10}{'foo':>10}{'foo/CPU':>9}   instructions per op, {args.iterations} iterations")
    with tempfile.TemporaryDirectory() as directory:
        for op in args.ops:
            try:
                cpu, foo = (per_op(op, device, args.iterations, Path(directory)) for device in ("cpu", "foo"))
            except RuntimeError as error:
                print(f"count_instructions: {error}", file=sys.stderr)
                return 1
            print(f"{op:<12}{cpu:>10.0f}{foo:>10.0f}{foo / cpu:>9.2f}   ({OPS[op]})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
