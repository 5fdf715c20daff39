"""Custom ops: operators a backend defines in its own namespace (the YAML's `custom_ops`).

Generator-owned:
- CustomOpDefinitions.cpp: TORCH_LIBRARY(<namespace>, m) with one m.def() per schema. One block
  for the whole namespace, so a second library claiming it fails loudly when loaded;
- RegisterCustomOps.cpp: TORCH_LIBRARY_IMPL blocks binding the user's kernels to the backend's
  dispatch key and to CPU;
- CustomOps.h: the kernels' declarations;
- custom_ops/__init__.py: torch.library.register_fake (and register_autograd where the YAML asks)
  with the user's Python functions. Installed as `<package>.custom_ops`, imported by the package
  after the compiled library (which defines the ops) is loaded.

User-owned (created once, then merged like aten kernel files):
- <kernels>/custom_ops/<name>.cpp: the CPU and device kernels of the op and its overloads;
- <kernels>/custom_ops/<name>.py: the fake kernel and, with `autograd: true`, backward and
  setup_context. A fresh fake computes the output shape where the schema decides it (one
  functional Tensor result: empty_like of the first Tensor argument; a result aliasing a mutated
  argument: that argument; no result: None); anything else raises until the user writes it.
"""

from __future__ import annotations

from dataclasses import dataclass

from torchgen.model import CustomClassType, FunctionSchema, SchemaKind

from ..api.signatures import (
    DECLINED_KERNEL_HEADER,
    CustomKernelBinding,
    CustomOpWrapper,
    custom_kernel_binding,
    custom_op_wrapper,
)
from ..model import ident
from ..model.backend import BackendConfig, CustomOp
from ..model.outputs import CUSTOM_CLASS_DIRECTORY, OutputFile, Owner
from ..paths import CUSTOM_OPS_DIR
from .common import generated_banner
from .context import EmitContext
from .kernel_file import KernelFile, StubFileArguments, StubKernel, render_kernel_file
from .render import render

DEFINITIONS_FILE = "CustomOpDefinitions.cpp"
REGISTRATION_FILE = "RegisterCustomOps.cpp"
HEADER_FILE = "CustomOps.h"
PYTHON_MODULE = f"{CUSTOM_OPS_DIR}/__init__.py"
KERNEL_TEMPLATE = "codegen/custom_op_kernels.cpp.j2"
PYTHON_TEMPLATE = "codegen/custom_op_impl.py.j2"
PYTHON_MACROS = ("codegen/macros/python_stub.j2", "python_stub")
PYTHON_CLOSING = "# scaffold-backend adds the functions of new overloads above this line."
# What the device kernels' guards need: at::device_of and c10::OptionalDeviceGuard.
GUARD_INCLUDES = ("<ATen/DeviceGuard.h>", "<c10/core/DeviceGuard.h>")


def guard_includes(config: BackendConfig) -> list[str]:
    """GUARD_INCLUDES, and the header of the runtime's own guard when the YAML names one."""
    return [*GUARD_INCLUDES, *config.device_guard_headers]


@dataclass(frozen=True)
class CustomOpBinding:
    op: CustomOp
    cpu: CustomKernelBinding | None
    device: CustomKernelBinding
    schema_literal: str
    """The schema as a C++ string literal, for m.def()."""
    device_wrapper: CustomOpWrapper | None
    """What the registration binds for the device kernel: the kernel behind a device guard
    (the YAML's `device_guard: true`), else None (the kernel itself)."""

    @property
    def stem(self) -> str:
        return ident.custom_kernel_base(self.op.schema.name)

    @property
    def kernels(self) -> tuple[CustomKernelBinding, ...]:
        return (self.cpu, self.device) if self.cpu else (self.device,)


def kernel_namespace(context: EmitContext) -> str:
    return f"{context.config.cpp_namespace}::{CUSTOM_OPS_DIR}"


def class_types(context: EmitContext) -> dict[str, str]:
    """torchgen's name of each custom class (`foo.TensorQueue`) -> its C++ class."""
    config = context.config
    return {f"{config.device}.{c.name}": f"{config.cpp_namespace}::{c.name}" for c in config.custom_classes}


def _class_headers(context: EmitContext, bindings: list[CustomOpBinding]) -> list[str]:
    """The headers of the custom classes the ops take (the kernels directory is on the include
    path), so the kernels' declarations can name them."""
    used = {
        argument.type.class_name
        for binding in bindings
        for argument in binding.op.schema.arguments.flat_all
        if isinstance(argument.type, CustomClassType)
    }
    device = context.config.device
    classes = context.config.custom_classes
    return sorted(f"{CUSTOM_CLASS_DIRECTORY}/{c.file_stem}.h" for c in classes if f"{device}.{c.name}" in used)


def custom_op_bindings(context: EmitContext) -> list[CustomOpBinding]:
    scope = kernel_namespace(context)
    device = context.config.device
    classes = class_types(context)
    bindings = []
    for op in sorted(context.config.custom_ops, key=lambda op: op.op_name):
        stem = ident.custom_kernel_base(op.schema.name)
        device_kernel = custom_kernel_binding(op.schema, f"{stem}_{device}", scope, classes)
        wrapper = None
        if context.config.device_guard:
            wrapper = custom_op_wrapper(
                op.schema,
                device_kernel,
                f"wrapper_{stem}_{device}",
                context.config.device_guard_type,
                declines_to=f"{device}::{op.schema.name.name}" if op.cpu else None,
            )
        bindings.append(
            CustomOpBinding(
                op=op,
                cpu=custom_kernel_binding(op.schema, f"{stem}_cpu", scope, classes) if op.cpu else None,
                device=device_kernel,
                schema_literal=ident.cpp_string_literal(str(op.schema)),
                device_wrapper=wrapper,
            )
        )
    return bindings


def _groups(bindings: list[CustomOpBinding]) -> dict[str, list[CustomOpBinding]]:
    groups: dict[str, list[CustomOpBinding]] = {}
    for binding in bindings:
        groups.setdefault(binding.op.group, []).append(binding)
    return dict(sorted(groups.items()))


def emit_custom_op_files(context: EmitContext) -> list[OutputFile]:
    """The generator-owned files. The Python module exists even without custom ops, so the
    package can always import it; the C++ files only when there is something to register."""
    bindings = custom_op_bindings(context)
    config = context.config
    layout = context.layout
    banner = generated_banner(context.selection)
    groups = _groups(bindings)
    python = OutputFile(
        path=layout.in_out(PYTHON_MODULE),
        content=render(
            "codegen/custom_ops.py.j2",
            banner=generated_banner(context.selection, comment="#"),
            device=config.device,
            namespace=config.device,
            modules=list(groups),
            fakes=[(b.op.qualified_name, f"{b.op.group}.{b.stem}_fake") for b in bindings],
            autograds=[
                (b.op.qualified_name, f"{b.op.group}.{b.stem}_backward", f"{b.op.group}.{b.stem}_setup_context")
                for b in bindings
                if b.op.autograd
            ],
        ),
        owner=Owner.GENERATOR,
    )
    if not bindings:
        return [python]
    namespace = config.device
    kernels = [kernel for binding in bindings for kernel in binding.kernels]
    wrappers = [binding.device_wrapper for binding in bindings if binding.device_wrapper]
    return [
        OutputFile(
            path=layout.in_out(HEADER_FILE),
            content=render(
                "codegen/CustomOps.h.j2",
                banner=banner,
                namespace=namespace,
                namespace_open=f"namespace {kernel_namespace(context)} {{",
                namespace_close=f"}}  // namespace {kernel_namespace(context)}",
                class_headers=_class_headers(context, bindings),
                declarations=[f"{kernel.declaration};" for kernel in kernels],
            ),
            owner=Owner.GENERATOR,
        ),
        OutputFile(
            path=layout.in_out(DEFINITIONS_FILE),
            content=render(
                "codegen/CustomOpDefinitions.cpp.j2",
                banner=banner,
                namespace=namespace,
                # An op taking a class is defined with the classes (RegisterCustomClasses.cpp):
                # its schema parses only once the class is registered, and the order in which
                # files' static initialisers run is unspecified.
                schemas=[binding.schema_literal for binding in bindings if not binding.op.takes_class],
            ),
            owner=Owner.GENERATOR,
        ),
        OutputFile(
            path=layout.in_out(REGISTRATION_FILE),
            content=render(
                "codegen/RegisterCustomOps.cpp.j2",
                banner=banner,
                namespace=namespace,
                header=HEADER_FILE,
                guard_includes=[*guard_includes(config), DECLINED_KERNEL_HEADER] if wrappers else [],
                wrappers=wrappers,
                registrations=[
                    (
                        config.backend,
                        [
                            (b.op.op_name, b.device_wrapper.name if b.device_wrapper else b.device.qualified_kernel)
                            for b in bindings
                        ],
                    ),
                    ("CPU", [(b.op.op_name, b.cpu.qualified_kernel) for b in bindings if b.cpu]),
                ],
            ),
            owner=Owner.GENERATOR,
        ),
        python,
    ]


def emit_custom_op_stubs(context: EmitContext) -> list[KernelFile]:
    """The user-owned files: per op group, a C++ file with the kernels and a Python file with
    the fake kernel and the autograd formula."""
    files = []
    for group, members in _groups(custom_op_bindings(context)).items():
        names = ", ".join(binding.op.qualified_name for binding in members)
        files.append(_cpp_file(context, group, names, members))
        files.append(_python_file(context, group, names, members))
    return files


def _cpp_file(context: EmitContext, group: str, names: str, members: list[CustomOpBinding]) -> KernelFile:
    config = context.config
    shown = f"{context.layout.kernels_dir.name}/{CUSTOM_OPS_DIR}/{group}.cpp"
    kernels = {}
    for binding in members:
        for kernel, where in ((binding.cpu, "CPU"), (binding.device, config.device)):
            if kernel is None:
                continue
            kernels[kernel.kernel_name] = StubKernel(
                definition_head=kernel.declaration,
                message=(
                    f"{config.device}: {binding.op.qualified_name} has no {where} kernel yet "
                    f"(implement {kernel.kernel_name} in {shown})"
                ),
                type_signature=kernel.type_signature,
            )
    namespace_close = f"}}  // namespace {kernel_namespace(context)}"
    # `group` names the ops, `group_header` is the custom ops' declarations header.
    arguments = StubFileArguments(
        group=names,
        device=config.device,
        yaml_path=config.display_path,
        group_header=HEADER_FILE,
        namespace_open=f"namespace {kernel_namespace(context)} {{",
        namespace_close=namespace_close,
    )
    return KernelFile(
        output=OutputFile(
            context.layout.custom_op_kernel_path(group),
            render_kernel_file(arguments, kernels, KERNEL_TEMPLATE),
            Owner.USER,
        ),
        kernels=kernels,
        namespace_close=namespace_close,
        template_arguments=arguments,
        template=KERNEL_TEMPLATE,
    )


def _python_file(context: EmitContext, group: str, names: str, members: list[CustomOpBinding]) -> KernelFile:
    config = context.config
    kernels = {}
    for binding in members:
        op = binding.op
        schema = op.schema
        arguments = ", ".join(argument.name for argument in schema.arguments.flat_all)
        fake = f"{binding.stem}_fake"
        kernels[fake] = _python_stub(f"def {fake}({arguments})", _returns_annotation(schema), _fake_body(op))
        if op.autograd:
            grads = "grad: Tensor" if len(schema.returns) == 1 else "*grads: Tensor"
            todo = f'raise NotImplementedError("{op.qualified_name}: write its {{}} in this file")'
            kernels[f"{binding.stem}_setup_context"] = _python_stub(
                f"def {binding.stem}_setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any)",
                "None",
                todo.format(f"{binding.stem}_setup_context"),
            )
            kernels[f"{binding.stem}_backward"] = _python_stub(
                f"def {binding.stem}_backward(ctx: Any, {grads})",
                "tuple[Tensor | None, ...]",
                todo.format(f"{binding.stem}_backward"),
            )
    # `group` names the ops; new functions go above the closing comment (`namespace_close`).
    template_arguments = StubFileArguments(
        group=names,
        device=config.device,
        yaml_path=config.display_path,
        group_header="",
        namespace_open="",
        namespace_close=PYTHON_CLOSING,
    )
    return KernelFile(
        output=OutputFile(
            context.layout.custom_op_python_path(group),
            render_kernel_file(template_arguments, kernels, PYTHON_TEMPLATE),
            Owner.USER,
        ),
        kernels=kernels,
        namespace_close=PYTHON_CLOSING,
        template_arguments=template_arguments,
        template=PYTHON_TEMPLATE,
        snippet_macro=PYTHON_MACROS,
    )


def _python_stub(head: str, returns: str, body: str) -> StubKernel:
    # The head stops before ` -> `: write/merge.py finds a definition line by its head followed by a
    # space, as it does for C++ kernels (`head {`).
    return StubKernel(definition_head=head, message="", type_signature=head, returns=returns, body=body)


def _returns_annotation(schema: FunctionSchema) -> str:
    # Imported here: torchgen.api.python pulls in torchgen.gen (~75 ms), which only backends
    # with custom ops need.
    from torchgen.api.python import return_type_str_pyi

    types = [return_type_str_pyi(r.type) for r in schema.returns]
    if not types:
        return "None"
    return types[0] if len(types) == 1 else f"tuple[{', '.join(types)}]"


def _fake_body(op: CustomOp) -> str:
    """What a fresh fake kernel returns: the output's shape where the schema alone decides it."""
    schema = op.schema
    returns = schema.returns
    takes_class = [a.name for a in schema.arguments.flat_all if isinstance(a.type, CustomClassType)]
    if takes_class:
        # What the op does to the object cannot be read from the schema, and a fake that does
        # nothing would let a traced program see a state the real one never has.
        return (
            f'raise NotImplementedError("{op.qualified_name}: write its fake kernel '
            f"({ident.custom_kernel_base(schema.name)}_fake) in this file: apply the op to the fake "
            f'object(s) {", ".join(takes_class)} as the kernel does to the real one")'
        )
    if not returns:
        return "return None"
    if len(returns) == 1 and str(returns[0].type) == "Tensor":
        annotation = returns[0].annotation
        if annotation is not None:
            aliased = [a.name for a in schema.arguments.flat_all if a.annotation == annotation]
            if len(aliased) == 1:
                return f"return {aliased[0]}"
        elif schema.kind() is SchemaKind.functional:
            tensors = [a.name for a in schema.arguments.flat_all if str(a.type) == "Tensor"]
            if tensors:
                # Assumes the result is shaped like the first tensor; change it if it is not.
                return f"return torch.empty_like({tensors[0]})"
    return (
        f'raise NotImplementedError("{op.qualified_name}: write its fake kernel '
        f'({ident.custom_kernel_base(schema.name)}_fake) in this file")'
    )
