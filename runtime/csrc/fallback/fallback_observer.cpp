#include "fallback_observer.h"

namespace scaffold::runtime {

namespace detail {
std::atomic<const FallbackObserver*> g_fallback_observer{nullptr};
std::atomic<FallbackCheck> g_fallback_check{nullptr};
} // namespace detail

void set_fallback_observer(const FallbackObserver* observer) noexcept {
  detail::g_fallback_observer.store(observer, std::memory_order_relaxed);
}

void set_fallback_check(FallbackCheck check) noexcept {
  detail::g_fallback_check.store(check, std::memory_order_relaxed);
}

} // namespace scaffold::runtime
