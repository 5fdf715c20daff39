// Device graphs: torch.accelerator.Graph (and torch.<device>.graph, the
// <Device>Graph class, make_graphed_callables) on this device -- a stream's
// work captured once and replayed without the host, as CUDA graphs do.
//
// DeviceGraph is the at::GraphImplInterface PyTorch dispatches
// torch.accelerator.Graph to: capture_begin starts the driver's stream
// capture of the current stream (streams/capture.h) and routes what is
// allocated on it to the graph's private memory pool (memory/allocator.h);
// capture_end takes the driver's graph and the launched closures it runs;
// replay enqueues them all on the current stream with one driver call (after
// one launch per generator its random kernels use: their replay seed).
#pragma once

#include <utility>

#include <c10/core/Device.h>

namespace scaffold::runtime {

// Registers DeviceGraph for PrivateUse1 under the device's current name
// (PyTorch looks implementations up by c10::DeviceTypeName, which follows
// the rename): call after rename_privateuse1_backend. False when this torch
// has no GraphImplInterface (before 2.14): torch.accelerator.Graph is then
// not available on the device.
bool register_graph_impl();

// A new pool id for graphs to share (torch.<device>.graph_pool_handle()).
std::pair<unsigned long long, unsigned long long> graph_pool_handle();

// True when the calling thread's current stream on `device` is being
// captured (torch.<device>.is_current_stream_capturing()).
bool is_current_stream_capturing(c10::DeviceIndex device);

} // namespace scaffold::runtime
