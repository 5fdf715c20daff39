// Bytes this thread has copied between host and device memory (the
// runtime's copy_bytes, memory_access.h, counts them): what the CPU fallback
// measures its traffic with (cpu_fallback.h, fallback_traffic).
#pragma once

#include <cstdint>

namespace scaffold::runtime {

struct HostTraffic {
  uint64_t to_host = 0;
  uint64_t to_device = 0;
};

// Since the thread began.
HostTraffic host_traffic_of_this_thread() noexcept;
void count_host_traffic(uint64_t to_host, uint64_t to_device) noexcept;

} // namespace scaffold::runtime
