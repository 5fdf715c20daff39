// Kineto's fmt-based metadata helpers are templates; libtorch keeps its fmt
// symbols hidden, so this file compiles its own (header-only) copy.
#define FMT_HEADER_ONLY

#include "profiler.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <c10/core/DeviceType.h>
#include <c10/util/ApproximateClock.h>
#include <c10/util/Exception.h>
#include <torch/csrc/profiler/stubs/base.h>

#include "device.h"
#include "scaffold_driver.h"
#include "stream.h"

// Kineto ships with every torch wheel of the supported range; a torch built
// without it gets the profiler stubs alone.
#if __has_include(<libkineto.h>)
#define SCAFFOLD_HAVE_KINETO 1
#include <IActivityProfiler.h>
#include <libkineto.h>
#include <output_base.h>
// The PrivateUse1 plugin registry (torch >= 2.12); it needs USE_KINETO,
// which torch's own build defines.
#if __has_include(<torch/csrc/profiler/standalone/privateuse1_profiler.h>)
#ifndef USE_KINETO
#define USE_KINETO
#endif
#include <torch/csrc/profiler/standalone/privateuse1_profiler.h>
#define SCAFFOLD_HAVE_PRIVATEUSE1_PROFILER_REGISTRY 1
#endif
#endif

namespace scaffold::runtime {
namespace detail {
std::atomic<bool> g_device_tracing{false};
} // namespace detail

namespace {

// ---- What the runtime enqueued while tracing -------------------------------
// One per DeviceActivityScope: the driver stamps the work with `id`, and the
// trace takes the kernel's name and the op that launched it from here.
struct Launch {
  uint64_t id = 0;
  const char* name = nullptr;
  const char* driver_call = nullptr;
  c10::DeviceIndex device = 0;
  uint64_t op_correlation = 0; // Kineto's id of the op running on the thread (0: none)
  int64_t host_start_ns = 0; // the enqueueing call, on the host clock
  int64_t host_end_ns = 0;
  int32_t thread = 0;
  // Run inline by the runtime (InlineKernelTiming), on this stream: no
  // driver record; host_start/end_ns are the kernel's own time.
  bool ran_inline = false;
  c10::StreamId stream = 0;
};

struct Launches {
  std::mutex mutex;
  std::vector<Launch> done;
};

Launches& launches() {
  static auto* all = new Launches(); // leaked: launches may run during exit
  return *all;
}

std::atomic<uint64_t> g_next_launch_id{1};
thread_local std::vector<Launch> t_open_launches;
// The correlation ids Kineto pushes for the ops running on this thread.
thread_local std::vector<uint64_t> t_op_correlation;

int64_t host_now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// ---- Driver capability -------------------------------------------------------

// drvActivityEnable's answer, asked once: 1 supported, 0 not, -1 unknown.
std::atomic<int> g_activity_supported{-1};

bool enable_driver_activity(bool enabled) {
  const drvError_t status = drvActivityEnable(enabled ? 1 : 0);
  if (enabled) {
    g_activity_supported.store(status == drvSuccess ? 1 : 0, std::memory_order_relaxed);
  }
  return status == drvSuccess;
}

bool driver_times_work() {
  return g_activity_supported.load(std::memory_order_relaxed) == 1;
}

// ---- A trace: from start() to stop() -------------------------------------------
// The driver's clock is its own; one (host, device) pair of readings at each
// end of the trace maps it onto the host clock Kineto uses.
struct ClockPair {
  int64_t host_ns = 0;
  uint64_t device_ns = 0;
};

ClockPair read_clocks() {
  ClockPair pair;
  uint64_t before = 0;
  uint64_t after = 0;
  (void)drvActivityGetTimestamp(&before);
  pair.host_ns = host_now_ns();
  (void)drvActivityGetTimestamp(&after);
  pair.device_ns = before + (after - before) / 2;
  return pair;
}

struct TraceData {
  std::vector<drvActivityRecord> records;
  std::vector<Launch> launches;
  uint64_t dropped = 0;
  ClockPair start;
  ClockPair stop;
  bool timed = false; // the driver timed the work

  int64_t to_host(uint64_t device_ns) const {
    const int64_t offset = ((start.host_ns - static_cast<int64_t>(start.device_ns)) +
                            (stop.host_ns - static_cast<int64_t>(stop.device_ns))) /
        2;
    return static_cast<int64_t>(device_ns) + offset;
  }
};

void keep_records(const drvActivityRecord* records, size_t count, void* user_data) {
  auto* data = static_cast<TraceData*>(user_data);
  data->records.insert(data->records.end(), records, records + count);
}

// Wait for the work the trace launched, so its records exist. A failure of
// launched work stays pending for the program's next synchronisation.
void settle_devices() {
  int previous = 0;
  if (drvGetDevice(&previous) != drvSuccess) {
    return;
  }
  for (c10::DeviceIndex device = 0; device < device_count(); ++device) {
    if (drvSetDevice(device) == drvSuccess) {
      (void)drvDeviceSynchronize();
    }
  }
  (void)drvSetDevice(previous);
}

std::mutex g_trace_mutex; // one trace at a time

void start_trace(TraceData& data) {
  std::lock_guard<std::mutex> lock(g_trace_mutex);
  data = TraceData();
  {
    std::lock_guard<std::mutex> launches_lock(launches().mutex);
    launches().done.clear();
  }
  data.timed = enable_driver_activity(true);
  if (!data.timed) {
    TORCH_WARN_ONCE(
        "The ",
        c10::get_privateuse1_backend(),
        " driver cannot time device work (drvActivityEnable: ",
        drvGetLastErrorMessage(),
        "): the profile shows host-side events only (ops and kernel launches, no device timeline).");
  }
  data.start = read_clocks();
  detail::g_device_tracing.store(true, std::memory_order_release);
}

void stop_trace(TraceData& data) {
  std::lock_guard<std::mutex> lock(g_trace_mutex);
  settle_devices();
  detail::g_device_tracing.store(false, std::memory_order_release);
  if (data.timed) {
    (void)enable_driver_activity(false);
    (void)drvActivityFlush(&keep_records, &data, &data.dropped);
    if (data.dropped > 0) {
      TORCH_WARN(
          "The ",
          c10::get_privateuse1_backend(),
          " driver lost ",
          data.dropped,
          " device activity records of this profile (its buffer was full): profile a shorter run");
    }
  }
  data.stop = read_clocks();
  std::lock_guard<std::mutex> launches_lock(launches().mutex);
  data.launches.swap(launches().done);
}

#ifdef SCAFFOLD_HAVE_KINETO
// ---- The Kineto plugin -------------------------------------------------------

const std::set<libkineto::ActivityType>& plugin_activity_types() {
  static const std::set<libkineto::ActivityType> types{
      libkineto::ActivityType::CONCURRENT_KERNEL,
      libkineto::ActivityType::GPU_MEMCPY,
      libkineto::ActivityType::GPU_MEMSET,
      libkineto::ActivityType::PRIVATEUSE1_RUNTIME,
  };
  return types;
}

const char* copy_name(drvMemcpyKind kind) {
  switch (kind) {
    case drvMemcpyHostToDevice: return "Memcpy HtoD";
    case drvMemcpyDeviceToHost: return "Memcpy DtoH";
    case drvMemcpyDeviceToDevice: return "Memcpy DtoD";
  }
  return "Memcpy";
}

// ResourceInfo (a named row of the trace) changed from a constructor taking
// (device, id, sort index, name) to an aggregate of (id, sort index, device,
// name) within the supported torch range.
libkineto::ResourceInfo stream_row(int64_t device, int64_t stream, const std::string& name) {
  using Info = libkineto::ResourceInfo;
  if constexpr (std::is_aggregate_v<Info>) {
    return Info{stream, stream, device, name};
  } else {
    return Info(device, stream, stream, name);
  }
}

// An inline kernel's name: its own, or its op's ("aten::mse_loss" ->
// "foo_kernel::mse_loss").
template <class OpOf>
std::string inline_kernel_name(const Launch& launch, OpOf& op_of, const std::string& device_name) {
  if (launch.name != nullptr) {
    return device_name + "_kernel::" + launch.name;
  }
  const libkineto::ITraceActivity* op = op_of(launch.op_correlation);
  std::string name = op != nullptr ? op->name() : "inline";
  if (const size_t colons = name.find("::"); colons != std::string::npos) {
    name = name.substr(colons + 2);
  }
  return device_name + "_kernel::" + name;
}

class DeviceActivitySession final : public libkineto::IActivityProfilerSession {
 public:
  void start() override {
    start_trace(data_);
    status_ = libkineto::TraceStatus::RECORDING;
  }

  void stop() override {
    stop_trace(data_);
    status_ = libkineto::TraceStatus::PROCESSING;
  }

  std::vector<std::string> errors() override {
    return {};
  }

  void processTrace(libkineto::ActivityLogger& logger) override {
    processTrace(logger, nullptr, 0, std::numeric_limits<int64_t>::max());
  }

  void processTrace(
      libkineto::ActivityLogger& logger,
      libkineto::getLinkedActivityCallback linked_op,
      int64_t window_start,
      int64_t window_end) override {
    buffer_ = std::make_unique<libkineto::CpuTraceBuffer>();
    buffer_->span = libkineto::TraceSpan(window_start, window_end, c10::get_privateuse1_backend());
    buffer_->gpuOpCount = -1;
    const std::string device_name = c10::get_privateuse1_backend();
    const int32_t pid = libkineto::processId();
    auto op_of = [&](uint64_t correlation) -> const libkineto::ITraceActivity* {
      return correlation != 0 && linked_op ? linked_op(static_cast<int32_t>(correlation)) : nullptr;
    };

    std::map<uint64_t, const Launch*> launch_by_id;
    for (const Launch& launch : data_.launches) {
      if (launch.ran_inline) {
        if (!data_.timed) {
          continue; // host-side events only: the driver times no device work
        }
        auto& work = add(libkineto::ActivityType::CONCURRENT_KERNEL, inline_kernel_name(launch, op_of, device_name));
        work.startTime = launch.host_start_ns;
        work.endTime = launch.host_end_ns;
        work.device = launch.device;
        work.resource = launch.stream;
        work.id = static_cast<int32_t>(launch.id);
        work.linked = op_of(launch.op_correlation);
        work.addMetadata("device", launch.device);
        work.addMetadata("stream", launch.stream);
        work.addMetadata("correlation", launch.id);
        work.addMetadataQuoted("inline", "run on the calling thread, timed by the runtime");
        work.log(logger);
        streams_seen_.emplace(launch.device, launch.stream);
        continue;
      }
      launch_by_id.emplace(launch.id, &launch);
      // The host side: the call that enqueued the work (cudaLaunchKernel's
      // place in a CUDA trace), where the flow arrow to the kernel starts.
      auto& call = add(libkineto::ActivityType::PRIVATEUSE1_RUNTIME, launch.driver_call);
      call.startTime = launch.host_start_ns;
      call.endTime = launch.host_end_ns;
      call.device = pid;
      call.resource = launch.thread;
      call.threadId = launch.thread;
      call.id = static_cast<int32_t>(launch.id);
      call.linked = op_of(launch.op_correlation);
      if (data_.timed) { // else there is no device end for the arrow
        call.flow.id = static_cast<uint32_t>(launch.id);
        call.flow.type = libkineto::kLinkAsyncCpuGpu;
        call.flow.start = 1;
      }
      call.addMetadata("correlation", launch.id);
      call.log(logger);
    }

    std::map<std::pair<int, drvStream_t>, int64_t> stream_ids;
    for (const drvActivityRecord& record : data_.records) {
      auto launch = launch_by_id.find(record.correlation_id);
      if (launch == launch_by_id.end()) {
        continue; // not enqueued by this trace's ops
      }
      const int64_t start = data_.to_host(record.start_ns);
      const int64_t end = data_.to_host(record.end_ns);
      if (end < window_start || start > window_end) {
        continue;
      }
      auto [row, inserted] = stream_ids.try_emplace({record.device, record.stream}, 0);
      if (inserted) {
        row->second = stream_id_of(static_cast<c10::DeviceIndex>(record.device), record.stream);
      }
      const Launch& origin = *launch->second;
      libkineto::ActivityType type = libkineto::ActivityType::CONCURRENT_KERNEL;
      std::string name;
      if (record.kind == drvActivityMemcpy) {
        type = libkineto::ActivityType::GPU_MEMCPY;
        name = copy_name(record.copy_kind);
      } else if (record.kind == drvActivityMemset) {
        type = libkineto::ActivityType::GPU_MEMSET;
        name = "Memset";
      } else {
        name = device_name + "_kernel::" + origin.name;
      }
      auto& work = add(type, name);
      work.startTime = start;
      work.endTime = end;
      work.device = record.device;
      work.resource = row->second;
      work.id = static_cast<int32_t>(origin.id);
      work.linked = op_of(origin.op_correlation);
      work.flow.id = static_cast<uint32_t>(origin.id);
      work.flow.type = libkineto::kLinkAsyncCpuGpu;
      work.flow.start = 0;
      work.addMetadata("device", record.device);
      work.addMetadata("stream", row->second);
      work.addMetadata("correlation", origin.id);
      if (record.kind != drvActivityKernel) {
        work.addMetadata("bytes", record.bytes);
      }
      work.log(logger);
      streams_seen_.emplace(record.device, row->second);
    }
  }

  std::unique_ptr<libkineto::DeviceInfo> getDeviceInfo() override {
    const std::string name = c10::get_privateuse1_backend();
    return std::unique_ptr<libkineto::DeviceInfo>(new libkineto::DeviceInfo{0, 0, name, name + " 0"});
  }

  std::vector<libkineto::ResourceInfo> getResourceInfos() override {
    std::vector<libkineto::ResourceInfo> rows;
    for (const auto& [device, stream] : streams_seen_) {
      rows.push_back(stream_row(device, stream, "stream " + std::to_string(stream)));
    }
    return rows;
  }

  std::unique_ptr<libkineto::CpuTraceBuffer> getTraceBuffer() override {
    return std::move(buffer_);
  }

  void pushCorrelationId(uint64_t id) override {
    t_op_correlation.push_back(id);
  }

  void popCorrelationId() override {
    if (!t_op_correlation.empty()) {
      t_op_correlation.pop_back();
    }
  }

 private:
  libkineto::GenericTraceActivity& add(libkineto::ActivityType type, const std::string& name) {
    buffer_->emplace_activity(buffer_->span, type, name);
    return *buffer_->activities.back();
  }

  TraceData data_;
  std::unique_ptr<libkineto::CpuTraceBuffer> buffer_;
  std::set<std::pair<int64_t, int64_t>> streams_seen_;
};

class DeviceActivityProfiler final : public libkineto::IActivityProfiler {
 public:
  const std::string& name() const override {
    return name_;
  }

  const std::set<libkineto::ActivityType>& availableActivities() const override {
    return plugin_activity_types();
  }

  std::unique_ptr<libkineto::IActivityProfilerSession> configure(
      const std::set<libkineto::ActivityType>& activity_types,
      const libkineto::Config& /*config*/) override {
    // A profile without the device (activities=[CPU]) must not pay for
    // device tracing.
    if (activity_types.count(libkineto::ActivityType::CONCURRENT_KERNEL) == 0) {
      return nullptr;
    }
    return std::make_unique<DeviceActivitySession>();
  }

  std::unique_ptr<libkineto::IActivityProfilerSession> configure(
      int64_t /*ts_ms*/,
      int64_t /*duration_ms*/,
      const std::set<libkineto::ActivityType>& activity_types,
      const libkineto::Config& config) override {
    return configure(activity_types, config);
  }

 private:
  std::string name_ = "scaffold_device_activity";
};

std::unique_ptr<libkineto::IActivityProfiler> make_plugin() {
  return std::make_unique<DeviceActivityProfiler>();
}

void register_plugin() {
#ifdef SCAFFOLD_HAVE_PRIVATEUSE1_PROFILER_REGISTRY
  torch::profiler::impl::PrivateUse1ProfilerRegistry::instance().registerFactory(&make_plugin);
#else
  libkineto::api().registerProfilerFactory(&make_plugin);
#endif
}
#else
void register_plugin() {}
#endif // SCAFFOLD_HAVE_KINETO

// ---- The profiler stubs --------------------------------------------------------
// Device events around each op (the legacy profiler, use_kineto=False): the
// op's device time is the time between them on its stream.
struct Stubs final : torch::profiler::impl::ProfilerStubs {
  void record(
      c10::DeviceIndex* device,
      torch::profiler::impl::ProfilerVoidEventStub* event,
      int64_t* cpu_ns) const override {
    const c10::DeviceIndex index = current_device();
    if (device != nullptr) {
      *device = index;
    }
    void* handle = nullptr;
    record_event(&handle, current_stream(index), index, c10::EventFlag::BACKEND_DEFAULT);
    *event = std::shared_ptr<void>(handle, [](void* e) { destroy_event(e); });
    if (cpu_ns != nullptr) {
      *cpu_ns = c10::getTime();
    }
  }

  float elapsed(
      const torch::profiler::impl::ProfilerVoidEventStub* start,
      const torch::profiler::impl::ProfilerVoidEventStub* end) const override {
    synchronize_event(start->get());
    synchronize_event(end->get());
    return static_cast<float>(event_elapsed_ms(start->get(), end->get(), current_device()) * 1000.0); // us
  }

  void mark(const char* /*name*/) const override {}
  void rangePush(const char* /*name*/) const override {}
  void rangePop() const override {}

  bool enabled() const override {
    return true;
  }

  void onEachDevice(std::function<void(int)> op) const override {
    const c10::DeviceIndex previous = current_device();
    for (c10::DeviceIndex device = 0; device < device_count(); ++device) {
      set_device(device);
      op(device);
    }
    set_device(previous);
  }

  void synchronize() const override {
    for (c10::DeviceIndex device = 0; device < device_count(); ++device) {
      synchronize_device(device);
    }
  }
};

} // namespace

namespace detail {

bool begin_device_activity(const char* name, c10::DeviceIndex device, const char* driver_call) noexcept {
  try {
    Launch launch;
    launch.id = g_next_launch_id.fetch_add(1, std::memory_order_relaxed);
    launch.name = name;
    launch.driver_call = driver_call;
    launch.device = device;
    launch.op_correlation = t_op_correlation.empty() ? 0 : t_op_correlation.back();
    launch.host_start_ns = host_now_ns();
#ifdef SCAFFOLD_HAVE_KINETO
    launch.thread = libkineto::systemThreadId();
#endif
    if (driver_times_work() && drvActivityPushCorrelationId(launch.id) != drvSuccess) {
      return false;
    }
    t_open_launches.push_back(launch);
    return true;
  } catch (...) {
    return false; // a profile misses a launch rather than failing it
  }
}

void end_device_activity() noexcept {
  if (driver_times_work()) {
    (void)drvActivityPopCorrelationId();
  }
  Launch launch = t_open_launches.back();
  t_open_launches.pop_back();
  launch.host_end_ns = host_now_ns();
  try {
    std::lock_guard<std::mutex> lock(launches().mutex);
    launches().done.push_back(launch);
  } catch (...) {
  }
}

int64_t begin_inline_kernel(c10::DeviceIndex device) {
  wait_for_current_stream(device);
  return host_now_ns();
}

void end_inline_kernel(const char* name, c10::DeviceIndex device, int64_t start_ns) noexcept {
  try {
    Launch launch;
    launch.id = g_next_launch_id.fetch_add(1, std::memory_order_relaxed);
    launch.name = name;
    launch.device = device;
    launch.op_correlation = t_op_correlation.empty() ? 0 : t_op_correlation.back();
    launch.host_start_ns = start_ns;
    launch.host_end_ns = host_now_ns();
    launch.ran_inline = true;
    launch.stream = current_stream(device).id();
    std::lock_guard<std::mutex> lock(launches().mutex);
    launches().done.push_back(launch);
  } catch (...) {
  }
}

} // namespace detail

bool device_activity_supported() {
  std::lock_guard<std::mutex> lock(g_trace_mutex);
  if (g_activity_supported.load(std::memory_order_relaxed) < 0) {
    // Asked by turning recording off: no trace runs (the lock).
    const drvError_t status = drvActivityEnable(0);
    g_activity_supported.store(status == drvSuccess ? 1 : 0, std::memory_order_relaxed);
  }
  return driver_times_work();
}

void register_profiler() {
  static Stubs stubs;
  torch::profiler::impl::registerPrivateUse1Methods(&stubs);
  register_plugin();
}

} // namespace scaffold::runtime
