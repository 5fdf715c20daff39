"""Strict parser for the backend YAML.

It accepts every key of torchgen's `gen_backend_stubs` YAML, so an existing backend's file
works, plus scaffold-backend's own (`device`, `fallback`, `shards`). Unknown keys, wrong types and
unsafe names are errors that carry the YAML line; keys that only torchgen's lazy-tensor generator
understands get a clear "not supported" error rather than silence. Whether the listed operators
exist is checked later, against the declarations (select/selection.py).
"""

from __future__ import annotations

import functools
import hashlib
from typing import TypeVar

import yaml
from torchgen.model import DispatchKey

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
from ..model.project import DEFAULT_DRIVER, DRIVER_DIRECTORIES
from .custom_classes import parse_custom_classes
from .custom_ops import parse_custom_ops
from .declarations import TORCHGEN_PARSE_ERRORS
from .yaml_nodes import BOOL_TAG, NULL_TAG, YamlReader, compose_yaml

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
OWN_KEYS = ("device", "driver", "fallback", "shards", "custom_ops", "custom_classes", "autocast")
VALID_KEYS = TORCHGEN_KEYS + OWN_KEYS
LAZY_TENSOR_KEYS = ("full_codegen", "non_native", "ir_gen")
_LAZY_TENSOR_KEYS = {
    key: (
        f"key '{key}' is not supported: it belongs to torchgen's lazy-tensor generator "
        "(gen_lazy_tensor), which scaffold-backend does not replace",
        "list these ops under 'supported' and write their kernels, or keep "
        "generating them with torchgen.gen_lazy_tensor",
    )
    for key in LAZY_TENSOR_KEYS
}
FALLBACK_KEYS = ("default", "mode", "warn_once", "never", "explicit")
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





def parse_backend_yaml(text: str, *, display_path: str) -> BackendConfig:
    reader = YamlReader(display_path, unsupported_keys=_LAZY_TENSOR_KEYS)
    root = compose_yaml(text, display_path)
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

    driver = DEFAULT_DRIVER
    if "driver" in entries:
        driver_node = entries["driver"][1]
        driver = reader.string(driver_node, "'driver'")
        if driver not in DRIVER_DIRECTORIES:
            raise reader.error(
                driver_node,
                f"unknown driver '{driver}': 'driver' is one of {', '.join(DRIVER_DIRECTORIES)}",
                hint="a port of your own is built with SCAFFOLD_DRIVER_DIR pointing at it (PORTING.md)",
            )

    fallback = FallbackPolicy()
    if "fallback" in entries:
        fallback = _fallback_policy(reader, entries["fallback"][1])

    custom_classes: tuple[CustomClass, ...] = ()
    if "custom_classes" in entries:
        custom_classes = parse_custom_classes(reader, entries["custom_classes"][1])

    custom_ops: tuple[CustomOp, ...] = ()
    if "custom_ops" in entries:
        custom_ops = parse_custom_ops(reader, *entries["custom_ops"], device, custom_classes)

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
        driver=driver,
        custom_classes=custom_classes,
        custom_ops=custom_ops,
        autocast=autocast,
    )


def _autocast(reader: YamlReader, node: yaml.Node) -> tuple[AutocastEntry, ...]:
    """`autocast: {lower_precision_fp: [...], fp32: [...], promote: [...]}`: ops added to
    PyTorch's lists. Whether they exist, are functional and are not on PyTorch's lists already is
    checked against the declarations (select/selection.py)."""
    if isinstance(node, yaml.ScalarNode) and node.tag == NULL_TAG:
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


def _op_entry(reader: YamlReader, node: yaml.Node, *, what: str) -> OpEntry:
    return reader.op_entry(node, what)


def _header(
    reader: YamlReader, node: yaml.Node, what: str = "each entry of 'extra_headers'", label: str = "extra header"
) -> str:
    header = reader.string(node, what)
    problem = ident.header_problem(header)
    if problem is not None:
        raise reader.error(node, f"{label} {header} {problem}")
    return header


def _device_guard(reader: YamlReader, node: yaml.Node) -> tuple[bool, DeviceGuardType | None]:
    """`device_guard`: true or false as in torchgen (true: c10's device-generic guard), or the
    runtime's own guard, `{type: my_backend::DeviceGuard, header: '"guard.h"'}`, which turns the
    guard on."""
    if not isinstance(node, yaml.MappingNode):
        if not isinstance(node, yaml.ScalarNode) or node.tag != BOOL_TAG:
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
    reader: YamlReader, entries: dict[str, tuple[yaml.Node, yaml.Node]], key: str, default: _Choice
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


def _fallback_policy(reader: YamlReader, node: yaml.Node) -> FallbackPolicy:
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
