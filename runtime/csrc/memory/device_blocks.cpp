#include "device_blocks.h"

#include <algorithm>
#include <functional>
#include <utility>

namespace scaffold::runtime {

bool DeviceBlocks::ByStreamSizeAddress::operator()(const Block* a, const Block* b) const {
  if (a->segment->stream != b->segment->stream) {
    return std::less<drvStream_t>()(a->segment->stream, b->segment->stream);
  }
  return a->size != b->size ? a->size < b->size : a->address < b->address;
}

Block* DeviceBlocks::take(size_t size, bool small, drvStream_t stream) {
  if (small) {
    if (Block* parked = take_parked(size, stream)) {
      return parked; // filed as live all along
    }
  }
  FreePool& pool = small ? small_free_ : large_free_;
  Block* block = take_best_fit(pool, stream, size);
  if (block == nullptr && small && parked_blocks_ > 0) {
    return_parked_to_pools(); // coalesced, they may fit
    block = take_best_fit(pool, stream, size);
  }
  if (block == nullptr) {
    return nullptr;
  }
  split(block, size, pool);
  return make_live(block);
}

Block* DeviceBlocks::take_from_new_segment(Segment* segment, size_t size) {
  segment->head = new Block{segment->base, segment->size, segment};
  segments_.emplace(segment->base, segment);
  split(segment->head, size, segment->small ? small_free_ : large_free_);
  return make_live(segment->head);
}

Block* DeviceBlocks::make_live(Block* block) {
  block->allocated = true;
  live_.emplace(block->address, block);
  return block;
}

Block* DeviceBlocks::live(uintptr_t address) const {
  const auto it = live_.find(address);
  return it == live_.end() || it->second->parked ? nullptr : it->second;
}

void DeviceBlocks::release(Block* block) {
  if (park(block)) {
    return;
  }
  retire(block);
  return_to_pool(block);
}

void DeviceBlocks::retire(Block* block) {
  live_.erase(block->address);
}

// ---- Parked blocks ----
// A loop of small ops frees and allocates blocks of the same few sizes over
// and over. Putting each freed block back in its pool (coalescing, a tree
// insert) and taking it out again (a tree search, a split) cost more than a
// 16-element op's kernel, so a freed small block of up to kParkedMaxSize
// parks in a list for its size instead, keeping its entry in live_ (marked
// parked), and the next allocation of that size on the same stream takes it
// back. Parked blocks return to their pool, coalesced, whenever the pool
// cannot serve a request -- before any memory is mapped -- and before unused
// segments are taken out, so they never make the device reserve more memory.
bool DeviceBlocks::park(Block* block) {
  if (!block->segment->small || block->size > kParkedMaxSize) {
    return false;
  }
  parked_list(block->size).push_back(block);
  block->parked = true;
  parked_blocks_ += 1;
  return true;
}

Block* DeviceBlocks::take_parked(size_t size, drvStream_t stream) {
  if (size > kParkedMaxSize) {
    return nullptr;
  }
  std::vector<Block*>& list = parked_list(size);
  if (list.empty() || list.back()->segment->stream != stream) {
    return nullptr;
  }
  Block* block = list.back();
  list.pop_back();
  block->parked = false;
  parked_blocks_ -= 1;
  return block;
}

// The list of parked blocks of `size` (<= kParkedMaxSize, a multiple of
// kBlockGranularity).
std::vector<Block*>& DeviceBlocks::parked_list(size_t size) {
  return parked_[size / kBlockGranularity - 1];
}

void DeviceBlocks::return_parked_to_pools() {
  for (std::vector<Block*>& list : parked_) {
    for (Block* block : list) {
      block->parked = false;
      live_.erase(block->address);
      return_to_pool(block);
    }
    list.clear();
  }
  parked_blocks_ = 0;
}

// Coalesce with free neighbours and put back in the pool. A block's size is
// its ordering key, so a neighbour leaves the pool *before* it grows.
void DeviceBlocks::return_to_pool(Block* block) {
  block->allocated = false;
  FreePool& pool = pool_of(*block);
  if (Block* prev = block->prev; prev != nullptr && !prev->allocated) {
    pool.erase(prev);
    prev->size += block->size;
    unlink_next(prev, block);
    block = prev;
  }
  if (Block* next = block->next; next != nullptr && !next->allocated) {
    pool.erase(next);
    block->size += next->size;
    unlink_next(block, next);
  }
  pool.insert(block);
}

Block* DeviceBlocks::take_best_fit(FreePool& pool, drvStream_t stream, size_t size) {
  Segment key_segment{0, 0, false, stream};
  Block key{0, size, &key_segment};
  auto it = pool.lower_bound(&key);
  if (it == pool.end() || (*it)->segment->stream != stream) {
    return nullptr;
  }
  Block* block = *it;
  pool.erase(it);
  return block;
}

// Keeps the first `size` bytes of `block`, returns the rest to `pool` when
// worth it. Large blocks are only split when the remainder is itself a large
// allocation, so big segments don't shatter into small pieces (same rule as
// the CUDA caching allocator).
void DeviceBlocks::split(Block* block, size_t size, FreePool& pool) {
  const size_t remaining = block->size - size;
  const bool worth_it = block->segment->small ? remaining >= kBlockGranularity : remaining > kSmallRequest;
  if (!worth_it) {
    return;
  }
  auto* rest = new Block{block->address + size, remaining, block->segment};
  rest->prev = block;
  rest->next = block->next;
  if (block->next != nullptr) {
    block->next->prev = rest;
  }
  block->next = rest;
  block->size = size;
  pool.insert(rest);
}

// `keep` absorbed `gone`, its right neighbour.
void DeviceBlocks::unlink_next(Block* keep, Block* gone) {
  keep->next = gone->next;
  if (gone->next != nullptr) {
    gone->next->prev = keep;
  }
  delete gone;
}

std::vector<std::unique_ptr<Segment>> DeviceBlocks::take_unused_segments(
    const std::function<bool(drvStream_t)>& releasable) {
  return_parked_to_pools();
  std::vector<std::unique_ptr<Segment>> unused;
  for (FreePool* pool : {&small_free_, &large_free_}) {
    std::vector<Block*> whole;
    for (Block* block : *pool) {
      if (block->prev == nullptr && block->next == nullptr &&
          (releasable == nullptr || releasable(block->segment->stream))) {
        whole.push_back(block);
      }
    }
    for (Block* block : whole) {
      pool->erase(block);
      std::unique_ptr<Segment> segment(block->segment);
      segments_.erase(segment->base);
      segment->head = nullptr;
      delete block;
      unused.push_back(std::move(segment));
    }
  }
  return unused;
}

size_t DeviceBlocks::largest_free(bool small, drvStream_t stream) const {
  size_t largest = 0;
  for (const Block* block : small ? small_free_ : large_free_) {
    if (block->segment->stream == stream) {
      largest = std::max(largest, block->size);
    }
  }
  return largest;
}

} // namespace scaffold::runtime
