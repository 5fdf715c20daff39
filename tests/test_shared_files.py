"""A project's shared files follow the tool: `generate` brings each to this release's text, merging
the team's edits in (write/shared.py), and migrates projects of releases that kept no record.

A release that changed a file is stood in for by an older text of it: the project's copy and its
manifest record say the tool last wrote that text, as a project made by that release would."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from scaffold_testing import REPO, run_cli_process

from scaffold_backend.model.core_ops import CORE_OPS, RANDOM_OPS
from scaffold_backend.model.manifest import git_blob_id

MANIFEST = Path("generated/scaffold_manifest.json")
SHARED = "CMakeLists.txt"
"""The shared file these tests edit, as a team would: the build glue."""
TOOL_LINE = "set(CMAKE_CXX_EXTENSIONS OFF)\n"
"""A line of this release's text, which the stand-in older release did not have."""


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("made")
    process = run_cli_process(["init", "acme"], directory)
    assert process.returncode == 0, process.stderr
    return directory / "acme"


@pytest.fixture
def project(made: Path, tmp_path: Path) -> Path:
    shutil.copytree(made, tmp_path / "acme")
    return tmp_path / "acme"


def git(root: Path, *args: str) -> str:
    completed = subprocess.run(
        ["git", "-c", "user.name=team", "-c", "user.email=team@example.com", *args],
        cwd=root, capture_output=True, text=True, check=True,
    )
    return completed.stdout


def commit(root: Path, message: str) -> None:
    if not (root / ".git").exists():
        git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)


def manifest(root: Path) -> dict:  # type: ignore[type-arg]
    return json.loads((root / MANIFEST).read_text())  # type: ignore[no-any-return]


def write_manifest(root: Path, document: dict) -> None:  # type: ignore[type-arg]
    (root / MANIFEST).write_text(json.dumps(document, indent=2) + "\n")


def as_made_by_an_older_release(root: Path, relative: str, old_text: str, *, recorded: bool = True) -> None:
    """The project as a release whose text of `relative` was `old_text` made it: that file, and
    its record (none at all with `recorded=False`: a 0.1 project's manifest had no shared files)."""
    (root / relative).write_text(old_text)
    document = manifest(root)
    if recorded:
        document["shared_files"][f"../{relative}"] = {"blob": git_blob_id(old_text)}
    else:
        del document["shared_files"]
    write_manifest(root, document)


def generate(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli_process(["generate", *args], root)


def tool_text(made: Path) -> str:
    text = (made / SHARED).read_text()
    assert text.count(TOOL_LINE) == 1
    return text


def test_an_unedited_shared_file_takes_the_new_text(made: Path, project: Path) -> None:
    new = tool_text(made)
    as_made_by_an_older_release(project, SHARED, new.replace(TOOL_LINE, ""))
    assert generate(project, "--check").returncode == 1
    process = generate(project)
    assert process.returncode == 0, process.stderr
    assert f"  updated  {SHARED}" in process.stdout
    assert (project / SHARED).read_text() == new
    assert manifest(project)["shared_files"][f"../{SHARED}"] == {"blob": git_blob_id(new)}
    again = generate(project)
    kernels = len(CORE_OPS) + len(RANDOM_OPS)  # what init lists
    assert (again.returncode, again.stdout.splitlines()[-1]) == (0, f"{kernels} kernel(s), everything up to date")


def test_the_teams_edit_and_the_tools_change_are_merged(made: Path, project: Path) -> None:
    new = tool_text(made)
    old = new.replace(TOOL_LINE, "")
    as_made_by_an_older_release(project, SHARED, old)
    commit(project, "scaffold-backend init acme")
    team_line = "# Our build: the vendor SDK's include path comes first.\n"
    (project / SHARED).write_text(team_line + old)
    commit(project, "Our build notes")

    process = generate(project)
    assert process.returncode == 0, process.stderr
    assert f"   merged  {SHARED}" in process.stdout
    assert (project / SHARED).read_text() == team_line + new
    # The tool's text is the next merge's base; the team's edit is not taken for the tool's.
    assert manifest(project)["shared_files"][f"../{SHARED}"] == {"blob": git_blob_id(new), "base": new}
    again = generate(project)
    assert again.returncode == 0 and "everything up to date" in again.stdout
    assert (project / SHARED).read_text() == team_line + new


def test_an_edit_that_collides_stops_with_conflict_markers_until_resolved(made: Path, project: Path) -> None:
    new = tool_text(made)
    old = new.replace(TOOL_LINE, "set(CMAKE_CXX_EXTENSIONS ON)\n")
    as_made_by_an_older_release(project, SHARED, old)
    commit(project, "scaffold-backend init acme")
    ours = old.replace("set(CMAKE_CXX_EXTENSIONS ON)\n", "set(CMAKE_CXX_EXTENSIONS ON) # GNU extensions: our SDK\n")
    (project / SHARED).write_text(ours)
    commit(project, "Our SDK needs GNU extensions")

    process = generate(project)
    assert process.returncode == 1
    assert f" conflict  {SHARED}" in process.stdout
    assert f"error: file(s) with unresolved merge conflicts: {SHARED}" in process.stderr
    assert "Traceback" not in process.stderr
    text = (project / SHARED).read_text()
    assert "<<<<<<< yours\nset(CMAKE_CXX_EXTENSIONS ON) # GNU extensions: our SDK\n=======\n" in text
    assert f"{TOOL_LINE}>>>>>>> scaffold-backend\n" in text
    assert generate(project).returncode == 1  # until the team resolves it
    (project / SHARED).write_text(ours)  # resolved: the team keeps its line
    resolved = generate(project)
    assert resolved.returncode == 0, resolved.stderr
    assert (project / SHARED).read_text() == ours


def test_a_project_of_a_release_that_kept_no_record_is_migrated(made: Path, project: Path) -> None:
    """scaffold-backend 0.1 recorded no shared files: the base is the file as first committed."""
    new = tool_text(made)
    old = new.replace(TOOL_LINE, "")
    as_made_by_an_older_release(project, SHARED, old, recorded=False)
    edited_runtime = project / "csrc" / "device" / "env.h"
    commit(project, "scaffold-backend init acme")
    team_line = "# Our build notes.\n"
    (project / SHARED).write_text(team_line + old)
    edited_runtime.write_text(edited_runtime.read_text() + "// Ours: a note on the environment.\n")
    commit(project, "Our edits")

    process = generate(project)
    assert process.returncode == 0, process.stderr
    assert (project / SHARED).read_text() == team_line + new
    assert edited_runtime.read_text().endswith("// Ours: a note on the environment.\n")
    records = manifest(project)["shared_files"]
    assert records.keys() == manifest(made)["shared_files"].keys()
    assert records["../csrc/device/env.h"]["base"] == (made / "csrc" / "device" / "env.h").read_text()


def test_with_no_base_in_git_an_edited_file_is_named_not_guessed(made: Path, project: Path) -> None:
    new = tool_text(made)
    old = new.replace(TOOL_LINE, "")
    as_made_by_an_older_release(project, SHARED, old)
    (project / SHARED).write_text("# edited\n" + old)  # no git: the old text is nowhere

    process = generate(project)
    assert process.returncode == 1
    assert f"note: {SHARED} differs from scaffold-backend's text and git has no copy" in process.stderr
    text = (project / SHARED).read_text()
    assert "# edited\n" in text and TOOL_LINE in text and "<<<<<<< yours\n" in text


def test_a_shared_file_the_team_deleted_stays_deleted(project: Path) -> None:
    (project / "tests" / "test_driver.py").unlink()
    process = generate(project)
    assert process.returncode == 0, process.stderr
    assert "note: tests/test_driver.py, a file scaffold-backend keeps current, was deleted" in process.stderr
    assert not (project / "tests" / "test_driver.py").exists()


@pytest.mark.parametrize("edited", [False, True])
def test_a_file_the_tool_no_longer_ships(project: Path, edited: bool) -> None:
    gone = project / "csrc" / "device" / "retired.h"
    text = "#pragma once\n"
    gone.write_text(text + ("// ours\n" if edited else ""))
    document = manifest(project)
    document["shared_files"]["../csrc/device/retired.h"] = {"blob": git_blob_id(text)}
    write_manifest(project, document)

    process = generate(project)
    assert process.returncode == 0, process.stderr
    assert gone.exists() is edited
    if edited:
        assert "note: csrc/device/retired.h is no longer a file scaffold-backend keeps current" in process.stderr
    else:
        assert "  deleted  csrc/device/retired.h" in process.stdout
    assert "../csrc/device/retired.h" not in manifest(project)["shared_files"]


def test_the_teams_own_files_are_never_touched(made: Path, project: Path) -> None:
    new = tool_text(made)
    as_made_by_an_older_release(project, SHARED, new.replace(TOOL_LINE, ""))
    readme = project / "README.md"
    readme.write_text("# Our backend\n")
    (project / "csrc" / "device" / "ours.cpp").write_text("// our own component\n")
    process = generate(project)
    assert process.returncode == 0, process.stderr
    assert readme.read_text() == "# Our backend\n"
    assert (project / "csrc" / "device" / "ours.cpp").read_text() == "// our own component\n"


RELEASE_0_1 = "6ea7b30"
"""This repository's main when scaffold-backend 0.1.0 was its version: the tool that made every
project before shared files were kept current."""


@pytest.mark.slow
def test_a_project_made_by_0_1_follows_this_release_with_one_generate(made: Path, tmp_path: Path) -> None:
    """0.1.0 makes a project (on this torch: its range widened to take it); the team commits it,
    then edits a kernel, a runtime file and the package's pyproject.toml. One `generate` of this
    release brings every shared file to this release's text, each edit kept in place."""
    old = tmp_path / "scaffold-backend-0.1"
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", "--format=tar", RELEASE_0_1, "codegen", "templates", "runtime"],
        capture_output=True, check=False,
    )
    if archive.returncode != 0:
        pytest.skip(f"no git history of {RELEASE_0_1} here: {archive.stderr.decode().strip()}")
    old.mkdir()
    subprocess.run(["tar", "-x", "-C", str(old)], input=archive.stdout, check=True)
    requirement = old / "runtime" / "cmake" / "torch-requirement.txt"
    requirement.write_text(requirement.read_text().replace("<2.15", "<2.99"))
    (old / "path").mkdir()
    (old / "path" / "scaffold_backend").symlink_to(old / "codegen")
    environment = dict(os.environ, PYTHONPATH=str(old / "path"))
    command = [sys.executable, "-m", "scaffold_backend.commands.entry"]
    version = subprocess.run([*command, "--version"], capture_output=True, text=True, env=environment, check=True)
    assert version.stdout.strip().endswith("0.1.0"), version.stdout
    made_by_old = subprocess.run([*command, "init", "acme"], cwd=tmp_path, capture_output=True, text=True,
                                 env=environment, check=False)
    assert made_by_old.returncode == 0, made_by_old.stderr
    project = tmp_path / "acme"
    assert "shared_files" not in manifest(project)
    commit(project, "scaffold-backend init acme")
    edits = {
        "kernels/as_strided.cpp": ("  return scaffold::runtime::as_strided(", "  // Ours: views stay on the device.\n"),
        "csrc/memory/allocator.cpp": ("", "// Ours: our SDK's allocator goes here.\n"),
        "pyproject.toml": ("[project.optional-dependencies]", "# Ours: the SDK's wheel comes from our index.\n"),
    }
    for relative, (before, line) in edits.items():
        path = project / relative
        text = path.read_text()
        at = text.index(before)
        path.write_text(text[:at] + line + text[at:])
    commit(project, "Our edits")

    process = generate(project)
    assert process.returncode == 0, process.stderr
    records = manifest(project)["shared_files"]
    assert records.keys() == manifest(made)["shared_files"].keys()
    for key in records:
        relative = key.removeprefix("../")
        expected = (made / relative).read_text()
        if relative in edits:
            before, line = edits[relative]
            at = expected.index(before)
            expected = expected[:at] + line + expected[at:]
        assert (project / relative).read_text() == expected, relative
    kernel = (project / "kernels" / "as_strided.cpp").read_text()
    assert "  // Ours: views stay on the device.\n  return scaffold::runtime::as_strided(" in kernel


def test_a_device_renamed_in_the_yaml_keeps_the_projects_shared_files(made: Path, project: Path) -> None:
    """The YAML may rename the device (the generated code follows it); the package, and so the
    shared files, stay what `init` made: nothing of torch_acme is deleted or renamed."""
    config = project / "yaml" / "acme.yaml"
    config.write_text(config.read_text().replace("\ndevice: acme\n", "\ndevice: qux\n").replace(
        "torch.classes.acme.", "torch.classes.qux."))
    process = generate(project)
    assert process.returncode == 0, process.stderr
    changed = [line.split() for line in process.stdout.splitlines()]
    assert not [words for words in changed if words[0] in ("created", "updated", "merged", "deleted")
                and not words[-1].startswith(("generated/", "kernels/"))]
    assert (project / "python" / "torch_acme" / "_device.py").is_file()
    assert not (project / "python" / "torch_qux").exists()
    assert manifest(project)["shared_files"].keys() == manifest(made)["shared_files"].keys()
