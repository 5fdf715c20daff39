// The CPU fallback's dtype coverage: CUDA's, not the CPU's.
//
// Library code treats every device that is not the CPU like CUDA, and picks
// dtypes CUDA's kernels accept and the CPU's do not (histc on integers, the
// pooling and loss kernels on half types, abs on bool, nansum on complex).
// On the device such a call reaches the CPU fallback, whose kernel refuses
// the dtype with an error about the CPU. run_in_supported_dtype() catches that
// refusal and either computes the op in a dtype the CPU supports, where the
// result is what CUDA gives (or within the half types' tolerance, CUDA
// computing them in float too), or raises a NotImplementedError that names the
// device, the op and the dtype, never the CPU kernel.
//
// What is computed how (one rule for each kind of dtype, two op families of
// their own):
//   * float16, bfloat16: in float32, complex32 in complex64, the results
//     rounded back once;
//   * bool, int8, uint8, int16, int32: in int64, the results cast back (a
//     bool result only where every value is 0 or 1, so the cast is exact);
//   * histc on integers: CUDA's integer binning (bounds truncated to
//     integers, bin = (x - min) * bins / (max - min)) in int64 on the host,
//     which a float computation of the CPU's edges does not give exactly;
//   * nansum on complex: the sum of the input with every element that has a
//     NaN part replaced by zero, as CUDA's kernel does;
//   * the grid samplers and the FFT primitives on half types: in float32
//     (complex64) before the CPU kernel is tried, whose half-precision grid
//     samplers are wrong (NaNs, a corrupted heap) and whose FFT refuses half
//     types with an error not every release raises as NotImplementedError.
// The results' dtypes are those the op's meta kernel gives for the original
// arguments. Without one (or where it fails), a half type's float32 results go
// back to it when no tensor of the call was float32 and no dtype was asked for;
// otherwise, and where the op returns a view of an argument, nothing is
// recomputed and the error is raised.
#pragma once

#include <string>

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/stack.h>
#include <c10/util/FunctionRef.h>

namespace scaffold::runtime {

// Runs `run_on_host` (the fallback's CPU run of `op`, `name` its qualified
// name) on `stack`; when the CPU kernel refuses a dtype of the call, runs it
// again as above or raises the device's error. Same contract as
// at::native::cpu_fallback.
void run_in_supported_dtype(
    const char* device,
    const std::string& name,
    const c10::OperatorHandle& op,
    torch::jit::Stack* stack,
    c10::function_ref<void(torch::jit::Stack*)> run_on_host);

} // namespace scaffold::runtime
