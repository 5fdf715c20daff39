#include "env.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <limits>

#include <c10/util/Exception.h>

namespace scaffold::runtime::env {

std::optional<std::string> get(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') {
    return std::nullopt;
  }
  return std::string(value);
}

int64_t get_int(
    const char* name,
    int64_t default_value,
    int64_t min_value,
    int64_t max_value) {
  auto text = get(name);
  if (!text) {
    return default_value;
  }
  errno = 0;
  char* end = nullptr;
  const long long value = std::strtoll(text->c_str(), &end, 10);
  TORCH_CHECK(
      errno == 0 && end != text->c_str() && *end == '\0' &&
          value >= min_value && value <= max_value,
      "environment variable ",
      name,
      "='",
      *text,
      "' is invalid: expected an integer in [",
      min_value,
      ", ",
      max_value,
      "]");
  return value;
}

bool get_flag(const char* name, bool default_value) {
  auto text = get(name);
  if (!text) {
    return default_value;
  }
  std::string lower = *text;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) {
    return static_cast<char>(std::tolower(c));
  });
  if (lower == "1" || lower == "true" || lower == "on" || lower == "yes") {
    return true;
  }
  if (lower == "0" || lower == "false" || lower == "off" || lower == "no") {
    return false;
  }
  TORCH_CHECK(
      false,
      "environment variable ",
      name,
      "='",
      *text,
      "' is invalid: expected 1/0, true/false, on/off or yes/no");
}

uint64_t get_bytes(const char* name, uint64_t default_value) {
  auto text = get(name);
  if (!text) {
    return default_value;
  }
  errno = 0;
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text->c_str(), &end, 10);
  bool ok = errno == 0 && end != text->c_str() && (*text)[0] != '-';
  unsigned shift = 0;
  if (ok && *end != '\0') {
    switch (std::toupper(static_cast<unsigned char>(*end))) {
      case 'K': shift = 10; break;
      case 'M': shift = 20; break;
      case 'G': shift = 30; break;
      case 'T': shift = 40; break;
      default: ok = false;
    }
    ++end;
    // Accept "1G" and "1GB"/"1GiB" alike.
    if (ok && (*end == 'B' || *end == 'b')) {
      ++end;
    } else if (ok && (*end == 'i') && (end[1] == 'B' || end[1] == 'b')) {
      end += 2;
    }
    ok = ok && *end == '\0';
  }
  ok = ok && value <= (std::numeric_limits<uint64_t>::max() >> shift);
  TORCH_CHECK(
      ok,
      "environment variable ",
      name,
      "='",
      *text,
      "' is invalid: expected a byte count such as 1073741824 or 1G");
  return static_cast<uint64_t>(value) << shift;
}

} // namespace scaffold::runtime::env
