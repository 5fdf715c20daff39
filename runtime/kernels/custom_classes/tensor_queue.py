"""The fake twin of torch.classes.foo.TensorQueue (tensor_queue.h): what torch.compile and
torch.export trace with. The fake kernel of foo::for_each_add_, which takes the class, is in
custom_ops/for_each_add_.py and calls FakeTensorQueue.for_each_add_.

Tracing must not run the C++ class (its methods have side effects and see real data): the tracer
calls the real object's ``__obj_flatten__``, builds this class from those pairs with
``__obj_unflatten__`` (its tensors made fake) and runs the methods here instead. Installed into the
package as torch_foo._custom_classes.tensor_queue and imported by torch_foo.custom_classes.
"""

from __future__ import annotations

from typing import Any

import torch

from .._device_name import DEVICE_NAME  # installed into the package beside this file's directory


@torch._library.register_fake_class(f"{DEVICE_NAME}::TensorQueue")
class FakeTensorQueue:
    """The fake twin of ``torch.classes.foo.TensorQueue`` (custom_classes/tensor_queue.h)."""

    def __init__(self, queue: list[torch.Tensor], init_tensor_: torch.Tensor) -> None:
        self.queue = queue
        self.init_tensor_ = init_tensor_

    @classmethod
    def __obj_unflatten__(cls, flattened_state: Any) -> FakeTensorQueue:
        # The pairs TensorQueue::obj_flatten returns: ("queue", [...]), ("init_tensor_", t).
        return cls(**dict(flattened_state))

    def push(self, tensor: torch.Tensor) -> None:
        self.queue.append(tensor)

    def pop(self) -> torch.Tensor:
        if self.queue:
            return self.queue.pop(0)
        return self.init_tensor_

    def size(self) -> int:
        return len(self.queue)

    def get_raw_queue(self) -> list[torch.Tensor]:
        return list(self.queue)

    def for_each_add_(self, inc: torch.Tensor) -> None:
        for tensor in self.queue:
            tensor.add_(inc)
