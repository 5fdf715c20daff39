"""C++ signatures, computed by torchgen's own API (never by parsing C++ text).

Three signatures matter for a kernel:
- the dispatcher signature: what the dispatcher calls, exactly the declaration in
  RegistrationDeclarations.h (c10::SymInt everywhere, out arguments last);
- the kernel signature: what the user writes. It follows torchgen's convention for external
  backends: the dispatcher signature, except that ops not listed under `symint` take int64_t /
  at::IntArrayRef, and such kernels are named `<name>` while SymInt ones are `<name>_symint`;
- the wrapper: a generated function with the dispatcher signature that checks devices, sets the
  device guard and calls the kernel, converting arguments with torchgen's `translate`.
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import torchgen
import yaml
from torchgen import local
from torchgen.api import dispatcher
from torchgen.api.translate import translate
from torchgen.api.types import DispatcherSignature, NativeSignature
from torchgen.model import Argument, FunctionSchema

from . import ident
from .model import BackendConfig, Declaration

# torchgen renders a few types differently depending on per-operator flags from
# native_functions.yaml, which the declarations header does not carry. The header's own C++
# declaration tells which setting produced it; these are tried in order.
_RENDERING_FLAGS = tuple(itertools.product((False, True), (False, True)))


@contextmanager
def _torchgen_flags(flags: tuple[bool, bool]) -> Iterator[None]:
    const_ref_for_mutable_tensors, ilistref_for_tensor_lists = flags
    with local.parametrize(
        use_const_ref_for_mutable_tensors=const_ref_for_mutable_tensors,
        use_ilistref_for_tensor_lists=ilistref_for_tensor_lists,
    ):
        yield


def render_dispatcher_declaration(schema: FunctionSchema) -> str:
    """The declaration RegistrationDeclarations.h writes for `schema` (under the current flags)."""
    arguments = ", ".join(a.no_default().decl() for a in dispatcher.arguments(schema))
    returns = dispatcher.returns_type(schema.returns).cpp_type()
    return f"{returns} {dispatcher.name(schema)}({arguments})"


def rendering_flags(declaration: Declaration) -> tuple[bool, bool] | None:
    """The torchgen flags under which the schema renders to the header's declaration, or None
    when no setting does (a header written by another torch release may spell types differently)."""
    schema = declaration.require_schema()
    for flags in _RENDERING_FLAGS:
        with _torchgen_flags(flags):
            if render_dispatcher_declaration(schema) == declaration.cpp_declaration:
                return flags
    return None


@dataclass(frozen=True)
class OpTraits:
    """Per-operator settings from native_functions.yaml that decide the generated wrapper."""

    device_check: bool = True
    """False for ops that legitimately mix devices (copies, CPU scalars in TensorIterator ops)."""
    device_guard: bool = True


@functools.cache
def installed_op_traits() -> Mapping[str, OpTraits]:
    """Traits of every op in the installed torchgen's native_functions.yaml (about 0.1 s).
    Ops missing there (a header from another release) get the defaults."""
    path = Path(torchgen.__file__).parent / "packaged" / "ATen" / "native" / "native_functions.yaml"
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    with path.open() as stream:
        entries = yaml.load(stream, Loader=loader)
    traits = {}
    for entry in entries:
        op_name = entry["func"].split("(", 1)[0]
        traits[op_name] = OpTraits(
            device_check=entry.get("device_check", "ExactSame") != "NoCheck",
            device_guard=bool(entry.get("device_guard", True)),
        )
    return traits


@dataclass(frozen=True)
class KernelBinding:
    """Everything the emitters need to declare, wrap and register one kernel."""

    op_name: str
    kernel_returns: str
    kernel_name: str
    kernel_arguments: str
    """The kernel's parameters, without default values."""
    qualified_kernel: str
    """How registration code calls it: `ns::kernel` or `ns::Class::kernel`."""
    wrapper_name: str
    wrapper_head: str
    """The wrapper's `<returns> <wrapper_name>(<dispatcher arguments>)`."""
    wrapper_body: tuple[str, ...]
    """Statements of the wrapper, the last one returning the kernel's result."""

    def kernel_declaration(self, scope: str = "") -> str:
        """`<returns> <scope><kernel_name>(<arguments>)`, without a trailing semicolon."""
        return f"{self.kernel_returns} {scope}{self.kernel_name}({self.kernel_arguments})"


def _tensor_like(arguments: list[Argument]) -> list[str]:
    return [argument.name for argument in arguments if argument.type.is_tensor_like()]


def _guard_statements(
    schema: FunctionSchema, traits: OpTraits, op_name: str
) -> list[str]:
    """Device check and guard, with torchgen's semantics for backends that ask for them."""
    arguments = schema.arguments
    statements = []
    checked = _tensor_like(list(arguments.out) + list(arguments.flat_positional))
    if traits.device_check and checked:
        statements.append("std::optional<c10::Device> common_device = std::nullopt;")
        statements.extend(
            f'c10::impl::check_and_update_common_device(common_device, {name}, "aten::{op_name}", "{name}");'
            for name in checked
        )
    if traits.device_guard:
        if arguments.tensor_options is not None:
            # A factory: make the requested device current while the kernel allocates.
            statements.append(
                "const c10::DeviceGuard device_guard(c10::device_or_default(device));"
            )
        else:
            candidates = ([arguments.self_arg.argument] if arguments.self_arg else []) + list(
                itertools.chain(arguments.out, arguments.flat_positional)
            )
            first = next(iter(_tensor_like(candidates)), None)
            if first is not None:
                statements.append(
                    f"const c10::OptionalDeviceGuard device_guard(at::device_of({first}));"
                )
    return statements


def kernel_binding(declaration: Declaration, *, symint: bool, config: BackendConfig) -> KernelBinding:
    schema = declaration.require_schema()
    flags = rendering_flags(declaration) or _RENDERING_FLAGS[0]
    with _torchgen_flags(flags):
        dispatcher_signature = DispatcherSignature.from_schema(schema)
        native_signature = NativeSignature(schema, symint=symint)
        kernel_name = dispatcher.name(schema) + ("_symint" if symint else "")
        kernel_arguments = ", ".join(a.no_default().defn() for a in native_signature.arguments())
        kernel_returns = native_signature.returns_type().cpp_type()
        wrapper_arguments = ", ".join(a.defn() for a in dispatcher_signature.arguments())
        call_arguments = ", ".join(
            expression.expr
            for expression in translate(
                dispatcher_signature.arguments(), native_signature.arguments(), method=False
            )
        )
        wrapper_returns = dispatcher_signature.returns_type().cpp_type()
    scope = config.cpp_namespace + (f"::{config.class_name}" if config.class_name else "")
    qualified_kernel = f"{scope}::{kernel_name}"
    body: list[str] = []
    if config.device_guard:
        traits = installed_op_traits().get(declaration.op_name, OpTraits())
        body.extend(_guard_statements(schema, traits, declaration.op_name))
    body.append(f"return {qualified_kernel}({call_arguments});")
    wrapper_name = ident.wrapper_name("wrapper", declaration.name)
    return KernelBinding(
        op_name=declaration.op_name,
        kernel_returns=kernel_returns,
        kernel_name=kernel_name,
        kernel_arguments=kernel_arguments,
        qualified_kernel=qualified_kernel,
        wrapper_name=wrapper_name,
        wrapper_head=f"{wrapper_returns} {wrapper_name}({wrapper_arguments})",
        wrapper_body=tuple(body),
    )


@dataclass(frozen=True)
class FallbackBinding:
    """A typed per-op CPU fallback: the dispatcher signature, forwarding to the boxed fallback."""

    op_name: str
    wrapper_name: str
    wrapper_head: str
    ops_struct: str
    """ATen's `at::_ops::<name>` struct describing the op (from <ATen/ops/<root>_ops.h>)."""
    ops_header: str
    argument_names: str


def fallback_binding(declaration: Declaration) -> FallbackBinding:
    schema = declaration.require_schema()
    flags = rendering_flags(declaration) or _RENDERING_FLAGS[0]
    with _torchgen_flags(flags):
        signature = DispatcherSignature.from_schema(schema)
        arguments = signature.arguments()
        wrapper_name = ident.wrapper_name("fallback", declaration.name)
        head = (
            f"{signature.returns_type().cpp_type()} {wrapper_name}("
            + ", ".join(a.defn() for a in arguments)
            + ")"
        )
    root = ident.stub_group(declaration.name)
    return FallbackBinding(
        op_name=declaration.op_name,
        wrapper_name=wrapper_name,
        wrapper_head=head,
        ops_struct=f"at::_ops::{declaration.name.unambiguous_name()}",
        ops_header=f"<ATen/ops/{root}_ops.h>",
        argument_names=", ".join(a.name for a in arguments),
    )
