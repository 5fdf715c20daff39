"""A small CNN and a small transformer block train on foo as on the CPU, and natively: a training
step -- forward, backward, optimizer step with SGD, Adam and AdamW in their for-loop, foreach and
fused forms -- makes no call to the CPU fallback and leaves the parameters and the optimizer's
state where the same step on the CPU leaves them. (Each op is tested against the CPU on its own in
test_ops.py; this is how they meet in a model.)
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from foo_testing import DEVICE, assert_same, fallback_counts, foo, grad

OPTIMIZERS: dict[str, Callable[[list[nn.Parameter]], torch.optim.Optimizer]] = {
    "sgd_momentum_forloop": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=1e-4, foreach=False),
    "sgd_momentum_foreach": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=1e-4, foreach=True),
    "sgd_momentum_fused": lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9, weight_decay=1e-4, fused=True),
    "adam_forloop": lambda p: torch.optim.Adam(p, lr=1e-3, foreach=False),
    "adam_foreach": lambda p: torch.optim.Adam(p, lr=1e-3, foreach=True),
    "adam_fused": lambda p: torch.optim.Adam(p, lr=1e-3, fused=True),
    "adamw_foreach": lambda p: torch.optim.AdamW(p, lr=1e-3, weight_decay=0.01, foreach=True),
    "adamw_fused": lambda p: torch.optim.AdamW(p, lr=1e-3, weight_decay=0.01, fused=True),
}


class SmallCNN(nn.Module):
    """The layers of torchvision's and timm's CNNs: batch and group norm, max, average and adaptive
    pooling, ReLU, ReLU6, hardswish and hardsigmoid, dropout."""

    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1, bias=False), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
            nn.MaxPool2d(3, stride=2, padding=1),
            nn.Conv2d(8, 16, 3, padding=1, groups=2), nn.GroupNorm(4, 16), nn.Hardswish(),
            nn.AvgPool2d(2),
            nn.Conv2d(16, 16, 1), nn.BatchNorm2d(16), nn.ReLU6(inplace=True),
            nn.AdaptiveAvgPool2d((2, 2)),
        )
        self.gate = nn.Sequential(nn.Linear(64, 64), nn.Hardsigmoid())
        self.head = nn.Sequential(nn.Dropout(0.2), nn.Linear(64, 10))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.features(x).flatten(1)
        logits: torch.Tensor = self.head(h * self.gate(h))
        return logits


class TransformerBlock(nn.Module):
    """A GPT-2-like block: token and position embeddings, pre-norm causal self-attention, a GELU
    MLP, dropout, a head tied to the token embedding."""

    def __init__(self, vocab: int = 50, dim: int = 32, heads: int = 4, seq: int = 16) -> None:
        super().__init__()
        self.heads = heads
        self.tok = nn.Embedding(vocab, dim)
        self.pos = nn.Embedding(seq, dim)
        self.ln1, self.ln2, self.ln_f = nn.LayerNorm(dim), nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.mlp = nn.Sequential(
            nn.Linear(dim, 4 * dim), nn.GELU(approximate="tanh"), nn.Linear(4 * dim, dim), nn.Dropout(0.1)
        )
        self.drop = nn.Dropout(0.1)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        b, t = ids.shape
        x = self.drop(self.tok(ids) + self.pos(torch.arange(t, device=ids.device)))
        q, k, v = self.qkv(self.ln1(x)).view(b, t, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        causal = torch.tril(torch.ones(t, t, dtype=torch.bool, device=ids.device))
        attention = F.scaled_dot_product_attention(q, k, v, attn_mask=causal)
        x = x + self.proj(attention.transpose(1, 2).reshape(b, t, -1))
        x = x + self.mlp(self.ln2(x))
        logits: torch.Tensor = self.ln_f(x) @ self.tok.weight.t()
        return logits


def _cnn_batch(device: str) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(1)
    images = torch.randn(4, 3, 16, 16, generator=g, dtype=torch.float64)
    return images.to(device), torch.randint(0, 10, (4,), generator=g).to(device)


def _text_batch(device: str) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(2)
    ids = torch.randint(0, 50, (2, 16), generator=g)
    return ids.to(device), ids.roll(-1, 1).to(device)


MODELS: dict[str, tuple[Callable[[], nn.Module], Callable[[str], tuple[torch.Tensor, torch.Tensor]]]] = {
    "cnn": (SmallCNN, _cnn_batch),
    "transformer": (TransformerBlock, _text_batch),
}


def _train_step(
    model: nn.Module, optimizer_name: str, batch: tuple[torch.Tensor, torch.Tensor], seed: int
) -> list[torch.Tensor]:
    """Two steps (the second uses the optimizer's state); returns parameters, buffers and state."""
    optimizer = OPTIMIZERS[optimizer_name](list(model.parameters()))
    inputs, targets = batch
    for _ in range(2):
        torch.manual_seed(seed)  # the same dropout masks on both devices: each draws from its own generator
        logits = model(inputs)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        optimizer.step()
        optimizer.zero_grad()
    state = [t for s in optimizer.state.values() for t in s.values() if isinstance(t, torch.Tensor)]
    return [*model.parameters(), *model.buffers(), *state]


def _assert_same_state(actual: list[torch.Tensor], expected: list[torch.Tensor]) -> None:
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected, strict=True):
        if a.device.type == "cpu":
            # Adam's step counts stay on the CPU unless the optimizer is fused or capturable, as for CUDA
            assert e.device.type == "cpu" and a.dim() == 0
            torch.testing.assert_close(a, e)
        else:
            # float64: a reduction split over another number of threads (the device computes with
            # its own, SCAFFOLD_DEVICE_THREADS) adds in another order; Adam's normalised step
            # carries that rounding of near-zero gradients into the parameters.
            assert_same(a, e, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("optimizer_name", sorted(OPTIMIZERS))
@pytest.mark.parametrize("model_name", sorted(MODELS))
def test_training_step_is_native_and_matches_cpu(model_name: str, optimizer_name: str) -> None:
    make_model, make_batch = MODELS[model_name]
    torch.manual_seed(0)
    cpu_model = make_model().double().train()
    foo_model = copy.deepcopy(cpu_model).to(DEVICE)
    expected = _train_step(cpu_model, optimizer_name, make_batch("cpu"), seed=3)
    foo.reset_fallback_counts()
    actual = _train_step(foo_model, optimizer_name, make_batch(DEVICE), seed=3)
    foo.synchronize()
    assert fallback_counts() == {}, f"ops that ran on the CPU fallback: {fallback_counts()}"
    _assert_same_state(actual, expected)


@pytest.mark.parametrize("name", ["resnet18", "mobilenet_v3_small"])
def test_torchvision_model_trains_natively(name: str) -> None:
    models = pytest.importorskip("torchvision.models")
    torch.manual_seed(0)
    cpu_model = getattr(models, name)(weights=None, num_classes=10).double().train()
    foo_model = copy.deepcopy(cpu_model).to(DEVICE)
    g = torch.Generator().manual_seed(1)
    batch = torch.randn(2, 3, 32, 32, generator=g, dtype=torch.float64), torch.randint(0, 10, (2,), generator=g)
    # SGD: Adam's normalised step turns the rounding of a gradient that is zero but for rounding
    # into a whole step of either sign, and the device's reductions (split over its own number of
    # threads) round differently from the CPU's. Adam and AdamW are compared on the small models.
    expected = _train_step(cpu_model, "sgd_momentum_fused", batch, seed=3)
    foo.reset_fallback_counts()
    actual = _train_step(foo_model, "sgd_momentum_fused", (batch[0].to(DEVICE), batch[1].to(DEVICE)), seed=3)
    foo.synchronize()
    assert fallback_counts() == {}, f"ops that ran on the CPU fallback: {fallback_counts()}"
    _assert_same_state(actual, expected)


ATTENTION_CASES: dict[str, dict[str, object]] = {
    "plain": {},
    "causal": {"is_causal": True},
    "float_mask": {"attn_mask": "float"},
    "bool_mask": {"attn_mask": "bool"},
    "scale": {"scale": 0.3},
}


@pytest.mark.parametrize("case", sorted(ATTENTION_CASES))
def test_attention_runs_the_cpus_flash_kernels_on_the_device(case: str) -> None:
    """scaled_dot_product_attention asks the device which fused kernel to use: foo has the CPU's
    flash attention, so it runs that (forward and backward, natively), where the CPU would, and
    not the math composition of a dozen ops; results and gradients are the CPU's."""
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 4, 16, 8, generator=g) for _ in range(3))
    options = dict(ATTENTION_CASES[case])
    if options.get("attn_mask") == "float":
        options["attn_mask"] = torch.randn(16, 16, generator=g)
    elif options.get("attn_mask") == "bool":
        options["attn_mask"] = torch.rand(16, 16, generator=g) > 0.3

    def run(device: str) -> tuple[torch.Tensor, list[torch.Tensor], set[str]]:
        inputs = [t.detach().to(device).requires_grad_() for t in (q, k, v)]
        placed = {key: value.to(device) if isinstance(value, torch.Tensor) else value for key, value in options.items()}
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profile:
            out = F.scaled_dot_product_attention(*inputs, **placed)  # type: ignore[arg-type]
            out.backward(torch.ones_like(out))
        return out, [grad(t) for t in inputs], {event.name for event in profile.events()}

    expected, expected_grads, cpu_ops = run("cpu")
    assert "aten::_scaled_dot_product_flash_attention_for_cpu" in cpu_ops  # what the CPU chooses
    foo.reset_fallback_counts()
    actual, grads, ops = run(DEVICE)
    assert fallback_counts() == {}
    assert {"aten::_scaled_dot_product_flash_attention_for_cpu",
            "aten::_scaled_dot_product_flash_attention_for_cpu_backward"} <= ops
    assert "aten::_scaled_dot_product_attention_math" not in ops
    assert_same(actual, expected)
    for actual_grad, expected_grad in zip(grads, expected_grads, strict=True):
        assert_same(actual_grad, expected_grad)


def test_attention_with_dropout_keeps_the_math_composition() -> None:
    """Where the CPU would not use its flash kernel (dropout), neither does the device."""
    q = torch.randn(1, 2, 8, 4, device=DEVICE)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as profile:
        F.scaled_dot_product_attention(q, q, q, dropout_p=0.5)
    ops = {event.name for event in profile.events()}
    assert "aten::_scaled_dot_product_attention_math" in ops
    assert "aten::_scaled_dot_product_flash_attention_for_cpu" not in ops
