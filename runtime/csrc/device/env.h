// Reading the runtime's configuration from environment variables.
//
// All knobs are read once, at first use, so a process sees one consistent
// configuration. Malformed values are an error (naming the variable) rather
// than being silently replaced by a default.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace scaffold::runtime::env {

// The variable's value, or nullopt when unset or empty.
std::optional<std::string> get(const char* name);

// A decimal integer in [min_value, max_value].
int64_t get_int(
    const char* name,
    int64_t default_value,
    int64_t min_value,
    int64_t max_value);

// 1/0, true/false, on/off, yes/no (any case).
bool get_flag(const char* name, bool default_value);

// A byte count: plain digits, optionally followed by K, M, G or T (powers of
// 1024), e.g. "1073741824" or "1G".
uint64_t get_bytes(const char* name, uint64_t default_value);

} // namespace scaffold::runtime::env
