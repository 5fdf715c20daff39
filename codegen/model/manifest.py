"""The manifest: what the last generation read and wrote.

It records the inputs (declarations and backend YAML digests, the torch release, the generator
version), a digest of every generator-owned file, for every user-owned kernel file the ops it
held and the exact text the generator last produced for it, and in a backend project, which
text of each shared file the tool last brought it to. That base text is what lets a
later run tell an untouched stub from an edited one and merge three ways (copier keeps
`.copier-answers.yml` for the same reason).

Paths are relative to the output directory, so the manifest is the same wherever the project is.
`to_json` writes it; parse/manifest.py reads and validates it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..paths import CUSTOM_OPS_DIR
from .outputs import GENERATED_MARKER

FORMAT_VERSION = 1


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class InputRecord:
    path: str
    sha256: str
    torch_version: str | None = None


@dataclass(frozen=True)
class KernelFileRecord:
    heads: Mapping[str, str]
    """Each op of the file and the kernel definition line the generator wrote for it."""
    base: str
    """The text the generator produced for this file last time (the merge base)."""
    type_signatures: Mapping[str, str] = field(default_factory=dict)
    """Each op's kernel declaration without parameter names (see KernelBinding.type_signature):
    a later run compares it to tell a rename-only upgrade, which leaves the user's names alone,
    from a change of types. Absent in manifests of older generator versions."""

    @property
    def ops(self) -> tuple[str, ...]:
        return tuple(sorted(self.heads))


def git_blob_id(text: str) -> str:
    """The id git gives `text` as a file's content (`git hash-object`): a shared file's record
    names the tool's text by it, so the merge base can be found in the project's history."""
    data = text.encode("utf-8", errors="surrogateescape")  # as the file's bytes were read
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


@dataclass(frozen=True)
class SharedFileRecord:
    """A shared file of a backend project (model/project.py) as the last run left it."""

    blob: str
    """git_blob_id of the tool's text for the file: the merge base of the next run's update."""
    base: str | None = None
    """The tool's text itself, kept only while the file holds the team's edits (a merge's result
    differs from it): their next merge needs it. An unedited file is its own base."""


@dataclass(frozen=True)
class Manifest:
    generator_version: str
    declarations: InputRecord
    backend_yaml: InputRecord
    files: Mapping[str, str] = field(default_factory=dict)
    """Generator-owned files (relative to the output directory) and their sha256."""
    kernel_files: Mapping[str, KernelFileRecord] = field(default_factory=dict)
    orphaned_kernel_files: tuple[str, ...] = ()
    """Kernel files whose ops are gone: kept on disk, left out of the build, reported."""
    custom_class_files: tuple[str, ...] = ()
    """The user's files of the YAML's custom classes (created once, never merged): recorded so
    the fast up-to-date answer knows a missing one must be created again."""
    shared_files: Mapping[str, SharedFileRecord] = field(default_factory=dict)
    """A backend project's shared files (relative to the output directory: `../csrc/...`), which
    the tool keeps current; empty outside a project (the reference backend's are the tool's own)."""

    @property
    def kernel_count(self) -> int:
        """How many kernels a run reports: the aten kernels of the kernel files (custom ops'
        files, in custom_ops/, hold their CPU and device kernels and Python functions)."""
        return sum(
            len(record.heads)
            for path, record in self.kernel_files.items()
            if path.rpartition("/")[0].rpartition("/")[2] != CUSTOM_OPS_DIR
        )

    def to_json(self) -> str:
        document: dict[str, Any] = {
            "generated_by": f"{GENERATED_MARKER}; do not edit (see README: the manifest)",
            "format": FORMAT_VERSION,
            "generator": {"name": "scaffold-backend", "version": self.generator_version},
            "inputs": {
                "declarations": _input_json(self.declarations),
                "backend_yaml": _input_json(self.backend_yaml),
            },
            "files": dict(sorted(self.files.items())),
            "kernel_files": {
                path: {
                    "heads": dict(sorted(record.heads.items())),
                    "type_signatures": dict(sorted(record.type_signatures.items())),
                    "base": record.base,
                }
                for path, record in sorted(self.kernel_files.items())
            },
            "orphaned_kernel_files": sorted(self.orphaned_kernel_files),
        }
        if self.custom_class_files:  # absent without classes: older manifests stay as they were
            document["custom_class_files"] = sorted(self.custom_class_files)
        if self.shared_files:
            document["shared_files"] = {
                path: {"blob": record.blob, **({"base": record.base} if record.base is not None else {})}
                for path, record in sorted(self.shared_files.items())
            }
        return json.dumps(document, indent=2, sort_keys=False) + "\n"


def _input_json(record: InputRecord) -> dict[str, Any]:
    document: dict[str, Any] = {"path": record.path, "sha256": record.sha256}
    if record.torch_version is not None:
        document["torch_version"] = record.torch_version
    return document
