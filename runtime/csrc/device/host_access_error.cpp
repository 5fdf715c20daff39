#include "host_access_error.h"

#include <string>

#include <c10/core/DeviceType.h>

namespace scaffold::runtime {

void refuse_host_access(const char* what) {
  const std::string backend = c10::get_privateuse1_backend();
  detail::set_decline_reason(std::string(what) + ": the host cannot address " + backend + " memory");
  throw HostAccessUnavailable(
      c10::SourceLocation{__func__, __FILE__, static_cast<uint32_t>(__LINE__)},
      std::string(what) + ": host code cannot address " + backend + " memory (the driver says it is not " +
          "host-addressable, drvDevAttrHostAddressableMemory); copy the tensor to the CPU instead (.cpu()). " +
          "A kernel that computes on host views declines on such a device, and its op runs through the copying " +
          "fallback.");
}

} // namespace scaffold::runtime
