"""The model harness shipped with foo (python -m torch_foo.models): its CI subset of real
architectures matches the CPU, and the harness itself reports what CUDA users would otherwise
find out by diverging training: a tie that came apart, a gradient that is wrong on the device only.
The whole catalogue is `python -m torch_foo.models --all` (docs/testing.md)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
from torch import nn
from torch_foo.models.catalogue import BY_NAME, CATALOGUE, ModelSpec, Workload
from torch_foo.models.checks import run_model
from torch_foo.models.driver import run_worker
from torch_foo.models.report import build_report, compare_reports

from foo_testing import foo, needs_host_views

DEVICE = "foo"
LIBRARIES = ("torchvision", "timm", "transformers")


def needs(*libraries: str) -> pytest.MarkDecorator:
    """Skips where a model library is missing: the runtime's 'models' (transformers) and 'vision'
    (torchvision, timm) extras, which README's first line installs where torch has them."""
    missing = [name for name in libraries if importlib.util.find_spec(name) is None]
    return pytest.mark.skipif(bool(missing), reason=f"not installed: {', '.join(missing)}")


# ---- the harness against known-bad models ---------------------------------------------------------


class TiedModel(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embedding = nn.Embedding(9, 4)
        self.head = nn.Linear(4, 9, bias=False)
        self.head.weight = self.embedding.weight

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        logits: torch.Tensor = self.head(torch.tanh(self.embedding(tokens)))
        return logits


class UntiesWhenMoved(TiedModel):
    """What Module.to() did on a device without _has_compatible_shallow_copy_type."""

    def _apply(self, fn: Callable[[torch.Tensor], torch.Tensor], recurse: bool = True) -> UntiesWhenMoved:
        super()._apply(fn, recurse)  # type: ignore[no-untyped-call]  # torch's Module._apply has no annotations
        if self.head.weight.device.type == DEVICE:
            self.head.weight = nn.Parameter(self.head.weight.detach().clone())
        return self  # what Module._apply returns


class _WrongOnTheDevice(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        return x * 1.0

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        return grad * (0.7 if grad.device.type == DEVICE else 1.0)


class WrongGradientOnTheDevice(TiedModel):
    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        logits: torch.Tensor = self.head(torch.tanh(_WrongOnTheDevice.apply(self.embedding(tokens))))
        return logits


class _OffOnTheCpuInFloat32(torch.autograd.Function):
    """The CPU's float32 gradient off by more than the tolerance, as a reduction summed in another
    order is off where the exact gradient is zero; the device's and the float64 one are exact."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor) -> torch.Tensor:
        return x * 1.0

    @staticmethod
    def backward(ctx: Any, grad: torch.Tensor) -> torch.Tensor:
        off = grad.device.type == "cpu" and grad.dtype == torch.float32
        return grad * (1.001 if off else 1.0)


class RoundedDifferentlyOnTheCpu(TiedModel):
    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        logits: torch.Tensor = self.head(torch.tanh(_OffOnTheCpuInFloat32.apply(self.embedding(tokens))))
        return logits


class ThroughTheFallback(TiedModel):
    """A step with an op foo has no kernel for: no capture may hold the CPU fallback."""

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return super().forward(tokens).cumprod(dim=-1)


def _spec(model_class: type[nn.Module]) -> ModelSpec:
    def build() -> Workload:
        tokens = torch.tensor([[1, 5, 2], [8, 0, 3]])
        return Workload(model_class(), {"tokens": tokens}, loss=lambda out: out.square().mean(),
                        output=lambda out: out)

    return ModelSpec(f"test.{model_class.__name__}", "torch", "decoder", build)


def test_a_tied_model_passes_eagerly_with_its_tie_counted() -> None:
    result = run_model(_spec(TiedModel), DEVICE, ("eager", "autocast"))
    assert {stage: r.status for stage, r in result.stages.items()} == {"eager": "pass", "autocast": "pass"}
    assert result.ties == 1


GRAPHS = hasattr(torch.accelerator, "Graph")
"""torch.accelerator.Graph: torch 2.14 on."""


@needs_host_views
@pytest.mark.skipif(not GRAPHS, reason=f"torch {torch.__version__} has no torch.accelerator.Graph")
def test_the_graphed_stage_replays_the_training_step_as_eager_steps() -> None:
    result = run_model(_spec(TiedModel), DEVICE, ("eager", "graphed"))
    assert result.stages["graphed"].status == "pass", result.stages["graphed"].detail
    assert result.stages["graphed"].worst is not None and result.stages["graphed"].worst.relative < 1e-6


@needs_host_views  # elsewhere foo's kernels decline: the step's first op is refused instead
def test_a_step_that_cannot_be_captured_skips_the_graphed_stage_naming_the_op() -> None:
    with pytest.warns(UserWarning, match="cumprod"):  # the fallback's warning
        result = run_model(_spec(ThroughTheFallback), DEVICE, ("eager", "graphed"))
    assert result.stages["eager"].status == "pass", result.stages["eager"].detail
    graphed = result.stages["graphed"]
    why = "the step cannot be captured: aten::cumprod" if GRAPHS else f"torch {torch.__version__} has no torch.accel"
    assert graphed.status == "skipped" and graphed.detail.startswith(why), graphed.detail


def test_the_float16_amp_stage_passes_a_correct_model_and_fails_a_wrong_gradient() -> None:
    # CUDA's recipe: float16 autocast and a GradScaler. The step must be taken (not skipped for
    # infinite gradients) on both sides, and a device wrong by 30 % must fail.
    result = run_model(_spec(TiedModel), DEVICE, ("amp-fp16",))
    assert result.stages["amp-fp16"].status == "pass", result.stages["amp-fp16"].detail
    wrong = run_model(_spec(WrongGradientOnTheDevice), DEVICE, ("amp-fp16",)).stages["amp-fp16"]
    assert wrong.status == "fail" and wrong.detail.startswith("float16 AMP step: update of embedding.weight: "), (
        wrong.detail)


def test_a_tie_that_comes_apart_is_a_failure() -> None:
    result = run_model(_spec(UntiesWhenMoved), DEVICE, ("eager", "compiled"))
    assert result.stages["eager"].status == "fail"
    assert "tied parameters" in result.stages["eager"].detail and "head.weight" in result.stages["eager"].detail
    assert result.stages["compiled"].status == "skipped"


def test_a_gradient_wrong_on_the_device_only_is_a_failure_naming_the_parameter() -> None:
    result = run_model(_spec(WrongGradientOnTheDevice), DEVICE, ("eager",))
    assert result.stages["eager"].status == "fail"
    assert result.stages["eager"].detail.startswith("grad of embedding.weight: differs by")


def test_a_gradient_wrong_on_the_device_is_measured_against_the_exact_result_too() -> None:
    detail = run_model(_spec(WrongGradientOnTheDevice), DEVICE, ("eager",)).stages["eager"].detail
    assert "from the exact (float64) result" in detail, detail


def test_the_device_is_held_to_the_exact_result_where_the_cpus_float32_is_off() -> None:
    result = run_model(_spec(RoundedDifferentlyOnTheCpu), DEVICE, ("eager",))
    assert result.stages["eager"].status == "pass", result.stages["eager"].detail
    worst = result.stages["eager"].worst
    assert worst is not None and worst.relative < 1e-6, worst


@needs_host_views  # Inductor's C++ kernels for the device compute on host views
def test_a_gradient_wrong_on_the_device_only_fails_the_compiled_amp_step_too() -> None:
    # The AMP step is held to the CPU's AMP error, eager or compiled: that slack must not hide
    # a device that is wrong by 30 %.
    result = run_model(_spec(WrongGradientOnTheDevice), DEVICE, ("amp-train",))
    assert result.stages["amp-train"].status == "fail", result.stages["amp-train"].detail
    assert result.stages["amp-train"].detail.startswith("compiled AMP step: update of embedding.weight: ")


def test_a_missing_library_is_a_skip_that_says_so(tmp_path: Path) -> None:
    def never_built() -> Workload:
        raise AssertionError("a model whose library is missing is never built")

    spec = ModelSpec("test.missing", "no_such_model_library", "cnn", never_built)
    assert not spec.available()
    from torch_foo.models import catalogue

    catalogue.BY_NAME[spec.name] = spec
    try:
        result = run_worker(spec.name, ("eager",), tmp_path, timeout_s=60)
    finally:
        del catalogue.BY_NAME[spec.name]
    assert result["stages"]["eager"]["status"] == "skipped"
    assert "no_such_model_library is not installed" in result["stages"]["eager"]["detail"]


def test_compare_names_what_got_worse() -> None:
    def result(status: str, calls: int) -> dict[str, object]:
        return {"library": "timm", "family": "cnn", "parameters": 1, "ties": 0, "fallback_calls": calls,
                "fallback_ops": {}, "stages": {"eager": {"status": status, "detail": "grad of w: differs"}}}

    old = build_report(DEVICE, {"a": result("pass", 3), "b": result("pass", 0)})
    new = build_report(DEVICE, {"a": result("fail", 3), "b": result("pass", 2)})
    assert compare_reports(old, new) == ["a eager: passed, now fail: grad of w: differs", "b: fallback calls 0 -> 2"]
    assert compare_reports(new, new) == []


def test_the_catalogue_covers_the_goal() -> None:
    families = {spec.family for spec in CATALOGUE}
    assert len(CATALOGUE) >= 20 and len({spec.name for spec in CATALOGUE}) == len(CATALOGUE)
    assert families == {"cnn", "vision-transformer", "encoder", "decoder", "encoder-decoder"}
    assert {spec.library for spec in CATALOGUE} == set(LIBRARIES)


def test_the_command_line_lists_and_refuses_unknown_models() -> None:
    listing = subprocess.run([sys.executable, "-m", "torch_foo.models", "--list"], capture_output=True, text=True)
    assert listing.returncode == 0 and "transformers.gpt2" in listing.stdout
    unknown = subprocess.run([sys.executable, "-m", "torch_foo.models", "--models", "no.such"],
                             capture_output=True, text=True)
    assert unknown.returncode == 2 and "unknown model(s): no.such" in unknown.stderr


# ---- real models (the CI subset) ------------------------------------------------------------------


def _run_harness(tmp_path: Path, *arguments: str) -> dict[str, Any]:
    report_path = tmp_path / "models.json"
    process = subprocess.run([sys.executable, "-m", "torch_foo.models", "--json", str(report_path), *arguments],
                             capture_output=True, text=True)
    assert process.returncode == 0, process.stdout[-6000:] + process.stderr[-3000:]
    report: dict[str, Any] = json.loads(report_path.read_text())
    return report


@pytest.mark.slow
@needs("transformers")
def test_ci_subset_matches_the_cpu_eagerly_and_under_autocast(tmp_path: Path) -> None:
    """Every model of the subset passes; one whose library is missing (torchvision where the
    installed torch has no release of it yet) is reported as skipped, with the reason."""
    report = _run_harness(tmp_path, "--stages", "eager", "autocast", "--jobs", "2")
    models = report["models"]
    assert isinstance(models, dict)
    assert set(models) == {spec.name for spec in CATALOGUE if spec.ci}
    for name, result in models.items():
        spec = BY_NAME[name]
        if spec.available():
            assert {stage["status"] for stage in result["stages"].values()} == {"pass"}, (name, result)
        else:
            assert {(stage["status"], stage["detail"]) for stage in result["stages"].values()} == {
                ("skipped", spec.why_unavailable())}
    # GPT-2's wte/lm_head, BERT's decoder, T5's shared embedding: tied on the device as on the CPU.
    assert all(models[name]["ties"] >= 1 for name in ("transformers.gpt2", "transformers.bert", "transformers.t5"))


@pytest.mark.slow
@needs("transformers")
def test_a_language_model_passes_compiled_and_amp_training(tmp_path: Path) -> None:
    report = _run_harness(tmp_path, "--models", "transformers.gpt2", "--stages", "compiled", "amp-train")
    stages = report["models"]["transformers.gpt2"]["stages"]
    assert {stage: data["status"] for stage, data in stages.items()} == {"compiled": "pass", "amp-train": "pass"}


@pytest.mark.slow
@needs("transformers")
def test_a_mixture_of_experts_runs_its_cuda_path_and_matches_the_cpu(tmp_path: Path) -> None:
    """transformers routes tokens to experts with histc on int32 ids on every device but the CPU
    and MPS (the CPU's histc has no integer kernel; CUDA's has), then a grouped matmul: the device
    takes that path and matches the CPU, which takes its float one."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class HistcInputs(TorchDispatchMode):  # type: ignore[no-untyped-call]  # torch's mode has no annotations
        def __init__(self) -> None:
            super().__init__()  # type: ignore[no-untyped-call]
            self.seen: set[tuple[torch.dtype, str]] = set()

        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            if func is torch.ops.aten.histc.default:
                self.seen.add((args[0].dtype, args[0].device.type))
            return func(*args, **(kwargs or {}))

    workload = BY_NAME["transformers.mixtral"].build()
    model = workload.model.to(DEVICE)
    with HistcInputs() as histc:
        model(**{key: value.to(DEVICE) for key, value in workload.inputs.items()})
    assert histc.seen == {(torch.int32, DEVICE)}

    report = _run_harness(tmp_path, "--models", "transformers.mixtral", "--stages", "eager", "autocast")
    stages = report["models"]["transformers.mixtral"]["stages"]
    assert {stage: data["status"] for stage, data in stages.items()} == {"eager": "pass", "autocast": "pass"}


# What still runs inline in an eager training step (forward, backward, AdamW): an inline kernel waits
# for all the work queued before it, so the host stops feeding the device there. Only kernels whose
# output shape the host cannot know before the data are left, and none of them is in these steps.
INLINE_KERNELS_OF_A_STEP: dict[str, set[str]] = {
    "torchvision.mobilenet_v3_small": set(),
    "torchvision.efficientnet_b0": set(),
    "torchvision.swin": set(),
    "transformers.gpt2": set(),
}


@pytest.mark.parametrize(
    "name", [pytest.param(name, marks=needs(BY_NAME[name].library)) for name in INLINE_KERNELS_OF_A_STEP]
)
def test_a_training_step_runs_its_kernels_launched(name: str, tmp_path: Path) -> None:
    from torch.profiler import ProfilerActivity, profile

    torch.manual_seed(0)
    workload = BY_NAME[name].build()
    model = workload.model.to(DEVICE)
    inputs = {key: value.to(DEVICE) if isinstance(value, torch.Tensor) else value
              for key, value in workload.inputs.items()}
    optimizer = torch.optim.AdamW(model.parameters())

    def step() -> None:
        optimizer.zero_grad()
        workload.loss(model(**inputs)).backward()
        optimizer.step()

    step()  # AdamW's state exists from here on
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.PrivateUse1]) as prof:
        step()
        foo.synchronize()
    trace = tmp_path / "trace.json"
    prof.export_chrome_trace(str(trace))
    events = json.loads(trace.read_text())["traceEvents"]
    inline = {event["name"].removeprefix("foo_kernel::") for event in events
              if event.get("cat") == "kernel" and "inline" in event["args"]}
    assert inline == INLINE_KERNELS_OF_A_STEP[name]
