"""The formats of `scaffold-backend diff` (diff_report.RENDERERS renders each; a test keeps the
two in step). Kept apart so the command line can offer them without importing the generator."""

from __future__ import annotations

REPORT_FORMATS = ("json", "markdown", "text")
