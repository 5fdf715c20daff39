// Turning failed driver calls into PyTorch errors.
//
// The driver (driver/scaffold_driver.h) reports failures as drvError_t codes
// plus a per-thread detail message. SCAFFOLD_DRIVER_CHECK turns a failure
// into a c10::Error that names the call, where it was made and why -- never
// an abort. Out-of-memory becomes c10::OutOfMemoryError.
#pragma once

#include <c10/util/Exception.h>

#include "scaffold_driver.h"

namespace scaffold::runtime::detail {

// Out of line so the macro stays small at every call site.
[[noreturn]] void fail_driver_call(
    const char* call_text,
    drvError_t error,
    const char* file,
    int line);

} // namespace scaffold::runtime::detail

#define SCAFFOLD_DRIVER_CHECK(call)                                          \
  do {                                                                       \
    const drvError_t scaffold_status_ = (call);                              \
    if (C10_UNLIKELY(scaffold_status_ != drvSuccess)) {                      \
      ::scaffold::runtime::detail::fail_driver_call(                         \
          #call, scaffold_status_, __FILE__, __LINE__);                      \
    }                                                                        \
  } while (0)
