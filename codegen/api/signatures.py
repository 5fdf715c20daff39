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

import itertools
from collections.abc import Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from dataclasses import dataclass

from torchgen import local
from torchgen.api import dispatcher
from torchgen.api.translate import translate
from torchgen.api.types import Binding, DispatcherSignature, NativeSignature
from torchgen.model import Argument, CustomClassType, FunctionSchema

from ..model import ident
from ..model.backend import BackendConfig, DeviceGuardType
from ..model.declarations import Declaration
from .op_traits import OpTraits, installed_op_traits

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


def _declaration_text(schema: FunctionSchema, arguments: list[Binding]) -> str:
    parameters = ", ".join(a.no_default().decl() for a in arguments)
    returns = dispatcher.returns_type(schema.returns).cpp_type()
    return f"{returns} {dispatcher.name(schema)}({parameters})"


def render_dispatcher_declaration(schema: FunctionSchema) -> str:
    """The declaration RegistrationDeclarations.h writes for `schema` (under the current flags)."""
    return _declaration_text(schema, dispatcher.arguments(schema))


def _rendering(declaration: Declaration) -> tuple[tuple[bool, bool] | None, list[Binding] | None]:
    """`rendering_flags`, with the dispatcher arguments computed under the flags found (None
    when the flags were decided without computing them), so a caller need not compute them
    again."""
    schema = declaration.require_schema()
    arguments = schema.arguments.flat_all
    if not any(a.is_write or a.type.is_list_like() for a in arguments):
        # The flags only change how mutable tensors and tensor lists are spelled.
        return _RENDERING_FLAGS[0], None
    for flags in _RENDERING_FLAGS:
        with _torchgen_flags(flags):
            bindings = dispatcher.arguments(schema)
            if _declaration_text(schema, bindings) == declaration.cpp_declaration:
                return flags, bindings
    return None, None


def rendering_flags(declaration: Declaration) -> tuple[bool, bool] | None:
    """The torchgen flags under which the schema renders to the header's declaration, or None
    when no setting does (a header written by another torch release may spell types differently)."""
    return _rendering(declaration)[0]


@dataclass(frozen=True)
class KernelBinding:
    """Everything the emitters need to declare, wrap and register one kernel: its signature
    (KernelSignature: the C++ types and names, the same for every backend on one header) and how
    this backend calls and wraps it."""

    op_name: str
    signature: KernelSignature
    qualified_kernel: str
    """How registration code calls it: `ns::kernel` or `ns::Class::kernel`."""
    wrapper_name: str
    wrapper_head: str
    """The wrapper's `<returns> <wrapper_name>(<dispatcher arguments>)`."""
    wrapper_body: tuple[str, ...]
    """Statements of the wrapper, returning the kernel's result."""
    declines: bool
    """The wrapper runs the op through the copying fallback when the kernel declines (see
    _declining_call)."""

    @property
    def kernel_name(self) -> str:
        return self.signature.kernel_name

    def kernel_declaration(self, scope: str = "") -> str:
        """`<returns> <scope><kernel_name>(<arguments>)`, without a trailing semicolon."""
        signature = self.signature
        return f"{signature.kernel_returns} {scope}{signature.kernel_name}({signature.kernel_arguments})"

    def type_signature(self) -> str:
        """The declaration without parameter names: what C++ matches a definition by. Two
        kernels with the same type signature accept each other's definition lines, whatever
        their parameters are called."""
        signature = self.signature
        return f"{signature.kernel_returns} {signature.kernel_name}({', '.join(signature.kernel_argument_types)})"


def _tensor_like(arguments: list[Argument]) -> list[str]:
    return [argument.name for argument in arguments if argument.type.is_tensor_like()]


def _device_check_statements(schema: FunctionSchema, traits: OpTraits, op_name: str) -> list[str]:
    """torchgen's device check, for backends that ask for it: every tensor argument on one
    device."""
    arguments = schema.arguments
    checked = _tensor_like(list(arguments.out) + list(arguments.flat_positional))
    if not traits.device_check or not checked:
        return []
    return [
        "std::optional<c10::Device> common_device = std::nullopt;",
        *(
            f'c10::impl::check_and_update_common_device(common_device, {name}, "aten::{op_name}", "{name}");'
            for name in checked
        ),
    ]


@dataclass(frozen=True)
class GuardedDevice:
    """The device a wrapper's guard makes current, as torchgen picks it."""

    expression: str
    """C++ of type c10::Device (`optional` false) or std::optional<c10::Device> (true)."""
    optional: bool

    def statement(self, guard_type: DeviceGuardType | None) -> str:
        """The guard's declaration: c10's device-generic guard, or the runtime's own type."""
        if guard_type is not None:
            cpp_type = guard_type.cpp_type
        else:
            cpp_type = "c10::OptionalDeviceGuard" if self.optional else "c10::DeviceGuard"
        return f"const {cpp_type} device_guard({self.expression});"


def _guarded_device(schema: FunctionSchema) -> GuardedDevice | None:
    """torchgen's choice: a factory makes the requested device current while the kernel
    allocates; any other op the device of its first tensor (self, out=, then positional). None
    for an op without tensors."""
    arguments = schema.arguments
    if arguments.tensor_options is not None:
        return GuardedDevice("c10::device_or_default(device)", optional=False)
    candidates = ([arguments.self_arg.argument] if arguments.self_arg else []) + list(
        itertools.chain(arguments.out, arguments.flat_positional)
    )
    first = next(iter(_tensor_like(candidates)), None)
    if first is None:
        return None
    return GuardedDevice(f"at::device_of({first})", optional=True)


@dataclass(frozen=True)
class KernelSignature:
    """What torchgen computes for one kernel: its C++ types and names, independent of the
    backend's namespace and class. The costly part of a binding (most of a full generation's
    time), so schema_cache.py keeps it per header digest."""

    kernel_returns: str
    kernel_name: str
    kernel_arguments: str
    kernel_argument_names: tuple[str, ...]
    kernel_argument_types: tuple[str, ...]
    wrapper_returns: str
    wrapper_arguments: str
    call_arguments: str
    """How the wrapper passes its dispatcher arguments to the kernel."""
    device_check_statements: tuple[str, ...]
    """The device check for a backend with `device_guard` on."""
    guarded_device: GuardedDevice | None
    """What the device guard of such a backend makes current (None: no guard)."""
    wrapper_argument_names: tuple[str, ...]
    ops_struct: str
    """ATen's `at::_ops::<name>` struct describing the op."""
    ops_header: str
    """Where it is declared: `<ATen/ops/<root>_ops.h>`."""


def kernel_signature(declaration: Declaration, *, symint: bool) -> KernelSignature:
    schema = declaration.require_schema()
    found_flags, rendered_arguments = _rendering(declaration)
    flags = found_flags or _RENDERING_FLAGS[0]
    traits = installed_op_traits().get(declaration.op_name, OpTraits())
    with _torchgen_flags(flags):
        dispatcher_signature = DispatcherSignature.from_schema(schema)
        native_signature = NativeSignature(schema, symint=symint)
        # Each arguments() call recomputes the C++ bindings from the schema: ask once, and not
        # at all when finding the flags already did.
        dispatcher_arguments = rendered_arguments or dispatcher_signature.arguments()
        native_arguments = native_signature.arguments()
        if [a.type for a in dispatcher_arguments] == [a.type for a in native_arguments]:
            # Same types in the same order (no SymInt to narrow): pass the arguments through.
            # translate() would say the same, at a quarter of a generation's time for 858 ops.
            call_arguments = ", ".join(a.name for a in dispatcher_arguments)
        else:
            call_arguments = ", ".join(
                expression.expr
                for expression in translate(dispatcher_arguments, native_arguments, method=False)
            )
        signature = KernelSignature(
            kernel_returns=native_signature.returns_type().cpp_type(),
            kernel_name=dispatcher.name(schema) + ("_symint" if symint else ""),
            kernel_arguments=", ".join(a.no_default().defn() for a in native_arguments),
            kernel_argument_names=tuple(a.name for a in native_arguments),
            kernel_argument_types=tuple(a.type for a in native_arguments),
            wrapper_returns=dispatcher_signature.returns_type().cpp_type(),
            wrapper_arguments=", ".join(a.defn() for a in dispatcher_arguments),
            call_arguments=call_arguments,
            device_check_statements=tuple(_device_check_statements(schema, traits, declaration.op_name)),
            guarded_device=_guarded_device(schema) if traits.device_guard else None,
            wrapper_argument_names=tuple(a.name for a in dispatcher_arguments),
            ops_struct=_ops_struct(declaration),
            ops_header=_ops_header(declaration),
        )
    return signature


def _ops_struct(declaration: Declaration) -> str:
    """ATen's `at::_ops::<name>` struct describing the op."""
    return f"at::_ops::{declaration.name.unambiguous_name()}"


def _ops_header(declaration: Declaration) -> str:
    """The header declaring the op's `at::_ops` struct: named by the op's root name, as torchgen
    names ATen's headers (`__and__.Tensor` -> `and_ops.h`)."""
    return f"<ATen/ops/{declaration.name.name.base}_ops.h>"


SignatureKey = tuple[str, bool]
"""(op name, symint): what a KernelSignature is computed from, given the header."""


def kernel_binding(
    declaration: Declaration,
    *,
    symint: bool,
    config: BackendConfig,
    signatures: MutableMapping[SignatureKey, KernelSignature] | None = None,
    declines: bool = False,
) -> KernelBinding:
    """`signatures`: kernel signatures already computed for this header (schema_cache.py); one
    computed here is added to it. `declines`: the wrapper catches the kernel declining (see
    _declining_call)."""
    key = (declaration.op_name, symint)
    signature = signatures.get(key) if signatures is not None else None
    if signature is None:
        signature = kernel_signature(declaration, symint=symint)
        if signatures is not None:
            signatures[key] = signature
    scope = config.cpp_namespace + (f"::{config.class_name}" if config.class_name else "")
    qualified_kernel = f"{scope}::{signature.kernel_name}"
    body: list[str] = []
    if config.device_guard:
        body += signature.device_check_statements
        if signature.guarded_device is not None:
            body.append(signature.guarded_device.statement(config.device_guard_type))
    call = f"return {qualified_kernel}({signature.call_arguments});"
    body += _declining_call(call, signature) if declines else [call]
    wrapper_name = ident.wrapper_name("wrapper", declaration.name)
    return KernelBinding(
        op_name=declaration.op_name,
        signature=signature,
        qualified_kernel=qualified_kernel,
        wrapper_name=wrapper_name,
        wrapper_head=f"{signature.wrapper_returns} {wrapper_name}({signature.wrapper_arguments})",
        wrapper_body=tuple(body),
        declines=declines,
    )


KERNEL_DECLINED = "scaffold::runtime::KernelDeclined"
RUN_DECLINED_KERNEL = "scaffold::runtime::run_declined_kernel_on_cpu"
DECLINED_CUSTOM_OP = "scaffold::runtime::DeclinedCustomOp"
DECLINED_KERNEL_HEADER = '"declined_kernel.h"'
"""The runtime's side of a declining kernel (runtime/csrc/fallback/declined_kernel.h)."""


def _declining_call(call: str, signature: KernelSignature) -> list[str]:
    """The kernel call, and the copying fallback for when the kernel declines (before it has
    written anything): a kernel that computes on host views throws HostAccessUnavailable on a
    device whose memory the host cannot address, a device kernel calls decline_kernel for what its
    device code does not cover; either way the op then runs on the CPU through copies."""
    arguments = ", ".join(signature.wrapper_argument_names)
    fallback = f"at::native::call_fallback_fn_symint<&{RUN_DECLINED_KERNEL}, {signature.ops_struct}>"
    return [
        "try {",
        f"  {call}",
        f"}} catch (const {KERNEL_DECLINED}&) {{",
        f"  return {fallback}::call({arguments});",
        "}",
    ]


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
    return FallbackBinding(
        op_name=declaration.op_name,
        wrapper_name=wrapper_name,
        wrapper_head=head,
        ops_struct=_ops_struct(declaration),
        ops_header=_ops_header(declaration),
        argument_names=", ".join(a.name for a in arguments),
    )


@dataclass(frozen=True)
class CustomKernelBinding:
    """One C++ kernel of a custom op (its CPU or its device kernel), registered with m.impl():
    the dispatcher signature, which c10 checks against the schema when the library loads."""

    kernel_name: str
    qualified_kernel: str
    declaration: str
    """`<returns> <kernel_name>(<arguments>)`, parameters named as in the schema."""
    type_signature: str
    """The declaration without parameter names (see KernelBinding.type_signature)."""
    returns: str
    parameters: str
    """`const at::Tensor & a, double c`: the parameters with their names."""
    argument_names: tuple[str, ...]
    function_type: str
    """`at::Tensor(const at::Tensor &, double)`: the kernel's C++ function type."""


@dataclass(frozen=True)
class CustomOpWrapper:
    """What the registration binds instead of a device kernel: the same signature, making the
    tensors' device current (c10::OptionalDeviceGuard) before calling the kernel, as PyTorch's
    generated wrappers do for aten kernels."""

    name: str
    head: str
    body: tuple[str, ...]


def custom_class_type(class_type: CustomClassType, classes: Mapping[str, str]) -> str:
    """The C++ parameter type of a custom class argument (`__torch__.torch.classes.foo.Queue`):
    what c10 passes a kernel for it. `classes` maps torchgen's class name (`foo.Queue`) to the
    C++ class; the YAML parser has checked every class argument names one of them."""
    return f"const c10::intrusive_ptr<{classes[class_type.class_name]}> &"


def custom_kernel_binding(
    schema: FunctionSchema, kernel_name: str, scope: str, classes: Mapping[str, str]
) -> CustomKernelBinding:
    """Custom ops use the dispatcher API as it is (c10::SymInt stays SymInt), with plain
    `at::TensorList` for Tensor[] and non-const references for mutated tensors: the types
    c10's schema inference accepts for a function registered with m.impl(). torchgen's C++ API
    has no type for a custom class argument; custom_class_type gives it."""
    parameters: list[str] = []
    types: list[str] = []
    with _torchgen_flags((False, False)):
        for argument in dispatcher.jit_arguments(schema):
            if isinstance(argument.type, CustomClassType):
                cpp_type = custom_class_type(argument.type, classes)
                parameters.append(f"{cpp_type} {argument.name}")
            else:
                binding = dispatcher.argument(argument, symint=True)
                cpp_type = binding.type
                parameters.append(binding.no_default().defn())
            types.append(cpp_type)
        returns = dispatcher.returns_type(schema.returns, symint=True).cpp_type()
    return CustomKernelBinding(
        kernel_name=kernel_name,
        qualified_kernel=f"{scope}::{kernel_name}",
        declaration=f"{returns} {kernel_name}({', '.join(parameters)})",
        type_signature=f"{returns} {kernel_name}({', '.join(types)})",
        returns=returns,
        parameters=", ".join(parameters),
        argument_names=tuple(argument.name for argument in dispatcher.jit_arguments(schema)),
        function_type=f"{returns}({', '.join(types)})",
    )


def custom_op_wrapper(
    schema: FunctionSchema,
    kernel: CustomKernelBinding,
    wrapper_name: str,
    guard_type: DeviceGuardType | None,
    declines_to: str | None,
) -> CustomOpWrapper:
    """The device kernel's wrapper: the guard (`guard_type`, or c10's) of the first tensor
    argument's device (or of the `device` argument of a factory), then the kernel. An op without
    tensors gets no guard. `declines_to`: the op's qualified name (`foo::mymuladd`) when it has a
    CPU kernel to run if the device kernel declines (see _declining_call)."""
    guarded = _guarded_device(schema)
    guard = guarded.statement(guard_type) if guarded is not None else None
    arguments = ", ".join(kernel.argument_names)
    returning = "return " if kernel.returns != "void" else ""
    call = f"{returning}{kernel.qualified_kernel}({arguments});"
    if declines_to is None:
        return CustomOpWrapper(
            name=wrapper_name,
            head=f"{kernel.returns} {wrapper_name}({kernel.parameters})",
            body=(*([guard] if guard else []), call),
        )
    overload = ident.cpp_string_literal(schema.name.overload_name)
    fallback = f"{DECLINED_CUSTOM_OP}<{kernel.function_type}>::call({ident.cpp_string_literal(declines_to)}, {overload}"
    return CustomOpWrapper(
        name=wrapper_name,
        head=f"{kernel.returns} {wrapper_name}({kernel.parameters})",
        body=(
            *([guard] if guard else []),
            "try {",
            f"  {call}",
            f"}} catch (const {KERNEL_DECLINED}&) {{",
            f"  {returning}{fallback}{', ' if arguments else ''}{arguments});",
            "}",
        ),
    )
