"""A kernel file as the generator writes it: the text of a fresh stub, each kernel's definition
line, and each kernel's stand-alone stub function.

Kernel files belong to the user once created; merge.py and kernel_text.py use these records to
update a file the user has edited, without importing the emitters.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from .outputs import OutputFile
from .render import environment, render

STUB_TEMPLATE = "codegen/kernel_stub.cpp.j2"
STUB_MACROS = "codegen/macros/kernel_stub.j2"


@dataclass(frozen=True)
class StubKernel:
    definition_head: str
    message: str
    type_signature: str
    """The declaration without parameter names (KernelBinding.type_signature)."""


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
            output=replace(self.output, content=render_kernel_file(self.template_arguments, kernels)),
            kernels=kernels,
            snippets=kernel_snippets(kernels),
        )


def render_kernel_file(template_arguments: Mapping[str, object], kernels: Mapping[str, StubKernel]) -> str:
    return render(STUB_TEMPLATE, **template_arguments, kernels=list(kernels.values()))


def kernel_snippets(kernels: Mapping[str, StubKernel]) -> dict[str, str]:
    stub_macro = environment().get_template(STUB_MACROS).module.kernel_stub  # type: ignore[attr-defined]
    return {op: str(stub_macro(kernel)) for op, kernel in kernels.items()}
