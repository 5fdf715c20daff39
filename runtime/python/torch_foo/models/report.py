"""The harness's report: one line per model for people, a sorted JSON document for CI jobs, and
`--compare`, which names what got worse against an earlier report."""

from __future__ import annotations

import importlib.metadata
from typing import Any

import torch

from .catalogue import CATALOGUE, ModelSpec
from .checks import STAGES

LIBRARIES = ("torchvision", "timm", "transformers")
_MARKS = {"pass": "ok", "fail": "FAIL", "error": "ERROR", "skipped": "-"}


def library_versions() -> dict[str, str | None]:
    versions: dict[str, str | None] = {}
    for name in LIBRARIES:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def skipped_result(spec: ModelSpec, stages: tuple[str, ...], why: str) -> dict[str, Any]:
    return {"library": spec.library, "family": spec.family, "parameters": 0, "ties": 0,
            "fallback_calls": 0, "fallback_ops": {},
            "stages": {stage: {"status": "skipped", "detail": why, "seconds": 0.0} for stage in stages}}


def model_status(result: dict[str, Any]) -> str:
    statuses = {stage["status"] for stage in result["stages"].values()}
    for status in ("error", "fail"):
        if status in statuses:
            return status
    return "pass" if "pass" in statuses else "skipped"


def build_report(device: str, results: dict[str, dict[str, Any]]) -> dict[str, Any]:
    by_status: dict[str, int] = {}
    for result in results.values():
        status = model_status(result)
        by_status[status] = by_status.get(status, 0) + 1
    ran = [r for r in results.values() if model_status(r) != "skipped"]
    return {
        "device": device,
        "torch": torch.__version__,
        "libraries": library_versions(),
        "models": dict(sorted(results.items())),
        "summary": {
            "models": len(results),
            "by_status": dict(sorted(by_status.items())),
            "fallback_calls": sum(r["fallback_calls"] or 0 for r in ran),
            "models_without_fallback": sum(1 for r in ran if r["fallback_calls"] == 0),
        },
    }


def format_line(name: str, result: dict[str, Any]) -> str:
    status = model_status(result)
    stages = " ".join(f"{stage} {_MARKS[result['stages'][stage]['status']]}"
                      for stage in STAGES if stage in result["stages"])
    seconds = sum(stage.get("seconds", 0.0) for stage in result["stages"].values())
    ties = f", {result['ties']} tie{'s' if result['ties'] != 1 else ''}" if result["ties"] else ""
    calls = result["fallback_calls"]
    fallback = "-" if calls is None else f"{calls:4} calls ({len(result['fallback_ops'])} ops)"
    line = f"{status.upper():7} {name:34} {stages:60} fallback {fallback}{ties}, {seconds:.0f} s"
    details = [f"    {stage}: {data['detail'].splitlines()[0]}" for stage, data in result["stages"].items()
               if data["status"] in ("fail", "error") and data.get("detail")]
    return "\n".join([line, *details])


def format_summary(report: dict[str, Any]) -> str:
    summary = report["summary"]
    statuses = ", ".join(f"{count} {status}" for status, count in summary["by_status"].items())
    libraries = ", ".join(f"{name} {version or 'not installed'}" for name, version in report["libraries"].items())
    return (f"models: {summary['models']} ({statuses}); fallback calls: {summary['fallback_calls']}"
            f" ({summary['models_without_fallback']} models without any)\n"
            f"device {report['device']}, torch {report['torch']}, {libraries}")


def compare_reports(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """What got worse: a stage that passed and no longer does, a model that has more fallback calls."""
    worse = []
    for name, result in sorted(new["models"].items()):
        before = old.get("models", {}).get(name)
        if before is None:
            continue
        for stage, data in result["stages"].items():
            was = before["stages"].get(stage, {}).get("status")
            if was == "pass" and data["status"] in ("fail", "error"):
                worse.append(f"{name} {stage}: passed, now {data['status']}: {data.get('detail', '').splitlines()[0]}")
        calls, calls_before = result["fallback_calls"], before["fallback_calls"]
        if None not in (calls, calls_before) and model_status(result) != "skipped" and calls > calls_before:
            worse.append(f"{name}: fallback calls {before['fallback_calls']} -> {result['fallback_calls']}")
    return worse


def catalogue_names(ci_only: bool) -> list[str]:
    return [spec.name for spec in CATALOGUE if spec.ci or not ci_only]
