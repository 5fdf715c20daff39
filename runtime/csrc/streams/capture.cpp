#include "capture.h"

#include <algorithm>
#include <mutex>
#include <optional>
#include <string_view>

#include <ATen/CPUGeneratorImpl.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/record_function.h>
#include <c10/util/Exception.h>

#include "device.h"
#include "status.h"
#include "stream.h"

namespace scaffold::runtime {


namespace {

struct Capture {
  c10::DeviceIndex device = 0;
  drvStream_t stream = nullptr; // the stream the capture began on
  uint64_t id = 0; // what the events recorded in it keep (capture_id_of)
  // The streams that joined it by waiting on an event recorded in it (the
  // driver captures their work into the same graph).
  std::vector<drvStream_t> joined;
  std::vector<std::unique_ptr<LaunchedWork>> closures;
  std::vector<std::shared_ptr<ReplaySeed>> random_seeds; // one per generator used
  uint64_t random_kernels = 0;
  std::string invalidated; // the first refused call's message

  bool contains(drvStream_t member) const {
    return member == stream || std::find(joined.begin(), joined.end(), member) != joined.end();
  }
};

std::atomic<uint64_t> g_next_capture_id{1};

std::mutex& captures_mutex() {
  static auto* mutex = new std::mutex(); // leaked: used at exit
  return *mutex;
}

std::vector<std::unique_ptr<Capture>>& captures() {
  static auto* all = new std::vector<std::unique_ptr<Capture>>();
  return *all;
}

// Called with captures_mutex() held.
Capture* find(drvStream_t stream) {
  for (const auto& capture : captures()) {
    if (capture->contains(stream)) {
      return capture.get();
    }
  }
  return nullptr;
}

// The ops running on each thread while a capture is under way, outermost
// first, so that a refused call names the op the user wrote (aten::item)
// and the one that refused (aten::_local_scalar_dense): a RecordFunction
// observer, installed only while a stream is captured (the autograd
// engine's threads run backward ops on the captured stream too).
struct RunningOp {
  const char* name;
  std::optional<c10::OperatorName> op; // dispatcher ops: to ask for their tags
};
thread_local std::vector<RunningOp> t_ops;
at::CallbackHandle g_op_observer = 0;

std::unique_ptr<at::ObserverContext> op_started(const at::RecordFunction& fn) {
  t_ops.push_back(RunningOp{fn.name(), fn.operator_name()});
  return nullptr;
}

void op_ended(const at::RecordFunction& /*fn*/, at::ObserverContext* /*ctx*/) {
  if (!t_ops.empty()) { // an op that began before the observer came
    t_ops.pop_back();
  }
}

std::string running_op() {
  if (t_ops.empty()) {
    return "";
  }
  std::string name = t_ops.front().name;
  if (t_ops.size() > 1 && std::string_view(t_ops.back().name) != name) {
    name += std::string(" (in ") + t_ops.back().name + ")";
  }
  return name;
}

// A random op (ATen tags them nondeterministic_seeded) is running: whatever
// it was refused for, the reason to tell is its random numbers, which a
// replay would repeat (dropout reads device memory on the host before it
// draws them).
bool random_op_running() {
  for (const RunningOp& running : t_ops) {
    if (running.op.has_value()) {
      const auto handle = c10::Dispatcher::singleton().findOp(*running.op);
      if (handle.has_value() && handle->hasTag(at::Tag::nondeterministic_seeded)) {
        return true;
      }
    }
  }
  return false;
}

constexpr const char* kRandom =
    "draws its random numbers on the host, which every replay of a graph would repeat (the CPU fallback, or a "
    "kernel that is not capture-safe: random_ops.h); capture-safe random ops are dropout, bernoulli_, normal_, "
    "uniform_ and random_ and what is made of them (rand, randn, randint)";

// SplitMix64's increment (2^64 / the golden ratio), between the counters it mixes.
constexpr uint64_t kSplitMixGamma = 0x9e3779b97f4a7c15ULL;

// SplitMix64's output function: a bijection of 64-bit words whose outputs
// for consecutive inputs look independent.
uint64_t mix64(uint64_t x) {
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

[[noreturn]] void refuse(Capture& capture, const std::string& refused) {
  const std::string op = running_op();
  const std::string what = random_op_running() ? std::string(kRandom) : refused;
  const std::string message = (op.empty() ? std::string("a call") : op) + " " + what + " while " +
      device_string(capture.device) + "'s stream " + std::to_string(stream_id_of(capture.device, capture.stream)) +
      " is being captured into a graph (captured work runs only when the graph is replayed)";
  if (capture.invalidated.empty()) {
    capture.invalidated = message;
  }
  TORCH_CHECK(
      false,
      message,
      ". Move it out of the captured region; this capture is invalidated, and ending it raises "
      "(the stream stays usable).");
}

} // namespace

void begin_stream_capture(c10::DeviceIndex device, drvStream_t stream) {
  std::lock_guard<std::mutex> lock(captures_mutex());
  const drvError_t status = drvStreamBeginCapture(stream);
  TORCH_CHECK(
      status != drvErrorNotSupported,
      c10::get_privateuse1_backend(),
      "'s driver has no graphs (drvStreamBeginCapture: ",
      drvGetLastErrorMessage(),
      "): stream capture and replay are not available");
  SCAFFOLD_DRIVER_CHECK(status);
  auto capture = std::make_unique<Capture>();
  capture->device = device;
  capture->stream = stream;
  capture->id = g_next_capture_id.fetch_add(1);
  captures().push_back(std::move(capture));
  if (detail::g_captures_underway.fetch_add(1) == 0) {
    // Captured work runs at replays, long after its launch: while a capture
    // is under way the runtime launches as with an asynchronous driver
    // (closures on the heap, never on a kernel's stack), whatever the
    // driver's mode; launch_blocking() asks the driver again afterwards.
    detail::g_launch_blocking.store(0, std::memory_order_relaxed);
    g_op_observer = at::addGlobalCallback(
        at::RecordFunctionCallback(&op_started, &op_ended).scopes({at::RecordScope::FUNCTION}));
  }
}

CapturedWork end_stream_capture(drvStream_t stream) {
  std::unique_ptr<Capture> capture;
  drvGraph_t graph = nullptr;
  drvError_t status = drvSuccess;
  std::string driver_message;
  {
    std::lock_guard<std::mutex> lock(captures_mutex());
    auto& all = captures();
    auto it = std::find_if(all.begin(), all.end(), [&](const auto& c) { return c->stream == stream; });
    TORCH_CHECK(it != all.end(), "the stream is not being captured");
    capture = std::move(*it);
    all.erase(it);
    status = drvStreamEndCapture(stream, &graph);
    if (status != drvSuccess) {
      driver_message = drvGetLastErrorMessage();
    }
    if (status == drvErrorStreamCaptureUnjoined) {
      driver_message += " (the streams that joined it:";
      for (drvStream_t joined : capture->joined) {
        driver_message += " stream " + std::to_string(stream_id_of(capture->device, joined));
      }
      driver_message += "; join each with torch." + c10::get_privateuse1_backend() +
          ".current_stream().wait_stream(side_stream) before the capture ends)";
    }
    if (detail::g_captures_underway.fetch_sub(1) == 1) {
      at::removeCallback(g_op_observer);
      g_op_observer = 0;
      detail::g_launch_blocking.store(-1, std::memory_order_relaxed);
    }
  }
  if (!capture->invalidated.empty() || status != drvSuccess) {
    if (graph != nullptr) {
      (void)drvGraphDestroy(graph);
    }
    TORCH_CHECK(
        false,
        "the graph capture on ",
        device_string(capture->device),
        " failed: ",
        capture->invalidated.empty() ? driver_message : capture->invalidated,
        ". Nothing was captured; the stream runs its work again.");
  }
  CapturedWork captured;
  captured.graph = graph;
  captured.closures = std::move(capture->closures);
  captured.random_seeds = std::move(capture->random_seeds);
  return captured;
}

CapturedRandom capture_random_kernel(drvStream_t stream, const at::Generator& device_generator) {
  std::lock_guard<std::mutex> lock(captures_mutex());
  Capture* capture = find(stream);
  TORCH_CHECK(capture != nullptr, "capture_random_kernel: the stream is not being captured");
  for (const auto& seed : capture->random_seeds) {
    if (seed->source.unsafeGetGeneratorImpl() == device_generator.unsafeGetGeneratorImpl()) {
      return CapturedRandom(seed, capture->random_kernels++);
    }
  }
  auto seed = std::make_shared<ReplaySeed>(device_generator);
  capture->random_seeds.push_back(seed);
  return CapturedRandom(std::move(seed), capture->random_kernels++);
}

at::Generator CapturedRandom::generator() const {
  // All 624 words of the state from SplitMix64 (mt19937's own seeding takes
  // 32 bits: masks of two replays would repeat after some 2^16 replays).
  at::mt19937_data_pod data{};
  uint64_t counter = mix64(seed_->value ^ mix64(ordinal_ + kSplitMixGamma));
  data.seed_ = counter;
  data.seeded_ = true;
  data.left_ = 1; // the first draw generates the next block from the state
  data.next_ = 0;
  for (uint32_t& word : data.state_) {
    counter += kSplitMixGamma;
    word = static_cast<uint32_t>(mix64(counter) >> 32);
  }
  at::mt19937 engine;
  engine.set_data(data);
  at::Generator cpu = at::make_generator<at::CPUGeneratorImpl>();
  at::check_generator<at::CPUGeneratorImpl>(cpu)->set_engine(engine);
  return cpu;
}

uint64_t capture_id_of(drvStream_t stream) {
  if (!capture_underway()) {
    return 0;
  }
  std::lock_guard<std::mutex> lock(captures_mutex());
  const Capture* capture = find(stream);
  return capture == nullptr ? 0 : capture->id;
}

void joined_capture(uint64_t id, drvStream_t waiter) {
  std::lock_guard<std::mutex> lock(captures_mutex());
  for (const auto& capture : captures()) {
    if (capture->id == id) {
      if (!capture->contains(waiter)) {
        capture->joined.push_back(waiter);
      }
      return;
    }
  }
}

void refuse_if_capture_live(uint64_t id, const std::string& what) {
  if (id == 0 || !capture_underway()) {
    return;
  }
  std::lock_guard<std::mutex> lock(captures_mutex());
  for (const auto& capture : captures()) {
    if (capture->id == id) {
      refuse(*capture, what);
    }
  }
}

drvStream_t capture_origin(drvStream_t stream) {
  if (!capture_underway()) {
    return stream;
  }
  std::lock_guard<std::mutex> lock(captures_mutex());
  const Capture* capture = find(stream);
  return capture == nullptr ? stream : capture->stream;
}

bool is_capturing(drvStream_t stream) {
  if (!capture_underway()) {
    return false;
  }
  std::lock_guard<std::mutex> lock(captures_mutex());
  return find(stream) != nullptr;
}

bool current_stream_capturing(c10::DeviceIndex device) {
  return capture_underway() && is_capturing(current_driver_stream(device));
}

bool launch_captured(drvStream_t stream, void (*fn)(void*), std::unique_ptr<LaunchedWork>& work) {
  std::lock_guard<std::mutex> lock(captures_mutex());
  Capture* capture = find(stream);
  if (capture == nullptr) {
    return false;
  }
  TORCH_CHECK(
      capture->invalidated.empty(),
      "cannot launch ",
      work->op,
      " on a stream whose capture was invalidated: ",
      capture->invalidated,
      ". End the capture first.");
  SCAFFOLD_DRIVER_CHECK(drvLaunchHostFunc(stream, fn, work.get()));
  capture->closures.push_back(std::move(work));
  return true;
}

void refuse_during_capture(c10::DeviceIndex device, const std::string& what) {
  if (!capture_underway()) {
    return;
  }
  std::lock_guard<std::mutex> lock(captures_mutex());
  for (const auto& capture : captures()) {
    if ((device == -1 || capture->device == device) && capture->contains(current_driver_stream(capture->device))) {
      refuse(*capture, what);
    }
  }
}

void refuse_if_captured(drvStream_t stream, const std::string& what) {
  if (!capture_underway()) {
    return;
  }
  std::lock_guard<std::mutex> lock(captures_mutex());
  if (Capture* capture = find(stream); capture != nullptr) {
    refuse(*capture, what);
  }
}

void refuse_if_device_captured(c10::DeviceIndex device, const std::string& what) {
  if (!capture_underway()) {
    return;
  }
  std::lock_guard<std::mutex> lock(captures_mutex());
  for (const auto& capture : captures()) {
    if (capture->device == device) {
      refuse(*capture, what);
    }
  }
}

} // namespace scaffold::runtime
