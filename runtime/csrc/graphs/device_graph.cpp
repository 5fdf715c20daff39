#include "device_graph.h"

#include <string>
#include <vector>

#include <c10/core/DeviceType.h>
#include <c10/util/Exception.h>

#if __has_include(<ATen/core/GraphImplInterface.h>)
#include <ATen/core/GraphImplInterface.h>
#define SCAFFOLD_HAS_GRAPH_IMPL 1
#else
#define SCAFFOLD_HAS_GRAPH_IMPL 0
#endif

#include "allocator.h"
#include "blocking_wait.h"
#include "capture.h"
#include "device.h"
#include "generator.h"
#include "launch.h"
#include "status.h"
#include "stream.h"

namespace scaffold::runtime {

#if SCAFFOLD_HAS_GRAPH_IMPL
namespace {

class DeviceGraph final : public at::GraphImplInterface {
 public:
  explicit DeviceGraph(const at::GraphImplArgs& args) : keep_graph_(args.keep_graph) {}

  ~DeviceGraph() override {
    try {
      reset();
    } catch (...) { // a destructor: the driver's error has nowhere to go
    }
  }

  DeviceGraph(const DeviceGraph&) = delete;
  DeviceGraph& operator=(const DeviceGraph&) = delete;

  // Every capture mode is accepted and behaves alike: whatever the mode, a
  // synchronisation with the captured stream (or the device) raises, and
  // work launched on the stream by any thread -- the autograd engine's
  // included -- is captured.
  void capture_begin(at::MempoolId_t pool, at::GraphCaptureMode /*capture_mode*/) override {
    TORCH_CHECK(!capturing_, "capture_begin(): this graph is already capturing");
    TORCH_CHECK(
        !captured_, "capture_begin(): this graph holds a capture already; call reset() before capturing again");
    device_ = current_device();
    stream_ = current_driver_stream(device_);
    pool_ = pool.first == 0 && pool.second == 0 ? new_pool_id(/*handle=*/false) : pool;
    begin_allocate_to_pool(device_, pool_, stream_);
    try {
      begin_stream_capture(device_, stream_);
    } catch (...) {
      end_allocate_to_pool(device_, stream_);
      release_pool(device_, pool_);
      throw;
    }
    capturing_ = true;
  }

  void capture_end() override {
    TORCH_CHECK(capturing_, "capture_end(): the graph is not capturing (call capture_begin() first)");
    capturing_ = false;
    end_allocate_to_pool(device_, stream_);
    CapturedWork captured;
    try {
      captured = end_stream_capture(stream_);
    } catch (...) {
      release_pool(device_, pool_);
      throw;
    }
    graph_ = captured.graph;
    closures_ = std::move(captured.closures);
    random_seeds_ = std::move(captured.random_seeds);
    captured_ = true;
    if (!keep_graph_) {
      instantiate();
      if (!debug_) { // the executable graph is all a replay needs
        SCAFFOLD_DRIVER_CHECK(drvGraphDestroy(graph_));
        graph_ = nullptr;
      }
    }
  }

  void instantiate() override {
    TORCH_CHECK(captured_, "instantiate(): the graph has no capture");
    TORCH_CHECK(
        graph_ != nullptr,
        "instantiate(): the captured graph was released when capture_end() instantiated it; capture with "
        "keep_graph=True to instantiate it yourself");
    destroy_exec();
    SCAFFOLD_DRIVER_CHECK(drvGraphInstantiate(&exec_, graph_));
  }

  // On the calling thread's current stream of the device the graph was
  // captured on, as CUDA graphs replay on the current stream.
  void replay() override {
    TORCH_CHECK(!capturing_, "replay(): the graph is still capturing (call capture_end() first)");
    TORCH_CHECK(captured_, "replay(): the graph has no capture; capture one first");
    if (exec_ == nullptr) {
      instantiate(); // keep_graph=True, not instantiated yet
    }
    drvStream_t stream = current_driver_stream(device_);
    for (const std::shared_ptr<ReplaySeed>& seed : random_seeds_) {
      // Drawn now, in the order of the host's draws; set in stream order,
      // after the previous replay's kernels have read theirs.
      launch(device_, "graph replay seed", [seed, value = draw_replay_seed(seed->source)] { seed->value = value; });
    }
    SCAFFOLD_DRIVER_CHECK(drvGraphLaunch(exec_, stream));
    // The closures the replay runs are this object's: reset() waits for
    // every stream it was replayed on.
    drvEvent_t& done = replayed_on(stream);
    SCAFFOLD_DRIVER_CHECK(drvEventRecord(done, stream));
  }

  void reset() override {
    if (capturing_) {
      capturing_ = false;
      end_allocate_to_pool(device_, stream_);
      try {
        CapturedWork abandoned = end_stream_capture(stream_);
        if (abandoned.graph != nullptr) {
          (void)drvGraphDestroy(abandoned.graph);
        }
      } catch (const c10::Error&) { // an invalidated capture: nothing to keep either way
      }
      release_pool(device_, pool_);
    }
    destroy_exec();
    for (auto& [stream, event] : replays_) {
      (void)drvEventDestroy(event);
    }
    replays_.clear();
    if (graph_ != nullptr) {
      (void)drvGraphDestroy(graph_);
      graph_ = nullptr;
    }
    closures_.clear(); // frees what the captured work held: the pool's tensors
    random_seeds_.clear();
    if (captured_) {
      captured_ = false;
      release_pool(device_, pool_);
    }
  }

  at::MempoolId_t pool() const override {
    TORCH_CHECK(captured_ || capturing_, "pool(): the graph has no capture, so no memory pool yet");
    return pool_;
  }

  // Keeps the captured graph after instantiation, for debug_dump.
  void enable_debug_mode() override {
    debug_ = true;
  }

  void debug_dump(const std::string& path) override {
    TORCH_CHECK(
        graph_ != nullptr,
        "debug_dump(): no captured graph is kept; call enable_debug_mode() before capturing (or capture with "
        "keep_graph=True)");
    SCAFFOLD_DRIVER_CHECK(drvGraphDebugDotPrint(graph_, path.c_str()));
  }

 private:
  drvEvent_t& replayed_on(drvStream_t stream) {
    for (auto& [replayed, event] : replays_) {
      if (replayed == stream) {
        return event;
      }
    }
    drvEvent_t event = nullptr;
    SCAFFOLD_DRIVER_CHECK(drvEventCreate(&event, DRV_EVENT_DISABLE_TIMING));
    return replays_.emplace_back(stream, event).second;
  }

  // Waits for the replays still queued (they run this object's closures),
  // then destroys the executable graph.
  void destroy_exec() {
    if (!replays_.empty()) {
      const BlockingWait blocking;
      for (auto& [stream, event] : replays_) {
        (void)drvEventSynchronize(event);
      }
    }
    if (exec_ != nullptr) {
      (void)drvGraphExecDestroy(exec_);
      exec_ = nullptr;
    }
  }

  bool keep_graph_ = false;
  bool debug_ = false;
  bool capturing_ = false;
  bool captured_ = false; // a successful capture is held (until reset)
  c10::DeviceIndex device_ = 0;
  drvStream_t stream_ = nullptr; // the captured stream
  at::MempoolId_t pool_{0, 0};
  drvGraph_t graph_ = nullptr;
  drvGraphExec_t exec_ = nullptr;
  std::vector<std::unique_ptr<LaunchedWork>> closures_;
  std::vector<std::shared_ptr<ReplaySeed>> random_seeds_;
  std::vector<std::pair<drvStream_t, drvEvent_t>> replays_;
};

} // namespace

bool register_graph_impl() {
  const std::string key = c10::DeviceTypeName(c10::DeviceType::PrivateUse1, /*lower_case=*/false);
  if (!at::GraphImplRegistry()->Has(key)) {
    at::GraphImplRegistry()->Register(
        key, [](at::GraphImplArgs args) -> std::unique_ptr<at::GraphImplInterface> {
          return std::make_unique<DeviceGraph>(args);
        });
  }
  return true;
}
#else
bool register_graph_impl() {
  return false;
}
#endif

std::pair<unsigned long long, unsigned long long> graph_pool_handle() {
  return new_pool_id(/*handle=*/true);
}

bool is_current_stream_capturing(c10::DeviceIndex device) {
  return current_stream_capturing(device);
}

} // namespace scaffold::runtime
