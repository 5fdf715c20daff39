"""Python side of the custom op(s) tiny::fill_ones of the tiny backend: the fake kernel
torch.compile and torch.export trace with (shapes, dtypes and devices only, no data), and, when the
YAML asks for autograd, its backward and setup_context (torch.library.register_autograd).

Created by scaffold-backend from backend.yaml; this file is yours. Regeneration updates the
function signatures when the schema changes and keeps every line you write.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor


def fill_ones_fake(self) -> None:
    return None


# scaffold-backend adds the functions of new overloads above this line.
