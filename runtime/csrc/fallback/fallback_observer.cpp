#include "fallback_observer.h"

namespace scaffold::runtime {

namespace detail {
std::atomic<const FallbackObserver*> g_fallback_observer{nullptr};
} // namespace detail

void set_fallback_observer(const FallbackObserver* observer) noexcept {
  detail::g_fallback_observer.store(observer, std::memory_order_relaxed);
}

} // namespace scaffold::runtime
