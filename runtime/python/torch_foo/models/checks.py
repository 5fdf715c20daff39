"""What the harness checks on one model, each stage against the CPU from the same weights:

eager      forward + backward + one AdamW step, on the device and on the CPU: the output, the
           loss, every gradient (by parameter name; a parameter without a gradient on one side is
           a failure) and every parameter after the step, taken from the same gradients; the
           tied parameters (a language model's embedding and output head) must still be tied on
           the device. The backend's CPU-fallback calls of this training step are counted per op.
graphed    the eager stage's training step (forward, backward, SGD) captured once as a device graph
           (torch.<device>.graph) and replayed: each replay against the same step run eagerly on
           the device from the same weights. Skipped, naming the op, where the step holds what no capture may (the CPU
           fallback, a host synchronisation), or where torch or the driver has no graphs.
compiled   the forward under torch.compile (Inductor) against the CPU's eager forward.
autocast   forward + backward under torch.autocast (bfloat16) on the device: no farther from the
           CPU's float32 result than the CPU's own autocast result is (with some slack).
amp-train  one compiled AMP training step (torch.compile, autocast, SGD): the loss and every
           parameter's update, no farther from float32 than the CPU's own AMP step is, eager or
           compiled, whichever is farther (with the same slack). Inductor rounds a fused
           kernel's bfloat16 intermediates differently from eager ATen, on the CPU too.
amp-fp16   one eager training step by CUDA's AMP recipe: torch.autocast in float16, the loss
           scaled by a GradScaler, the gradients unscaled and checked for infinities, SGD. The
           loss and every update, no farther from float32 than the CPU's own float16 step is
           (with the same slack). float16 is what CUDA's autocast picks by default; where the
           CPU has no float16 kernel for an op, the device computes it as CUDA does.

A difference is reported with the name of what differs (``grad of transformer.wte.weight``) and
how far, relative to the CPU's tensor: its largest value (float32) or its norm (AMP), but never
less than a small fraction of the largest tensor of its kind in the model. Gradients that are
zero in exact arithmetic (a bias before a batch norm, an attention key's bias) are rounding noise,
not a scale to measure against. That noise depends on the order of a reduction, which follows the
thread count (the CPU's two threads against the device's one): where the eager stage's float32
results differ by more than the tolerance, the device is held to the exact values as well, the
same step on the CPU in float64, and fails only when it is past the tolerance of both and farther
from the exact values than the CPU's own float32 result is (with some slack): a device whose kernels
round differently (its own dot products, another summation order) is held to the CPU's accuracy,
not to its rounding.
"""

from __future__ import annotations

import copy
import functools
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from torch import nn

from .._graphs import graph_class_name
from .catalogue import ModelSpec, Workload

STAGES = ("eager", "graphed", "compiled", "autocast", "amp-train", "amp-fp16")

# float32 on the same ATen kernels agrees to rounding, and Inductor reorders reductions: the
# largest difference of a tensor, relative to its largest value, stays far below these.
FP32_TOLERANCE = 1e-4
COMPILED_TOLERANCE = 1e-3
# bfloat16 keeps 8 bits of mantissa, and the device's autocast lists (CUDA's) differ from the
# CPU's; a batch norm over a batch of two turns bfloat16 rounding into errors of order one in
# gradients that are zero in exact arithmetic, on the CPU as much as on the device. So AMP is held
# to the CPU's own AMP accuracy: ||device - fp32|| <= AMP_SLACK * max ||cpu_amp - fp32|| +
# AMP_TOLERANCE * ||fp32|| for every tensor (fp32: the CPU in float32; the max over the CPU's AMP
# results the stage is held to).
AMP_TOLERANCE = 2e-2
AMP_SLACK = 2.0
# How much farther from the exact (float64) values than the CPU's float32 result a device's may be,
# where both are past FP32_TOLERANCE of each other (see the module's docstring).
ROUNDING_SLACK = 2.0
# Replays of the graphed stage, each against an eager step.
GRAPH_REPLAYS = 3
# The scale a tensor is measured against is at least this fraction of the largest of its kind.
SCALE_FLOOR = 1e-3
AMP_DTYPE = torch.bfloat16
# CUDA's AMP recipe: autocast's default dtype on CUDA, and a GradScaler. Its initial scale is
# lower than GradScaler's default (2**16), which overflows float16 gradients of these small
# random models at the first step, so both sides would skip it and compare nothing.
CUDA_AMP_DTYPE = torch.float16
GRAD_SCALER_INITIAL_SCALE = 2.0**8
LEARNING_RATE = 1e-2


@dataclass
class Difference:
    what: str
    relative: float


@dataclass
class StageResult:
    status: str  # pass, fail (a difference), error (an exception), skipped
    detail: str = ""
    worst: Difference | None = None
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"status": self.status, "seconds": round(self.seconds, 2)}
        if self.detail:
            data["detail"] = self.detail
        if self.worst is not None:
            data["worst"] = {"what": self.worst.what, "relative": float(f"{self.worst.relative:.3g}")}
        return data


@dataclass
class ModelResult:
    spec: ModelSpec
    stages: dict[str, StageResult] = field(default_factory=dict)
    ties: int = 0
    parameters: int = 0
    fallback_ops: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "library": self.spec.library,
            "family": self.spec.family,
            "parameters": self.parameters,
            "ties": self.ties,
            # Counted over the eager training step: unknown (None) when that stage did not run.
            "fallback_calls": sum(self.fallback_ops.values()) if "eager" in self.stages else None,
            "fallback_ops": dict(sorted(self.fallback_ops.items())),
            "stages": {name: result.to_json() for name, result in self.stages.items()},
        }


class Mismatch(AssertionError):
    """The device and the CPU disagree; the message names what."""


class NotApplicable(Exception):
    """The stage does not apply to this model here; the message says why (a skip, not a failure)."""


def largest(tensors: list[torch.Tensor | None], norm: bool = False) -> float:
    """The largest value (or norm) of these tensors, times SCALE_FLOOR: the least scale of each."""
    values = [float(t.detach().double().norm() if norm else t.detach().abs().max())
              for t in tensors if t is not None and t.numel() > 0 and bool(torch.isfinite(t).all())]
    return SCALE_FLOOR * max(values, default=0.0)


def amp_error(what: str, got: torch.Tensor | None, cpu_amps: Sequence[torch.Tensor | None],
              fp32: torch.Tensor | None, floor: float) -> float:
    """The device's AMP error over what is allowed (above 1: too far), see AMP_TOLERANCE;
    `cpu_amps` are the CPU's AMP results the device is held to (the farthest from fp32 counts)."""
    if got is None or fp32 is None or any(cpu_amp is None for cpu_amp in cpu_amps):
        if (got is None) != (fp32 is None):
            raise Mismatch(f"{what}: {'the device' if got is None else 'the CPU'} has none")
        return 0.0
    got, fp32 = (t.detach().cpu().double() for t in (got, fp32))
    references = [t.detach().cpu().double() for t in cpu_amps if t is not None]
    if got.shape != fp32.shape:
        raise Mismatch(f"{what}: shape {tuple(got.shape)} on the device, {tuple(fp32.shape)} on the CPU")
    if not bool(torch.isfinite(got).all()) and all(bool(torch.isfinite(t).all()) for t in references):
        raise Mismatch(f"{what}: non-finite values on the device only")
    cpu_error = max(float((reference - fp32).norm()) for reference in references)
    allowed = AMP_SLACK * cpu_error + AMP_TOLERANCE * max(float(fp32.norm()), floor)
    error = float((got - fp32).norm())
    return error / allowed if allowed > 0 else error


class Comparison:
    """Collects the largest relative difference of a stage, failing past `tolerance`."""

    def __init__(self, tolerance: float, norm: bool = False) -> None:
        self.tolerance = tolerance
        self.norm = norm
        self.worst: Difference | None = None

    def tensors(self, what: str, got: torch.Tensor | None, expected: torch.Tensor | None,
                floor: float = 0.0, exact: Callable[[], torch.Tensor | None] | None = None) -> None:
        """Fails past the tolerance of `expected`, the CPU's result; with `exact` (the same result
        in float64, computed only then), past the tolerance of both and past ROUNDING_SLACK times
        the CPU's own distance from `exact`."""
        relative = self._relative(what, got, expected, floor)
        if relative is None:
            return
        beyond = ""
        if relative > self.tolerance and exact is not None:
            try:
                exact_result = exact()
                exact_relative = self._relative(what, got, exact_result, floor)
                cpu_relative = self._relative(what, expected, exact_result, floor)
            except Exception as error:  # noqa: BLE001  (a model without float64 kernels keeps its CPU verdict)
                beyond = f" (no float64 result to hold it to: {_one_line(error)})"
            else:
                if exact_relative is not None:
                    beyond = f", and by {exact_relative:.3g} from the exact (float64) result"
                    relative = min(relative, exact_relative)
                    if cpu_relative is not None and exact_relative <= ROUNDING_SLACK * cpu_relative:
                        beyond += f", as far as the CPU's float32 ({cpu_relative:.3g})"
                        relative = min(relative, self.tolerance)
        if self.worst is None or relative > self.worst.relative:
            self.worst = Difference(what, relative)
        if relative > self.tolerance:
            of = "its norm" if self.norm else "its largest value"
            raise Mismatch(f"{what}: differs by {relative:.3g} of {of}{beyond} (tolerance {self.tolerance:g})")

    def _relative(self, what: str, got: torch.Tensor | None, expected: torch.Tensor | None,
                  floor: float) -> float | None:
        """How far `got` is from `expected`, relative to its scale; None when there is nothing to
        compare (neither has the tensor, or no value is finite)."""
        if got is None or expected is None:
            if got is not expected:
                side = "the device" if got is None else "the CPU"
                raise Mismatch(f"{what}: {side} has none")
            return None
        if got.device.type != "cpu" and expected.device.type == "cpu":
            got = got.detach().cpu()
        got, expected = got.detach().double(), expected.detach().double()
        if got.shape != expected.shape:
            raise Mismatch(f"{what}: shape {tuple(got.shape)} on the device, {tuple(expected.shape)} on the CPU")
        finite = torch.isfinite(expected)
        if not torch.equal(finite, torch.isfinite(got)):
            raise Mismatch(f"{what}: non-finite values differ")
        if not finite.any():
            return None
        difference = got[finite] - expected[finite]
        if self.norm:
            scale, diff = float(expected[finite].norm()), float(difference.norm())
        else:
            scale, diff = float(expected[finite].abs().max()), float(difference.abs().max())
        scale = max(scale, floor)
        return diff / scale if scale > 0 else diff


class AmpComparison(Comparison):
    def __init__(self) -> None:
        super().__init__(1.0)

    def tensors_amp(self, what: str, got: torch.Tensor | None, cpu_amps: Sequence[torch.Tensor | None],
                    fp32: torch.Tensor | None, floor: float = 0.0) -> None:
        ratio = amp_error(what, got, cpu_amps, fp32, floor)
        if self.worst is None or ratio > self.worst.relative:
            self.worst = Difference(what, ratio)
        if ratio > 1.0:
            raise Mismatch(f"{what}: {ratio:.3g} times as far from float32 as allowed "
                           f"({AMP_SLACK:g} x the CPU's AMP error + {AMP_TOLERANCE:g} of its norm)")


def tie_groups(model: nn.Module) -> list[tuple[str, ...]]:
    """Names that share one Parameter (tied weights), as sorted groups of two or more."""
    by_identity: dict[int, list[str]] = {}
    for name, parameter in model.named_parameters(remove_duplicate=False):
        by_identity.setdefault(id(parameter), []).append(name)
    return sorted(tuple(sorted(names)) for names in by_identity.values() if len(names) > 1)


def _to(value: Any, device: torch.device | str) -> Any:
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, dict):
        return {key: _to(item, device) for key, item in value.items()}
    return value


def _to_float64(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.double() if value.is_floating_point() else value
    if isinstance(value, dict):
        return {key: _to_float64(item) for key, item in value.items()}
    return value


class _Once:
    """Named results computed together on first use, then kept."""

    def __init__(self, compute: Callable[[], dict[str, torch.Tensor | None]]) -> None:
        self._compute = compute
        self._results: dict[str, torch.Tensor | None] | None = None

    def get(self, what: str) -> torch.Tensor | None:
        if self._results is None:
            self._results = self._compute()
        return self._results[what]


def _fallback_counts(device: str) -> Callable[[], dict[str, int]]:
    module = getattr(torch, device)
    return lambda: dict(module.fallback_counts())


def _reset_fallback_counts(device: str) -> None:
    getattr(torch, device).reset_fallback_counts()


def _parameters(model: nn.Module) -> Iterator[tuple[str, nn.Parameter]]:
    return iter(model.named_parameters())  # each tied parameter once, under its first name


class ModelRun:
    """One model on the device and its twin on the CPU, stage after stage."""

    def __init__(self, spec: ModelSpec, device: str) -> None:
        self.spec = spec
        self.device = device
        torch.manual_seed(0)
        workload = spec.build()
        self.workload: Workload = workload
        self.cpu_model = workload.model
        self.initial_state = copy.deepcopy(self.cpu_model.state_dict())
        self.device_model = copy.deepcopy(self.cpu_model).to(device)
        self.cpu_inputs = workload.inputs
        self.device_inputs = _to(workload.inputs, device)
        self.result = ModelResult(spec, parameters=sum(p.numel() for p in self.cpu_model.parameters()))

    def run(self, stages: tuple[str, ...]) -> ModelResult:
        checks: dict[str, Callable[[], Difference | None]] = {
            "eager": self.eager,
            "graphed": self.graphed,
            "compiled": self.compiled,
            "autocast": self.autocast,
            "amp-train": self.amp_train,
            "amp-fp16": self.amp_fp16,
        }
        failed_eager = False
        for stage in STAGES:
            if stage not in stages:
                continue
            if failed_eager:
                self.result.stages[stage] = StageResult("skipped", "the eager stage failed")
                continue
            started = time.perf_counter()
            try:
                self._same_weights()
                worst = checks[stage]()
                result = StageResult("pass", worst=worst)
            except Mismatch as mismatch:
                result = StageResult("fail", str(mismatch))
            except NotApplicable as reason:
                result = StageResult("skipped", str(reason))
            except Exception as error:  # noqa: BLE001  (every failure of model code is a result)
                result = StageResult("error", _one_line(error), )
                result.detail += "\n" + traceback.format_exc(limit=-6)
            result.seconds = time.perf_counter() - started
            self.result.stages[stage] = result
            failed_eager = stage == "eager" and result.status != "pass"
        return self.result

    # ---- stages -------------------------------------------------------------------------------

    def eager(self) -> Difference | None:
        cpu_ties, device_ties = tie_groups(self.cpu_model), tie_groups(self.device_model)
        self.result.ties = len(cpu_ties)
        if cpu_ties != device_ties:
            raise Mismatch(f"tied parameters: {cpu_ties} on the CPU, {device_ties} on the device")
        compare = Comparison(FP32_TOLERANCE)
        _reset_fallback_counts(self.device)
        counts = _fallback_counts(self.device)
        device_optimizer = torch.optim.AdamW(self.device_model.parameters(), lr=LEARNING_RATE)
        device_output, device_loss = self._forward_backward(self.device_model, self.device_inputs)
        device_optimizer.step()
        getattr(torch, self.device).synchronize()
        self.result.fallback_ops = counts()
        device_parameters = dict(_parameters(self.device_model))
        cpu_parameters = dict(_parameters(self.cpu_model))
        # Back to the weights before the step, for the comparison of the step below.
        with torch.no_grad():
            for name, parameter in cpu_parameters.items():
                device_parameters[name].copy_(parameter)
        device_optimizer = torch.optim.AdamW(self.device_model.parameters(), lr=LEARNING_RATE)
        cpu_optimizer = torch.optim.AdamW(self.cpu_model.parameters(), lr=LEARNING_RATE)
        cpu_output, cpu_loss = self._forward_backward(self.cpu_model, self.cpu_inputs)
        exact = _Once(self._float64_step)
        compare.tensors("output", device_output, cpu_output, exact=functools.partial(exact.get, "output"))
        compare.tensors("loss", device_loss, cpu_loss, exact=functools.partial(exact.get, "loss"))
        floor = largest([p.grad for p in cpu_parameters.values()])
        for name, parameter in cpu_parameters.items():
            compare.tensors(f"grad of {name}", device_parameters[name].grad, parameter.grad, floor,
                            exact=functools.partial(exact.get, f"grad of {name}"))
        # The step from the CPU's gradients, so that only the optimizer's arithmetic is compared:
        # AdamW's first step moves a weight by about lr * sign(g), which turns the last bits of a
        # gradient near zero into a difference of 2 * lr.
        with torch.no_grad():
            for name, parameter in cpu_parameters.items():
                if parameter.grad is not None:
                    device_grad = device_parameters[name].grad
                    if device_grad is None:
                        raise RuntimeError(f"{name} has a gradient on the CPU and none on the device")
                    device_grad.copy_(parameter.grad)
        device_optimizer.step()
        cpu_optimizer.step()
        floor = largest(list(cpu_parameters.values()))
        for name, parameter in cpu_parameters.items():
            compare.tensors(f"{name} after an AdamW step", device_parameters[name], parameter, floor)
        return compare.worst

    def graphed(self) -> Difference | None:
        module = getattr(torch, self.device)
        if not hasattr(torch.accelerator, "Graph"):
            raise NotApplicable(f"torch {torch.__version__} has no torch.accelerator.Graph")
        model, inputs = self.device_model, self.device_inputs
        optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE)

        def step() -> torch.Tensor:
            optimizer.zero_grad(set_to_none=False)  # the graph writes the gradients in place
            _, loss = self._forward_backward(model, inputs)
            optimizer.step()
            return loss

        step()  # makes the gradients the captured step zeroes and accumulates into
        graph = getattr(module, graph_class_name(self.device))()
        try:
            with module.graph(graph):
                static_loss = step()
        except RuntimeError as error:
            refused = str(error).split(". Move it out")[0]
            raise NotApplicable(f"the step cannot be captured: {refused}{_model_line(error)}") from None
        # Each replay against an eager step from the same weights and buffers: over several steps
        # the device's own run-to-run rounding (its kernels' thread count varies) would grow.
        compare = Comparison(FP32_TOLERANCE)
        for replay in range(1, GRAPH_REPLAYS + 1):
            before = {name: tensor.clone() for name, tensor in model.state_dict().items()}
            eager_loss = step().cpu()
            eager_parameters = {name: p.detach().cpu() for name, p in _parameters(model)}
            model.load_state_dict(before)  # in place: the graph's tensors
            graph.replay()
            compare.tensors(f"loss of replay {replay}", static_loss.cpu(), eager_loss)
            floor = largest(list(eager_parameters.values()))
            for name, parameter in _parameters(model):
                compare.tensors(f"{name} after replay {replay}", parameter.detach().cpu(), eager_parameters[name],
                                floor)
        graph.reset()
        return compare.worst

    def compiled(self) -> Difference | None:
        compare = Comparison(COMPILED_TOLERANCE)
        compiled = torch.compile(self.device_model)
        with torch.no_grad():
            device_output = self.workload.output(compiled(**self.device_inputs))
            cpu_output = self.workload.output(self.cpu_model(**self.cpu_inputs))
        compare.tensors("compiled output", device_output, cpu_output, largest([cpu_output]))
        return compare.worst

    def autocast(self) -> Difference | None:
        compare = AmpComparison()
        device = self._gradients(self.device_model, self.device_inputs, autocast=self.device)
        cpu_amp = self._gradients(self.cpu_model, self.cpu_inputs, autocast="cpu")
        fp32 = self._gradients(self.cpu_model, self.cpu_inputs, autocast=None)
        floor = largest(list(fp32.values()), norm=True)
        for what in fp32:
            compare.tensors_amp(f"autocast {what}", device[what], [cpu_amp[what]], fp32[what],
                                0.0 if what in ("output", "loss") else floor)
        return compare.worst

    def amp_train(self) -> Difference | None:
        compare = AmpComparison()
        compiled = torch.compile(self.device_model)
        device = self._sgd_updates(self.device_model, compiled, self.device_inputs, autocast=self.device)
        self._same_weights()
        cpu_amp = self._sgd_updates(self.cpu_model, self.cpu_model, self.cpu_inputs, autocast="cpu")
        self._same_weights()
        cpu_compiled = torch.compile(self.cpu_model)
        cpu_compiled_amp = self._sgd_updates(self.cpu_model, cpu_compiled, self.cpu_inputs, autocast="cpu")
        self._same_weights()
        fp32 = self._sgd_updates(self.cpu_model, self.cpu_model, self.cpu_inputs, autocast=None)
        floor = largest(list(fp32.values()), norm=True)
        for what in fp32:
            compare.tensors_amp(f"compiled AMP step: {what}", device[what], [cpu_amp[what], cpu_compiled_amp[what]],
                                fp32[what],
                                0.0 if what == "loss" else floor)
        return compare.worst

    def amp_fp16(self) -> Difference | None:
        compare = AmpComparison()
        device = self._sgd_updates(self.device_model, self.device_model, self.device_inputs, autocast=self.device,
                                   dtype=CUDA_AMP_DTYPE, scaled=True)
        self._same_weights()
        cpu_amp = self._sgd_updates(self.cpu_model, self.cpu_model, self.cpu_inputs, autocast="cpu",
                                    dtype=CUDA_AMP_DTYPE, scaled=True)
        self._same_weights()
        fp32 = self._sgd_updates(self.cpu_model, self.cpu_model, self.cpu_inputs, autocast=None)
        if device["skipped"] or cpu_amp["skipped"]:
            raise Mismatch(f"the GradScaler skipped the step (infinite gradients): on the device "
                           f"{bool(device['skipped'])}, on the CPU {bool(cpu_amp['skipped'])}")
        floor = largest(list(fp32.values()), norm=True)
        for what in fp32:
            compare.tensors_amp(f"float16 AMP step: {what}", device[what], [cpu_amp[what]], fp32[what],
                                0.0 if what == "loss" else floor)
        return compare.worst

    def _gradients(self, model: nn.Module, inputs: dict[str, Any], autocast: str | None) -> dict[str, Any]:
        """The output, the loss and every gradient of one forward + backward (under autocast)."""
        model.zero_grad(set_to_none=True)
        with torch.autocast(autocast or "cpu", dtype=AMP_DTYPE, enabled=autocast is not None):
            output, loss = self._forward_backward(model, inputs)
        results: dict[str, Any] = {"output": output.float(), "loss": loss.float()}
        for name, parameter in _parameters(model):
            results[f"grad of {name}"] = None if parameter.grad is None else parameter.grad.float()
        return results

    def _sgd_updates(self, model: nn.Module, call: Any, inputs: dict[str, Any], autocast: str | None,
                     dtype: torch.dtype = AMP_DTYPE, scaled: bool = False) -> dict[str, Any]:
        """The loss and each parameter's update of one SGD training step (under autocast; with
        `scaled`, through a GradScaler on the model's device, as CUDA's AMP recipe runs it)."""
        before = {name: p.detach().cpu().clone() for name, p in _parameters(model)}
        optimizer = torch.optim.SGD(model.parameters(), lr=LEARNING_RATE)
        optimizer.zero_grad(set_to_none=True)
        scaler = torch.amp.GradScaler(autocast or "cpu", init_scale=GRAD_SCALER_INITIAL_SCALE, enabled=scaled)
        with torch.autocast(autocast or "cpu", dtype=dtype, enabled=autocast is not None):
            _, loss = self._forward_backward(call, inputs, scale=scaler.scale)
        scaler.step(optimizer)
        scale = scaler.get_scale()
        scaler.update()
        results: dict[str, Any] = {"loss": loss.float()}
        if scaled:
            # update() lowers the scale where step() found infinite gradients and skipped the step.
            results["skipped"] = scaler.get_scale() < scale
        for name, parameter in _parameters(model):
            results[f"update of {name}"] = parameter.detach().cpu() - before[name]
        return results

    def _float64_step(self) -> dict[str, torch.Tensor | None]:
        """The eager stage's output, loss and gradients in exact arithmetic, as near as the CPU
        gets: float64 from the same weights and inputs, on a copy of the CPU's model."""
        model = copy.deepcopy(self.cpu_model).double()
        with torch.no_grad():
            model.load_state_dict(self.initial_state)  # copies into the float64 parameters
        model.zero_grad(set_to_none=True)
        output, loss = self._forward_backward(model, _to_float64(self.cpu_inputs))
        results: dict[str, torch.Tensor | None] = {"output": output, "loss": loss}
        for name, parameter in _parameters(model):
            results[f"grad of {name}"] = parameter.grad
        return results

    def _same_weights(self) -> None:
        """Every stage starts from the initial weights and buffers on both sides: the last bits
        of an earlier stage's results would otherwise turn into bfloat16 roundings on one side
        only (load_state_dict copies in place, so tied parameters stay tied)."""
        with torch.no_grad():
            self.cpu_model.load_state_dict(self.initial_state)
            self.device_model.load_state_dict(self.initial_state)

    def _forward_backward(self, model: Any, inputs: dict[str, Any],
                          scale: Callable[[torch.Tensor], torch.Tensor] = lambda loss: loss,
                          ) -> tuple[torch.Tensor, torch.Tensor]:
        raw = model(**inputs)
        loss = self.workload.loss(raw)
        scale(loss).backward()
        return self.workload.output(raw).detach(), loss.detach()


def _model_line(error: BaseException) -> str:
    """Where in the model's code (not torch's) `error` was raised: ", at FILE:LINE", or nothing."""
    torch_directory = str(Path(torch.__file__).parent)
    frames = [frame for frame in traceback.extract_tb(error.__traceback__)
              if not frame.filename.startswith(torch_directory) and frame.filename != __file__]
    if not frames:
        return ""
    frame = frames[-1]
    parts = Path(frame.filename).parts
    return f", at {'/'.join(parts[-2:])}:{frame.lineno}"


def _one_line(error: BaseException) -> str:
    lines = [line for line in str(error).splitlines() if line.strip()]
    return f"{type(error).__name__}: {lines[0] if lines else ''}"[:500]


def run_model(spec: ModelSpec, device: str, stages: tuple[str, ...] = STAGES) -> ModelResult:
    """Every stage of one model; an exception building the model is an error of every stage."""
    try:
        run = ModelRun(spec, device)
    except Exception as error:  # noqa: BLE001
        result = ModelResult(spec)
        for stage in stages:
            result.stages[stage] = StageResult("error", "building the model: " + _one_line(error))
        return result
    return run.run(stages)
