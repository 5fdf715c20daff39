"""The harness's command line: picks models, runs each in a worker subprocess (several at once
with --jobs), records a crash or a hang against its model, prints one line per model, writes the
JSON report and compares it with an earlier one."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import torch

from .catalogue import BY_NAME, CATALOGUE
from .checks import STAGES
from .report import build_report, catalogue_names, compare_reports, format_line, format_summary, skipped_result

WORKER_COMMAND = (sys.executable, "-m", __package__ + ".worker")


def run_worker(name: str, stages: tuple[str, ...], directory: Path, timeout_s: float) -> dict[str, Any]:
    """One model in a fresh process: its own fallback counters, Dynamo caches and warnings."""
    spec = BY_NAME[name]
    if not spec.available():
        return skipped_result(spec, stages, spec.why_unavailable())
    output = directory / f"{name}.json"
    stderr_path = directory / f"{name}.stderr"
    command = [*WORKER_COMMAND, "--model", name, "--json", str(output), "--stages", *stages]
    with stderr_path.open("w", encoding="utf-8") as stderr:
        try:
            process = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=stderr, timeout=timeout_s, check=False)
            cause = None if process.returncode == 0 and output.exists() else f"worker exit status {process.returncode}"
        except subprocess.TimeoutExpired:
            cause = f"timeout: no result after {timeout_s:.0f} s"
    if cause is None:
        result: dict[str, Any] = json.loads(output.read_text(encoding="utf-8"))
        return result
    tail = stderr_path.read_text(encoding="utf-8", errors="replace").strip().splitlines()[-5:]
    result = skipped_result(spec, stages, "")
    result["fallback_calls"] = None  # the worker died before it could say
    for stage in result["stages"].values():
        stage.update(status="error", detail=f"{cause}: " + " | ".join(tail))
    return result


def run_models(names: list[str], stages: tuple[str, ...], jobs: int, timeout_s: float,
               progress: Any = None) -> dict[str, dict[str, Any]]:
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="models-") as directory, ThreadPoolExecutor(jobs) as pool:
        futures = {name: pool.submit(run_worker, name, stages, Path(directory), timeout_s) for name in names}
        for name, future in futures.items():
            results[name] = future.result()
            if progress is not None:
                progress(format_line(name, results[name]))
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog=f"python -m {__package__}", description=__doc__)
    chosen = parser.add_mutually_exclusive_group()
    chosen.add_argument("--all", action="store_true", help="the whole catalogue (default: the CI subset)")
    chosen.add_argument("--models", nargs="+", metavar="NAME", help="these models (see --list)")
    parser.add_argument("--stages", nargs="+", choices=STAGES, default=list(STAGES))
    parser.add_argument("--jobs", type=int, default=1, help="models run at once")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds one model may take")
    parser.add_argument("--json", type=Path, help="write the report here")
    parser.add_argument("--compare", type=Path, help="an earlier report: name what got worse")
    parser.add_argument("--list", action="store_true", help="print the catalogue and exit")
    args = parser.parse_args(argv)

    if args.list:
        for spec in CATALOGUE:
            state = "" if spec.available() else f"  ({spec.library} not installed)"
            print(f"{spec.name:34} {spec.family:20} {'ci' if spec.ci else ''}{state}")
        return 0
    unknown = sorted(set(args.models or []) - set(BY_NAME))
    if unknown:
        print(f"unknown model(s): {', '.join(unknown)} (see --list)", file=sys.stderr)
        return 2
    previous = None
    if args.compare is not None:
        try:
            previous = json.loads(args.compare.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as error:
            print(f"{args.compare}: not a report: {error}", file=sys.stderr)
            return 2
    names = args.models or catalogue_names(ci_only=not args.all)
    device = torch._C._get_privateuse1_backend_name()
    results = run_models(names, tuple(args.stages), max(1, args.jobs), args.timeout, progress=print)
    report = build_report(device, results)
    print(format_summary(report))
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    status = 0 if set(report["summary"]["by_status"]) <= {"pass", "skipped"} else 1
    if previous is not None:
        worse = compare_reports(previous, report)
        print("worse than " + str(args.compare) + (":" if worse else ": nothing"))
        for line in worse:
            print("  " + line)
        status = status or (1 if worse else 0)
    return status
