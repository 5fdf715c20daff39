"""Adding ops to a list of the backend YAML (`supported`, `autograd`) without touching anything
else: every comment, key, blank line and quote of the file stays byte for byte.

The YAML belongs to the user, so it is edited as text, at places the parsed node tree locates
(parse/yaml_nodes.py's safe composer: the same reading the generator does), never dumped again
from data: a round-trip library would re-indent lists, re-flow long lines or drop a comment's
column. New entries go after the list's last entry, in its own indentation and dash style (a
flow list `[a, b]` gets `, c` before its bracket), and a missing list is appended at the end of
the file.
"""

from __future__ import annotations

from collections.abc import Sequence

import yaml

from ..errors import BackendYamlError, SourceLocation
from ..parse.yaml_nodes import NULL_TAG, STR_TAG, compose_yaml


def _line_ending(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _line_span(text: str, line: int) -> tuple[int, int]:
    """Start and end (before its line break) of 0-based `line`."""
    start = 0
    for _ in range(line):
        start = text.index("\n", start) + 1
    end = text.find("\n", start)
    end = len(text) if end < 0 else end
    if end > start and text[end - 1] == "\r":
        end -= 1
    return start, end


def _list_node(root: yaml.Node, key: str, display_path: str) -> tuple[yaml.Node, yaml.Node] | None:
    if not isinstance(root, yaml.MappingNode):
        raise BackendYamlError("the backend YAML must be a mapping", location=SourceLocation(display_path, 1))
    for key_node, value_node in root.value:
        if isinstance(key_node, yaml.ScalarNode) and key_node.tag == STR_TAG and key_node.value == key:
            return key_node, value_node
    return None


def add_to_op_list(text: str, display_path: str, key: str, op_names: Sequence[str]) -> str:
    """`text` with `op_names` (valid operator names, none listed yet) appended to the top-level
    list `key`; only the new entries' bytes are added."""
    if not op_names:
        return text
    newline = _line_ending(text)
    root = compose_yaml(text, display_path)
    if root is None:
        raise BackendYamlError("the backend YAML is empty", location=SourceLocation(display_path, 1))
    found = _list_node(root, key, display_path)
    if found is None:
        # No such list: a new one at the end of the file.
        separator = "" if not text or text.endswith("\n") else newline
        entries = "".join(f"  - {name}{newline}" for name in op_names)
        return f"{text}{separator}{key}:{newline}{entries}"
    key_node, value = found
    if isinstance(value, yaml.ScalarNode) and value.tag == NULL_TAG and value.value == "":
        # `supported:` with nothing after it: the entries go on the lines below the key.
        _, end = _line_span(text, key_node.start_mark.line)
        indent = " " * (key_node.start_mark.column + 2)
        entries = "".join(f"{newline}{indent}- {name}" for name in op_names)
        return text[:end] + entries + text[end:]
    if not isinstance(value, yaml.SequenceNode):
        raise BackendYamlError(
            f"'{key}' must be a list", location=SourceLocation(display_path, value.start_mark.line + 1)
        )
    if value.flow_style:
        closing = value.end_mark.index - 1  # the `]`
        if text[closing] != "]":
            raise BackendYamlError(
                f"cannot add to '{key}': its list does not end in ']'",
                location=SourceLocation(display_path, value.start_mark.line + 1),
                hint=f"write '{key}' as a block list (one '- op' per line)",
            )
        before = text[:closing].rstrip()
        separator = "" if before.endswith("[") else ", "
        return before + separator + ", ".join(op_names) + text[len(before) : closing] + text[closing:]
    last = value.value[-1]
    if last.start_mark.line != last.end_mark.line:
        raise BackendYamlError(
            f"cannot add to '{key}': its last entry spans several lines",
            location=SourceLocation(display_path, last.start_mark.line + 1),
        )
    start, end = _line_span(text, last.start_mark.line)
    # The last entry's own prefix ("  - "), so the new ones line up with it.
    prefix = text[start : start + last.start_mark.column]
    if prefix.strip() != "-":
        raise BackendYamlError(
            f"cannot add to '{key}': its last entry does not start its own line",
            location=SourceLocation(display_path, last.start_mark.line + 1),
            hint=f"write '{key}' as one '- op' per line",
        )
    entries = "".join(f"{newline}{prefix}{name}" for name in op_names)
    return text[:end] + entries + text[end:]
