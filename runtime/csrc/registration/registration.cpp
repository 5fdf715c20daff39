#include "registration.h"

#include <ATen/core/CachingHostAllocator.h>
#include <ATen/detail/PrivateUse1HooksInterface.h>
#include <c10/core/Allocator.h>
#include <c10/core/DeviceType.h>
#include <c10/core/impl/DeviceGuardImplInterface.h>

#include "allocator.h"
#include "capture.h"
#include "fallback_observer.h"
#include "guard.h"
#include "hooks.h"
#include "host_allocator.h"
#include "profiler.h"

namespace scaffold::runtime {
namespace {

std::optional<std::string>& conflict() {
  static std::optional<std::string> reason;
  return reason;
}

// The CPU fallback computes on the host at the call: a replay of a stream
// capture would not run it, so a capture refuses it, naming the op.
void refuse_fallback_during_capture(const std::string& name) {
  refuse_during_capture(-1, "runs '" + name + "' on the CPU (the CPU fallback: no kernel for the device)");
}

bool privateuse1_taken() {
  const auto slot = static_cast<size_t>(c10::DeviceType::PrivateUse1);
  return at::isPrivateUse1HooksRegistered() ||
      c10::impl::device_guard_impl_registry[slot].load() != nullptr;
}

struct RegisterRuntime {
  RegisterRuntime() {
    // Registering over another backend would silently break it, and a
    // second RegisterPrivateUse1HooksInterface throws -- inside a static
    // initializer that aborts the process. So check first, register nothing
    // on conflict, and let the import fail cleanly.
    if (privateuse1_taken()) {
      conflict() = "PrivateUse1 is already registered by another backend ('" +
          c10::get_privateuse1_backend() +
          "'); PyTorch supports one PrivateUse1 backend per process";
      return;
    }
    // All registered objects are leaked on purpose: PyTorch may use them
    // during interpreter shutdown.
    static c10::impl::DeviceGuardImplRegistrar guard_registrar(
        c10::DeviceType::PrivateUse1, new GuardImpl());
    c10::SetAllocator(c10::DeviceType::PrivateUse1, device_allocator());
    at::setHostAllocator(c10::DeviceType::PrivateUse1, pinned_host_allocator());
    at::RegisterPrivateUse1HooksInterface(new Hooks());
    register_profiler();
    set_fallback_check(&refuse_fallback_during_capture);
  }
};

const RegisterRuntime g_register_runtime;

} // namespace

std::optional<std::string> registration_conflict() {
  return conflict();
}

} // namespace scaffold::runtime
