// Exercises the simulated driver on its own (no torch): see
// test_driver_seam.py::test_simulated_driver_alone. Prints one line per
// check; any driver failure exits 1 naming the call.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <thread>
#include <vector>

#include "scaffold_driver.h"

#define CHECK(call)                                                                         \
  do {                                                                                      \
    const drvError_t status_ = (call);                                                      \
    if (status_ != drvSuccess) {                                                            \
      std::printf("FAILED %s: %s: %s\n", #call, drvGetErrorName(status_), drvGetLastErrorMessage()); \
      return 1;                                                                             \
    }                                                                                       \
  } while (0)

namespace {

// A kernel that takes a millisecond.
void busy_kernel(void*) {
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

void keep_records(const drvActivityRecord* records, size_t count, void* user_data) {
  auto* kept = static_cast<std::vector<drvActivityRecord>*>(user_data);
  kept->insert(kept->end(), records, records + count);
}

const char* kind_name(drvActivityKind kind) {
  return kind == drvActivityKernel ? "kernel" : kind == drvActivityMemcpy ? "memcpy" : "memset";
}

} // namespace

int main() {
  int count = 0;
  CHECK(drvGetDeviceCount(&count));
  std::printf("devices %d\n", count);
  void* device = nullptr;
  CHECK(drvMalloc(&device, 1 << 20));
  float host[4] = {1, 2, 3, 4};
  float back[4] = {0, 0, 0, 0};
  drvStream_t producer = nullptr;
  drvStream_t consumer = nullptr;
  drvEvent_t written = nullptr;
  CHECK(drvStreamCreate(&producer, 0));
  CHECK(drvStreamCreate(&consumer, -1));
  CHECK(drvEventCreate(&written, DRV_EVENT_DEFAULT));
  CHECK(drvTestingPauseStream(producer, 1));
  CHECK(drvMemcpyAsync(device, host, sizeof host, drvMemcpyHostToDevice, producer));
  CHECK(drvEventRecord(written, producer));
  CHECK(drvStreamWaitEvent(consumer, written));
  CHECK(drvMemcpyAsync(back, device, sizeof back, drvMemcpyDeviceToHost, consumer));
  std::printf("paused: producer %s, event %s, consumer %s, back[3] %g\n",
              drvGetErrorName(drvStreamQuery(producer)), drvGetErrorName(drvEventQuery(written)),
              drvGetErrorName(drvStreamQuery(consumer)), back[3]);
  CHECK(drvTestingPauseStream(producer, 0));
  CHECK(drvStreamSynchronize(consumer));
  std::printf("resumed: back[3] %g\n", back[3]);
  CHECK(drvMemset(device, 0, sizeof host));
  CHECK(drvMemcpy(back, device, sizeof back, drvMemcpyDeviceToHost));
  std::printf("memset: back[3] %g\n", back[3]);
  // Large copies and sets are split across the copy engine's helper threads
  // (simulated_copy.cpp): every byte must land, in a size the chunks do not
  // divide, in a device-to-device copy between overlapping ranges of one
  // allocation (memmove semantics), and with two streams copying at once.
  constexpr size_t kLarge = (size_t{9} << 20) + 3;
  constexpr size_t kShift = size_t{1} << 20;
  std::vector<unsigned char> pattern(kLarge), other(kLarge), read(kLarge);
  for (size_t i = 0; i < kLarge; ++i) {
    pattern[i] = static_cast<unsigned char>((i * 131 + i / 4099) & 0xff);
    other[i] = static_cast<unsigned char>(pattern[i] ^ 0xa5);
  }
  void* large = nullptr;
  void* second = nullptr;
  CHECK(drvMalloc(&large, kLarge));
  CHECK(drvMalloc(&second, kLarge));
  CHECK(drvMemcpy(large, pattern.data(), kLarge, drvMemcpyHostToDevice));
  CHECK(drvMemcpy(read.data(), large, kLarge, drvMemcpyDeviceToHost));
  const bool copied = read == pattern;
  CHECK(drvMemcpy(static_cast<char*>(large) + kShift, large, kLarge - kShift, drvMemcpyDeviceToDevice));
  CHECK(drvMemcpy(read.data(), large, kLarge, drvMemcpyDeviceToHost));
  bool overlapping = std::memcmp(read.data(), pattern.data(), kShift) == 0 &&
      std::memcmp(read.data() + kShift, pattern.data(), kLarge - kShift) == 0;
  CHECK(drvMemset(large, 0x5a, kLarge));
  CHECK(drvMemcpy(read.data(), large, kLarge, drvMemcpyDeviceToHost));
  bool set = true;
  for (unsigned char byte : read) {
    set = set && byte == 0x5a;
  }
  drvStream_t first_stream = nullptr;
  drvStream_t second_stream = nullptr;
  CHECK(drvStreamCreate(&first_stream, 0));
  CHECK(drvStreamCreate(&second_stream, 0));
  CHECK(drvMemcpyAsync(large, pattern.data(), kLarge, drvMemcpyHostToDevice, first_stream));
  CHECK(drvMemcpyAsync(second, other.data(), kLarge, drvMemcpyHostToDevice, second_stream));
  CHECK(drvStreamSynchronize(first_stream));
  CHECK(drvStreamSynchronize(second_stream));
  CHECK(drvMemcpy(read.data(), large, kLarge, drvMemcpyDeviceToHost));
  bool both = read == pattern;
  CHECK(drvMemcpy(read.data(), second, kLarge, drvMemcpyDeviceToHost));
  both = both && read == other;
  std::printf("large: copy %d, overlapping %d, set %d, two streams %d\n", copied, overlapping, set, both);
  CHECK(drvStreamDestroy(first_stream));
  CHECK(drvStreamDestroy(second_stream));
  CHECK(drvFree(large));
  CHECK(drvFree(second));
  void* host_view = nullptr;
  CHECK(drvHostPointer(&host_view, static_cast<char*>(device) + 8));
  int protect = 0;
  CHECK(drvMemoryProtectionEnabled(&protect));
  std::printf("host pointer differs %d, protected %d\n", host_view != static_cast<char*>(device) + 8, protect);
  // Activity tracing: work enqueued while it is on is timed on the stream
  // that ran it, stamped with the enqueuing thread's innermost correlation
  // id; work enqueued after it is off is not recorded.
  uint64_t busy_before = 0;
  uint64_t busy_after = 0;
  CHECK(drvTestingDeviceBusyTime(0, &busy_before));
  CHECK(drvActivityEnable(1));
  CHECK(drvActivityPushCorrelationId(7));
  CHECK(drvMemcpyAsync(device, host, sizeof host, drvMemcpyHostToDevice, producer));
  CHECK(drvActivityPushCorrelationId(8));
  CHECK(drvLaunchHostFunc(producer, &busy_kernel, nullptr));
  CHECK(drvActivityPopCorrelationId());
  CHECK(drvMemsetAsync(device, 0, 16, producer));
  CHECK(drvActivityPopCorrelationId());
  CHECK(drvLaunchHostFunc(producer, &busy_kernel, nullptr));
  CHECK(drvStreamSynchronize(producer));
  CHECK(drvActivityEnable(0));
  CHECK(drvLaunchHostFunc(producer, &busy_kernel, nullptr));
  CHECK(drvStreamSynchronize(producer));
  CHECK(drvTestingDeviceBusyTime(0, &busy_after));
  std::vector<drvActivityRecord> records;
  uint64_t dropped = 1;
  CHECK(drvActivityFlush(&keep_records, &records, &dropped));
  std::printf("activity:");
  bool ordered = true;
  uint64_t timed = 0;
  for (size_t i = 0; i < records.size(); ++i) {
    const drvActivityRecord& r = records[i];
    std::printf(" %s %llu", kind_name(r.kind), static_cast<unsigned long long>(r.correlation_id));
    if (r.kind != drvActivityKernel) {
      std::printf(" (%zu bytes)", r.bytes);
    }
    ordered = ordered && r.start_ns <= r.end_ns && (i == 0 || records[i - 1].end_ns <= r.start_ns) &&
        r.stream == producer && r.device == 0;
    timed += r.end_ns - r.start_ns;
  }
  const uint64_t busy = busy_after - busy_before;
  std::printf("; in order on producer %d, kernels >= 1 ms %d, busy covers them %d, dropped %llu\n", ordered,
              timed >= 2000000, busy >= timed && busy < 1000000000, static_cast<unsigned long long>(dropped));
  const drvError_t unbalanced = drvActivityPopCorrelationId();
  std::printf("pop without push: %s\n", drvGetErrorName(unbalanced));
  CHECK(drvEventDestroy(written));
  CHECK(drvStreamDestroy(producer));
  CHECK(drvStreamDestroy(consumer));
  CHECK(drvFree(device));
  const drvError_t twice = drvFree(device);
  std::printf("double free: %s\n", drvGetErrorName(twice));
  const drvError_t bad = drvSetDevice(count);
  std::printf("bad device: %s: %s\n", drvGetErrorName(bad), drvGetLastErrorMessage());
  return 0;
}
