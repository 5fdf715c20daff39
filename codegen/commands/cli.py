"""The `scaffold-backend` command line. Commands parse options, call library functions and print
what those return; the logic lives in the modules they call.

Only light modules are imported here: the generator proper (torchgen, Jinja, the declarations
parser) is imported by the commands that need it, so that `generate` on an up-to-date tree
answers in a few hundredths of a second (see write/uptodate.py).
"""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from .. import __version__
from ..errors import ScaffoldError, one_line
from ..write.uptodate import answer_if_up_to_date
from ..write.uptodate_memory import record_current
from .options import DIRECTORY, FILE, Vocabulary, no_command_lines, usage_error_lines
from .project import resolve_generate_options, resolve_inputs

F = TypeVar("F", bound=Callable[..., Any])


def _op_statuses() -> list[str]:
    from ..model.selection import OpStatus

    return [status.value for status in OpStatus]


def _drivers() -> list[str]:
    from ..model.project import DRIVER_DIRECTORIES

    return list(DRIVER_DIRECTORIES)


def _report_formats() -> list[str]:
    from .diff_report import RENDERERS

    return sorted(RENDERERS)


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


def _echo(lines: list[str], notes: list[str] | None = None) -> None:
    for line in lines:
        click.echo(line)
    for note in notes or []:
        click.echo(note, err=True)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="scaffold-backend")
@click.option("--debug", is_flag=True, help="Show tracebacks for input errors too.")
def cli(debug: bool) -> None:
    """Generate and maintain an out-of-tree PyTorch device backend.

    Reads torch's RegistrationDeclarations.h and a backend YAML, and writes kernel declarations,
    registrations, the CPU fallback and kernel stubs. Exit codes: 0 success, 1 drift or merge
    conflicts, 2 bad input.
    """


yaml_option = click.option(
    "--yaml", type=FILE, default=None, help="Backend YAML (default: [tool.scaffold-backend] yaml)."
)
declarations_option = click.option(
    "--declarations",
    type=FILE,
    default=None,
    help="RegistrationDeclarations.h to read (default: the installed torch's).",
)


@cli.command()
@yaml_option
@declarations_option
@click.option(
    "--status",
    "statuses",
    type=Vocabulary(_op_statuses),
    multiple=True,
    help="Only ops with this status (repeatable).",
)
@click.option(
    "--all", "show_all", is_flag=True,
    help="Include composite ops (default: only ops a backend registers or falls back for).",
)
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
    from .generate import load_selection
    from .ops import ops_rows, ops_table, wanted_statuses

    inputs = resolve_inputs(Path.cwd(), yaml, declarations)
    selection = load_selection(inputs.yaml, inputs.declarations, inputs.root)
    rows = ops_rows(selection, wanted_statuses(statuses, show_all=show_all))
    if as_json:
        click.echo(json.dumps(rows, indent=2))
    else:
        click.echo(ops_table(selection, rows), nl=False)


@cli.command()
@yaml_option
@click.option(
    "--out", type=DIRECTORY, default=None,
    help="Output directory for generated files (default: [tool.scaffold-backend] out).",
)
@click.option(
    "--kernels", type=DIRECTORY, default=None,
    help="Directory of the user-owned kernel files "
    "(default: [tool.scaffold-backend] kernels, else <out>/../kernels).",
)
@declarations_option
@click.option("--check", "check_only", is_flag=True, help="Write nothing; exit 1 listing the stale files.")
@click.option("--dry-run", is_flag=True, help="Write nothing; list what would change.")
@click.option("--force", is_flag=True, help="Overwrite generated files even if edited by hand.")
@reports_errors
def generate(
    yaml: Path | None,
    out: Path | None,
    kernels: Path | None,
    declarations: Path | None,
    check_only: bool,
    dry_run: bool,
    force: bool,
) -> None:
    """Generate the backend's C++ sources from the declarations and the backend YAML."""
    options = resolve_generate_options(Path.cwd(), yaml, out, kernels, declarations, force)
    answer = answer_if_up_to_date(options)
    if answer is not None:
        _echo(*answer)
        return

    from .generate import generate_report, plan_only, require_current, require_no_conflicts, run

    planned = check_only or dry_run
    result = plan_only(options, check=check_only) if planned else run(options)
    _echo(*generate_report(result, options.root, planned=planned))
    if check_only:
        require_current(result)
    else:
        require_no_conflicts(result)
    if not result.conflicts() and (not planned or not result.plan):
        record_current(options)


@cli.command()
@click.argument("report", type=FILE)
@click.option("--top", type=click.IntRange(min=1), default=None, metavar="N",
              help="The N ops with the most CPU-fallback time that the YAML does not list yet.")
@click.option("--op", "op_names", multiple=True, metavar="NAME",
              help="An op of the report, e.g. aten::max_pool2d_with_indices (repeatable).")
@yaml_option
@click.option(
    "--out", type=DIRECTORY, default=None, help="Output directory (default: [tool.scaffold-backend] out)."
)
@click.option("--kernels", type=DIRECTORY, default=None, help="Kernel directory (default: as for generate).")
@declarations_option
@click.option("--dry-run", is_flag=True, help="Write nothing; list what would change.")
@reports_errors
def adopt(
    report: Path,
    top: int | None,
    op_names: tuple[str, ...],
    yaml: Path | None,
    out: Path | None,
    kernels: Path | None,
    declarations: Path | None,
    dry_run: bool,
) -> None:
    """Add the ops a coverage report ranks first to the backend YAML, with kernel stubs and tests.

    REPORT is the JSON of `python -m torch_<name>.coverage --json REPORT SCRIPT`. Each op joins
    `supported` with its functional, in-place and out= variants; the YAML keeps every comment and
    line; generation runs as `generate` does; tests/adopted/test_<op>.py compares the kernel with
    the CPU on the recorded inputs (an expected failure while the kernel is a stub). All of it is
    one transaction: an error writes nothing.
    """
    from ..errors import ProjectConfigError
    from .adopt import AdoptRequest, adopt_report
    from .adopt import adopt as adopt_ops
    from .generate import require_no_conflicts

    if (top is None) == (not op_names):
        raise ProjectConfigError("give either --top N or one or more --op NAME", hint="e.g. --top 3")
    cwd = Path.cwd()
    options = resolve_generate_options(cwd, yaml, out, kernels, declarations, force=False)
    result = adopt_ops(options, AdoptRequest(cwd / report, top, op_names, dry_run), cwd)
    _echo(adopt_report(result, options.root, planned=dry_run))
    require_no_conflicts(result.generated)
    if not dry_run:
        record_current(options)


@cli.command("diff")
@click.argument("old")
@click.argument("new")
@yaml_option
@click.option(
    "--format",
    "output_format",
    type=Vocabulary(_report_formats),
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
    from ..parse.inputs import load_backend_config, load_declarations_argument
    from .diff import backend_impact, diff_declarations
    from .diff_report import RENDERERS

    cwd = Path.cwd()
    inputs = resolve_inputs(cwd, yaml, None)
    declarations_diff = diff_declarations(
        load_declarations_argument("OLD", old, cwd, inputs.root),
        load_declarations_argument("NEW", new, cwd, inputs.root),
    )
    impacts = backend = None
    if inputs.yaml is not None:
        config = load_backend_config(inputs.yaml, inputs.root)
        impacts = backend_impact(declarations_diff, config, inputs.kernels_dir_name)
        backend = config.display_path
    click.echo(RENDERERS[output_format](declarations_diff, impacts, backend), nl=False)


@cli.command()
@click.argument("name")
@click.option("--dir", "directory", type=DIRECTORY, default=None, help="Where (default: ./NAME).")
@click.option(
    "--ops", multiple=True,
    help="Ops to implement besides the core set (repeatable; kernel stubs are created).",
)
@click.option(
    "--from-yaml", type=FILE, default=None,
    help="Start from this backend YAML (its device and namespace become NAME).",
)
@click.option(
    "--force", is_flag=True,
    help="Add the files to a non-empty directory (existing files are never overwritten or deleted); "
    "take a NAME another backend package uses for its device.",
)
@click.option(
    "--driver", type=Vocabulary(_drivers), default="simulated", show_default=True,
    help="The driver the project builds with: the simulated device, or OpenCL (any vendor's device "
    "through the ICD loader; the ops its device kernels cover forward to them).",
)
@click.option("--dry-run", is_flag=True, help="List the files it would create; create nothing.")
@reports_errors
def init(
    name: str,
    directory: Path | None,
    ops: tuple[str, ...],
    from_yaml: Path | None,
    force: bool,
    driver: str,
    dry_run: bool,
) -> None:
    """Create a new backend project NAME: device `NAME`, package `torch_NAME`.

    The project builds, imports and passes its own tests before you write a line: the core
    factory/copy/view kernels forward to the bundled device runtime and every other op runs on
    the CPU through the generated fallback until you implement it.
    """
    from .init.project import InitOptions, init_project, init_report

    cwd = Path.cwd()
    options = InitOptions(
        name=name,
        target=cwd / directory if directory else cwd / name,
        ops=ops,
        from_yaml=cwd / from_yaml if from_yaml else None,
        force=force,
        dry_run=dry_run,
        driver=driver,
    )
    _echo(init_report(init_project(options), cwd, dry_run=dry_run))


def _print_error(lines: list[str]) -> None:
    """An error's line, `error: ` first, then its hints."""
    click.echo(f"error: {lines[0]}", err=True)
    for line in lines[1:]:
        click.echo(line, err=True)


def main() -> None:
    """The console script: click's usage errors become one line like every other error (see
    options.py), and so does a path the operating system refuses (ENAMETOOLONG, ENOTDIR, ...)
    wherever a command meets it first."""
    debug = "--debug" in sys.argv[1:2]
    if not [argument for argument in sys.argv[1:] if argument != "--debug"]:
        _print_error(no_command_lines())
        sys.exit(2)
    try:
        code = cli.main(prog_name="scaffold-backend", standalone_mode=False)
    except click.ClickException as error:
        _print_error(usage_error_lines(error))
        sys.exit(error.exit_code)
    except click.Abort:
        click.echo("error: aborted", err=True)
        sys.exit(1)
    except OSError as error:
        if debug:
            raise
        where = error.filename if error.filename is not None else "scaffold-backend"
        click.echo(one_line(f"error: {os.fsdecode(where)}: {error.strerror or error}"), err=True)
        sys.exit(2)
    sys.exit(code if isinstance(code, int) else 0)


if __name__ == "__main__":
    main()
