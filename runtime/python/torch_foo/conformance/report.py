"""From worker events to the sweep's report: counts per op and dtype, split by the path a sample
took (native kernel, explicit fallback, boxed fallback), failures grouped by cause, the printed
summary, and the JSON a CI job diffs between runs (sorted, no timestamps)."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

import torch

from .expectations import Expectations

PATHS = ("native", "explicit-fallback", "boxed-fallback")


@dataclass
class TestCounts:
    result: str = "not-run"
    reason: str = ""
    passed: int = 0
    failed: int = 0
    expected: int = 0
    """Failures named in expectations.toml, or in a test PyTorch marks as an expected failure."""
    skipped: int = 0
    by_path: Counter[str] = field(default_factory=Counter)
    cpu_dtype: bool = True
    """OpInfo lists the dtype for the CPU too; False: only CUDA's coverage asks for it, and the
    CPU reference is computed in a wider dtype and cast back."""

    def to_json(self) -> dict[str, Any]:
        return {
            "result": self.result,
            "reason": self.reason,
            "passed": self.passed,
            "failed": self.failed,
            "expected": self.expected,
            "skipped": self.skipped,
            "passed_by_path": dict(sorted(self.by_path.items())),
            "cpu_dtype": self.cpu_dtype,
        }


@dataclass
class Report:
    device: str
    dtypes: list[str]
    tests: dict[tuple[str, str], TestCounts]
    failures: list[dict[str, Any]]
    crashes: list[dict[str, Any]]

    def total(self, attribute: str) -> int:
        return sum(getattr(counts, attribute) for counts in self.tests.values())

    @property
    def unexpected_failures(self) -> int:
        return self.total("failed")

    @property
    def attempted(self) -> int:
        return self.total("passed") + self.total("failed") + self.total("expected")

    @property
    def pass_rate(self) -> float:
        return 100.0 * self.total("passed") / self.attempted if self.attempted else 100.0

    def ops_tried(self) -> list[str]:
        return sorted({op for (op, _), c in self.tests.items() if c.passed or c.failed or c.expected})

    def to_json(self) -> dict[str, Any]:
        ops: dict[str, dict[str, Any]] = defaultdict(dict)
        for (op, dtype), counts in sorted(self.tests.items()):
            ops[op][dtype] = counts.to_json()
        by_path: Counter[str] = Counter()
        for counts in self.tests.values():
            by_path.update(counts.by_path)
        beyond_cpu = [c for c in self.tests.values() if not c.cpu_dtype]
        return {
            "device": self.device,
            "torch": torch.__version__,
            "dtypes": self.dtypes,
            "summary": {
                "ops_tried": len(self.ops_tried()),
                "tests": len(self.tests),
                "tests_skipped": sum(c.result == "skipped" for c in self.tests.values()),
                "samples_attempted": self.attempted,
                "samples_passed": self.total("passed"),
                "samples_failed": self.total("failed"),
                "samples_expected_failures": self.total("expected"),
                "samples_skipped": self.total("skipped"),
                "passed_by_path": dict(sorted(by_path.items())),
                "crashes": len(self.crashes),
                "pass_rate_percent": round(self.pass_rate, 3),
                "tests_beyond_cpu_dtypes": len(beyond_cpu),
                "tests_beyond_cpu_dtypes_passed": sum(
                    c.passed > 0 and not c.failed and not c.expected for c in beyond_cpu
                ),
                "samples_passed_beyond_cpu_dtypes": sum(c.passed for c in beyond_cpu),
            },
            "ops": dict(ops),
            "failures": self.failures,
            "crashes": self.crashes,
        }


def build_report(
    op_keys: list[str],
    dtypes: list[str],
    events: list[dict[str, Any]],
    crashes: list[dict[str, Any]],
    expectations: Expectations,
) -> Report:
    names: dict[str, tuple[str, str]] = {}
    tests: dict[tuple[str, str], TestCounts] = {}
    results: dict[str, tuple[str, str]] = {}
    for event in events:
        if event["event"] == "start":
            names[event["test"]] = (event["op"], event["dtype"])
            counts = tests.setdefault((event["op"], event["dtype"]), TestCounts())
            counts.cpu_dtype = event.get("cpu_dtype", True)
        elif event["event"] == "stop":
            results[event["test"]] = (event["result"], event.get("reason", ""))
    for test, (result, reason) in results.items():
        if test in names:
            counts = tests[names[test]]
            counts.result, counts.reason = result, reason
    failures = []
    for event in events:
        if event["event"] != "sample" or event["test"] not in names:
            continue
        op, dtype = names[event["test"]]
        counts = tests[(op, dtype)]
        outcome = event["outcome"]
        if outcome == "passed":
            counts.passed += 1
            counts.by_path[event["path"]] += 1
        elif outcome == "skipped":
            counts.skipped += 1
        else:
            expected = counts.result == "expected-failure" or expectations.expected(op, dtype)
            if expected:
                counts.expected += 1
            else:
                counts.failed += 1
            failures.append({
                "op": op, "dtype": dtype, "sample": event["index"], "phase": event["phase"],
                "path": event["path"], "cause": event["cause"], "expected": bool(expected),
            })
    for crash in crashes:
        key = (crash["op"], crash["dtype"])
        counts = tests.setdefault(key, TestCounts())
        counts.result, counts.reason = "crashed", crash["cause"]
        counts.failed += 1
        failures.append({"op": crash["op"], "dtype": crash["dtype"], "sample": -1,
                         "phase": "crash", "path": "", "cause": crash["cause"], "expected": False})
    failures.sort(key=lambda f: (f["op"], f["dtype"], f["sample"], f["phase"]))
    device = torch._C._get_privateuse1_backend_name()
    return Report(device=device, dtypes=dtypes, tests=tests, failures=failures,
                  crashes=sorted(crashes, key=lambda c: (c["op"], c["dtype"])))


def _group_by_cause(failures: list[dict[str, Any]]) -> list[tuple[str, int, list[str]]]:
    groups: dict[str, Counter[str]] = defaultdict(Counter)
    for failure in failures:
        groups[failure["cause"]][f"{failure['op']}[{failure['dtype']}]"] += 1
    return sorted(
        ((cause, sum(where.values()), sorted(where)) for cause, where in groups.items()),
        key=lambda group: (-group[1], group[0]),
    )


def format_summary(report: Report, baseline: dict[str, Any] | None = None) -> str:
    data = report.to_json()
    summary = data["summary"]
    lines = [
        f"OpInfo conformance on '{report.device}' (torch {torch.__version__}), "
        f"dtypes: {', '.join(report.dtypes)}",
        f"ops tried: {summary['ops_tried']}   tests (op x dtype): {summary['tests']} "
        f"({summary['tests_skipped']} skipped by PyTorch's decorators or the deny list)",
        f"samples: {summary['samples_attempted']} attempted, {summary['samples_passed']} passed "
        f"({summary['pass_rate_percent']:.2f} %), {summary['samples_failed']} failed, "
        f"{summary['samples_expected_failures']} expected failures, "
        f"{summary['samples_skipped']} skipped (the CPU twin raises)",
        "passed by path: " + ", ".join(
            f"{path} {summary['passed_by_path'].get(path, 0)}" for path in PATHS
        ),
        f"dtypes CUDA lists and the CPU does not: {summary['tests_beyond_cpu_dtypes']} tests, "
        f"{summary['tests_beyond_cpu_dtypes_passed']} passing every sample "
        f"({summary['samples_passed_beyond_cpu_dtypes']} samples passed)",
        f"crashes: {summary['crashes']}",
    ]
    unexpected = [f for f in report.failures if not f["expected"]]
    expected = [f for f in report.failures if f["expected"]]
    for title, failures in (("failures", unexpected), ("expected failures", expected)):
        if not failures:
            continue
        lines.append(f"{title} by cause:")
        for cause, count, where in _group_by_cause(failures):
            shown = ", ".join(where[:6]) + (f", ... ({len(where)} in all)" if len(where) > 6 else "")
            lines.append(f"  {count:5d}  {cause}\n         {shown}")
    if baseline is not None:
        lines.extend(_compare(baseline, data))
    return "\n".join(lines)


def _compare(baseline: dict[str, Any], current: dict[str, Any]) -> list[str]:
    """Names every (op, dtype) that passes fewer samples, or fails more, than in the baseline."""
    worse, better = [], []
    for op, by_dtype in sorted(baseline.get("ops", {}).items()):
        for dtype, old in sorted(by_dtype.items()):
            new = current["ops"].get(op, {}).get(dtype)
            if new is None:
                continue
            if new["failed"] > old["failed"] or new["passed"] < old["passed"]:
                worse.append(f"  {op}[{dtype}]: passed {old['passed']} -> {new['passed']}, "
                             f"failed {old['failed']} -> {new['failed']}")
            elif new["failed"] < old["failed"]:
                better.append(f"  {op}[{dtype}]: failed {old['failed']} -> {new['failed']}")
    lines = [f"against the baseline: {len(worse)} worse, {len(better)} better"]
    return lines + (["worse:"] + worse if worse else []) + (["better:"] + better if better else [])
