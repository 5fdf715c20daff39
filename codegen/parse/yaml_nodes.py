"""Backend YAML text as nodes, and nodes as typed values: the one way the generator reads YAML.

`compose_yaml` turns text into PyYAML's node tree (safe tags only; nothing is constructed), its
size bounded once aliases are expanded, or into a located BackendYamlError; `YamlReader` turns
nodes into strings, booleans, integers, lists and mappings with known keys, naming the node's line
in every error. Every command that reads a YAML document goes through `compose_yaml` (a test keeps
it so), so each gets the same bound.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping
from typing import TypeVar

import yaml
from torchgen.model import OperatorName

from ..errors import BackendYamlError, SourceLocation
from ..model import ident
from ..model.backend import OpEntry
from .declarations import TORCHGEN_PARSE_ERRORS

T = TypeVar("T")

STR_TAG = "tag:yaml.org,2002:str"
BOOL_TAG = "tag:yaml.org,2002:bool"
INT_TAG = "tag:yaml.org,2002:int"
NULL_TAG = "tag:yaml.org,2002:null"


class YamlReader:
    """Turns YAML nodes into typed values, with the node's line in every error."""

    def __init__(self, display_path: str, unsupported_keys: Mapping[str, tuple[str, str]] | None = None) -> None:
        self.display_path = display_path
        self.unsupported_keys = unsupported_keys or {}
        """Keys known but not supported: key -> (message, hint), said instead of "unknown key"."""

    def location(self, node: yaml.Node) -> SourceLocation:
        return SourceLocation(self.display_path, node.start_mark.line + 1)

    def error(self, node: yaml.Node, message: str, hint: str | None = None) -> BackendYamlError:
        return BackendYamlError(message, location=self.location(node), hint=hint)

    def check_name(self, node: yaml.Node, problem: ident.NameProblem | None) -> None:
        if problem is not None:
            raise self.error(node, problem.message, hint=problem.hint)

    def mapping(
        self, node: yaml.Node, what: str, valid_keys: tuple[str, ...]
    ) -> dict[str, tuple[yaml.Node, yaml.Node]]:
        """The mapping's entries by key; unknown and duplicate keys are errors."""
        if not isinstance(node, yaml.MappingNode):
            raise self.error(node, f"{what} must be a mapping of keys to values")
        entries: dict[str, tuple[yaml.Node, yaml.Node]] = {}
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.tag != STR_TAG:
                raise self.error(key_node, f"{what} keys must be plain names")
            key = key_node.value
            if key in entries:
                first = entries[key][0].start_mark.line + 1
                raise self.error(key_node, f"key '{key}' appears twice (first at line {first})")
            if key not in valid_keys:
                raise self._unknown_key(key_node, key, what, valid_keys)
            entries[key] = (key_node, value_node)
        return entries

    def _unknown_key(
        self, node: yaml.Node, key: str, what: str, valid_keys: tuple[str, ...]
    ) -> BackendYamlError:
        if key in self.unsupported_keys:
            message, hint = self.unsupported_keys[key]
            return self.error(node, message, hint=hint)
        close = difflib.get_close_matches(key, valid_keys, n=1)
        suggestion = f"did you mean '{close[0]}'? " if close else ""
        return self.error(
            node,
            f"unknown key '{key}' in {what}",
            hint=f"{suggestion}valid keys: {', '.join(valid_keys)}",
        )

    def string(self, node: yaml.Node, what: str) -> str:
        if not isinstance(node, yaml.ScalarNode) or node.tag != STR_TAG or not node.value:
            raise self.error(node, f"{what} must be a non-empty string")
        return str(node.value)

    def boolean(self, node: yaml.Node, what: str) -> bool:
        if not isinstance(node, yaml.ScalarNode) or node.tag != BOOL_TAG:
            raise self.error(node, f"{what} must be true or false")
        return bool(yaml.constructor.SafeConstructor.bool_values[node.value.lower()])

    def integer(self, node: yaml.Node, what: str) -> int:
        text = node.value if isinstance(node, yaml.ScalarNode) else ""
        # YAML 1.1 also reads 0x10, 0o17, 1_000 and 1:30 (sexagesimal) as integers; a count is
        # written in decimal, and anything else is more likely a typo than a wish.
        digits = text[1:] if text[:1] in "+-" else text
        if node.tag != INT_TAG or not digits.isdecimal() or not digits.isascii() or len(digits) > 9:
            raise self.error(node, f"{what} must be a decimal integer")
        return int(text)

    def sequence(self, node: yaml.Node, what: str, item: Callable[[yaml.Node], T]) -> tuple[T, ...]:
        """A list; an empty value (`supported:`) is an empty list, as in torchgen."""
        if isinstance(node, yaml.ScalarNode) and node.tag == NULL_TAG:
            return ()
        if not isinstance(node, yaml.SequenceNode):
            raise self.error(node, f"{what} must be a list")
        return tuple(item(child) for child in node.value)

    def op_entry(self, node: yaml.Node, what: str) -> OpEntry:
        if not isinstance(node, yaml.ScalarNode) or node.tag != STR_TAG:
            raise self.error(node, f"every entry of {what} must be an operator name such as add.out")
        text = str(node.value)
        try:
            OperatorName.parse(text)
            valid = text.replace(".", "_").isidentifier() and text.isascii()
        except TORCHGEN_PARSE_ERRORS:
            valid = False
        if not valid:
            raise self.error(
                node, f"'{text}' in {what} is not an operator name (expected e.g. add.Tensor, abs)"
            )
        return OpEntry(text, self.location(node))


# Deeper than any backend YAML (they nest four levels); the pure-Python parser may run out of
# stack on such a text, where libyaml would not, so it decides those (see _compose).
_LIBYAML_MAX_DEPTH = 32
MAX_NODES = 100_000
"""The most nodes a backend YAML may hold once its aliases are expanded: a reference backend's has
about a thousand, a YAML listing every op of torch a few thousand. An alias makes a node appear
wherever it is named, so a few lines of anchors can stand for billions of nodes ("billion
laughs"): such a document is refused before anything walks it."""


class _Unbounded(Exception):
    """Internal: the document is too large once expanded, or refers to itself."""

    def __init__(self, node: yaml.Node, problem: str) -> None:
        super().__init__(problem)
        self.node = node
        self.problem = problem


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [child for pair in node.value for child in pair]
    return []


def _expanded_depth(root: yaml.Node) -> int:
    """How deep the document nests once its aliases are expanded; raises _Unbounded when it
    holds more than MAX_NODES nodes then, or a node inside itself. Each distinct node is visited
    once (a node an alias repeats is the same object), so this costs what the text does."""
    size: dict[int, int] = {}
    depth: dict[int, int] = {}
    open_nodes: set[int] = set()
    pending: list[tuple[yaml.Node, bool]] = [(root, False)]
    while pending:
        node, children_done = pending.pop()
        key = id(node)
        if children_done:
            children = _children(node)
            size[key] = 1 + sum(size[id(child)] for child in children)
            depth[key] = 1 + max((depth[id(child)] for child in children), default=0)
            open_nodes.discard(key)
            if size[key] > MAX_NODES:
                raise _Unbounded(
                    node, f"its aliases expand to more than {MAX_NODES:,} nodes (a backend YAML has a few thousand)"
                )
            continue
        if key in size:
            continue
        open_nodes.add(key)
        pending.append((node, True))
        for child in _children(node):
            if id(child) in open_nodes:
                raise _Unbounded(child, "an alias refers to a node that contains it")
            if id(child) not in size:
                pending.append((child, False))
    return depth[id(root)]


def _compose(text: str) -> yaml.Node | None:
    """The YAML node tree, through libyaml when PyYAML has it (a tenth of the time for an
    858-op YAML), measured (see _expanded_depth) before anything else walks it. A text libyaml
    refuses, or nests unusually deep, is composed again by the pure-Python parser, whose errors
    are the ones this module reports, so the messages do not depend on the build."""
    fast_loader = getattr(yaml, "CSafeLoader", None)
    if fast_loader is not None:
        try:
            node: yaml.Node | None = yaml.compose(text, Loader=fast_loader)
        except (yaml.YAMLError, RecursionError):
            pass
        else:
            if node is None or _expanded_depth(node) <= _LIBYAML_MAX_DEPTH:
                return node
    node = yaml.compose(text, Loader=yaml.SafeLoader)
    if node is not None:
        _expanded_depth(node)
    return node


def compose_yaml(text: str, display_path: str) -> yaml.Node | None:
    """The node tree of `text` (None for an empty document); a text that is not YAML is a
    BackendYamlError located at its line."""
    try:
        return _compose(text)
    except _Unbounded as error:
        raise BackendYamlError(
            f"invalid YAML: {error.problem}",
            location=SourceLocation(display_path, error.node.start_mark.line + 1),
        ) from None
    except yaml.reader.ReaderError as error:
        # A control character or a byte PyYAML refuses: located by the line it is on.
        character_line = text.count("\n", 0, error.position) + 1
        character = error.character
        code = ord(character) if isinstance(character, str) else int(character)
        raise BackendYamlError(
            f"invalid YAML: the character U+{code:04X} is not allowed",
            location=SourceLocation(display_path, character_line),
        ) from None
    except RecursionError:
        raise BackendYamlError(
            "invalid YAML: nested too deeply", location=SourceLocation(display_path)
        ) from None
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        # An error at the end of the stream is reported on the last line, not one past it.
        line = None if mark is None else min(mark.line + 1, max(1, len(text.splitlines())))
        raise BackendYamlError(
            f"invalid YAML: {error.problem or error.context}",
            location=SourceLocation(display_path, line),
        ) from None
    except yaml.YAMLError as error:
        raise BackendYamlError(
            f"invalid YAML: {error}".splitlines()[0], location=SourceLocation(display_path)
        ) from None
