#include "kernel_declined.h"

#include <utility>

namespace scaffold::runtime {

namespace {
thread_local std::string t_decline_reason;
} // namespace

namespace detail {
void set_decline_reason(std::string reason) {
  t_decline_reason = std::move(reason);
}
} // namespace detail

const std::string& last_decline_reason() noexcept {
  return t_decline_reason;
}

void decline_kernel(const std::string& op, const std::string& reason) {
  detail::set_decline_reason(op + ": " + reason);
  throw KernelDeclined(
      c10::SourceLocation{__func__, __FILE__, static_cast<uint32_t>(__LINE__)},
      "the kernel of '" + op + "' declined (" + reason + ") outside a generated wrapper, which would have run the op "
      "through the copying fallback");
}

} // namespace scaffold::runtime
