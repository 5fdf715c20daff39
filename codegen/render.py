"""Jinja2 rendering. Templates hold no logic: every list, name and C++ fragment they print is
computed in Python (the emitters); a missing variable is an error, never an empty string."""

from __future__ import annotations

import functools
from typing import Any

import jinja2

from .resources import templates_dir


@functools.cache
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        autoescape=False,
        # Templates do not change during a run: without this, every one of a generation's ~1400
        # renders would stat its template file to see whether to reload it.
        auto_reload=False,
    )


def render(template: str, **context: Any) -> str:
    return environment().get_template(template).render(**context)
