// Device memory: a caching allocator over memory the host cannot touch by
// accident.
//
// Every device allocation lives in host RAM (a memfd) mapped twice:
//   * the *device view* -- the address stored in tensors' data_ptr. It is
//     mapped PROT_NONE, so any code that dereferences a device pointer
//     directly (a kernel that forgot to translate, a CPU fallback that was
//     handed a device tensor) faults immediately, like it would on a GPU.
//   * the *host view* -- a read/write mapping of the same pages that only
//     the runtime hands out (see memory_access.h).
// Both views sit in two address ranges reserved once per process, at the
// same offset, so translating device -> host is one subtraction and one
// addition: no lock, no lookup, no syscall.
//
// SCAFFOLD_PROTECT_MEMORY=0 (read at startup) maps the device view
// read/write too, for benchmarking the cost of protection (there is none on
// the hot path; the switch exists to prove it).
//
// On top sits a caching layer per device, modelled on PyTorch's CUDA caching
// allocator: sizes are rounded to 512-byte classes, small requests (<= 1 MiB)
// are packed into shared 2 MiB segments, larger ones into 20 MiB segments (or
// their own segment when >= 10 MiB); freed blocks go to best-fit free lists
// (ordered by size class) and are coalesced with free neighbours, so steady
// state allocation is a few pointer operations under a per-device mutex and
// never a syscall.
#pragma once

#include <cstddef>
#include <cstdint>

#include <c10/core/Allocator.h>
#include <c10/core/Device.h>

namespace scaffold::runtime {

// Address space reserved per device for each view; also the largest
// capacity a device can be given.
constexpr uint64_t kDeviceAddressSpan = uint64_t{256} << 30; // 256 GiB

struct DeviceMemoryStats {
  // Live blocks: each request rounded up to 512 bytes (a large block may
  // also keep up to 1 MiB of unsplit slack, as in CUDA's allocator).
  uint64_t allocated_bytes = 0;
  uint64_t reserved_bytes = 0; // mapped segments, live or cached
  uint64_t peak_allocated_bytes = 0; // since start or reset_peak_memory_stats
  uint64_t capacity_bytes = 0;
  uint64_t active_blocks = 0; // live allocations
  uint64_t segments = 0; // mapped segments
  uint64_t alloc_requests = 0; // cumulative allocate() calls (non-empty)
  uint64_t segment_maps = 0; // cumulative cache misses that mapped memory
  uint64_t segment_unmaps = 0; // cumulative segments released
  uint64_t oom_count = 0; // cumulative out-of-memory errors
};

// The c10::Allocator registered for DeviceType::PrivateUse1. allocate()
// uses the calling thread's current device; kernels creating tensors on an
// explicit device put a c10::DeviceGuard around it (as CUDA kernels do), or
// call allocate_on_device.
c10::Allocator* device_allocator();

// Allocate `nbytes` on `device` (no guard needed). Throws
// c10::OutOfMemoryError when the device's capacity is exhausted.
c10::DataPtr allocate_on_device(c10::DeviceIndex device, size_t nbytes);

DeviceMemoryStats memory_stats(c10::DeviceIndex device);
void reset_peak_memory_stats(c10::DeviceIndex device);

// Releases every cached segment with no live block, on all devices.
void empty_cache();

// Per-device capacity in bytes (default: SCAFFOLD_DEVICE_MEMORY_CAPACITY,
// else the host's physical memory). Lowering it below what is reserved
// releases cached segments; live tensors are never touched.
void set_memory_capacity(c10::DeviceIndex device, uint64_t bytes);
uint64_t memory_capacity(c10::DeviceIndex device);

// True in a child process forked after this process allocated device
// memory. Such a child shares the parent's device pages, so it may not
// allocate (like CUDA after fork); torch.<backend>._is_in_bad_fork().
bool in_bad_fork() noexcept;

// False when SCAFFOLD_PROTECT_MEMORY=0 was set at startup.
bool memory_protection_enabled();

// Address translation, lock-free and syscall-free.
// Host-view address for a device address, or nullptr when `device_ptr` is
// not inside this runtime's device address range.
void* translate_device_address(const void* device_ptr) noexcept;

// Device whose address range holds `device_ptr`, or -1 when not ours.
c10::DeviceIndex device_of_address(const void* device_ptr) noexcept;

} // namespace scaffold::runtime
