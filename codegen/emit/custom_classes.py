"""Text of the files a `custom_classes:` section produces (see parse/custom_classes.py): the generated
registration, and the user's class (`.h`/`.cpp`) and fake class (Python) scaffolds. Pure
functions from the model to text; C++ types come from torchgen's C++ API."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from torchgen import local
from torchgen.api import cpp
from torchgen.model import Argument, BaseTy, BaseType, FunctionSchema, ListType, OptionalType, Return, Type

from ..model import ident
from ..model.backend import FLATTEN_MEMBER, ClassMethod, CustomClass
from ..model.outputs import CUSTOM_CLASS_DIRECTORY as CLASS_DIRECTORY
from ..model.outputs import CUSTOM_CLASS_REGISTRATION as REGISTRATION_FILE
from ..model.outputs import OutputFile, Owner
from .common import generated_banner
from .context import EmitContext
from .render import render

_PYTHON_TYPES = {
    BaseType(BaseTy.Tensor): "torch.Tensor",
    OptionalType(BaseType(BaseTy.Tensor)): "torch.Tensor | None",
    ListType(BaseType(BaseTy.Tensor), None): "list[torch.Tensor]",
    BaseType(BaseTy.int): "int",
    ListType(BaseType(BaseTy.int), None): "list[int]",
    BaseType(BaseTy.float): "float",
    BaseType(BaseTy.bool): "bool",
    BaseType(BaseTy.str): "str",
}


@dataclass(frozen=True)
class CppMember:
    """One piece of a class's state: a constructor argument kept as a member."""

    name: str
    value_type: str


@dataclass(frozen=True)
class CppMethod:
    name: str
    declaration: str
    """`void push(const at::Tensor & tensor)`: the member function's head, without the class."""
    definition: str
    """The same head, qualified with the class name, for the .cpp."""


@dataclass(frozen=True)
class PyMethod:
    name: str
    parameters: str
    """`self, tensor: torch.Tensor`"""
    returns: str


def _value_type(type_: Type) -> str:
    """The owning C++ type of a value of `type_` (a class member, a constructor argument)."""
    if type_ == BaseType(BaseTy.str):
        return "std::string"  # torchgen's c10::string_view would dangle as a member
    with _torchgen_flags():
        return str(cpp.return_type(Return(name=None, type=type_, annotation=None), symint=False).cpp_type())


def _parameter_type(argument: Argument) -> str:
    with _torchgen_flags():
        return str(cpp.argument_type(argument, binds=argument.name, symint=False).cpp_type())


def _returns_type(schema: FunctionSchema) -> str:
    with _torchgen_flags():
        return str(cpp.returns_type(schema.returns, symint=False).cpp_type())


@contextmanager
def _torchgen_flags() -> Iterator[None]:
    # Plain const references and ArrayRefs: what a class method binds to (the settings of
    # today's dispatcher API, not the legacy ones).
    with local.parametrize(use_const_ref_for_mutable_tensors=False, use_ilistref_for_tensor_lists=False):
        yield


def members(custom_class: CustomClass) -> list[CppMember]:
    return [
        CppMember(argument.name, _value_type(argument.type))
        for argument in custom_class.init.arguments.flat_all
    ]


def cpp_methods(custom_class: CustomClass) -> list[CppMethod]:
    methods = []
    for method in custom_class.methods:
        parameters = ", ".join(
            f"{_parameter_type(argument)} {argument.name}" for argument in method.schema.arguments.flat_all
        )
        returns = _returns_type(method.schema)
        methods.append(
            CppMethod(
                name=method.name,
                declaration=f"{returns} {method.name}({parameters})",
                definition=f"{returns} {custom_class.name}::{method.name}({parameters})",
            )
        )
    return methods


def _py_method(method: ClassMethod) -> PyMethod:
    parameters = ["self"] + [
        f"{argument.name}: {_PYTHON_TYPES[argument.type]}" for argument in method.schema.arguments.flat_all
    ]
    returns = _PYTHON_TYPES[method.schema.returns[0].type] if method.schema.returns else "None"
    return PyMethod(method.name, ", ".join(parameters), returns)


def emit_registration(
    classes: tuple[CustomClass, ...],
    *,
    banner: str,
    device: str,
    cpp_namespace: str,
    yaml_path: str,
    class_op_schemas: tuple[str, ...] = (),
) -> str:
    """The generated TORCH_LIBRARY_FRAGMENT(<device>) registering every class, then defining the
    custom ops that take one (`class_op_schemas`, C++ string literals): a schema naming a class
    parses only once the class is registered, which one block guarantees."""
    return render(
        "codegen/RegisterCustomClasses.cpp.j2",
        banner=banner,
        device=device,
        yaml_path=yaml_path,
        includes=sorted(f"{CLASS_DIRECTORY}/{c.file_stem}.h" for c in classes),
        classes=[
            {
                "name": c.name,
                "qualified": f"{cpp_namespace}::{c.name}",
                "init_types": ", ".join(member.value_type for member in members(c)),
                "methods": [method.name for method in c.methods],
            }
            for c in sorted(classes, key=lambda c: c.name)
        ],
        flatten_member=FLATTEN_MEMBER,
        class_op_schemas=list(class_op_schemas),
    )


def _class_context(custom_class: CustomClass, device: str, cpp_namespace: str, yaml_path: str) -> dict[str, object]:
    state = members(custom_class)
    return {
        "name": custom_class.name,
        "stem": custom_class.file_stem,
        "device": device,
        "cpp_namespace": cpp_namespace,
        "yaml_path": yaml_path,
        "yaml_line": custom_class.location.line,
        "members": state,
        # By value: the constructor keeps every argument (torch::init passes owned values).
        "constructor_parameters": ", ".join(f"{m.value_type} {m.name}" for m in state),
        "flat_state_type": ", ".join(f"std::tuple<std::string, {m.value_type}>" for m in state),
        "pickled_state_type": ", ".join(m.value_type for m in state),
        "unpickled_arguments": ", ".join(f"std::get<{index}>(state)" for index in range(len(state))),
        "methods": cpp_methods(custom_class),
        "flatten_member": FLATTEN_MEMBER,
        "registration_file": REGISTRATION_FILE,
        "py_init_parameters": ", ".join(
            ["self"] + [f"{a.name}: {_PYTHON_TYPES[a.type]}" for a in custom_class.init.arguments.flat_all]
        ),
        "py_methods": [_py_method(method) for method in custom_class.methods],
    }


def scaffold_header(custom_class: CustomClass, *, device: str, cpp_namespace: str, yaml_path: str) -> str:
    return render("codegen/custom_class.h.j2", **_class_context(custom_class, device, cpp_namespace, yaml_path))


def scaffold_source(custom_class: CustomClass, *, device: str, cpp_namespace: str, yaml_path: str) -> str:
    return render("codegen/custom_class.cpp.j2", **_class_context(custom_class, device, cpp_namespace, yaml_path))


def scaffold_fake_class(custom_class: CustomClass, *, device: str, cpp_namespace: str, yaml_path: str) -> str:
    return render("codegen/fake_class.py.j2", **_class_context(custom_class, device, cpp_namespace, yaml_path))


def emit_custom_class_registration(context: EmitContext) -> list[OutputFile]:
    """The generated registration of the YAML's classes; nothing without a custom_classes section."""
    config = context.config
    if not config.custom_classes:
        return []
    content = emit_registration(
        config.custom_classes,
        banner=generated_banner(context.selection),
        device=config.device,
        cpp_namespace=config.cpp_namespace,
        yaml_path=config.display_path,
        class_op_schemas=tuple(
            ident.cpp_string_literal(str(op.schema))
            for op in sorted(config.custom_ops, key=lambda op: op.op_name)
            if op.takes_class
        ),
    )
    return [OutputFile(path=context.layout.in_out(REGISTRATION_FILE), content=content, owner=Owner.GENERATOR)]


def custom_class_scaffolds(context: EmitContext) -> list[OutputFile]:
    """The user's files of each class, in <kernels>/custom_classes/: created when missing, then
    never touched (the registration binds to them by name)."""
    config = context.config
    options = {"device": config.device, "cpp_namespace": config.cpp_namespace, "yaml_path": config.display_path}
    directory = context.layout.kernels_dir / CLASS_DIRECTORY
    files = []
    for custom_class in config.custom_classes:
        stem = custom_class.file_stem
        files += [
            OutputFile(directory / f"{stem}.h", scaffold_header(custom_class, **options), Owner.SCAFFOLD),
            OutputFile(directory / f"{stem}.cpp", scaffold_source(custom_class, **options), Owner.SCAFFOLD),
            OutputFile(directory / f"{stem}.py", scaffold_fake_class(custom_class, **options), Owner.SCAFFOLD),
        ]
    return files
