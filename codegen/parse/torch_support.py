"""The torch releases a generated backend supports, stated once.

`runtime/cmake/torch-requirement.txt` holds one requirement line (`torch>=2.11,<2.16`). The
runtime's CMake reads it to refuse an unsupported torch before compiling anything, `init` writes
it into new projects (their pyproject and CI matrix), and `generate` and `init` check the
installed torch against it here: outside the range the kernels would not compile, so they stop
with one line instead. The generator's own dependency on torch has no bound
(codegen/requirements.txt): installing the tool never replaces a user's torch.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from ..errors import ProjectConfigError, SourceLocation
from ..resources import data_dir

REQUIREMENT_FILE = ("cmake", "torch-requirement.txt")


def _minor(text: str) -> tuple[int, int]:
    major, minor = text.split(".")[:2]
    return int(major), int(minor)


@dataclass(frozen=True)
class CiLeg:
    """One leg of a project's CI matrix."""

    torch: str
    """A pip version pattern, e.g. `2.11.*`."""
    python: str


@dataclass(frozen=True)
class TorchSupport:
    requirement: str
    """The requirement line as written, e.g. `torch>=2.11,<2.16`."""
    lowest: tuple[int, int]
    """The lowest supported minor release, e.g. (2, 11)."""
    below: tuple[int, int]
    """The first minor release no longer supported, e.g. (2, 15)."""

    @property
    def minor_releases(self) -> list[str]:
        """Every supported minor release, lowest first: `["2.11", ..., "2.14"]`."""
        major = self.lowest[0]
        return [f"{major}.{minor}" for minor in range(self.lowest[1], self.below[1])]

    def ci_legs(self) -> list[CiLeg]:
        """The CI matrix of projects: the lowest and the highest supported release (the newest
        patch of each), one on the Python current Ubuntu ships and one on the previous."""
        releases = self.minor_releases
        return [CiLeg(f"{releases[0]}.*", "3.12"), CiLeg(f"{releases[-1]}.*", "3.11")]

    @property
    def torchvision_requirement(self) -> str:
        """The torchvision releases built for the supported torch releases (each torchvision
        release is built for one torch release: torch 2.N goes with torchvision 0.(N+15))."""
        return f"torchvision>=0.{self.lowest[1] + 15},<0.{self.below[1] + 15}"

    def supports(self, version: str) -> bool:
        return self.lowest <= _minor(version) < self.below

    def check(self, version: str) -> None:
        if self.supports(version):
            return
        newest = self.minor_releases[-1]
        if _minor(version) >= self.below:
            hint = (
                f"torch {'.'.join(map(str, _minor(version)))} is newer than this scaffold-backend "
                "knows: `pip install --upgrade scaffold-backend` takes a release that supports it "
                "if there is one; `scaffold-backend diff` shows what it changes for your backend; "
                f"or stay on pip install 'torch=={newest}.*'"
            )
        else:
            hint = f"install a supported torch, e.g. pip install 'torch=={newest}.*'"
        raise ProjectConfigError(
            f"torch {version} is installed, but the backends scaffold-backend generates "
            f"support {self.requirement}",
            location=SourceLocation(_requirement_path_text()),
            hint=hint,
        )


def _requirement_path_text() -> str:
    return "/".join(("runtime",) + REQUIREMENT_FILE)


@functools.cache
def torch_support() -> TorchSupport:
    path = data_dir("runtime").joinpath(*REQUIREMENT_FILE)
    lines = [
        line.strip()
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    (requirement,) = lines
    name, _, specifiers = requirement.partition(">=")
    lowest_text, _, below_text = specifiers.partition(",<")
    if name != "torch" or not lowest_text or not below_text:
        raise ValueError(f"{path}: expected 'torch>=X.Y,<X.Z', got {requirement!r}")
    support = TorchSupport(requirement, _minor(lowest_text), _minor(below_text))
    if support.lowest[0] != support.below[0] or support.lowest >= support.below:
        raise ValueError(f"{path}: expected a range within one major release, got {requirement!r}")
    return support
