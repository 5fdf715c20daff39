"""`generate`: from the inputs to a plan of file changes, and from the plan to the disk.

Everything is computed before anything is written: a bad input, an unknown op or a file that
must not be overwritten stops the run with nothing half-written.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..api.schema_cache import SchemaCache
from ..emit.autocast import emit_autocast_registration
from ..emit.cmake import emit_sources_cmake
from ..emit.context import EmitContext, build_context
from ..emit.custom_classes import custom_class_scaffolds, emit_custom_class_registration
from ..emit.custom_ops import emit_custom_op_files, emit_custom_op_stubs
from ..emit.declarations import emit_declarations
from ..emit.device_name import emit_device_name
from ..emit.fallback import emit_fallback
from ..emit.kernel_file import KernelFile
from ..emit.manifest import build_manifest, emit_manifest
from ..emit.project import shared_files
from ..emit.registration import emit_autograd_registration, emit_registration_shards
from ..emit.stubs import emit_stubs
from ..errors import MergeConflictError, SourceLocation, StaleOutputError
from ..model.backend import BackendConfig
from ..model.declarations import DeclarationsFile
from ..model.manifest import Manifest
from ..model.outputs import MANIFEST_NAME, GenerateOptions, Layout, OutputFile
from ..model.project import ProjectNames
from ..model.selection import Selection
from ..parse.backend_yaml import default_backend_config
from ..parse.inputs import load_backend_config, load_declarations
from ..parse.installed_torch import find_installed_torch
from ..parse.manifest import parse_manifest, read_manifest_text
from ..parse.torch_support import torch_support
from ..paths import display_path, display_paths
from ..select.selection import select
from ..write import safety, transaction
from ..write.lock import output_lock
from ..write.merge import MergeOutcome, MergeResult
from ..write.plan import Action, Plan, check_unique_paths, plan_outputs
from ..write.shared import SharedPlan, plan_shared_files
from ..write.uptodate import orphan_note, up_to_date_line
from .project import project_names


@dataclass(frozen=True)
class GenerateResult:
    context: EmitContext
    """The selection, layout and C++ bindings the outputs were emitted from."""
    kernel_files: tuple[KernelFile, ...]
    """The kernel files as the generator emits them (before any merge with the user's)."""
    plan: Plan
    merges: dict[Path, MergeResult]
    """Kernel files that needed more than creation, and what happened to them."""
    orphaned: tuple[str, ...]
    """Kernel files (relative to the output directory) whose ops are no longer generated."""
    manifest: Manifest
    """The manifest the run writes."""
    kept_parameter_names: dict[Path, tuple[str, ...]] = field(default_factory=dict)
    """Kernel files whose definition lines keep the user's parameter names for these ops, because
    the declarations changed since the last run and PyTorch renamed their parameters only."""
    edited: tuple[Path, ...] = ()
    """Under --check: generated files edited by hand (or not written by scaffold-backend)."""
    class_scaffolds: tuple[OutputFile, ...] = ()
    """The custom classes' user files as the generator scaffolds them (created only when missing)."""
    shared: SharedPlan | None = None
    """In a backend project: how its shared files are brought to this tool's text."""

    @property
    def selection(self) -> Selection:
        return self.context.selection

    @property
    def layout(self) -> Layout:
        return self.context.layout

    def conflicts(self) -> list[Path]:
        kernels = [path for path, result in self.merges.items() if result.outcome is MergeOutcome.CONFLICT]
        return sorted([*kernels, *(self.shared.conflicts if self.shared is not None else ())])


def load_selection(yaml_path: Path | None, declarations_path: Path | None, root: Path) -> Selection:
    """Read both inputs and select. Without a backend YAML every required op falls back."""
    return _select(load_declarations(declarations_path, root), yaml_path, root)


def load_selection_cached(
    yaml_path: Path | None, declarations_path: Path | None, root: Path, config: BackendConfig | None = None
) -> tuple[Selection, SchemaCache]:
    """`load_selection`, with the header's schema cache primed before any schema is parsed.
    `config`: the backend YAML as parsed already (adopt's edited one), instead of reading it."""
    declarations = load_declarations(declarations_path, root)
    cache = SchemaCache.open(declarations)
    cache.prime(declarations)
    return _select(declarations, yaml_path, root, config), cache


def _select(
    declarations: DeclarationsFile, yaml_path: Path | None, root: Path, config: BackendConfig | None = None
) -> Selection:
    if config is None:
        config = load_backend_config(yaml_path, root) if yaml_path else default_backend_config()
    return select(config, declarations)


def read_manifest(layout: Layout) -> Manifest | None:
    """The last run's manifest, validated as an input: its shape, and every path it names
    confined to the output and kernel directories."""
    path = layout.in_out(MANIFEST_NAME)
    shown = display_path(path, layout.root)
    if not path.exists() and not path.is_symlink():
        return None
    safety.check_confined(path, layout, "the manifest")
    manifest = parse_manifest(read_manifest_text(path, shown), shown)
    safety.check_manifest_paths(manifest, layout, shown)
    return manifest


def generated_files(context: EmitContext) -> list[OutputFile]:
    return [
        *emit_declarations(context),
        *emit_registration_shards(context),
        *emit_autograd_registration(context),
        *emit_autocast_registration(context),
        *emit_fallback(context),
        *emit_custom_class_registration(context),
        *emit_custom_op_files(context),
        *emit_device_name(context),
    ]


def prepare(options: GenerateOptions, *, check: bool = False, config: BackendConfig | None = None) -> GenerateResult:
    """Compute every change `generate` would make, writing nothing. With `check` (the CI gate),
    a generated file edited by hand is drift to report, not a reason to stop. `config`: the
    backend YAML to generate from, when it is not the file's text (adopt's edit, not yet
    written)."""
    torch_support().check(find_installed_torch().version)
    selection, schema_cache = load_selection_cached(
        options.yaml_path, options.declarations_path, options.root, config
    )
    layout = options.layout
    safety.check_output_directories(layout)
    context = build_context(selection, layout, schema_cache.signatures)
    schema_cache.save(selection.declarations)
    previous = read_manifest(layout)

    generated = generated_files(context)
    upgraded = previous is not None and previous.declarations.sha256 != selection.declarations.sha256
    kernel_files = []
    kept_names: dict[Path, tuple[str, ...]] = {}
    for emitted in [*emit_stubs(context), *emit_custom_op_stubs(context)]:
        kernel, kept = _keeping_user_parameter_names(emitted, previous, layout)
        kernel_files.append(kernel)
        if kept and upgraded:
            kept_names[kernel.output.path] = kept
    scaffolds = custom_class_scaffolds(context)
    orphaned = _orphaned_kernel_files(kernel_files, previous, layout)
    compiled = [k.output for k in kernel_files] + [output for output in scaffolds if output.path.suffix == ".cpp"]
    generated.append(emit_sources_cmake(context, generated, compiled, orphaned))
    shared = None
    if layout.project_root is not None:
        names = project_names(layout.project_root) or ProjectNames(selection.config.device)
        files = shared_files(names, selection.config.driver)
        shared = plan_shared_files(files, previous, layout, layout.project_root)
    manifest = build_manifest(
        context, generated, kernel_files, orphaned, scaffolds, shared.records if shared is not None else {}
    )
    generated.append(emit_manifest(context, manifest))

    outputs = [*(kernel.output for kernel in kernel_files), *scaffolds, *generated]
    check_unique_paths(outputs)
    confinement = safety.Confinement(layout)
    for output in outputs:
        confinement.check(output.path, "an output file")
    planned = plan_outputs(
        outputs, {kernel.output.path: kernel for kernel in kernel_files}, previous, layout, force=options.force or check
    )
    shared_changes = shared.changes if shared is not None else ()
    for change in shared_changes:
        confinement.check(change.path, "a shared file", deleting=change.action is Action.DELETE)
    return GenerateResult(
        context=context,
        kernel_files=tuple(kernel_files),
        plan=Plan(shared_changes + planned.plan.changes),
        merges=planned.merges,
        orphaned=tuple(orphaned),
        manifest=manifest,
        kept_parameter_names=kept_names,
        edited=planned.edited if check else (),
        class_scaffolds=tuple(scaffolds),
        shared=shared,
    )


def _keeping_user_parameter_names(
    kernel: KernelFile, previous: Manifest | None, layout: Layout
) -> tuple[KernelFile, tuple[str, ...]]:
    """Where PyTorch renamed a kernel's parameters but kept their types, the file keeps the
    definition line it has: the body uses those names, and C++ matches a definition to its
    declaration by types alone. Only a change of types rewrites a definition line."""
    record = previous.kernel_files.get(layout.from_out(kernel.output.path)) if previous else None
    if record is None or not kernel.output.path.exists():
        return kernel, ()
    kept = {
        op: record.heads[op]
        for op, signature in kernel.type_signatures.items()
        if op in record.heads
        and record.heads[op] != kernel.heads[op]
        and record.type_signatures.get(op) == signature
    }
    return kernel.keeping_heads(kept), tuple(sorted(kept))


def _orphaned_kernel_files(
    kernel_files: list[KernelFile], previous: Manifest | None, layout: Layout
) -> list[str]:
    """Kernel files recorded before whose ops are all gone now, still on disk."""
    if previous is None:
        return []
    current = {layout.from_out(kernel.output.path) for kernel in kernel_files}
    candidates = set(previous.kernel_files) | set(previous.orphaned_kernel_files)
    return sorted(
        relative
        for relative in candidates - current
        if (layout.out_dir / relative).exists()
    )


def run(options: GenerateOptions) -> GenerateResult:
    """Generate and write, as one transaction under the output directory's lock: a transaction
    an interrupted run left is completed first, its temporary files removed. Merge conflicts are
    written (with markers) like any other change; callers then fail with
    `require_no_conflicts`."""
    layout = options.layout
    with output_lock(layout):
        transaction.recover(layout)
        result = prepare(options)
        previous = read_manifest(layout)
        known = [change.path for change in result.plan.changes]
        known += [kernel.output.path for kernel in result.kernel_files]
        if previous is not None:
            known += [layout.out_dir / relative for relative in (*previous.files, *previous.kernel_files)]
        transaction.remove_stale_temporaries(known, layout)
        transaction.commit(result.plan, layout)
    return result


def plan_only(options: GenerateOptions, *, check: bool = False) -> GenerateResult:
    """What `run` would do, writing nothing (--check, --dry-run); under the lock, so it never
    sees a tree another run is halfway through. `check`: see `prepare`."""
    layout = options.layout
    with output_lock(layout, create=False):
        if transaction.has_interrupted_transaction(layout):
            raise StaleOutputError(
                "an interrupted `scaffold-backend generate` left its write unfinished",
                location=SourceLocation(display_path(transaction.journal_path(layout), layout.root)),
                hint="run `scaffold-backend generate`: it completes the write first",
            )
        return prepare(options, check=check)


def require_no_conflicts(result: GenerateResult) -> None:
    conflicts = result.conflicts()
    if conflicts:
        names = ", ".join(display_path(path, result.layout.root) for path in conflicts)
        raise MergeConflictError(
            f"file(s) with unresolved merge conflicts: {names}",
            hint="resolve the <<<<<<< / >>>>>>> regions, then run `scaffold-backend generate` again",
        )


def require_current(result: GenerateResult) -> None:
    """The CI gate on a prepared (unwritten) result: unresolved conflicts or stale files fail."""
    require_no_conflicts(result)
    if result.plan:
        edited = ""
        if result.edited:
            names = ", ".join(display_path(path, result.layout.root) for path in result.edited)
            edited = f"; edited by hand: {names}"
        raise StaleOutputError(
            f"{len(result.plan.changes)} file(s) are stale against "
            f"{result.selection.declarations.description} and {result.selection.config.display_path}"
            + edited,
            hint="run `scaffold-backend generate` and commit the result"
            + (" (--force discards the hand edits; move them into kernel files first)" if result.edited else ""),
        )


def generate_report(result: GenerateResult, root: Path, *, planned: bool) -> tuple[list[str], list[str]]:
    """What `generate` prints: one line per file change (stdout), then notes about kernel files
    the user has to look at (stderr)."""
    verbs = {
        Action.CREATE: "create" if planned else "created",
        Action.UPDATE: "update" if planned else "updated",
        Action.DELETE: "delete" if planned else "deleted",
        Action.MERGE: "merge" if planned else "merged",
        Action.CONFLICT: "conflict",
    }
    changes = result.plan.changes
    lines = [
        f"{verbs[change.action]:>9}  {shown}"
        for change, shown in zip(changes, display_paths([change.path for change in changes], root), strict=True)
    ]
    notes = []
    for path, merge in sorted(result.merges.items()):
        shown = display_path(path, root)
        if merge.outcome is MergeOutcome.UNTRACKED:
            notes.append(f"warning: {shown} is not in the manifest; left as it is")
        if merge.removed_ops:
            notes.append(
                f"note: {shown} still defines kernels for {', '.join(merge.removed_ops)}, which are "
                "no longer generated; they are kept (delete them when you no longer need them)"
            )
    for path, ops in sorted(result.kept_parameter_names.items()):
        notes.append(
            f"note: {display_path(path, root)} keeps your parameter names for {', '.join(ops)}: "
            "PyTorch renamed parameters but kept their types, so your definition lines still match"
        )
    for relative in result.orphaned:
        shown = display_path(result.layout.out_dir / relative, root)
        notes.append(orphan_note(shown))
    if result.shared is not None:
        notes += result.shared.notes
    kernels = result.manifest.kernel_count
    if result.plan:
        lines.append(f"{kernels} kernel(s), {len(result.plan.changes)} file(s) {'to change' if planned else 'changed'}")
    else:
        lines.append(up_to_date_line(kernels))
    return lines, notes
