/*
 * The driver seam: everything the PyTorch side (runtime/csrc) asks of the
 * device, as a small C API in the style of CUDA's runtime API.
 *
 * A hardware team implements these functions with their SDK and keeps the
 * rest of runtime/ as it is. This directory ships the *simulated* driver
 * (simulated_*.cpp): device memory in host RAM, protected against accidental
 * host access, and one worker thread per stream running its work in order.
 * PORTING.md, beside CMakeLists.txt (a project's root; runtime/ in
 * scaffold-backend), is the porting guide: the bring-up order, a test for
 * each step, and what each function must guarantee.
 *
 * Rules for every function:
 *   - Plain C types only; no exceptions cross this boundary. Every function
 *     returns a drvError_t; drvGetLastErrorMessage() gives the calling
 *     thread's detail text for its last failure.
 *   - Thread-safe. The current device is per thread.
 *   - A null drvStream_t means the current device's default stream.
 *   - Work on one stream runs in the order it was enqueued; work on
 *     different streams is unordered unless joined by an event
 *     (drvStreamWaitEvent).
 */
#ifndef SCAFFOLD_DRIVER_H
#define SCAFFOLD_DRIVER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum drvError {
  drvSuccess = 0,
  drvErrorInvalidValue = 1, /* a bad argument (null pointer, size, ...) */
  drvErrorInvalidDevice = 2, /* device index out of range */
  drvErrorMemoryAllocation = 3, /* out of device (or pinned host) memory */
  drvErrorInvalidHandle = 4, /* unknown stream / event / pointer */
  drvErrorNotReady = 5, /* query: work still pending (not a failure) */
  drvErrorOsCall = 6, /* an operating-system call failed (message says which) */
  drvErrorForkedProcess = 7, /* device used in a child forked after first use */
  drvErrorNotSupported = 8, /* this driver does not offer the feature */
  drvErrorConfiguration = 9, /* malformed environment configuration */
  /* Not permitted on a stream being captured (a host synchronisation, a copy
     to or from host memory, a wait on an event recorded outside the
     capture): the capture is invalidated. */
  drvErrorStreamCaptureUnsupported = 10,
  /* The capture was invalidated by an earlier error; end it and start over. */
  drvErrorStreamCaptureInvalidated = 11,
  /* drvStreamEndCapture: a stream that joined the capture captured work the
     capturing stream did not wait for (cudaErrorStreamCaptureUnjoined). */
  drvErrorStreamCaptureUnjoined = 12,
} drvError_t;

typedef struct drvStream_st* drvStream_t;
typedef struct drvEvent_st* drvEvent_t;
typedef struct drvGraph_st* drvGraph_t; /* captured work (cudaGraph_t) */
typedef struct drvGraphExec_st* drvGraphExec_t; /* instantiated, replayable (cudaGraphExec_t) */

typedef enum drvMemcpyKind {
  drvMemcpyHostToDevice = 0,
  drvMemcpyDeviceToHost = 1,
  drvMemcpyDeviceToDevice = 2,
} drvMemcpyKind;

typedef struct drvDeviceProperties {
  char name[64];
  size_t total_memory; /* bytes one device can hold */
  int capability_major;
  int capability_minor;
  int multiprocessor_count; /* threads a kernel computes with, as many SMs run a CUDA kernel */
} drvDeviceProperties;

/* What a device can do (drvDeviceGetAttribute). */
typedef enum drvDeviceAttribute {
  /* 1 when host code may read and write device memory at any time through
   * drvHostPointer's address (device memory in host RAM: the simulator's
   * default); 0 when the host reaches device memory only through the copy,
   * memset and fill functions, and only launched work touches it (a GPU, an
   * NPU, OpenCL; the simulator with SCAFFOLD_DEVICE_MEMORY=discrete). The
   * PyTorch side then stages host computation through copies. */
  drvDevAttrHostAddressableMemory = 0,
} drvDeviceAttribute;

/* Event flags (drvEventCreate). */
#define DRV_EVENT_DEFAULT 0u
#define DRV_EVENT_DISABLE_TIMING 1u

/* ---- Errors ------------------------------------------------------------- */
const char* drvGetErrorName(drvError_t error);
/* Detail of the calling thread's last failed call ("" if none). */
const char* drvGetLastErrorMessage(void);

/* ---- Devices ------------------------------------------------------------ */
drvError_t drvGetDeviceCount(int* count);
drvError_t drvGetDevice(int* device);
drvError_t drvSetDevice(int device);
drvError_t drvGetDeviceProperties(drvDeviceProperties* props, int device);
/* *value: the attribute's value for `device` (drvDeviceAttribute says what
 * each means). Constant for the life of the process. */
drvError_t drvDeviceGetAttribute(int* value, drvDeviceAttribute attribute, int device);
/* Waits for all work on every stream of the current device. */
drvError_t drvDeviceSynchronize(void);
/* 1 when every stream runs synchronously (SCAFFOLD_LAUNCH_BLOCKING=1): work
   enqueued on a stream, drvLaunchHostFunc's included, has run when the call
   returns (except on a stream being captured: see Graphs). The runtime
   relies on it (launch.h keeps such work on its stack). */
drvError_t drvGetLaunchBlocking(int* blocking);

/* ---- Device memory ------------------------------------------------------ */
/* Allocates on the current device. Device memory is not host-addressable:
 * only the functions below (and drvHostPointer) reach it. */
drvError_t drvMalloc(void** device_ptr, size_t size);
drvError_t drvFree(void* device_ptr);
/* Device holding `ptr` (anywhere inside an allocation). */
drvError_t drvPointerGetDevice(int* device, const void* ptr);
/* Host-accessible address of device memory, for a device whose kernels run
 * on the host (the simulator). Lock-free; drvErrorInvalidHandle for memory
 * that is not device memory. Where device memory is not host-addressable
 * (drvDevAttrHostAddressableMemory 0), only launched work may call it (the
 * simulator's kernels are its device code) and host code gets
 * drvErrorNotSupported; a real device returns drvErrorNotSupported always. */
drvError_t drvHostPointer(void** host_ptr, const void* device_ptr);
/* 1 when device memory faults on direct host access (the default; turned
 * off with SCAFFOLD_PROTECT_MEMORY=0 to measure its cost). */
drvError_t drvMemoryProtectionEnabled(int* enabled);
/* 1 in a child forked after this process used device memory. */
drvError_t drvInForkedChild(int* forked);

/* ---- Pinned (page-locked) host memory ----------------------------------- */
drvError_t drvHostAlloc(void** host_ptr, size_t size);
drvError_t drvHostFree(void* host_ptr);

/* ---- Copies and memset --------------------------------------------------- */
/* Synchronous: waits for the current device's default stream first, like
 * cudaMemcpy, and returns when the copy is complete. */
drvError_t drvMemcpy(void* dst, const void* src, size_t size, drvMemcpyKind kind);
/* Enqueued on `stream`; host memory must stay valid until it completes. */
drvError_t drvMemcpyAsync(
    void* dst,
    const void* src,
    size_t size,
    drvMemcpyKind kind,
    drvStream_t stream);
drvError_t drvMemset(void* device_ptr, int value, size_t size);
drvError_t drvMemsetAsync(void* device_ptr, int value, size_t size, drvStream_t stream);
/* Enqueued on `stream`: fills [device_ptr, device_ptr + size) with copies of
 * the `pattern_size` bytes at `pattern` (1, 2, 4, 8 or 16; `size` a multiple
 * of it, `device_ptr` aligned to it): how a tensor is filled with a value
 * without the host touching it (OpenCL's clEnqueueFillBuffer, CUDA's
 * cuMemsetD8/D16/D32Async). The pattern is copied before the call returns.
 * Captured into graphs as memsets are. */
drvError_t drvMemFillAsync(
    void* device_ptr,
    const void* pattern,
    size_t pattern_size,
    size_t size,
    drvStream_t stream);

/* ---- Kernels -------------------------------------------------------------- */
/* Enqueues fn(user_data) on `stream`: the launch of a kernel that the host
 * runs (the simulator's kernels are host functions). */
drvError_t drvLaunchHostFunc(drvStream_t stream, void (*fn)(void*), void* user_data);
/* Called by a kernel while it runs on a stream: it computes with at most
 * `threads` of the device's compute threads until it returns, as a GPU
 * kernel launched on a small grid. The simulator's small kernels run faster
 * on one thread than split across two (oneDNN's small 1x1 convolutions:
 * 35 against 150 us). Called anywhere else (a kernel run inline, on the
 * calling thread) it changes nothing. */
drvError_t drvLimitKernelThreads(int threads);

/* ---- Streams -------------------------------------------------------------- */
/* Lower numbers are higher priority, as in CUDA: greatest <= least. */
drvError_t drvDeviceGetStreamPriorityRange(int* least, int* greatest);
/* A new stream on the current device. */
drvError_t drvStreamCreate(drvStream_t* stream, int priority);
/* Waits for the stream's work, then releases it. */
drvError_t drvStreamDestroy(drvStream_t stream);
/* The default stream of `device` (never destroyed). */
drvError_t drvStreamGetDefault(drvStream_t* stream, int device);
/* drvSuccess when all enqueued work is done, drvErrorNotReady otherwise. */
drvError_t drvStreamQuery(drvStream_t stream);
drvError_t drvStreamSynchronize(drvStream_t stream);
drvError_t drvStreamGetPriority(drvStream_t stream, int* priority);
drvError_t drvStreamGetDevice(drvStream_t stream, int* device);
/* Work enqueued on `stream` after this call starts once `event`'s last
 * record (as of this call) has completed. */
drvError_t drvStreamWaitEvent(drvStream_t stream, drvEvent_t event);

/* ---- Events ---------------------------------------------------------------- */
drvError_t drvEventCreate(drvEvent_t* event, unsigned flags);
drvError_t drvEventDestroy(drvEvent_t event);
/* Completes when all work enqueued on `stream` before it has completed. */
drvError_t drvEventRecord(drvEvent_t event, drvStream_t stream);
/* drvSuccess when the last record completed (or never recorded). */
drvError_t drvEventQuery(drvEvent_t event);
drvError_t drvEventSynchronize(drvEvent_t event);
/* Milliseconds between two completed records of timing events. */
drvError_t drvEventElapsedTime(float* ms, drvEvent_t start, drvEvent_t end);

/* ---- Graphs (optional: device graphs, torch.accelerator.Graph) ---------------
 * Stream capture, as CUDA's: between drvStreamBeginCapture and
 * drvStreamEndCapture, work enqueued on the stream (drvLaunchHostFunc,
 * drvMemcpyAsync between device addresses, drvMemsetAsync) is recorded in
 * order into a graph instead of running, by whichever thread enqueues it.
 * A recorded host function's user data must stay valid until every graph
 * and executable graph holding it is destroyed and their replays have run:
 * the caller owns it.
 * Events join streams into a capture, as CUDA's fork and join: an event
 * recorded on a capturing stream marks a point of the capture (it runs
 * nothing); a stream of the same device that waits on it joins the capture
 * (what it enqueues afterwards is captured, ordered after that point) until
 * the capture ends; a capturing stream that waits on an event recorded on a
 * joined stream is ordered after that stream's work. drvStreamEndCapture,
 * called on the stream that began the capture, fails with
 * drvErrorStreamCaptureUnjoined unless that stream waited for all the work
 * the joined streams captured.
 * On a capturing stream (begun or joined), drvStreamSynchronize,
 * drvStreamQuery, a wait on an event recorded outside the capture and
 * copies to or from host memory fail with drvErrorStreamCaptureUnsupported
 * and invalidate the capture, as do drvDeviceSynchronize on a device with a
 * capturing stream and drvEventQuery, drvEventSynchronize and
 * drvEventElapsedTime on an event recorded in a capture; the stream itself
 * stays usable, and drvStreamEndCapture then reports
 * drvErrorStreamCaptureInvalidated. drvGraphLaunch enqueues all of an
 * executable graph's work on a stream with one call. A driver without
 * graphs returns drvErrorNotSupported from drvStreamBeginCapture (and may
 * from all of these): torch's graph APIs then raise. */
typedef enum drvStreamCaptureStatus {
  drvStreamCaptureStatusNone = 0,
  drvStreamCaptureStatusActive = 1,
  drvStreamCaptureStatusInvalidated = 2, /* an error invalidated it; end it */
} drvStreamCaptureStatus;

drvError_t drvStreamBeginCapture(drvStream_t stream);
/* Ends the capture begun on `stream` (it and the streams that joined it run
 * their work again) and hands over the graph; *graph is null and
 * drvErrorStreamCaptureInvalidated (or ...Unjoined) returned when the
 * capture was invalidated (or left joined work unjoined). */
drvError_t drvStreamEndCapture(drvStream_t stream, drvGraph_t* graph);
drvError_t drvStreamGetCaptureStatus(drvStream_t stream, drvStreamCaptureStatus* status);
/* How many pieces of work the graph holds. */
drvError_t drvGraphGetNodeCount(drvGraph_t graph, size_t* count);
/* Writes a description of the graph (Graphviz dot) to `path`. */
drvError_t drvGraphDebugDotPrint(drvGraph_t graph, const char* path);
drvError_t drvGraphDestroy(drvGraph_t graph);
/* An executable graph of `graph`'s work; independent of `graph` afterwards. */
drvError_t drvGraphInstantiate(drvGraphExec_t* exec, drvGraph_t graph);
/* Enqueues the graph's work on `stream` (a stream of the graph's device),
 * after the work enqueued there before; may return before it runs. */
drvError_t drvGraphLaunch(drvGraphExec_t exec, drvStream_t stream);
/* Safe with replays pending: they still run. */
drvError_t drvGraphExecDestroy(drvGraphExec_t exec);

/* ---- Activity tracing (optional: what a profiler needs) -------------------- */
/* While enabled, the driver times every piece of work that runs on a stream
 * (kernels launched with drvLaunchHostFunc, async copies and memsets) on its
 * own clock and keeps one record per piece, as CUPTI's activity API does. A
 * driver that cannot time work returns drvErrorNotSupported from
 * drvActivityEnable (and may from all of these): the profiler then shows
 * host-side events only, and says so. */
typedef enum drvActivityKind {
  drvActivityKernel = 0, /* drvLaunchHostFunc */
  drvActivityMemcpy = 1, /* drvMemcpyAsync / drvMemcpy */
  drvActivityMemset = 2, /* drvMemsetAsync / drvMemset */
} drvActivityKind;

typedef struct drvActivityRecord {
  drvActivityKind kind;
  int device;
  drvStream_t stream; /* the stream it ran on (possibly destroyed since) */
  /* The enqueuing thread's innermost pushed correlation id when the work was
     enqueued (drvActivityPushCorrelationId), 0 if none. */
  uint64_t correlation_id;
  uint64_t start_ns; /* drvActivityGetTimestamp's clock: when the work began */
  uint64_t end_ns; /* ... and when it completed */
  size_t bytes; /* memcpy, memset */
  drvMemcpyKind copy_kind; /* memcpy */
} drvActivityRecord;

typedef void (*drvActivityConsumer)(const drvActivityRecord* records, size_t count, void* user_data);

/* Starts (1) or stops (0) recording, for every device. Work enqueued while
 * enabled is recorded when it runs, even if that is after the stop. */
drvError_t drvActivityEnable(int enabled);
/* Now, on the clock of the records' timestamps (monotonic, nanoseconds). */
drvError_t drvActivityGetTimestamp(uint64_t* ns);
/* A per-thread stack of correlation ids: work enqueued by this thread is
 * stamped with its top (CUPTI's external correlation ids). */
drvError_t drvActivityPushCorrelationId(uint64_t id);
drvError_t drvActivityPopCorrelationId(void);
/* Hands every completed record kept so far to `consume` (in one or more
 * calls, on the calling thread) and forgets them. `dropped` (may be null)
 * receives how many records were lost since the last flush because the
 * driver's buffer was full. */
drvError_t drvActivityFlush(drvActivityConsumer consume, void* user_data, uint64_t* dropped);

/* ---- Testing hooks (not part of the porting surface) ----------------------- */
/* While paused, a stream accepts work but runs none of it: tests use this to
 * observe that work is really asynchronous without relying on timing.
 * drvErrorNotSupported in launch-blocking mode. */
drvError_t drvTestingPauseStream(drvStream_t stream, int paused);
/* The time `device`'s streams spent running work enqueued while activity
 * recording was on (kernels, copies, memsets; not waiting for events),
 * counted by the stream workers as they run it: what the device time of a
 * profile must add up to. drvErrorNotSupported where the driver cannot
 * tell. */
drvError_t drvTestingDeviceBusyTime(int device, uint64_t* ns);

/* ---- Native handles (optional: kernels that launch device code) ------------
 * The SDK's own objects behind the driver's, for a kernel file that enqueues
 * its device code itself (an OpenCL kernel, a CUDA kernel) instead of a host
 * function. Work enqueued on a stream's native queue is ordered with the
 * stream's other work. The handles stay owned by the driver: valid while the
 * stream, device or allocation is, and never released by the caller. A
 * driver whose kernels are host functions (the simulator) returns
 * drvErrorNotSupported. */
/* *native: the stream's queue (a cl_command_queue; CUDA: its cudaStream_t).
 * A null stream is the current device's default, as everywhere. */
drvError_t drvStreamGetNativeHandle(drvStream_t stream, void** native);
/* *context: the context `device` belongs to (a cl_context, which may hold
 * the platform's other devices too); *native_device: the device itself (a
 * cl_device_id). */
drvError_t drvDeviceGetNativeHandle(int device, void** context, void** native_device);
/* The memory object holding `device_ptr` (anywhere inside an allocation) and
 * the pointer's byte offset in it: a cl_mem, as kernel arguments take it
 * (CUDA: the CUdeviceptr itself and 0). */
drvError_t drvPointerGetNativeHandle(const void* device_ptr, void** native_memory, size_t* offset);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SCAFFOLD_DRIVER_H */
