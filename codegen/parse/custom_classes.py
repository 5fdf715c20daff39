"""The backend YAML's `custom_classes:` section: C++ classes a backend registers as
`torch.classes.<device>.<Name>` (a `torch::CustomClassHolder`), traceable by torch.compile and
torch.export through a Python fake class, as in PyTorch's guide to custom classes:

    custom_classes:
      TensorQueue:
        init: (Tensor init_tensor)
        methods:
          - push(Tensor tensor) -> ()
          - pop() -> Tensor
          - size() -> int

Each method is a schema without a namespace; `init` is the constructor's argument list. The
generator owns the registration (`TORCH_LIBRARY_FRAGMENT(<device>, m)` with every method,
`__obj_flatten__` and pickling); the user owns the class (its `.h`/`.cpp` pair, scaffolded once
with every method declared) and its fake class (scaffolded once with `__obj_unflatten__` and one
method per C++ method).

The model here is torchgen's: every signature is parsed into a `FunctionSchema`, and C++ types
come from torchgen's C++ API (emit/custom_classes.py); `str()` of a parsed entry gives back its
YAML text in canonical form.
"""

from __future__ import annotations

import difflib
import keyword
import re

import yaml
from torchgen.model import BaseTy, BaseType, FunctionSchema, ListType, OptionalType, Type

from ..errors import BackendYamlError, SourceLocation
from ..model import ident
from ..model.backend import FLATTEN_MEMBER, METHOD_PARSE_NAME, ClassMethod, CustomClass
from .declarations import TORCHGEN_PARSE_ERRORS
from .yaml_nodes import YamlReader

CLASS_KEYS = ("init", "methods")
# Methods PyTorch or the generator gives every class; the YAML cannot declare them again.
GENERATED_METHODS = ("__init__", "__obj_flatten__", "__getstate__", "__setstate__")

_CLASS_NAME = re.compile(r"[A-Z][A-Za-z0-9]*")

# The schema types a class method may take or return: what both TorchScript classes and the
# fake class (plain Python) handle without surprises. Returns exclude `str` (a string_view return
# would dangle).
_ARGUMENT_TYPES: tuple[Type, ...] = (
    BaseType(BaseTy.Tensor),
    OptionalType(BaseType(BaseTy.Tensor)),
    ListType(BaseType(BaseTy.Tensor), None),
    BaseType(BaseTy.int),
    ListType(BaseType(BaseTy.int), None),
    BaseType(BaseTy.float),
    BaseType(BaseTy.bool),
    BaseType(BaseTy.str),
)
_RETURN_TYPES: tuple[Type, ...] = tuple(t for t in _ARGUMENT_TYPES if t != BaseType(BaseTy.str))


def parse_custom_classes(reader: YamlReader, node: yaml.Node) -> tuple[CustomClass, ...]:
    """The `custom_classes:` mapping, in the YAML's order. An empty value is no classes."""
    if isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:null":
        return ()
    if not isinstance(node, yaml.MappingNode):
        raise reader.error(node, "'custom_classes' must be a mapping of class names to their methods")
    classes: list[CustomClass] = []
    seen: dict[str, int] = {}
    for key_node, value_node in node.value:
        name = reader.string(key_node, "a custom class name")
        location = reader.location(key_node)
        if name in seen:
            raise reader.error(key_node, f"custom class '{name}' appears twice (first at line {seen[name]})")
        seen[name] = location.line or 0
        _check_class_name(name, location)
        classes.append(_parse_class(reader, name, location, value_node))
    stems: dict[str, str] = {}
    for custom_class in classes:
        other = stems.setdefault(custom_class.file_stem, custom_class.name)
        if other != custom_class.name:
            raise BackendYamlError(
                f"custom classes '{other}' and '{custom_class.name}' would share the files "
                f"{custom_class.file_stem}.h/.cpp",
                location=custom_class.location,
            )
    return tuple(classes)


def _check_class_name(name: str, location: SourceLocation) -> None:
    problem = ident.cpp_identifier_problem(name)
    if problem is None and _CLASS_NAME.fullmatch(name) is None:
        problem = "is not a class name in CamelCase (a capital letter, then letters and digits)"
    if problem is not None:
        raise BackendYamlError(f"custom class name '{name}' {problem}", location=location)


def _parse_class(reader: YamlReader, name: str, location: SourceLocation, node: yaml.Node) -> CustomClass:
    entries = reader.mapping(node, f"custom class '{name}'", CLASS_KEYS)
    if "init" not in entries:
        raise BackendYamlError(
            f"custom class '{name}' has no 'init'",
            location=location,
            hint="give the constructor's arguments, e.g. init: (Tensor init_tensor), or init: ()",
        )
    init_node = entries["init"][1]
    init = _parse_signature(reader, init_node, f"{reader.string(init_node, 'init')} -> ()", f"'init' of {name}")
    methods: tuple[ClassMethod, ...] = ()
    if "methods" in entries:
        methods = reader.sequence(
            entries["methods"][1], f"'methods' of {name}", lambda child: _parse_method(reader, child, name)
        )
    first: dict[str, ClassMethod] = {}
    for method in methods:
        if method.name in first:
            raise BackendYamlError(
                f"method '{method.name}' of custom class '{name}' appears twice "
                f"(first at line {first[method.name].location.line})",
                location=method.location,
            )
        first[method.name] = method
    return CustomClass(name=name, init=init, methods=methods, location=location)


def _parse_method(reader: YamlReader, node: yaml.Node, class_name: str) -> ClassMethod:
    text = reader.string(node, f"each entry of the methods of {class_name}")
    location = reader.location(node)
    name, parenthesis, rest = text.partition("(")
    name = name.strip()
    if not parenthesis:
        raise BackendYamlError(
            f"'{text}' is not a method signature",
            location=location,
            hint="write it as a schema without namespace, e.g. push(Tensor tensor) -> ()",
        )
    if name in GENERATED_METHODS or name == FLATTEN_MEMBER:
        raise BackendYamlError(
            f"method '{name}' of custom class '{class_name}' is generated for every class",
            location=location,
            hint="'init' gives the constructor; __obj_flatten__ and pickling are registered for you",
        )
    problem = ident.cpp_identifier_problem(name)
    if problem is None and keyword.iskeyword(name):
        problem = "is a Python keyword"
    if problem is not None:
        raise BackendYamlError(f"method name '{name}' of custom class '{class_name}' {problem}", location=location)
    schema = _parse_signature(reader, node, f"({rest}", f"method '{name}' of {class_name}")
    if len(schema.returns) > 1:
        raise BackendYamlError(
            f"method '{name}' of custom class '{class_name}' returns {len(schema.returns)} values",
            location=location,
            hint="return one value (a Tensor[] holds several tensors)",
        )
    for returned in schema.returns:
        _check_type(returned.type, _RETURN_TYPES, f"the return of method '{name}'", location)
    return ClassMethod(name=name, schema=schema, location=location)


def _parse_signature(reader: YamlReader, node: yaml.Node, text: str, what: str) -> FunctionSchema:
    """`(args) -> returns` parsed by torchgen; only plain (not mutable, not aliasing) arguments of
    the supported types."""
    location = reader.location(node)
    try:
        schema = FunctionSchema.parse(f"{METHOD_PARSE_NAME}{text}")
    except TORCHGEN_PARSE_ERRORS as error:
        raise BackendYamlError(
            f"{what} is not a valid signature: {_first_line(error)}",
            location=location,
            hint="write it as a schema without namespace, e.g. push(Tensor tensor) -> ()",
        ) from None
    for argument in schema.arguments.flat_all:
        if argument.annotation is not None or argument.default is not None:
            raise BackendYamlError(
                f"argument '{argument.name}' of {what} has an alias annotation or a default",
                location=location,
                hint="class methods take plain arguments: Tensor x, int n, ...",
            )
        _check_type(argument.type, _ARGUMENT_TYPES, f"argument '{argument.name}' of {what}", location)
        problem = ident.cpp_identifier_problem(argument.name)
        if problem is not None:
            raise BackendYamlError(f"argument '{argument.name}' of {what} {problem}", location=location)
    if schema.arguments.out or schema.arguments.tensor_options is not None:
        raise BackendYamlError(f"{what} has out= or TensorOptions arguments", location=location)
    return schema


def _check_type(type_: Type, allowed: tuple[Type, ...], what: str, location: SourceLocation) -> None:
    if type_ not in allowed:
        names = ", ".join(str(t) for t in allowed)
        close = difflib.get_close_matches(str(type_), [str(t) for t in allowed], n=1)
        suggestion = f"did you mean '{close[0]}'? " if close else ""
        raise BackendYamlError(
            f"{what} has the type '{type_}', which custom class methods do not support",
            location=location,
            hint=f"{suggestion}supported: {names}",
        )


def _first_line(error: BaseException) -> str:
    text = str(error).strip() or type(error).__name__
    return text.splitlines()[0]

