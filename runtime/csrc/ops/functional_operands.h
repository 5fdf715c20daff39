// The operands of an op run on host views: FunctionalOperands checks that an
// op can run natively (its tensors on one device of this backend, or CPU
// scalars), gives its kernel host views of them from the per-thread cache
// (host_view_cache.h), allocates a functional op's result, and moves into
// launched work. The structured and elementwise runners (structured_ops.h)
// are built on it.
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <initializer_list>
#include <optional>
#include <utility>

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>
#include <c10/core/TensorOptions.h>

#include "launch.h"
#include "profiler.h"

namespace scaffold::runtime {

using TensorRefs = std::initializer_list<std::reference_wrapper<const at::Tensor>>;

struct ThreadViewCache; // host_view_cache.h

// The inputs and the output of an op that runs on host views.
//
// native() is true when every input is either a strided tensor of this
// backend -- all on one device, in any layout -- or a CPU 0-dim tensor (a
// wrapped scalar), and at least one is a device tensor (for an op with an
// existing output, the output decides the device). input(i) is then the host
// view of input i (or the CPU scalar itself). For a functional op,
// make_output() allocates the result on that device, straight from the
// runtime (no dispatcher round trip), and returns its host view for the CPU
// kernel to write. Otherwise -- a CPU tensor with dimensions, tensors on two
// devices, another layout -- the kernel should leave the op to its default
// kernel (or KernelCall), which raises PyTorch's own error.
//
// The views do not wait for the stream (they are made for launched work,
// launch.h): a kernel launches its computation with launch(), or calls
// wait() before running it inline.
//
// The tensors given must outlive this object -- a kernel's own arguments
// do. With launch blocking the views of them only borrow their device
// storage (host_view_cache.h, StorageRef), so a tensor made inside the
// kernel and dropped before the op ends would leave its view dangling.
class FunctionalOperands {
 public:
  // A functional op: the output is made by make_output().
  explicit FunctionalOperands(TensorRefs inputs);
  // An op writing `output`, an existing tensor (out=, in-place); `output`
  // decides the device. An input in the output's memory (x.add_(x),
  // add(x[1:], x[:-1], out=x)) gets a host view on the output's host
  // storage, so the CPU kernel's memory overlap checks see what they would
  // see on the CPU.
  FunctionalOperands(const at::Tensor& output, TensorRefs inputs);
  ~FunctionalOperands();
  FunctionalOperands(FunctionalOperands&&) noexcept = default;
  FunctionalOperands(const FunctionalOperands&) = delete;
  FunctionalOperands& operator=(const FunctionalOperands&) = delete;

  bool native() const {
    return device_.has_value();
  }
  c10::Device device() const {
    return *device_;
  }
  const at::Tensor& input(size_t i) const {
    return inputs_[i];
  }
  // Allocates the result: `strides` empty means contiguous in the memory
  // format of `options` (as ATen's create_out); only its dtype and memory
  // format are used, the device is this call's.
  at::Tensor& make_output(at::IntArrayRef sizes, at::IntArrayRef strides, const at::TensorOptions& options);
  // Host view of the output, once made (or given).
  at::Tensor& output() {
    return host_out_;
  }
  // The device tensor make_output() allocated (undefined for an op writing
  // an existing output: holding a reference to that tensor, which Python
  // usually sees, would take the GIL to count it).
  const at::Tensor& result() const {
    return result_;
  }
  // The same, given up: a launched closure must not hold the tensor Python
  // sees (the host views keep its storage alive), or dropping it on the
  // stream's worker could need the GIL.
  at::Tensor take_result() {
    return std::move(result_);
  }
  // Waits for the current stream of the device: before running the CPU
  // kernel inline rather than launching it (in a profile, an inline kernel
  // from here to the end of this object's life), or, with runs_inline false,
  // before reading operands on the caller ahead of a launch.
  void wait(bool runs_inline = true) const;
  // True when a TensorIterator meta() on the CPU may convert inputs to the
  // common dtype right away -- a copy that reads them on the caller: the
  // device inputs are not all of one dtype, a CPU scalar is of a higher
  // category than they are, or they are integral or boolean (promoted to
  // float by ops computing in floating point, unless `integral_kept`: the
  // op never does, as bitwise ops). `output_is_input`: the output is also
  // read (self of an in-place op), so its dtype takes part in the common
  // dtype; an out= tensor's does not. `scalar_operand`: the dtype of an
  // at::Scalar operand meta() promotes with the tensors (gt.Scalar's other).
  bool meta_converts_inputs(
      bool output_is_input, bool integral_kept, std::optional<at::ScalarType> scalar_operand) const;
  // For CPU kernels that can only allocate their result themselves (run
  // inline, after wait()): a copy of `host_result` on the device, with the
  // same sizes and strides.
  at::Tensor adopt(const at::Tensor& host_result) const;

  // Launches fn(*this) on the current stream (launch.h) and returns the
  // device result; *this is moved into the launched work.
  template <class Fn>
  at::Tensor launch(const char* op, Fn&& fn) {
    at::Tensor result = take_result();
    const c10::DeviceIndex device = device_->index();
    scaffold::runtime::launch(device, op, [self = std::move(*this), fn = std::forward<Fn>(fn)]() mutable { fn(self); });
    return result;
  }

 private:
  void add_input(size_t i, const at::Tensor& t, ThreadViewCache& cache);

  static constexpr size_t kMaxInputs = 4; // nll_loss_backward: grad, self, target, total weight
  std::optional<c10::Device> device_;
  std::array<at::Tensor, kMaxInputs> inputs_;
  unsigned recycled_ = 0; // bit i: inputs_[i] is a recycled host view
  // bit i: inputs_[i] is a sticky one (launch blocking), kOutputBit: host_out_
  static constexpr unsigned kOutputBit = 1u << kMaxInputs;
  unsigned sticky_ = 0;
  bool existing_output_ = false; // out= or in-place: host_out_ was given
  at::Tensor result_;
  at::Tensor host_out_;
  mutable InlineKernelTiming inline_timing_; // from wait() on: a kernel run inline
};

// The device to create a functional op's result on when its inputs are a mix
// of device tensors and CPU scalars: the first operand not on the CPU (as
// ATen does), or the CPU if there is none.
c10::Device result_device(TensorRefs operands);

// A contiguous tensor of `size` on `device` of this backend, straight from
// the runtime's allocator (no dispatcher round trip).
at::Tensor allocate(at::IntArrayRef size, at::ScalarType dtype, c10::Device device);

} // namespace scaffold::runtime
