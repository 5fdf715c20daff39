#include "memory_history.h"

#include <array>
#include <chrono>
#include <mutex>
#include <utility>

#include <torch/csrc/profiler/combined_traceback.h>

#include "device.h"

namespace scaffold::runtime {
namespace detail {
std::atomic<bool> g_memory_history{false};
} // namespace detail

namespace {

std::mutex g_settings_mutex;
MemoryHistorySettings g_settings; // under g_settings_mutex

thread_local bool t_stream_work = false;

// One device's trace: a ring of at most max_entries entries.
struct Trace {
  std::mutex mutex;
  std::vector<TraceEntry> entries;
  size_t next = 0; // the oldest entry once the ring is full
};

Trace& trace(c10::DeviceIndex device) {
  static auto* all = new std::array<Trace, kMaxDevices>(); // leaked: frees run at exit
  return (*all)[device];
}

MemoryHistorySettings settings() {
  std::lock_guard<std::mutex> lock(g_settings_mutex);
  return g_settings;
}

std::shared_ptr<c10::GatheredContext> gather(bool wanted, bool cpp_frames) {
  if (!wanted) {
    return nullptr;
  }
  const bool python = !t_stream_work;
  if (!python && !cpp_frames) {
    return nullptr;
  }
  return torch::CapturedTraceback::gather(python, /*script=*/python, cpp_frames);
}

int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

} // namespace

void set_memory_history(const MemoryHistorySettings& next, bool clear) {
  {
    std::lock_guard<std::mutex> lock(g_settings_mutex);
    g_settings = next;
    detail::g_memory_history.store(next.record_state || next.record_trace, std::memory_order_relaxed);
  }
  for (c10::DeviceIndex device = 0; device < kMaxDevices; ++device) {
    Trace& t = trace(device);
    std::lock_guard<std::mutex> lock(t.mutex);
    if (clear) {
      t.entries.clear();
      t.next = 0;
    } else if (t.entries.size() > next.max_entries) {
      // Keep the newest max_entries, oldest first.
      std::vector<TraceEntry> kept;
      kept.reserve(next.max_entries);
      const size_t size = t.entries.size();
      for (size_t i = size - next.max_entries; i < size; ++i) {
        kept.push_back(std::move(t.entries[(t.next + i) % size]));
      }
      t.entries = std::move(kept);
      t.next = 0;
    }
  }
}

MemoryHistorySettings memory_history() {
  return settings();
}

std::shared_ptr<c10::GatheredContext> gather_allocation_stack() {
  const MemoryHistorySettings s = settings();
  return gather(s.stacks_for_state || s.stacks_for_allocs, s.cpp_frames);
}

std::shared_ptr<c10::GatheredContext> gather_free_stack() {
  const MemoryHistorySettings s = settings();
  return gather(s.record_trace && s.stacks_for_frees, s.cpp_frames);
}

StreamWorkScope::StreamWorkScope() noexcept : was_stream_work_(t_stream_work) {
  t_stream_work = true;
}

StreamWorkScope::~StreamWorkScope() {
  t_stream_work = was_stream_work_;
}

void record_trace(c10::DeviceIndex device, TraceEntry entry) {
  const MemoryHistorySettings s = settings();
  if (!s.record_trace || s.max_entries == 0) {
    return;
  }
  switch (entry.action) {
    case TraceAction::Alloc:
    case TraceAction::SegmentAlloc:
      if (!s.stacks_for_allocs) {
        entry.stack = nullptr;
      }
      break;
    case TraceAction::FreeRequested:
    case TraceAction::FreeCompleted:
    case TraceAction::SegmentFree:
      if (!s.stacks_for_frees) {
        entry.stack = nullptr;
      }
      break;
    case TraceAction::Oom:
    case TraceAction::Snapshot:
      break;
  }
  entry.time_us = now_us();
  Trace& t = trace(device);
  std::lock_guard<std::mutex> lock(t.mutex);
  if (t.entries.size() < s.max_entries) {
    t.entries.push_back(std::move(entry));
  } else {
    t.entries[t.next] = std::move(entry);
    t.next = (t.next + 1) % t.entries.size();
  }
}

std::vector<TraceEntry> trace_of(c10::DeviceIndex device) {
  Trace& t = trace(device);
  std::lock_guard<std::mutex> lock(t.mutex);
  std::vector<TraceEntry> ordered;
  ordered.reserve(t.entries.size());
  for (size_t i = 0; i < t.entries.size(); ++i) {
    ordered.push_back(t.entries[(t.next + i) % t.entries.size()]);
  }
  return ordered;
}

// ---- StackSymbolizer ---------------------------------------------------------------

int64_t StackSymbolizer::add(const std::shared_ptr<c10::GatheredContext>& stack) {
  if (stack == nullptr) {
    return -1;
  }
  stacks_.push_back(stack);
  return static_cast<int64_t>(stacks_.size()) - 1;
}

void StackSymbolizer::symbolize() {
  std::vector<torch::CapturedTraceback*> tracebacks;
  tracebacks.reserve(stacks_.size());
  for (const auto& stack : stacks_) {
    tracebacks.push_back(torch::getCapturedTracebackFromContext(stack));
  }
  const torch::SymbolizedTracebacks symbolized = torch::symbolize(tracebacks);
  frames_.clear();
  frames_.reserve(symbolized.tracebacks.size());
  for (const auto& indices : symbolized.tracebacks) {
    std::vector<Frame>& frames = frames_.emplace_back();
    frames.reserve(indices.size());
    for (const uint64_t index : indices) {
      const auto& frame = symbolized.all_frames.at(index);
      frames.push_back(Frame{frame.filename, frame.funcname, frame.lineno});
    }
  }
}

const std::vector<Frame>& StackSymbolizer::frames(int64_t index) const {
  static const std::vector<Frame> none;
  return index < 0 ? none : frames_.at(static_cast<size_t>(index));
}

} // namespace scaffold::runtime
