// Launching a CPU kernel that allocates its results itself
// (at::cpu::native_layer_norm, at::cpu::native_batch_norm, ...): the kernel
// allocates the device results at the sizes the CPU kernel will give them
// (its own arithmetic, before the launch), and the launched work copies the
// CPU kernel's results into them. Run inline instead (KernelCall::adopt), such
// a kernel would run on whichever thread called it -- autograd's device
// thread for a backward -- and, on a CPU-simulated device, bring that
// thread's own OpenMP team to compete with the stream worker's for the cores.
//
//   rt::HostKernelLaunch launch({input, weight});
//   if (launch.native()) {
//     at::Tensor out = launch.result(input.sizes(), input.scalar_type());
//     launch.run("my_op", [](const rt::HostViews& in) {
//       return std::make_tuple(at::cpu::my_op(in[0], in[1]));
//     });
//     return out;
//   }
//   ... the inline path (KernelCall), which raises PyTorch's own errors.
#pragma once

#include <cstddef>
#include <tuple>
#include <utility>
#include <vector>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/MemoryFormat.h>
#include <c10/core/ScalarType.h>
#include <c10/util/Exception.h>

#include "launch.h"

namespace scaffold::runtime {

// Host views of a launched kernel's operands, in the order given; an
// undefined operand stays undefined.
using HostViews = std::vector<at::Tensor>;

class HostKernelLaunch {
 public:
  // native() when every defined operand is a strided tensor of this backend
  // and all are on one device. An operand may be an output the CPU kernel
  // writes through its host view (an out= tensor already of the right shape).
  explicit HostKernelLaunch(std::vector<at::Tensor> operands);

  bool native() const {
    return native_;
  }
  c10::Device device() const {
    return device_;
  }
  // The next result: a device tensor of `sizes` (contiguous in `format`), or
  // an undefined one when not `wanted` (an output_mask off); the launched
  // kernel's result of the same position is copied into it.
  at::Tensor result(
      at::IntArrayRef sizes, at::ScalarType dtype, at::MemoryFormat format = at::MemoryFormat::Contiguous,
      bool wanted = true);

  // The next result laid out as at::empty_like(prototype), a device tensor of
  // this launch: for a CPU kernel that allocates its result like an input.
  at::Tensor result_like(const at::Tensor& prototype);

  // Launches fn(host views of the operands), which returns a tuple of CPU
  // tensors, one per result().
  template <class Fn>
  void run(const char* op, Fn&& fn) {
    TORCH_INTERNAL_ASSERT(native_, "HostKernelLaunch::run: operands not native");
    launch(device_.index(), op,
           [inputs = host_views(), outputs = std::move(result_views_), fn = std::forward<Fn>(fn)]() {
             std::apply([&](const auto&... computed) { copy_results(outputs, {&computed...}); }, fn(inputs));
           });
  }

 private:
  HostViews host_views() const;
  // Copies computed[i] into outputs[i] where outputs[i] is defined; the
  // shapes must agree (a mismatch is a bug in the kernel's arithmetic, never
  // a broadcast).
  static void copy_results(const HostViews& outputs, std::initializer_list<const at::Tensor*> computed);

  std::vector<at::Tensor> operands_;
  HostViews result_views_;
  c10::Device device_{c10::DeviceType::PrivateUse1};
  bool native_ = false;
};

} // namespace scaffold::runtime
