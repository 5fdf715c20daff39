"""The fallback file: the backend-wide boxed CPU fallback with the YAML's policy, typed per-op
fallback wrappers for `fallback.explicit`, and the counters users read from Python."""

from __future__ import annotations

from ..model.backend import FallbackDefault, FallbackMode
from ..model.outputs import OutputFile, Owner, fallback_file_name
from .common import generated_banner
from .context import EmitContext
from .render import render


def emit_fallback(context: EmitContext) -> list[OutputFile]:
    config = context.config
    policy = config.fallback
    never = sorted(f"aten::{entry.op_name}" for entry in policy.never)
    explicit = list(context.explicit_fallbacks)
    return [
        OutputFile(
            path=context.layout.in_out(fallback_file_name(config.backend)),
            content=render(
                "codegen/Fallback.cpp.j2",
                banner=generated_banner(context.selection),
                device=config.device,
                yaml_path=config.display_path,
                dispatch_key=config.backend,
                default_policy=policy.default.value,
                mode=policy.mode.value,
                host_view=policy.mode is FallbackMode.HOST_VIEW,
                fall_back_to_cpu="true" if policy.default is FallbackDefault.CPU else "false",
                warn_once="true" if policy.warn_once else "false",
                warn_once_text="yes" if policy.warn_once else "no",
                never=never,
                never_count=len(never),
                explicit=explicit,
                explicit_count=len(explicit),
                ops_includes=sorted({wrapper.ops_header for wrapper in explicit}),
            ),
            owner=Owner.GENERATOR,
        )
    ]
