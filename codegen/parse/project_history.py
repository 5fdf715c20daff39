"""The merge bases of a project's shared files, from the project's git history.

A shared file's record names the tool's last text by its git blob id (model/manifest.py). While
the file is unedited it is its own base; once the team edits it, the text the tool wrote is the
version git holds from the commit that took it. A project made before the tool kept records
(scaffold-backend 0.1) has none: there the base is the file as it was first committed, which is
what `init` wrote (teams commit the new project before changing it).

Only `git` itself is asked (no library), read-only, with a bound on time; any failure (no git, not
a repository, a shallow clone without the commit) means "no base": the caller then names the file
as a conflict rather than guess.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

_TIMEOUT_SECONDS = 30


def _git(root: Path, *arguments: str) -> bytes | None:
    git = shutil.which("git")
    if git is None:
        return None
    try:
        completed = subprocess.run(
            [git, "-C", str(root), *arguments],
            capture_output=True,
            timeout=_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return completed.stdout if completed.returncode == 0 else None


def _text(data: bytes | None) -> str | None:
    if data is None:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def blob_text(root: Path, blob: str) -> str | None:
    """The text git stores under `blob` in the repository holding `root`; None if it has none."""
    return _text(_git(root, "cat-file", "blob", blob))


def first_committed_text(root: Path, relative: str) -> str | None:
    """The file `relative` (to `root`) as the first commit of the current branch that had it
    holds it; None when git has no such commit."""
    listed = _git(root, "log", "--format=%H", "--diff-filter=A", "--", relative)
    if not listed:
        return None
    first = listed.decode().split()[-1]
    return _text(_git(root, "show", f"{first}:./{relative}"))
