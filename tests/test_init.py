"""`scaffold-backend init`: new projects, their shape, bad input, and the reference backend."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import site
import subprocess
import sys
import venv
from pathlib import Path

import pytest
import yaml
from scaffold_testing import INSTALLED_TORCH, REPO, run_cli_process, tree

from scaffold_backend.commands.init.examples import render_example_files
from scaffold_backend.commands.init.names import check_device_name
from scaffold_backend.commands.init.project import (
    ProjectLayout,
    ProjectNames,
    adapt_backend_yaml,
    project_files,
    render_package_files,
)
from scaffold_backend.errors import InvalidNameError
from scaffold_backend.model.core_ops import CORE_OPS, RANDOM_OPS
from scaffold_backend.model.driver_ops import DRIVER_KERNELS
from scaffold_backend.model.ident import DEVICE_PACKAGES, RESERVED_DEVICE_NAMES

# This repository's reference backend: its package root is runtime/, generated/ sits one level up,
# and the repository's own pyproject.toml holds the generator settings.
REFERENCE_BACKEND_LAYOUT = ProjectLayout(generated_dir="../generated", kernels_dir="kernels", yaml_path=None)


def init(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli_process(["init", *args], tmp_path)


@pytest.mark.parametrize(
    ("name", "message"),
    [
        (
            "Foo",
            "error: NAME: device name 'Foo' is not a lowercase identifier (a-z, 0-9 and _, not starting with a digit)",
        ),
        (
            "2fast",
            "error: NAME: device name '2fast' is not a lowercase identifier "
            "(a-z, 0-9 and _, not starting with a digit)",
        ),
        (
            "my-npu",
            "error: NAME: device name 'my-npu' is not a lowercase identifier "
            "(a-z, 0-9 and _, not starting with a digit)",
        ),
        ("template", "error: NAME: device name 'template' is a C++ keyword"),
        ("import", "error: NAME: device name 'import' is a Python keyword"),
        ("cuda", "error: NAME: device name 'cuda' is a device name PyTorch already uses"),
        ("meta", "error: NAME: device name 'meta' is a device name PyTorch already uses"),
        ("xla", "error: NAME: device name 'xla' is a device name PyTorch already uses"),
        ("nn", "error: NAME: device name 'nn' is already used by PyTorch (torch.nn exists)"),
        ("leaf", "error: NAME: device name 'leaf' is already used by PyTorch (torch.Tensor.is_leaf exists)"),
        (
            "eval",
            "error: NAME: device name 'eval' is already used by PyTorch (torch.nn.modules.module.Module.eval exists)",
        ),
    ],
)
def test_invalid_names(tmp_path: Path, name: str, message: str) -> None:
    result = init(tmp_path, name)
    assert result.returncode == 2
    assert result.stderr.splitlines()[0] == message
    assert "Traceback" not in result.stderr
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("name", sorted(DEVICE_PACKAGES))
def test_the_device_of_another_backend_package_is_refused_unless_forced(name: str) -> None:
    """`init npu` would make torch_npu, the name of Ascend's backend: refused with one line that
    names the package and suggests a name that is free; --force takes the name. PyTorch's own
    device names (xla, hpu, ...) stay refused with --force too: PyTorch cannot rename
    PrivateUse1 to them."""
    with pytest.raises(InvalidNameError) as refused:
        check_device_name(name)
    assert refused.value.hint is None or name in RESERVED_DEVICE_NAMES  # one line: the suggestion is in it
    if name in RESERVED_DEVICE_NAMES:
        with pytest.raises(InvalidNameError):
            check_device_name(name, force=True)
        return
    message = str(refused.value)
    assert message.startswith(f"NAME: device name '{name}' is taken by {DEVICE_PACKAGES[name]}")
    assert "\n" not in message and f"such as 'my_{name}'" in message and "--force" in message
    check_device_name(f"my_{name}")  # the suggestion is free
    check_device_name(name, force=True)


def test_init_refuses_a_known_backend_package_name_and_writes_nothing(tmp_path: Path) -> None:
    result = init(tmp_path, "npu")
    assert (result.returncode, result.stdout) == (2, "")
    assert result.stderr == (
        "error: NAME: device name 'npu' is taken by torch_npu (Huawei Ascend): a project of that name would "
        "clash with it once both are installed; choose another name, such as 'my_npu', or pass --force to use "
        "it anyway\n"
    )
    assert os.listdir(tmp_path) == []
    forced = init(tmp_path, "npu", "--force", "--dry-run")
    assert forced.returncode == 0, forced.stderr
    assert "would create  npu/python/torch_npu/__init__.py" in forced.stdout


def test_init_refuses_the_name_of_an_installed_torch_package(tmp_path: Path) -> None:
    """A package torch_NAME installed here (any backend, listed or not) takes NAME too; one in
    the working directory is the user's own project and does not."""
    installed = tmp_path / "site" / "torch_zzzdev"
    installed.mkdir(parents=True)
    (installed / "__init__.py").write_text("")
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    command = [sys.executable, "-m", "scaffold_backend.commands.entry", "init", "zzzdev", "--dry-run"]
    refused = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, check=False)
    assert refused.returncode == 2
    assert refused.stderr.startswith(
        f"error: NAME: device name 'zzzdev' is taken by torch_zzzdev, installed at {installed}: "
    )
    assert "such as 'my_zzzdev'" in refused.stderr and len(refused.stderr.splitlines()) == 1
    own = subprocess.run(command, cwd=tmp_path / "site", env=env, capture_output=True, text=True, check=False)
    assert own.returncode == 0, own.stderr


def test_existing_non_empty_directory_and_force(tmp_path: Path) -> None:
    target = tmp_path / "bar"
    target.mkdir()
    (target / "README.md").write_text("my notes\n")
    result = init(tmp_path, "bar")
    assert result.returncode == 2
    assert result.stderr == (
        f"error: {target}: exists and is not empty\n"
        "  hint: choose another --dir, or pass --force to add the project's files to it (existing files are "
        "never overwritten or deleted)\n"
    )
    assert os.listdir(target) == ["README.md"]
    forced = init(tmp_path, "bar", "--force")
    assert forced.returncode == 0, forced.stderr
    assert "        kept  bar/README.md (exists; left as it is)" in forced.stdout
    assert (target / "README.md").read_text() == "my notes\n"
    assert (target / "kernels" / "empty.cpp").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["bar"]  # no staging directory left behind


@pytest.mark.parametrize(
    ("directory", "message"),
    [
        ("/proc/sys/newbackend", "error: /proc/sys/newbackend: cannot create files here: /proc/sys is not writable"),
        ("/sys/newbackend", "error: /sys/newbackend: cannot create the project here: Operation not permitted"),
    ],
)
def test_unwritable_target(tmp_path: Path, directory: str, message: str) -> None:
    result = init(tmp_path, "bar", "--dir", directory)
    assert result.returncode == 2
    assert result.stderr.strip() == message


def test_target_that_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "bar").write_text("")
    result = init(tmp_path, "bar")
    assert (
        result.returncode == 2 and result.stderr.strip() == f"error: {tmp_path / 'bar'}: exists and is not a directory"
    )


def test_unknown_op_and_bad_from_yaml(tmp_path: Path) -> None:
    result = init(tmp_path, "bar", "--ops", "ad.Tensor")
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "error: --ops: unknown operator 'ad.Tensor': torch/include/ATen/RegistrationDeclarations.h "
        f"(torch {INSTALLED_TORCH}) has no such operator",
        "  hint: did you mean 'add.Tensor', 'add_.Tensor', 'div.Tensor'?",
    ]
    (tmp_path / "mine.yaml").write_text("backend: PrivateUse1\ncpp_namespace: mine\nsuported: [abs.out]\n")
    result = init(tmp_path, "bar", "--from-yaml", "mine.yaml")
    assert result.returncode == 2
    assert result.stderr.splitlines()[0] == "error: mine.yaml:3: unknown key 'suported' in the backend YAML"
    (tmp_path / "ops.yaml").write_text("backend: PrivateUse1\ncpp_namespace: mine\nsupported: [no_such_op]\n")
    result = init(tmp_path, "bar", "--from-yaml", "ops.yaml")
    assert result.returncode == 2
    assert result.stderr.splitlines()[0] == (
        "error: ops.yaml:3: unknown operator 'no_such_op' under 'supported': "
        f"torch/include/ATen/RegistrationDeclarations.h (torch {INSTALLED_TORCH}) has no such operator"
    )
    assert sorted(os.listdir(tmp_path)) == ["mine.yaml", "ops.yaml"]


def test_torch_import_chatter_never_reaches_the_user(tmp_path: Path) -> None:
    """Without NumPy, `import torch` warns on stderr; init imports torch to check names, and its
    error must still be exactly the tool's own line and hint."""
    python = make_venv(tmp_path / "venv", hide=("numpy",))
    result = run(f"{python} -m scaffold_backend.commands.cli init nn", tmp_path, python)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        "error: NAME: device name 'nn' is already used by PyTorch (torch.nn exists)",
        "  hint: pick a name PyTorch does not use, such as 'my_npu'",
    ]


def test_dry_run_creates_nothing(tmp_path: Path) -> None:
    result = init(tmp_path, "bar", "--dry-run")
    assert result.returncode == 0, result.stderr
    listed = [line.split()[-1] for line in result.stdout.splitlines()]
    assert "bar/pyproject.toml" in listed and "bar/generated/scaffold_manifest.json" in listed
    assert all(line.strip().startswith("would create") for line in result.stdout.splitlines())
    assert os.listdir(tmp_path) == []


def test_new_project_shape(tmp_path: Path) -> None:
    result = init(tmp_path, "bar", "--ops", "abs.out", "--ops", "view")
    assert result.returncode == 0, result.stderr
    project = tmp_path / "bar"
    files = tree(project)
    # The runtime is copied verbatim from this repository: one source of truth.
    for directory in ("csrc", "driver"):  # the PyTorch side and the driver seam under it
        for name, content in tree(REPO / "runtime" / directory).items():
            if name.endswith((".h", ".cpp")):
                assert files[f"{directory}/{name}"] == content
    assert "driver/scaffold_driver.h" in files
    # The porting guide the driver header points at, and the tests of each of its bring-up steps.
    assert files["PORTING.md"] == (REPO / "runtime" / "PORTING.md").read_bytes()
    assert b"PORTING.md" in files["driver/scaffold_driver.h"] and b"(PORTING.md)" in files["README.md"]
    for step in ("Devices", "Memory", "Copies", "Streams", "Events", "Launch", "Kernels"):
        assert f"class Test{step}:".encode() in files["tests/test_driver.py"]
        assert f"-k Test{step}".encode() in files["PORTING.md"]
    assert files["CMakeLists.txt"] == (REPO / "runtime" / "CMakeLists.txt").read_bytes()
    for module in ("_device.py", "_streams.py", "_memory.py", "distributed.py", "_inductor.py"):
        assert files[f"python/torch_bar/{module}"] == (REPO / "runtime" / "python" / "torch_foo" / module).read_bytes()
    # The model harness: the same package as foo's, and the extra its libraries come from.
    models = REPO / "runtime" / "python" / "torch_foo" / "models"
    for path in sorted(models.glob("*.py")):
        assert files[f"python/torch_bar/models/{path.name}"] == path.read_bytes(), path.name
    assert b'vision = ["torchvision>=0.' in files["pyproject.toml"]
    assert b'models = ["transformers' in files["pyproject.toml"]
    assert b"python -m torch_bar.models" in files["README.md"]
    assert b"distributed.register(DEVICE_NAME)" in files["python/torch_bar/__init__.py"]
    assert b"## Multi-process training (torch.distributed)" in files["README.md"]
    assert b'torch.bar.memory._dump_snapshot("snapshot.pickle")' in files["README.md"]  # profiling and memory
    # The backend YAML: core ops plus --ops (view is a core op already), device and namespace.
    config = yaml.safe_load(files["yaml/bar.yaml"])
    assert config["device"] == "bar" and config["cpp_namespace"] == "bar"
    assert config["supported"] == [*CORE_OPS, *RANDOM_OPS, "abs.out"]
    # Core and random kernels forward to the runtime, which declares each as the generator does;
    # the extra op is a stub that raises.
    assert (
        b"return scaffold::runtime::empty(size, dtype, layout, device, pin_memory, memory_format);"
        in files["kernels/empty.cpp"]
    )
    assert b"return scaffold::runtime::native_dropout(input, p, train);" in files["kernels/native_dropout.cpp"]
    runtime_declared = _declarations(files["csrc/ops/core_ops.h"].decode() + files["csrc/ops/random_ops.h"].decode())
    assert _forwarded_declarations(files, "scaffold::runtime::", runtime_declared) == len(CORE_OPS) + len(RANDOM_OPS)
    assert b'TORCH_CHECK_NOT_IMPLEMENTED(false, "bar: aten::abs.out has no kernel yet' in files["kernels/abs.cpp"]
    # The example custom op: declared in the YAML, its files filled in (not stubs), documented.
    assert config["custom_ops"][0] == {"schema": "mymuladd(Tensor a, Tensor b, float c) -> Tensor", "autograd": True}
    assert (
        b"at::Tensor mymuladd_bar(const at::Tensor & a, const at::Tensor & b, double c) {"
        in files["kernels/custom_ops/mymuladd.cpp"]
    )
    assert b"TORCH_CHECK_NOT_IMPLEMENTED" not in files["kernels/custom_ops/mymuladd.cpp"]
    assert b"return grad_a, grad_b, None" in files["kernels/custom_ops/mymuladd.py"]
    assert b"TORCH_LIBRARY(bar, m)" in files["generated/CustomOpDefinitions.cpp"]
    assert b"## Custom ops" in files["README.md"] and b"def test_custom_op_opcheck" in files["tests/test_bar.py"]
    # The example custom class and the op that takes it: declared, filled in, tested.
    assert list(config["custom_classes"]) == ["TensorQueue"]
    class_op = "for_each_add_(__torch__.torch.classes.bar.TensorQueue tq, Tensor inc) -> ()"
    assert config["custom_ops"][1:] == [{"schema": class_op}]
    for name in ("custom_classes/tensor_queue.h", "custom_classes/tensor_queue.cpp", "custom_classes/tensor_queue.py",
                 "custom_ops/for_each_add_.cpp", "custom_ops/for_each_add_.py"):
        assert b"NotImplemented" not in files[f"kernels/{name}"], name
    assert b"void for_each_add__bar(const c10::intrusive_ptr<bar::TensorQueue> & tq, const at::Tensor & inc) {" \
        in files["kernels/custom_ops/for_each_add_.cpp"]
    assert (
        b'@torch._library.register_fake_class(f"{DEVICE_NAME}::TensorQueue")'
        in files["kernels/custom_classes/tensor_queue.py"]
    )
    assert b"def test_custom_class_under_compile_and_export" in files["tests/test_bar.py"]
    # Generated sources are current, and plain `scaffold-backend generate` works in the project.
    check = run_cli_process(["generate", "--check"], project)
    assert check.returncode == 0, check.stdout + check.stderr
    # README's first lines are the set-up and test commands.
    readme = files["README.md"].decode().splitlines()
    assert readme[2] == "```bash"
    assert (
        readme[3].startswith(f"pip install torch=={INSTALLED_TORCH} ")
        and "pip install --no-build-isolation '.[test]'" in readme[3]
    )
    assert readme[4] == "python -m pytest tests -q"
    assert {".github/workflows/bar.yml", ".github/workflows/bar-torch-upgrade.yml", "tests/test_bar.py",
            "python/_torch_bar_autoload.py", "python/torch_bar/__init__.py", ".gitignore"} <= set(files)
    for workflow in (".github/workflows/bar.yml", ".github/workflows/bar-torch-upgrade.yml"):
        document = yaml.safe_load(files[workflow])
        assert "jobs" in document
    assert b"${{ inputs.torch_version }}" in files[".github/workflows/bar-torch-upgrade.yml"]
    assert b"scaffold-backend generate --check" in files[".github/workflows/bar.yml"]
    for name, content in files.items():
        assert str(tmp_path).encode() not in content, name


def _declarations(header: str) -> set[str]:
    """The one-line declarations of a C++ header, whitespace-normalized."""
    return {" ".join(line.split()) for line in header.splitlines() if line.rstrip().endswith(");")}


def _forwarded_declarations(files: dict[str, bytes], namespace: str, declared: set[str]) -> int:
    """How many generated kernel declarations a project's kernel files forward to `namespace`,
    checking that `declared` (the header's) declares each exactly as the generator does."""
    forwarded = 0
    for name, content in files.items():
        if not name.startswith("generated/native/"):
            continue
        for declaration in _declarations(content.decode()):
            function = declaration.split("(")[0].split()[-1]
            if f"{namespace}{function}(".encode() in files[f"kernels/{Path(name).stem}.cpp"]:
                assert declaration in declared, declaration
                forwarded += 1
    return forwarded


def test_an_opencl_project_forwards_the_port_core_to_the_drivers_device_kernels(tmp_path: Path) -> None:
    result = init(tmp_path, "bar", "--driver", "opencl", "--ops", "mul.out", "--ops", "atan2.out")
    assert result.returncode == 0, result.stderr
    project = tmp_path / "bar"
    files = tree(project)
    opencl = DRIVER_KERNELS["opencl"]
    config = yaml.safe_load(files["yaml/bar.yaml"])
    assert config["driver"] == "opencl"
    # No random ops: their kernels compute on host views, which this device has not.
    assert sorted(config["supported"]) == sorted([*CORE_OPS, "atan2.out", *opencl.ops])
    driver_dir = b'SCAFFOLD_DRIVER_DIR = { env = "SCAFFOLD_DRIVER_DIR", default = "driver/opencl" }'
    assert driver_dir in files["pyproject.toml"]
    assert files["driver/opencl/ops/opencl_ops.h"] == (REPO / "runtime/driver/opencl/ops/opencl_ops.h").read_bytes()
    assert b"return scaffold::opencl_ops::add_out(self, other, alpha, out);" in files["kernels/add.cpp"]
    assert b'#include "opencl_ops.h"' in files["kernels/add.cpp"]
    assert b"TORCH_CHECK_NOT_IMPLEMENTED" in files["kernels/atan2.cpp"]  # --ops outside the driver's: a stub
    # Every forwarded kernel is declared in the driver's header exactly as the generator declares it.
    declared = _declarations(files["driver/opencl/ops/opencl_ops.h"].decode())
    assert _forwarded_declarations(files, "scaffold::opencl_ops::", declared) == len(opencl.ops)
    assert b"def test_fused_sgd_steps" in files["tests/test_driver_kernels.py"]
    check = run_cli_process(["generate", "--check"], project)
    assert check.returncode == 0, check.stdout + check.stderr
    # The driver is the YAML's: another value is an error naming its line.
    yaml_path = project / "yaml" / "bar.yaml"
    yaml_path.write_text(yaml_path.read_text().replace("driver: opencl", "driver: cuda"))
    refused = run_cli_process(["generate"], project)
    assert refused.returncode == 2  # a configuration error
    assert "yaml/bar.yaml:" in refused.stderr and "unknown driver 'cuda'" in refused.stderr
    assert "Traceback" not in refused.stderr
    # Back to the simulated device: generate moves pyproject.toml's default with it, no test of
    # device kernels left.
    yaml_path.write_text(yaml_path.read_text().replace("driver: cuda", "driver: simulated"))
    moved = run_cli_process(["generate"], project)
    assert moved.returncode == 0, moved.stderr
    assert 'default = "driver" }' in (project / "pyproject.toml").read_text()
    assert not (project / "tests/test_driver_kernels.py").exists()


def test_from_yaml_keeps_the_users_file_but_takes_the_projects_name() -> None:
    names = ProjectNames("bar")
    text = (
        "# my backend\nbackend: PrivateUse1\ncpp_namespace: foo   # trailing comment\ndevice: foo\nsupported:\n"
        "  - abs.out  # first\n  - mm.out\n"
    )
    adapted = adapt_backend_yaml(text, "mine.yaml", names, ["neg.out"])
    assert adapted == (
        "# my backend\nbackend: PrivateUse1\ncpp_namespace: bar   # trailing comment\ndevice: bar\nsupported:\n"
        "  - abs.out  # first\n  - mm.out\n  - neg.out\n"
    )
    flow = adapt_backend_yaml(
        "backend: PrivateUse1\ncpp_namespace: x\nsupported: [abs.out]\n", "m.yaml", names, ["mm.out"]
    )
    assert flow == "backend: PrivateUse1\ncpp_namespace: bar\ndevice: bar\nsupported: [abs.out, mm.out]\n"
    empty = adapt_backend_yaml("backend: PrivateUse1\ncpp_namespace: x\nsupported:\n", "m.yaml", names, ["mm.out"])
    assert yaml.safe_load(empty) == {
        "backend": "PrivateUse1",
        "cpp_namespace": "bar",
        "device": "bar",
        "supported": ["mm.out"],
    }
    none = adapt_backend_yaml("backend: PrivateUse1\ncpp_namespace: x", "m.yaml", names, ["mm.out"])
    assert yaml.safe_load(none)["supported"] == ["mm.out"]


def test_reference_backend_is_init_plus_its_own_kernels(tmp_path: Path) -> None:
    """`init foo --from-yaml yaml/foo.yaml` reproduces the reference backend, except the bodies of
    the kernels its author wrote and where its kernels directory is (runtime/kernels here)."""
    # --force: the reference backend's own torch_foo may be installed beside this checkout.
    result = run_cli_process(
        ["init", "foo", "--force", "--dir", str(tmp_path / "foo"), "--from-yaml", "yaml/foo.yaml"], REPO
    )
    assert result.returncode == 0, result.stderr
    project = tree(tmp_path / "foo")
    reference_generated = {
        name: content.replace(b"../runtime/kernels/", b"../kernels/")
        for name, content in tree(REPO / "generated").items()
    }
    generated = {name[len("generated/"):]: c for name, c in project.items() if name.startswith("generated/")}
    # sources.cmake lists the kernel paths, so its digest in the manifest differs; and the
    # project's manifest records its shared files, which the reference backend's are the tool's.
    manifests = [json.loads(files.pop("scaffold_manifest.json")) for files in (generated, reference_generated)]
    for manifest in manifests:
        manifest["files"].pop("sources.cmake")
    shared = manifests[0].pop("shared_files")
    assert {path for path, record in shared.items() if "base" in record} == set()
    assert manifests[0] == manifests[1]
    assert generated == reference_generated
    assert project["yaml/foo.yaml"] == (REPO / "yaml" / "foo.yaml").read_bytes()
    reference_kernels = tree(REPO / "runtime" / "kernels")
    assert {name[len("kernels/"):] for name in project if name.startswith("kernels/")} == set(reference_kernels)
    for name, content in project.items():
        if name.startswith("kernels/") and b"scaffold::runtime::" in content:
            assert reference_kernels[name[len("kernels/"):]] == content  # core kernels: identical
    # The examples init fills in are the reference backend's own files, rendered for foo.
    for name, text in render_example_files("foo", "torch_foo", "yaml/foo.yaml").items():
        assert reference_kernels[name].decode() == text, f"runtime/kernels/{name} drifted from its template"
        assert project[f"kernels/{name}"].decode() == text, name
    for name, text in render_package_files(ProjectNames("foo"), REFERENCE_BACKEND_LAYOUT).items():
        assert (REPO / "runtime" / name).read_text() == text, f"runtime/{name} drifted from its template"


# ---------------------------------------------------------------------------------------------
# Building and running new projects (slow: each builds a C++ extension)
# ---------------------------------------------------------------------------------------------


# Installed backends of the environment running the tests: a new venv must not see them, or
# `import torch` there would autoload them next to the project under test.
_HIDDEN_DISTRIBUTIONS = ("torch_foo", "_torch_foo_autoload")


def make_venv(path: Path, hide: tuple[str, ...] = ()) -> Path:
    """A virtual environment that sees this environment's torch and tools (its own venv or the
    system's, whichever runs the tests) but installs its own packages, so the backends built here
    never reach the main environment. Each package is linked in, not the whole site-packages
    (system_site_packages would see the base interpreter's, not a venv's), leaving out installed
    backends (and the packages named in `hide`)."""
    venv.EnvBuilder(system_site_packages=False, with_pip=False).create(path)
    python = path / "bin" / "python"
    (target,) = Path(path / "lib").glob("python3*/site-packages")
    for site_packages in map(Path, site.getsitepackages()):
        if not site_packages.is_dir():
            continue
        for entry in site_packages.iterdir():
            if entry.name.startswith(_HIDDEN_DISTRIBUTIONS + hide) or (target / entry.name).exists():
                continue
            (target / entry.name).symlink_to(entry)
    return python


def run(command: str, cwd: Path, python: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environment = dict(os.environ, PATH=f"{python.parent}:{os.environ['PATH']}", **env)
    environment.pop("PYTHONPATH", None)
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=environment, capture_output=True, text=True)


def readme_commands(project: Path) -> tuple[str, str]:
    lines = (project / "README.md").read_text().splitlines()
    return lines[3], lines[4]


def build_and_test(project: Path, environment: Path) -> Path:
    """The README's two commands of the project `bar` at `project`, in a new environment at
    `environment` (its Python, returned): the build puts a tensor on the device, the tests pass."""
    python = make_venv(environment)
    setup, test = readme_commands(project)
    built = run(setup.replace("pip install", f"{python} -m pip install"), project, python)
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-4000:]
    assert "tensor([2., 2., 2.], device='bar:0')" in built.stdout
    tested = run(test.replace("python", str(python), 1), project, python)
    assert tested.returncode == 0, tested.stdout[-6000:]
    assert " passed" in tested.stdout and "failed" not in tested.stdout
    return python


@pytest.mark.slow
def test_new_project_builds_passes_its_tests_and_grows(tmp_path: Path) -> None:
    assert init(tmp_path, "bar").returncode == 0
    project = tmp_path / "bar"
    python = build_and_test(project, tmp_path / "venv")

    # Add an op: a new kernel file appears; only declarations and registrations change besides.
    before = tree(project)
    config = project / "yaml" / "bar.yaml"
    config.write_text(config.read_text().replace("  - zero_\n", "  - zero_\n  - abs.out\n"))
    generated = run_cli_process(["generate"], project)
    assert generated.returncode == 0, generated.stderr
    after = tree(project)
    added = set(after) - set(before)
    changed = {name for name in before if before[name] != after.get(name)}
    assert added == {"kernels/abs.cpp", "generated/native/abs.h"}
    assert changed == {"yaml/bar.yaml", "generated/PrivateUse1NativeFunctions.h", "generated/sources.cmake",
                       "generated/scaffold_manifest.json"} | {
        name for name in changed if name.startswith("generated/RegisterPrivateUse1_")}
    assert len([n for n in changed if n.startswith("generated/RegisterPrivateUse1_")]) == 1

    # Rename the device in the YAML alone (its `device:` and the custom op's class type): after
    # generate and a rebuild, the C++ registrations and the Python package agree on the new name
    # (the package reads it from the generated module).
    config.write_text(config.read_text().replace("\ndevice: bar\n", "\ndevice: qux\n").replace(
        "torch.classes.bar.", "torch.classes.qux."))
    assert "device: qux" in config.read_text()
    generated = run_cli_process(["generate"], project)
    assert generated.returncode == 0, generated.stderr
    rebuilt = run(f"{python} -m pip install --no-build-isolation --no-deps .", project, python)
    assert rebuilt.returncode == 0, rebuilt.stdout[-4000:] + rebuilt.stderr[-4000:]
    renamed = run(
        f"{python} -c \"import torch, torch_bar; x = torch.ones(2, device='qux') * 3; "
        "print(torch_bar.DEVICE_NAME, torch._C._get_privateuse1_backend_name(), x.device, x.cpu().tolist(), "
        "hasattr(torch.ops.qux, '_fallback_counts'), torch.classes.qux.TensorQueue(torch.zeros(1)).size(), "
        "torch._C._dispatch_has_kernel_for_dispatch_key('qux::mymuladd', 'PrivateUse1'))\"",
        tmp_path, python, TORCH_DEVICE_BACKEND_AUTOLOAD="0",
    )
    assert renamed.returncode == 0, renamed.stderr[-4000:]
    assert renamed.stdout.split() == ["qux", "qux", "qux:0", "[3.0,", "3.0]", "True", "0", "True"]


def _opencl_platforms() -> str:
    """clinfo's list of OpenCL platforms and devices ('' when there is none)."""
    if shutil.which("clinfo") is None:
        return ""
    listed = subprocess.run(["clinfo", "--list"], capture_output=True, text=True)
    return listed.stdout if "Platform" in listed.stdout else ""


@pytest.mark.slow
def test_an_opencl_project_builds_passes_its_tests_and_trains_real_models(tmp_path: Path) -> None:
    """`init --driver opencl` as a user runs it: the README's commands build the project on OpenCL
    (PoCL's CPU device in CI, .ci/run installs it) and run its tests, the device kernels' against
    the CPU among them; then the model harness trains real models on it (eager forward and
    backward against the CPU), the device kernels computing what they cover."""
    if not _opencl_platforms():
        pytest.skip("no OpenCL platform (apt-get install pocl-opencl-icd ocl-icd-opencl-dev clinfo)")
    assert init(tmp_path, "bar", "--driver", "opencl").returncode == 0
    python = build_and_test(tmp_path / "bar", tmp_path / "venv")
    models = ["transformers.gpt2", "transformers.bert"]
    if importlib.util.find_spec("torchvision") is not None:
        models.append("torchvision.resnet18")
    report = tmp_path / "models.json"
    trained = run(
        f"{python} -m torch_bar.models --models {' '.join(models)} --stages eager --json {report}", tmp_path, python
    )
    assert trained.returncode == 0, trained.stdout[-6000:] + trained.stderr[-4000:]
    results = json.loads(report.read_text())
    assert sorted(results["models"]) == sorted(models), results


@pytest.mark.slow
def test_two_projects_install_side_by_side(tmp_path: Path) -> None:
    """PyTorch allows one PrivateUse1 backend per process: two installed backends must not clash
    on disk or in the dispatcher, each must work alone, and the second to load must fail with a
    clear message instead of crashing."""
    python = make_venv(tmp_path / "venv")
    for name in ("bar", "baz"):
        assert init(tmp_path, name).returncode == 0
        built = run(f"{python} -m pip install --no-build-isolation .", tmp_path / name, python)
        assert built.returncode == 0, built.stderr[-4000:]
    for name in ("bar", "baz"):
        alone = run(
            f"{python} -c \"import torch, torch_{name}; print((torch.ones(2).to('{name}') * 3).cpu().tolist())\"",
            tmp_path,
            python,
            TORCH_DEVICE_BACKEND_AUTOLOAD="0",
        )
        assert alone.returncode == 0, alone.stderr
        assert alone.stdout.strip() == "[3.0, 3.0]"
    both = run(f"{python} -c \"import torch_bar, torch_baz\"", tmp_path, python, TORCH_DEVICE_BACKEND_AUTOLOAD="0")
    assert both.returncode == 1 and "Segmentation" not in both.stderr
    assert both.stderr.strip().splitlines()[-1] == (
        "torch_baz._device.PrivateUse1ConflictError: Cannot load backend 'baz' (package torch_baz): PrivateUse1 "
        "is already used by backend 'bar'. PyTorch supports only one PrivateUse1 backend per process. Uninstall "
        "one of 'bar' and 'baz', or set TORCH_DEVICE_BACKEND_AUTOLOAD=0 and import the one you want."
    )
    # With autoload on, `import torch` still works: the first backend loads, the other warns.
    autoloaded = run(
        f'{python} -W always -c "import torch; print(torch._C._get_privateuse1_backend_name())"', tmp_path, python
    )
    assert autoloaded.returncode == 0, autoloaded.stderr
    loaded = autoloaded.stdout.strip()
    other = {"bar": "baz", "baz": "bar"}[loaded]
    assert f"RuntimeWarning: torch_{other} was not loaded: Cannot load backend '{other}'" in autoloaded.stderr
    namespaces = run(
        f"{python} -c \"import torch, torch_{loaded}; print(hasattr(torch.ops.{loaded}, '_fallback_counts'))\"",
        tmp_path,
        python,
    )
    assert namespaces.stdout.strip() == "True"


def test_ci_workflows_cover_the_supported_range_with_the_default_wheel() -> None:
    """The project's CI runs the lowest and the highest supported torch, read from the one
    requirement line (cmake/torch-requirement.txt), and installs the default PyPI wheel."""
    requirement = (REPO / "runtime" / "cmake" / "torch-requirement.txt").read_text().splitlines()[-1]
    lowest, below = requirement.removeprefix("torch>=").split(",<")
    highest = f"{below.split('.')[0]}.{int(below.split('.')[1]) - 1}"
    files = project_files(ProjectNames("bar"), "backend: PrivateUse1\n", "2.15.0")
    ci = yaml.safe_load(files[".github/workflows/bar.yml"])
    job = ci["jobs"]["build-and-test"]
    assert job["strategy"]["matrix"]["include"] == [
        {"torch": f"{lowest}.*", "python": "3.12"},
        {"torch": f"{highest}.*", "python": "3.11"},
    ]
    steps = {step.get("name"): step for step in job["steps"]}
    install = steps["Install torch, build tools and the generator"]["run"]
    assert install.startswith('pip install "torch==${{ matrix.torch }}" ')
    assert "download.pytorch.org" not in install and "--index-url" not in install  # the default wheel
    assert (
        "scaffold-backend generate --check"
        in steps["Check generated/ is current, or regenerate it for this leg's torch"]["run"]
    )
    assert steps["Build"]["run"] == "pip install --no-build-isolation '.[test]'"  # with pytest, expecttest
    upgrade = yaml.safe_load(files[".github/workflows/bar-torch-upgrade.yml"])
    assert upgrade[True]["workflow_dispatch"]["inputs"]["torch_version"]["required"] is False  # newest
    assert upgrade[True]["schedule"]  # the weekly canary
    upgrade_steps = {step.get("name"): step for step in upgrade["jobs"]["upgrade"]["steps"]}
    assert "generated/scaffold_manifest.json" in upgrade_steps["Install the current torch and the generator"]["run"]
    checkout = next(step for step in upgrade["jobs"]["upgrade"]["steps"] if step.get("uses") == "actions/checkout@v4")
    assert checkout["with"] == {"fetch-depth": 0}  # shared files' merge bases
    for text in (files[".github/workflows/bar.yml"], files[".github/workflows/bar-torch-upgrade.yml"]):
        assert "\n\n        " not in text  # no stray blank lines inside steps


@pytest.mark.parametrize(
    ("torch_version", "takes_the_newest_tool"),
    [("2.15.0", False), ("2.11.0", False), ("2.16.0", True), ("2.16", True), ("3.0.1", True)],
)
def test_the_upgrade_takes_the_newest_tool_only_for_a_torch_outside_the_projects_range(
    tmp_path: Path, torch_version: str, takes_the_newest_tool: bool
) -> None:
    """The upgrade workflow's step, run by bash as the workflow would, with `pip` and the tool
    replaced by functions that say what they were asked (nothing is installed)."""
    files = project_files(ProjectNames("bar"), "backend: PrivateUse1\n", "2.15.0")
    upgrade = yaml.safe_load(files[".github/workflows/bar-torch-upgrade.yml"])
    steps = {step.get("name"): step for step in upgrade["jobs"]["upgrade"]["steps"]}
    script = steps["Upgrade torch, and the generator where the project's does not support it"]["run"]
    (tmp_path / "cmake").mkdir()
    (tmp_path / "cmake" / "torch-requirement.txt").write_text(files["cmake/torch-requirement.txt"])
    (tmp_path / "torch-version").write_text(torch_version + "\n")
    stand_ins = 'pip() { echo "pip $*"; }; scaffold-backend() { :; }\n'
    ran = subprocess.run(
        ["bash", "-eo", "pipefail", "-c", stand_ins + script],
        cwd=tmp_path, capture_output=True, text=True, check=False,
        env=dict(os.environ, RUNNER_TEMP=str(tmp_path), SCAFFOLD_BACKEND_UPGRADE="scaffold-backend"),
    )
    assert ran.returncode == 0, ran.stderr
    assert f"pip install torch=={torch_version}\n" in ran.stdout
    assert ("pip install --upgrade scaffold-backend\n" in ran.stdout) is takes_the_newest_tool


@pytest.mark.parametrize(
    ("failure", "expected"),
    [
        ("ImportError('_C.so: undefined symbol: _ZN3c10')", "ImportError: _C.so: undefined symbol: _ZN3c10"),
        ("RuntimeError('driver: no device')", "RuntimeError: driver: no device"),
    ],
)
def test_a_backend_that_cannot_load_leaves_import_torch_working(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: str, expected: str
) -> None:
    """torch calls the autoload entry point inside `import torch`: an exception there fails that
    import (from torch 2.15 on, every later one of the process too), so any error becomes a
    warning that names it and how to get the whole of it."""
    files = project_files(ProjectNames("brk"), "backend: PrivateUse1\n", "2.15.0")
    (tmp_path / "_torch_brk_autoload.py").write_text(files["python/_torch_brk_autoload.py"])
    (tmp_path / "torch_brk").mkdir()
    (tmp_path / "torch_brk" / "__init__.py").write_text(f"raise {failure}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import _torch_brk_autoload  # type: ignore[import-not-found]  # written just above

    with pytest.warns(RuntimeWarning) as caught:
        _torch_brk_autoload.load()
    (message,) = [str(warning.message) for warning in caught]
    assert message.startswith(f"torch_brk was not loaded: {expected} (`import torch_brk` shows the whole error")
    monkeypatch.delitem(sys.modules, "_torch_brk_autoload")
