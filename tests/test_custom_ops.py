"""The YAML's `custom_ops`: every collision and bad schema is one pinned, located error caught
before any C++ is built; the user's custom op files are merged like aten kernel files."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from scaffold_testing import TESTS, run_cli_process, tree

from scaffold_backend.errors import BackendYamlError
from scaffold_backend.model.ident import RESERVED_OP_NAMESPACES
from scaffold_backend.parse.backend_yaml import parse_backend_yaml

HEAD = "backend: PrivateUse1\ncpp_namespace: tiny\ndevice: tiny\ncustom_ops:\n"


def error_of(text: str) -> str:
    with pytest.raises(BackendYamlError) as error:
        parse_backend_yaml(text, display_path="b.yaml")
    return str(error.value)


def test_custom_ops_parse_into_torchgen_schemas() -> None:
    config = parse_backend_yaml(
        HEAD
        + "  - schema: mymuladd(Tensor a, Tensor b, float c) -> Tensor\n"
        + "    autograd: true\n"
        + "  - tiny::mymuladd.out(Tensor a, Tensor b, float c, *, Tensor(a!) out) -> Tensor(a!)\n",
        display_path="b.yaml",
    )
    first, second = config.custom_ops
    assert (first.qualified_name, first.autograd, first.cpu, first.location.line) == (
        "tiny::mymuladd", True, True, 5
    )
    assert str(first.schema) == "mymuladd(Tensor a, Tensor b, float c) -> Tensor"
    assert (second.op_name, second.group, second.autograd, second.location.line) == (
        "mymuladd.out", "mymuladd", False, 7
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "backend: PrivateUse1\ncpp_namespace: x\ndevice: prims\ncustom_ops:\n  - f(Tensor a) -> Tensor\n",
            "b.yaml:4: custom op namespace 'prims' belongs to PyTorch; the backend's TORCH_LIBRARY would "
            "collide with PyTorch's own\n  hint: custom ops live in the backend's namespace, its device name: "
            "rename the device",
        ),
        (
            "backend: PrivateUse1\ncpp_namespace: x\ndevice: quantized\ncustom_ops:\n  - f(Tensor a) -> Tensor\n",
            "b.yaml:4: custom op namespace 'quantized' belongs to PyTorch; the backend's TORCH_LIBRARY would "
            "collide with PyTorch's own\n  hint: custom ops live in the backend's namespace, its device name: "
            "rename the device",
        ),
        (
            # numpy stands for any installed library: torchvision's TORCH_LIBRARY(torchvision, m).
            "backend: PrivateUse1\ncpp_namespace: x\ndevice: numpy\ncustom_ops:\n  - f(Tensor a) -> Tensor\n",
            "b.yaml:4: custom op namespace 'numpy' is the name of another installed library; its "
            "TORCH_LIBRARY(numpy, m) and the backend's would collide when both load\n  hint: custom ops "
            "live in the backend's namespace, its device name: rename the device",
        ),
        (
            HEAD + "  - aten::f(Tensor a) -> Tensor\n",
            "b.yaml:5: custom op 'aten::f(Tensor a) -> Tensor' names the namespace 'aten'; a backend defines "
            "its custom ops in its own namespace 'tiny' (its device name)\n  hint: write the schema without "
            "a namespace, or as tiny::f",
        ),
        (
            HEAD + "  - f(Tensor a) -> Tensor\n  - schema: f(Tensor b) -> Tensor\n",
            "b.yaml:6: custom op 'tiny::f' is defined twice (first at line 5)\n  hint: give one of them "
            "another name or overload name (name.overload)",
        ),
        (
            HEAD + "  - f.g(Tensor a) -> Tensor\n  - f_g(Tensor a) -> Tensor\n",
            "b.yaml:6: custom ops 'tiny::f.g' (line 5) and 'tiny::f_g' would both have the C++ kernel "
            "name f_g_*\n  hint: rename one of them",
        ),
        (
            HEAD + "  - f.default(Tensor a) -> Tensor\n",
            "b.yaml:5: custom op 'tiny::f.default': the overload name 'default' is reserved by PyTorch "
            "(it names the overload without one)",
        ),
        (
            HEAD + "  - f(Tensor a, int lambda) -> Tensor\n",
            "b.yaml:5: custom op 'tiny::f': its argument name(s) lambda are Python keywords",
        ),
        (
            HEAD + "  - f(Tensor a -> Tensor\n",
            "b.yaml:5: 'f(Tensor a -> Tensor' is not an operator schema (Invalid function schema: "
            "f(Tensor a -> Tensor)\n  hint: write it as in native_functions.yaml: name(Tensor a, float c) "
            "-> Tensor",
        ),
        (
            HEAD + "  - schema: f(Tensor(a!) a) -> ()\n    autograd: true\n",
            "b.yaml:6: custom op 'tiny::f' mutates its arguments; torch.library.register_autograd supports "
            "functional ops only\n  hint: declare a functional variant with autograd: true and derive the "
            "mutating one from it",
        ),
        (
            HEAD + "  - schema: f(Tensor a) -> Tensor\n    autgrad: true\n",
            "b.yaml:6: unknown key 'autgrad' in each entry of 'custom_ops'\n  hint: did you mean "
            "'autograd'? valid keys: schema, autograd, cpu",
        ),
        (
            HEAD + "  - autograd: true\n",
            "b.yaml:5: a custom op needs a 'schema', e.g. schema: mymuladd(Tensor a, Tensor b, float c) "
            "-> Tensor",
        ),
        (
            HEAD + "  - schema: f(Tensor a) -> Tensor\n    cpu: maybe\n",
            "b.yaml:6: 'cpu' of a custom op must be true or false",
        ),
    ],
)
def test_bad_custom_ops_messages(text: str, message: str) -> None:
    assert error_of(text) == message


CLASSES = "custom_classes:\n  Queue:\n    init: ()\n"


def test_a_custom_op_takes_a_class_of_the_backend() -> None:
    # A trailing '_' is torchgen's "in place on self"; for_each_add_ mutates what its class
    # argument holds, and keeps its name.
    config = parse_backend_yaml(
        HEAD + "  - for_each_add_(__torch__.torch.classes.tiny.Queue q, Tensor inc) -> ()\n"
        "  - scale_(Tensor(a!) self, float f) -> Tensor(a!)\n" + CLASSES,
        display_path="b.yaml",
    )
    class_op, inplace = config.custom_ops
    assert str(class_op.schema) == "for_each_add_(__torch__.torch.classes.tiny.Queue q, Tensor inc) -> ()"
    assert class_op.op_name == "for_each_add_" and class_op.group == "for_each_add_"
    assert not class_op.schema.name.name.inplace
    assert inplace.schema.name.name.inplace  # a real in-place op stays one


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            "  - f(__torch__.torch.classes.tiny.Stack s) -> ()\n",
            "b.yaml:5: custom op 'tiny::f': argument 's' has the class type "
            "'__torch__.torch.classes.tiny.Stack', which is not a class of this backend's 'custom_classes'\n"
            "  hint: declared classes: __torch__.torch.classes.tiny.Queue",
        ),
        (
            "  - f(__torch__.torch.classes.other.Queue s) -> ()\n",
            "b.yaml:5: custom op 'tiny::f': argument 's' has the class type "
            "'__torch__.torch.classes.other.Queue', which is not a class of this backend's 'custom_classes'\n"
            "  hint: declared classes: __torch__.torch.classes.tiny.Queue",
        ),
        (
            "  - f(__torch__.torch.classes.tiny.Queue? s) -> ()\n",
            "b.yaml:5: custom op 'tiny::f': argument 's' has the type '__torch__.torch.classes.tiny.Queue?'; "
            "a class can only be taken as a plain argument (not optional or in a list)",
        ),
        (
            "  - f(Tensor a) -> __torch__.torch.classes.tiny.Queue\n",
            "b.yaml:5: custom op 'tiny::f' returns the class type '__torch__.torch.classes.tiny.Queue', which "
            "custom ops cannot return\n  hint: return tensors; a class object is created by its constructor",
        ),
        (
            "  - f_(Tensor a) -> ()\n",
            "b.yaml:5: 'f_(Tensor a) -> ()' is not an operator schema (Inplace op f_ must have a self argument "
            "with a mutable annotation)\n  hint: write it as in native_functions.yaml: name(Tensor a, float c) "
            "-> Tensor",
        ),
    ],
)
def test_bad_class_arguments_are_one_error_with_the_line(line: str, message: str) -> None:
    assert error_of(HEAD + line + CLASSES) == message


def test_a_class_argument_without_classes_says_where_to_declare_it() -> None:
    assert error_of(HEAD + "  - f(__torch__.torch.classes.tiny.Queue q) -> ()\n") == (
        "b.yaml:5: custom op 'tiny::f': argument 'q' has the class type '__torch__.torch.classes.tiny.Queue', "
        "which is not a class of this backend's 'custom_classes'\n  hint: declare the class under "
        "'custom_classes'"
    )


def test_reserved_namespaces_cover_the_installed_torch() -> None:
    """Every namespace PyTorch defines ops in (no backend loaded) is refused."""
    script = (
        "import torch, torch._refs, torch._prims\n"
        "print(' '.join(sorted({n.split('::')[0] for n in torch._C._dispatch_get_all_op_names()})))\n"
    )
    environment = {**os.environ, "TORCH_DEVICE_BACKEND_AUTOLOAD": "0"}
    output = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, env=environment
    ).stdout
    namespaces = set(output.split())
    assert "aten" in namespaces
    assert namespaces <= RESERVED_OP_NAMESPACES


ARGS = ["generate", "--yaml", "backend.yaml", "--declarations", "RegistrationDeclarations.h", "--out", "generated",
        "--kernels", "kernels"]


def _project(tmp_path: Path, yaml_tail: str) -> Path:
    root = tmp_path / "project"
    root.mkdir(parents=True)
    head = "backend: PrivateUse1\ncpp_namespace: tiny\ndevice: tiny\nsupported: [abs.out]\ncustom_ops:\n"
    (root / "backend.yaml").write_text(head + yaml_tail)
    shutil.copy(TESTS / "data" / "declarations_2.13_subset.h", root / "RegistrationDeclarations.h")
    return root


def test_a_collision_stops_generate_with_one_line_and_writes_nothing(tmp_path: Path) -> None:
    root = _project(tmp_path, "  - f(Tensor a) -> Tensor\n  - f(Tensor a, Tensor b) -> Tensor\n")
    process = run_cli_process(ARGS, root)
    assert process.returncode != 0
    assert process.stderr == (
        "error: backend.yaml:7: custom op 'tiny::f' is defined twice (first at line 6)\n"
        "  hint: give one of them another name or overload name (name.overload)\n"
    )
    assert "Traceback" not in process.stderr
    assert not (root / "generated").exists() and not (root / "kernels").exists()


def test_user_files_keep_their_code_when_the_schema_changes(tmp_path: Path) -> None:
    root = _project(tmp_path, "  - schema: scale(Tensor self, float factor) -> Tensor\n    autograd: true\n")
    assert run_cli_process(ARGS, root).returncode == 0
    kernel = root / "kernels" / "custom_ops" / "scale.cpp"
    python = root / "kernels" / "custom_ops" / "scale.py"
    kernel.write_text(kernel.read_text().replace(
        'TORCH_CHECK_NOT_IMPLEMENTED(false, "tiny: tiny::scale has no CPU kernel yet '
        '(implement scale_cpu in kernels/custom_ops/scale.cpp)");',
        "return self * factor;  // mine",
    ))
    python.write_text(python.read_text().replace(
        'raise NotImplementedError("tiny::scale: write its scale_backward in this file")',
        "return grad * ctx.factor, None  # mine",
    ))

    # The schema gains an argument and an overload: definition lines change in place, the new
    # overload's functions are appended, and the user's lines stay.
    (root / "backend.yaml").write_text((root / "backend.yaml").read_text().replace(
        "scale(Tensor self, float factor) -> Tensor",
        "scale(Tensor self, float factor, bool twice=False) -> Tensor",
    ) + "  - scale.out(Tensor self, float factor, bool twice=False, *, Tensor(a!) out) -> Tensor(a!)\n")
    process = run_cli_process(ARGS, root)
    assert process.returncode == 0, process.stderr
    kernel_text = kernel.read_text()
    assert "at::Tensor scale_cpu(const at::Tensor & self, double factor, bool twice) {\n" \
        "  return self * factor;  // mine\n" in kernel_text
    assert "at::Tensor & scale_out_tiny(const at::Tensor & self, double factor, bool twice, at::Tensor & out) {" \
        in kernel_text
    python_text = python.read_text()
    assert "def scale_fake(self, factor, twice) -> Tensor:" in python_text
    assert "return grad * ctx.factor, None  # mine" in python_text
    assert "def scale_out_fake(self, factor, twice, out) -> Tensor:\n    return out\n" in python_text
    header = (root / "generated" / "CustomOps.h").read_text()
    assert "at::Tensor scale_cpu(const at::Tensor & self, double factor, bool twice);" in header
    assert run_cli_process([*ARGS, "--check"], root).returncode == 0


def test_custom_op_output_is_deterministic(tmp_path: Path) -> None:
    yaml_tail = "  - schema: b(Tensor x) -> Tensor\n    autograd: true\n  - a(Tensor x) -> (Tensor, Tensor)\n"
    first = _project(tmp_path / "one", yaml_tail)
    second = _project(tmp_path / "two", yaml_tail)
    assert run_cli_process(ARGS, first).returncode == 0
    assert run_cli_process(ARGS, second).returncode == 0
    assert tree(first / "generated") == tree(second / "generated")
    assert tree(first / "kernels") == tree(second / "kernels")
    fake = (first / "kernels" / "custom_ops" / "a.py").read_text()
    # Two results: the shapes are the user's to say, and the fresh fake says so.
    assert 'raise NotImplementedError("tiny::a: write its fake kernel (a_fake) in this file")' in fake
