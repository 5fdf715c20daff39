"""The one reviewed file of the conformance sweep, `expectations.toml`: the CI subset, whose dtypes
the ops are tested in (CUDA's or the CPU's), the ops that are not run (deny), the failures that
are known (expected), loosened tolerances, and CPU kernels whose results in a dtype are wrong
(wider reference). Every entry
names its reason; an entry without one, or with an unknown key, is an error."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # Python 3.10: the package's `test` extra installs tomli, the same parser
    import tomli as tomllib

EXPECTATIONS_PATH = Path(__file__).with_name("expectations.toml")

DEFAULT_DTYPE_NAMES = ("float32", "float64", "complex64", "bool", "int64")
"""What a sweep runs unless told (--dtypes): each op in those of them its OpInfo lists."""
DTYPE_NAMES = (
    *DEFAULT_DTYPE_NAMES, "float16", "bfloat16", "complex128", "int32", "int16", "int8", "uint8"
)
"""Every dtype a sweep can run."""
DTYPE_COVERAGES = ("cuda", "cpu")


class ExpectationsError(ValueError):
    pass


@dataclass(frozen=True)
class Entry:
    op: str
    """An OpInfo name with its variant: `add`, `nn.functional.conv2d`, `max.reduction_with_dim`."""
    dtypes: tuple[str, ...]
    """Empty: every dtype."""
    reason: str
    atol: float | None = None
    rtol: float | None = None
    since: str | None = None
    """The torch release whose OpInfo database first has the op, where that is newer than the
    oldest one backends support: on older releases the entry names no op, and matches nothing."""

    def matches(self, op: str, dtype: str) -> bool:
        return self.op == op and (not self.dtypes or dtype in self.dtypes)


@dataclass(frozen=True)
class Expectations:
    ci_ops: tuple[str, ...]
    deny: tuple[Entry, ...]
    expected_failure: tuple[Entry, ...]
    tolerance: tuple[Entry, ...]
    wider_reference: tuple[Entry, ...] = ()
    """(op, dtype) tests whose CPU reference is computed in a wider dtype although the CPU lists
    the dtype: its kernel computes it wrongly there (the device's fallback does not use it)."""
    dtype_coverage: str = "cuda"
    """Whose dtypes each op is tested in, as OpInfo lists them: "cuda" (library code picks the
    dtypes CUDA's kernels accept for every device that is not the CPU) or "cpu"."""

    def denied(self, op: str, dtype: str) -> Entry | None:
        return next((e for e in self.deny if e.matches(op, dtype)), None)

    def expected(self, op: str, dtype: str) -> Entry | None:
        return next((e for e in self.expected_failure if e.matches(op, dtype)), None)

    def tolerance_for(self, op: str, dtype: str) -> Entry | None:
        return next((e for e in self.tolerance if e.matches(op, dtype)), None)

    def needs_wider_reference(self, op: str, dtype: str) -> bool:
        return any(e.matches(op, dtype) for e in self.wider_reference)


_SECTION_KEYS = {
    "deny": {"op", "dtypes", "reason", "since"},
    "expected_failure": {"op", "dtypes", "reason", "since"},
    "tolerance": {"op", "dtypes", "reason", "atol", "rtol", "since"},
    "wider_reference": {"op", "dtypes", "reason", "since"},
}


def _entries(data: dict[str, Any], section: str, path: Path) -> tuple[Entry, ...]:
    entries = []
    for number, raw in enumerate(data.get(section, []), start=1):
        where = f"{path.name}: [[{section}]] entry {number}"
        if not isinstance(raw, dict):
            raise ExpectationsError(f"{where}: expected a table")
        unknown = sorted(set(raw) - _SECTION_KEYS[section])
        if unknown:
            raise ExpectationsError(
                f"{where}: unknown key(s) {', '.join(unknown)}; valid: "
                f"{', '.join(sorted(_SECTION_KEYS[section]))}"
            )
        if not isinstance(raw.get("op"), str) or not raw["op"]:
            raise ExpectationsError(f"{where}: 'op' (an OpInfo name) is required")
        if not isinstance(raw.get("reason"), str) or not raw["reason"].strip():
            raise ExpectationsError(f"{where} ({raw['op']}): every entry needs a 'reason'")
        dtypes = tuple(raw.get("dtypes", ()))
        bad = [d for d in dtypes if d not in DTYPE_NAMES]
        if bad:
            raise ExpectationsError(
                f"{where} ({raw['op']}): unknown dtype(s) {bad}; valid: {', '.join(DTYPE_NAMES)}"
            )
        if section == "tolerance" and "atol" not in raw and "rtol" not in raw:
            raise ExpectationsError(f"{where} ({raw['op']}): give 'atol', 'rtol' or both")
        entries.append(
            Entry(
                op=raw["op"],
                dtypes=dtypes,
                reason=raw["reason"].strip(),
                atol=raw.get("atol"),
                rtol=raw.get("rtol"),
                since=raw.get("since"),
            )
        )
    return tuple(entries)


def load_expectations(path: Path = EXPECTATIONS_PATH) -> Expectations:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise ExpectationsError(f"{path}: {error}") from None
    unknown = sorted(set(data) - {"ci", "dtypes", *_SECTION_KEYS})
    if unknown:
        raise ExpectationsError(
            f"{path.name}: unknown section(s) {', '.join(unknown)}; valid: ci, dtypes, "
            + ", ".join(sorted(_SECTION_KEYS))
        )
    dtypes = data.get("dtypes", {})
    if set(dtypes) - {"coverage", "reason"}:
        raise ExpectationsError(f"{path.name}: [dtypes] takes 'coverage' and 'reason' only")
    coverage = dtypes.get("coverage", "cuda")
    if coverage not in DTYPE_COVERAGES:
        raise ExpectationsError(
            f"{path.name}: [dtypes] coverage is {coverage!r}; valid: {', '.join(DTYPE_COVERAGES)}"
        )
    ci = data.get("ci", {})
    if set(ci) - {"ops", "reason"}:
        raise ExpectationsError(f"{path.name}: [ci] takes 'ops' and 'reason' only")
    return Expectations(
        ci_ops=tuple(ci.get("ops", ())),
        deny=_entries(data, "deny", path),
        expected_failure=_entries(data, "expected_failure", path),
        tolerance=_entries(data, "tolerance", path),
        wider_reference=_entries(data, "wider_reference", path),
        dtype_coverage=coverage,
    )
