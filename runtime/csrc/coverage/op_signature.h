// One op call's arguments as JSON: the shapes and dtypes of its tensors, and
// every argument in schema order with tensors as {"tensor": i} (an index into
// the shapes), so that a test can call the op again on the same inputs. The
// coverage report's call signatures (its format: the package's
// coverage/report.py).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <ATen/core/ivalue.h>
#include <ATen/core/function_schema.h>
#include <c10/util/ArrayRef.h>

namespace scaffold::runtime {

// {"shapes": [[...], ...], "dtypes": ["float32", ...], "arguments": [...]}.
// `schema` (may be null) says which integers are dtypes, layouts or memory
// formats; device tensors are the PrivateUse1 ones, and another tensor (a
// 0-dim CPU scalar) says where it is.
std::string call_signature_json(c10::ArrayRef<const c10::IValue> arguments, const c10::FunctionSchema* schema);

// `text` as a JSON string (quoted; control and non-ASCII bytes escaped).
void append_json_string(std::string& out, std::string_view text);

// A signature longer than this (a foreach op over thousands of tensors) is
// not kept: the report stays readable, and a test of it would be no unit test.
constexpr size_t kMaxSignatureBytes = 64 * 1024;

} // namespace scaffold::runtime
