"""Tied parameters survive moves between the CPU and foo, as they do between the CPU and CUDA.

`Module.to()` swaps each parameter's `.data` in place when aten::_has_compatible_shallow_copy_type
says the two tensors are compatible, and otherwise makes a new Parameter per module: a parameter
shared by two modules (a language model's embedding and output head) would become two, each
getting half of the gradient, with no error. The runtime answers that op for its device
(csrc/ops/shallow_copy.cpp)."""

from __future__ import annotations

import copy

import pytest
import torch
from torch import nn

from foo_testing import grad

DEVICE = "foo"


class TiedLanguageModel(nn.Module):
    """An embedding and an output head sharing one weight, as GPT-2's wte and lm_head."""

    def __init__(self) -> None:
        super().__init__()
        self.embedding = nn.Embedding(11, 6)
        self.body = nn.Linear(6, 6)
        self.head = nn.Linear(6, 11, bias=False)
        self.head.weight = self.embedding.weight

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        logits: torch.Tensor = self.head(torch.tanh(self.body(self.embedding(tokens))))
        return logits


def test_the_device_answers_that_cpu_and_device_tensors_can_swap_data() -> None:
    cpu, device = torch.ones(2), torch.ones(2, device=DEVICE)
    assert torch._has_compatible_shallow_copy_type(cpu, device)
    assert torch._has_compatible_shallow_copy_type(device, cpu)
    assert torch._has_compatible_shallow_copy_type(device, torch.ones(3, device=DEVICE))
    # Requiring grad puts the autograd key first in the dispatch; the answer is the same.
    assert torch._has_compatible_shallow_copy_type(nn.Parameter(torch.ones(2)), device)
    # Not dense: a meta tensor has no data to swap, as for CUDA.
    assert not torch._has_compatible_shallow_copy_type(torch.ones(2, device="meta"), device)


@pytest.mark.parametrize("there", [DEVICE, "cpu"])
def test_assigning_data_across_devices_moves_the_tensor_in_place(there: str) -> None:
    here = "cpu" if there == DEVICE else DEVICE
    parameter = nn.Parameter(torch.arange(4.0, device=here))
    identity = id(parameter)
    parameter.data = torch.full((4,), 7.0, device=there)
    assert id(parameter) == identity and parameter.device.type == there
    assert parameter.requires_grad
    (parameter * 2).sum().backward()
    assert parameter.grad is not None and parameter.grad.device.type == there
    torch.testing.assert_close(parameter.grad.cpu(), torch.full((4,), 2.0))


def test_module_to_keeps_parameters_and_ties() -> None:
    model = TiedLanguageModel()
    parameters = {name: id(p) for name, p in model.named_parameters()}
    model.to(DEVICE)
    assert model.head.weight is model.embedding.weight
    assert {name: id(p) for name, p in model.named_parameters()} == parameters
    assert all(p.device.type == DEVICE for p in model.parameters())
    model.to("cpu")
    assert model.head.weight is model.embedding.weight
    assert {name: id(p) for name, p in model.named_parameters()} == parameters


def test_gradient_of_a_tied_weight_equals_the_cpu() -> None:
    torch.manual_seed(0)
    cpu_model = TiedLanguageModel()
    device_model = copy.deepcopy(cpu_model).to(DEVICE)
    tokens = torch.tensor([[1, 4, 2, 9], [3, 3, 0, 10]])
    cpu_model(tokens).square().sum().backward()
    device_model(tokens.to(DEVICE)).square().sum().backward()
    assert len(list(device_model.parameters())) == len(list(cpu_model.parameters()))
    # Both uses of the shared weight add to one gradient.
    torch.testing.assert_close(grad(device_model.embedding.weight).cpu(), cpu_model.embedding.weight.grad)
    assert device_model.head.weight.grad is device_model.embedding.weight.grad


def test_optimizer_built_before_the_move_still_trains_the_moved_parameters() -> None:
    # What `.to()` in place means for users: an optimizer made first keeps working.
    model = nn.Linear(3, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    model.to(DEVICE)
    before = model.weight.detach().cpu().clone()
    model(torch.ones(2, 3, device=DEVICE)).sum().backward()
    optimizer.step()
    torch.testing.assert_close(model.weight.detach().cpu(), before - 0.5 * 2.0)
