"""The markers of an unresolved merge in a kernel file (written by merge.py, looked for by every
later run, the fast "up to date" check included)."""

from __future__ import annotations

START_MARKER = "<<<<<<< yours"
END_MARKER = ">>>>>>> scaffold-backend"


def has_conflict_markers(text: str) -> bool:
    lines = text.splitlines()
    return START_MARKER in lines and END_MARKER in lines
