"""Describe the torch that a build compiles against, as CMake `set()` commands.

Run by cmake/ScaffoldTorch.cmake with the Python that builds the backend. Importing torch is
the one authoritative way to learn how the installed wheel was built (its C++ ABI, whether it
has c10d and Gloo); it costs about two seconds per configure, not per build. Device backends
that are installed are not loaded while probing (TORCH_DEVICE_BACKEND_AUTOLOAD=0 is set by the
caller), so a backend being rebuilt never loads its own stale copy.
"""

from __future__ import annotations

import os
import sys


def cmake_string(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def main() -> int:
    try:
        import torch
    except Exception as error:  # noqa: BLE001 -- any import failure is reported by CMake as one message
        print(f"torch cannot be imported by {sys.executable}: {error}", file=sys.stderr)
        return 1
    # The real path: a venv that links an installed torch (tools that share packages between
    # environments) compiles with the same flags as the environment it links, so builds match.
    package_dir = os.path.dirname(os.path.realpath(torch.__file__))
    include_dir = os.path.join(package_dir, "include")
    distributed = torch.distributed.is_available()
    values = {
        "SCAFFOLD_TORCH_VERSION": torch.__version__.split("+", 1)[0],
        "SCAFFOLD_TORCH_PACKAGE_DIR": package_dir,
        "SCAFFOLD_TORCH_INCLUDE_DIRS": ";".join(
            [include_dir, os.path.join(include_dir, "torch", "csrc", "api", "include")]
        ),
        "SCAFFOLD_TORCH_LIBRARY_DIR": os.path.join(package_dir, "lib"),
        "SCAFFOLD_TORCH_CXX11_ABI": "1" if torch._C._GLIBCXX_USE_CXX11_ABI else "0",
        "SCAFFOLD_TORCH_CUDA": torch.version.cuda or "",
        "SCAFFOLD_TORCH_DISTRIBUTED": "1" if distributed else "0",
        "SCAFFOLD_TORCH_GLOO": "1" if distributed and torch.distributed.is_gloo_available() else "0",
    }
    for name, value in values.items():
        print(f"set({name} {cmake_string(value)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
