"""What a backend does with an operator: the vocabulary of `scaffold-backend ops` and of the
selection (kept apart so the command line can offer it without importing torchgen)."""

from __future__ import annotations

import enum


class OpStatus(enum.Enum):
    NATIVE = "native"
    """A kernel in the backend's C++ namespace, registered to the backend key."""
    AUTOGRAD = "autograd"
    """A kernel registered to Autograd<backend>: the backend implements autograd itself."""
    EXPLICIT_FALLBACK = "explicit-fallback"
    """A generated, typed wrapper that runs the op on the CPU."""
    BOXED_FALLBACK = "boxed-fallback"
    """No registration: the backend-wide boxed fallback handles it (CPU or error, by policy)."""
    COMPOSITE = "composite"
    """PyTorch has a default kernel built from other ops; nothing to register."""
