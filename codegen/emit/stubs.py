"""Kernel stubs: one C++ file per op group (an op with its overloads, inplace and out variants).

A stub is created once and then belongs to the user. A fresh stub compiles and registers, and
fails loudly at run time naming the op, so an unimplemented kernel can never pass for a working
one. Alongside the text, the emitter reports each kernel's definition line and its stand-alone
stub function: merge.py uses them to update a file the user has edited.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from ..render import environment, render
from .common import Layout, OutputFile, Owner
from .context import EmitContext

STUB_TEMPLATE = "codegen/kernel_stub.cpp.j2"
STUB_MACROS = "codegen/macros/kernel_stub.j2"


@dataclass(frozen=True)
class StubKernel:
    definition_head: str
    message: str
    type_signature: str
    """The declaration without parameter names (KernelBinding.type_signature)."""
    returns: str = ""
    """Python stubs only: the return annotation written after the head."""
    body: str = ""
    """Python stubs only: the one statement a fresh function holds."""


@dataclass(frozen=True)
class KernelFile:
    output: OutputFile
    kernels: Mapping[str, StubKernel]
    """op name -> the kernel as a fresh stub writes it."""
    snippets: Mapping[str, str]
    """op name -> the kernel's stub function alone, for adding it to an existing file."""
    namespace_close: str
    """The line that closes the namespace; new kernels are inserted before it."""
    template_arguments: Mapping[str, object]
    """What the file's template was rendered with, apart from the kernels."""
    template: str = STUB_TEMPLATE
    """The file's template (aten kernel files, custom op kernels, custom op Python)."""
    snippet_macro: tuple[str, str] = (STUB_MACROS, "kernel_stub")
    """The template and macro that render one kernel alone."""

    @property
    def heads(self) -> dict[str, str]:
        """op name -> the kernel's definition line."""
        return {op: kernel.definition_head for op, kernel in self.kernels.items()}

    @property
    def type_signatures(self) -> dict[str, str]:
        return {op: kernel.type_signature for op, kernel in self.kernels.items()}

    def keeping_heads(self, heads: Mapping[str, str]) -> KernelFile:
        """The same file with some definition lines as the user's file has them: used when PyTorch
        renamed parameters only, so the user's names stay (C++ matches a definition to its
        declaration by types, not names). Rendered again from the template, never patched."""
        if not heads:
            return self
        kernels = {
            op: replace(kernel, definition_head=heads.get(op, kernel.definition_head))
            for op, kernel in self.kernels.items()
        }
        return replace(
            self,
            output=replace(
                self.output, content=render_kernel_file(self.template, self.template_arguments, kernels)
            ),
            kernels=kernels,
            snippets=kernel_snippets(kernels, self.snippet_macro),
        )


def stub_display_path(context: EmitContext, group: str) -> str:
    """How a stub is named inside generated text: `<kernels dir name>/<group>.cpp`, the same
    wherever the project lives."""
    return f"{context.layout.kernels_dir.name}/{group}.cpp"


def render_kernel_file(
    template: str, template_arguments: Mapping[str, object], kernels: Mapping[str, StubKernel]
) -> str:
    return render(template, **template_arguments, kernels=list(kernels.values()))


def kernel_snippets(
    kernels: Mapping[str, StubKernel], macro: tuple[str, str] = (STUB_MACROS, "kernel_stub")
) -> dict[str, str]:
    template, name = macro
    stub_macro = getattr(environment().get_template(template).module, name)
    return {op: str(stub_macro(kernel)) for op, kernel in kernels.items()}


def emit_stubs(context: EmitContext) -> list[KernelFile]:
    config = context.config
    namespace_close = f"}}  // namespace {config.cpp_namespace}"
    files = []
    for group, members in context.kernel_groups().items():
        kernels = {
            op.op_name: StubKernel(
                definition_head=binding.kernel_declaration(context.kernel_scope),
                message=(
                    f"{config.device}: aten::{op.op_name} has no kernel yet "
                    f"(implement {binding.kernel_name} in {stub_display_path(context, group)})"
                ),
                type_signature=binding.type_signature(),
            )
            for op, binding in members
        }
        template_arguments: dict[str, object] = {
            "group": group,
            "device": config.device,
            "yaml_path": config.display_path,
            "group_header": Layout.group_header(group),
            "namespace_open": f"namespace {config.cpp_namespace} {{",
            "namespace_close": namespace_close,
        }
        files.append(
            KernelFile(
                output=OutputFile(
                    context.layout.stub_path(group),
                    render_kernel_file(STUB_TEMPLATE, template_arguments, kernels),
                    Owner.USER,
                ),
                kernels=kernels,
                snippets=kernel_snippets(kernels),
                namespace_close=namespace_close,
                template_arguments=template_arguments,
            )
        )
    return files
