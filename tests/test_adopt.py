"""`scaffold-backend adopt`: a coverage report's top fallback ops join the backend YAML (its bytes
kept but for the inserted lines), get kernel stubs through the same generation as `generate`, and
a test each on the recorded inputs; a bad report, or one of another device or torch, is one
located error, exit 2, and nothing written."""

from __future__ import annotations

import ast
import importlib.util
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from scaffold_testing import GOLDEN, INSTALLED_TORCH, REPO, TESTS, CliRun, run_cli_process, tree

from scaffold_backend.errors import BackendYamlError
from scaffold_backend.model.outputs import stub_error
from scaffold_backend.parse.coverage_report import parse_coverage_report
from scaffold_backend.write.yaml_edit import add_to_op_list

SMALL_YAML = TESTS / "data" / "small_backend.yaml"
SUBSET_HEADER = TESTS / "data" / "declarations_2.13_subset.h"
GENERATE = ["generate", "--yaml", "backend.yaml", "--declarations", "RegistrationDeclarations.h", "--out", "generated"]
ADOPT_OPTIONS = ["--yaml", "backend.yaml", "--declarations", "RegistrationDeclarations.h", "--out", "generated"]


def _op(name: str, path: str, seconds: float, signatures: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    signatures = signatures or []
    return {
        "name": name,
        "path": path,
        "calls": 3,
        "seconds": seconds,
        "host_seconds": seconds,
        "device_seconds": None,
        "overhead_seconds": 0.001 if path == "fallback" else None,
        "shapes": [s["shapes"] for s in signatures],
        "dtypes": [s["dtypes"] for s in signatures],
        "arguments": [s["arguments"] for s in signatures],
    }


ADD_OUT_CALL = {
    "shapes": [[4, 8], [8], [4, 8]],
    "dtypes": ["float32", "float32", "float32"],
    "arguments": [{"tensor": 0}, {"tensor": 1}, 2, {"tensor": 2}],
}
BITWISE_AND_CALL = {
    "shapes": [[5], [5], [5]],
    "dtypes": ["bool"] * 3,
    "arguments": [{"tensor": 0}, {"tensor": 1}, {"tensor": 2}],
}


def report(**overrides: Any) -> dict[str, Any]:
    document: dict[str, Any] = {
        "version": 1,
        "torch": INSTALLED_TORCH,
        "device": "tiny",
        "command": ["train.py", "--steps", "2"],
        "device_timing": True,
        "ops": [
            _op("aten::add.out", "fallback", 0.5, [ADD_OUT_CALL]),
            _op("aten::bitwise_and.Tensor_out", "fallback", 0.25, [BITWISE_AND_CALL]),
            _op(
                "aten::abs.out", "native", 0.9, [{"shapes": [[3]], "dtypes": ["float32"], "arguments": [{"tensor": 0}]}]
            ),
            _op("aten::neg.out", "fallback", 0.2),
            _op("aten::mm.out", "fallback", 0.1),
            _op("aten::cat", "composite", 0.05),
        ],
    }
    document.update(overrides)
    return document


@pytest.fixture(scope="module")
def generated_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("generated") / "project"
    root.mkdir()
    shutil.copy(SMALL_YAML, root / "backend.yaml")
    shutil.copy(SUBSET_HEADER, root / "RegistrationDeclarations.h")
    assert run_cli_process(GENERATE, root).returncode == 0
    return root


@pytest.fixture
def project(tmp_path: Path, generated_project: Path) -> Path:
    """The small backend, generated, with a coverage report beside it (a copy: generated once)."""
    root = tmp_path / "project"
    shutil.copytree(generated_project, root, symlinks=True)
    (root / "coverage.json").write_text(json.dumps(report()))
    return root


def adopt(cli_run: CliRun, root: Path, *args: str) -> Any:
    return cli_run(["adopt", "coverage.json", *args, *ADOPT_OPTIONS], root)


def test_top_ops_join_the_yaml_get_stubs_and_tests(project: Path, cli_run: CliRun) -> None:
    before = SMALL_YAML.read_text()
    result = adopt(cli_run, project, "--top", "2")
    assert result.exit_code == 0, result.output
    # Byte for byte, but for the two entries after the list's last one.
    assert (project / "backend.yaml").read_text() == before.replace(
        "  - __and__.Tensor\n", "  - __and__.Tensor\n  - add.out\n  - bitwise_and.Tensor_out\n"
    )
    add_stub = (project / "kernels" / "add.cpp").read_text()
    assert stub_error("tiny", "add.out") in add_stub
    assert (project / "kernels" / "bitwise_and.cpp").is_file()
    assert "adopted aten::add.out (3 calls, 0.5000 s on the CPU fallback): supported += add.out" in result.output
    test = (project / "tests" / "adopted" / "test_add_out.py").read_text()
    constants = _constants(test)
    assert constants["OP"] == "aten::add.out"
    assert constants["SIGNATURES"] == [ADD_OUT_CALL]
    assert constants["STUB_ERRORS"] == (stub_error("tiny", "add.out"),)
    assert "from torch_tiny.coverage.adopted import check_against_cpu" in test
    # The same generation as `generate`: the tree is current afterwards.
    assert cli_run([*GENERATE, "--check"], project).exit_code == 0


def _constants(source: str) -> dict[str, Any]:
    """The module-level constants of a generated test (it is data plus one call)."""
    found = {}
    for node in ast.parse(source).body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            target = node.targets[0] if isinstance(node, ast.Assign) else node.target
            assert isinstance(target, ast.Name) and node.value is not None
            found[target.id] = ast.literal_eval(node.value)
    return found


def test_the_generated_test_is_pinned(project: Path, cli_run: CliRun, update_golden: bool) -> None:
    assert adopt(cli_run, project, "--op", "aten::add.out").exit_code == 0
    produced = (project / "tests" / "adopted" / "test_add_out.py").read_text()
    golden = GOLDEN / "adopted" / "test_add_out.py.golden"  # not collected as a test
    if update_golden:
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(produced)
    assert produced == golden.read_text()


def test_named_ops_and_a_kept_test(project: Path, cli_run: CliRun) -> None:
    mine = project / "tests" / "adopted" / "test_bitwise_and_Tensor_out.py"
    mine.parent.mkdir(parents=True)
    mine.write_text("# my own inputs\n")
    result = adopt(cli_run, project, "--op", "bitwise_and.Tensor_out")
    assert result.exit_code == 0, result.output
    assert "  - bitwise_and.Tensor_out\n" in (project / "backend.yaml").read_text()
    assert "add.out" not in (project / "backend.yaml").read_text()
    assert mine.read_text() == "# my own inputs\n"  # created once, then the user's


def test_dry_run_writes_nothing(project: Path, cli_run: CliRun) -> None:
    before = tree(project)
    result = adopt(cli_run, project, "--top", "1", "--dry-run")
    assert result.exit_code == 0, result.output
    assert "adopt aten::add.out" in result.output and "update  backend.yaml" in result.output
    assert tree(project) == before


def test_top_skips_ops_the_yaml_lists_already(project: Path, cli_run: CliRun) -> None:
    stale = report(ops=[_op("aten::abs.out", "fallback", 2.0), _op("aten::mm.out", "fallback", 0.1)])
    (project / "coverage.json").write_text(json.dumps(stale))
    result = adopt(cli_run, project, "--top", "1")
    assert result.exit_code == 0, result.output
    assert "adopted aten::mm.out" in result.output
    assert "no test (" not in result.output and "test none (the report kept no call signature)" in result.output


BAD_REPORTS: list[tuple[str, Any, str]] = [
    ("another device", report(device="cuda"), "a report of the 'cuda' device; this project's backend is 'tiny'"),
    (
        "another torch",
        report(torch="2.11.0"),
        f"recorded with torch 2.11.0; this project generates for torch {INSTALLED_TORCH}",
    ),
    ("a newer format", report(version=2), "version: a report of format 2; this scaffold-backend reads format 1"),
    (
        "calls as a string",
        report(ops=[{**_op("aten::add.out", "fallback", 1.0), "calls": "3"}]),
        "ops[0].calls: expected an integer, got a string",
    ),
    (
        "a path for a name",
        report(ops=[_op("aten::../../etc/passwd", "fallback", 1.0)]),
        "ops[0].name: 'aten::../../etc/passwd' is not an operator name",
    ),
    (
        "too many signatures",
        report(ops=[_op("aten::add.out", "fallback", 1.0, [ADD_OUT_CALL] * 65)]),
        "ops[0].shapes: 65 entries; at most 64 are allowed",
    ),
    (
        "a huge tensor",
        report(
            ops=[_op("aten::add.out", "fallback", 1.0, [{**ADD_OUT_CALL, "shapes": [[2**20, 2**20], [8], [4, 8]]}])]
        ),
        "ops[0].shapes[0][0]: a tensor of 1099511627776 elements",
    ),
    (
        "an unknown dtype",
        report(
            ops=[
                _op("aten::add.out", "fallback", 1.0, [{**ADD_OUT_CALL, "dtypes": ["float32", "os.system", "float32"]}])
            ]
        ),
        "ops[0].dtypes[0][1]: 'os.system' is not a torch dtype",
    ),
    (
        "a dangling tensor index",
        report(ops=[_op("aten::add.out", "fallback", 1.0, [{**ADD_OUT_CALL, "arguments": [{"tensor": 7}]}])]),
        "ops[0].arguments[0][0].tensor: 7 is out of range [0, 2]",
    ),
    (
        "negative seconds",
        report(ops=[{**_op("aten::add.out", "fallback", 1.0), "seconds": -1}]),
        "ops[0].seconds: expected a finite number >= 0",
    ),
    (
        "a duplicated op",
        report(ops=[_op("aten::add.out", "fallback", 1.0), _op("aten::add.out", "fallback", 1.0)]),
        "ops[1].name: aten::add.out appears twice (first at ops[0])",
    ),
    ("no ops field", {"version": 1, "torch": INSTALLED_TORCH, "device": "tiny"}, "missing field 'ops'"),
]


@pytest.mark.parametrize(
    ("document", "message"), [case[1:] for case in BAD_REPORTS], ids=[case[0] for case in BAD_REPORTS]
)
def test_a_bad_report_is_one_located_error_and_writes_nothing(
    project: Path, cli_run: CliRun, document: Any, message: str
) -> None:
    (project / "coverage.json").write_text(json.dumps(document))
    before = tree(project)
    result = adopt(cli_run, project, "--top", "1")
    assert result.exit_code == 2
    assert result.output.startswith("error: coverage.json")
    assert message in result.output
    assert tree(project) == before


BAD_TEXTS = [
    ("not JSON", "{", "not JSON: Expecting property name enclosed in double quotes (line 1, column 2)"),
    ("NaN", '{"version": NaN}', "not a valid report: NaN is not JSON"),
    ("duplicate keys", '{"version": 1, "version": 1}', "the key 'version' appears twice"),
    ("nested too deeply", "[" * 100_000, "nested too deeply"),
]


@pytest.mark.parametrize(("text", "message"), [case[1:] for case in BAD_TEXTS], ids=[case[0] for case in BAD_TEXTS])
def test_a_report_that_is_not_json(project: Path, cli_run: CliRun, text: str, message: str) -> None:
    (project / "coverage.json").write_text(text)
    before = tree(project)
    result = adopt(cli_run, project, "--top", "1")
    assert result.exit_code == 2 and message in result.output, result.output
    assert tree(project) == before


CHOICE_ERRORS = [
    (["--op", "aten::ad.out"], "no op 'aten::ad.out' in this report", "did you mean 'aten::add.out'"),
    (["--op", "abs.out"], "'aten::abs.out' already has a kernel of the backend (path: native)", None),
    (["--op", "cat"], "'aten::cat' is composite", None),
    (
        ["--op", "neg.out"],
        "'neg.out' is under fallback.explicit in backend.yaml",
        "remove it from fallback.explicit first",
    ),
    ([], "give either --top N or one or more --op NAME", None),
    (["--top", "1", "--op", "add.out"], "give either --top N or one or more --op NAME", None),
]


@pytest.mark.parametrize(("args", "message", "hint"), CHOICE_ERRORS)
def test_ops_that_cannot_be_adopted(
    project: Path, cli_run: CliRun, args: list[str], message: str, hint: str | None
) -> None:
    before = tree(project)
    result = adopt(cli_run, project, *args)
    assert result.exit_code == 2 and message in result.output, result.output
    assert hint is None or hint in result.output
    assert tree(project) == before


def test_errors_are_one_line_without_a_traceback(project: Path) -> None:
    (project / "coverage.json").write_text(json.dumps(report(device="cuda")))
    process = run_cli_process(["adopt", "coverage.json", "--top", "1", *ADOPT_OPTIONS], project)
    assert process.returncode == 2
    assert process.stderr.startswith("error: coverage.json: a report of the 'cuda' device")
    assert "Traceback" not in process.stderr


def test_the_runtime_writes_what_adopt_reads() -> None:
    """The report format is one contract: what the runtime's report.py builds, parse_coverage_report
    accepts, version included."""
    path = REPO / "runtime" / "python" / "torch_foo" / "coverage" / "report.py"
    spec = importlib.util.spec_from_file_location("coverage_report_writer", path)
    assert spec is not None and spec.loader is not None
    writer = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = writer
    spec.loader.exec_module(writer)
    signature = {
        "shapes": [[2, 3]],
        "dtypes": ["float32"],
        "arguments": [{"tensor": 0}, {"float": "inf"}, {"dtype": "int64"}],
    }
    table = {
        "device_timing": True,
        "ops": [
            {
                "name": "aten::add.out",
                "path": "fallback",
                "calls": 2,
                "host_ns": 5000,
                "overhead_ns": 100,
                "device_ns": None,
                "signatures": [signature],
            },
            {
                "name": "aten::mm",
                "path": "native",
                "calls": 1,
                "host_ns": 900,
                "overhead_ns": 0,
                "device_ns": 700,
                "signatures": [],
            },
        ],
    }
    built = writer.build_report(table, "foo", ["train.py"])
    parsed = parse_coverage_report(json.dumps(built), "report.json")
    assert [op.name for op in parsed.ops] == ["aten::add.out", "aten::mm"]
    assert parsed.ops[0].signatures[0].arguments == ({"tensor": 0}, {"float": "inf"}, {"dtype": "int64"})
    assert parsed.ops[1].seconds == 7e-7  # device time for a native op


# ---- The YAML edit itself --------------------------------------------------------------------

YAML_EDITS = [
    (
        "block list, comments kept",
        "backend: X\nsupported:\n  # core\n  - a   # first\n  - b\n# trailing\nfallback: {}\n",
        "backend: X\nsupported:\n  # core\n  - a   # first\n  - b\n  - add.out\n  - mm.out\n# trailing\nfallback: {}\n",
    ),
    (
        "dashes at the key's column",
        "supported:\n- a\nautograd: []\n",
        "supported:\n- a\n- add.out\n- mm.out\nautograd: []\n",
    ),
    ("quoted entries", "supported:\n    - 'a'\n", "supported:\n    - 'a'\n    - add.out\n    - mm.out\n"),
    ("a flow list", "supported: [a, b]  # two\n", "supported: [a, b, add.out, mm.out]  # two\n"),
    ("an empty flow list", "supported: []\n", "supported: [add.out, mm.out]\n"),
    (
        "an empty value",
        "supported:  # none yet\nshards: 2\n",
        "supported:  # none yet\n  - add.out\n  - mm.out\nshards: 2\n",
    ),
    ("no list yet", "backend: X", "backend: X\nsupported:\n  - add.out\n  - mm.out\n"),
    (
        "Windows line ends",
        "supported:\r\n  - a\r\nshards: 2\r\n",
        "supported:\r\n  - a\r\n  - add.out\r\n  - mm.out\r\nshards: 2\r\n",
    ),
    ("no final line break", "supported:\n  - a", "supported:\n  - a\n  - add.out\n  - mm.out"),
]


@pytest.mark.parametrize(("before", "after"), [case[1:] for case in YAML_EDITS], ids=[case[0] for case in YAML_EDITS])
def test_yaml_edit_inserts_lines_only(before: str, after: str) -> None:
    assert add_to_op_list(before, "b.yaml", "supported", ["add.out", "mm.out"]) == after


def test_yaml_edit_refuses_what_it_cannot_extend() -> None:
    with pytest.raises(BackendYamlError, match="'supported' must be a list"):
        add_to_op_list("supported: abs\n", "b.yaml", "supported", ["mm.out"])


# ---- One transaction -------------------------------------------------------------------------


def test_an_adoption_killed_once_decided_is_completed_by_the_next_generate(project: Path, cli_run: CliRun) -> None:
    from test_faults import kill_at

    kill_at(project, "journal", ["adopt", "coverage.json", "--top", "1", *ADOPT_OPTIONS])
    assert "add.out" not in (project / "backend.yaml").read_text()  # decided, not yet applied
    result = cli_run(GENERATE, project)
    assert result.exit_code == 0, result.output
    assert "  - add.out\n" in (project / "backend.yaml").read_text()
    assert (project / "tests" / "adopted" / "test_add_out.py").is_file()
    assert cli_run([*GENERATE, "--check"], project).exit_code == 0


def test_a_journal_may_write_the_yaml_but_never_delete_it(project: Path, cli_run: CliRun) -> None:
    """The journal is an input: it may name the YAML (adopt writes it) only to replace it."""
    journal = project / "generated" / ".scaffold_transaction.json"
    journal.write_text(json.dumps({"format": 1, "operations": [{"target": "../backend.yaml", "staged": None}]}))
    result = cli_run(GENERATE, project)
    assert result.exit_code == 2
    assert "backend.yaml: a file named by the transaction journal lies outside" in result.output
    assert (project / "backend.yaml").read_text() == SMALL_YAML.read_text()


# ---- The whole loop, on a new project (slow: three builds, one fresh) -------------------------

WORKLOAD = """
import torch

x = torch.randn(1024, 1024).to("qux")
for _ in range(5):
    y = torch.nn.functional.hardtanh(x, -0.5, 0.5)
print(float((y * 2).sum()))
"""

# Kernels for the group of hardtanh, as a team might first write them (through the host: the
# point is the loop, not the kernel), by the stub line each replaces.
HARDTANH_KERNELS = {
    "hardtanh": "return at::clamp(self.cpu(), min_val, max_val).to(self.device());",
    "hardtanh.out": "out.copy_(at::clamp(self.cpu(), min_val, max_val));\n  return out;",
    "hardtanh_": "self.copy_(at::clamp(self.cpu(), min_val, max_val));\n  return self;",
}


@pytest.mark.slow
def test_the_loop_closes_on_a_new_project(tmp_path: Path) -> None:
    """Record a workload, adopt its top fallback op (its test is an expected failure against the
    stub), write the kernel: the op leaves the next report's fallback rows and its test passes."""
    from test_init import init, make_venv, run

    assert init(tmp_path, "qux").returncode == 0
    project = tmp_path / "qux"
    python = make_venv(tmp_path / "venv")
    build = f"{python} -m pip install --no-build-isolation ."

    def built() -> None:
        result = run(build, project, python)
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]

    def recorded() -> dict[str, Any]:
        result = run(f"{python} -W ignore -m torch_qux.coverage --json coverage.json workload.py", project, python)
        assert result.returncode == 0, result.stderr[-3000:]
        return {op["name"]: op for op in json.loads((project / "coverage.json").read_text())["ops"]}

    def adopted_tests() -> str:
        result = run(f"{python} -m pytest -q -rxX tests/adopted", project, python)
        return result.stdout

    built()
    (project / "workload.py").write_text(WORKLOAD)
    before = recorded()
    top = min((op for op in before.values() if op["path"] == "fallback"), key=lambda op: -op["seconds"])
    assert top["name"] == "aten::hardtanh" and top["calls"] == 5

    adopted = run_cli_process(["adopt", "coverage.json", "--top", "1"], project)
    assert adopted.returncode == 0, adopted.stderr
    assert "supported += hardtanh, hardtanh.out, hardtanh_" in adopted.stdout
    built()
    stub_run = adopted_tests()
    assert "1 xfailed" in stub_run and "not implemented yet: qux: aten::hardtanh has no kernel yet" in stub_run

    kernels = project / "kernels" / "hardtanh.cpp"
    text = "#include <ATen/ops/clamp.h>\n" + kernels.read_text()
    for op, body in HARDTANH_KERNELS.items():
        stub = next(line for line in text.splitlines() if f'"{stub_error("qux", op)} (' in line)
        text = text.replace(stub, "  " + body)
    kernels.write_text(text)
    built()
    assert "1 passed" in adopted_tests()
    after = recorded()
    assert after["aten::hardtanh"]["path"] == "native" and after["aten::hardtanh"]["calls"] == 5
    assert not any(op["path"] == "fallback" and op["name"].startswith("aten::hardtanh") for op in after.values())
