#include "op_signature.h"

#include <cctype>
#include <cmath>
#include <cstdio>

#include <ATen/core/Tensor.h>
#include <c10/core/ScalarType.h>

namespace scaffold::runtime {
namespace {

// One call's arguments as JSON: the shapes and dtypes of its tensors, and every
// argument in schema order with tensors as {"tensor": i} (an index into the
// shapes), so that a test can call the op again on exactly these inputs.

// torch's Python name of a dtype ("float32"), which torch.<name> gives back.
std::string dtype_name(c10::ScalarType type) {
  switch (type) {
    case c10::ScalarType::Float: return "float32";
    case c10::ScalarType::Double: return "float64";
    case c10::ScalarType::Half: return "float16";
    case c10::ScalarType::BFloat16: return "bfloat16";
    case c10::ScalarType::ComplexHalf: return "complex32";
    case c10::ScalarType::ComplexFloat: return "complex64";
    case c10::ScalarType::ComplexDouble: return "complex128";
    case c10::ScalarType::Byte: return "uint8";
    case c10::ScalarType::Char: return "int8";
    case c10::ScalarType::Short: return "int16";
    case c10::ScalarType::Int: return "int32";
    case c10::ScalarType::Long: return "int64";
    case c10::ScalarType::Bool: return "bool";
    default: break;
  }
  // The rest (uint16, float8_e4m3fn, qint8, ...) are c10's names in lower case.
  std::string name = c10::toString(type);
  for (char& c : name) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return name;
}

const char* layout_name(c10::Layout layout) {
  switch (layout) {
    case c10::Layout::Strided: return "strided";
    case c10::Layout::Sparse: return "sparse_coo";
    case c10::Layout::SparseCsr: return "sparse_csr";
    case c10::Layout::SparseCsc: return "sparse_csc";
    case c10::Layout::SparseBsr: return "sparse_bsr";
    case c10::Layout::SparseBsc: return "sparse_bsc";
    case c10::Layout::Mkldnn: return "_mkldnn";
    case c10::Layout::Jagged: return "jagged";
    default: return "unknown";
  }
}

const char* memory_format_name(c10::MemoryFormat format) {
  switch (format) {
    case c10::MemoryFormat::Contiguous: return "contiguous_format";
    case c10::MemoryFormat::Preserve: return "preserve_format";
    case c10::MemoryFormat::ChannelsLast: return "channels_last";
    case c10::MemoryFormat::ChannelsLast3d: return "channels_last_3d";
    default: return "unknown";
  }
}

} // namespace

void append_json_string(std::string& out, std::string_view text) {
  out += '"';
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte < 0x20 || byte >= 0x7f) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", byte);
      out += escaped;
    } else {
      out += c;
    }
  }
  out += '"';
}

namespace {

void append_double(std::string& out, double value) {
  if (std::isnan(value)) {
    out += R"({"float": "nan"})";
  } else if (std::isinf(value)) {
    out += value > 0 ? R"({"float": "inf"})" : R"({"float": "-inf"})";
  } else {
    char text[32];
    std::snprintf(text, sizeof(text), "%.17g", value);
    out += text;
    // JSON readers take 1e+20 for a float already; an integral value keeps a
    // ".0" so that the argument stays a float when read back.
    if (std::string_view(text).find_first_of(".eEn") == std::string_view::npos) {
      out += ".0";
    }
  }
}

// What a schema argument's integers mean: ScalarType, Layout and MemoryFormat
// arguments travel as plain ints.
enum class IntMeaning { Number, Dtype, Layout, MemoryFormat };

IntMeaning int_meaning(const c10::Argument* argument) {
  if (argument == nullptr) {
    return IntMeaning::Number;
  }
  c10::TypePtr type = argument->real_type();
  if (auto optional = type->cast<c10::OptionalType>()) {
    type = optional->getElementType();
  }
  switch (type->kind()) {
    case c10::TypeKind::ScalarTypeType: return IntMeaning::Dtype;
    case c10::TypeKind::LayoutType: return IntMeaning::Layout;
    case c10::TypeKind::MemoryFormatType: return IntMeaning::MemoryFormat;
    default: return IntMeaning::Number;
  }
}

class SignatureWriter {
 public:
  explicit SignatureWriter(c10::DeviceType device_type) : device_type_(device_type) {}

  void argument(const c10::IValue& value, const c10::Argument* schema_argument) {
    arguments_ += arguments_.size() == 1 ? "" : ", ";
    this->value(value, int_meaning(schema_argument));
  }

  std::string finish() && {
    return R"({"shapes": )" + shapes_ + R"(], "dtypes": )" + dtypes_ + R"(], "arguments": )" + arguments_ + "]}";
  }

 private:
  void value(const c10::IValue& value, IntMeaning meaning) {
    if (value.isNone()) {
      arguments_ += "null";
    } else if (value.isTensor()) {
      tensor(value.toTensor());
    } else if (value.isBool()) {
      arguments_ += value.toBool() ? "true" : "false";
    } else if (value.isInt()) {
      integer(value.toInt(), meaning);
    } else if (value.isDouble()) {
      append_double(arguments_, value.toDouble());
    } else if (value.isComplexDouble()) {
      const c10::complex<double> z = value.toComplexDouble();
      arguments_ += R"({"complex": [)";
      append_double(arguments_, z.real());
      arguments_ += ", ";
      append_double(arguments_, z.imag());
      arguments_ += "]}";
    } else if (value.isSymInt()) {
      const std::optional<int64_t> concrete = value.toSymInt().maybe_as_int();
      if (concrete.has_value()) {
        arguments_ += std::to_string(*concrete);
      } else {
        arguments_ += R"({"unsupported": "SymInt"})";
      }
    } else if (value.isString()) {
      append_json_string(arguments_, value.toStringRef());
    } else if (value.isDevice()) {
      arguments_ += R"({"device": )";
      append_json_string(arguments_, value.toDevice().str());
      arguments_ += "}";
    } else if (value.isGenerator()) {
      arguments_ += R"({"generator": null})";
    } else if (value.isList()) {
      arguments_ += "[";
      bool first = true;
      for (const c10::IValue& element : value.toListRef()) {
        arguments_ += first ? "" : ", ";
        first = false;
        this->value(element, meaning);
      }
      arguments_ += "]";
    } else if (value.isTuple()) {
      arguments_ += "[";
      bool first = true;
      for (const c10::IValue& element : value.toTupleRef().elements()) {
        arguments_ += first ? "" : ", ";
        first = false;
        this->value(element, IntMeaning::Number);
      }
      arguments_ += "]";
    } else {
      arguments_ += R"({"unsupported": )";
      append_json_string(arguments_, value.tagKind());
      arguments_ += "}";
    }
  }

  void integer(int64_t value, IntMeaning meaning) {
    switch (meaning) {
      case IntMeaning::Dtype:
        arguments_ += R"({"dtype": ")" + dtype_name(static_cast<c10::ScalarType>(value)) + "\"}";
        return;
      case IntMeaning::Layout:
        arguments_ += std::string(R"({"layout": ")") + layout_name(static_cast<c10::Layout>(value)) + "\"}";
        return;
      case IntMeaning::MemoryFormat:
        arguments_ += std::string(R"({"memory_format": ")") +
            memory_format_name(static_cast<c10::MemoryFormat>(value)) + "\"}";
        return;
      case IntMeaning::Number:
        arguments_ += std::to_string(value);
        return;
    }
  }

  void tensor(const at::Tensor& tensor) {
    if (!tensor.defined()) {
      arguments_ += "null";
      return;
    }
    shapes_ += tensors_ == 0 ? "" : ", ";
    dtypes_ += tensors_ == 0 ? "" : ", ";
    shapes_ += "[";
    if (tensor.layout() == c10::Layout::Strided && !tensor.is_nested()) {
      bool first = true;
      for (const int64_t size : tensor.sizes()) {
        shapes_ += first ? "" : ", ";
        first = false;
        shapes_ += std::to_string(size);
      }
    }
    shapes_ += "]";
    append_json_string(dtypes_, dtype_name(tensor.scalar_type()));
    arguments_ += R"({"tensor": )" + std::to_string(tensors_);
    // A CPU tensor among device ones: a 0-dim scalar an op allows there.
    if (tensor.device().type() != device_type_) {
      arguments_ += R"(, "device": )";
      append_json_string(arguments_, c10::DeviceTypeName(tensor.device().type(), /*lower_case=*/true));
    }
    arguments_ += "}";
    ++tensors_;
  }

  c10::DeviceType device_type_;
  std::string shapes_ = "[";
  std::string dtypes_ = "[";
  std::string arguments_ = "[";
  int64_t tensors_ = 0;
};

} // namespace

std::string call_signature_json(c10::ArrayRef<const c10::IValue> arguments, const c10::FunctionSchema* schema) {
  SignatureWriter writer(c10::DeviceType::PrivateUse1);
  const auto* schema_arguments = schema != nullptr ? &schema->arguments() : nullptr;
  for (size_t i = 0; i < arguments.size(); ++i) {
    const c10::Argument* argument =
        schema_arguments != nullptr && i < schema_arguments->size() ? &(*schema_arguments)[i] : nullptr;
    writer.argument(arguments[i], argument);
  }
  return std::move(writer).finish();
}

} // namespace scaffold::runtime
