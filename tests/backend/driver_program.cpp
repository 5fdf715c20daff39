// Exercises the simulated driver on its own (no torch): see
// test_driver_seam.py::test_simulated_driver_alone. Prints one line per
// check; any driver failure exits 1 naming the call.
#include <cstdio>
#include <cstring>

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
