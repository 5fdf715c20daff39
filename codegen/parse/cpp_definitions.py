"""Which kernels a user's C++ file defines, decided on C++ tokens rather than on its text.

A kernel file belongs to the user, so the generator cannot ask it to keep any marker (a marker
comment the user deletes, moves or copies would say the wrong thing either way): the only thing
that must be there is what the linker needs, the definition of each kernel the registration code
calls. The build finds a missing one too, but only at link time, after `--check` has passed. So
whether it is there is decided on the file as C++'s own first translation phases see it, and
neither layout nor prose can change the answer:

1. Lines joined at backslash-newlines; comments dropped; string and character literals (raw
   strings included) each become one opaque token, so no text inside them can look like code.
2. Preprocessor directives are not code: a `#define` holding a signature defines nothing. Groups
   of `#if 0` / `#if false` (with their `#elif` / `#else`, nested) are skipped, the usual way to
   disable code; any other condition cannot be known here and its groups count as code.
3. Braces are matched and each `{` classified: a namespace (`namespace a::b {`), a linkage block
   (`extern "C" {`), or anything else (function body, class, initializer). Only what stands at
   namespace scope can define a kernel.
4. A kernel is defined when, at namespace scope, a statement ending in `{` has a parenthesised
   list whose name, qualified by the enclosing namespaces and any written qualifier
   (`foo::abs`, `Class::abs`), is the kernel's, and whose parameters are the kernel's types in
   order, each optionally followed by a parameter name; a by-value parameter may also carry a
   top-level `const` (which C++ ignores in a signature). This is C++'s rule for which
   declaration a definition belongs to (name, scope, parameter types), with types compared as
   written: `const at::Tensor&` and `const at::Tensor &` are the same tokens, `at::Tensor const&`
   or a typedef are not.

What this cannot see, by construction: a definition produced by a macro, or one spelled with
other type names than the declaration's. Such a kernel is reported missing and a fresh stub is
added, so the compiler then names the duplicate definition, which is loud and located, instead
of the linker naming a missing symbol.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

STRING_LITERAL = '""'
"""The token every string literal becomes (its text is never looked at)."""
CHARACTER_LITERAL = "''"

_STRING_PREFIXES = frozenset({"L", "u", "U", "u8", "R", "LR", "uR", "UR", "u8R"})
_HORIZONTAL_SPACE = frozenset(" \t\r\f\v")


def _is_identifier_start(character: str) -> bool:
    return character == "_" or character.isalpha()


def _is_identifier_part(character: str) -> bool:
    return character == "_" or character.isalnum()


def tokens(text: str) -> list[str]:
    """The file's code as tokens (identifiers, numbers, `::`, single punctuation characters, and
    one placeholder per literal), without comments, directives and `#if 0` groups."""
    conditionals = _Conditionals()
    code: list[str] = []
    directive: list[str] | None = None
    for token in _raw_tokens(text.replace("\\\r\n", "").replace("\\\n", "")):
        if token == "\n":
            if directive is not None:
                conditionals.directive(directive)
                directive = None
        elif token == "#\n":  # a `#` first on its line opens a directive
            directive = []
        elif directive is not None:
            directive.append(token)
        elif conditionals.active:
            code.append(token)
    if directive is not None:
        conditionals.directive(directive)
    return code


def _raw_tokens(text: str) -> Iterator[str]:
    """Tokens, with "\\n" at each line end and "#\\n" for a `#` that begins a line."""
    index, length = 0, len(text)
    line_start = True
    while index < length:
        character = text[index]
        if character == "\n":
            yield "\n"
            line_start = True
            index += 1
        elif character in _HORIZONTAL_SPACE:
            index += 1
        elif text.startswith("//", index):
            end = text.find("\n", index)
            index = length if end < 0 else end
        elif text.startswith("/*", index):
            end = text.find("*/", index + 2)
            # A comment spanning lines ends a directive line no more than whitespace would.
            index = length if end < 0 else end + 2
        elif character == "#" and line_start:
            yield "#\n"
            line_start = False
            index += 1
        else:
            line_start = False
            if _is_identifier_start(character):
                end = index + 1
                while end < length and _is_identifier_part(text[end]):
                    end += 1
                word = text[index:end]
                if end < length and text[end] in "\"'" and word in _STRING_PREFIXES:
                    index = _skip_literal(text, end, raw=word.endswith("R"))
                    yield STRING_LITERAL if text[end] == '"' else CHARACTER_LITERAL
                else:
                    index = end
                    yield word
            elif character.isdigit() or (character == "." and text[index + 1 : index + 2].isdigit()):
                end = index + 1
                while end < length and (
                    _is_identifier_part(text[end])
                    or text[end] in ".'"
                    or (text[end] in "+-" and text[end - 1] in "eEpP")
                ):
                    end += 1
                yield text[index:end]
                index = end
            elif character in "\"'":
                index = _skip_literal(text, index, raw=False)
                yield STRING_LITERAL if character == '"' else CHARACTER_LITERAL
            elif text.startswith("::", index):
                yield "::"
                index += 2
            else:
                yield character
                index += 1


def _skip_literal(text: str, start: int, *, raw: bool) -> int:
    """The index after the string or character literal whose quote is at `start`."""
    quote = text[start]
    if raw and quote == '"':
        opening = text.find("(", start + 1)
        if opening < 0:
            return len(text)
        closing = text.find(")" + text[start + 1 : opening] + '"', opening + 1)
        return len(text) if closing < 0 else closing + opening - start + 1
    index = start + 1
    while index < len(text):
        character = text[index]
        if character == "\\":
            index += 2
        elif character == quote:
            return index + 1
        elif character == "\n":  # unterminated: the literal ends with its line
            return index
        else:
            index += 1
    return index


class _Conditionals:
    """The `#if` groups around the current line: which are known to be off."""

    def __init__(self) -> None:
        # Per open #if: (the group around it is active, this branch is active, a branch was
        # certainly taken).
        self.stack: list[tuple[bool, bool, bool]] = []

    @property
    def active(self) -> bool:
        return not self.stack or self.stack[-1][1]

    def directive(self, words: Sequence[str]) -> None:
        if not words:
            return
        keyword, condition = words[0], _known_condition(words[1:])
        if keyword in ("if", "ifdef", "ifndef"):
            known = condition if keyword == "if" else None
            self.stack.append((self.active, self.active and known is not False, known is True))
        elif keyword in ("elif", "elifdef", "elifndef") and self.stack:
            outer, _, taken = self.stack[-1]
            known = condition if keyword == "elif" else None
            self.stack[-1] = (outer, outer and not taken and known is not False, taken or known is True)
        elif keyword == "else" and self.stack:
            outer, _, taken = self.stack[-1]
            self.stack[-1] = (outer, outer and not taken, True)
        elif keyword == "endif" and self.stack:
            self.stack.pop()


def _known_condition(words: Sequence[str]) -> bool | None:
    """The value of an `#if` condition when it is a literal (`0`, `1`, `false`, `true`)."""
    if len(words) == 1:
        return {"0": False, "false": False, "1": True, "true": True}.get(words[0])
    return None


@dataclass(frozen=True)
class Signature:
    """A function as C++ matches a definition to a declaration: its fully qualified name and its
    parameter types (as tokens)."""

    qualified_name: tuple[str, ...]
    parameter_types: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class _Definition:
    qualified_name: tuple[str, ...]
    parameters: tuple[tuple[str, ...], ...]
    """Each parameter's tokens as written: its type, usually followed by its name."""


def kernel_signature(namespace: str, definition_head: str) -> Signature:
    """The signature of a kernel from the definition line the generator writes for it
    (`<returns> [Class::]name(<type> <name>, ...)`) and its namespace (`a::b`)."""
    head = tokens(definition_head)
    for definition in _candidates(head, ()):
        return Signature(
            tuple(namespace.split("::")) + definition.qualified_name,
            tuple(parameter[:-1] for parameter in definition.parameters),
        )
    raise ValueError(f"not a definition line: {definition_head!r}")


def defined_signatures(text: str, signatures: Sequence[Signature]) -> set[Signature]:
    """Those of `signatures` that `text` defines at namespace scope (see the module docstring)."""
    wanted: dict[tuple[str, ...], list[Signature]] = {}
    for signature in signatures:
        wanted.setdefault(signature.qualified_name, []).append(signature)
    found: set[Signature] = set()
    for definition in _definitions(tokens(text)):
        for signature in wanted.get(definition.qualified_name, ()):
            if _parameters_match(definition.parameters, signature.parameter_types):
                found.add(signature)
    return found


def _definitions(code: list[str]) -> Iterator[_Definition]:
    """Every `name(...)` of a statement that ends in `{` at namespace scope."""
    scopes: list[tuple[str, ...] | None] = []  # per open brace: its namespace path, None: other
    namespace: tuple[str, ...] = ()
    statement = 0
    for index, token in enumerate(code):
        if token == "{":
            head = code[statement:index]
            at_namespace_scope = all(scope is not None for scope in scopes)
            opened = _namespace_opened(head) if at_namespace_scope else None
            if at_namespace_scope and opened is None:
                yield from _candidates(head, namespace)
            scopes.append(opened)
            if opened is not None:
                namespace += opened
            statement = index + 1
        elif token == "}":
            if scopes:
                closed = scopes.pop()
                if closed:
                    namespace = namespace[: len(namespace) - len(closed)]
            statement = index + 1
        elif token == ";":
            statement = index + 1


def _namespace_opened(head: list[str]) -> tuple[str, ...] | None:
    """The names a `{` after `head` adds to the namespace path: `()` for a linkage block
    (`extern "C"`), `("(anonymous)",)` for an unnamed namespace; None when it is no namespace."""
    if head[:2] == ["extern", STRING_LITERAL]:
        return ()
    words = head[1:] if head[:1] == ["inline"] else head
    if words[:1] != ["namespace"]:
        return None
    names = tuple(word for word in words[1:] if _is_identifier_start(word[0]) and word != "inline")
    return names or ("(anonymous)",)


def _candidates(head: list[str], namespace: tuple[str, ...]) -> Iterator[_Definition]:
    """Each `qualified::name ( ... )` at parenthesis depth 0 of `head`."""
    depth = 0
    for index, token in enumerate(head):
        if token == "(":
            if depth == 0 and index > 0 and _is_identifier_start(head[index - 1][0]):
                closing = _matching(head, index)
                if closing is not None:
                    yield _Definition(
                        namespace + _qualified_name(head, index - 1),
                        _split_parameters(head[index + 1 : closing]),
                    )
            depth += 1
        elif token == ")":
            depth -= 1


def _qualified_name(head: list[str], name_index: int) -> tuple[str, ...]:
    """`a::b::name` ending at `name_index`, as ("a", "b", "name"); a leading `::` is dropped
    (the global namespace is the root of every path here)."""
    parts = [head[name_index]]
    index = name_index
    while index >= 2 and head[index - 1] == "::" and _is_identifier_start(head[index - 2][0]):
        parts.insert(0, head[index - 2])
        index -= 2
    return tuple(parts)


def _matching(head: list[str], opening: int) -> int | None:
    depth = 0
    for index in range(opening, len(head)):
        if head[index] == "(":
            depth += 1
        elif head[index] == ")":
            depth -= 1
            if depth == 0:
                return index
    return None


def _split_parameters(inside: list[str]) -> tuple[tuple[str, ...], ...]:
    """The parameter list's tokens split at the commas that are not nested in (), <>, [], {}."""
    if not inside or inside == ["void"]:
        return ()
    parameters: list[tuple[str, ...]] = []
    current: list[str] = []
    depth = 0
    for token in inside:
        if token in "(<[{":
            depth += 1
        elif token in ")>]}":
            depth -= 1
        if token == "," and depth == 0:
            parameters.append(tuple(current))
            current = []
        else:
            current.append(token)
    parameters.append(tuple(current))
    return tuple(parameters)


def _parameters_match(written: Sequence[tuple[str, ...]], types: Sequence[tuple[str, ...]]) -> bool:
    return len(written) == len(types) and all(map(_parameter_matches, written, types))


def _parameter_matches(written: tuple[str, ...], type_: tuple[str, ...]) -> bool:
    """`written` declares a parameter of `type_`: the type, then at most a name; for a by-value
    type, with a top-level `const` before or after it allowed."""
    if written and _is_identifier_start(written[-1][0]) and written[:-1] in _spellings(type_):
        return True
    return written in _spellings(type_)


def _spellings(type_: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    if "&" in type_ or "*" in type_ or type_[:1] == ("const",):
        return (type_,)
    return (type_, ("const", *type_), (*type_, "const"))
