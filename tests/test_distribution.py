"""scaffold-backend as users get it: the wheel holds exactly the files the tool reads and makes the
same project as the checkout, the version is written once, a backend installed editable works like
one installed normally, and the workflows `init` writes use only what CI can run of them
(.ci/github_workflow.py; CI's wheel leg runs them)."""

from __future__ import annotations

import email.parser
import importlib.util
import subprocess
import sys
import zipfile
from pathlib import Path
from types import ModuleType

import pytest
import tomllib
import yaml
from packaging.requirements import Requirement
from scaffold_testing import REPO, run_cli_process, tree
from test_init import make_venv, run

from scaffold_backend import __version__
from scaffold_backend.emit.project import copied_runtime_files, project_files
from scaffold_backend.model.project import ProjectNames
from scaffold_backend.runtime_files import (
    REFERENCE_BACKEND_ONLY,
    RUNTIME_PACKAGE_DIR,
    copied_from_runtime,
    template_files,
)


def _workflow_runner() -> ModuleType:
    spec = importlib.util.spec_from_file_location("github_workflow", REPO / ".ci" / "github_workflow.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


WORKFLOWS = (".github/workflows/bar.yml", ".github/workflows/bar-torch-upgrade.yml")


def test_projects_get_the_runtime_but_not_the_reference_backends_own_files() -> None:
    package = REPO / "runtime" / RUNTIME_PACKAGE_DIR
    # The exclusions name files that exist (a renamed demo must not start being copied unnoticed).
    assert all((package / name).is_file() for name in REFERENCE_BACKEND_ONLY)
    copied = copied_from_runtime(REPO / "runtime")
    modules = {path.relative_to(package).as_posix() for path in package.rglob("*.py")}
    assert {name for name in copied if name.startswith(RUNTIME_PACKAGE_DIR)} == {
        f"{RUNTIME_PACKAGE_DIR}/{name}" for name in modules - set(REFERENCE_BACKEND_ONLY)
    }
    assert {"CMakeLists.txt", "cmake/torch-requirement.txt", "csrc/device/env.h", "driver/simulated.h"} <= set(copied)
    files = copied_runtime_files(ProjectNames("bar"))
    assert {"python/torch_bar/custom_classes.py", "python/torch_bar/conformance/worker.py"} <= set(files)
    assert not [name for name in files if "torch_foo" in name or name.startswith("kernels/")]


def test_the_version_is_written_once_and_projects_install_exactly_it() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "scaffold_backend.__version__"}
    runner = _workflow_runner()
    files = project_files(ProjectNames("bar"), "backend: PrivateUse1\n", "2.15.0")
    for workflow in WORKFLOWS:
        requirement = yaml.safe_load(files[workflow])["env"]["SCAFFOLD_BACKEND_REQUIREMENT"]
        assert runner.substitute(requirement, {"vars": {}}) == f"scaffold-backend=={__version__}"
        # A repository variable puts a wheel or a git URL in its place until a release exists.
        git = "scaffold-backend @ git+https://github.com/o/scaffold-backend@main"
        assert runner.substitute(requirement, {"vars": {"SCAFFOLD_BACKEND_REQUIREMENT": git}}) == git
        assert '"$SCAFFOLD_BACKEND_REQUIREMENT"' in files[workflow]


def test_the_workflows_use_only_what_ci_can_run_of_them() -> None:
    runner = _workflow_runner()
    files = project_files(ProjectNames("bar"), "backend: PrivateUse1\n", "2.15.0")
    context: dict[str, dict[str, object]] = {name: {} for name in ("matrix", "inputs", "vars", "github", "runner")}
    for workflow in WORKFLOWS:
        document = yaml.safe_load(files[workflow])
        # bash -eo pipefail: `diff ... | tee` fails when the diff does.
        assert document["defaults"] == {"run": {"shell": "bash"}}
        for expression in runner.expressions(document):
            runner.evaluate(expression, context)  # raises on what the runner does not understand
        for job in document["jobs"].values():
            for step in job["steps"]:
                assert "if" not in step
                assert "run" in step or step["uses"].split("@")[0] in ("actions/checkout", "actions/setup-python")


def test_the_workflow_runner_runs_steps_in_order_and_stops_at_the_first_failure(tmp_path: Path) -> None:
    workflow = tmp_path / "w.yml"
    workflow.write_text(
        "on: {workflow_dispatch: {inputs: {what: {required: true}}}}\n"
        "defaults: {run: {shell: bash}}\n"
        "env: {REQ: \"${{ vars.REQ || 'default' }}\"}\n"
        "jobs:\n  j:\n    strategy: {matrix: {include: [{torch: '1.*', python: '3.0'}, {torch: '2.*'}]}}\n"
        "    steps:\n"
        "      - uses: actions/checkout@v4\n"
        "      - run: echo \"$REQ ${{ matrix.torch }} ${{ inputs.what }}\" > out.txt\n"
        "      - run: false | cat\n"
        "      - run: echo never > never.txt\n"
    )
    runner = _workflow_runner()
    code = runner.run_job(workflow, "j", tmp_path, leg="torch=2.*", inputs={"what": "x"}, variables={})
    assert code == 1  # pipefail: the failing `false` fails its step
    assert (tmp_path / "out.txt").read_text() == "default 2.* x\n"
    assert not (tmp_path / "never.txt").exists()
    with pytest.raises(runner.WorkflowError, match="required input"):
        runner.run_job(workflow, "j", tmp_path, leg="torch=2.*")
    with pytest.raises(runner.WorkflowError, match="has 0 such legs"):
        runner.run_job(workflow, "j", tmp_path, leg="torch=3.*", inputs={"what": "x"})
    with pytest.raises(runner.WorkflowError, match="unsupported expression"):
        runner.evaluate("github.event_name == 'push'", {"github": {}})


def _build_wheel(tmp_path: Path) -> Path:
    """The sdist from a copy of the tree, then the wheel from the sdist, as pip builds it."""
    source, dist = tmp_path / "source", tmp_path / "dist"
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=REPO, capture_output=True, check=True).stdout
    for name in filter(None, listed.decode().split("\0")):
        if (REPO / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            (source / name).write_bytes((REPO / name).read_bytes())
    sdist = subprocess.run(
        [sys.executable, "-c", f"from setuptools import build_meta; print(build_meta.build_sdist({str(dist)!r}))"],
        cwd=source, capture_output=True, text=True,
    )
    assert sdist.returncode == 0, sdist.stderr[-3000:]
    wheel = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(dist),
         str(dist / sdist.stdout.split()[-1])],
        capture_output=True, text=True,
    )
    assert wheel.returncode == 0, wheel.stdout[-3000:] + wheel.stderr[-3000:]
    (built,) = dist.glob("scaffold_backend-*.whl")
    return built


@pytest.mark.slow
def test_the_wheel_holds_what_the_tool_reads_and_makes_the_same_project(tmp_path: Path) -> None:
    wheel = _build_wheel(tmp_path)
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        metadata = email.parser.Parser().parsestr(
            archive.read(f"scaffold_backend-{__version__}.dist-info/METADATA").decode()
        )

    def shipped(directory: str) -> set[str]:
        prefix = f"scaffold_backend/{directory}/"
        return {name.removeprefix(prefix) for name in names if name.startswith(prefix)}

    # Every file init copies and every template, and nothing else of runtime/ or templates/.
    assert shipped("runtime") == set(copied_from_runtime(REPO / "runtime"))
    assert shipped("templates") == set(template_files(REPO / "templates"))
    codegen = REPO / "codegen"  # every module of every package
    modules = {path.relative_to(codegen).as_posix() for path in codegen.rglob("*.py")}
    assert modules <= {name.removeprefix("scaffold_backend/") for name in names}
    assert metadata["Version"] == __version__
    # The tool never makes pip replace a user's torch: no bound on it (backends' builds check theirs).
    requires = metadata.get_all("Requires-Dist")
    assert requires is not None
    torch = [Requirement(line) for line in requires if Requirement(line).name == "torch"]
    assert [str(requirement.specifier) for requirement in torch] == [""]

    # Installed where no checkout is, the tool makes exactly the project the checkout makes.
    python = make_venv(tmp_path / "venv", hide=("__editable__", "scaffold_backend"))
    installed = run(f"{python} -m pip install --no-deps --no-index {wheel}", tmp_path, python)
    assert installed.returncode == 0, installed.stderr[-3000:]
    (tmp_path / "user").mkdir()
    located = run(f"{python} -c 'import scaffold_backend; print(scaffold_backend.__file__)'", tmp_path / "user", python)
    assert Path(located.stdout.strip()).is_relative_to(tmp_path / "venv"), located.stdout + located.stderr
    made = run("scaffold-backend init bar", tmp_path / "user", python)
    assert made.returncode == 0, made.stderr[-3000:]
    (tmp_path / "checkout").mkdir()
    reference = run_cli_process(["init", "bar"], tmp_path / "checkout")
    assert reference.returncode == 0, reference.stderr
    assert tree(tmp_path / "user" / "bar") == tree(tmp_path / "checkout" / "bar")


@pytest.mark.slow
def test_foo_installed_editable_registers_its_fake_classes(tmp_path: Path) -> None:
    """An editable install imports torch_foo from runtime/python while the build installs the
    compiled module and the fake classes into site-packages: tracing a TensorQueue must still
    find its fake class, as in a regular install."""
    python = make_venv(tmp_path / "venv")
    built = run(f"{python} -m pip install --no-build-isolation -e {REPO / 'runtime'}", tmp_path, python)
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-4000:]
    located = run(f"{python} -c 'import torch_foo; print(torch_foo.__file__)'", tmp_path, python)
    assert Path(located.stdout.strip()) == REPO / "runtime" / "python" / "torch_foo" / "__init__.py", located.stderr
    tested = run(f"{python} -m pytest -q -p no:cacheprovider tests/backend/test_foo_custom_classes.py "
                 "tests/backend/test_foo_custom_ops.py", REPO, python)
    assert tested.returncode == 0, tested.stdout[-6000:]
