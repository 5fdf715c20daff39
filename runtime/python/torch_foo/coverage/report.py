"""From the runtime's table to the report: the JSON other tools read (`scaffold-backend adopt`
among them) and the markdown table a reviewer reads in a pull request.

The JSON report, version 1 (a contract: fields are added, never renamed or retyped, without a new
version):

    {"version": 1, "torch": "2.14.1", "device": "foo", "command": ["train.py", "--steps", "2"],
     "device_timing": true,
     "ops": [{"name": "aten::max_pool2d_with_indices", "path": "fallback", "calls": 3,
              "seconds": 0.0123, "host_seconds": 0.0123, "device_seconds": null,
              "overhead_seconds": 0.0004,
              "shapes": [[[16, 8, 32, 32]]], "dtypes": [["float32"]],
              "arguments": [[{"tensor": 0}, [2, 2], [2, 2], [0, 0], [1, 1], false]]}, ...]}

`torch` is the release without its local part; `ops` is ranked: fallback ops by `seconds`,
descending, then native, custom, other and composite ones the same way (ties by name).
`shapes[i]`, `dtypes[i]` and `arguments[i]` describe the i-th distinct call signature kept (at
most `--max-signatures`, the first seen): the shape and dtype of each tensor argument in order,
and every argument in schema order, a tensor as `{"tensor": j}` (`shapes[i][j]`; with
`"device": "cpu"` for a CPU scalar among device tensors), a dtype, layout or memory format as
`{"dtype": "float32"}`, `{"layout": ...}`, `{"memory_format": ...}`, a device as `{"device": ...}`,
a generator as `{"generator": null}`, a non-finite float as `{"float": "inf"}`, a complex number
as `{"complex": [re, im]}`, and anything else as `{"unsupported": KIND}`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import torch

REPORT_VERSION = 1
PATH_ORDER = ("fallback", "native", "custom", "other", "composite")
"""How paths are ranked: the CPU fallback's ops are the kernels to write next."""


def torch_release() -> str:
    return torch.__version__.split("+", 1)[0]


def _seconds(nanoseconds: int | None) -> float | None:
    return None if nanoseconds is None else round(nanoseconds / 1e9, 9)


def _op_entry(recorded: dict[str, Any]) -> dict[str, Any]:
    path = recorded["path"]
    host = _seconds(recorded["host_ns"])
    device = _seconds(recorded["device_ns"]) if path in ("native", "custom") else None
    signatures = recorded["signatures"]
    return {
        "name": recorded["name"],
        "path": path,
        "calls": recorded["calls"],
        "seconds": device if device is not None else host,
        "host_seconds": host,
        "device_seconds": device,
        "overhead_seconds": _seconds(recorded["overhead_ns"]) if path == "fallback" else None,
        "shapes": [signature["shapes"] for signature in signatures],
        "dtypes": [signature["dtypes"] for signature in signatures],
        "arguments": [signature["arguments"] for signature in signatures],
    }


def rank_key(op: dict[str, Any]) -> tuple[int, float, str]:
    path = op["path"]
    order = PATH_ORDER.index(path) if path in PATH_ORDER else len(PATH_ORDER)
    return order, -op["seconds"], op["name"]


def build_report(table: dict[str, Any], device: str, command: Sequence[str]) -> dict[str, Any]:
    """The JSON report (see the module docstring) of a recorder table (`recorder.table()`)."""
    ops = sorted((_op_entry(recorded) for recorded in table["ops"]), key=rank_key)
    return {
        "version": REPORT_VERSION,
        "torch": torch_release(),
        "device": device,
        "command": list(command),
        "device_timing": table["device_timing"],
        "ops": ops,
    }


def to_json(report: dict[str, Any]) -> str:
    """The report as written: one op per line, so that a diff of two reports reads row by row."""
    head = {key: value for key, value in report.items() if key != "ops"}
    lines = [json.dumps(head)[:-1] + ', "ops": [']
    lines += [
        json.dumps(op) + ("," if index < len(report["ops"]) - 1 else "") for index, op in enumerate(report["ops"])
    ]
    return "\n".join(lines) + "\n]}\n"


def _shapes_cell(op: dict[str, Any], limit: int = 48) -> str:
    if not op["shapes"]:
        return ""
    text = "; ".join(str(shape) for shape in op["shapes"][0]) or "(no tensors)"
    more = len(op["shapes"]) - 1
    text = text if len(text) <= limit else text[: limit - 1] + "…"
    return text + (f" (+{more} more)" if more else "")


def _dtypes_cell(op: dict[str, Any]) -> str:
    if not op["dtypes"]:
        return ""
    return ", ".join(dict.fromkeys(dtype for dtypes in op["dtypes"] for dtype in dtypes))


def _number(value: float | None) -> str:
    return "" if value is None else f"{value:.4f}"


def summary_line(report: dict[str, Any]) -> str:
    """One sentence on what reached the device and where the time went."""
    by_path: dict[str, list[dict[str, Any]]] = {}
    for op in report["ops"]:
        by_path.setdefault(op["path"], []).append(op)
    parts = []
    for path in (*PATH_ORDER, *sorted(set(by_path) - set(PATH_ORDER))):
        ops = by_path.get(path, [])
        if not ops:
            continue
        seconds = sum(op["seconds"] for op in ops)
        calls = sum(op["calls"] for op in ops)
        detail = f"{len(ops)} {path} ({calls} calls"
        # A composite op's time includes the ops it is made of: a sum would count them twice.
        detail += "" if path == "composite" else f", {seconds:.3f} s"
        if path == "fallback":
            overhead = sum(op["overhead_seconds"] or 0.0 for op in ops)
            detail += f", {overhead:.3f} s of it host views or copies"
        elif path == "native":
            detail += " on the device" if report["device_timing"] else " on the host"
        parts.append(detail + ")")
    if not parts:
        return f"No op reached the {report['device']} device."
    return f"{len(report['ops'])} ops reached the {report['device']} device: " + ", ".join(parts) + "."


def render_markdown(report: dict[str, Any], top: int | None = None) -> str:
    """The report as a pull request shows it: a summary and the ranked table (the first `top`
    rows; None: all)."""
    command = " ".join(report["command"])
    ops = report["ops"]
    shown = ops if top is None else ops[:top]
    lines = [
        f"### Op coverage on `{report['device']}`: `python {command}`",
        "",
        f"torch {report['torch']}. {summary_line(report)}",
        "",
        "| # | op | path | calls | seconds | host views / copies | input shapes (first call) | dtypes |",
        "| ---: | --- | --- | ---: | ---: | ---: | --- | --- |",
    ]
    for rank, op in enumerate(shown, start=1):
        lines.append(
            f"| {rank} | `{op['name']}` | {op['path']} | {op['calls']} | {_number(op['seconds'])} "
            f"| {_number(op['overhead_seconds'])} | {_shapes_cell(op)} | {_dtypes_cell(op)} |"
        )
    if len(shown) < len(ops):
        lines += ["", f"{len(ops) - len(shown)} more ops in the JSON report."]
    return "\n".join(lines) + "\n"
