// The runtime's C ABI for the wrappers Inductor compiles to C++ for the
// device (cpp_wrapper=True): how their kernels reach device memory.
//
// A compiled wrapper is a shared object built against libtorch alone, so it
// cannot link to this runtime (a Python extension module, loaded with its
// symbols hidden). It asks the dispatcher once, through the AOTI C shim, for
// this table -- torch.ops.scaffold_runtime.compiled_wrapper_abi(version),
// the table's address as an integer -- and calls the runtime through it:
//
//   launch_kernel  what the Python wrapper's _compiled_kernels.launch does:
//                  enqueues a compiled kernel (an `extern "C"` entry point of
//                  pointers and 64-bit integers) on the current stream, its
//                  tensors translated to the host view (compiled_kernel_launch.h);
//   host_address   the host-view address of a tensor's data, once the
//                  stream's earlier work is done, for a kernel called inline;
//   host_view      a new CPU tensor aliasing a device tensor's memory, once
//                  the stream's earlier work is done (host_view op), for the
//                  C shim's CPU kernels;
//   to_device      a device copy of a host tensor's whole storage, with its
//                  sizes, strides and offset: an AOTInductor model's
//                  constants, which torch's AOTInductor runtime loads on the
//                  host (aot_inductor/model_runner.h).
//
// Each returns nullptr, or the error's message (valid until the calling
// thread's next call). The declaration the wrapper compiles is written by
// python/<package>/_cpp_wrapper.py: a change here bumps the version there
// too. A port to hardware whose memory the host cannot address keeps
// launch_kernel (its kernels' own launch) and drops the two host functions.
#pragma once

#include <stdint.h>

struct AtenTensorOpaque;

#define SCAFFOLD_COMPILED_WRAPPER_ABI_VERSION 2

struct ScaffoldCompiledWrapperAbi {
  uint64_t version;
  uint64_t size; // sizeof(ScaffoldCompiledWrapperAbi): a check that both sides agree
  const char* (*launch_kernel)(
      const char* name,
      void* entry,
      const char* argument_kinds, // 't': the next of tensors, 'i': the next of integers
      AtenTensorOpaque* const* tensors,
      int64_t tensor_count,
      const int64_t* integers,
      int64_t integer_count);
  const char* (*host_address)(AtenTensorOpaque* tensor, void** address);
  const char* (*host_view)(AtenTensorOpaque* tensor, AtenTensorOpaque** view);
  const char* (*to_device)(AtenTensorOpaque* host, int32_t device_index, AtenTensorOpaque** device);
};
