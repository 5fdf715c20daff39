// Exercises the OpenCL driver (runtime/driver/opencl) on its own, no torch:
// see test_opencl_driver.py. Every expected value is computed on the host.
// Prints one line per check; any unexpected driver failure exits 1 naming
// the call.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
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

char* at(void* base, size_t offset) {
  return static_cast<char*>(base) + offset;
}

std::vector<unsigned char> bytes(size_t size, unsigned seed) {
  std::vector<unsigned char> out(size);
  for (size_t i = 0; i < size; ++i) {
    out[i] = static_cast<unsigned char>((i * 131 + seed + i / 251) & 0xff);
  }
  return out;
}

void sleep_ms(void* ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(reinterpret_cast<intptr_t>(ms)));
}

// A host function between a device-to-host and a host-to-device copy: it
// sees what the first wrote and writes what the second reads.
struct Between {
  const unsigned char* read = nullptr; // filled by the copy before
  unsigned char* write = nullptr; // read by the copy after
  size_t size = 0;
};

void negate_bytes(void* data) {
  auto* between = static_cast<Between*>(data);
  for (size_t i = 0; i < between->size; ++i) {
    between->write[i] = static_cast<unsigned char>(~between->read[i]);
  }
}

void count_call(void* data) {
  static_cast<std::atomic<int>*>(data)->fetch_add(1);
}

// Whether a host read of `ptr` kills a child process with SIGSEGV.
bool host_access_faults(const void* ptr) {
  std::fflush(stdout);
  const pid_t child = fork();
  if (child == 0) {
    volatile char value = *static_cast<const volatile char*>(ptr);
    (void)value;
    _exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV;
}

} // namespace

int main() {
  // ---- Devices
  int count = 0;
  CHECK(drvGetDeviceCount(&count));
  if (count == 0) {
    std::printf("no OpenCL devices\n"); // no platform, or none with a device: the test skips
    return 0;
  }
  drvDeviceProperties props{};
  CHECK(drvGetDeviceProperties(&props, 0));
  int addressable = -1;
  int protect = -1;
  int blocking = -1;
  CHECK(drvDeviceGetAttribute(&addressable, drvDevAttrHostAddressableMemory, 0));
  CHECK(drvMemoryProtectionEnabled(&protect));
  CHECK(drvGetLaunchBlocking(&blocking));
  std::printf("devices %d, named %d, memory %d, units %d, capability >= 1.2 %d, host-addressable %d, protected %d\n",
              count >= 1, props.name[0] != '\0', props.total_memory > 0, props.multiprocessor_count >= 1,
              props.capability_major * 10 + props.capability_minor >= 12, addressable, protect);
  std::printf("launch blocking %d\n", blocking);

  // ---- Memory: addresses with arithmetic, resolved inside allocations
  constexpr size_t kSize = (size_t{1} << 20) + 96; // not a whole number of pages
  void* a = nullptr;
  void* b = nullptr;
  CHECK(drvMalloc(&a, kSize));
  CHECK(drvMalloc(&b, kSize));
  int device = -1;
  CHECK(drvPointerGetDevice(&device, at(a, kSize - 1)));
  void* memory_a = nullptr;
  void* memory_inside = nullptr;
  void* memory_b = nullptr;
  size_t offset_a = 1;
  size_t offset_inside = 0;
  size_t offset_b = 1;
  CHECK(drvPointerGetNativeHandle(a, &memory_a, &offset_a));
  CHECK(drvPointerGetNativeHandle(at(a, 4100), &memory_inside, &offset_inside));
  CHECK(drvPointerGetNativeHandle(b, &memory_b, &offset_b));
  void* past_end_memory = nullptr;
  size_t past_end_offset = 0;
  const drvError_t past_end = drvPointerGetNativeHandle(at(a, kSize), &past_end_memory, &past_end_offset);
  void* host = nullptr;
  const drvError_t host_pointer = drvHostPointer(&host, a);
  std::printf("pointers: device %d, same buffer inside %d at offset %zu, own buffers %d, past the end %s, host pointer %s\n",
              device, memory_inside == memory_a && offset_a == 0, offset_inside, memory_a != memory_b && offset_b == 0,
              drvGetErrorName(past_end), drvGetErrorName(host_pointer));
  std::printf("host access faults %d\n", host_access_faults(at(a, 8)));

  // ---- Copies with offsets
  const std::vector<unsigned char> pattern = bytes(kSize, 7);
  std::vector<unsigned char> expected_a(kSize, 0), expected_b(kSize, 0), read(kSize);
  CHECK(drvMemset(a, 0, kSize));
  CHECK(drvMemset(b, 0, kSize));
  CHECK(drvMemcpy(at(a, 40), pattern.data(), 5000, drvMemcpyHostToDevice));
  std::memcpy(expected_a.data() + 40, pattern.data(), 5000);
  CHECK(drvMemcpy(at(b, 4097), at(a, 41), 4000, drvMemcpyDeviceToDevice));
  std::memcpy(expected_b.data() + 4097, expected_a.data() + 41, 4000);
  std::vector<unsigned char> middle(3000);
  CHECK(drvMemcpy(middle.data(), at(b, 4200), middle.size(), drvMemcpyDeviceToHost));
  CHECK(drvMemcpy(read.data(), a, kSize, drvMemcpyDeviceToHost));
  const bool copies_a = read == expected_a;
  CHECK(drvMemcpy(read.data(), b, kSize, drvMemcpyDeviceToHost));
  std::printf("copies: host-to-device %d, device-to-device %d, device-to-host %d\n", copies_a, read == expected_b,
              std::memcmp(middle.data(), expected_b.data() + 4200, middle.size()) == 0);

  // ---- Overlapping device-to-device copies: memmove's semantics
  CHECK(drvMemcpy(a, pattern.data(), kSize, drvMemcpyHostToDevice));
  expected_a = pattern;
  CHECK(drvMemcpy(at(a, 1000), a, kSize - 1000, drvMemcpyDeviceToDevice)); // forwards
  std::memmove(expected_a.data() + 1000, expected_a.data(), kSize - 1000);
  CHECK(drvMemcpy(at(a, 3), at(a, 4099), 70000, drvMemcpyDeviceToDevice)); // backwards
  std::memmove(expected_a.data() + 3, expected_a.data() + 4099, 70000);
  CHECK(drvMemcpy(read.data(), a, kSize, drvMemcpyDeviceToHost));
  std::printf("overlapping copies %d\n", read == expected_a);

  // ---- Memset and fills of every pattern size, at aligned offsets inside
  CHECK(drvMemset(at(a, 5), 0x5a, 1001));
  std::memset(expected_a.data() + 5, 0x5a, 1001);
  const unsigned char fill_pattern[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
  size_t fill_at = 2048;
  for (size_t pattern_size : {1, 2, 4, 8, 16}) {
    const size_t fill_size = pattern_size * 37;
    CHECK(drvMemFillAsync(at(a, fill_at), fill_pattern, pattern_size, fill_size, nullptr));
    for (size_t i = 0; i < fill_size; ++i) {
      expected_a[fill_at + i] = fill_pattern[i % pattern_size];
    }
    fill_at += 1024;
  }
  const drvError_t misaligned = drvMemFillAsync(at(a, 2), fill_pattern, 4, 8, nullptr);
  CHECK(drvMemcpy(read.data(), a, kSize, drvMemcpyDeviceToHost));
  std::printf("memset and fills %d, misaligned fill %s\n", read == expected_a, drvGetErrorName(misaligned));

  // ---- A host function runs between the copies around it
  drvStream_t first = nullptr;
  drvStream_t second = nullptr;
  CHECK(drvStreamCreate(&first, 0));
  CHECK(drvStreamCreate(&second, -1));
  constexpr size_t kPart = 4096;
  std::vector<unsigned char> staged(kPart, 0), negated(kPart, 0), result(kPart, 0);
  Between between{staged.data(), negated.data(), kPart};
  CHECK(drvLaunchHostFunc(first, &sleep_ms, reinterpret_cast<void*>(intptr_t{30})));
  CHECK(drvMemcpyAsync(staged.data(), at(a, 8192), kPart, drvMemcpyDeviceToHost, first));
  CHECK(drvLaunchHostFunc(first, &negate_bytes, &between));
  CHECK(drvMemcpyAsync(at(b, 100), negated.data(), kPart, drvMemcpyHostToDevice, first));
  CHECK(drvMemcpyAsync(result.data(), at(b, 100), kPart, drvMemcpyDeviceToHost, first));
  const drvError_t while_sleeping = drvStreamQuery(first);
  CHECK(drvStreamSynchronize(first));
  bool ordered = true;
  for (size_t i = 0; i < kPart; ++i) {
    ordered = ordered && result[i] == static_cast<unsigned char>(~expected_a[8192 + i]);
  }
  std::printf("host function: ordered %d, query while it sleeps %s, after sync %s\n", ordered,
              drvGetErrorName(while_sleeping), drvGetErrorName(drvStreamQuery(first)));

  // ---- Two streams joined by an event
  drvEvent_t written = nullptr;
  drvEvent_t never = nullptr;
  CHECK(drvEventCreate(&written, DRV_EVENT_DEFAULT));
  CHECK(drvEventCreate(&never, DRV_EVENT_DEFAULT));
  const std::vector<unsigned char> other = bytes(kPart, 99);
  std::vector<unsigned char> joined(kPart, 0);
  CHECK(drvLaunchHostFunc(first, &sleep_ms, reinterpret_cast<void*>(intptr_t{50})));
  CHECK(drvMemcpyAsync(at(b, 8192), other.data(), kPart, drvMemcpyHostToDevice, first));
  CHECK(drvEventRecord(written, first));
  CHECK(drvStreamWaitEvent(second, written));
  CHECK(drvMemcpyAsync(joined.data(), at(b, 8192), kPart, drvMemcpyDeviceToHost, second));
  const drvError_t event_pending = drvEventQuery(written);
  const drvError_t consumer_pending = drvStreamQuery(second);
  CHECK(drvStreamSynchronize(second));
  std::printf("event: pending %s, consumer pending %s, joined %d, then %s, never recorded %s\n",
              drvGetErrorName(event_pending), drvGetErrorName(consumer_pending), joined == other,
              drvGetErrorName(drvEventQuery(written)), drvGetErrorName(drvEventQuery(never)));

  // ---- Elapsed time between two records
  drvEvent_t start = nullptr;
  drvEvent_t end = nullptr;
  drvEvent_t untimed = nullptr;
  CHECK(drvEventCreate(&start, DRV_EVENT_DEFAULT));
  CHECK(drvEventCreate(&end, DRV_EVENT_DEFAULT));
  CHECK(drvEventCreate(&untimed, DRV_EVENT_DISABLE_TIMING));
  CHECK(drvEventRecord(start, second));
  CHECK(drvLaunchHostFunc(second, &sleep_ms, reinterpret_cast<void*>(intptr_t{5})));
  CHECK(drvEventRecord(end, second));
  CHECK(drvEventRecord(untimed, second));
  CHECK(drvEventSynchronize(untimed));
  const drvError_t after_last_event = drvStreamQuery(second); // at once: its last work is done
  float ms = -1;
  CHECK(drvEventElapsedTime(&ms, start, end));
  float ignored = 0;
  std::printf("elapsed >= 0 %d, untimed %s, unrecorded %s, stream after its last event %s\n", ms >= 0,
              drvGetErrorName(drvEventElapsedTime(&ignored, start, untimed)),
              drvGetErrorName(drvEventElapsedTime(&ignored, never, end)), drvGetErrorName(after_last_event));

  // ---- Many host functions, then a destroy that waits for them
  std::atomic<int> calls{0};
  for (int i = 0; i < 100; ++i) {
    CHECK(drvLaunchHostFunc(first, &count_call, &calls));
  }
  CHECK(drvStreamDestroy(first));
  CHECK(drvStreamDestroy(second));
  std::printf("host functions run before destroy returns %d\n", calls.load());

  // ---- Native handles
  void* queue = nullptr;
  void* context = nullptr;
  void* native_device = nullptr;
  CHECK(drvStreamGetNativeHandle(nullptr, &queue));
  CHECK(drvDeviceGetNativeHandle(0, &context, &native_device));
  std::printf("native handles: queue %d, context %d, device %d, memory %d\n", queue != nullptr, context != nullptr,
              native_device != nullptr, memory_a != nullptr);

  // ---- What the driver refuses
  drvStream_t default_stream = nullptr;
  CHECK(drvStreamGetDefault(&default_stream, 0));
  std::printf("capture: %s\n", drvGetErrorName(drvStreamBeginCapture(default_stream)));
  int outside = 0;
  const drvError_t not_device = drvMemcpy(&outside, pattern.data(), sizeof outside, drvMemcpyDeviceToHost);
  std::printf("not device memory: %s: %s\n", drvGetErrorName(not_device),
              std::strstr(drvGetLastErrorMessage(), "is not inside one device allocation") != nullptr ? "named" : drvGetLastErrorMessage());
  const drvError_t too_long = drvMemcpy(read.data(), at(a, 16), kSize, drvMemcpyDeviceToHost);
  std::printf("past the allocation: %s\n", drvGetErrorName(too_long));
  CHECK(drvFree(a));
  CHECK(drvFree(b));
  std::printf("double free: %s\n", drvGetErrorName(drvFree(a)));
  const drvError_t bad_device = drvSetDevice(count);
  std::printf("bad device: %s\n", drvGetErrorName(bad_device));
  CHECK(drvEventDestroy(written));
  CHECK(drvEventDestroy(never));
  CHECK(drvEventDestroy(start));
  CHECK(drvEventDestroy(end));
  CHECK(drvEventDestroy(untimed));
  return 0;
}
