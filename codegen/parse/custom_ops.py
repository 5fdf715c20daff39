"""The backend YAML's `custom_ops:` section: operators a backend defines in its own namespace (its
device name), each given by a schema that torchgen's FunctionSchema parses."""

from __future__ import annotations

import dataclasses
import keyword

import yaml
from torchgen.model import CustomClassType, FunctionSchema, ListType, OperatorName, OptionalType, Type

from ..errors import BackendYamlError
from ..model import ident
from ..model.backend import CustomClass, CustomOp
from .declarations import TORCHGEN_PARSE_ERRORS
from .yaml_nodes import YamlReader

CUSTOM_OP_KEYS = ("schema", "autograd", "cpu")


def parse_custom_ops(
    reader: YamlReader, key_node: yaml.Node, node: yaml.Node, namespace: str, classes: tuple[CustomClass, ...]
) -> tuple[CustomOp, ...]:
    """The `custom_ops:` list, in the YAML's order; `namespace` is the device name."""
    custom_ops = reader.sequence(node, "'custom_ops'", lambda entry: _custom_op(reader, entry, namespace, classes))
    if custom_ops:
        reader.check_name(key_node, ident.custom_op_namespace_issue(namespace, f"torch_{namespace}"))
    _check_custom_op_names(custom_ops)
    return custom_ops


def _custom_op(reader: YamlReader, node: yaml.Node, namespace: str, classes: tuple[CustomClass, ...]) -> CustomOp:
    """One `custom_ops` entry: `{schema: "name(Tensor a) -> Tensor", autograd: true}`; a plain
    string is the schema alone."""
    if isinstance(node, yaml.ScalarNode):
        entries: dict[str, tuple[yaml.Node, yaml.Node]] = {"schema": (node, node)}
    else:
        entries = reader.mapping(node, "each entry of 'custom_ops'", CUSTOM_OP_KEYS)
        if "schema" not in entries:
            raise reader.error(
                node,
                "a custom op needs a 'schema', e.g. schema: mymuladd(Tensor a, Tensor b, float c) -> Tensor",
            )
    schema_node = entries["schema"][1]
    text = reader.string(schema_node, "a custom op's 'schema'").strip()
    qualifier, separator, unqualified = text.partition("::")
    if separator:
        if qualifier != namespace:
            raise reader.error(
                schema_node,
                f"custom op '{text}' names the namespace '{qualifier}'; a backend defines its "
                f"custom ops in its own namespace '{namespace}' (its device name)",
                hint=f"write the schema without a namespace, or as {namespace}::{unqualified.split('(')[0]}",
            )
        text = unqualified
    try:
        schema = _parse_custom_op_schema(text)
    except TORCHGEN_PARSE_ERRORS as error:
        detail = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise reader.error(
            schema_node,
            f"'{text}' is not an operator schema ({detail})",
            hint="write it as in native_functions.yaml: name(Tensor a, float c) -> Tensor",
        ) from None
    _check_class_arguments(reader, schema_node, schema, namespace, classes)
    name = schema.name.name
    problem = _custom_op_name_problem(str(name.base), schema.name.overload_name)
    if problem is None:
        keywords = sorted(a.name for a in schema.arguments.flat_all if keyword.iskeyword(a.name))
        if keywords:
            problem = f"its argument name(s) {', '.join(keywords)} are Python keywords"
    if problem is not None:
        raise reader.error(schema_node, f"custom op '{namespace}::{schema.name}': {problem}")

    def flag(key: str, default: bool) -> bool:
        return reader.boolean(entries[key][1], f"'{key}' of a custom op") if key in entries else default

    autograd = flag("autograd", False)
    if autograd and schema.is_mutable:
        raise reader.error(
            entries["autograd"][1],
            f"custom op '{namespace}::{schema.name}' mutates its arguments; "
            "torch.library.register_autograd supports functional ops only",
            hint="declare a functional variant with autograd: true and derive the mutating one from it",
        )
    return CustomOp(
        namespace=namespace,
        schema=schema,
        autograd=autograd,
        cpu=flag("cpu", True),
        location=reader.location(schema_node),
    )


def _parse_custom_op_schema(text: str) -> FunctionSchema:
    """torchgen's parse, with one difference: torchgen reads a trailing `_` as "in place on
    `self`" and refuses a schema without a mutable `self`. A custom op such as
    `for_each_add_(__torch__.torch.classes.foo.TensorQueue tq, Tensor inc) -> ()` mutates what
    its class argument holds; such an op (one taking a class) is parsed under the name without
    the `_`, which is then given back (`str()` still round-trips)."""
    try:
        return FunctionSchema.parse(text)
    except TORCHGEN_PARSE_ERRORS as error:
        head, parenthesis, rest = text.partition("(")
        try:
            name = OperatorName.parse(head.strip())
        except TORCHGEN_PARSE_ERRORS:
            raise error from None
        if not parenthesis or not name.name.inplace or name.name.dunder_method:
            raise
        plain = dataclasses.replace(name, name=dataclasses.replace(name.name, inplace=False))
        try:
            schema = FunctionSchema.parse(f"{plain}({rest}")
        except TORCHGEN_PARSE_ERRORS:
            raise error from None
        if not any(isinstance(argument.type, CustomClassType) for argument in schema.arguments.flat_all):
            raise error from None  # no class to mutate: torchgen's rule stands
        renamed = dataclasses.replace(plain, name=dataclasses.replace(plain.name, base=f"{plain.name.base}_"))
        return dataclasses.replace(schema, name=renamed)


def _check_class_arguments(
    reader: YamlReader, node: yaml.Node, schema: FunctionSchema, namespace: str, classes: tuple[CustomClass, ...]
) -> None:
    """A custom op may take the backend's own custom classes (`__torch__.torch.classes.<device>.
    <Class>`, a class of the `custom_classes:` section), as plain arguments; nothing else names a
    class the generator could give a C++ type."""
    declared = sorted(f"{namespace}.{custom_class.name}" for custom_class in classes)
    for argument in schema.arguments.flat_all:
        if isinstance(argument.type, CustomClassType):
            if argument.type.class_name not in declared:
                choices = ", ".join(f"__torch__.torch.classes.{name}" for name in declared)
                raise reader.error(
                    node,
                    f"custom op '{namespace}::{schema.name}': argument '{argument.name}' has the class "
                    f"type '{argument.type}', which is not a class of this backend's 'custom_classes'",
                    hint=f"declared classes: {choices}" if declared else "declare the class under 'custom_classes'",
                )
            if argument.annotation is not None or argument.default is not None:
                raise reader.error(
                    node,
                    f"custom op '{namespace}::{schema.name}': the class argument '{argument.name}' "
                    "has an alias annotation or a default",
                    hint="a class argument is written plainly; the fake kernel says what the op does to it",
                )
        elif _holds_class(argument.type):
            raise reader.error(
                node,
                f"custom op '{namespace}::{schema.name}': argument '{argument.name}' has the type "
                f"'{argument.type}'; a class can only be taken as a plain argument (not optional or in a list)",
            )
    for returned in schema.returns:
        if _holds_class(returned.type):
            raise reader.error(
                node,
                f"custom op '{namespace}::{schema.name}' returns the class type '{returned.type}', "
                "which custom ops cannot return",
                hint="return tensors; a class object is created by its constructor",
            )


def _holds_class(type_: Type) -> bool:
    if isinstance(type_, CustomClassType):
        return True
    if isinstance(type_, (OptionalType, ListType)):
        return _holds_class(type_.elem)
    return False


def _custom_op_name_problem(base: str, overload: str) -> str | None:
    if not base.isidentifier() or not base.isascii() or base.startswith("__"):
        return "the name must be a plain ASCII identifier not starting with __"
    if overload == "default":
        return "the overload name 'default' is reserved by PyTorch (it names the overload without one)"
    if overload and not (overload.isidentifier() and overload.isascii()):
        return "the overload name must be a plain ASCII identifier"
    return None


def _check_custom_op_names(custom_ops: tuple[CustomOp, ...]) -> None:
    """Two entries defining one operator, or two whose kernels would get the same C++ name
    (`a.out` and `a_out`), are caught here rather than by TORCH_LIBRARY at import time."""
    by_name: dict[str, CustomOp] = {}
    by_kernel: dict[str, CustomOp] = {}
    for op in custom_ops:
        first = by_name.get(op.op_name)
        if first is not None:
            raise BackendYamlError(
                f"custom op '{op.qualified_name}' is defined twice (first at line {first.location.line})",
                location=op.location,
                hint="give one of them another name or overload name (name.overload)",
            )
        by_name[op.op_name] = op
        kernel = ident.custom_kernel_base(op.schema.name)
        clash = by_kernel.get(kernel)
        if clash is not None:
            raise BackendYamlError(
                f"custom ops '{clash.qualified_name}' (line {clash.location.line}) and "
                f"'{op.qualified_name}' would both have the C++ kernel name {kernel}_*",
                location=op.location,
                hint="rename one of them",
            )
        by_kernel[kernel] = op
