"""One worker process of the sweep: instantiates PyTorch's device-generic OpInfo test for some
ops on this backend's device and appends one JSON line per event to a file, flushed at once, so
that the driver knows which test was running if the process dies.

Events: {"event": "start", "test"}; {"event": "sample", "test", "index", "phase", "outcome",
"path", "cause"}; {"event": "stop", "test", "result", "reason"}.
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import sys
import unittest
import warnings
from collections.abc import Callable, Iterator
from typing import Any, TextIO

import torch
from torch.testing._comparison import default_tolerances
from torch.testing._internal.common_device_type import instantiate_device_type_tests, ops
from torch.testing._internal.common_methods_invocations import op_db
from torch.testing._internal.common_utils import TestCase
from torch.utils._pytree import tree_flatten, tree_map, tree_unflatten

from .expectations import DTYPE_NAMES, Expectations, load_expectations

DTYPES = tuple(getattr(torch, name) for name in DTYPE_NAMES)

# Where the CPU has no kernel for a dtype CUDA's accept, the CPU reference is computed in the
# first of these the CPU takes, and its results cast back to the device result's dtypes.
_WIDER: dict[torch.dtype, tuple[torch.dtype, ...]] = {
    torch.float16: (torch.float32,),
    torch.bfloat16: (torch.float32,),
    torch.bool: (torch.int64, torch.float64),
    torch.int8: (torch.int64, torch.float64),
    torch.uint8: (torch.int64, torch.float64),
    torch.int16: (torch.int64, torch.float64),
    torch.int32: (torch.int64, torch.float64),
    torch.int64: (torch.float64,),
}


def op_key(op: Any) -> str:
    """How the sweep names an OpInfo: its name, with its variant after a dot."""
    return f"{op.name}.{op.variant_test_name}" if op.variant_test_name else op.name


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def load_backend() -> str:
    """Imports the backend package this harness ships in; returns the device name."""
    importlib.import_module(__package__.rsplit(".", 1)[0])
    return torch._C._get_privateuse1_backend_name()


class FallbackProbe:
    """Which way a device call ran, from the generated fallback's counters: ops that reached the
    CPU fallback with a kernel registered for the backend are explicit (typed) fallbacks, those
    without one went through the boxed fallback; no fallback at all means native kernels (and
    PyTorch's composites of them)."""

    def __init__(self, device: str) -> None:
        namespace = getattr(torch.ops, device)
        self._counts: Callable[[], tuple[list[str], list[int]]] = namespace._fallback_counts
        self._reset: Callable[[], None] = namespace._reset_fallback_counts
        self._explicit: dict[str, bool] = {}

    def reset(self) -> None:
        self._reset()

    def path(self) -> str:
        names, _ = self._counts()
        if not names:
            return "native"
        if any(not self._is_explicit(name) for name in names):
            return "boxed-fallback"
        return "explicit-fallback"

    def _is_explicit(self, name: str) -> bool:
        if name not in self._explicit:
            self._explicit[name] = torch._C._dispatch_has_kernel_for_dispatch_key(
                name, "PrivateUse1"
            )
        return self._explicit[name]


_NUMBERS = re.compile(r"\d+(\.\d+)?(e[-+]?\d+)?")


def failure_cause(error: BaseException) -> str:
    """A short cause that groups alike failures: the error's first line, numbers masked."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    first = lines[0] if lines else ""
    kind = "mismatch" if isinstance(error, AssertionError) else type(error).__name__
    return f"{kind}: {_NUMBERS.sub('N', first)}"[:200]


class Recorder:
    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.current_test = ""

    def write(self, **event: Any) -> None:
        self._stream.write(json.dumps(event, sort_keys=True) + "\n")
        self._stream.flush()

    def sample(self, index: int, phase: str, outcome: str, path: str = "", cause: str = "") -> None:
        self.write(
            event="sample",
            test=self.current_test,
            index=index,
            phase=phase,
            outcome=outcome,
            path=path,
            cause=cause,
        )


def _tensors(value: Any) -> list[torch.Tensor]:
    return [leaf for leaf in tree_flatten(value)[0] if isinstance(leaf, torch.Tensor)]


def _device_leaf(value: Any) -> Any:
    """A fresh leaf that requires grad for every floating and complex tensor. Samples are made
    without requires_grad, as test_compare_cpu does: several reference_inputs cannot make them
    with it (clamp's integral bounds) or hand out flagged tensors that are not in the graph."""
    if isinstance(value, torch.Tensor) and (value.is_floating_point() or value.is_complex()):
        return value.detach().requires_grad_(True)
    return value


def _cpu_twin(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.detach().to("cpu").requires_grad_(value.requires_grad)
    return value


def _widened(value: Any, dtype: torch.dtype, wider: torch.dtype) -> Any:
    """A CPU twin's tensor of `dtype` in `wider` (in the autograd graph: gradients reach the
    twin's own leaves in their own dtype)."""
    if isinstance(value, torch.Tensor) and value.dtype == dtype:
        return value.to(wider)
    return value


def _cast_like(reference: Any, device_result: Any, wider: torch.dtype) -> Any:
    """The reference computed in `wider`, its tensors of `wider` (or its complex counterpart) in
    the dtypes of the device's results; other tensors and a differently shaped result unchanged,
    for assertEqual to report."""
    reference_leaves, spec = tree_flatten(reference)
    device_leaves = tree_flatten(device_result)[0]
    if len(reference_leaves) != len(device_leaves):
        return reference
    widened = {wider, wider.to_complex()} if wider.is_floating_point else {wider}
    leaves = [
        r.to(d.dtype)
        if isinstance(r, torch.Tensor) and isinstance(d, torch.Tensor) and r.dtype in widened
        else r
        for r, d in zip(reference_leaves, device_leaves, strict=True)
    ]
    return tree_unflatten(leaves, spec)


def _sample_leaves(sample: Any) -> list[torch.Tensor]:
    return [t for t in _tensors([sample.input, sample.args, sample.kwargs]) if t.requires_grad]


def _grad_outputs(outputs: list[torch.Tensor], seed: int) -> list[torch.Tensor]:
    """Gradients for the outputs, made on the CPU (the same values for both twins)."""
    generator = torch.Generator().manual_seed(seed)
    grads = []
    for output in outputs:
        grad = torch.randn(output.shape, dtype=output.dtype, generator=generator)
        grads.append(grad)
    return grads


class _WrongOnTheCpu(Exception):
    """The CPU twin is not run in the test's dtype: the expectations file says its kernel
    computes that dtype wrongly ([[wider_reference]]), so the reference is computed wider."""

    def __str__(self) -> str:
        return "its kernel computes this dtype wrongly (expectations.toml: wider_reference)"


class SampleRunner:
    """Runs one (op, dtype) test's samples and records each: the body of the test method."""

    def __init__(self, recorder: Recorder, probe: FallbackProbe, expectations: Expectations):
        self.recorder = recorder
        self.probe = probe
        self.expectations = expectations
        self.dtype: torch.dtype | None = None
        """The dtype of the test that runs."""

    def run(self, test: TestCase, device: str, dtype: torch.dtype, op: Any) -> None:
        key, name = op_key(op), dtype_name(dtype)
        self.dtype = dtype
        denied = self.expectations.denied(key, name)
        if denied is not None:
            raise unittest.SkipTest(f"denied in expectations.toml: {denied.reason}")
        tolerance = self.expectations.tolerance_for(key, name)
        atol = tolerance.atol if tolerance else None
        rtol = tolerance.rtol if tolerance else None
        if tolerance is not None:
            atol = atol if atol is not None else 0.0
            rtol = rtol if rtol is not None else 0.0
        requires_grad = op.supports_autograd and (dtype.is_floating_point or dtype.is_complex)
        failures = 0
        # As test_compare_cpu: reference_inputs (sample_inputs plus the reference cases, when defined).
        samples: Iterator[Any] = iter(
            op.reference_inputs(device, dtype, requires_grad=False)
        )
        index = 0
        while True:
            try:
                sample = next(samples)
            except StopIteration:
                break
            except Exception as error:  # making samples on the device already failed
                self.recorder.sample(index, "sample-inputs", "failed", "native", failure_cause(error))
                failures += 1
                break
            failures += self._run_sample(test, op, sample, index, atol, rtol, requires_grad)
            index += 1
        if failures:
            raise AssertionError(f"{failures} sample(s) differ from the CPU")

    def _run_sample(
        self,
        test: TestCase,
        op: Any,
        sample: Any,
        index: int,
        atol: float | None,
        rtol: float | None,
        requires_grad: bool,
    ) -> int:
        if requires_grad:
            sample = sample.transform(_device_leaf)
        cpu_sample = sample.transform(_cpu_twin)
        wider: torch.dtype | None = None
        try:
            if self._cpu_kernel_is_wrong(op):
                raise _WrongOnTheCpu
            cpu_result = cpu_sample.output_process_fn_grad(
                op(cpu_sample.input, *cpu_sample.args, **cpu_sample.kwargs)
            )
        except Exception as error:
            cpu_result, wider = self._reference_in_wider_dtype(op, cpu_sample)
            if wider is None:
                cause = f"CPU twin raises: {failure_cause(error)}"
                self.recorder.sample(index, "forward", "skipped", "", cause)
                return 0
        self.probe.reset()
        try:
            device_result = sample.output_process_fn_grad(
                op(sample.input, *sample.args, **sample.kwargs)
            )
            path = self.probe.path()
            if wider is not None:
                cpu_result = _cast_like(cpu_result, device_result, wider)
                if atol is None and rtol is None:
                    # The test dtype's tolerances, also for results in a wider dtype (stft of
                    # bfloat16 returns complex64 rounded from bfloat16 products).
                    rtol, atol = default_tolerances(self.dtype) if self.dtype else (None, None)
                    rtol, atol = max(rtol or 0.0, test.rel_tol), max(atol or 0.0, test.precision)
            test.assertEqual(device_result, cpu_result, atol=atol, rtol=rtol, exact_device=False)
        except Exception as error:
            self.recorder.sample(index, "forward", "failed", self.probe.path(), failure_cause(error))
            return 1
        self.recorder.sample(index, "forward", "passed", path)
        return self._run_backward(test, sample, cpu_sample, device_result, cpu_result, index, atol, rtol)

    def _cpu_kernel_is_wrong(self, op: Any) -> bool:
        """Whether the expectations file says the CPU's kernel computes the test's dtype wrongly."""
        return self.dtype is not None and self.expectations.needs_wider_reference(op_key(op), dtype_name(self.dtype))

    def _reference_in_wider_dtype(self, op: Any, cpu_sample: Any) -> tuple[Any, torch.dtype | None]:
        """The CPU reference of a sample in a dtype CUDA's kernels accept and the CPU's do not
        (the dtype of the test): computed in the first wider dtype the CPU takes, or nothing."""
        dtype = self.dtype
        if dtype is None or (dtype in op.supported_dtypes("cpu") and not self._cpu_kernel_is_wrong(op)):
            return None, None
        for wider in _WIDER.get(dtype, ()):
            # Not SampleInput.transform, which runs under no_grad: the widened tensors stay in
            # the graph, so that the backward is compared and grad-mode errors are raised alike.
            input_, args, kwargs = tree_map(
                lambda value, w=wider: _widened(value, dtype, w),
                (cpu_sample.input, cpu_sample.args, cpu_sample.kwargs),
            )
            try:
                result = op(input_, *args, **kwargs)
            except Exception:
                continue
            return cpu_sample.output_process_fn_grad(result), wider
        return None, None

    def _run_backward(
        self,
        test: TestCase,
        sample: Any,
        cpu_sample: Any,
        device_result: Any,
        cpu_result: Any,
        index: int,
        atol: float | None,
        rtol: float | None,
    ) -> int:
        device_leaves, cpu_leaves = _sample_leaves(sample), _sample_leaves(cpu_sample)
        device_outputs = [t for t in _tensors(device_result) if t.requires_grad]
        cpu_outputs = [t for t in _tensors(cpu_result) if t.requires_grad]
        if not device_leaves or not cpu_outputs or len(device_outputs) != len(cpu_outputs):
            return 0
        grads = _grad_outputs(cpu_outputs, seed=index)
        try:
            cpu_grads = torch.autograd.grad(cpu_outputs, cpu_leaves, grads, allow_unused=True)
        except Exception as error:
            self.recorder.sample(index, "backward", "skipped", "", f"CPU twin raises: {failure_cause(error)}")
            return 0
        self.probe.reset()
        try:
            device_grads = torch.autograd.grad(
                device_outputs,
                device_leaves,
                [grad.to(device_outputs[0].device) for grad in grads],
                allow_unused=True,
            )
            path = self.probe.path()
            test.assertEqual(device_grads, cpu_grads, atol=atol, rtol=rtol, exact_device=False)
        except Exception as error:
            self.recorder.sample(index, "backward", "failed", self.probe.path(), failure_cause(error))
            return 1
        self.recorder.sample(index, "backward", "passed", path)
        return 0


def test_in_dtypes_of(selected_ops: list[Any], device: str, coverage: str) -> None:
    """Makes OpInfo answer `supported_dtypes(device)` with the dtypes it lists for `coverage`
    ("cuda": no CUDA need be present, the database lists them), so that @ops instantiates each
    op's test in those. PyTorch asks the dtypes of the device's type, which for an out-of-tree
    device are the CPU's. Only in a worker process, whose op_db is its own."""
    if coverage == "cpu":
        return
    for op in selected_ops:
        def supported_dtypes(device_type: str, _op: Any = op) -> set[torch.dtype]:
            if device_type in (device, "privateuse1"):
                device_type = coverage
            return set(type(_op).supported_dtypes(_op, device_type))

        op.supported_dtypes = supported_dtypes


def make_test_class(selected_ops: list[Any], runner: SampleRunner) -> type[TestCase]:
    # Named TestCommon so that PyTorch's own DecorateInfo entries for
    # ('TestCommon', 'test_compare_cpu') (skips, expected failures, tolerances) apply here.
    class TestCommon(TestCase):
        @ops(selected_ops, allowed_dtypes=DTYPES)  # type: ignore[untyped-decorator]  # torch's harness
        def test_compare_cpu(self, device: str, dtype: torch.dtype, op: Any) -> None:
            runner.run(self, device, dtype, op)

    return TestCommon


class RecordingResult(unittest.TestResult):
    """Writes start/stop events around every test, whatever decorator ended it."""

    def __init__(
        self, recorder: Recorder, tests: dict[str, tuple[str, str]], cpu_dtypes: dict[str, set[str]]
    ) -> None:
        super().__init__()
        self.recorder = recorder
        self.tests = tests
        self.cpu_dtypes = cpu_dtypes
        self._outcome = ("passed", "")

    def startTest(self, test: unittest.TestCase) -> None:
        super().startTest(test)
        self.recorder.current_test = test._testMethodName
        self._outcome = ("passed", "")
        op, dtype = self.tests.get(test._testMethodName, ("?", "?"))
        # Whether OpInfo lists the dtype for the CPU too (else only CUDA's coverage asks for it).
        self.recorder.write(event="start", test=test._testMethodName, op=op, dtype=dtype,
                            cpu_dtype=dtype in self.cpu_dtypes.get(op, set()))

    def stopTest(self, test: unittest.TestCase) -> None:
        super().stopTest(test)
        result, reason = self._outcome
        self.recorder.write(event="stop", test=test._testMethodName, result=result, reason=reason)

    def addFailure(self, test: unittest.TestCase, err: Any) -> None:
        super().addFailure(test, err)
        self._outcome = ("failed", failure_cause(err[1]))

    def addError(self, test: unittest.TestCase, err: Any) -> None:
        super().addError(test, err)
        self._outcome = ("failed", failure_cause(err[1]))

    def addSkip(self, test: unittest.TestCase, reason: str) -> None:
        super().addSkip(test, reason)
        self._outcome = ("skipped", reason.splitlines()[0][:200] if reason else "")

    def addExpectedFailure(self, test: unittest.TestCase, err: Any) -> None:
        super().addExpectedFailure(test, err)
        self._outcome = ("expected-failure", "PyTorch marks test_compare_cpu expected to fail")

    def addUnexpectedSuccess(self, test: unittest.TestCase) -> None:
        super().addUnexpectedSuccess(test)
        self._outcome = ("passed", "PyTorch expected a failure")


def select_ops(keys: list[str]) -> list[Any]:
    wanted = set(keys)
    return [op for op in op_db if op_key(op) in wanted]


def test_names(selected: list[Any], device: str) -> dict[str, tuple[str, str]]:
    """The instantiated test names, mapped to (op key, dtype name)."""
    return {
        f"test_compare_cpu_{op.formatted_name}_{device_name}_{dtype_name(dtype)}": (
            op_key(op),
            dtype_name(dtype),
        )
        for op in selected
        for dtype in DTYPES
        for device_name in (device, "privateuse1")
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--events", required=True, help="JSON-lines file to append events to")
    parser.add_argument("--ops", nargs="+", required=True, help="OpInfo keys to run")
    parser.add_argument("--done", nargs="*", default=[], help="test names already run")
    parser.add_argument("--dtypes", nargs="+", default=None)
    args = parser.parse_args(argv)

    warnings.simplefilter("ignore")  # the fallback warns once per op; the probe counts instead
    device = load_backend()
    selected = select_ops(args.ops)
    expectations = load_expectations()
    # What the CPU reference runs in the test's own dtype: OpInfo's CPU dtypes, less those whose
    # CPU kernel is wrong.
    cpu_dtypes = {
        op_key(op): {dtype_name(d) for d in op.supported_dtypes("cpu")
                     if not expectations.needs_wider_reference(op_key(op), dtype_name(d))}
        for op in selected
    }
    test_in_dtypes_of(selected, device, expectations.dtype_coverage)
    with open(args.events, "a", encoding="utf-8") as stream:
        recorder = Recorder(stream)
        runner = SampleRunner(recorder, FallbackProbe(device), expectations)
        generic = make_test_class(selected, runner)
        scope: dict[str, Any] = {generic.__name__: generic}
        instantiate_device_type_tests(generic, scope, only_for=[device], allow_mps=False)
        done = set(args.done)
        wanted_dtypes = set(args.dtypes) if args.dtypes else None
        suite = unittest.TestSuite()
        for test_class in scope.values():
            for test in unittest.defaultTestLoader.loadTestsFromTestCase(test_class):
                assert isinstance(test, unittest.TestCase)  # a test case's suite holds its tests
                name = test._testMethodName
                if name in done:
                    continue
                if wanted_dtypes and name.rsplit("_", 1)[-1] not in wanted_dtypes:
                    continue
                suite.addTest(test)
        suite.run(RecordingResult(recorder, test_names(selected, device), cpu_dtypes))
    return 0


if __name__ == "__main__":
    sys.exit(main())
