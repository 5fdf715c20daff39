"""The reference backend at work: a small model trained on the simulated `foo` device.

Native kernels (matmul, activations, losses) run on device memory through the runtime; the ops
foo does not implement run on the CPU through the generated fallback, and the counts say which.
Run after `pip install --no-build-isolation ./runtime`: python -m torch_foo.demo
"""

import warnings
from typing import Any

import torch

import torch_foo  # noqa: F401  (`import torch` autoloads it too, unless TORCH_DEVICE_BACKEND_AUTOLOAD=0)


def main() -> None:
    foo: Any = torch.get_device_module("foo")  # torch.foo, which the backend adds at run time
    torch.manual_seed(0)  # seeds the CPU (parameter init) and every foo device
    inputs = torch.randn(256, 16, device="foo")
    targets = inputs[:, :4].sum(dim=1).gt(0).long()
    model = torch.nn.Sequential(
        torch.nn.Linear(16, 32), torch.nn.ReLU(), torch.nn.Linear(32, 2)
    ).to("foo")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    print(f"device: {inputs.device}, {foo.device_count()} device(s)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the fallback warns once per op; counted below instead
        for step in range(20):
            loss = torch.nn.functional.cross_entropy(model(inputs), targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            if step % 5 == 0 or step == 19:
                print(f"step {step:2d}  loss {loss.item():.4f}")
        accuracy = (model(inputs).argmax(dim=1) == targets).float().mean().item()
    print(f"accuracy on the training set: {accuracy:.2%}")
    print(f"device memory allocated: {foo.memory_allocated()} bytes")
    print(f"ops that ran on the CPU through the fallback: {foo.fallback_counts()}")


if __name__ == "__main__":
    main()
