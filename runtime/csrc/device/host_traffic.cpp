#include "host_traffic.h"

namespace scaffold::runtime {
namespace {
thread_local HostTraffic t_host_traffic;
} // namespace

HostTraffic host_traffic_of_this_thread() noexcept {
  return t_host_traffic;
}

void count_host_traffic(uint64_t to_host, uint64_t to_device) noexcept {
  t_host_traffic.to_host += to_host;
  t_host_traffic.to_device += to_device;
}

} // namespace scaffold::runtime
