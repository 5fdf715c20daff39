"""Strict parser for the backend YAML.

It accepts every key of torchgen's `gen_backend_stubs` YAML, so an existing backend's file
works, plus scaffold-backend's own (`device`, `fallback`, `shards`). Unknown keys, wrong types and
unsafe names are errors that carry the YAML line; keys that only torchgen's lazy-tensor generator
understands get a clear "not supported" error rather than silence. Whether the listed operators
exist is checked later, against the declarations (selection.py).
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import hashlib
import keyword
from collections.abc import Callable
from typing import TypeVar

from torchgen.model import CustomClassType, DispatchKey, FunctionSchema, ListType, OperatorName, OptionalType, Type

import yaml

from ..errors import BackendYamlError, SourceLocation
from ..model import ident
from ..model.backend import (
    AutocastEntry,
    AutocastPolicy,
    BackendConfig,
    CustomClass,
    CustomOp,
    DeviceGuardType,
    FallbackDefault,
    FallbackMode,
    FallbackPolicy,
    OpEntry,
)
from .custom_classes import parse_custom_classes
from .declarations import TORCHGEN_PARSE_ERRORS

T = TypeVar("T")

TORCHGEN_KEYS = (
    "backend",
    "cpp_namespace",
    "class_name",
    "supported",
    "autograd",
    "symint",
    "use_out_as_primary",
    "device_guard",
    "extra_headers",
)
OWN_KEYS = ("device", "fallback", "shards", "custom_ops", "custom_classes", "autocast")
VALID_KEYS = TORCHGEN_KEYS + OWN_KEYS
LAZY_TENSOR_KEYS = ("full_codegen", "non_native", "ir_gen")
FALLBACK_KEYS = ("default", "mode", "warn_once", "never", "explicit")
CUSTOM_OP_KEYS = ("schema", "autograd", "cpu")
DEVICE_GUARD_KEYS = ("type", "header")
AUTOCAST_KEYS = tuple(policy.value for policy in AutocastPolicy)
# The runtime registers autocast for this key only (ATen's KERNEL_PRIVATEUSEONE lists).
AUTOCAST_BACKEND = "PrivateUse1"
# Dispatch keys that exist for backends living outside PyTorch: the PrivateUse keys, and the keys
# PyTorch reserves for out-of-tree projects that torchgen's gen_backend_stubs serves (torch_xla,
# Habana, ...).
OUT_OF_TREE_KEYS = ("PrivateUse1", "PrivateUse2", "PrivateUse3", "XLA", "Lazy", "HPU", "MAIA", "IPU", "VE")
DEFAULT_SHARDS = 4
MAX_SHARDS = 256

_STR_TAG = "tag:yaml.org,2002:str"
_BOOL_TAG = "tag:yaml.org,2002:bool"
_INT_TAG = "tag:yaml.org,2002:int"
_NULL_TAG = "tag:yaml.org,2002:null"


class _Reader:
    """Turns YAML nodes into typed values, with the node's line in every error."""

    def __init__(self, display_path: str) -> None:
        self.display_path = display_path

    def location(self, node: yaml.Node) -> SourceLocation:
        return SourceLocation(self.display_path, node.start_mark.line + 1)

    def error(self, node: yaml.Node, message: str, hint: str | None = None) -> BackendYamlError:
        return BackendYamlError(message, location=self.location(node), hint=hint)

    def check_name(self, node: yaml.Node, problem: ident.NameProblem | None) -> None:
        if problem is not None:
            raise self.error(node, problem.message, hint=problem.hint)

    def mapping(
        self, node: yaml.Node, what: str, valid_keys: tuple[str, ...]
    ) -> dict[str, tuple[yaml.Node, yaml.Node]]:
        """The mapping's entries by key; unknown and duplicate keys are errors."""
        if not isinstance(node, yaml.MappingNode):
            raise self.error(node, f"{what} must be a mapping of keys to values")
        entries: dict[str, tuple[yaml.Node, yaml.Node]] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag != _STR_TAG:
                raise self.error(key_node, f"{what} keys must be plain names")
            key = key_node.value
            if key in entries:
                first = entries[key][0].start_mark.line + 1
                raise self.error(key_node, f"key '{key}' appears twice (first at line {first})")
            if key not in valid_keys:
                raise self._unknown_key(key_node, key, what, valid_keys)
            entries[key] = (key_node, value_node)
        return entries

    def _unknown_key(
        self, node: yaml.Node, key: str, what: str, valid_keys: tuple[str, ...]
    ) -> BackendYamlError:
        if key in LAZY_TENSOR_KEYS:
            return self.error(
                node,
                f"key '{key}' is not supported: it belongs to torchgen's lazy-tensor generator "
                "(gen_lazy_tensor), which scaffold-backend does not replace",
                hint="list these ops under 'supported' and write their kernels, or keep "
                "generating them with torchgen.gen_lazy_tensor",
            )
        close = difflib.get_close_matches(key, valid_keys, n=1)
        suggestion = f"did you mean '{close[0]}'? " if close else ""
        return self.error(
            node,
            f"unknown key '{key}' in {what}",
            hint=f"{suggestion}valid keys: {', '.join(valid_keys)}",
        )

    def string(self, node: yaml.Node, what: str) -> str:
        if not isinstance(node, yaml.ScalarNode) or node.tag != _STR_TAG or not node.value:
            raise self.error(node, f"{what} must be a non-empty string")
        return str(node.value)

    def boolean(self, node: yaml.Node, what: str) -> bool:
        if not isinstance(node, yaml.ScalarNode) or node.tag != _BOOL_TAG:
            raise self.error(node, f"{what} must be true or false")
        return bool(yaml.constructor.SafeConstructor.bool_values[node.value.lower()])

    def integer(self, node: yaml.Node, what: str) -> int:
        text = node.value if isinstance(node, yaml.ScalarNode) else ""
        # YAML 1.1 also reads 0x10, 0o17, 1_000 and 1:30 (sexagesimal) as integers; a count is
        # written in decimal, and anything else is more likely a typo than a wish.
        digits = text[1:] if text[:1] in "+-" else text
        if node.tag != _INT_TAG or not digits.isdecimal() or not digits.isascii() or len(digits) > 9:
            raise self.error(node, f"{what} must be a decimal integer")
        return int(text)

    def sequence(self, node: yaml.Node, what: str, item: Callable[[yaml.Node], T]) -> tuple[T, ...]:
        """A list; an empty value (`supported:`) is an empty list, as in torchgen."""
        if isinstance(node, yaml.ScalarNode) and node.tag == _NULL_TAG:
            return ()
        if not isinstance(node, yaml.SequenceNode):
            raise self.error(node, f"{what} must be a list")
        return tuple(item(child) for child in node.value)

    def op_entry(self, node: yaml.Node, what: str) -> OpEntry:
        if not isinstance(node, yaml.ScalarNode) or node.tag != _STR_TAG:
            raise self.error(node, f"every entry of {what} must be an operator name such as add.out")
        text = str(node.value)
        try:
            OperatorName.parse(text)
            valid = text.replace(".", "_").isidentifier() and text.isascii()
        except TORCHGEN_PARSE_ERRORS:
            valid = False
        if not valid:
            raise self.error(
                node, f"'{text}' in {what} is not an operator name (expected e.g. add.Tensor, abs)"
            )
        return OpEntry(text, self.location(node))


# Deeper than any backend YAML (they nest four levels); the pure-Python parser may run out of
# stack on such a text, where libyaml would not, so it decides those (see _compose).
_LIBYAML_MAX_DEPTH = 32


def _depth_at_most(root: yaml.Node, limit: int) -> bool:
    pending: list[tuple[yaml.Node, int]] = [(root, 1)]
    while pending:
        node, depth = pending.pop()
        if depth > limit:
            return False
        if isinstance(node, yaml.SequenceNode):
            pending.extend((child, depth + 1) for child in node.value)
        elif isinstance(node, yaml.MappingNode):
            pending.extend((child, depth + 1) for pair in node.value for child in pair)
    return True


def _compose(text: str) -> yaml.Node | None:
    """The YAML node tree, through libyaml when PyYAML has it (a tenth of the time for an
    858-op YAML). A text libyaml refuses, or nests unusually deep, is composed again by the
    pure-Python parser, whose errors are the ones this module reports, so the messages do not
    depend on the build."""
    fast_loader = getattr(yaml, "CSafeLoader", None)
    if fast_loader is not None:
        try:
            node: yaml.Node | None = yaml.compose(text, Loader=fast_loader)
        except (yaml.YAMLError, RecursionError):
            pass
        else:
            if node is None or _depth_at_most(node, _LIBYAML_MAX_DEPTH):
                return node
    return yaml.compose(text, Loader=yaml.SafeLoader)


def parse_backend_yaml(text: str, *, display_path: str) -> BackendConfig:
    reader = _Reader(display_path)
    try:
        root = _compose(text)
    except yaml.reader.ReaderError as error:
        # A control character or a byte PyYAML refuses: located by the line it is on.
        character_line = text.count("\n", 0, error.position) + 1
        character = error.character
        code = ord(character) if isinstance(character, str) else int(character)
        raise BackendYamlError(
            f"invalid YAML: the character U+{code:04X} is not allowed",
            location=SourceLocation(display_path, character_line),
        ) from None
    except RecursionError:
        raise BackendYamlError(
            "invalid YAML: nested too deeply", location=SourceLocation(display_path)
        ) from None
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        # An error at the end of the stream is reported on the last line, not one past it.
        line = None if mark is None else min(mark.line + 1, max(1, len(text.splitlines())))
        raise BackendYamlError(
            f"invalid YAML: {error.problem or error.context}",
            location=SourceLocation(display_path, line),
        ) from None
    except yaml.YAMLError as error:
        raise BackendYamlError(
            f"invalid YAML: {error}".splitlines()[0], location=SourceLocation(display_path)
        ) from None
    if root is None:
        raise BackendYamlError(
            "the backend YAML is empty", location=SourceLocation(display_path, 1)
        )
    entries = reader.mapping(root, "the backend YAML", VALID_KEYS)

    def required(key: str) -> tuple[yaml.Node, yaml.Node]:
        if key not in entries:
            raise BackendYamlError(
                f"missing required key '{key}'",
                location=reader.location(root),
                hint="torchgen's backend YAML requires 'backend' and 'cpp_namespace'",
            )
        return entries[key]

    backend_node = required("backend")[1]
    backend = reader.string(backend_node, "'backend'")
    try:
        DispatchKey.parse(backend)
    except TORCHGEN_PARSE_ERRORS:
        raise reader.error(
            backend_node,
            f"'backend' must be a PyTorch dispatch key, got '{backend}'",
            hint="out-of-tree backends use PrivateUse1",
        ) from None
    if backend not in OUT_OF_TREE_KEYS:
        # A catch-all fallback and registrations on CPU, CUDA, Undefined or an Autocast key
        # would take over a backend PyTorch itself implements.
        raise reader.error(
            backend_node,
            f"'backend' {backend} is a dispatch key PyTorch implements itself; a backend "
            "registered to it would replace PyTorch's own kernels",
            hint=f"out-of-tree backends use PrivateUse1 (allowed: {', '.join(OUT_OF_TREE_KEYS)})",
        )

    namespace_node = required("cpp_namespace")[1]
    cpp_namespace = reader.string(namespace_node, "'cpp_namespace'")
    reader.check_name(namespace_node, ident.cpp_namespace_issue(cpp_namespace, "cpp_namespace"))

    class_name = None
    if "class_name" in entries:
        class_node = entries["class_name"][1]
        class_name = reader.string(class_node, "'class_name'")
        reader.check_name(class_node, ident.cpp_identifier_issue(class_name, "class_name"))

    device = "privateuseone" if backend == "PrivateUse1" else backend.lower()
    if "device" in entries:
        device_node = entries["device"][1]
        device = reader.string(device_node, "'device'")
        reader.check_name(device_node, ident.device_name_issue(device) or ident.torch_module_clash(device))

    def op_list(key: str) -> tuple[OpEntry, ...]:
        if key not in entries:
            return ()
        return reader.sequence(
            entries[key][1], f"'{key}'", lambda node: reader.op_entry(node, f"'{key}'")
        )

    def flag(key: str, default: bool) -> bool:
        return reader.boolean(entries[key][1], f"'{key}'") if key in entries else default

    autograd = op_list("autograd")
    autograd_key: str | None = f"Autograd{backend}"
    try:
        DispatchKey.parse(f"Autograd{backend}")
    except TORCHGEN_PARSE_ERRORS:
        autograd_key = None
    if autograd and autograd_key is None:
        raise reader.error(
            entries["autograd"][0],
            f"'autograd' needs the dispatch key Autograd{backend}, which PyTorch does not have",
        )

    device_guard, device_guard_type = False, None
    if "device_guard" in entries:
        device_guard, device_guard_type = _device_guard(reader, entries["device_guard"][1])

    extra_headers: tuple[str, ...] = ()
    if "extra_headers" in entries:
        extra_headers = reader.sequence(
            entries["extra_headers"][1],
            "'extra_headers'",
            lambda node: _header(reader, node),
        )

    shards = DEFAULT_SHARDS
    if "shards" in entries:
        shards_node = entries["shards"][1]
        shards = reader.integer(shards_node, "'shards'")
        if not 1 <= shards <= MAX_SHARDS:
            raise reader.error(shards_node, f"'shards' must be between 1 and {MAX_SHARDS}")

    fallback = FallbackPolicy()
    if "fallback" in entries:
        fallback = _fallback_policy(reader, entries["fallback"][1])

    custom_classes: tuple[CustomClass, ...] = ()
    if "custom_classes" in entries:
        custom_classes = parse_custom_classes(reader, entries["custom_classes"][1])

    custom_ops: tuple[CustomOp, ...] = ()
    if "custom_ops" in entries:
        custom_key, custom_node = entries["custom_ops"]
        custom_ops = reader.sequence(
            custom_node, "'custom_ops'", lambda node: _custom_op(reader, node, device, custom_classes)
        )
        if custom_ops:
            reader.check_name(custom_key, ident.custom_op_namespace_issue(device, f"torch_{device}"))
        _check_custom_op_names(custom_ops)

    autocast: tuple[AutocastEntry, ...] = ()
    if "autocast" in entries:
        autocast_key, autocast_node = entries["autocast"]
        autocast = _autocast(reader, autocast_node)
        if autocast and backend != AUTOCAST_BACKEND:
            raise reader.error(
                autocast_key,
                f"'autocast' extends the autocast lists of {AUTOCAST_BACKEND} (AutocastPrivateUse1); "
                f"the backend is {backend}",
                hint="remove the 'autocast' section, or register AutocastPrivateUse1 kernels yourself",
            )

    return BackendConfig(
        location=SourceLocation(display_path),
        sha256=hashlib.sha256(text.encode()).hexdigest(),
        backend=backend,
        autograd_key=autograd_key,
        cpp_namespace=cpp_namespace,
        class_name=class_name,
        device=device,
        supported=op_list("supported"),
        autograd=autograd,
        symint=op_list("symint"),
        use_out_as_primary=flag("use_out_as_primary", False),
        device_guard=device_guard,
        device_guard_type=device_guard_type,
        extra_headers=extra_headers,
        fallback=fallback,
        shards=shards,
        custom_classes=custom_classes,
        custom_ops=custom_ops,
        autocast=autocast,
    )


def _autocast(reader: _Reader, node: yaml.Node) -> tuple[AutocastEntry, ...]:
    """`autocast: {lower_precision_fp: [...], fp32: [...], promote: [...]}`: ops added to
    PyTorch's lists. Whether they exist, are functional and are not on PyTorch's lists already is
    checked against the declarations (selection.py)."""
    if isinstance(node, yaml.ScalarNode) and node.tag == _NULL_TAG:
        return ()
    entries = reader.mapping(node, "'autocast'", AUTOCAST_KEYS)
    found: list[AutocastEntry] = []
    for policy in AutocastPolicy:
        if policy.value not in entries:
            continue
        what = f"'autocast.{policy.value}'"
        ops = reader.sequence(entries[policy.value][1], what, functools.partial(_op_entry, reader, what=what))
        found += [AutocastEntry(op=op, policy=policy) for op in ops]
    return tuple(found)


def _op_entry(reader: _Reader, node: yaml.Node, *, what: str) -> OpEntry:
    return reader.op_entry(node, what)


def _custom_op(reader: _Reader, node: yaml.Node, namespace: str, classes: tuple[CustomClass, ...]) -> CustomOp:
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
    reader: _Reader, node: yaml.Node, schema: FunctionSchema, namespace: str, classes: tuple[CustomClass, ...]
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


def _header(
    reader: _Reader, node: yaml.Node, what: str = "each entry of 'extra_headers'", label: str = "extra header"
) -> str:
    header = reader.string(node, what)
    problem = ident.header_problem(header)
    if problem is not None:
        raise reader.error(node, f"{label} {header} {problem}")
    return header


def _device_guard(reader: _Reader, node: yaml.Node) -> tuple[bool, DeviceGuardType | None]:
    """`device_guard`: true or false as in torchgen (true: c10's device-generic guard), or the
    runtime's own guard, `{type: my_backend::DeviceGuard, header: '"guard.h"'}`, which turns the
    guard on."""
    if not isinstance(node, yaml.MappingNode):
        if not isinstance(node, yaml.ScalarNode) or node.tag != _BOOL_TAG:
            raise reader.error(
                node,
                "'device_guard' must be true, false, or the runtime's own guard as {type: ..., header: ...}",
            )
        return reader.boolean(node, "'device_guard'"), None
    entries = reader.mapping(node, "'device_guard'", DEVICE_GUARD_KEYS)
    for key in DEVICE_GUARD_KEYS:
        if key not in entries:
            raise reader.error(
                node,
                f"'device_guard' as a mapping needs '{key}'",
                hint="device_guard: {type: my_backend::DeviceGuard, header: '\"guard.h\"'}, or true for c10's guard",
            )
    type_node = entries["type"][1]
    cpp_type = reader.string(type_node, "'device_guard.type'")
    for segment in cpp_type.removeprefix("::").split("::"):
        reader.check_name(type_node, ident.cpp_identifier_issue(segment, f"'device_guard.type' {cpp_type}: segment"))
    header = _header(reader, entries["header"][1], "'device_guard.header'", "'device_guard.header'")
    return True, DeviceGuardType(cpp_type=cpp_type, header=header)


_Choice = TypeVar("_Choice", FallbackDefault, FallbackMode)


def _fallback_choice(
    reader: _Reader, entries: dict[str, tuple[yaml.Node, yaml.Node]], key: str, default: _Choice
) -> _Choice:
    """`fallback.<key>`, one of the values of `default`'s enum; `default` when absent."""
    if key not in entries:
        return default
    node = entries[key][1]
    what = f"'fallback.{key}'"
    value = reader.string(node, what)
    choices = [choice.value for choice in type(default)]
    if value not in choices:
        raise reader.error(node, f"{what} must be one of {choices}, got '{value}'")
    return type(default)(value)


def _fallback_policy(reader: _Reader, node: yaml.Node) -> FallbackPolicy:
    entries = reader.mapping(node, "'fallback'", FALLBACK_KEYS)
    default = _fallback_choice(reader, entries, "default", FallbackDefault.CPU)
    mode = _fallback_choice(reader, entries, "mode", FallbackMode.COPY)

    def op_list(key: str) -> tuple[OpEntry, ...]:
        if key not in entries:
            return ()
        what = f"'fallback.{key}'"
        return reader.sequence(entries[key][1], what, lambda child: reader.op_entry(child, what))

    warn_once = True
    if "warn_once" in entries:
        warn_once = reader.boolean(entries["warn_once"][1], "'fallback.warn_once'")
    return FallbackPolicy(
        default=default,
        mode=mode,
        warn_once=warn_once,
        never=op_list("never"),
        explicit=op_list("explicit"),
    )


def default_backend_config() -> BackendConfig:
    """The configuration `ops` uses when no backend YAML is given: nothing implemented yet."""
    return parse_backend_yaml(
        "backend: PrivateUse1\ncpp_namespace: my_backend\n", display_path="<no backend YAML>"
    )
