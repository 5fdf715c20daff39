"""Where `generate` may read, write and delete: inside the output and kernel directories (and, in a
backend project, its root, for the shared files), nowhere else, whatever the inputs (the manifest
and the transaction journal included) say.

Every path is checked twice: lexically (`..` and absolute paths) and after resolving symlinks, so
a symlinked `out/native` pointing elsewhere is refused rather than followed.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from ..errors import OutputError, ProjectConfigError, SourceLocation
from ..model.manifest import Manifest
from ..model.outputs import Layout
from ..parse.installed_torch import find_installed_torch
from ..paths import RealPaths, is_inside, real_path


def _inside(path: Path, directory: Path) -> bool:
    return path == directory or directory in path.parents


def _lexical(path: Path) -> Path:
    return Path(os.path.normpath(os.path.abspath(path)))


def is_confined(path: Path, directory: Path) -> bool:
    """`path` lies inside `directory`, both by name and after following every symlink."""
    return _inside(_lexical(path), _lexical(directory)) and _inside(
        real_path(path), real_path(directory)
    )


def _lexical_and_real(path: Path) -> tuple[str, str]:
    return os.path.normpath(os.path.abspath(path)), os.path.realpath(path)


class Confinement:
    """`check_confined` for the many files of one run (a full generation checks ~1400), each
    file's directory resolved once (see RealPaths): make one instance per batch of checks.

    Besides the output and kernel directories, a backend project's root (its shared files), and
    a layout that knows the backend YAML lets `adopt` write that file and the tests of adopted
    ops (Layout.adopted_tests_dir), never delete them."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        shared = () if layout.project_root is None else (layout.project_root,)
        self._roots = [_lexical_and_real(root) for root in (layout.out_dir, layout.kernels_dir, *shared)]
        self._written_only_roots = [] if layout.yaml_path is None else [_lexical_and_real(layout.adopted_tests_dir)]
        self._written_only_files = [] if layout.yaml_path is None else [_lexical_and_real(layout.yaml_path)]
        self._real_paths = RealPaths()

    def _inside_any(self, path: Path, roots: list[tuple[str, str]]) -> bool:
        lexical = os.path.normpath(os.path.abspath(path))
        real: str | None = None
        for lexical_root, real_root in roots:
            if not is_inside(lexical, lexical_root):
                continue
            real = real if real is not None else self._real_paths.real(path)
            if is_inside(real, real_root):
                return True
        return False

    def is_allowed(self, path: Path, *, deleting: bool = False) -> bool:
        if self._inside_any(path, self._roots):
            return True
        if deleting:
            return False
        if self._inside_any(path, self._written_only_roots):
            return True
        return _lexical_and_real(path) in self._written_only_files

    def check(self, path: Path, what: str, *, deleting: bool = False) -> None:
        """Refuse to touch `path` unless it is inside the output or the kernel directory (or, to
        write, is the YAML or an adopted test: see the class docstring)."""
        if not self.is_allowed(path, deleting=deleting):
            raise _outside_error(path, self.layout, what)


def check_confined(path: Path, layout: Layout, what: str) -> None:
    """Refuse to touch `path` unless it is inside the output or the kernel directory."""
    Confinement(layout).check(path, what)


def _outside_error(path: Path, layout: Layout, what: str) -> OutputError:
    return OutputError(
        f"{what} lies outside the output and kernel directories (a `..`, an absolute path "
        "or a symlink leading out); refusing to touch it",
        # Named as the tree names it, not where its symlink leads.
        location=SourceLocation(
            Path(os.path.relpath(os.path.abspath(path), os.path.abspath(layout.root))).as_posix()
        ),
        hint="remove the symlink, or choose --out/--kernels directories that contain it",
    )


def check_manifest_paths(manifest: Manifest, layout: Layout, shown: str) -> None:
    """Generated files must lie in the output directory, kernel files in the kernel directory."""

    def refuse(relative: str, where: str, directory: str) -> OutputError:
        return OutputError(
            f"the manifest is not valid: {where} entry {relative!r} is not inside the {directory}",
            location=SourceLocation(shown),
            hint="a manifest names only files scaffold-backend wrote; restore it from version "
            "control, or delete it",
        )

    for relative in manifest.files:
        if not is_confined(layout.out_dir / relative, layout.out_dir):
            raise refuse(relative, '"files"', "output directory")
    for relative in (*manifest.kernel_files, *manifest.orphaned_kernel_files, *manifest.custom_class_files):
        if not is_confined(layout.out_dir / relative, layout.kernels_dir):
            raise refuse(relative, '"kernel_files"', "kernel directory")
    for relative in manifest.shared_files:
        if layout.project_root is None or not is_confined(layout.out_dir / relative, layout.project_root):
            raise refuse(relative, '"shared_files"', "backend project")


def check_output_directories(layout: Layout) -> None:
    """Refuse output or kernel directories no backend project can mean: a filesystem root, a path
    below a regular file, or a place inside the torch installation."""
    torch_dir = real_path(find_installed_torch().package_dir)
    for directory, option in ((layout.out_dir, "--out"), (layout.kernels_dir, "--kernels")):
        resolved = real_path(directory)
        shown = _as_given(directory)
        if resolved.parent == resolved:
            raise ProjectConfigError(
                f"{option} is the filesystem root", location=SourceLocation(shown),
                hint="generate into a directory of your project, e.g. --out generated",
            )
        if _inside(resolved, torch_dir) or _inside(torch_dir, resolved):
            raise ProjectConfigError(
                f"{option} is inside (or contains) the torch installation {torch_dir}",
                location=SourceLocation(shown),
                hint="generate into a directory of your project, e.g. --out generated",
            )
        for ancestor in _existing_ancestors(resolved):
            if not ancestor.is_dir():
                raise ProjectConfigError(
                    f"{option} cannot be created: {_as_given(ancestor)} is a "
                    "file, not a directory",
                    location=SourceLocation(shown),
                )


def _as_given(directory: Path) -> str:
    """An option's directory as the user knows it: relative to the working directory when
    inside it, else absolute."""
    absolute = Path(os.path.abspath(directory))
    try:
        return absolute.relative_to(Path.cwd()).as_posix()
    except ValueError:
        return absolute.as_posix()


def _existing_ancestors(path: Path) -> Iterable[Path]:
    for candidate in (path, *path.parents):
        if os.path.lexists(candidate):
            yield candidate
            return
