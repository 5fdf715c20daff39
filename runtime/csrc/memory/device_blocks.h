// The blocks of one device's heap (allocator.cpp): the segments it mapped
// from the driver, cut into blocks, and which of them are live, free or
// parked. DeviceBlocks answers "which free block serves this request" --
// best fit per stream and size class, splitting, coalescing on free, the
// parked lists a loop of small ops reuses -- and knows nothing of the
// driver, statistics, memory history, streams' pending work or locking:
// DeviceHeap owns those and calls it with its mutex held.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <c10/core/Allocator.h>

#include "scaffold_driver.h"

namespace scaffold::runtime {

// ---- Size policy (see allocator.h) -----------------------------------------
constexpr size_t kBlockGranularity = 512; // size classes and alignment
constexpr size_t kSmallRequest = size_t{1} << 20; // <= 1 MiB: small pool
constexpr size_t kParkedMaxSize = 64 * kBlockGranularity; // parked when freed

struct Block;

struct Segment {
  uintptr_t base; // device address returned by drvMalloc
  size_t size;
  bool small;
  drvStream_t stream; // the stream whose allocations reuse this segment
  Block* head = nullptr; // its first block (never absorbed by a neighbour)
  std::shared_ptr<c10::GatheredContext> stack; // what mapped it (memory history)
};

// A piece of a segment, either live (handed out), free (in a pool), or
// pending (freed, waiting for work on other streams).
// Neighbours in the same segment are linked so freeing can coalesce.
struct Block {
  Block(uintptr_t address_, size_t size_, Segment* segment_)
      : address(address_), size(size_), segment(segment_) {}

  uintptr_t address;
  size_t size;
  Segment* segment;
  Block* prev = nullptr;
  Block* next = nullptr;
  bool allocated = false; // live, pending or parked: not in a pool
  bool parked = false; // freed, in a parked list (and still filed as live)
  size_t requested = 0; // bytes asked for, while live
  std::unordered_set<drvStream_t> used_on; // other streams (record_stream)
  std::shared_ptr<c10::GatheredContext> stack; // what allocated it, while live (memory history)
};

class DeviceBlocks {
 public:
  // A free block for a request of `size` bytes (a multiple of
  // kBlockGranularity) on `stream`, cut to `size` and filed as live; null
  // when no segment of the stream has one (the caller maps a new segment).
  Block* take(size_t size, bool small, drvStream_t stream);
  // Files a segment the driver just mapped and returns its block, cut to
  // `size` and filed as live; the rest of the segment becomes free.
  Block* take_from_new_segment(Segment* segment, size_t size);
  // The live block at `address`; null for an address that is not one (a
  // double free, a foreign pointer, a parked block).
  Block* live(uintptr_t address) const;
  // A freed block that nothing else uses: parked when small, else back in
  // its pool, coalesced with its free neighbours.
  void release(Block* block);
  // A freed block that other streams' work may still use: no longer live,
  // and not free until return_to_pool().
  void retire(Block* block);
  // A retired block: back in its pool, coalesced.
  void return_to_pool(Block* block);
  // Takes the segments whose memory is all free out of this heap (their
  // blocks deleted), for the caller to give back to the driver: those of the
  // streams (or pools) `releasable` says yes to, or all. Parked blocks
  // return to their pools first.
  std::vector<std::unique_ptr<Segment>> take_unused_segments(
      const std::function<bool(drvStream_t)>& releasable = nullptr);
  // The largest free block a request in that pool on `stream` could use.
  size_t largest_free(bool small, drvStream_t stream) const;
  // Every mapped segment, by address: what a snapshot walks.
  const std::map<uintptr_t, Segment*>& segments() const {
    return segments_;
  }

 private:
  // Free blocks ordered by (stream, size, address): lower_bound is best fit
  // within the stream's blocks, i.e. a free list per stream and size class.
  struct ByStreamSizeAddress {
    bool operator()(const Block* a, const Block* b) const;
  };
  using FreePool = std::set<Block*, ByStreamSizeAddress>;

  FreePool& pool_of(const Block& block) {
    return block.segment->small ? small_free_ : large_free_;
  }
  bool park(Block* block);
  Block* take_parked(size_t size, drvStream_t stream);
  std::vector<Block*>& parked_list(size_t size);
  void return_parked_to_pools();
  static Block* take_best_fit(FreePool& pool, drvStream_t stream, size_t size);
  static void split(Block* block, size_t size, FreePool& pool);
  static void unlink_next(Block* keep, Block* gone);
  Block* make_live(Block* block);

  FreePool small_free_;
  FreePool large_free_;
  std::unordered_map<uintptr_t, Block*> live_; // address -> live (or parked) block
  std::array<std::vector<Block*>, kParkedMaxSize / kBlockGranularity> parked_; // by size
  size_t parked_blocks_ = 0;
  std::map<uintptr_t, Segment*> segments_; // by address
};

} // namespace scaffold::runtime
