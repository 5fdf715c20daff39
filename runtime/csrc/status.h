// Turning failed system / runtime calls into PyTorch errors.
//
// The simulated device is built from plain POSIX calls (memfd_create, mmap,
// ...). When one fails we want the Python user to see *which* call failed,
// *where*, and *why* (errno text), as a normal c10::Error -- never an abort.
#pragma once

#include <cerrno>

#include <c10/util/Exception.h>
#include <c10/util/error.h>

namespace scaffold::runtime::detail {

// Out of line so the macros below stay small at every call site.
[[noreturn]] void fail_runtime_call(
    const char* call_text,
    int error_code,
    const char* file,
    int line);

} // namespace scaffold::runtime::detail

// For calls that return 0 on success and report failure either as -1 with
// errno set (POSIX style: ftruncate, munmap, close) or as a positive error
// code (pthread style).
#define SCAFFOLD_CHECK_STATUS(call)                                        \
  do {                                                                     \
    const auto scaffold_status_ = (call);                                  \
    if (scaffold_status_ != 0) {                                           \
      const int scaffold_err_ =                                            \
          scaffold_status_ == -1 ? errno : static_cast<int>(scaffold_status_); \
      ::scaffold::runtime::detail::fail_runtime_call(                      \
          #call, scaffold_err_, __FILE__, __LINE__);                       \
    }                                                                      \
  } while (0)

// For calls that return a value and signal failure with one sentinel value
// plus errno (memfd_create -> -1, mmap -> MAP_FAILED). Evaluates to the value.
#define SCAFFOLD_CHECK_RESULT(call, failure_value)                         \
  ([&]() {                                                                 \
    auto scaffold_result_ = (call);                                        \
    if (scaffold_result_ == (failure_value)) {                             \
      ::scaffold::runtime::detail::fail_runtime_call(                      \
          #call, errno, __FILE__, __LINE__);                               \
    }                                                                      \
    return scaffold_result_;                                               \
  }())
