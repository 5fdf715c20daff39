"""The example custom op `init` gives a new backend: `<device>::mymuladd(Tensor a, Tensor b,
float c) -> Tensor` (a * b + c, PyTorch's custom op tutorial), with working CPU and device kernels,
fake kernel and autograd formula, so a fresh project's tests exercise custom ops end to end.

The generator writes the op's files as stubs like any other; `init` then fills them from
templates/project/custom_op_example.*.j2, as it fills the core ops' kernels. The reference
backend's runtime/kernels/custom_ops/mymuladd.{cpp,py} are these templates rendered for `foo`
(the test suite checks it).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from .kernel_file import KernelFile
from .render import render

EXAMPLE_OP = "mymuladd"
EXAMPLE_SCHEMA = "mymuladd(Tensor a, Tensor b, float c) -> Tensor"
_TEMPLATES = {".cpp": "project/custom_op_example.cpp.j2", ".py": "project/custom_op_example.py.j2"}


def render_example_files(device: str, yaml_path: str) -> dict[str, str]:
    """File suffix -> the example's filled-in file for `device`."""
    return {
        suffix: render(template, device=device, yaml_path=yaml_path)
        for suffix, template in _TEMPLATES.items()
    }


def filled_example_files(
    kernel_files: Sequence[KernelFile], device: str, yaml_path: str
) -> dict[Path, str]:
    """The example op's files that are still fresh stubs, with their working contents. A YAML
    without the example (init --from-yaml) gets nothing; a file the user changed is left alone."""
    examples = render_example_files(device, yaml_path)
    filled = {}
    for kernel in kernel_files:
        path = kernel.output.path
        if path.stem != EXAMPLE_OP or path.suffix not in examples or path.parent.name != "custom_ops":
            continue
        if path.read_text(encoding="utf-8") == kernel.output.content:
            filled[path] = examples[path.suffix]
    return filled
