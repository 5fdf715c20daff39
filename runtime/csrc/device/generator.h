// Per-device random number generators.
//
// A DeviceGenerator is a GeneratorImpl with device PrivateUse1:i wrapping an
// ATen CPU generator (mt19937). Random kernels run ATen's CPU kernels on
// host views and hand them that inner CPU generator, so a given seed gives
// this device the same random stream the CPU would produce -- reproducible
// under torch.<backend>.manual_seed, and state is save/restorable.
//
// Kernel pattern:
//   at::Tensor normal_(at::Tensor& self, double mean, double std,
//                      std::optional<at::Generator> gen) {
//     host_view(self).normal_(mean, std, cpu_generator(gen, self.device().index()));
//     return self;
//   }
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <ATen/core/Generator.h>
#include <ATen/core/Tensor.h>
#include <c10/core/GeneratorImpl.h>

namespace scaffold::runtime {

class DeviceGenerator final : public c10::GeneratorImpl {
 public:
  explicit DeviceGenerator(
      c10::DeviceIndex device,
      uint64_t seed = c10::default_rng_seed_val);

  // Lets at::check_generator<DeviceGenerator>(gen) validate generators.
  static c10::DeviceType device_type() {
    return c10::DeviceType::PrivateUse1;
  }

  void set_current_seed(uint64_t seed) override;
  uint64_t current_seed() const override;
  uint64_t seed() override; // reseeds non-deterministically, returns the seed
  void set_offset(uint64_t offset) override; // unsupported (as on CPU)
  uint64_t get_offset() const override;
  void set_state(const c10::TensorImpl& new_state) override;
  c10::intrusive_ptr<c10::TensorImpl> get_state() const override;

  // The wrapped CPU generator; pass it to ATen CPU random kernels.
  const at::Generator& cpu_generator() const {
    return cpu_;
  }

 private:
  DeviceGenerator(c10::DeviceIndex device, at::Generator cpu);
  DeviceGenerator* clone_impl() const override;

  at::Generator cpu_;
};

// The default generator of `device` (-1: current device), created on first
// use (thread-safe) and seeded with a non-deterministic seed like the CPU
// default generator. This is what torch.<backend>.manual_seed reseeds.
at::Generator& default_generator(c10::DeviceIndex device = -1);

// A fresh generator for `device` (-1: current), for torch.Generator(device).
at::Generator make_device_generator(c10::DeviceIndex device = -1);

// For kernels: the CPU generator inside `generator` if given (it must be a
// generator of this backend), else inside the default generator of `device`.
// Refused while the current stream is captured: numbers drawn on the host
// would be the same at every replay (capture-safe kernels: random_ops.h).
at::Generator cpu_generator(
    const std::optional<at::Generator>& generator,
    c10::DeviceIndex device);

// The generator of this backend a random kernel draws from: `generator` if
// given (checked to be one), else the default generator of `device`.
at::Generator device_generator(const std::optional<at::Generator>& generator, c10::DeviceIndex device);

// Draws 64 random bits from a generator of this backend, advancing its
// stream: a graph's seed for one replay (streams/capture.h).
uint64_t draw_replay_seed(const at::Generator& device_generator);

// While alive, the CPU's default generator draws `device`'s random stream:
// for a CPU kernel that takes no generator and uses the default one
// (native_dropout), run on behalf of the device by the CPU fallback. Not
// safe against another thread drawing from the CPU's default generator
// meanwhile (it would draw the device's numbers).
class CpuDefaultDrawsFromDevice {
 public:
  explicit CpuDefaultDrawsFromDevice(c10::DeviceIndex device);
  ~CpuDefaultDrawsFromDevice();
  CpuDefaultDrawsFromDevice(const CpuDefaultDrawsFromDevice&) = delete;
  CpuDefaultDrawsFromDevice& operator=(const CpuDefaultDrawsFromDevice&) = delete;

 private:
  at::Generator device_;
  at::Tensor cpu_state_;
};

// Generator state as raw bytes, for the Python module's get/set_rng_state
// (keeps tensor construction out of python_module.cpp).
std::vector<uint8_t> get_rng_state_bytes(c10::DeviceIndex device);
void set_rng_state_bytes(c10::DeviceIndex device, const uint8_t* data, size_t size);

} // namespace scaffold::runtime
