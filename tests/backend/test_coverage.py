"""`python -m torch_foo.coverage SCRIPT`: a real script runs as it would alone (argv, __main__, its
output, its exit status) while the runtime records the ops that reach the device; the report names
exactly the ops fallback_counts() counts, with the same calls, and is what `adopt` reads. And the
helper the adopted tests call compares a kernel with the CPU, failing where it must."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import torch
from torch_foo.coverage import adopted
from torch_foo.coverage.report import PATH_ORDER

from foo_testing import needs_host_views
from scaffold_backend.parse.coverage_report import parse_coverage_report

# A small CNN's training step (real model code: conv, pooling, linear, cross entropy, SGD), a
# custom op, and three ops foo has no kernel for: softplus and adaptive max pooling (boxed
# fallback) and cumprod (an explicit, typed fallback). The script prints its argv and the fallback counts and
# exits with the status it is given.
SCRIPT = textwrap.dedent(
    """
    import json, sys
    import torch
    from torch import nn

    print("argv", json.dumps(sys.argv), __name__)
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.Softplus(), nn.AdaptiveMaxPool2d(8), nn.Flatten(), nn.Linear(8 * 8 * 8, 10)
    ).to("foo")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(int(sys.argv[1])):
        x = torch.randn(4, 3, 16, 16, device="foo")
        target = torch.arange(4, device="foo")
        loss = nn.functional.cross_entropy(model(x), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    torch.cumprod(x.flatten()[:10], 0)
    torch.ops.foo.mymuladd(x, x, 1.0)
    print("counts", json.dumps(torch.foo.fallback_counts()))
    if sys.argv[2] == "raise":
        raise ValueError("the script's own error")
    sys.exit(int(sys.argv[2]))
    """
)


def run_coverage(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "train.py"
    script.write_text(SCRIPT)
    return subprocess.run(
        [sys.executable, "-W", "ignore", "-m", "torch_foo.coverage", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, **(env or {})},
    )


def printed(stdout: str, tag: str) -> Any:
    line = next(line for line in stdout.splitlines() if line.startswith(tag + " "))
    return json.loads(line.split(" ", 1)[1].rsplit(" ", 1)[0] if tag == "argv" else line.split(" ", 1)[1])


@needs_host_views  # the report's kernels are foo's native ones
@pytest.mark.parametrize("host_view", ["1", "0"], ids=["host-view-fallback", "copying-fallback"])
def test_the_report_of_a_real_script(tmp_path: Path, host_view: str) -> None:
    result = run_coverage(
        tmp_path,
        "--json",
        "report.json",
        "--markdown",
        "report.md",
        "--top",
        "5",
        "train.py",
        "2",
        "3",
        env={"SCAFFOLD_HOST_VIEW_FALLBACK": host_view},
    )
    # The script's own: exit status, argv, __main__, and its stdout untouched by the report.
    assert result.returncode == 3, result.stderr
    assert printed(result.stdout, "argv") == ["train.py", "2", "3"]
    assert " __main__\n" in result.stdout and "Op coverage" not in result.stdout
    assert "### Op coverage on `foo`: `python train.py 2 3`" in result.stderr

    report = json.loads((tmp_path / "report.json").read_text())
    assert (report["version"], report["device"], report["command"]) == (1, "foo", ["train.py", "2", "3"])
    assert report["torch"] == torch.__version__.split("+")[0]
    ops = {op["name"]: op for op in report["ops"]}
    fallback = {name: op["calls"] for name, op in ops.items() if op["path"] == "fallback"}
    assert fallback == printed(result.stdout, "counts")
    assert {"aten::softplus.out", "aten::adaptive_max_pool2d.out", "aten::cumprod.out"} <= set(fallback)

    pool = ops["aten::adaptive_max_pool2d.out"]
    assert pool["shapes"] == [[[4, 8, 16, 16], [4, 8, 8, 8], [4, 8, 8, 8]]]
    assert pool["dtypes"] == [["float32", "float32", "int64"]]
    assert pool["arguments"] == [[{"tensor": 0}, [8, 8], {"tensor": 1}, {"tensor": 2}]]
    for op in ops.values():
        if op["path"] == "fallback":
            assert 0 <= op["overhead_seconds"] <= op["seconds"] == op["host_seconds"] and op["seconds"] > 0
    # Kernels of foo, the backward ones included (they run on autograd's device thread), timed on
    # the device; PyTorch's composites; foo's custom op.
    assert ops["aten::convolution_overrideable"]["path"] == "native"
    assert ops["aten::convolution_backward_overrideable"]["calls"] == 2
    assert ops["aten::convolution_overrideable"]["device_seconds"] is not None
    assert ops["aten::linear"]["path"] == "composite"
    assert ops["foo::mymuladd"]["path"] == "custom"
    # Ranked: fallback ops first, by seconds; then native ones.
    paths = [op["path"] for op in report["ops"]]
    assert paths == sorted(paths, key=PATH_ORDER.index)
    seconds = [op["seconds"] for op in report["ops"] if op["path"] == "fallback"]
    assert seconds == sorted(seconds, reverse=True)
    # What adopt reads.
    parsed = parse_coverage_report((tmp_path / "report.json").read_text(), "report.json")
    assert parsed.ranked_fallback_ops()[0].name == report["ops"][0]["name"]

    markdown = (tmp_path / "report.md").read_text()
    assert "| # | op | path | calls | seconds |" in markdown
    assert f"| 1 | `{report['ops'][0]['name']}` | fallback |" in markdown
    assert f"{len(report['ops']) - 5} more ops in the JSON report." in markdown


def test_the_scripts_exception_is_its_own_and_the_report_is_written(tmp_path: Path) -> None:
    result = run_coverage(tmp_path, "--json", "report.json", "train.py", "1", "raise")
    assert result.returncode == 1
    assert "ValueError: the script's own error" in result.stderr
    report = json.loads((tmp_path / "report.json").read_text())
    assert any(op["name"] == "aten::softplus.out" for op in report["ops"])


def test_a_module_runs_as_with_python_dash_m(tmp_path: Path) -> None:
    package = tmp_path / "workload"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "step.py").write_text(SCRIPT)
    result = run_coverage(tmp_path, "--json", "report.json", "-m", "workload.step", "1", "0")
    assert result.returncode == 0, result.stderr
    assert printed(result.stdout, "argv")[1:] == ["1", "0"]
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["command"] == ["workload.step", "1", "0"]


def test_no_script(tmp_path: Path) -> None:
    result = run_coverage(tmp_path, "missing.py")
    assert result.returncode == 2 and "missing.py: no such file" in result.stderr


def test_recording_is_off_unless_started() -> None:
    table = torch.ops.scaffold_runtime._coverage_table
    before = json.loads(table())
    torch.histc(torch.ones(3, device="foo")).cpu()
    assert json.loads(table()) == before


def test_fallback_calls_are_named_in_a_profile_while_recording() -> None:
    """The fallback's record_function range and the coverage recorder are one mechanism's two
    views of the same calls: both see them."""
    from torch_foo.coverage import recorder

    x = torch.randn(8, device="foo")
    with recorder.recording(), torch.profiler.profile() as profile:
        torch.histc(x)
    names = {event.name for event in profile.events()}
    assert "cpu_fallback: aten::histc" in names
    assert {op["name"]: op["calls"] for op in recorder.table()["ops"] if op["path"] == "fallback"} == {
        "aten::histc": 1
    }


def test_each_recording_classifies_ops_anew() -> None:
    """A kernel registered after a recording (from Python here) makes the op native in the next."""
    from torch_foo.coverage import recorder

    x = torch.randn(8, device="foo")
    with recorder.recording():
        torch.histc(x)
    assert {op["name"]: op["path"] for op in recorder.table()["ops"]}["aten::histc"] == "fallback"
    library = torch.library.Library("aten", "IMPL")
    library.impl(
        "histc",
        lambda self, bins=100, low=0, high=0: torch.histc(self.cpu(), bins, low, high).to(self.device),
        "PrivateUse1",
    )
    try:
        with recorder.recording():
            torch.histc(x)
        assert {op["name"]: op["path"] for op in recorder.table()["ops"]}["aten::histc"] == "native"
    finally:
        library._destroy()


# ---- The helper of the adopted tests -----------------------------------------------------------


@needs_host_views
def test_a_native_kernel_is_compared_with_the_cpu() -> None:
    signature = {
        "shapes": [[4, 8], [8]],
        "dtypes": ["float32", "float32"],
        "arguments": [{"tensor": 0}, {"tensor": 1}, 2],
    }
    adopted.check_against_cpu("aten::add.Tensor", (), signature)


def test_an_op_that_still_falls_back_fails() -> None:
    signature = {"shapes": [[4, 8]], "dtypes": ["float32"], "arguments": [{"tensor": 0}, 10, -1.0, 1.0]}
    with pytest.raises(AssertionError, match="ran through the CPU fallback, not a kernel of the foo backend"):
        adopted.check_against_cpu("aten::histc", (), signature)


def test_only_the_stubs_own_error_is_an_expected_failure() -> None:
    """A kernel that raises as a generated stub does (registered here for the test) makes the test
    an expected failure; any other NotImplementedError stays a failure."""
    stub_message = "foo: aten::histc has no kernel yet"
    library = torch.library.Library("aten", "IMPL")

    def stub(*args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{stub_message} (implement foo::histc in kernels/histc.cpp)")

    library.impl("histc", stub, "PrivateUse1")
    signature = {"shapes": [[4, 8]], "dtypes": ["float32"], "arguments": [{"tensor": 0}, 10, -1.0, 1.0]}
    try:
        with pytest.raises(pytest.xfail.Exception, match="not implemented yet"):
            adopted.check_against_cpu("aten::histc", (stub_message,), signature)
        with pytest.raises(NotImplementedError):
            adopted.check_against_cpu("aten::histc", ("foo: aten::histc.out has no kernel yet",), signature)
    finally:
        library._destroy()


def test_a_wrong_result_fails() -> None:
    right = torch.ones(3)
    with pytest.raises(AssertionError, match="the result"):
        adopted._compare(torch.zeros(3, device="foo"), right, "the result", values=True)
    with pytest.raises(AssertionError, match="is on cpu, not on the foo device"):
        adopted._compare(torch.ones(3), right, "the result", values=True)
