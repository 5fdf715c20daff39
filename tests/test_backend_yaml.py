"""The backend YAML: torchgen's keys work, and every bad input gets one pinned message."""

from __future__ import annotations

from pathlib import Path

import pytest
from scaffold_testing import INSTALLED_TORCH

from scaffold_backend.errors import BackendYamlError
from scaffold_backend.model.backend import BackendConfig, DeviceGuardType, FallbackDefault, FallbackMode
from scaffold_backend.model.declarations import DeclarationsFile
from scaffold_backend.model.selection import OpStatus
from scaffold_backend.parse.backend_yaml import parse_backend_yaml
from scaffold_backend.parse.inputs import load_declarations
from scaffold_backend.select.selection import select

HEAD = "backend: PrivateUse1\ncpp_namespace: foo\n"


def parse(text: str) -> BackendConfig:
    return parse_backend_yaml(text, display_path="b.yaml")


def error_of(text: str) -> str:
    with pytest.raises(BackendYamlError) as error:
        parse(text)
    return str(error.value)


def test_torchgen_gen_backend_stubs_yaml_is_accepted() -> None:
    """A YAML written for torchgen's gen_backend_stubs, with every key it knows."""
    config = parse(
        "backend: XLA\n"
        "cpp_namespace: torch_xla\n"
        "class_name: XLANativeFunctions\n"
        "use_out_as_primary: true\n"
        "device_guard: false\n"
        "extra_headers: ['<torch_xla/csrc/aten_xla_type.h>']\n"
        "supported:\n- abs\n- add.Tensor\n"
        "autograd:\n- max_pool2d\n"
        "symint:\n- add.Tensor\n"
    )
    assert config.backend == "XLA" and config.autograd_key == "AutogradXLA"
    assert config.class_name == "XLANativeFunctions"
    assert config.device == "xla"
    assert [entry.op_name for entry in config.supported] == ["abs", "add.Tensor"]
    assert config.supported[1].location.line == 9
    assert config.use_out_as_primary and not config.device_guard
    assert config.fallback.default is FallbackDefault.CPU and config.fallback.warn_once
    assert config.fallback.mode is FallbackMode.COPY


def test_device_guard_of_the_runtime() -> None:
    """`device_guard` as a mapping names the runtime's own guard type and turns the guard on;
    true keeps c10's."""
    config = parse(HEAD + "device_guard:\n  type: my_backend::DeviceGuard\n  header: '\"guard.h\"'\n")
    assert config.device_guard
    assert config.device_guard_type == DeviceGuardType(cpp_type="my_backend::DeviceGuard", header='"guard.h"')
    plain = parse(HEAD + "device_guard: true\n")
    assert plain.device_guard and plain.device_guard_type is None


def test_own_keys() -> None:
    config = parse(
        HEAD + "device: foo\nshards: 8\nsupported:\nfallback:\n  default: error\n  warn_once: false\n"
        "  never: [mm]\n  explicit: [abs.out]\n"
    )
    assert config.device == "foo" and config.shards == 8 and config.supported == ()
    assert config.fallback.default is FallbackDefault.ERROR and not config.fallback.warn_once
    assert [e.op_name for e in config.fallback.never] == ["mm"]
    assert config.fallback.explicit[0].location.line == 10


def test_fallback_mode() -> None:
    config = parse(HEAD + "fallback:\n  mode: host_view\n")
    assert config.fallback.mode is FallbackMode.HOST_VIEW


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "b.yaml:1: the backend YAML is empty"),
        ("supported: [add.out\n", "b.yaml:1: invalid YAML: expected ',' or ']', but got '<stream end>'"),
        ("- abs\n", "b.yaml:1: the backend YAML must be a mapping of keys to values"),
        (
            "cpp_namespace: foo\n",
            "b.yaml:1: missing required key 'backend'\n"
            "  hint: torchgen's backend YAML requires 'backend' and 'cpp_namespace'",
        ),
        (
            HEAD + "suported: [abs]\n",
            "b.yaml:3: unknown key 'suported' in the backend YAML\n"
            "  hint: did you mean 'supported'? valid keys: backend, cpp_namespace, class_name, supported, autograd, "
            "symint, use_out_as_primary, device_guard, extra_headers, device, driver, fallback, shards, custom_ops, "
            "custom_classes, autocast",
        ),
        (HEAD + "backend: XLA\n", "b.yaml:3: key 'backend' appears twice (first at line 1)"),
        (
            HEAD + "full_codegen: [abs]\n",
            "b.yaml:3: key 'full_codegen' is not supported: it belongs to torchgen's lazy-tensor generator "
            "(gen_lazy_tensor), which scaffold-backend does not replace\n"
            "  hint: list these ops under 'supported' and write their kernels, "
            "or keep generating them with torchgen.gen_lazy_tensor",
        ),
        (
            HEAD + "ir_gen: [abs]\n",
            "b.yaml:3: key 'ir_gen' is not supported: it belongs to torchgen's lazy-tensor generator "
            "(gen_lazy_tensor), which scaffold-backend does not replace\n"
            "  hint: list these ops under 'supported' and write their kernels, "
            "or keep generating them with torchgen.gen_lazy_tensor",
        ),
        (
            "backend: Foo1\ncpp_namespace: foo\n",
            "b.yaml:1: 'backend' must be a PyTorch dispatch key, got 'Foo1'\n"
            "  hint: out-of-tree backends use PrivateUse1",
        ),
        (
            "backend: PrivateUse1\ncpp_namespace: my-backend\n",
            "b.yaml:2: cpp_namespace 'my-backend': 'my-backend' is not a C++ identifier "
            "(letters, digits and _, not starting with a digit)\n"
            "  hint: use a namespace of your own, e.g. 'my_backend' or 'my_backend::native'",
        ),
        (
            "backend: PrivateUse1\ncpp_namespace: foo::class\n",
            "b.yaml:2: cpp_namespace 'foo::class': 'class' is a C++ keyword\n"
            "  hint: use a namespace of your own, e.g. 'my_backend' or 'my_backend::native'",
        ),
        (
            "backend: PrivateUse1\ncpp_namespace: at::native\n",
            "b.yaml:2: cpp_namespace 'at::native' is inside 'at', which PyTorch or the standard library owns; "
            "kernels there would collide with ATen's own functions\n"
            "  hint: use a namespace of your own, e.g. 'my_backend'",
        ),
        (
            HEAD + "class_name: 2Fast\n",
            "b.yaml:3: class_name '2Fast' is not a C++ identifier (letters, digits and _, not starting with a digit)",
        ),
        (
            HEAD + "device: cuda\n",
            "b.yaml:3: device name 'cuda' is a device name PyTorch already uses\n"
            "  hint: pick a short lowercase name such as 'foo' or 'my_npu'",
        ),
        (
            HEAD + "device: Foo\n",
            "b.yaml:3: device name 'Foo' is not a lowercase identifier (a-z, 0-9 and _, not starting with a digit)\n"
            "  hint: pick a short lowercase name such as 'foo' or 'my_npu'",
        ),
        (
            HEAD + "device: import\n",
            "b.yaml:3: device name 'import' is a Python keyword\n"
            "  hint: pick a short lowercase name such as 'foo' or 'my_npu'",
        ),
        (HEAD + "supported: abs\n", "b.yaml:3: 'supported' must be a list"),
        (
            HEAD + "supported:\n- abs\n- 3\n",
            "b.yaml:5: every entry of 'supported' must be an operator name such as add.out",
        ),
        (
            HEAD + "supported:\n- add out\n",
            "b.yaml:4: 'add out' in 'supported' is not an operator name (expected e.g. add.Tensor, abs)",
        ),
        (
            HEAD + "device_guard: maybe\n",
            "b.yaml:3: 'device_guard' must be true, false, or the runtime's own guard as {type: ..., header: ...}",
        ),
        (
            HEAD + "device_guard:\n  type: foo::Guard\n",
            "b.yaml:4: 'device_guard' as a mapping needs 'header'\n"
            "  hint: device_guard: {type: my_backend::DeviceGuard, header: '\"guard.h\"'}, or true for c10's guard",
        ),
        (
            HEAD + "device_guard:\n  type: foo::Guard\n  header: guard.h\n",
            "b.yaml:5: 'device_guard.header' guard.h must be written <path/to/header.h> or \"path/to/header.h\"",
        ),
        (
            HEAD + "device_guard:\n  type: foo::9Guard\n  header: <guard.h>\n",
            "b.yaml:4: 'device_guard.type' foo::9Guard: segment '9Guard' is not a C++ identifier "
            "(letters, digits and _, not starting with a digit)",
        ),
        (
            HEAD + "device_guard:\n  type: foo::Guard\n  header: <guard.h>\n  extra: 1\n",
            "b.yaml:6: unknown key 'extra' in 'device_guard'\n  hint: valid keys: type, header",
        ),
        (HEAD + "shards: 0\n", "b.yaml:3: 'shards' must be between 1 and 256"),
        (
            HEAD + "extra_headers: ['foo.h']\n",
            'b.yaml:3: extra header foo.h must be written <path/to/header.h> or "path/to/header.h"',
        ),
        (
            HEAD + "fallback:\n  default: gpu\n",
            "b.yaml:4: 'fallback.default' must be one of ['cpu', 'error'], got 'gpu'",
        ),
        (
            HEAD + "fallback:\n  nevr: [abs]\n",
            "b.yaml:4: unknown key 'nevr' in 'fallback'\n"
            "  hint: did you mean 'never'? valid keys: default, mode, warn_once, never, explicit",
        ),
        (
            HEAD + "fallback:\n  default: cpu\n  mode: zero_copy\n",
            "b.yaml:5: 'fallback.mode' must be one of ['copy', 'host_view'], got 'zero_copy'",
        ),
        (HEAD + "fallback:\n  mode: [host_view]\n", "b.yaml:4: 'fallback.mode' must be a non-empty string"),
        (
            "backend: PrivateUse1\ncpp_namespace: foo\nbackend_yaml: [\n",
            "b.yaml:3: invalid YAML: expected the node content, but found '<stream end>'",
        ),
    ],
)
def test_bad_yaml_messages(text: str, message: str) -> None:
    assert error_of(text) == message


@pytest.fixture(scope="module")
def declarations() -> DeclarationsFile:
    return load_declarations(None, Path.cwd())


def select_error(text: str, declarations: DeclarationsFile) -> str:
    with pytest.raises(BackendYamlError) as error:
        select(parse(HEAD + text), declarations)
    return str(error.value)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "supported:\n- ad.Tensor\n",
            "b.yaml:4: unknown operator 'ad.Tensor' under 'supported': torch/include/ATen/RegistrationDeclarations.h "
            f"(torch {INSTALLED_TORCH}) has no such operator\n"
            "  hint: did you mean 'add.Tensor', 'add_.Tensor', 'div.Tensor'?",
        ),
        (
            "supported:\n- zzz_no_such_op\n",
            "b.yaml:4: unknown operator 'zzz_no_such_op' under 'supported': "
            f"torch/include/ATen/RegistrationDeclarations.h (torch {INSTALLED_TORCH}) has no such operator\n"
            "  hint: run `scaffold-backend ops --all` to list the operators of this torch",
        ),
        ("supported:\n- abs.out\n- abs.out\n", "b.yaml:5: 'abs.out' is listed twice under 'supported'"),
        (
            "supported:\n- abs.out\nautograd:\n- abs.out\n",
            "b.yaml:6: 'abs.out' is listed under both 'supported' (line 4) and 'autograd'\n"
            "  hint: an op has one status: a kernel (supported or autograd) or an explicit fallback",
        ),
        (
            "supported:\n- abs.out\nfallback:\n  explicit: [abs.out]\n",
            "b.yaml:6: 'abs.out' is listed under both 'supported' (line 4) and 'fallback.explicit'\n"
            "  hint: an op has one status: a kernel (supported or autograd) or an explicit fallback",
        ),
        (
            "fallback:\n  never: [abs.out]\n  explicit: [abs.out]\n",
            "b.yaml:4: 'abs.out' is under both 'fallback.never' and 'fallback.explicit'",
        ),
        (
            "supported:\n- abs.out\nsymint:\n- view\n",
            "b.yaml:6: 'view' is under 'symint' but not under 'supported' or 'autograd'\n"
            "  hint: 'symint' chooses c10::SymInt arguments for kernels you write",
        ),
        (
            "supported:\n- add.out\n- add.Tensor\nautograd:\n- add_.Tensor\n",
            "b.yaml:7: 'add_.Tensor' is under 'autograd' but its variant 'add.out' is under 'supported'\n"
            "  hint: all variants of an op (functional, inplace, out) must go to one key: "
            "move them together under 'supported' or under 'autograd'",
        ),
    ],
)
def test_selection_errors(text: str, message: str, declarations: DeclarationsFile) -> None:
    assert select_error(text, declarations) == message


def test_statuses(declarations: DeclarationsFile) -> None:
    config = parse(
        HEAD + "supported: [abs.out, add.Tensor]\nautograd: [max_pool2d]\nsymint: [abs.out]\n"
        "fallback:\n  never: [mm.out]\n  explicit: [neg.out]\n"
    )
    selection = select(config, declarations)
    status = {op.op_name: op for op in selection.ops}
    assert status["abs.out"].status is OpStatus.NATIVE and status["abs.out"].symint
    assert status["add.Tensor"].status is OpStatus.NATIVE and status["add.Tensor"].override
    assert "override of a default kernel" in status["add.Tensor"].notes
    assert status["max_pool2d"].status is OpStatus.AUTOGRAD
    assert status["neg.out"].status is OpStatus.EXPLICIT_FALLBACK
    assert status["mm.out"].status is OpStatus.BOXED_FALLBACK and status["mm.out"].never_fallback
    assert status["add.out"].status is OpStatus.BOXED_FALLBACK
    assert status["add_.Tensor"].status is OpStatus.COMPOSITE
    required = [op for op in selection.ops if op.declaration.required]
    # Every required op of the header (torch 2.14.1: 858 without a default kernel, and the two
    # *_overrideable ops whose default only raises; tests/test_declarations.py counts each release's).
    assert len(required) == sum(declaration.required for declaration in declarations.declarations) >= 853
    conv = status["convolution_overrideable"]
    assert conv.declaration.default and conv.declaration.required
    assert conv.status is OpStatus.BOXED_FALLBACK
    assert "default kernel only raises for this backend; the CPU fallback cannot run it: " \
        "write a kernel" in conv.notes
    # Every required op has exactly one of the four statuses that handle it.
    assert {op.status for op in required} <= {OpStatus.NATIVE, OpStatus.EXPLICIT_FALLBACK, OpStatus.BOXED_FALLBACK}
    assert [op.group for op in selection.kernels] == ["abs", "add", "max_pool2d"]
