"""The `scaffold-backend` command line. Commands parse options and call library functions; the
logic lives in the modules they call."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from . import __version__
from .diff import backend_impact, diff_declarations
from .diff_report import RENDERERS
from .errors import DeclarationsError, MergeConflictError, ProjectConfigError, ScaffoldError, StaleOutputError
from .generate import GenerateOptions, GenerateResult, load_selection, prepare, run
from .init_project import InitOptions, init_project
from .inputs import display_path, load_backend_config, load_declarations_argument
from .merge import MergeOutcome
from .project import ProjectSettings, find_project_settings
from .report import ops_rows, ops_table
from .selection import OpStatus
from .writer import Action

F = TypeVar("F", bound=Callable[..., Any])

EXIT_OK, EXIT_DRIFT, EXIT_BAD_INPUT = 0, 1, 2


def reports_errors(command: F) -> F:
    """Print a ScaffoldError as one clear message and exit with its code (no traceback unless
    --debug)."""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except ScaffoldError as error:
            if click.get_current_context().find_root().params.get("debug"):
                raise
            click.echo(f"error: {error}", err=True)
            sys.exit(error.exit_code)

    return wrapper  # type: ignore[return-value]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="scaffold-backend")
@click.option("--debug", is_flag=True, help="Show tracebacks for input errors too.")
def cli(debug: bool) -> None:
    """Generate and maintain an out-of-tree PyTorch device backend.

    Reads torch's RegistrationDeclarations.h and a backend YAML, and writes kernel declarations,
    registrations, the CPU fallback and kernel stubs. Exit codes: 0 success, 1 drift or merge
    conflicts, 2 bad input.
    """


def _path_option(name: str, help_text: str, *, exists: bool = False) -> Callable[[F], F]:
    return click.option(
        name,
        type=click.Path(path_type=Path, dir_okay=not exists, exists=False),
        default=None,
        help=help_text,
    )


yaml_option = _path_option("--yaml", "Backend YAML (default: [tool.scaffold-backend] yaml).")
declarations_option = _path_option(
    "--declarations",
    "RegistrationDeclarations.h to read (default: the installed torch's).",
)


def _settings() -> ProjectSettings | None:
    return find_project_settings(Path.cwd())


def _resolve_options(
    yaml: Path | None,
    out: Path | None,
    kernels: Path | None,
    declarations: Path | None,
    force: bool,
) -> GenerateOptions:
    """Command-line paths (relative to the working directory) win over project settings
    (relative to the pyproject.toml that holds them)."""
    settings = _settings()
    cwd = Path.cwd()
    yaml_path = cwd / yaml if yaml else settings.yaml if settings else None
    out_dir = cwd / out if out else settings.out if settings else None
    if yaml_path is None or out_dir is None:
        missing = " and ".join(
            name for name, value in (("--yaml", yaml_path), ("--out", out_dir)) if value is None
        )
        raise ProjectConfigError(
            f"no {missing} given, and no pyproject.toml with [tool.scaffold-backend] settings "
            "was found here or above",
            hint="pass --yaml FILE --out DIR, or run inside a project made by `scaffold-backend init`",
        )
    if kernels:
        kernels_dir = cwd / kernels
    elif settings and settings.kernels and out is None:
        kernels_dir = settings.kernels
    else:
        kernels_dir = out_dir.parent / "kernels"
    if declarations:
        declarations_path: Path | None = cwd / declarations
    else:
        declarations_path = settings.declarations if settings else None
    return GenerateOptions(
        yaml_path=yaml_path,
        out_dir=out_dir,
        kernels_dir=kernels_dir,
        declarations_path=declarations_path,
        # Inputs are named relative to the project: the pyproject.toml's directory, else the
        # output directory's parent. Never the working directory, or running the same command
        # from elsewhere would rewrite every file.
        root=settings.root if settings else out_dir.resolve().parent,
        force=force,
    )


@cli.command()
@yaml_option
@declarations_option
@click.option(
    "--status",
    "statuses",
    type=click.Choice([status.value for status in OpStatus]),
    multiple=True,
    help="Only ops with this status (repeatable).",
)
@click.option("--all", "show_all", is_flag=True, help="Include composite ops (default: only ops a backend registers or falls back for).")
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
@reports_errors
def ops(
    yaml: Path | None,
    declarations: Path | None,
    statuses: tuple[str, ...],
    show_all: bool,
    as_json: bool,
) -> None:
    """List every operator and what the backend does with it."""
    settings = _settings()
    cwd = Path.cwd()
    yaml_path = cwd / yaml if yaml else settings.yaml if settings else None
    if declarations:
        declarations_path: Path | None = cwd / declarations
    else:
        declarations_path = settings.declarations if settings else None
    selection = load_selection(yaml_path, declarations_path, settings.root if settings else cwd)
    wanted = {OpStatus(status) for status in statuses}
    if not wanted:
        wanted = set(OpStatus) if show_all else set(OpStatus) - {OpStatus.COMPOSITE}
    rows = ops_rows(selection, wanted)
    if as_json:
        click.echo(json.dumps(rows, indent=2))
    else:
        click.echo(ops_table(selection, rows), nl=False)


@cli.command()
@yaml_option
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), default=None, help="Output directory for generated files (default: [tool.scaffold-backend] out).")
@click.option("--kernels", type=click.Path(path_type=Path, file_okay=False), default=None, help="Directory of the user-owned kernel files (default: [tool.scaffold-backend] kernels, else <out>/../kernels).")
@declarations_option
@click.option("--check", is_flag=True, help="Write nothing; exit 1 listing the files that are stale.")
@click.option("--dry-run", is_flag=True, help="Write nothing; list what would change.")
@click.option("--force", is_flag=True, help="Overwrite generated files even if they were edited by hand.")
@reports_errors
def generate(
    yaml: Path | None,
    out: Path | None,
    kernels: Path | None,
    declarations: Path | None,
    check: bool,
    dry_run: bool,
    force: bool,
) -> None:
    """Generate the backend's C++ sources from the declarations and the backend YAML."""
    options = _resolve_options(yaml, out, kernels, declarations, force)
    if check or dry_run:
        result = prepare(options)
        _print_changes(result, options.root, planned=True)
        conflicts = result.conflicts()
        if check and conflicts:
            raise MergeConflictError(
                "unresolved merge conflicts in "
                + ", ".join(display_path(path, options.root) for path in conflicts),
                hint="resolve the <<<<<<< / >>>>>>> regions in these kernel files",
            )
        if check and result.plan:
            raise StaleOutputError(
                f"{len(result.plan.changes)} file(s) are stale against "
                f"{result.selection.declarations.description} and {result.selection.config.display_path}",
                hint="run `scaffold-backend generate` and commit the result",
            )
        return
    _print_changes(run(options), options.root, planned=False)


@cli.command("diff")
@click.argument("old")
@click.argument("new")
@yaml_option
@click.option(
    "--format",
    "output_format",
    type=click.Choice(sorted(RENDERERS)),
    default="text",
    show_default=True,
    help="markdown is short enough for a PR description; json is stable for tools.",
)
@reports_errors
def diff_command(old: str, new: str, yaml: Path | None, output_format: str) -> None:
    """Compare two RegistrationDeclarations.h: what a PyTorch upgrade changes.

    OLD and NEW are header files, torch installations (directories), or `installed` for the
    current torch. With a backend YAML (--yaml, or the project's), the report also says which of
    the backend's ops and kernel files are affected and what to do.
    """
    settings = _settings()
    cwd = Path.cwd()
    root = settings.root if settings else cwd
    sides = []
    for label, argument in (("OLD", old), ("NEW", new)):
        try:
            sides.append(load_declarations_argument(argument, cwd, root))
        except DeclarationsError as error:
            raise DeclarationsError(
                f"{label} is not a readable RegistrationDeclarations.h: {error.message}",
                location=error.location,
                hint="diff compares two RegistrationDeclarations.h files, torch installations, "
                "or `installed` (the current torch)",
            ) from None
    declarations_diff = diff_declarations(sides[0], sides[1])
    yaml_path = cwd / yaml if yaml else settings.yaml if settings else None
    impacts = None
    backend = None
    if yaml_path is not None:
        config = load_backend_config(yaml_path, root)
        kernels = settings.kernels if settings and settings.kernels else None
        kernels_name = display_path(kernels, root) if kernels else "kernels"
        impacts = backend_impact(declarations_diff, config, kernels_name)
        backend = config.display_path
    click.echo(RENDERERS[output_format](declarations_diff, impacts, backend), nl=False)


@cli.command()
@click.argument("name")
@click.option("--dir", "directory", type=click.Path(path_type=Path, file_okay=False), default=None, help="Where to create the project (default: ./NAME).")
@click.option("--ops", multiple=True, help="Ops to implement besides the core set (repeatable; kernel stubs are created).")
@click.option("--from-yaml", type=click.Path(path_type=Path, dir_okay=False), default=None, help="Start from this backend YAML (its device and namespace become NAME).")
@click.option("--force", is_flag=True, help="Add the files to a non-empty directory; existing files are never overwritten or deleted.")
@click.option("--dry-run", is_flag=True, help="List the files it would create; create nothing.")
@reports_errors
def init(
    name: str,
    directory: Path | None,
    ops: tuple[str, ...],
    from_yaml: Path | None,
    force: bool,
    dry_run: bool,
) -> None:
    """Create a new backend project NAME: device `NAME`, package `torch_NAME`.

    The project builds, imports and passes its own tests before you write a line: the core
    factory/copy/view kernels forward to the bundled device runtime and every other op runs on
    the CPU through the generated fallback until you implement it.
    """
    cwd = Path.cwd()
    target = cwd / directory if directory else cwd / name
    result = init_project(
        InitOptions(
            name=name,
            target=target,
            ops=ops,
            from_yaml=cwd / from_yaml if from_yaml else None,
            force=force,
            dry_run=dry_run,
        )
    )
    shown = display_path(result.target, cwd)
    verb = "would create" if dry_run else "created"
    for relative in result.created:
        click.echo(f"{verb:>12}  {shown}/{relative}")
    for relative in result.kept:
        click.echo(f"{'kept':>12}  {shown}/{relative} (exists; left as it is)")
    if not dry_run:
        click.echo(f"\nNext: cd {shown} && {result.setup_command}")


def _print_changes(result: GenerateResult, root: Path, *, planned: bool) -> None:
    verbs = {
        Action.CREATE: "create" if planned else "created",
        Action.UPDATE: "update" if planned else "updated",
        Action.DELETE: "delete" if planned else "deleted",
        Action.MERGE: "merge" if planned else "merged",
        Action.CONFLICT: "conflict",
    }
    for change in result.plan.changes:
        click.echo(f"{verbs[change.action]:>9}  {display_path(change.path, root)}")
    for path, merge in sorted(result.merges.items()):
        shown = display_path(path, root)
        if merge.outcome is MergeOutcome.UNTRACKED:
            click.echo(f"warning: {shown} is not in the manifest; left as it is", err=True)
        if merge.removed_ops:
            click.echo(
                f"note: {shown} still defines kernels for {', '.join(merge.removed_ops)}, which are "
                "no longer generated; they are kept (delete them when you no longer need them)",
                err=True,
            )
    for relative in result.orphaned:
        shown = display_path(result.layout.out_dir / relative, root)
        click.echo(
            f"note: {shown} is excluded from the build: its ops are no longer generated. "
            "It is kept until you delete it.",
            err=True,
        )
    kernels = len(result.selection.kernels)
    summary = f"{kernels} kernel(s), {len(result.plan.changes)} file(s) {'to change' if planned else 'changed'}"
    click.echo(summary if result.plan else f"{kernels} kernel(s), everything up to date")


def main() -> None:
    cli(prog_name="scaffold-backend")


if __name__ == "__main__":
    main()
