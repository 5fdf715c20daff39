"""The input every emitter takes: the selection plus the C++ bindings computed once for it."""

from __future__ import annotations

from collections.abc import MutableMapping
from dataclasses import dataclass

from ..api.signatures import (
    FallbackBinding,
    KernelBinding,
    KernelSignature,
    SignatureKey,
    fallback_binding,
    kernel_binding,
)
from ..model.backend import BackendConfig
from ..model.core_ops import CORE_OPS
from ..model.outputs import Layout
from ..model.selection import OpStatus, SelectedOp, Selection


@dataclass(frozen=True)
class EmitContext:
    selection: Selection
    layout: Layout
    kernels: tuple[tuple[SelectedOp, KernelBinding], ...]
    """Native and autograd kernels, sorted by op name."""
    explicit_fallbacks: tuple[FallbackBinding, ...]

    @property
    def config(self) -> BackendConfig:
        return self.selection.config

    def kernels_with_status(self, status: OpStatus) -> list[tuple[SelectedOp, KernelBinding]]:
        return [(op, binding) for op, binding in self.kernels if op.status is status]

    def kernel_groups(self) -> dict[str, list[tuple[SelectedOp, KernelBinding]]]:
        groups: dict[str, list[tuple[SelectedOp, KernelBinding]]] = {}
        for op, binding in self.kernels:
            groups.setdefault(op.group, []).append((op, binding))
        return dict(sorted(groups.items()))

    @property
    def kernel_scope(self) -> str:
        """How kernel definitions are qualified inside the namespace: `Class::` or nothing."""
        class_name = self.selection.config.class_name
        return f"{class_name}::" if class_name else ""


def _may_decline(op: SelectedOp) -> bool:
    """Whether the wrapper of `op`'s backend kernel runs the op through the CPU fallback when the
    kernel declines (it computes on host views, which the device's memory does not allow). Not
    for autograd kernels, nor the core ops the runtime runs without host views
    (model/core_ops.py), nor views: through the fallback, a view would be a view of a copy."""
    schema = op.declaration.require_schema()
    is_view = any(r.annotation is not None for r in schema.returns) and not schema.is_mutable
    return op.status == OpStatus.NATIVE and op.op_name not in CORE_OPS and not is_view


def build_context(
    selection: Selection,
    layout: Layout,
    signatures: MutableMapping[SignatureKey, KernelSignature] | None = None,
) -> EmitContext:
    """`signatures`: kernel signatures known for this header (api/schema_cache.py), extended here."""
    config = selection.config
    kernels = tuple(
        (
            op,
            kernel_binding(
                op.declaration, symint=op.symint, config=config, signatures=signatures, declines=_may_decline(op)
            ),
        )
        for op in selection.kernels
    )
    fallbacks = tuple(
        fallback_binding(op.declaration)
        for op in selection.with_status(OpStatus.EXPLICIT_FALLBACK)
    )
    return EmitContext(
        selection=selection, layout=layout, kernels=kernels, explicit_fallbacks=fallbacks
    )
