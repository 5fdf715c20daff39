"""Which kernels a user's kernel file defines (cpp_definitions.py): decided on C++ tokens, so
text that merely holds a signature (a comment, a string, disabled code, a macro) defines nothing,
and a definition the user reformatted is still one."""

from __future__ import annotations

import pytest

from scaffold_backend.parse.cpp_definitions import Signature, defined_signatures, kernel_signature, tokens

ABS = kernel_signature("tiny", "at::Tensor abs(const at::Tensor & self)")
ABS_OUT = kernel_signature("tiny", "at::Tensor & abs_out(const at::Tensor & self, at::Tensor & out)")
VIEW_DTYPE = kernel_signature("tiny", "at::Tensor view(const at::Tensor & self, at::ScalarType dtype)")
ADD_TENSOR = kernel_signature(
    "tiny", "at::Tensor add(const at::Tensor & self, const at::Tensor & other, const at::Scalar & alpha)"
)
ADD_SCALAR = kernel_signature(
    "tiny", "at::Tensor add(const at::Tensor & self, const at::Scalar & other, const at::Scalar & alpha)"
)
ALL = [ABS, ABS_OUT, VIEW_DTYPE, ADD_TENSOR, ADD_SCALAR]

ABS_OUT_DEFINED = """
at::Tensor & abs_out(const at::Tensor & self, at::Tensor & out) {
  return out;
}
"""


def in_namespace(body: str, namespace: str = "tiny") -> str:
    return (
        f'#include "native/abs.h"\n\nnamespace {namespace} {{\n{ABS_OUT_DEFINED}{body}\n}}  // namespace {namespace}\n'
    )


def defined(text: str) -> set[Signature]:
    signatures: set[Signature] = defined_signatures(text, ALL)
    return signatures


def test_the_signature_of_a_generated_definition_line() -> None:
    assert Signature(
        ("tiny", "abs_out"),
        (("const", "at", "::", "Tensor", "&"), ("at", "::", "Tensor", "&")),
    ) == ABS_OUT
    scoped = kernel_signature("a::b", "::std::tuple<at::Tensor,at::Tensor> Impl::f(int64_t dim, bool keepdim)")
    assert scoped == Signature(("a", "b", "Impl", "f"), (("int64_t",), ("bool",)))


@pytest.mark.parametrize(
    "body",
    [
        "// at::Tensor abs(const at::Tensor & self) { return self; }",
        "/* at::Tensor abs(const at::Tensor & self) {\n  return self;\n} */",
        "// a note that goes on \\\nat::Tensor abs(const at::Tensor & self) { return self; }",
        'const char* kDoc = "at::Tensor abs(const at::Tensor & self) { return self; }";',
        'const char* kDoc = R"doc(at::Tensor abs(const at::Tensor & self) {\n return self; })doc";',
        "#if 0\nat::Tensor abs(const at::Tensor & self) { return self; }\n#endif",
        "#if 1\n#else\nat::Tensor abs(const at::Tensor & self) { return self; }\n#endif",
        "#define ABS_STUB at::Tensor abs(const at::Tensor & self) { return self; }",
        "at::Tensor abs(const at::Tensor & self);",
        "at::Tensor abs(const at::Tensor & self) = delete;",
        "namespace detail {\nat::Tensor abs(const at::Tensor & self) { return self; }\n}",
        "namespace {\nat::Tensor abs(const at::Tensor & self) { return self; }\n}",
        "struct Helper {\n  static at::Tensor abs(const at::Tensor & self) { return self; }\n};",
        "at::Tensor other(const at::Tensor & self) {\n  at::Tensor abs(const at::Tensor & self);\n"
        "  return abs(self);\n}",
        "at::Tensor abs(at::Tensor & self) { return self; }",
        "at::Tensor abs(const at::Tensor & self, bool extra) { return self; }",
    ],
    ids=["line-comment", "block-comment", "spliced-comment", "string", "raw-string", "if-0", "else-of-if-1",
         "define", "declaration", "deleted", "other-namespace", "anonymous-namespace", "class-member",
         "call-and-local-declaration", "other-parameter-type", "extra-parameter"],
)
def test_text_holding_a_signature_does_not_define_the_kernel(body: str) -> None:
    assert defined(in_namespace(body)) == {ABS_OUT}


@pytest.mark.parametrize(
    "body",
    [
        "at::Tensor abs(const at::Tensor & self) { return self; }",
        "at::Tensor abs(const at::Tensor& self) {\n  return self;\n}",
        "at::Tensor\nabs(\n    const at::Tensor &\n        input)\n{\n  return input;\n}",
        "at::Tensor abs(const at::Tensor &) { return {}; }",
        "at::Tensor /* the result */ abs(const at::Tensor & self /* never empty */) { return self; }",
        "at::Tensor abs(const at::Tensor & self) noexcept(false) try { return self; } catch (...) { throw; }",
        "#ifdef WITH_FAST_ABS\nat::Tensor abs(const at::Tensor & self) { return fast(self); }\n#else\n"
        "at::Tensor abs(const at::Tensor & self) { return self; }\n#endif",
        "#if 0\nnot code\n#elif 1\nat::Tensor abs(const at::Tensor & self) { return self; }\n#endif",
        'extern "C++" {\nat::Tensor abs(const at::Tensor & self) { return self; }\n}',
        'const char* kDoc = "}";\nat::Tensor abs(const at::Tensor & self) { return self; }',
    ],
    ids=["as-generated", "clang-format", "broken-over-lines", "unnamed-parameter", "comments-between",
         "specifiers-and-try", "ifdef-either-way", "elif-1", "linkage-block", "brace-in-a-string"],
)
def test_a_reformatted_definition_still_defines_the_kernel(body: str) -> None:
    assert defined(in_namespace(body)) == {ABS_OUT, ABS}


def test_a_definition_qualified_outside_its_namespace_counts() -> None:
    text = "namespace tiny {\nat::Tensor abs(const at::Tensor & self);\n}\n" + (
        "at::Tensor tiny::abs(const at::Tensor & self) { return self; }\n"
        "at::Tensor & ::tiny::abs_out(const at::Tensor & self, at::Tensor & out) { return out; }\n"
    )
    assert defined(text) == {ABS, ABS_OUT}


def test_nested_namespaces_and_class_scopes() -> None:
    nested = kernel_signature("vendor::tiny", "at::Tensor abs(const at::Tensor & self)")
    member = kernel_signature("tiny", "at::Tensor Kernels::abs(const at::Tensor & self)")
    definition = "at::Tensor abs(const at::Tensor & self) { return self; }\n"
    signatures = [nested, member]
    assert defined_signatures(f"namespace vendor {{ namespace tiny {{\n{definition}}} }}", signatures) == {nested}
    assert defined_signatures(f"namespace vendor::tiny {{\n{definition}}}", signatures) == {nested}
    assert defined_signatures(f"namespace tiny {{\n{definition}}}", signatures) == set()
    text = "namespace tiny {\nat::Tensor Kernels::abs(const at::Tensor & self) { return self; }\n}"
    assert defined_signatures(text, signatures) == {member}


def test_overloads_of_one_name_are_told_apart_by_their_parameter_types() -> None:
    add_scalar = "at::Tensor add(const at::Tensor& a, const at::Scalar& b, const at::Scalar& alpha) { return a; }"
    assert defined(in_namespace(add_scalar)) == {ABS_OUT, ADD_SCALAR}
    # A by-value parameter's top-level const is no part of the signature, as in C++.
    view = "at::Tensor view(const at::Tensor & self, const at::ScalarType dtype) { return self; }"
    assert defined(in_namespace(view)) == {ABS_OUT, VIEW_DTYPE}


def test_tokens_of_literals_numbers_and_splices() -> None:
    assert tokens("u8\"a\" L'b' 1'000'000 0x1.8p+3 a::b->c // x\n") == [
        '""', "''", "1'000'000", "0x1.8p+3", "a", "::", "b", "-", ">", "c"]
    assert tokens('R"x(a)" b)x" c') == ['""', "c"]
    assert tokens("#define A \\\n  B\nC") == ["C"]
    assert tokens("#if 0\n#if 1\nA\n#endif\nB\n#else\nC\n#endif\nD") == ["C", "D"]
    assert tokens("\"unterminated\nnext") == ['""', "next"]
