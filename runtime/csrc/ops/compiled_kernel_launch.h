// Launching the kernels Inductor compiles for the device: a compiled graph's
// C++ kernel runs on the current stream, after the work enqueued there
// before, as a CUDA graph's Triton kernels are launched -- not on the thread
// that runs the graph's Python wrapper.
//
// Why not inline: a graph's forward runs on the caller's thread, its backward
// on autograd's device thread, and the optimizer's kernels on the stream's
// worker. On a CPU-simulated device each of those threads brings its own
// OpenMP team, and switching between teams costs more than the kernels on two
// cores. Launched, every kernel of the step runs on the stream's worker.
//
// A kernel is the `extern "C"` entry point of the shared object Inductor
// built and Python already loaded (its Python binding's module). It takes
// pointers and 64-bit integers only -- the wrapper launches nothing else and
// calls any other kernel inline, on host views -- so it is called through one
// function type per argument count, with every argument in an integer
// register or stack slot (the System V and AArch64 calling conventions pass
// pointers and int64_t alike).
//
// Python (python/<package>/_inductor.py) reaches these as operators:
//   torch.ops.scaffold_runtime.load_compiled_kernel(path, symbol, name) -> int
//       the kernel's handle, or -1 when the entry point is not found (the
//       wrapper then calls the kernel inline);
//   torch.ops.scaffold_runtime.launch_compiled_kernel(kernel, argument_kinds,
//       tensors, integers)
//       argument_kinds[i] is 't': argument i is the next tensor (its data
//       pointer, translated to the host view; a 0-dim CPU tensor, a scalar
//       Dynamo passes, by a copy made at the launch); 'i': the next integer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/util/string_view.h>

namespace scaffold::runtime {

// The most arguments a launched compiled kernel takes: one caller is compiled
// per count. Inductor fuses small updates of many buffers into one kernel (a
// network's batch norms' num_batches_tracked: two pointers per layer), and C++
// guarantees a function declaration 256 parameters.
constexpr size_t kMaxCompiledKernelArguments = 255;

// Registers `symbol` of the shared object at `path`, which must already be
// loaded (it is never loaded from here); `name` names its launches in the
// profiler and in error messages. Returns the kernel's handle, or -1 when the
// object is not loaded or lacks the symbol.
int64_t load_compiled_kernel(const std::string& path, const std::string& symbol, const std::string& name);

// Enqueues the kernel on the current stream of its tensors' device, with its
// arguments in the order `argument_kinds` gives. The launched work keeps the
// tensors' storages alive until it has run.
void launch_compiled_kernel(
    int64_t kernel,
    c10::string_view argument_kinds,
    std::vector<at::Tensor> tensors,
    const std::vector<int64_t>& integers);

} // namespace scaffold::runtime
