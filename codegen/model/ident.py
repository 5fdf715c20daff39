"""Identifier rules, kept in one place: what a safe C++/Python name is, how generated names are
derived from operator names, and which stable hash assigns ops to registration shards."""

from __future__ import annotations

import hashlib
import keyword
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from torchgen.model import OperatorName

from ..errors import InvalidNameError, SourceLocation

CPP_KEYWORDS = frozenset(
    [
        "alignas",
        "alignof",
        "and",
        "and_eq",
        "asm",
        "auto",
        "bitand",
        "bitor",
        "bool",
        "break",
        "case",
        "catch",
        "char",
        "char8_t",
        "char16_t",
        "char32_t",
        "class",
        "compl",
        "concept",
        "const",
        "consteval",
        "constexpr",
        "constinit",
        "const_cast",
        "continue",
        "co_await",
        "co_return",
        "co_yield",
        "decltype",
        "default",
        "delete",
        "do",
        "double",
        "dynamic_cast",
        "else",
        "enum",
        "explicit",
        "export",
        "extern",
        "false",
        "float",
        "for",
        "friend",
        "goto",
        "if",
        "inline",
        "int",
        "long",
        "mutable",
        "namespace",
        "new",
        "noexcept",
        "not",
        "not_eq",
        "nullptr",
        "operator",
        "or",
        "or_eq",
        "private",
        "protected",
        "public",
        "register",
        "reinterpret_cast",
        "requires",
        "return",
        "short",
        "signed",
        "sizeof",
        "static",
        "static_assert",
        "static_cast",
        "struct",
        "switch",
        "template",
        "this",
        "thread_local",
        "throw",
        "true",
        "try",
        "typedef",
        "typeid",
        "typename",
        "union",
        "unsigned",
        "using",
        "virtual",
        "void",
        "volatile",
        "wchar_t",
        "while",
        "xor",
        "xor_eq",
        "final",
        "override",
        "import",
        "module",
    ]
)

# Namespaces owned by PyTorch and the standard library: kernels declared there would collide with
# ATen's own functions of the same name and signature.
RESERVED_NAMESPACE_ROOTS = frozenset({"at", "aten", "c10", "caffe2", "std", "torch"})

# Device type names PyTorch already knows (c10/core/DeviceType.h); a PrivateUse1 backend cannot
# rename itself to one of these.
RESERVED_DEVICE_NAMES = frozenset(
    [
        "cpu",
        "cuda",
        "mkldnn",
        "opengl",
        "opencl",
        "ideep",
        "hip",
        "fpga",
        "maia",
        "xla",
        "vulkan",
        "metal",
        "xpu",
        "mps",
        "meta",
        "hpu",
        "ve",
        "lazy",
        "ipu",
        "mtia",
        "privateuseone",
    ]
)


# Device names that backend packages people install already use, and what provides each: a new
# project of such a name would make a package torch_NAME and a device NAME that collide with that
# backend as soon as both are installed (one PrivateUse1 backend per process, one package of a
# name). `init` refuses them unless told to go ahead; a package torch_NAME installed here is
# refused the same way (device_package_issue). PyTorch's own device types are
# RESERVED_DEVICE_NAMES, refused always; the out-of-tree packages behind some of them are named
# here too.
DEVICE_PACKAGES: Mapping[str, str] = MappingProxyType(
    {
        "dipu": "torch_dipu (DeepLink)",
        "gcu": "torch_gcu (Enflame)",
        "hpu": "habana_frameworks.torch (Intel Gaudi)",
        "ipu": "poptorch (Graphcore)",
        "mlu": "torch_mlu (Cambricon)",
        "musa": "torch_musa (Moore Threads)",
        "npu": "torch_npu (Huawei Ascend)",
        "openreg": "torch_openreg (PyTorch's own example of an out-of-tree backend)",
        "sdaa": "torch_sdaa (Tecorigin)",
        "xla": "torch_xla (Google TPU)",
        "xpu": "torch.xpu and intel_extension_for_pytorch (Intel GPU)",
    }
)


def _is_ascii_identifier(name: str) -> bool:
    return name.isascii() and name.isidentifier()


def cpp_identifier_problem(name: str) -> str | None:
    """Why `name` is not a safe C++ identifier, or None when it is."""
    if not _is_ascii_identifier(name):
        return "is not a C++ identifier (letters, digits and _, not starting with a digit)"
    if name in CPP_KEYWORDS:
        return "is a C++ keyword"
    if "__" in name or (name.startswith("_") and name[1:2].isupper()):
        return "is reserved in C++ (contains '__' or starts with '_' and a capital letter)"
    return None


@dataclass(frozen=True)
class NameProblem:
    """Why a name cannot be used, and what to do instead. Callers raise it as the error of the
    input the name came from (the backend YAML, `init NAME`), located there."""

    message: str
    hint: str | None = None


def cpp_identifier_issue(name: str, what: str) -> NameProblem | None:
    problem = cpp_identifier_problem(name)
    return None if problem is None else NameProblem(f"{what} '{name}' {problem}")


def cpp_namespace_issue(namespace: str, what: str) -> NameProblem | None:
    segments = namespace.split("::")
    for segment in segments:
        problem = cpp_identifier_problem(segment)
        if problem is not None:
            return NameProblem(
                f"{what} '{namespace}': '{segment}' {problem}",
                hint="use a namespace of your own, e.g. 'my_backend' or 'my_backend::native'",
            )
    if segments[0] in RESERVED_NAMESPACE_ROOTS:
        return NameProblem(
            f"{what} '{namespace}' is inside '{segments[0]}', which PyTorch or the standard "
            "library owns; kernels there would collide with ATen's own functions",
            hint="use a namespace of your own, e.g. 'my_backend'",
        )
    return None


MAX_DEVICE_NAME = 64
"""A device name is typed by users and becomes file and package names (torch_NAME): it is short."""


def device_name_problem(name: str) -> str | None:
    """Why `name` cannot be a PrivateUse1 device name, or None when it can."""
    if len(name) > MAX_DEVICE_NAME:
        return f"is {len(name)} characters long; a device name has at most {MAX_DEVICE_NAME}"
    if not _is_ascii_identifier(name) or name != name.lower():
        return "is not a lowercase identifier (a-z, 0-9 and _, not starting with a digit)"
    if keyword.iskeyword(name) or keyword.issoftkeyword(name):
        return "is a Python keyword"
    if name in CPP_KEYWORDS:
        return "is a C++ keyword"
    if name in RESERVED_DEVICE_NAMES:
        return "is a device name PyTorch already uses"
    if name.startswith("_"):
        return "starts with '_'"
    return None


def device_name_issue(name: str) -> NameProblem | None:
    problem = device_name_problem(name)
    if problem is None:
        return None
    return NameProblem(
        f"device name '{name}' {problem}", hint="pick a short lowercase name such as 'foo' or 'my_npu'"
    )


def torch_module_clash(name: str) -> NameProblem | None:
    """`torch.NAME` is where a backend's device module goes: NAME must not be a module or
    package torch already has (nn, fx, cuda, ...). Checked on the installed torch's files,
    without importing it, so `generate` and `init` apply the same rule at no cost."""
    import importlib.util

    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        return None
    for package in spec.submodule_search_locations:
        directory = Path(package)
        if (directory / name).is_dir() or (directory / f"{name}.py").is_file():
            return NameProblem(
                f"device name '{name}' is already used by PyTorch (torch.{name} exists)",
                hint="pick a name PyTorch does not use, such as 'my_npu'",
            )
    return None


def device_package_issue(name: str) -> NameProblem | None:
    """NAME is the device of a backend package listed in DEVICE_PACKAGES, or a package
    `torch_NAME` is installed here (outside the working directory, which may be the project
    itself): a project of that name would clash with it. The message says which, and suggests a
    name free of both."""
    taken_by = DEVICE_PACKAGES.get(name)
    if taken_by is None:
        installed = _installed_elsewhere(f"torch_{name}")
        if installed is None:
            return None
        taken_by = f"torch_{name}, installed at {installed}"
    suggestion = next(
        candidate
        for candidate in (f"my_{name}", f"{name}_dev", f"{name}_backend")
        if device_name_problem(candidate) is None
        and candidate not in DEVICE_PACKAGES
        and _installed_elsewhere(f"torch_{candidate}") is None
    )
    return NameProblem(
        f"device name '{name}' is taken by {taken_by}: a project of that name would clash with it "
        f"once both are installed; choose another name, such as '{suggestion}', or pass --force "
        "to use it anyway"
    )


def _installed_elsewhere(module: str) -> Path | None:
    """Where the installed module or package `module` is, when it is outside the working directory
    (a directory of that name there, the project itself, is found as a namespace package: not a
    library); found on the installed files, without importing it."""
    import importlib.util

    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or spec.origin is None:
        return None
    origin = Path(os.path.realpath(spec.origin))
    return None if origin.is_relative_to(os.path.realpath(Path.cwd())) else origin.parent


def check_name(problem: NameProblem | None, location: SourceLocation) -> None:
    """Raise `problem` as an InvalidNameError at `location` (a name given on the command line)."""
    if problem is not None:
        raise InvalidNameError(problem.message, location=location, hint=problem.hint)


# Operator namespaces PyTorch itself defines (torch._C._dispatch_get_all_op_names() of torch
# 2.11-2.15 with no backend loaded, plus `prim` (TorchScript), `_` (the catch-all
# TORCH_LIBRARY_IMPL namespace), higher_order and the functional collectives' older name), and
# the runtime's own `scaffold_runtime`. A backend's TORCH_LIBRARY in one of them would either fail
# when loaded ("Only a single TORCH_LIBRARY can be used to register the namespace") or add ops to
# PyTorch's. tests/test_custom_ops.py checks the list still covers the installed torch.
RESERVED_OP_NAMESPACES = frozenset(
    [
        "_",
        "_c10d_functional",
        "_c10d_functional_autograd",
        "_dtensor",
        "_native",
        "_native_aot",
        "_quantized",
        "_test",
        "aten",
        "c10d",
        "c10d_functional",
        "coor",
        "debug_mode_ops",
        "debugprims",
        "export",
        "fbgemm",
        "flex_gemm",
        "fsdp",
        "higher_order",
        "inductor",
        "inductor_prims",
        "mkl",
        "mkldnn",
        "mkldnn_prepacked",
        "onednn",
        "prim",
        "prims",
        "profiler",
        "quantization",
        "quantized",
        "rngprims",
        "scaffold_runtime",
        "sparse",
        "static_runtime",
        "symm_mem",
    ]
)


def custom_op_namespace_issue(namespace: str, backend_package: str) -> NameProblem | None:
    """The namespace a backend's custom ops are defined in (its device name) must be its own:
    not one of PyTorch's, and not the name of another installed Python package (torchvision,
    torchaudio, ... define `TORCH_LIBRARY(<package>, m)`; loading both would fail at import
    time). Checked on the installed files, without importing torch or them."""
    import sys

    hint = "custom ops live in the backend's namespace, its device name: rename the device"
    if namespace in RESERVED_OP_NAMESPACES:
        return NameProblem(
            f"custom op namespace '{namespace}' belongs to PyTorch; the backend's "
            "TORCH_LIBRARY would collide with PyTorch's own",
            hint,
        )
    if (
        namespace != backend_package
        and namespace not in sys.stdlib_module_names
        and _installed_elsewhere(namespace) is not None
    ):
        return NameProblem(
            f"custom op namespace '{namespace}' is the name of another installed library; "
            f"its TORCH_LIBRARY({namespace}, m) and the backend's would collide when both load",
            hint,
        )
    return None


def header_problem(header: str) -> str | None:
    """Why `header` is not a plain `<path>` or `"path"` include target, or None."""
    if len(header) < 3 or (header[0], header[-1]) not in {("<", ">"), ('"', '"')}:
        return 'must be written <path/to/header.h> or "path/to/header.h"'
    allowed = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./-+")
    if not set(header[1:-1]) <= allowed:
        return "may only contain letters, digits and _ . / - +"
    return None


def stub_group(name: OperatorName) -> str:
    """The kernel file an op lives in: its base name shared by overloads, inplace and out
    variants (`add.Tensor`, `add_.Tensor`, `add.out` -> `add`)."""
    base = name.name
    return f"__{base.base}__" if base.dunder_method else base.base


def wrapper_name(prefix: str, name: OperatorName) -> str:
    """A unique, readable C++ name for a generated wrapper of one operator overload."""
    return f"{prefix}_{name.unambiguous_name()}"


def custom_kernel_base(name: OperatorName) -> str:
    """The stem of a custom op's C++ kernels (`<stem>_cpu`, `<stem>_<device>`): the name, then
    the overload name, joined by `_`."""
    overload = name.overload_name
    return f"{name.name}_{overload}" if overload else str(name.name)


def cpp_string_literal(text: str) -> str:
    """`text` as a C++ string literal (a schema's default strings may hold quotes)."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def stable_shard(op_name: str, shard_count: int) -> int:
    """Which registration shard an op goes to. A content hash (never Python's salted `hash()`)
    keeps the assignment identical across runs and machines, and a fixed shard count means adding
    an op changes exactly one shard file."""
    digest = hashlib.sha256(op_name.encode()).digest()
    return int.from_bytes(digest[:8], "big") % shard_count
