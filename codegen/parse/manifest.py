"""Reading the manifest (model/manifest.py) back, validated like any other input: its shape, its
digests and its paths (where they land is checked against the layout by write/safety.py)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..errors import ManifestError, SourceLocation
from ..model.manifest import FORMAT_VERSION, InputRecord, KernelFileRecord, Manifest, SharedFileRecord
from ..paths import read_bounded

MAX_MANIFEST_BYTES = 64 * 1024 * 1024
"""A manifest larger than this was not written by scaffold-backend (the reference backend's is
a few hundred kilobytes)."""

_DIGEST_CHARACTERS = frozenset("0123456789abcdef")


class _ManifestShapeError(Exception):
    """Internal: a field of the manifest has the wrong shape; turned into one ManifestError."""


def parse_manifest(text: str, display_path: str) -> Manifest:
    """The manifest, validated like any other input: every field has its type, every digest is a
    sha256, and every path is a plain relative POSIX path (confinement to the output and kernel
    directories is checked against the layout by `safety.check_manifest_paths`)."""

    def corrupt(detail: str, line: int | None = None) -> ManifestError:
        return ManifestError(
            f"the manifest is not valid: {detail}",
            location=SourceLocation(display_path, line),
            hint="restore it from version control, or delete it: the next run then treats "
            "every existing file it did not just create as yours",
        )

    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise corrupt(f"invalid JSON ({error.msg})", error.lineno) from None
    except RecursionError:
        raise corrupt("invalid JSON (nested too deeply)") from None
    try:
        return _manifest_from_json(document)
    except _ManifestShapeError as error:
        raise corrupt(str(error)) from None


def _field(document: Any, key: str, kind: type, where: str) -> Any:
    if not isinstance(document, dict):
        raise _ManifestShapeError(f"{where} must be a JSON object")
    if key not in document:
        raise _ManifestShapeError(f"{where} has no \"{key}\"")
    value = document[key]
    if not isinstance(value, kind) or isinstance(value, bool) is not (kind is bool):
        raise _ManifestShapeError(f"\"{key}\" in {where} must be a {kind.__name__}")
    return value


def _digest(value: Any, where: str) -> str:
    if not isinstance(value, str) or len(value) != 64 or not set(value) <= _DIGEST_CHARACTERS:
        raise _ManifestShapeError(f"{where} must be a sha256 digest (64 lowercase hex digits)")
    return value


def _relative_path(value: Any, where: str) -> str:
    """A relative POSIX path: no absolute path, no backslash, no empty or `.` segment. `..`
    segments may only lead (kernel files live beside the output directory); where the path
    lands is checked against the layout."""
    if not isinstance(value, str) or not value or "\\" in value or "\x00" in value:
        raise _ManifestShapeError(f"{where}: {value!r} is not a relative path")
    if value.startswith("/") or (len(value) > 1 and value[1] == ":"):
        raise _ManifestShapeError(f"{where}: {value!r} is an absolute path")
    segments = value.split("/")
    leading = 0
    while leading < len(segments) and segments[leading] == "..":
        leading += 1
    rest = segments[leading:]
    if not rest or any(segment in ("", ".", "..") for segment in rest):
        raise _ManifestShapeError(f"{where}: {value!r} is not a plain relative path")
    return value


def _manifest_from_json(document: Any) -> Manifest:
    if not isinstance(document, dict):
        raise _ManifestShapeError("the top level must be a JSON object")
    known = {"generated_by", "format", "generator", "inputs", "files", "kernel_files",
             "orphaned_kernel_files", "custom_class_files", "shared_files"}
    unknown = sorted(set(document) - known)
    if unknown:
        raise _ManifestShapeError(f"unknown field(s) {', '.join(map(repr, unknown))}")
    version = document.get("format")
    if version != FORMAT_VERSION or isinstance(version, bool):
        raise _ManifestShapeError(
            f"format {version!r} is not {FORMAT_VERSION} (written by another scaffold-backend?)"
        )
    generator = _field(document, "generator", dict, "the manifest")
    inputs = _field(document, "inputs", dict, "the manifest")
    files = {
        _relative_path(path, "\"files\""): _digest(digest, f"\"files\" entry {path!r}")
        for path, digest in _field(document, "files", dict, "the manifest").items()
    }
    kernel_files = {}
    for path, entry in _field(document, "kernel_files", dict, "the manifest").items():
        where = f"\"kernel_files\" entry {path!r}"
        heads = _field(entry, "heads", dict, where)
        if not all(isinstance(op, str) and isinstance(head, str) for op, head in heads.items()):
            raise _ManifestShapeError(f"\"heads\" in {where} must map op names to strings")
        signatures = entry.get("type_signatures", {})
        if not isinstance(signatures, dict) or not all(
            isinstance(op, str) and isinstance(signature, str) for op, signature in signatures.items()
        ):
            raise _ManifestShapeError(f"\"type_signatures\" in {where} must map op names to strings")
        kernel_files[_relative_path(path, "\"kernel_files\"")] = KernelFileRecord(
            heads=dict(heads), base=_field(entry, "base", str, where), type_signatures=dict(signatures)
        )
    orphaned = document.get("orphaned_kernel_files", [])
    if not isinstance(orphaned, list):
        raise _ManifestShapeError("\"orphaned_kernel_files\" must be a list")
    class_files = document.get("custom_class_files", [])
    if not isinstance(class_files, list):
        raise _ManifestShapeError("\"custom_class_files\" must be a list")
    shared_entries = document.get("shared_files", {})
    if not isinstance(shared_entries, dict):
        raise _ManifestShapeError("\"shared_files\" must be a JSON object")
    shared_files = {}
    for path, entry in shared_entries.items():
        where = f"\"shared_files\" entry {path!r}"
        blob = _field(entry, "blob", str, where)
        if len(blob) != 40 or not set(blob) <= _DIGEST_CHARACTERS:
            raise _ManifestShapeError(f"\"blob\" in {where} must be a git blob id (40 lowercase hex digits)")
        base = entry.get("base")
        if base is not None and not isinstance(base, str):
            raise _ManifestShapeError(f"\"base\" in {where} must be a string")
        if set(entry) - {"blob", "base"}:
            raise _ManifestShapeError(f"unknown field(s) in {where}")
        shared_files[_relative_path(path, "\"shared_files\"")] = SharedFileRecord(blob=blob, base=base)
    return Manifest(
        generator_version=_field(generator, "version", str, "\"generator\""),
        declarations=_input_record(_field(inputs, "declarations", dict, "\"inputs\""), "declarations"),
        backend_yaml=_input_record(_field(inputs, "backend_yaml", dict, "\"inputs\""), "backend_yaml"),
        files=files,
        kernel_files=kernel_files,
        orphaned_kernel_files=tuple(
            _relative_path(path, "\"orphaned_kernel_files\"") for path in orphaned
        ),
        custom_class_files=tuple(_relative_path(path, "\"custom_class_files\"") for path in class_files),
        shared_files=shared_files,
    )


def _input_record(document: Mapping[str, Any], name: str) -> InputRecord:
    where = f"\"inputs\".\"{name}\""
    torch_version = document.get("torch_version")
    if torch_version is not None and not isinstance(torch_version, str):
        raise _ManifestShapeError(f"\"torch_version\" in {where} must be a string")
    return InputRecord(
        path=_field(document, "path", str, where),
        sha256=_digest(document.get("sha256"), f"\"sha256\" in {where}"),
        torch_version=torch_version,
    )


def read_manifest_text(path: Path, shown: str) -> str:
    """The manifest's text, read with a bound (an endless file is not a manifest)."""
    try:
        data = read_bounded(path, MAX_MANIFEST_BYTES)
    except OSError as error:
        raise ManifestError(
            f"cannot read the manifest: {error.strerror or error}", location=SourceLocation(shown)
        ) from None
    if len(data) > MAX_MANIFEST_BYTES:
        raise ManifestError("the manifest is not valid: it is far too large", location=SourceLocation(shown))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ManifestError(
            "the manifest is not valid: it is not UTF-8 text",
            location=SourceLocation(shown, data.count(b"\n", 0, error.start) + 1),
        ) from None
