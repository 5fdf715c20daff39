"""The sweep's driver: splits the ops into chunks, runs each chunk in worker subprocesses
(several at once), restarts a worker after a crash or a hang with the tests it had not reached,
and hands the events to `report`."""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .expectations import DEFAULT_DTYPE_NAMES, DTYPE_NAMES, ExpectationsError, load_expectations
from .report import Report, build_report, format_summary

WORKER_COMMAND = (sys.executable, "-m", __package__ + ".worker")


@dataclass
class Chunk:
    ops: list[str]
    events_path: Path
    crashes: list[dict[str, Any]] = field(default_factory=list)


def read_events(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    events = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            events.append(json.loads(line))
        except json.JSONDecodeError:  # a line cut short by the crash
            continue
    return events


def _signal_name(returncode: int) -> str:
    if returncode < 0:
        try:
            return signal.Signals(-returncode).name
        except ValueError:
            return f"signal {-returncode}"
    return f"exit status {returncode}"


def run_chunk(chunk: Chunk, dtypes: list[str], timeout_s: float,
              worker_command: tuple[str, ...] = WORKER_COMMAND) -> None:
    """Runs one chunk to the end, whatever its tests do to the worker process."""
    while True:
        events = read_events(chunk.events_path)
        started = [e["test"] for e in events if e["event"] == "start"]
        command = [*worker_command, "--events", str(chunk.events_path),
                   "--ops", *chunk.ops, "--dtypes", *dtypes]
        if started:
            command += ["--done", *started]
        env = dict(os.environ, PYTHONFAULTHANDLER="0")
        # stderr goes to a file, not a pipe: a worker whose fallback warns on every sample fills
        # a pipe nobody reads until exit and then blocks in write(), which looked like a hang.
        stderr_path = chunk.events_path.with_suffix(".stderr")
        with stderr_path.open("w", encoding="utf-8") as stderr_file:
            process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                                       stderr=stderr_file, text=True)
            watchdog_fired = _wait_with_watchdog(process, chunk.events_path, timeout_s)
        stderr_tail = "<watchdog>" if watchdog_fired else _tail(stderr_path)
        events = read_events(chunk.events_path)
        open_test = _open_test(events)
        if process.returncode == 0 and open_test is None:
            return
        cause = (
            f"timeout: no progress for {timeout_s:.0f} s"
            if watchdog_fired
            else f"crash: {_signal_name(process.returncode)}"
        )
        if open_test is None:
            # Died outside any test (import, instantiation): record it against the chunk.
            chunk.crashes.append({"op": ",".join(chunk.ops), "dtype": "*", "test": "",
                                  "cause": cause, "detail": stderr_tail})
            return
        chunk.crashes.append({"op": open_test["op"], "dtype": open_test["dtype"],
                              "test": open_test["test"], "cause": cause, "detail": stderr_tail})
        with chunk.events_path.open("a", encoding="utf-8") as stream:
            stream.write(json.dumps({"event": "stop", "test": open_test["test"],
                                     "result": "crashed", "reason": cause}) + "\n")


def _open_test(events: list[dict[str, Any]]) -> dict[str, Any] | None:
    stopped = {e["test"] for e in events if e["event"] == "stop"}
    starts = [e for e in events if e["event"] == "start" and e["test"] not in stopped]
    return starts[-1] if starts else None


def _wait_with_watchdog(process: subprocess.Popen[str], events: Path, timeout_s: float) -> bool:
    """Waits for the worker; kills it when its events file has not grown for `timeout_s`.
    Returns whether it had to."""
    last_size, last_change = -1, time.monotonic()
    while process.poll() is None:
        size = events.stat().st_size if events.exists() else 0
        now = time.monotonic()
        if size != last_size:
            last_size, last_change = size, now
        elif now - last_change > timeout_s:
            process.kill()
            process.wait()
            return True
        time.sleep(0.2)
    return False


def _tail(path: Path, lines: int = 5, max_bytes: int = 64 * 1024) -> str:
    """The last non-empty lines of a worker's stderr (a crash's traceback ends there)."""
    with path.open("rb") as stream:
        stream.seek(max(0, path.stat().st_size - max_bytes))
        text = stream.read().decode("utf-8", errors="replace")
    kept = [line for line in text.splitlines() if line.strip()]
    return "\n".join(kept[-lines:])


def all_op_keys() -> list[str]:
    from torch.testing._internal.common_methods_invocations import op_db

    from .worker import op_key

    return sorted({op_key(op) for op in op_db})


def run_sweep(op_keys: list[str], dtypes: list[str], jobs: int, chunk_size: int,
              timeout_s: float, worker_command: tuple[str, ...] = WORKER_COMMAND) -> Report:
    """Runs the ops' tests in worker processes, `jobs` at once, `chunk_size` ops per worker."""
    with tempfile.TemporaryDirectory(prefix="conformance-") as workdir:
        chunks = [
            Chunk(ops=op_keys[start:start + chunk_size],
                  events_path=Path(workdir) / f"chunk{start // chunk_size:05d}.jsonl")
            for start in range(0, len(op_keys), chunk_size)
        ]
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            list(pool.map(lambda chunk: run_chunk(chunk, dtypes, timeout_s, worker_command), chunks))
        events = [event for chunk in chunks for event in read_events(chunk.events_path)]
        crashes = [crash for chunk in chunks for crash in chunk.crashes]
    return build_report(op_keys, dtypes, events, crashes, load_expectations())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog=f"python -m {__package__}",
        description="OpInfo conformance of this backend's device against the CPU.",
    )
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--all", action="store_true", help="every OpInfo in op_db (the full sweep)")
    which.add_argument("--ops", nargs="+", metavar="OP", help="OpInfo names (name or name.variant)")
    parser.add_argument("--dtypes", nargs="+", choices=DTYPE_NAMES,
                        default=list(DEFAULT_DTYPE_NAMES),
                        help="dtypes to test each op in, where its OpInfo lists them for CUDA "
                        "(or the CPU: [dtypes] coverage in expectations.toml)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="workers at once")
    parser.add_argument("--chunk-size", type=int, default=8, help="ops per worker process")
    parser.add_argument("--timeout", type=float, default=300.0,
                        help="seconds without progress before a worker is killed as hung")
    parser.add_argument("--json", type=Path, help="write the report here (sorted, diffable)")
    parser.add_argument("--compare", type=Path, help="an earlier report: name what got worse")
    parser.add_argument("--max-failures", type=int, default=None,
                        help="exit non-zero when more unexpected failures than this (CI)")
    args = parser.parse_args(argv)

    try:
        expectations = load_expectations()
    except ExpectationsError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    known = all_op_keys()
    if args.all:
        op_keys = known
    else:
        op_keys = sorted(args.ops or expectations.ci_ops)
        unknown = [key for key in op_keys if key not in known]
        if unknown:
            print(f"error: not in op_db: {', '.join(unknown)}", file=sys.stderr)
            return 2
    report = run_sweep(op_keys, args.dtypes, max(1, args.jobs), max(1, args.chunk_size),
                       args.timeout)
    baseline = None
    if args.compare:
        baseline = json.loads(args.compare.read_text(encoding="utf-8"))
    print(format_summary(report, baseline))
    if args.json:
        args.json.write_text(json.dumps(report.to_json(), indent=1, sort_keys=True) + "\n",
                             encoding="utf-8")
        print(f"report: {args.json}")
    unexpected = report.unexpected_failures
    if report.crashes or (args.max_failures is not None and unexpected > args.max_failures):
        return 1
    return 0
