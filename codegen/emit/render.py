"""Jinja2 rendering. Templates hold no logic: every list, name and C++ fragment they print is
computed in Python (the emitters); a missing variable is an error, never an empty string."""

from __future__ import annotations

import functools
import os
from typing import Any

import jinja2

from ..resources import templates_dir, user_cache_dir


class _TemplateCodeCache(jinja2.FileSystemBytecodeCache):
    """Jinja's compiled templates, kept in the user's cache directory, so that a run does not
    lex, parse and compile every template it uses from source again. Jinja checks each entry
    against its template's source (and its own version) before using it. A cache that cannot be
    read or written costs only that time, never the run."""

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except Exception:  # noqa: BLE001 - a damaged entry fails in many ways; compile instead
            bucket.reset()

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        try:
            os.makedirs(self.directory, exist_ok=True)
            super().dump_bytecode(bucket)
        except OSError:
            pass


@functools.cache
def environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(templates_dir())),
        bytecode_cache=_TemplateCodeCache(str(user_cache_dir() / "templates")),
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
