#!/usr/bin/env python3
"""Benchmark `scaffold-backend generate` against torchgen's gen_backend_stubs.

Every figure is measured in the same run on this machine: no baseline numbers are stored, so the
ratios stay meaningful whatever the hardware. Each measurement is the wall time of a fresh
subprocess (the way users run the tools), reported as median, min and max of --repeat runs.

Run: python benchmarks/bench_generate.py [--repeat N] [--json]

The script reports; it does not gate: it exits 0 whether the goal is met or not, and non-zero
only when a tool behaves unexpectedly (a failed generate, a no-op run that rewrites files, ...).
"""

from __future__ import annotations

import argparse
import importlib.metadata
import importlib.util
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

#: The goal: a full generation costs at most this fraction of torchgen on its small YAML, i.e.
#: less than torchgen needs just to parse native_functions.yaml.
GOAL_FRACTION = 0.25
#: The goal for runs that change nothing (no-op regeneration and --check): this fraction of
#: torchgen on its small YAML.
UP_TO_DATE_GOAL_FRACTION = 0.1
#: How many of the accepted ops make up torchgen's small YAML (see TorchgenSubset.small).
SMALL_YAML_OPS = 10
#: Any single subprocess taking longer than this is a hang, not a data point.
RUN_TIMEOUT_S = 300.0
#: The line the generator prints when a regeneration changes nothing.
UP_TO_DATE = "everything up to date"
#: A schema as torchgen prints it in its error context: `name.overload(args) -> returns`.
SCHEMA_LINE = re.compile(r"^\s*([A-Za-z_]\w*)(?:\.\w+)?\(.*\)\s*->\s*\S.*$")


class BenchmarkError(Exception):
    """A tool did something the benchmark cannot time meaningfully (failed, or did real work on
    a no-op run). Distinct from `assert` so the check survives `python -O`."""


@dataclass
class Timing:
    """Wall times, in seconds, of the repeated runs of one command."""

    label: str
    runs: list[float] = field(default_factory=list)

    @property
    def median(self) -> float:
        return statistics.median(self.runs)

    def as_dict(self) -> dict[str, object]:
        return {
            "median": self.median,
            "min": min(self.runs),
            "max": max(self.runs),
            "runs": self.runs,
        }


@dataclass
class TorchgenSubset:
    """The largest op list torchgen accepts, and the ops removed to get there."""

    accepted: list[str]
    dropped: list[str]

    @property
    def small(self) -> list[str]:
        """The first few accepted ops: a YAML whose cost is mostly torchgen's fixed cost of
        parsing native_functions.yaml, the floor any torchgen run pays."""
        return self.accepted[:SMALL_YAML_OPS]


@dataclass
class Results:
    """All figures of one benchmark run, from which the table and the JSON are both made."""

    environment: dict[str, object]
    required_ops: int
    torchgen_subset: TorchgenSubset
    full_generate: Timing
    first_generate: Timing
    """A full generate with an empty user cache: what the first run on a machine pays."""
    noop_regenerate: Timing
    check: Timing
    check_options: Timing
    """--check with the paths given as options: answered by the CLI, click imported."""
    torchgen_largest: Timing
    torchgen_small: Timing
    python_bare: Timing
    file_floor: Timing
    """Python creating and fsyncing as many files as a full generate writes, nothing else."""
    python_import_cli: Timing

    def timings(self) -> dict[str, Timing]:
        """Every measurement, keyed by its JSON name, in table order."""
        return {
            "full_generate": self.full_generate,
            "first_generate": self.first_generate,
            "noop_regenerate": self.noop_regenerate,
            "check": self.check,
            "check_options": self.check_options,
            "torchgen_largest": self.torchgen_largest,
            "torchgen_small": self.torchgen_small,
            "python_bare": self.python_bare,
            "file_floor": self.file_floor,
            "python_import_cli": self.python_import_cli,
        }

    def ratios(self) -> dict[str, float]:
        full = self.full_generate.median
        return {
            "full generate / torchgen (largest YAML)": full / self.torchgen_largest.median,
            "full generate / torchgen (small YAML)": full / self.torchgen_small.median,
            "full, empty cache / torchgen (small YAML)": self.first_generate.median / self.torchgen_small.median,
            "(full generate - file floor) / torchgen (small YAML)": (full - self.file_floor.median)
            / self.torchgen_small.median,
            "no-op / full": self.noop_regenerate.median / full,
            "no-op / torchgen (small YAML)": self.noop_regenerate.median / self.torchgen_small.median,
            "--check / torchgen (small YAML)": self.check.median / self.torchgen_small.median,
            "--check with options / torchgen (small YAML)": self.check_options.median / self.torchgen_small.median,
        }

    @property
    def goal_limit(self) -> float:
        return GOAL_FRACTION * self.torchgen_small.median

    @property
    def goal_met(self) -> bool:
        return self.full_generate.median <= self.goal_limit

    @property
    def up_to_date_limit(self) -> float:
        return UP_TO_DATE_GOAL_FRACTION * self.torchgen_small.median

    @property
    def up_to_date_goal_met(self) -> bool:
        return max(self.noop_regenerate.median, self.check.median) <= self.up_to_date_limit

    def as_dict(self) -> dict[str, object]:
        """The same figures as the table, plus every run's time, for tools that track them."""
        subset = self.torchgen_subset
        return {
            "environment": self.environment,
            "required_ops": self.required_ops,
            "measurements": {key: t.as_dict() for key, t in self.timings().items()},
            "torchgen_subset": {"accepted": len(subset.accepted), "dropped": subset.dropped,
                                "small_yaml_ops": subset.small},
            "ratios": self.ratios(),
            "goal": {"fraction": GOAL_FRACTION, "full_generate": self.full_generate.median,
                     "limit": self.goal_limit, "met": self.goal_met},
            "up_to_date_goal": {"fraction": UP_TO_DATE_GOAL_FRACTION, "noop": self.noop_regenerate.median,
                                "check": self.check.median, "limit": self.up_to_date_limit,
                                "met": self.up_to_date_goal_met},
        }


def log(message: str) -> None:
    """Progress goes to stderr so that stdout holds only the table (or the JSON)."""
    print(message, file=sys.stderr, flush=True)


# --- inputs -----------------------------------------------------------------------------------


def declarations_header() -> Path:
    """Locate the installed torch's RegistrationDeclarations.h without importing torch, whose
    import would cost seconds and is not needed to read a header."""
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        raise BenchmarkError("torch is not installed")
    header = Path(spec.submodule_search_locations[0]) / "include/ATen/RegistrationDeclarations.h"
    if not header.is_file():
        raise BenchmarkError(f"{header} not found")
    return header


def required_ops(header: Path) -> list[str]:
    """The ops a backend must implement (dispatch "True", default "False"), in header order, as
    `name.overload` (the schema text between `aten::` and the first `(`)."""
    ops: list[str] = []
    for line in header.read_text().splitlines():
        _, sep, comment = line.partition("; // ")
        if not sep or not comment.startswith("{"):
            continue
        info = json.loads(comment)
        if info.get("dispatch") == "True" and info.get("default") == "False":
            schema: str = info["schema"]
            ops.append(schema.removeprefix("aten::").split("(", 1)[0])
    return ops


def write_scaffold_yaml(path: Path, ops: Sequence[str]) -> None:
    """A backend YAML for scaffold-backend, with 16 shards and device guards: the expensive
    configuration, so the benchmark measures the worst case."""
    header = (
        "backend: PrivateUse1\ncpp_namespace: bench\ndevice: bench\n"
        "device_guard: true\nshards: 16\nsupported:\n"
    )
    path.write_text(header + "".join(f"  - {op}\n" for op in ops))


def write_torchgen_yaml(path: Path, ops: Sequence[str]) -> None:
    """A backend YAML for torchgen, with no other keys: torchgen rejects keys it does not know."""
    header = "backend: PrivateUse1\ncpp_namespace: bench\nsupported:\n"
    path.write_text(header + "".join(f"- {op}\n" for op in ops))


# --- running ----------------------------------------------------------------------------------


def scaffold_command() -> list[str]:
    """The `scaffold-backend` console script of this interpreter's environment. Preferred over
    PATH lookup because PATH may hold a version-manager shim (pyenv) whose own start-up would be
    timed as if it were the generator's."""
    beside = Path(sys.executable).parent / "scaffold-backend"
    if beside.is_file():
        return [str(beside)]
    found = shutil.which("scaffold-backend")
    if found is None:
        raise BenchmarkError("the scaffold-backend command is not installed")
    return [found]


PROJECT_SETTINGS = """\
[tool.scaffold-backend]
yaml = "backend.yaml"
out = "generated"
kernels = "kernels"
"""
"""The no-op project's settings: what `scaffold-backend init` writes, with the benchmark's YAML."""


FILE_FLOOR = """\
import os, sys
out, count = sys.argv[1], int(sys.argv[2])
paths = [os.path.join(out, f"f{index}.cpp") for index in range(count)]
for path in paths:
    with open(path, "wb") as stream:
        stream.write(b"x" * 2048)
for path in paths:
    descriptor = os.open(path, os.O_RDONLY)
    os.fsync(descriptor)
    os.close(descriptor)
"""
"""The disk's share of a full generate: writing as many ~2 KB files (one directory) and making
them durable, with no generator around it. On a disk that is slow to create files this floor,
not the generator, decides the full generate's time."""


def run_timed(
    command: Sequence[str], cwd: Path, cache_home: Path | None = None
) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Run one command and return its wall time. Output is captured (not inherited) so that
    terminal speed does not enter the figures. `cache_home`: the user's cache directory
    (XDG_CACHE_HOME) the command sees.

    Python writes and reuses byte code as it does for users: PYTHONDONTWRITEBYTECODE, set on this
    project's machine, is removed. With it, every run compiled the generator's modules from source
    (an editable install has no .pyc) while torchgen's, compiled by pip at install, were loaded:
    that timed the compiler, not the tools. The untimed warm-up run writes the byte code."""
    env = {name: value for name, value in os.environ.items() if name != "PYTHONDONTWRITEBYTECODE"}
    if cache_home is not None:
        env["XDG_CACHE_HOME"] = str(cache_home)
    start = time.perf_counter()
    result = subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, check=False, env=env
    )
    return time.perf_counter() - start, result


def require_success(result: subprocess.CompletedProcess[str]) -> None:
    """A failed run is not a timing: stop with the tool's own error output."""
    if result.returncode != 0:
        tail = "\n".join((result.stderr or result.stdout).splitlines()[-15:])
        raise BenchmarkError(f"{' '.join(result.args)} exited {result.returncode}:\n{tail}")


def measure(
    label: str,
    make_command: Callable[[Path], list[str]],
    workdir: Path,
    repeat: int,
    verify: Callable[[subprocess.CompletedProcess[str]], None] = require_success,
    target: Path | None = None,
    cache_home: Path | None = None,
    empty_cache: bool = False,
) -> Timing:
    """Time `repeat` runs of a command after one untimed warm-up run, which absorbs byte-code
    compilation and a cold page cache so that min/max show run-to-run noise, not first-run cost.

    make_command gets the directory to write into: `target` if given (every run then sees the
    previous runs' output), else a new empty directory per run, removed afterwards. Every run
    has workdir as its working directory: the generator records the YAML path relative to it in
    its output, so a different working directory would make a no-op run rewrite every file.

    `cache_home` is the user's cache every run sees; with `empty_cache`, each run gets a new
    empty one instead (the first run on a machine: no kept schemas, no compiled templates).
    """
    log(f"  {label} ...")
    timing = Timing(label)
    for index in range(repeat + 1):
        out = target or Path(tempfile.mkdtemp(dir=workdir))
        home = Path(tempfile.mkdtemp(dir=workdir)) if empty_cache else cache_home
        try:
            elapsed, result = run_timed(make_command(out), cwd=workdir, cache_home=home)
            verify(result)
        finally:
            if target is None:
                shutil.rmtree(out)
            if empty_cache and home is not None:
                shutil.rmtree(home)
        if index > 0:
            timing.runs.append(elapsed)
    return timing


# --- torchgen's largest accepted subset -------------------------------------------------------


def failing_base_name(stderr: str) -> str | None:
    """The base name (before the first '.') of the last schema torchgen printed before dying:
    its error context names the function it could not generate."""
    for line in reversed(stderr.splitlines()):
        match = SCHEMA_LINE.match(line)
        if match:
            return match.group(1)
    return None


def torchgen_command(yaml_path: Path, out: Path) -> list[str]:
    """torchgen through this interpreter, so it uses the torchgen of the installed torch."""
    return [sys.executable, "-m", "torchgen.gen_backend_stubs", "-s", str(yaml_path), "-o", str(out)]


def largest_torchgen_subset(ops: Sequence[str], workdir: Path) -> TorchgenSubset:
    """torchgen crashes on some required ops (e.g. "Expected exactly 1 out argument, got 4"), so
    drop, one base name at a time, the ops it names in its error until it succeeds. Dropping the
    whole base name rather than the one overload keeps the search to a few runs."""
    accepted = list(ops)
    dropped: list[str] = []
    yaml_path = workdir / "tg-search.yaml"
    while accepted:
        write_torchgen_yaml(yaml_path, accepted)
        out = Path(tempfile.mkdtemp(dir=workdir))
        try:
            _, result = run_timed(torchgen_command(yaml_path, out), cwd=workdir)
        finally:
            shutil.rmtree(out)
        if result.returncode == 0:
            return TorchgenSubset(accepted, dropped)
        base = failing_base_name(result.stderr)
        culprits = [op for op in accepted if op.split(".", 1)[0] == base]
        if not culprits:
            tail = "\n".join(result.stderr.splitlines()[-15:])
            raise BenchmarkError(f"torchgen failed on an error the search cannot resolve:\n{tail}")
        log(f"  torchgen rejects {base}: dropping {', '.join(culprits)}")
        accepted = [op for op in accepted if op not in culprits]
        dropped.extend(culprits)
    raise BenchmarkError("torchgen accepts none of the required ops")


# --- the benchmark ----------------------------------------------------------------------------


def expect_up_to_date(result: subprocess.CompletedProcess[str]) -> None:
    """A no-op regeneration that writes anything would time real work, not the no-op path."""
    require_success(result)
    if UP_TO_DATE not in result.stdout:
        raise BenchmarkError(f"regeneration was not a no-op; it printed:\n{result.stdout[-2000:]}")


def run_benchmark(repeat: int, workdir: Path) -> Results:
    """Measure everything in one temporary directory, removed at the end."""
    header = declarations_header()
    ops = required_ops(header)
    scaffold = scaffold_command()
    with tempfile.TemporaryDirectory(prefix=".bench-generate-", dir=workdir) as tmp:
        work = Path(tmp)
        all_yaml = work / "all.yaml"
        write_scaffold_yaml(all_yaml, ops)

        def generate(target: Path) -> list[str]:
            return [*scaffold, "generate", "--yaml", str(all_yaml),
                    "--out", str(target / "generated"), "--kernels", str(target / "kernels")]

        # The generator's user cache (kept schemas, compiled templates): the benchmark's own, so
        # the user's is neither used nor touched. The warm-up run of each measurement fills it.
        cache = work / "cache"
        log(f"{len(ops)} required ops in {header}")
        log("scaffold-backend:")
        full = measure(f"full generate ({len(ops)} ops)", generate, work, repeat, cache_home=cache)
        first = measure("full generate, empty user cache", generate, work, repeat, empty_cache=True)
        # The up-to-date runs as a project runs them (a pre-commit hook, a CI job): a plain
        # `scaffold-backend generate [--check]` in a project whose pyproject.toml names its
        # inputs, which the console script answers before importing the CLI (entry.py).
        project = work / "project"
        project.mkdir()
        shutil.copy(all_yaml, project / "backend.yaml")
        (project / "pyproject.toml").write_text(PROJECT_SETTINGS)
        require_success(run_timed([*scaffold, "generate"], cwd=project, cache_home=cache)[1])
        # As old as a checked-out tree's files: the fast check remembers a file's status (and
        # skips reading it next time) only once it is 2 s old. The warm-up run below does that.
        time.sleep(2.5)
        noop = measure("no-op regenerate", lambda _: [*scaffold, "generate"], project, repeat,
                       verify=expect_up_to_date, target=project, cache_home=cache)
        check = measure("generate --check", lambda _: [*scaffold, "generate", "--check"], project, repeat,
                        verify=expect_up_to_date, target=project, cache_home=cache)
        check_options = measure(
            "generate --check, paths as options (the CLI decides)",
            lambda _: [*scaffold, "generate", "--check", "--yaml", "backend.yaml", "--out", "generated",
                       "--kernels", "kernels"],
            project, repeat, verify=expect_up_to_date, target=project, cache_home=cache)

        log("torchgen: searching for the largest accepted YAML")
        subset = largest_torchgen_subset(ops, work)
        big_yaml, small_yaml = work / "tg.yaml", work / "tg-small.yaml"
        write_torchgen_yaml(big_yaml, subset.accepted)
        write_torchgen_yaml(small_yaml, subset.small)
        tg_big = measure(f"torchgen, largest YAML ({len(subset.accepted)} ops)",
                         lambda out: torchgen_command(big_yaml, out), work, repeat)
        tg_small = measure(f"torchgen, small YAML ({len(subset.small)} ops)",
                           lambda out: torchgen_command(small_yaml, out), work, repeat)

        log("python start-up floor:")
        bare = measure("python -c pass", lambda _: [sys.executable, "-c", "pass"], work, repeat)
        files = sum(1 for path in (project / "generated").rglob("*") if path.is_file()) + sum(
            1 for path in (project / "kernels").rglob("*") if path.is_file())
        floor = measure(f"python: create + fsync {files} files", lambda out: [
            sys.executable, "-c", FILE_FLOOR, str(out), str(files)], work, repeat)
        imports = measure('python -c "import scaffold_backend.commands.cli"',
                          lambda _: [sys.executable, "-c", "import scaffold_backend.commands.cli"],
                          work, repeat)

    return Results(
        environment={
            "python": sys.version.split()[0],
            "torch": importlib.metadata.version("torch"),
            "cpus": os.cpu_count(),
            "repeat": repeat,
        },
        required_ops=len(ops),
        torchgen_subset=subset,
        full_generate=full, first_generate=first, noop_regenerate=noop, check=check,
        check_options=check_options,
        torchgen_largest=tg_big, torchgen_small=tg_small,
        python_bare=bare, python_import_cli=imports, file_floor=floor,
    )


# --- output -----------------------------------------------------------------------------------


def format_table(results: Results) -> str:
    """The human-readable report: one row per measurement, then ratios and the goal."""
    env, timings = results.environment, results.timings()
    width = max(len(t.label) for t in timings.values())
    lines = [
        f"python {env['python']}, torch {env['torch']}, {env['cpus']} CPUs, "
        f"{env['repeat']} runs each (wall time, s)",
        "",
        f"{'measurement':<{width}}  {'median':>7}  {'min':>7}  {'max':>7}",
    ]
    for timing in timings.values():
        lines.append(f"{timing.label:<{width}}  {timing.median:7.3f}  "
                     f"{min(timing.runs):7.3f}  {max(timing.runs):7.3f}")
    subset = results.torchgen_subset
    lines += [
        "",
        f"torchgen accepted {len(subset.accepted)} of {results.required_ops} ops; "
        f"dropped: {', '.join(subset.dropped) or 'none'}",
        "",
    ]
    ratios = results.ratios()
    ratio_width = max(len(name) for name in ratios)
    lines += [f"{name:<{ratio_width}}  {value:6.2f}" for name, value in ratios.items()]
    lines += [
        "",
        f"goal: full generate <= {GOAL_FRACTION} x torchgen on its small YAML: "
        f"{'met' if results.goal_met else 'not met'} "
        f"({results.full_generate.median:.3f} s vs {results.goal_limit:.3f} s)",
        f"goal: no-op and --check <= {UP_TO_DATE_GOAL_FRACTION} x torchgen on its small YAML: "
        f"{'met' if results.up_to_date_goal_met else 'not met'} "
        f"({max(results.noop_regenerate.median, results.check.median):.3f} s vs {results.up_to_date_limit:.3f} s)",
    ]
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5,
                        help="timed runs per measurement; the median is reported (default: 5)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument(
        "--workdir", type=Path, default=Path(__file__).resolve().parent,
        help="where the trees are written (default: benchmarks/, the repository's filesystem, where "
        "a project's generated/ lives; a temporary directory inside it is removed at the end)",
    )
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        results = run_benchmark(args.repeat, args.workdir)
    except (BenchmarkError, subprocess.TimeoutExpired) as error:
        print(f"bench_generate: {error}", file=sys.stderr)
        return 1
    print(json.dumps(results.as_dict(), indent=2) if args.json else format_table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
