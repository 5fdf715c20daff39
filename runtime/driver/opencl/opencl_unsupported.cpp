// The OpenCL driver: the optional parts of the API it does not offer.
//
// Graphs: OpenCL 1.2 has no command recording (cl_khr_command_buffer is a
// later, optional extension), so torch's graph APIs raise. Activity tracing:
// the markers' profiling times could time copies, but the runtime's kernels
// are host functions, which OpenCL does not time; a profile shows host-side
// events only. The testing hooks belong to the simulator.
#include "opencl_driver.h"

using scaffold::opencl::fail;

namespace {

drvError_t no_graphs() {
  return fail(drvErrorNotSupported, "the OpenCL driver has no graphs (stream capture)");
}

drvError_t no_activity() {
  return fail(drvErrorNotSupported, "the OpenCL driver does not time device work");
}

} // namespace

extern "C" {

drvError_t drvStreamBeginCapture(drvStream_t) {
  return no_graphs();
}

drvError_t drvStreamEndCapture(drvStream_t, drvGraph_t* graph) {
  if (graph != nullptr) {
    *graph = nullptr;
  }
  return no_graphs();
}

drvError_t drvStreamGetCaptureStatus(drvStream_t, drvStreamCaptureStatus* status) {
  if (status == nullptr) {
    return fail(drvErrorInvalidValue, "drvStreamGetCaptureStatus: null output");
  }
  *status = drvStreamCaptureStatusNone; // no stream is ever captured
  return drvSuccess;
}

drvError_t drvGraphGetNodeCount(drvGraph_t, size_t*) {
  return no_graphs();
}

drvError_t drvGraphDebugDotPrint(drvGraph_t, const char*) {
  return no_graphs();
}

drvError_t drvGraphDestroy(drvGraph_t) {
  return no_graphs();
}

drvError_t drvGraphInstantiate(drvGraphExec_t* exec, drvGraph_t) {
  if (exec != nullptr) {
    *exec = nullptr;
  }
  return no_graphs();
}

drvError_t drvGraphLaunch(drvGraphExec_t, drvStream_t) {
  return no_graphs();
}

drvError_t drvGraphExecDestroy(drvGraphExec_t) {
  return no_graphs();
}

drvError_t drvActivityEnable(int) {
  return no_activity();
}

drvError_t drvActivityGetTimestamp(uint64_t*) {
  return no_activity();
}

drvError_t drvActivityPushCorrelationId(uint64_t) {
  return no_activity();
}

drvError_t drvActivityPopCorrelationId(void) {
  return no_activity();
}

drvError_t drvActivityFlush(drvActivityConsumer, void*, uint64_t*) {
  return no_activity();
}

drvError_t drvTestingPauseStream(drvStream_t, int) {
  return fail(drvErrorNotSupported, "the OpenCL driver cannot pause a stream (a testing hook of the simulator)");
}

drvError_t drvTestingDeviceBusyTime(int, uint64_t*) {
  return fail(drvErrorNotSupported, "the OpenCL driver does not time device work");
}

} // extern "C"
