// Memory history: what torch.<device>.memory._record_memory_history() asks
// the caching allocator to keep -- the stack that allocated each live block
// and a trace of its actions (allocations, frees, segments mapped and
// released, out-of-memory errors) -- and the snapshot of its segments and
// blocks that torch.<device>.memory._snapshot() returns, in the format of
// torch.cuda.memory._snapshot(), so torch.cuda._memory_viz and
// pytorch.org/memory_viz read it.
//
// Stacks are torch::CapturedTraceback (Python frames, and C++ frames with
// stacks="all"), gathered before the allocator takes its lock, and only
// symbolized when a snapshot is taken. The allocator calls in here only
// when recording is on (memory_history_enabled(), one relaxed load).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <c10/core/Allocator.h>
#include <c10/core/Device.h>

#include "scaffold_driver.h"

namespace scaffold::runtime {

// The arguments of _record_memory_history, as CUDA's allocator takes them.
struct MemoryHistorySettings {
  bool record_state = false; // enabled: "state" or "all" (stacks of live blocks)
  bool record_trace = false; // enabled: "all" (a trace of actions)
  bool stacks_for_state = false; // context: "state", "alloc" or "all"
  bool stacks_for_allocs = false; // context: "alloc" or "all" (in the trace)
  bool stacks_for_frees = false; // context: "all" (in the trace)
  bool cpp_frames = false; // stacks: "all" (else Python frames only)
  size_t max_entries = SIZE_MAX; // per device; the oldest entries go first
};

// Replaces the settings; `clear` also forgets the trace kept so far.
// Disabling keeps the trace for a later snapshot, as CUDA does.
void set_memory_history(const MemoryHistorySettings& settings, bool clear);
MemoryHistorySettings memory_history();

namespace detail {
extern std::atomic<bool> g_memory_history;
} // namespace detail

inline bool memory_history_enabled() noexcept {
  return detail::g_memory_history.load(std::memory_order_relaxed);
}

// The calling thread's stack, for an allocation (kept with the block while
// it lives) or a free; null when the settings keep none.
std::shared_ptr<c10::GatheredContext> gather_allocation_stack();
std::shared_ptr<c10::GatheredContext> gather_free_stack();

// Stream work never gathers Python frames: the Python side would take the
// GIL, which the thread waiting for the work may hold. launch.cpp holds one
// of these while launched work runs, on a stream's worker or on a host
// thread that runs the queue itself in a synchronisation.
class StreamWorkScope {
 public:
  StreamWorkScope() noexcept;
  ~StreamWorkScope();
  StreamWorkScope(const StreamWorkScope&) = delete;
  StreamWorkScope& operator=(const StreamWorkScope&) = delete;

 private:
  bool was_stream_work_;
};

enum class TraceAction : uint8_t {
  Alloc,
  FreeRequested, // freed by its tensor, still in use on other streams
  FreeCompleted, // reusable
  SegmentAlloc, // the allocator mapped a segment (drvMalloc)
  SegmentFree, // ... and gave one back (drvFree)
  Oom,
  Snapshot,
};

struct TraceEntry {
  TraceAction action = TraceAction::Alloc;
  uintptr_t address = 0;
  size_t size = 0;
  drvStream_t stream = nullptr;
  int64_t time_us = 0;
  size_t device_free = 0; // Oom: what the device could still map
  std::shared_ptr<c10::GatheredContext> stack;
};

// Appends to `device`'s trace (when the settings keep one).
void record_trace(c10::DeviceIndex device, TraceEntry entry);
std::vector<TraceEntry> trace_of(c10::DeviceIndex device);

// ---- Snapshots -----------------------------------------------------------------
enum class BlockState : uint8_t { ActiveAllocated, ActiveAwaitingFree, Inactive };

struct BlockSnapshot {
  uintptr_t address = 0;
  size_t size = 0;
  size_t requested_size = 0;
  BlockState state = BlockState::Inactive;
  std::shared_ptr<c10::GatheredContext> stack;
};

struct SegmentSnapshot {
  c10::DeviceIndex device = 0;
  uintptr_t address = 0;
  size_t total_size = 0;
  drvStream_t stream = nullptr; // null for a graph pool's segment
  c10::MempoolId_t pool{0, 0}; // the graph pool it belongs to ({0, 0}: none)
  bool small = false;
  std::shared_ptr<c10::GatheredContext> stack;
  std::vector<BlockSnapshot> blocks; // in address order, covering the segment
};

struct Frame {
  std::string filename;
  std::string name;
  uint64_t line = 0;
};

// Symbolizes stacks in one batch (torch::symbolize): add every stack, then
// frames() gives each one's frames, innermost first.
class StackSymbolizer {
 public:
  // An index for frames(); -1 for a null stack (no frames).
  int64_t add(const std::shared_ptr<c10::GatheredContext>& stack);
  void symbolize();
  const std::vector<Frame>& frames(int64_t index) const;

 private:
  std::vector<std::shared_ptr<c10::GatheredContext>> stacks_;
  std::vector<std::vector<Frame>> frames_;
};

} // namespace scaffold::runtime
