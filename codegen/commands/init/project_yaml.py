"""The backend YAML of a new project: the default one (the core ops, plus --ops), or the user's
own (--from-yaml) with its device and namespace set to the project's name."""

from __future__ import annotations

from collections.abc import Sequence

import yaml

from ...emit.render import render
from ...model.core_ops import CORE_OPS
from ...model.driver_ops import DRIVER_KERNELS, driver_kernel_ops
from ...model.project import DEFAULT_DRIVER, ProjectNames
from ...parse.backend_yaml import parse_backend_yaml
from ...parse.yaml_nodes import compose_yaml
from .core_ops import random_ops
from .examples import (
    EXAMPLE_CLASS,
    EXAMPLE_CLASS_INIT,
    EXAMPLE_CLASS_METHODS,
    EXAMPLE_SCHEMA,
    example_class_op_schema,
)


def default_backend_yaml(names: ProjectNames, extra_ops: Sequence[str], driver: str = DEFAULT_DRIVER) -> str:
    """`extra_ops`: --ops, then the runtime's random ops and the ops `driver` has device kernels
    for (each listed apart)."""
    driver_ops = driver_kernel_ops(driver)
    runtime_random_ops = random_ops(driver)
    return render(
        "project/backend.yaml.j2",
        device=names.device,
        driver=driver,
        driver_ops_header=DRIVER_KERNELS[driver].location if driver in DRIVER_KERNELS else "",
        core_ops=CORE_OPS,
        extra_ops=[op for op in extra_ops if op not in driver_ops and op not in runtime_random_ops],
        random_ops=[op for op in extra_ops if op in runtime_random_ops],
        driver_ops=[op for op in extra_ops if op in driver_ops],
        custom_op_example=EXAMPLE_SCHEMA,
        custom_class_op_example=example_class_op_schema(names.device),
        custom_class_example=EXAMPLE_CLASS,
        custom_class_init=EXAMPLE_CLASS_INIT,
        custom_class_methods=list(EXAMPLE_CLASS_METHODS),
    )


def adapt_backend_yaml(
    text: str, display: str, names: ProjectNames, extra_ops: Sequence[str], driver: str = DEFAULT_DRIVER
) -> str:
    """A user's backend YAML, with its device and C++ namespace set to the project's name, its
    driver to `driver` (where that is not the default) and `extra_ops` (--ops, the driver's) appended to
    `supported`. Edits are spliced at the YAML nodes' exact positions, so comments and layout
    survive."""
    parse_backend_yaml(text, display_path=display)  # report the user's own mistakes first
    root = compose_yaml(text, display)
    assert isinstance(root, yaml.MappingNode)  # parse_backend_yaml accepted it
    entries = {key.value: (key, value) for key, value in root.value}
    edits: list[tuple[int, int, str]] = []
    for key in ("device", "cpp_namespace"):
        if key in entries:
            value = entries[key][1]
            edits.append((value.start_mark.index, value.end_mark.index, names.device))
    if "device" not in entries:
        end = entries["cpp_namespace"][1].end_mark.index
        edits.append((end, end, f"\ndevice: {names.device}"))
    if "driver" in entries:
        value = entries["driver"][1]
        edits.append((value.start_mark.index, value.end_mark.index, driver))
    elif driver != DEFAULT_DRIVER:
        key = "device" if "device" in entries else "cpp_namespace"
        end = entries[key][1].end_mark.index
        edits.append((end, end, f"\ndriver: {driver}"))
    if extra_ops:
        edits.append(_append_supported(text, entries.get("supported"), extra_ops))
    for start, end, replacement in sorted(edits, reverse=True):
        text = text[:start] + replacement + text[end:]
    return text


def _append_supported(
    text: str, entry: tuple[yaml.Node, yaml.Node] | None, ops: Sequence[str]
) -> tuple[int, int, str]:
    """An edit adding `ops` to the `supported` list, in the list's own style."""
    items = "".join(f"\n  - {op}" for op in ops)
    if entry is None:
        end = len(text)
        return (end, end, ("" if text.endswith("\n") else "\n") + f"supported:{items}\n")
    key, value = entry
    if not isinstance(value, yaml.SequenceNode) or not value.value:
        # `supported:` or `supported: []`: replace everything after the key.
        return (key.end_mark.index, value.end_mark.index, f":{items}")
    last = value.value[-1]
    if value.flow_style:
        return (last.end_mark.index, last.end_mark.index, "".join(f", {op}" for op in ops))
    line_start = text.rfind("\n", 0, last.start_mark.index) + 1
    indent = " " * (text.index("-", line_start) - line_start)
    return (last.end_mark.index, last.end_mark.index, "".join(f"\n{indent}- {op}" for op in ops))
