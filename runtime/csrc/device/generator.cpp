#include "generator.h"

#include <array>
#include <cstring>
#include <mutex>

#include <ATen/CPUGeneratorImpl.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/StorageImpl.h>
#include <c10/core/TensorImpl.h>
#include <c10/util/Exception.h>

#include "capture.h"
#include "device.h"

namespace scaffold::runtime {
namespace {

// CPU kernels lock the *inner* generator's mutex while drawing numbers;
// PyTorch locks the *outer* one around seeding and state calls. Forwarded
// calls therefore take the inner lock too (always outer before inner).
std::unique_lock<std::mutex> lock_inner(const at::Generator& cpu) {
  return std::unique_lock<std::mutex>(cpu.unsafeGetGeneratorImpl()->mutex_);
}

} // namespace

DeviceGenerator::DeviceGenerator(c10::DeviceIndex device, uint64_t seed)
    : DeviceGenerator(device, at::make_generator<at::CPUGeneratorImpl>(seed)) {}

DeviceGenerator::DeviceGenerator(c10::DeviceIndex device, at::Generator cpu)
    : c10::GeneratorImpl(
          c10::Device(c10::DeviceType::PrivateUse1, device),
          c10::DispatchKeySet(c10::DispatchKey::PrivateUse1)),
      cpu_(std::move(cpu)) {}

void DeviceGenerator::set_current_seed(uint64_t seed) {
  auto lock = lock_inner(cpu_);
  cpu_.set_current_seed(seed);
}

uint64_t DeviceGenerator::current_seed() const {
  auto lock = lock_inner(cpu_);
  return cpu_.current_seed();
}

uint64_t DeviceGenerator::seed() {
  auto lock = lock_inner(cpu_);
  return cpu_.seed();
}

void DeviceGenerator::set_offset(uint64_t /*offset*/) {
  TORCH_CHECK(
      false,
      c10::get_privateuse1_backend(),
      " generators are mt19937 based (like CPU) and have no offset");
}

uint64_t DeviceGenerator::get_offset() const {
  TORCH_CHECK(
      false,
      c10::get_privateuse1_backend(),
      " generators are mt19937 based (like CPU) and have no offset");
}

void DeviceGenerator::set_state(const c10::TensorImpl& new_state) {
  auto lock = lock_inner(cpu_);
  cpu_.unsafeGetGeneratorImpl()->set_state(new_state);
}

c10::intrusive_ptr<c10::TensorImpl> DeviceGenerator::get_state() const {
  auto lock = lock_inner(cpu_);
  return cpu_.unsafeGetGeneratorImpl()->get_state();
}

DeviceGenerator* DeviceGenerator::clone_impl() const {
  auto lock = lock_inner(cpu_);
  return new DeviceGenerator(device().index(), cpu_.clone());
}

at::Generator& default_generator(c10::DeviceIndex device) {
  device = resolve_device_index(device);
  // One slot and one once_flag per device: creation is lazy and
  // thread-safe, and the returned reference stays valid forever (leaked,
  // hooks hand it out by reference).
  struct Slot {
    std::once_flag once;
    at::Generator generator;
  };
  static auto* slots = new std::array<Slot, kMaxDevices>();
  Slot& slot = (*slots)[device];
  std::call_once(slot.once, [&] {
    slot.generator = at::make_generator<DeviceGenerator>(device);
    slot.generator.seed();
  });
  return slot.generator;
}

at::Generator make_device_generator(c10::DeviceIndex device) {
  return at::make_generator<DeviceGenerator>(resolve_device_index(device));
}

at::Generator cpu_generator(
    const std::optional<at::Generator>& generator,
    c10::DeviceIndex device) {
  // Numbers drawn on the host now would be the same at every replay.
  refuse_during_capture(
      device < 0 ? current_device() : device,
      "draws its random numbers on the host, which every replay of a graph would repeat");
  auto* impl = at::get_generator_or_default<DeviceGenerator>(
      generator, default_generator(device));
  return impl->cpu_generator();
}

at::Generator device_generator(const std::optional<at::Generator>& generator, c10::DeviceIndex device) {
  if (generator.has_value() && generator->defined()) {
    at::check_generator<DeviceGenerator>(*generator);
    return *generator;
  }
  return default_generator(device);
}

uint64_t draw_replay_seed(const at::Generator& device_generator) {
  at::Generator generator = device_generator; // mutex() is not const
  auto* impl = at::check_generator<DeviceGenerator>(generator);
  std::lock_guard<std::mutex> outer(generator.mutex());
  auto inner = lock_inner(impl->cpu_generator());
  return at::check_generator<at::CPUGeneratorImpl>(impl->cpu_generator())->random64();
}

CpuDefaultDrawsFromDevice::CpuDefaultDrawsFromDevice(c10::DeviceIndex device)
    : device_(cpu_generator(std::nullopt, device)) {
  at::Generator cpu = at::detail::getDefaultCPUGenerator();
  at::Tensor device_state;
  {
    std::lock_guard<std::mutex> lock(device_.mutex());
    device_state = device_.get_state();
  }
  std::lock_guard<std::mutex> lock(cpu.mutex());
  cpu_state_ = cpu.get_state();
  cpu.set_state(device_state);
}

CpuDefaultDrawsFromDevice::~CpuDefaultDrawsFromDevice() {
  at::Generator cpu = at::detail::getDefaultCPUGenerator();
  at::Tensor drawn;
  {
    std::lock_guard<std::mutex> lock(cpu.mutex());
    drawn = cpu.get_state();
    cpu.set_state(cpu_state_);
  }
  std::lock_guard<std::mutex> lock(device_.mutex());
  device_.set_state(drawn);
}

std::vector<uint8_t> get_rng_state_bytes(c10::DeviceIndex device) {
  at::Generator& gen = default_generator(device);
  std::lock_guard<std::mutex> lock(gen.mutex());
  auto state = gen.unsafeGetGeneratorImpl()->get_state();
  const auto nbytes = state->storage().nbytes();
  const auto* data = static_cast<const uint8_t*>(state->storage().data());
  return std::vector<uint8_t>(data, data + nbytes);
}

void set_rng_state_bytes(c10::DeviceIndex device, const uint8_t* data, size_t size) {
  // Wrap the bytes in a 1-D CPU uint8 TensorImpl, the format the CPU
  // generator's set_state validates and reads.
  c10::Storage storage(
      c10::Storage::use_byte_size_t(),
      size,
      c10::GetCPUAllocator(),
      /*resizable=*/false);
  if (size > 0) {
    std::memcpy(storage.mutable_data(), data, size);
  }
  c10::TensorImpl state(
      std::move(storage),
      c10::DispatchKeySet(c10::DispatchKey::CPU),
      caffe2::TypeMeta::Make<uint8_t>());
  state.set_sizes_contiguous({static_cast<int64_t>(size)});
  at::Generator& gen = default_generator(device);
  std::lock_guard<std::mutex> lock(gen.mutex());
  gen.unsafeGetGeneratorImpl()->set_state(state);
}

} // namespace scaffold::runtime
