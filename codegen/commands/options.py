"""The command line's own input: its option types, and its usage errors said as every other error.

Every error the user gets is one line, `error: <where>: <what>`, where `<where>` is what is wrong:
a path, an option, an argument, or a command. click's usage errors (an unknown option, a missing
value, a word not among an option's choices) are turned into that form here, so that a typo on
the command line reads like a mistake in a file. Only light modules are imported (see cli.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import click

from ..errors import one_line
from ..paths import path_problem


class RefusedValue(click.BadParameter):
    """An option's value refused before the command runs, located at what is wrong (`location`):
    the path given, or the option itself."""

    def __init__(self, location: str, message: str, param: click.Parameter | None, ctx: click.Context | None) -> None:
        super().__init__(message, ctx=ctx, param=param)
        self.location = location


class PathOption(click.ParamType[Path]):
    """A path given on the command line, checked before the command runs: not empty (click would
    read "" as `.`: `--out ""` would write into the working directory), nothing the operating
    system refuses for its length, and, where something is there already, of the kind the option
    takes. What is not there yet is left to the command, which says so with the path."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        """"file" or "directory"."""
        self.name = kind

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Path:
        if isinstance(value, Path):
            return value
        option = _parameter_name(param)
        if not value.strip():
            raise RefusedValue(option, "an empty path is not a path", param, ctx)
        problem = path_problem(value)
        if problem is not None:
            raise RefusedValue(value, f"{option} {problem}", param, ctx)
        path = Path(value)
        if self.kind == "file" and path.is_dir():
            raise RefusedValue(value, f"{option} takes a file; this is a directory", param, ctx)
        if self.kind == "directory" and path.exists() and not path.is_dir():
            raise RefusedValue(value, f"{option} takes a directory; this is a file", param, ctx)
        return path


FILE = PathOption("file")
DIRECTORY = PathOption("directory")


class Vocabulary(click.Choice[str]):
    """A click.Choice among the words a module of the generator defines (the op statuses, the diff
    report formats), read from it when an option of this type is first parsed or shown: the
    command line never imports torchgen just to be started."""

    def __init__(self, words: Callable[[], Iterable[str]]) -> None:
        # click.Choice keeps its words in `choices`; left unset here, so that __getattr__ fetches them.
        self._words = words
        self.case_sensitive = True

    def __getattr__(self, name: str) -> Any:
        if name != "choices":
            raise AttributeError(name)
        self.choices = tuple(self._words())
        return self.choices


def _parameter_name(param: click.Parameter | None) -> str:
    """How the user wrote the parameter: its longest option (`--out`), or an argument's name."""
    if isinstance(param, click.Option) and param.opts:
        return max(param.opts, key=len)
    return param.human_readable_name if param is not None else "the command line"


COMMANDS_HINT = "the commands are diff, generate, init and ops (see `scaffold-backend --help`)"


def no_command_lines() -> list[str]:
    """What a command line without a command gets (click's answer to it differs between its
    releases)."""
    return ["scaffold-backend: no command given", f"  hint: {COMMANDS_HINT}"]


def usage_error_lines(error: click.ClickException) -> list[str]:
    """`error` in the form of every other error: the line `<where>: <what>`, and maybe a hint."""
    command = "scaffold-backend"
    if isinstance(error, click.UsageError) and error.ctx is not None:
        command = error.ctx.command_path
    hint = None
    command_name = getattr(error, "command_name", None)  # click.exceptions.NoSuchCommand (click >= 8.4)
    if isinstance(error, RefusedValue):
        where, what = error.location, error.message
    elif isinstance(error, click.NoSuchOption):
        where, what = error.option_name, f"{command} has no such option"
        hint = f"did you mean {' or '.join(error.possibilities)}?" if error.possibilities else None
        hint = hint or f"see `{command} --help`"
    elif isinstance(command_name, str):
        where, what = command_name, "scaffold-backend has no such command"
        possibilities = getattr(error, "possibilities", None)
        hint = f"did you mean {' or '.join(possibilities)}?" if possibilities else COMMANDS_HINT
    elif isinstance(error, click.MissingParameter):
        where, what = _parameter_name(error.param), f"missing ({command} needs it)"
        hint = f"see `{command} --help`"
    elif isinstance(error, click.BadParameter):
        where, what = _parameter_name(error.param), error.message
    elif isinstance(error, click.BadOptionUsage):
        where = error.option_name
        what = "needs a value" if "requires an argument" in error.message else error.message
    else:
        where, what = command, error.format_message()
    return [one_line(f"{where}: {what}"), *([f"  hint: {one_line(hint)}"] if hint else [])]
