#include "coverage.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>

#include <ATen/core/Tensor.h>
#include <ATen/record_function.h>
#include <c10/core/DispatchKey.h>
#include <c10/util/Exception.h>
#include <torch/library.h>

#include "coverage_table.h"
#include "device.h"
#include "fallback_observer.h"
#include "op_signature.h"
#include "stream.h"

namespace scaffold::runtime {

namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// ---- Per-thread state ------------------------------------------------------------

struct OpFrame;
thread_local OpFrame* t_innermost_op = nullptr;
struct FallbackCall {
  OpRecord* record = nullptr;
  int64_t start_ns = 0;
  int64_t cpu_ns = -1; // the CPU kernel's own time, where FallbackCpuWork measured it
  int64_t nested_ns = 0; // device ops the fallback called (the copying fallback's copies)
  int nested_depth = 0;
  FallbackCall* parent = nullptr;
  std::string signature;
};
thread_local FallbackCall* t_fallback = nullptr;

// The classification of an op, by its registrations for the device.
struct OpInfo {
  std::string name; // "aten::add.Tensor"; empty: not an operator, ignored
  const c10::FunctionSchema* schema = nullptr;
  OpRecord* record = nullptr; // null when ignored
  OpPath path = OpPath::Other;
};

OpInfo classify(const c10::OperatorName& operator_name) {
  OpInfo info;
  info.name = operator_name.overload_name.empty() ? operator_name.name
                                                  : operator_name.name + "." + operator_name.overload_name;
  const std::optional<c10::OperatorHandle> op = c10::Dispatcher::singleton().findOp(operator_name);
  const bool aten = info.name.rfind("aten::", 0) == 0;
  if (op.has_value()) {
    info.schema = &op->schema();
    if (op->hasKernelForDispatchKey(c10::DispatchKey::PrivateUse1) ||
        op->hasKernelForDispatchKey(c10::DispatchKey::AutogradPrivateUse1)) {
      info.path = aten ? OpPath::Native : OpPath::Custom;
    } else if (
        op->hasKernelForDispatchKey(c10::DispatchKey::CompositeImplicitAutograd) ||
        op->hasKernelForDispatchKey(c10::DispatchKey::CompositeExplicitAutograd) ||
        op->hasKernelForDispatchKey(c10::DispatchKey::CompositeExplicitAutogradNonFunctional)) {
      info.path = OpPath::Composite;
    } else {
      info.path = OpPath::Other;
    }
  }
  info.record = coverage_records().record(info.name, info.path);
  return info;
}

// Bumped when recording starts: what each thread classified before is asked
// again (a kernel registered since, from Python say, changes an op's path).
std::atomic<uint64_t> g_classification_epoch{0};

// The op behind a RecordFunction's schema, classified once per thread and
// recording. Keyed by the address of the schema's name, which the
// dispatcher keeps for the op's life; the name and overload are compared
// too, so that an address reused by another string is never taken for the
// op that had it. (Frames copy what they need: an entry may be redone.)
const OpInfo* op_info(const at::RecordFunction& fn) {
  struct Cached {
    std::string name;
    std::string overload;
    OpInfo info;
  };
  thread_local std::unordered_map<const char*, Cached> by_name;
  thread_local uint64_t epoch = 0;
  const uint64_t current = g_classification_epoch.load(std::memory_order_relaxed);
  if (epoch != current) {
    by_name.clear();
    epoch = current;
  }
  const char* key = fn.name();
  auto found = by_name.find(key);
  if (found != by_name.end() && found->second.name == key && found->second.overload == fn.overload_name()) {
    return found->second.info.record != nullptr ? &found->second.info : nullptr;
  }
  const std::optional<c10::OperatorName> name = fn.operator_name();
  Cached& cached = by_name[key];
  cached.name = key;
  cached.overload = fn.overload_name();
  cached.info = name.has_value() ? classify(*name) : OpInfo{};
  return cached.info.record != nullptr ? &cached.info : nullptr;
}

// The device an op runs on: its first device tensor's, or a factory's device
// argument; none when nothing of the call is on the device.
std::optional<c10::DeviceIndex> device_of(const c10::IValue& value) {
  if (value.isTensor()) {
    const at::Tensor& tensor = value.toTensor();
    if (tensor.defined() && tensor.device().is_privateuseone()) {
      return tensor.device().index();
    }
  } else if (value.isDevice()) {
    if (value.toDevice().is_privateuseone()) {
      return value.toDevice().has_index() ? value.toDevice().index() : current_device();
    }
  } else if (value.isList()) {
    for (const c10::IValue& element : value.toListRef()) {
      if (element.isTensor() || element.isDevice()) {
        if (auto device = device_of(element)) {
          return device;
        }
      } else if (!element.isNone()) {
        return std::nullopt; // a list of numbers
      }
    }
  }
  return std::nullopt;
}

std::optional<c10::DeviceIndex> device_of(c10::ArrayRef<const c10::IValue> arguments) {
  for (const c10::IValue& argument : arguments) {
    if (auto device = device_of(argument)) {
      return device;
    }
  }
  return std::nullopt;
}

struct OpFrame final : at::ObserverContext {
  OpRecord* record = nullptr;
  int64_t start_ns = 0;
  OpFrame* parent = nullptr;
  bool ran_on_cpu = false; // the fallback ran this very op: the fallback records it
  // A device op that a fallback called (the copying fallback's copies): its
  // time is that fallback's overhead, not a row of its own.
  FallbackCall* inside_fallback = nullptr;
  bool timed_inside_fallback = false;
  std::optional<c10::Stream> stream;
  void* start_event = nullptr;
  std::string signature;
};

std::unique_ptr<at::ObserverContext> on_op_start(const at::RecordFunction& fn) {
  try {
    const c10::ArrayRef<const c10::IValue> inputs = fn.inputs();
    const std::optional<c10::DeviceIndex> device = device_of(inputs);
    if (!device.has_value()) {
      return nullptr;
    }
    auto frame = std::make_unique<OpFrame>();
    if (t_fallback != nullptr) {
      frame->inside_fallback = t_fallback;
      frame->timed_inside_fallback = t_fallback->nested_depth++ == 0;
      frame->start_ns = now_ns();
      return frame;
    }
    const OpInfo* info = op_info(fn);
    if (info == nullptr) {
      return nullptr;
    }
    frame->record = info->record;
    if (info->record->wants_signatures.load(std::memory_order_relaxed)) {
      frame->signature = call_signature_json(inputs, info->schema);
    }
    if ((info->path == OpPath::Native || info->path == OpPath::Custom) && device_timings().enabled()) {
      frame->stream = current_stream(*device);
      frame->start_event = device_timings().mark(*frame->stream);
    }
    frame->parent = t_innermost_op;
    t_innermost_op = frame.get();
    frame->start_ns = now_ns();
    return frame;
  } catch (...) {
    return nullptr; // recording must never fail an op
  }
}

void on_op_end(const at::RecordFunction& /*fn*/, at::ObserverContext* context) {
  auto* frame = static_cast<OpFrame*>(context);
  if (frame == nullptr) {
    return;
  }
  const int64_t end_ns = now_ns();
  if (frame->inside_fallback != nullptr) {
    --frame->inside_fallback->nested_depth;
    if (frame->timed_inside_fallback) {
      frame->inside_fallback->nested_ns += end_ns - frame->start_ns;
    }
    return;
  }
  if (t_innermost_op == frame) {
    t_innermost_op = frame->parent;
  }
  if (frame->ran_on_cpu) {
    if (frame->start_event != nullptr) {
      device_timings().discard(frame->start_event, frame->stream->device_index());
    }
    return;
  }
  try {
    if (frame->start_event != nullptr) {
      void* end_event = device_timings().mark(*frame->stream);
      if (end_event != nullptr) {
        device_timings().add(frame->record, frame->start_event, end_event, frame->stream->device_index());
      } else {
        device_timings().discard(frame->start_event, frame->stream->device_index());
      }
    }
    coverage_records().add_call(frame->record, end_ns - frame->start_ns, 0, std::move(frame->signature));
  } catch (...) {
  }
}

std::mutex g_control_mutex;
std::optional<at::CallbackHandle> g_callback;

// The fallback's records, by op name (the fallback passes its name each call).
OpRecord* fallback_record(const std::string& name) {
  thread_local std::unordered_map<std::string, OpRecord*> by_name;
  auto found = by_name.find(name);
  if (found != by_name.end()) {
    return found->second;
  }
  OpRecord* record = coverage_records().record(name, OpPath::Fallback);
  by_name.emplace(name, record);
  return record;
}

void* begin_fallback_call(
    const std::string& name,
    const c10::OperatorHandle& op,
    const torch::jit::Stack& stack) {
  const size_t count = op.schema().arguments().size();
  const c10::ArrayRef<const c10::IValue> arguments(stack.data() + stack.size() - count, count);
  // The fallback waits for the device before its CPU kernel reads device
  // memory. Waiting here, before the clock starts, keeps the work queued
  // before the op out of the op's time: it is the time of the ops that queued
  // it. An error of that work is thrown here, as the fallback's own wait
  // would have thrown it.
  if (const std::optional<c10::DeviceIndex> device = device_of(arguments)) {
    synchronize_stream(current_stream(*device));
  }
  try {
    auto call = std::make_unique<FallbackCall>();
    call->record = fallback_record(name);
    if (t_innermost_op != nullptr && t_innermost_op->record->name == name) {
      t_innermost_op->ran_on_cpu = true;
    }
    if (call->record->wants_signatures.load(std::memory_order_relaxed)) {
      call->signature = call_signature_json(arguments, &op.schema());
    }
    call->parent = t_fallback;
    t_fallback = call.get();
    call->start_ns = now_ns();
    return call.release();
  } catch (...) {
    return nullptr;
  }
}

void end_fallback_call(void* opaque_call) noexcept {
  std::unique_ptr<FallbackCall> call(static_cast<FallbackCall*>(opaque_call));
  const int64_t total = now_ns() - call->start_ns;
  t_fallback = call->parent;
  const int64_t cpu = call->cpu_ns >= 0 ? call->cpu_ns : total - call->nested_ns;
  try {
    coverage_records().add_call(call->record, total, std::max<int64_t>(0, total - cpu), std::move(call->signature));
  } catch (...) {
  }
}

int64_t begin_fallback_cpu_work() noexcept {
  return t_fallback != nullptr ? now_ns() : 0;
}

void end_fallback_cpu_work(int64_t start_ns) noexcept {
  if (t_fallback != nullptr) {
    t_fallback->cpu_ns = std::max<int64_t>(0, t_fallback->cpu_ns) + (now_ns() - start_ns);
  }
}

// The fallback reports its calls here while recording.
constexpr FallbackObserver kCoverageObserver{
    &begin_fallback_call, &end_fallback_call, &begin_fallback_cpu_work, &end_fallback_cpu_work};

} // namespace

void start_coverage(int64_t max_signatures) {
  TORCH_CHECK(max_signatures >= 0, "coverage: max_signatures must be >= 0, got ", max_signatures);
  std::lock_guard<std::mutex> lock(g_control_mutex);
  coverage_records().configure(max_signatures);
  g_classification_epoch.fetch_add(1, std::memory_order_relaxed);
  if (!g_callback.has_value()) {
    g_callback = at::addGlobalCallback(at::RecordFunctionCallback(&on_op_start, &on_op_end)
                                           .needsInputs(true)
                                           .scopes({at::RecordScope::FUNCTION}));
  }
  set_fallback_observer(&kCoverageObserver);
}

void stop_coverage() {
  std::lock_guard<std::mutex> lock(g_control_mutex);
  set_fallback_observer(nullptr);
  if (g_callback.has_value()) {
    at::removeCallback(*g_callback);
    g_callback.reset();
  }
}

std::string coverage_table() {
  device_timings().settle_all();
  return coverage_records().json(device_timings().enabled());
}

void clear_coverage() {
  device_timings().settle_all();
  coverage_records().clear();
}

} // namespace scaffold::runtime

TORCH_LIBRARY_FRAGMENT(scaffold_runtime, m) {
  m.def("_coverage_start(int max_signatures) -> ()", &scaffold::runtime::start_coverage);
  m.def("_coverage_stop() -> ()", &scaffold::runtime::stop_coverage);
  m.def("_coverage_table() -> str", &scaffold::runtime::coverage_table);
  m.def("_coverage_clear() -> ()", &scaffold::runtime::clear_coverage);
}
