// Pinned host memory for this backend: what tensor.pin_memory() and
// DataLoader(pin_memory=True) allocate, and what is_pinned() recognises.
//
// The memory comes from the driver (drvHostAlloc: page-locked host memory
// on a real device). A non-blocking copy from or to a pinned block records
// its stream (record_event); the block is not reused until that copy is
// done. Blocks are cached by size class (powers of two
// up to 16 MiB, then 2 MiB multiples) so repeated pinning is not a malloc
// per batch. Registered as the PrivateUse1 host allocator in
// registration.cpp and returned by the hooks' getPinnedMemoryAllocator().
#pragma once

#include <ATen/core/CachingHostAllocator.h>

namespace scaffold::runtime {

// The HostAllocator instance (never destroyed).
at::HostAllocator* pinned_host_allocator();

// True when `ptr` points into a live pinned block.
bool is_pinned_pointer(const void* ptr);

} // namespace scaffold::runtime
