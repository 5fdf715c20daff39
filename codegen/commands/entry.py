"""The `scaffold-backend` console script.

Most runs of `scaffold-backend generate` and `scaffold-backend generate --check` (pre-commit
hooks, CI jobs, builds that regenerate first) find the tree up to date. With no other argument,
that answer is given here, from the project's settings and the manifest (write/uptodate.py), before
click and the command-line module are imported: they are a fifth of such a run. Any other
command line, any doubt and any error go to the click CLI (cli.py), which decides and reports
as always; the answer printed here is the one it would print.
"""

from __future__ import annotations

import sys

ANSWERED_HERE = (["generate"], ["generate", "--check"])
"""The command lines answered without the CLI when the tree is up to date: those with options
(paths, --force, --dry-run, --debug) are parsed by click only, so that one parser decides
what an option means."""


def _answer_if_up_to_date() -> bool:
    """Print the up-to-date answer and return True; False when the CLI must run."""
    from pathlib import Path

    from ..errors import ScaffoldError
    from ..write.uptodate import answer_if_up_to_date
    from .project import resolve_generate_options

    try:
        options = resolve_generate_options(Path.cwd(), None, None, None, None, False)
        answer = answer_if_up_to_date(options)
    except (ScaffoldError, OSError):
        return False  # the CLI reports it, with its exit code and --debug
    if answer is None:
        return False
    lines, notes = answer
    sys.stdout.write("".join(f"{line}\n" for line in lines))
    sys.stdout.flush()
    sys.stderr.write("".join(f"{note}\n" for note in notes))
    return True


def main() -> None:
    if sys.argv[1:] in ANSWERED_HERE and _answer_if_up_to_date():
        sys.exit(0)
    from .cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
