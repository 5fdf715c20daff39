"""The OpInfo conformance harness shipped with foo (python -m torch_foo.conformance): its CI
subset passes, a crash is recorded against its op while the sweep goes on, and the expectations
file is strict. The full sweep is `python -m torch_foo.conformance --all` (docs/testing.md)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from torch_foo.conformance.driver import run_sweep
from torch_foo.conformance.expectations import ExpectationsError, load_expectations


def test_ci_subset_matches_the_cpu(tmp_path: Path) -> None:
    report_path = tmp_path / "report.json"
    result = subprocess.run(
        [sys.executable, "-m", "torch_foo.conformance", "--jobs", "2", "--json", str(report_path),
         "--max-failures", "0"],
        capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
    report = json.loads(report_path.read_text())
    summary = report["summary"]
    assert summary["ops_tried"] == len(load_expectations().ci_ops)
    assert summary["samples_failed"] == 0 and summary["crashes"] == 0
    # The subset covers every path a sample can take.
    assert all(summary["passed_by_path"].get(path, 0) > 0
               for path in ("native", "explicit-fallback", "boxed-fallback")), summary
    assert "samples:" in result.stdout and "passed by path:" in result.stdout


_CRASHING_WORKER = textwrap.dedent(
    """
    import ctypes, sys
    from torch.testing._internal.common_methods_invocations import op_db
    from torch_foo.conformance import worker

    for info in op_db:
        if info.name == "abs":
            real = info.op
            def crash(t, *args, _real=real, **kwargs):
                if t.device.type == "foo" and t.dtype == __import__("torch").float64:
                    ctypes.string_at(t.data_ptr(), 1)  # device memory is PROT_NONE: SIGSEGV
                return _real(t, *args, **kwargs)
            info.op = crash
    sys.exit(worker.main())
    """
)


def test_a_crash_is_recorded_against_its_op_and_the_sweep_goes_on(tmp_path: Path) -> None:
    script = tmp_path / "crashing_worker.py"
    script.write_text(_CRASHING_WORKER)
    report = run_sweep(["abs", "neg"], ["float32", "float64", "int64"], jobs=1, chunk_size=2,
                       timeout_s=120, worker_command=(sys.executable, str(script)))
    assert [(c["op"], c["dtype"], c["cause"]) for c in report.crashes] == [
        ("abs", "float64", "crash: SIGSEGV")
    ]
    data = report.to_json()
    # The worker restarted: abs's other dtypes and every neg test ran after the crash.
    assert data["ops"]["abs"]["float32"]["passed"] > 0
    assert data["ops"]["abs"]["int64"]["passed"] > 0
    assert all(data["ops"]["neg"][d]["passed"] > 0 for d in ("float32", "float64", "int64"))
    assert data["ops"]["abs"]["float64"]["result"] == "crashed"


_CHATTY_WORKER = textwrap.dedent(
    """
    import sys
    from torch_foo.conformance import worker

    sys.stderr.write("a fallback warning on every sample\\n" * 20000)  # far more than a pipe holds
    sys.stderr.flush()
    sys.exit(worker.main())
    """
)


def test_a_worker_that_writes_much_to_stderr_is_not_taken_for_hung(tmp_path: Path) -> None:
    # The sweep once sent workers' stderr to a pipe it read only at exit; max_pool2d's backward
    # warns on every sample, filled it, and blocked until the watchdog killed it as "hung".
    script = tmp_path / "chatty_worker.py"
    script.write_text(_CHATTY_WORKER)
    report = run_sweep(["neg"], ["float32"], jobs=1, chunk_size=1, timeout_s=30,
                       worker_command=(sys.executable, str(script)))
    # The end of a crashed worker's stderr says why it died (an abort's message comes last).
    assert report.crashes == [], [crash["detail"][-3000:] for crash in report.crashes]
    assert report.to_json()["ops"]["neg"]["float32"]["passed"] > 0


def test_expectations_need_a_reason_and_known_keys(tmp_path: Path) -> None:
    path = tmp_path / "expectations.toml"
    path.write_text('[[deny]]\nop = "add"\n')
    with pytest.raises(ExpectationsError, match="every entry needs a 'reason'"):
        load_expectations(path)
    path.write_text('[[deny]]\nop = "add"\nreason = "x"\nwhy = "y"\n')
    with pytest.raises(ExpectationsError, match="unknown key"):
        load_expectations(path)
    path.write_text('[[tolerance]]\nop = "add"\nreason = "x"\n')
    with pytest.raises(ExpectationsError, match="give 'atol', 'rtol' or both"):
        load_expectations(path)
    path.write_text('[dtypes]\ncoverage = "gpu"\n')
    with pytest.raises(ExpectationsError, match="coverage is 'gpu'; valid: cuda, cpu"):
        load_expectations(path)
    path.write_text('[dtypes]\ncoverage = "cpu"\nreason = "x"\n')
    assert load_expectations(path).dtype_coverage == "cpu"
    assert load_expectations().dtype_coverage == "cuda"  # foo's, as a scaffolded backend's


def test_the_shipped_expectations_load_and_name_real_ops() -> None:
    import torch
    from torch.torch_version import TorchVersion
    from torch_foo.conformance.driver import all_op_keys

    expectations = load_expectations()
    known = set(all_op_keys())
    entries = (*expectations.deny, *expectations.expected_failure, *expectations.tolerance,
               *expectations.wider_reference)
    # An op OpInfo added after this torch is named by an entry that says since when.
    newer = {e.op for e in entries if e.since is not None and TorchVersion(torch.__version__) < e.since}
    listed = [*expectations.ci_ops] + [e.op for e in entries if e.op not in newer]
    assert sorted(set(listed) - known) == []
    assert not newer & known, f"OpInfo of torch {torch.__version__} has {sorted(newer & known)}: drop their 'since'"
