"""One error hierarchy for everything a user can get wrong.

The CLI prints a ScaffoldError as a single line (`location: message`, then an optional hint) and
exits with its `exit_code`; anything else escaping is a bug in scaffold-backend and keeps its
traceback.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SourceLocation:
    """Where an input came from: a display path (relative where possible) and a 1-based line."""

    path: str
    line: int | None = None

    def __str__(self) -> str:
        return self.path if self.line is None else f"{self.path}:{self.line}"


class ScaffoldError(Exception):
    """A problem with the user's input or environment, reported without a traceback."""

    exit_code = 2

    def __init__(
        self,
        message: str,
        *,
        location: SourceLocation | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.location = location
        self.hint = hint

    def __str__(self) -> str:
        text = self.message if self.location is None else f"{self.location}: {self.message}"
        text = one_line(text)
        return text if self.hint is None else f"{text}\n  hint: {one_line(self.hint)}"


def one_line(text: str) -> str:
    """`text` with its control characters escaped (`\\n`, `\\x1b`): a message quotes what the
    user wrote (a path, a YAML key), and must stay one line whatever that holds."""
    return "".join(repr(character)[1:-1] if _is_control(character) else character for character in text)


def _is_control(character: str) -> bool:
    return character < " " or "\x7f" <= character <= "\x9f" or character in "\u2028\u2029"


class DeclarationsError(ScaffoldError):
    """A RegistrationDeclarations.h that cannot be read or has a malformed entry."""


class BackendYamlError(ScaffoldError):
    """A backend YAML that is not valid YAML, has unknown keys, bad values or unknown ops."""


class InvalidNameError(ScaffoldError):
    """A device name, C++ namespace, class name or include that cannot be used (model/ident.py's rules),
    located wherever it was written: the backend YAML, or `init NAME`."""


class CoverageReportError(ScaffoldError):
    """A coverage report (`python -m torch_<name>.coverage --json`) that cannot be read, is not
    valid, or is not about this backend and torch."""


class ProjectConfigError(ScaffoldError):
    """Bad `[tool.scaffold-backend]` settings or command-line options."""


class OutputError(ScaffoldError):
    """The output tree cannot be written safely (hand-edited generated files, unwritable paths)."""


class ManifestError(OutputError):
    """The manifest cannot be read or is not valid; the generator validates it like any input."""


class LockError(OutputError):
    """Another scaffold-backend run holds the output directory's lock."""


class StaleOutputError(ScaffoldError):
    """`--check` found generated files that differ from what the generator produces now."""

    exit_code = 1


class MergeConflictError(ScaffoldError):
    """Regeneration could not merge a user-owned file cleanly; conflict markers were written."""

    exit_code = 1
