// Functional and in-place ops on host views, without the dispatcher round
// trips of PyTorch's default kernels: FunctionalOperands, StructuredFunctional,
// Elementwise, InplaceElementwise.
//
// With only add.out registered, torch.add(a, b) reaches it through PyTorch's
// default kernel for add.Tensor: a structured wrapper that runs a
// TensorIterator pass over the device tensors to find shape, dtype and
// strides, dispatches empty_strided, then add.out -- whose CPU kernel checks
// and builds a TensorIterator all over again. For small tensors that overhead
// is most of the cost. A backend kernel for add.Tensor itself avoids it:
// StructuredFunctional runs the CPU kernel's own meta() and impl() once, on
// host views, with the result allocated on the device; Elementwise does the
// same for the common case of ops whose CPU kernel is not structured;
// InplaceElementwise runs in-place CPU kernels on host views. Each says when
// it does not apply (tensors on two devices, a CPU tensor that is not a
// scalar, ...), and the kernel then calls the op's default kernel directly,
// so PyTorch's semantics and error messages stay its own. Host views these
// use are recycled (see functional_ops.cpp): creating them would cost as much
// as the kernel.
#pragma once

#include <array>
#include <cstddef>
#include <functional>
#include <initializer_list>
#include <type_traits>

#include <ATen/TensorIterator.h>
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>
#include <c10/core/TensorOptions.h>

#include "kernel_call.h"
#include "torch_compat.h"

namespace scaffold::runtime {

using TensorRefs = std::initializer_list<std::reference_wrapper<const at::Tensor>>;

// The inputs and the result of a functional op that runs on host views.
//
// native() is true when every input is either a strided tensor of this
// backend -- all on one device, in any layout -- or a CPU 0-dim tensor (a
// wrapped scalar), and at least one is a device tensor. input(i) is then the
// host view of input i (or the CPU scalar itself), and make_output()
// allocates the result on that device, straight from the runtime (no
// dispatcher round trip), and returns its host view for the CPU kernel to
// write. Otherwise -- a CPU tensor with dimensions, tensors on two devices,
// another layout -- the kernel should leave the op to its default kernel,
// which raises PyTorch's own error.
class FunctionalOperands {
 public:
  explicit FunctionalOperands(TensorRefs inputs);
  ~FunctionalOperands();
  FunctionalOperands(const FunctionalOperands&) = delete;
  FunctionalOperands& operator=(const FunctionalOperands&) = delete;

  bool native() const {
    return device_.has_value();
  }
  const at::Tensor& input(size_t i) const {
    return inputs_[i];
  }
  // Allocates the result: `strides` empty means contiguous in the memory
  // format of `options` (as ATen's create_out); only its dtype and memory
  // format are used, the device is this call's.
  at::Tensor& make_output(at::IntArrayRef sizes, at::IntArrayRef strides, const at::TensorOptions& options);
  // Host view of the result, once made.
  at::Tensor& output() {
    return host_out_;
  }
  // The device tensor written through output().
  at::Tensor result() {
    return std::move(result_);
  }
  // For CPU kernels that can only allocate their result themselves: a copy of
  // `host_result` on the device, with the same sizes and strides.
  at::Tensor adopt(const at::Tensor& host_result) const;

 private:
  static constexpr size_t kMaxInputs = 3;
  std::optional<c10::Device> device_;
  std::array<at::Tensor, kMaxInputs> inputs_;
  unsigned recycled_ = 0; // bit i: inputs_[i] is a recycled host view
  at::Tensor result_;
  at::Tensor host_out_;
};

// A functional op whose CPU kernel is structured (at::native::structured_*),
// run the way ATen's own generated CPU wrapper runs it -- meta(), then impl()
// -- on host views, except that the result it asks for in set_output_* is
// allocated on the device. meta() thus decides shape, dtype, strides and
// errors from the very sizes, strides and dtypes of the device tensors,
// exactly as the CPU does, and there is a single TensorIterator pass:
//
//   at::Tensor add(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
//     StructuredFunctional<at::native::structured_ufunc_add_CPU> op({self, other});
//     if (!op.native()) {
//       return at::compositeexplicitautogradnonfunctional::add(self, other, alpha);
//     }
//     op.meta(op.input(0), op.input(1), alpha);
//     op.impl(op.input(0), op.input(1), alpha, op.output());
//     return op.result();
//   }
//
// (The class names are ATen's: at::native::structured_<CPU kernel of the
// op's out= variant>, declared in ATen/ops/<op>_native.h. A PyTorch upgrade
// that renames one, or changes its meta() or impl(), fails to compile here.)
template <class Structured>
class StructuredFunctional final : public Structured {
 public:
  explicit StructuredFunctional(TensorRefs inputs) : operands_(inputs) {}

  bool native() const {
    return operands_.native();
  }
  const at::Tensor& input(size_t i) const {
    return operands_.input(i);
  }
  // The out argument of impl(): the host view of the result meta() made.
  const at::Tensor& output() {
    return operands_.output();
  }
  at::Tensor result() {
    return operands_.result();
  }

  void set_output_strided(
      int64_t output_idx,
      at::IntArrayRef sizes,
      at::IntArrayRef strides,
      at::TensorOptions options SCAFFOLD_OUTPUT_NAMES_PARAMETER) override {
    set_output(output_idx, sizes, strides, options);
  }
  void set_output_raw_strided(
      int64_t output_idx,
      at::IntArrayRef sizes,
      at::IntArrayRef strides,
      at::TensorOptions options SCAFFOLD_OUTPUT_NAMES_PARAMETER) override {
    set_output(output_idx, sizes, strides, options);
  }
  const at::Tensor& maybe_get_output(int64_t output_idx) override {
    TORCH_INTERNAL_ASSERT(output_idx == 0, "StructuredFunctional: ops with one output only");
    return operands_.output();
  }

 private:
  void set_output(
      int64_t output_idx,
      at::IntArrayRef sizes,
      at::IntArrayRef strides,
      const at::TensorOptions& options) {
    TORCH_INTERNAL_ASSERT(output_idx == 0, "StructuredFunctional: ops with one output only");
    operands_.make_output(sizes, strides, options);
    // As in ATen's generated functional wrappers: a TensorIterator-based
    // meta() picks the output up here, after it exists.
    if constexpr (std::is_base_of_v<at::TensorIteratorBase, Structured>) {
      Structured::set_output_raw_strided(output_idx, sizes, strides, options SCAFFOLD_NO_OUTPUT_NAMES);
    }
  }

  FunctionalOperands operands_;
};

// A functional elementwise op whose CPU kernel is not structured (abs,
// where): TensorIterator semantics (inputs broadcast together), but the CPU
// out= kernel has to be handed its output.
//
// fast() is true when every operand is either a tensor of this backend, all
// on one device, with exactly the strides of a fresh contiguous tensor, or a
// 0-dim tensor (a CPU scalar or a device one), and the broadcast result is
// not empty. For such operands TensorIterator always gives the functional
// result contiguous strides, so the result is allocated at its final shape
// and the caller runs the CPU out= kernel once on host views: out() for the
// result, input(i) for operand i, in the order given. `result_dtype` must be
// the dtype the op's functional variant produces for these operands (e.g.
// at::native::result_type(self, other)).
//
// Otherwise, when native() (FunctionalOperands) still holds, the caller runs
// the CPU functional kernel on the host views and returns adopt() of its
// result; when not, the op's default kernel.
class Elementwise {
 public:
  Elementwise(TensorRefs operands, at::ScalarType result_dtype);

  bool native() const {
    return operands_.native();
  }
  bool fast() const {
    return fast_;
  }
  // Host view of operand i, or the CPU scalar itself (native() only).
  const at::Tensor& input(size_t i) const {
    return operands_.input(i);
  }
  // Host view of the result (fast() only).
  at::Tensor& out() {
    return operands_.output();
  }
  // The device tensor the kernel wrote through out() (fast() only).
  at::Tensor result() {
    return operands_.result();
  }
  // See FunctionalOperands::adopt (native() only).
  at::Tensor adopt(const at::Tensor& host_result) const {
    return operands_.adopt(host_result);
  }

 private:
  FunctionalOperands operands_;
  bool fast_ = false;
};

// An in-place op (self.add_(other)) on host views: self is the output, so
// there is nothing to allocate and no strides to choose; the CPU in-place
// kernel (at::cpu::add_) does every check. native() is true when self is a
// strided tensor of this backend and every other operand is on self's device
// or a CPU 0-dim tensor; otherwise the caller runs the op's default kernel.
// An operand in self's memory (x.add_(x), x[1:].add_(x[:-1])) gets a host
// view on the same host storage as self's, so the CPU kernel's memory
// overlap checks see what they would see on the CPU.
class InplaceElementwise {
 public:
  InplaceElementwise(const at::Tensor& self, TensorRefs others);
  ~InplaceElementwise();
  InplaceElementwise(const InplaceElementwise&) = delete;
  InplaceElementwise& operator=(const InplaceElementwise&) = delete;

  bool native() const {
    return self_.defined();
  }
  // Host view of self (native() only).
  at::Tensor& self() {
    return self_;
  }
  // Host view of the i-th of `others`, or the CPU scalar itself.
  const at::Tensor& input(size_t i) const {
    return inputs_[i];
  }

 private:
  static constexpr size_t kMaxOperands = 2;
  at::Tensor self_;
  std::array<at::Tensor, kMaxOperands> inputs_;
  unsigned recycled_ = 0; // bit i: inputs_[i] is a recycled host view
};

// The device to create a functional op's result on when its inputs are a mix
// of device tensors and CPU scalars: the first operand not on the CPU (as
// ATen does), or the CPU if there is none.
c10::Device result_device(TensorRefs operands);

// A contiguous tensor of `size` on `device` of this backend, straight from
// the runtime's allocator (no dispatcher round trip).
at::Tensor allocate(at::IntArrayRef size, at::ScalarType dtype, c10::Device device);

} // namespace scaffold::runtime
