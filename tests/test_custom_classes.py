"""The backend YAML's `custom_classes:` section (codegen/custom_classes.py) and the files it
produces (codegen/emit/custom_classes.py): entries round-trip through torchgen's schema model,
bad entries are one error with the YAML line, and the registration and scaffolds compile with g++
and load into torch as working classes (slow)."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import TypedDict

import pytest
import yaml
from scaffold_testing import TESTS, CliRun, Toolchain, compile_all, python_without_autoload

from scaffold_backend.emit import custom_classes as emit
from scaffold_backend.errors import BackendYamlError
from scaffold_backend.model.backend import CustomClass
from scaffold_backend.model.outputs import CUSTOM_CLASS_DIRECTORY, CUSTOM_CLASS_REGISTRATION
from scaffold_backend.parse.custom_classes import parse_custom_classes
from scaffold_backend.parse.yaml_nodes import YamlReader

TENSOR_QUEUE = """\
custom_classes:
  TensorQueue:
    init: (Tensor init_tensor)
    methods:
      - push(Tensor tensor) -> ()
      - pop() -> Tensor
      - size() -> int
      - get_raw_queue() -> Tensor[]
      - for_each_add_(Tensor inc) -> ()
"""

EVERY_TYPE = """\
custom_classes:
  EveryType:
    init: (Tensor t, Tensor? o, Tensor[] l, int n, int[] ns, float f, bool b, str s)
    methods:
      - take(Tensor t, Tensor? o, Tensor[] l, int n, int[] ns, float f, bool b, str s) -> ()
      - maybe() -> Tensor?
      - ints() -> int[]
      - flag() -> bool
      - real() -> float
  Stateless:
    init: ()
"""


class EmitOptions(TypedDict):
    """The keyword arguments the emitters of a class's files share."""

    device: str
    cpp_namespace: str
    yaml_path: str


def parse(text: str) -> tuple[CustomClass, ...]:
    root = yaml.compose(text, Loader=yaml.SafeLoader)
    assert root is not None
    classes: tuple[CustomClass, ...] = parse_custom_classes(YamlReader("backend.yaml"), root.value[0][1])
    return classes


def test_entries_round_trip_through_torchgen() -> None:
    (queue,) = parse(TENSOR_QUEUE)
    assert queue.name == "TensorQueue" and queue.file_stem == "tensor_queue"
    assert queue.init_text == "(Tensor init_tensor)"
    assert [str(method) for method in queue.methods] == [
        "push(Tensor tensor) -> ()",
        "pop() -> Tensor",
        "size() -> int",
        "get_raw_queue() -> Tensor[]",
        "for_each_add_(Tensor inc) -> ()",
    ]
    assert [method.location.line for method in queue.methods] == [5, 6, 7, 8, 9]


def test_an_empty_section_is_no_classes() -> None:
    assert parse("custom_classes:\n") == ()


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("  tensorQueue:\n    init: ()\n",
         "backend.yaml:2: custom class name 'tensorQueue' is not a class name in CamelCase "
         "(a capital letter, then letters and digits)"),
        ("  Q:\n    methods: []\n", "backend.yaml:2: custom class 'Q' has no 'init'"),
        ("  Q:\n    init: ()\n    method: []\n", "backend.yaml:4: unknown key 'method' in custom class 'Q'"),
        ("  Q:\n    init: (Tensr x)\n",
         "backend.yaml:3: 'init' of Q is not a valid signature: unrecognized type Tensr"),
        ("  Q:\n    init: (Tensor(a!) x)\n",
         "backend.yaml:3: argument 'x' of 'init' of Q has an alias annotation or a default"),
        ("  Q:\n    init: ()\n    methods:\n      - pop() -> str\n",
         "backend.yaml:5: the return of method 'pop' has the type 'str', which custom class methods "
         "do not support"),
        ("  Q:\n    init: ()\n    methods:\n      - push(Scalar s) -> ()\n",
         "backend.yaml:5: argument 's' of method 'push' of Q has the type 'Scalar', which custom "
         "class methods do not support"),
        ("  Q:\n    init: ()\n    methods:\n      - __obj_flatten__() -> ()\n",
         "backend.yaml:5: method '__obj_flatten__' of custom class 'Q' is generated for every class"),
        ("  Q:\n    init: ()\n    methods:\n      - a() -> ()\n      - a(int n) -> ()\n",
         "backend.yaml:6: method 'a' of custom class 'Q' appears twice (first at line 5)"),
        ("  Q:\n    init: ()\n    methods:\n      - pop\n",
         "backend.yaml:5: 'pop' is not a method signature"),
        ("  Q:\n    init: ()\n    methods:\n      - class() -> ()\n",
         "backend.yaml:5: method name 'class' of custom class 'Q' is a C++ keyword"),
        ("  Q:\n    init: ()\n  Q:\n    init: ()\n",
         "backend.yaml:4: custom class 'Q' appears twice (first at line 2)"),
        ("  Abc:\n    init: ()\n  ABc:\n    init: ()\n",
         "backend.yaml:4: custom classes 'Abc' and 'ABc' would share the files abc.h/.cpp"),
    ],
)
def test_bad_entries_are_one_error_with_the_line(entry: str, message: str) -> None:
    with pytest.raises(BackendYamlError) as caught:
        parse("custom_classes:\n" + entry)
    assert f"{caught.value.location}: {caught.value.message}".startswith(message)


def test_registration_binds_every_method_flatten_and_pickling() -> None:
    (queue,) = parse(TENSOR_QUEUE)
    text = emit.emit_registration(
        (queue,), banner="// @generated", device="foo", cpp_namespace="foo::native", yaml_path="backend.yaml"
    )
    assert '#include "custom_classes/tensor_queue.h"' in text
    assert "TORCH_LIBRARY_FRAGMENT(foo, m) {" in text
    assert '  m.class_<foo::native::TensorQueue>("TensorQueue")\n      .def(torch::init<at::Tensor>())\n' in text
    for method in ("push", "pop", "size", "get_raw_queue", "for_each_add_"):
        assert f'      .def("{method}", &foo::native::TensorQueue::{method})\n' in text
    assert '.def("__obj_flatten__", &foo::native::TensorQueue::obj_flatten)' in text
    assert ".def_pickle(" in text


def test_scaffolds_declare_every_method_with_torchgen_types() -> None:
    every, _ = parse(EVERY_TYPE)
    options: EmitOptions = {"device": "foo", "cpp_namespace": "foo", "yaml_path": "backend.yaml"}
    header = emit.scaffold_header(every, **options)
    assert (
        "  void take(const at::Tensor & t, const ::std::optional<at::Tensor> & o, at::TensorList l, "
        "int64_t n, at::IntArrayRef ns, double f, bool b, c10::string_view s);\n"
    ) in header
    assert "  ::std::optional<at::Tensor> maybe();\n" in header
    assert "  std::string s_;\n" in header  # an owned string, not a string_view
    fake = emit.scaffold_fake_class(every, **options)
    # The device name comes from the package (generated from the YAML's device), not the file.
    assert "from .._device_name import DEVICE_NAME" in fake
    assert '@torch._library.register_fake_class(f"{DEVICE_NAME}::EveryType")' in fake
    assert "    def maybe(self) -> torch.Tensor | None:\n" in fake
    compile(fake, "fake.py", "exec")


# ---------------------------------------------------------------------------------------------
# `generate` with a custom_classes section
# ---------------------------------------------------------------------------------------------

GENERATE = ["generate", "--yaml", "backend.yaml", "--declarations", "RegistrationDeclarations.h", "--out", "generated"]


def _project_with_classes(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    small = (TESTS / "data" / "small_backend.yaml").read_text()
    (root / "backend.yaml").write_text(small + "\n" + TENSOR_QUEUE)
    (root / "RegistrationDeclarations.h").write_bytes((TESTS / "data" / "declarations_2.13_subset.h").read_bytes())
    return root


def test_generate_registers_classes_and_scaffolds_their_files_once(tmp_path: Path, cli_run: CliRun) -> None:
    root = _project_with_classes(tmp_path)
    assert cli_run(GENERATE, root).exit_code == 0
    registration = (root / "generated" / CUSTOM_CLASS_REGISTRATION).read_text()
    assert registration.startswith("// @generated by scaffold-backend from:\n//   backend.yaml\n")
    assert '#include "custom_classes/tensor_queue.h"' in registration
    class_dir = root / "kernels" / "custom_classes"
    assert sorted(path.name for path in class_dir.iterdir()) == [
        "tensor_queue.cpp",
        "tensor_queue.h",
        "tensor_queue.py",
    ]
    sources = (root / "generated" / "sources.cmake").read_text()
    assert '"${CMAKE_CURRENT_LIST_DIR}/RegisterCustomClasses.cpp"' in sources
    assert '"${CMAKE_CURRENT_LIST_DIR}/../kernels/custom_classes/tensor_queue.cpp"' in sources

    # The class's files are the user's: a later run leaves them as they are, --check included.
    edited = class_dir / "tensor_queue.cpp"
    edited.write_text(edited.read_text() + "// mine\n")
    assert cli_run(GENERATE, root).exit_code == 0
    assert edited.read_text().endswith("// mine\n")
    assert cli_run([*GENERATE, "--check"], root).exit_code == 0
    # A missing one is created again, and --check reports it first.
    (class_dir / "tensor_queue.py").unlink()
    assert cli_run([*GENERATE, "--check"], root).exit_code != 0
    assert cli_run(GENERATE, root).exit_code == 0
    assert (class_dir / "tensor_queue.py").exists()


def test_generate_reports_a_bad_class_with_its_line(tmp_path: Path, cli_run: CliRun) -> None:
    root = _project_with_classes(tmp_path)
    text = (root / "backend.yaml").read_text().replace("pop() -> Tensor", "pop() -> str")
    (root / "backend.yaml").write_text(text)
    line = text.splitlines().index("      - pop() -> str") + 1
    result = cli_run(GENERATE, root)
    assert result.exit_code != 0
    assert f"backend.yaml:{line}: the return of method 'pop' has the type 'str'" in result.output
    assert "Traceback" not in result.output
    assert not (root / "generated").exists()


# ---------------------------------------------------------------------------------------------
# The emitted files compile and load (slow: real g++ builds)
# ---------------------------------------------------------------------------------------------

LOAD_AND_USE = textwrap.dedent(
    """
    import copy, sys, torch
    torch.ops.load_library(sys.argv[1])
    t = torch.arange(3.0)
    every = torch.classes.foo.EveryType(t, None, [t, t], 2, [1, 2], 0.5, True, "name")
    flat = every.__obj_flatten__()
    assert [name for name, _ in flat] == ["t", "o", "l", "n", "ns", "f", "b", "s"], flat
    assert dict(flat)["s"] == "name" and dict(flat)["ns"] == [1, 2] and dict(flat)["o"] is None
    clone = copy.deepcopy(every)
    assert [name for name, _ in clone.__obj_flatten__()] == [name for name, _ in flat]
    queue = torch.classes.foo.TensorQueue(torch.zeros(1))
    try:
        queue.push(t)
    except RuntimeError as error:
        assert "TensorQueue.push is not implemented yet" in str(error), error
    else:
        raise AssertionError("the scaffolded method ran")
    assert torch.classes.foo.Stateless().__obj_flatten__() == ()
    sys.path.insert(0, sys.argv[2])
    import torch_tiny._custom_classes.tensor_queue  # registers the fake class
    from torch._library.fake_class_registry import maybe_to_fake_obj
    from torch._subclasses.fake_tensor import FakeTensorMode
    fake = maybe_to_fake_obj(FakeTensorMode(), queue).wrapped_obj  # what tracing builds
    assert type(fake).__name__ == "FakeTensorQueue" and fake.init_tensor.shape == (1,), fake
    print("ok")
    """
)


@pytest.mark.slow
def test_registration_and_scaffolds_compile_and_load(tmp_path: Path, toolchain: Toolchain) -> None:
    classes = parse(TENSOR_QUEUE) + parse(EVERY_TYPE)
    options: EmitOptions = {"device": "foo", "cpp_namespace": "foo", "yaml_path": "backend.yaml"}
    class_dir = tmp_path / "kernels" / CUSTOM_CLASS_DIRECTORY
    class_dir.mkdir(parents=True)
    sources = [tmp_path / CUSTOM_CLASS_REGISTRATION]
    sources[0].write_text(emit.emit_registration(classes, banner="// @generated", **options))
    for custom_class in classes:
        (class_dir / f"{custom_class.file_stem}.h").write_text(emit.scaffold_header(custom_class, **options))
        source = class_dir / f"{custom_class.file_stem}.cpp"
        source.write_text(emit.scaffold_source(custom_class, **options))
        sources.append(source)
    # The fake class as the build installs it: <package>/_custom_classes/, beside the package's
    # _device_name module (generated from the YAML), which it reads the device name from.
    package = tmp_path / "site" / "torch_tiny"
    (package / "_custom_classes").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "_device_name.py").write_text('DEVICE_NAME = "foo"\n')
    (package / "_custom_classes" / "__init__.py").write_text("")
    (package / "_custom_classes" / "tensor_queue.py").write_text(emit.scaffold_fake_class(classes[0], **options))
    objects = compile_all(toolchain, sources, tmp_path / "obj", [tmp_path / "kernels"])
    library = tmp_path / "libclasses.so"
    toolchain.link(objects, library)
    result = python_without_autoload(LOAD_AND_USE, str(library), str(tmp_path / "site"))
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr[-3000:]
