// Device memory: a caching allocator over the driver's drvMalloc/drvFree.
//
// Modelled on PyTorch's CUDA caching allocator: sizes are rounded to
// 512-byte classes, small requests (<= 1 MiB) are packed into shared 2 MiB
// segments, larger ones into 20 MiB segments (or their own segment when
// >= 10 MiB); freed blocks go to best-fit free lists (ordered by size
// class) and are coalesced with free neighbours, so steady-state allocation
// is a few pointer operations under a per-device mutex and never a driver
// call. A freed small block (<= 32 KiB) is first parked in a list for its
// size, where the next allocation of that size takes it back without
// touching the free lists; parked blocks are coalesced back before the
// allocator would map more memory or release cached memory.
//
// Streams: each segment belongs to the stream that was current when it was
// allocated, and its blocks are reused only for allocations on that stream,
// where later work is ordered after earlier work. A block used on other
// streams too (record_stream) is not reused when freed: the allocator
// records a driver event on each of those streams and returns the block to
// its pool once they have all completed.
//
// The memory itself (and its protection against host access) is the
// driver's: see driver/scaffold_driver.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <c10/core/Allocator.h>
#include <c10/core/CachingDeviceAllocator.h>
#include <c10/core/Device.h>
#include <c10/core/Stream.h>

#include "memory_history.h"

namespace scaffold::runtime {

// The largest capacity a device can be given (the simulated driver's
// address span per device).
constexpr uint64_t kMaxDeviceCapacity = uint64_t{256} << 30; // 256 GiB

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
  uint64_t allocated_bytes_total = 0; // cumulative bytes handed out
  uint64_t freed_bytes_total = 0; // cumulative bytes given back
  uint64_t reserved_bytes_peak = 0;
  uint64_t active_blocks_peak = 0;
  uint64_t segments_peak = 0;
  uint64_t pending_free_blocks = 0; // freed, waiting for other streams' work
  uint64_t requested_bytes = 0; // live blocks, as requested (unrounded)
  uint64_t requested_bytes_peak = 0;
  uint64_t requested_bytes_total = 0;
  uint64_t requested_freed_total = 0;
};

// The c10::DeviceAllocator registered for DeviceType::PrivateUse1, so
// torch.accelerator.memory_* work. allocate() uses the calling thread's
// current device and its current stream; kernels creating tensors on an
// explicit device put a c10::DeviceGuard around it (as CUDA kernels do), or
// call allocate_on_device.
c10::DeviceAllocator* device_allocator();

// Marks `data` (a live allocation of this allocator) as used on `stream`:
// freeing it will not let the memory be reused before the work enqueued on
// `stream` up to the free has completed (Tensor.record_stream).
void record_stream(const c10::DataPtr& data, const c10::Stream& stream);

// Allocate `nbytes` on `device` (no guard needed). Throws
// c10::OutOfMemoryError when the device's capacity is exhausted.
c10::DataPtr allocate_on_device(c10::DeviceIndex device, size_t nbytes);

DeviceMemoryStats memory_stats(c10::DeviceIndex device);
void reset_peak_memory_stats(c10::DeviceIndex device);

// Releases every cached segment with no live block, on all devices.
// Raises while a stream is captured into a graph.
void empty_cache();

// ---- Private pools of device graphs (CUDA's graph memory pools) ----------
// While a stream is captured, what is allocated on it (or on a stream that
// joined its capture: capture.h) comes from the graph's private pool:
// segments of their own, never handed to other allocations, so that the
// memory a graph's replays write stays the graph's. Graphs may share a pool (the id of graph_pool_handle() or of
// another graph's pool()); the pool's memory goes back to the device once
// no graph uses it and its tensors are freed.
//
// A new pool id: {n, 0} for a graph's own pool, {0, n} for a handle
// (graph_pool_handle()), as CUDA numbers them.
c10::MempoolId_t new_pool_id(bool handle);
// Allocations on `stream` of `device` come from `pool` until
// end_allocate_to_pool; the caller holds the pool (release_pool).
void begin_allocate_to_pool(c10::DeviceIndex device, c10::MempoolId_t pool, drvStream_t stream);
void end_allocate_to_pool(c10::DeviceIndex device, drvStream_t stream);
// Drops one hold on `pool`; the last one gives its free segments back to
// the driver (the rest follow with empty_cache once their tensors are freed).
void release_pool(c10::DeviceIndex device, c10::MempoolId_t pool);
// Bytes mapped for `pool` on `device` (tests, debugging).
uint64_t pool_reserved_bytes(c10::DeviceIndex device, c10::MempoolId_t pool);

// Per-device capacity in bytes (default: SCAFFOLD_DEVICE_MEMORY_CAPACITY,
// else the host's physical memory). Lowering it below what is reserved
// releases cached segments; live tensors are never touched.
void set_memory_capacity(c10::DeviceIndex device, uint64_t bytes);
uint64_t memory_capacity(c10::DeviceIndex device);

// The device's segments and their blocks, with the stacks that allocated
// them while memory history is recorded (memory_history.h); `mark` adds a
// "snapshot" entry to the recorded trace.
std::vector<SegmentSnapshot> memory_snapshot(c10::DeviceIndex device, bool mark = true);

// True in a child process forked after this process allocated device
// memory. Such a child shares the parent's device pages, so it may not
// allocate (like CUDA after fork); torch.<backend>._is_in_bad_fork().
bool in_bad_fork() noexcept;

// False when the driver does not protect device memory from host access
// (SCAFFOLD_PROTECT_MEMORY=0 for the simulated driver).
bool memory_protection_enabled();

// Whether host code may read and write device memory in place (through
// host_address/host_view, memory_access.h): the driver's
// drvDevAttrHostAddressableMemory, asked once. True for the simulated device
// (unless SCAFFOLD_DEVICE_MEMORY=discrete), unified-memory and CPU-like
// accelerators; false for a GPU or NPU, whose memory the host reaches only
// through copies -- then host views are refused (HostAccessUnavailable), the
// kernels that compute on them decline and their ops run through the copying
// fallback, and the core ops use the driver's copies and fills.
bool device_memory_is_host_addressable() noexcept;

} // namespace scaffold::runtime
