// Exercises the simulated driver on its own (no torch): see
// test_driver_seam.py::test_simulated_driver_alone. Prints one line per
// check; any driver failure exits 1 naming the call.
#include <cstddef>
#include <cstdio>
#include <cstring>
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
