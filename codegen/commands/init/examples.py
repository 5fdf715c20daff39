"""The examples `init` gives a new backend, with working code, so a fresh project's tests exercise
custom ops and custom classes end to end:

- the custom op `<device>::mymuladd(Tensor a, Tensor b, float c) -> Tensor` (a * b + c, PyTorch's
  custom op tutorial): CPU and device kernels, fake kernel and autograd formula;
- the custom class `torch.classes.<device>.TensorQueue` (PyTorch's guide to custom classes in
  torch.compile/torch.export): the C++ class and its fake class, and the op that takes it,
  `<device>::for_each_add_(__torch__.torch.classes.<device>.TensorQueue tq, Tensor inc) -> ()`.

The generator writes their files as stubs (scaffolds) like any other; `init` then fills them from
templates/project/custom_*_example.*.j2, as it fills the core ops' kernels. The reference
backend's files (runtime/kernels/custom_ops/mymuladd.*, for_each_add_.*,
custom_classes/tensor_queue.*) are these templates rendered for `foo` (the test suite checks it).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from ...emit.render import render
from ...model.backend import BackendConfig
from ...model.outputs import CUSTOM_CLASS_DIRECTORY, OutputFile
from ...paths import CUSTOM_OPS_DIR

EXAMPLE_OP = "mymuladd"
EXAMPLE_SCHEMA = "mymuladd(Tensor a, Tensor b, float c) -> Tensor"
EXAMPLE_CLASS = "TensorQueue"
EXAMPLE_CLASS_INIT = "(Tensor init_tensor)"
EXAMPLE_CLASS_METHODS = (
    "push(Tensor tensor) -> ()",
    "pop() -> Tensor",
    "size() -> int",
    "get_raw_queue() -> Tensor[]",
    "for_each_add_(Tensor inc) -> ()",
)
EXAMPLE_CLASS_OP = "for_each_add_"


def example_class_op_schema(device: str) -> str:
    return f"{EXAMPLE_CLASS_OP}(__torch__.torch.classes.{device}.{EXAMPLE_CLASS} tq, Tensor inc) -> ()"


# (directory under the kernels directory, file stem) -> file suffix -> template.
_EXAMPLES: dict[tuple[str, str], dict[str, str]] = {
    (CUSTOM_OPS_DIR, EXAMPLE_OP): {
        ".cpp": "project/custom_op_example.cpp.j2",
        ".py": "project/custom_op_example.py.j2",
    },
    (CUSTOM_OPS_DIR, EXAMPLE_CLASS_OP): {
        ".cpp": "project/custom_class_op_example.cpp.j2",
        ".py": "project/custom_class_op_example.py.j2",
    },
    (CUSTOM_CLASS_DIRECTORY, "tensor_queue"): {
        ".h": "project/custom_class_example.h.j2",
        ".cpp": "project/custom_class_example.cpp.j2",
        ".py": "project/custom_class_example.py.j2",
    },
}


def render_example_files(device: str, package: str, yaml_path: str) -> dict[str, str]:
    """`<directory>/<stem><suffix>` (relative to the kernels directory) -> the example's
    filled-in file for `device`."""
    return {
        f"{directory}/{stem}{suffix}": render(template, device=device, package=package, yaml_path=yaml_path)
        for (directory, stem), templates in _EXAMPLES.items()
        for suffix, template in templates.items()
    }


def _declared_examples(config: BackendConfig) -> set[tuple[str, str]]:
    """The examples the YAML declares exactly as `init` writes them: a YAML (init --from-yaml)
    with an op or class of the same name but another signature keeps its stubs."""
    device = config.device
    schemas = {str(op.schema) for op in config.custom_ops}
    declared = set()
    if EXAMPLE_SCHEMA in schemas:
        declared.add((CUSTOM_OPS_DIR, EXAMPLE_OP))
    for custom_class in config.custom_classes:
        if (
            custom_class.name == EXAMPLE_CLASS
            and custom_class.init_text == EXAMPLE_CLASS_INIT
            and tuple(str(method) for method in custom_class.methods) == EXAMPLE_CLASS_METHODS
        ):
            declared.add((CUSTOM_CLASS_DIRECTORY, custom_class.file_stem))
            if example_class_op_schema(device) in schemas:
                declared.add((CUSTOM_OPS_DIR, EXAMPLE_CLASS_OP))
    return declared


def filled_example_files(
    fresh: Iterable[OutputFile], kernels_dir: Path, config: BackendConfig, package: str
) -> dict[Path, str]:
    """The examples' files that are still the generator's fresh stubs or scaffolds (`fresh`: what
    the generator wrote), with their working contents. A YAML without an example (init
    --from-yaml) gets nothing for it; a file the user changed is left alone."""
    examples = render_example_files(config.device, package, config.display_path)
    declared = {f"{directory}/{stem}" for directory, stem in _declared_examples(config)}
    filled = {}
    for output in fresh:
        path = output.path
        if not path.is_relative_to(kernels_dir):
            continue
        relative = path.relative_to(kernels_dir).as_posix()
        if relative not in examples or relative.rsplit(".", 1)[0] not in declared:
            continue
        if path.read_text(encoding="utf-8") == output.content:
            filled[path] = examples[relative]
    return filled
