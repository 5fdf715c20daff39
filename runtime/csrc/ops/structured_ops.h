// Functional, out= and in-place ops on host views, launched on the current
// stream (launch.h) and without the dispatcher round trips of PyTorch's
// default kernels: StructuredFunctional, StructuredOut, StructuredInplace,
// Elementwise, InplaceElementwise, built on FunctionalOperands
// (functional_operands.h).
//
// With only add.out registered, torch.add(a, b) reaches it through PyTorch's
// default kernel for add.Tensor: a structured wrapper that runs a
// TensorIterator pass over the device tensors to find shape, dtype and
// strides, dispatches empty_strided, then add.out -- whose CPU kernel checks
// and builds a TensorIterator all over again. For small tensors that overhead
// is most of the cost. A backend kernel for add.Tensor itself avoids it:
// StructuredFunctional runs the CPU kernel's own meta() once, on the caller,
// with the result allocated on the device, and launches its impl() on the
// stream; StructuredOut and StructuredInplace do the same for out= and
// in-place variants; Elementwise covers the common case of ops whose CPU
// kernel is not structured; InplaceElementwise runs other in-place CPU
// kernels inline. Each says when it does not apply (tensors on two devices,
// a CPU tensor that is not a scalar, ...), and the kernel then calls the
// op's default kernel directly, so PyTorch's semantics and error messages
// stay its own. Host views these use are recycled (host_view_cache.h):
// creating them would cost as much as the kernel.
#pragma once

#include <array>
#include <cstddef>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

#include <ATen/TensorIterator.h>
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/Scalar.h>
#include <c10/core/ScalarType.h>
#include <c10/core/TensorOptions.h>

#include "functional_operands.h"
#include "kernel_call.h"
#include "launch.h"
#include "torch_compat.h"

namespace scaffold::runtime {

// Where a structured op's output comes from (StructuredOp).
enum class OutputKind {
  Allocated, // a functional op: allocated on the device at the shape meta() asks for
  Existing, // an out= tensor: used when it has that shape already, else the op runs inline
  Inplace, // self of an in-place op: must have that shape and dtype (ATen's check_inplace)
};

// A structured op (ATen's at::native::structured_* CPU kernel) run the way
// ATen's generated CPU wrappers run it -- meta(), then impl() -- on host
// views: meta() on the caller (it decides shape, dtype, strides and errors
// from the very sizes, strides and dtypes of the device tensors, exactly as
// the CPU does), impl() launched on the current stream. Kernels use it
// through StructuredFunctional, StructuredOut and StructuredInplace below,
// which hold it on the heap so that it can move into the launched work.
template <class Structured>
class StructuredOp final : public Structured {
 public:
  explicit StructuredOp(TensorRefs inputs) : operands_(inputs), kind_(OutputKind::Allocated) {}
  StructuredOp(const at::Tensor& output, TensorRefs inputs, OutputKind kind)
      : operands_(output, inputs), kind_(kind) {}

  bool native() const {
    return operands_.native();
  }
  c10::Device device() const {
    return operands_.device();
  }
  const at::Tensor& input(size_t i) const {
    return operands_.input(i);
  }
  // The out argument of impl(): the host view of the output.
  const at::Tensor& output() {
    return operands_.output();
  }
  // self of an in-place op (the output).
  const at::Tensor& self() {
    return operands_.output();
  }
  const at::Tensor& result() const {
    return operands_.result();
  }
  at::Tensor take_result() {
    return operands_.take_result();
  }
  bool meta_converts_inputs(bool integral_kept, std::optional<at::ScalarType> scalar_operand) const {
    return operands_.meta_converts_inputs(
        /*output_is_input=*/kind_ == OutputKind::Inplace, integral_kept, scalar_operand);
  }
  // Before a meta() that reads operands on the caller; the op is launched after.
  void wait() const {
    operands_.wait(/*runs_inline=*/false);
  }

  // Thrown by an output hook when an out= tensor does not have the shape
  // meta() asks for: the kernel runs the op inline instead.
  struct NeedsInline {};

  void set_output_strided(
      int64_t output_idx,
      at::IntArrayRef sizes,
      at::IntArrayRef strides,
      at::TensorOptions options SCAFFOLD_OUTPUT_NAMES_PARAMETER) override {
    set_output(output_idx, sizes, strides, options, /*strides_required=*/true);
  }
  void set_output_raw_strided(
      int64_t output_idx,
      at::IntArrayRef sizes,
      at::IntArrayRef strides,
      at::TensorOptions options SCAFFOLD_OUTPUT_NAMES_PARAMETER) override {
    set_output(output_idx, sizes, strides, options, /*strides_required=*/false);
  }
  const at::Tensor& maybe_get_output(int64_t output_idx) override {
    TORCH_INTERNAL_ASSERT(output_idx == 0, "StructuredOp: ops with one output only");
    return operands_.output();
  }

 private:
  void set_output(
      int64_t output_idx,
      at::IntArrayRef sizes,
      at::IntArrayRef strides,
      const at::TensorOptions& options,
      bool strides_required) {
    TORCH_INTERNAL_ASSERT(output_idx == 0, "StructuredOp: ops with one output only");
    const at::Tensor& out = operands_.output();
    switch (kind_) {
      case OutputKind::Allocated:
        operands_.make_output(sizes, strides, options);
        break;
      case OutputKind::Existing:
        // ATen's out= wrapper would resize (or use a proxy for strides the
        // kernel insists on); both need the device tensor changed first.
        if (out.sizes() != sizes || out.dtype() != options.dtype() ||
            (strides_required && !strides.empty() && out.strides() != strides)) {
          throw NeedsInline{};
        }
        break;
      case OutputKind::Inplace:
        // As ATen's check_inplace (TensorIterator ops check the same).
        TORCH_CHECK(
            options.dtype() == out.dtype(),
            "Bad in-place call: input tensor dtype ",
            out.dtype(),
            " and output tensor dtype ",
            options.dtype(),
            " should match");
        TORCH_CHECK(
            sizes == out.sizes(),
            "Bad in-place call: input tensor size ",
            out.sizes(),
            " and output tensor size ",
            sizes,
            " should match");
        if (strides_required && !strides.empty() && out.strides() != strides) {
          throw NeedsInline{};
        }
        break;
    }
    // As in ATen's generated wrappers: a TensorIterator-based meta() picks
    // the output up here, after it exists.
    if constexpr (std::is_base_of_v<at::TensorIteratorBase, Structured>) {
      Structured::set_output_raw_strided(output_idx, sizes, strides, options SCAFFOLD_NO_OUTPUT_NAMES);
    }
  }

  FunctionalOperands operands_;
  OutputKind kind_;
};

// What the three handles below share: the StructuredOp, meta() on the
// caller, launch of impl(). The op moves into the launched work, so it lives
// on the heap (its TensorIterator points into it) -- except when launched
// work runs before launch() returns (launch_blocking()): then it lives here.
template <class Structured>
class StructuredCall {
 public:
  bool native() const {
    return op_->native();
  }
  const at::Tensor& input(size_t i) const {
    return op_->input(i);
  }
  // Runs meta() on the caller, with these arguments (host views from
  // input(i), scalars, ...).
  template <class... Args>
  void meta(Args&&... args) {
    if constexpr (std::is_base_of_v<at::TensorIteratorBase, Structured>) {
      // On the CPU, TensorIterator's meta() converts inputs of another dtype
      // than the common one then and there (reading them): that read must
      // come after the work queued before it, so wait for the stream (never
      // busy when launched work runs at its launch).
      if (op_->native() && !launch_blocking() && op_->meta_converts_inputs(integral_kept_, scalar_operand_)) {
        op_->wait();
      }
    }
    try {
      op_->meta(std::forward<Args>(args)...);
    } catch (const typename StructuredOp<Structured>::NeedsInline&) {
      fits_ = false;
    }
  }
  // Before meta(), for ops that never compute in floating point (bitwise
  // ops, comparisons): integral and boolean inputs of one dtype are not
  // converted by meta(), so it need not wait for the work queued before it.
  void keeps_integral_inputs() {
    integral_kept_ = true;
  }
  // The same for an op with a Scalar operand: one of a higher category than
  // the tensor's (int64 > 0.5, bool > 1) still makes meta() convert the
  // tensor, as a CPU scalar tensor would.
  void keeps_integral_inputs(const at::Scalar& scalar) {
    integral_kept_ = true;
    scalar_operand_ = scalar.type();
  }
  // After meta(): false when an out= tensor must be resized first (the
  // kernel then runs the op inline, KernelCall/OutputView).
  bool fits() const {
    return fits_;
  }

 protected:
  template <class... Ctor>
  explicit StructuredCall(Ctor&&... args) {
    if (launch_blocking()) {
      op_ = OpPtr(&inline_op_.emplace(std::forward<Ctor>(args)...), OpDeleter{/*owned=*/false});
    } else {
      op_ = OpPtr(new StructuredOp<Structured>(std::forward<Ctor>(args)...), OpDeleter{/*owned=*/true});
    }
  }

  // Launches fn(op) -- fn calls impl() -- on the current stream; returns
  // the output's device tensor, which the launched work does not hold.
  template <class Fn>
  at::Tensor launch_impl(const char* name, Fn&& fn) {
    TORCH_INTERNAL_ASSERT(fits_, name, ": launched although meta() asked for a resize");
    const c10::DeviceIndex device = op_->device().index();
    at::Tensor result = op_->take_result();
    scaffold::runtime::launch(device, name, [op = std::move(op_), fn = std::forward<Fn>(fn)]() mutable { fn(*op); });
    return result;
  }

  struct OpDeleter {
    bool owned;
    void operator()(StructuredOp<Structured>* op) const {
      if (owned) {
        delete op;
      }
    }
  };
  using OpPtr = std::unique_ptr<StructuredOp<Structured>, OpDeleter>;

  std::optional<StructuredOp<Structured>> inline_op_; // declared first: outlives op_
  OpPtr op_{nullptr, OpDeleter{false}};
  bool fits_ = true;
  bool integral_kept_ = false;
  std::optional<at::ScalarType> scalar_operand_;
};

// A functional op with a structured CPU kernel:
//
//   at::Tensor add(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha) {
//     StructuredFunctional<at::native::structured_ufunc_add_CPU> op({self, other});
//     if (!op.native()) {
//       return at::compositeexplicitautogradnonfunctional::add(self, other, alpha);
//     }
//     op.meta(op.input(0), op.input(1), alpha);            // on the caller
//     return op.launch("add", [alpha](auto& op) {          // on the stream
//       op.impl(op.input(0), op.input(1), alpha, op.output());
//     });
//   }
//
// (The class names are ATen's: at::native::structured_<CPU kernel of the
// op's out= variant>, declared in ATen/ops/<op>_native.h. A PyTorch upgrade
// that renames one, or changes its meta() or impl(), fails to compile here.)
template <class Structured>
class StructuredFunctional final : public StructuredCall<Structured> {
 public:
  explicit StructuredFunctional(TensorRefs inputs) : StructuredCall<Structured>(inputs) {}

  // Launches impl (fn(op)) and returns the result meta() allocated.
  template <class Fn>
  at::Tensor launch(const char* name, Fn&& fn) {
    return this->launch_impl(name, std::forward<Fn>(fn));
  }
};

// An out= kernel with a structured CPU kernel: launched when `out` already
// has the shape (and dtype) meta() asks for -- always the case when the op's
// functional default kernel calls it -- else run inline, which resizes:
//
//   StructuredOut<at::native::structured_mm_out_cpu> op(out, {self, mat2});
//   if (op.native()) {
//     op.meta(op.input(0), op.input(1));
//     if (op.fits()) {
//       op.launch("mm.out", [](auto& op) { op.impl(op.input(0), op.input(1), op.output()); });
//       return out;
//     }
//   }
//   ... KernelCall / OutputView, inline
template <class Structured>
class StructuredOut final : public StructuredCall<Structured> {
 public:
  StructuredOut(const at::Tensor& out, TensorRefs inputs)
      : StructuredCall<Structured>(out, inputs, OutputKind::Existing) {}

  template <class Fn>
  void launch(const char* name, Fn&& fn) {
    this->launch_impl(name, std::forward<Fn>(fn));
  }
};

// An in-place op with a structured CPU kernel (self is input and output):
//
//   StructuredInplace<at::native::structured_ufunc_add_CPU> op(self, {other});
//   if (!op.native()) {
//     return at::compositeexplicitautogradnonfunctional::add_(self, other, alpha);
//   }
//   op.meta(op.self(), op.input(0), alpha);
//   op.launch("add_", [alpha](auto& op) { op.impl(op.self(), op.input(0), alpha, op.self()); });
//   return self;
template <class Structured>
class StructuredInplace final : public StructuredCall<Structured> {
 public:
  StructuredInplace(const at::Tensor& self, TensorRefs others)
      : StructuredCall<Structured>(self, others, OutputKind::Inplace) {}

  const at::Tensor& self() {
    return this->op_->self();
  }
  template <class Fn>
  void launch(const char* name, Fn&& fn) {
    this->launch_impl(name, std::forward<Fn>(fn));
  }
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
// and the caller launches the CPU out= kernel on host views: out() for the
// result, input(i) for operand i, in the order given. `result_dtype` must be
// the dtype the op's functional variant produces for these operands (e.g.
// at::native::result_type(self, other)).
//
//   Elementwise e({self}, c10::toRealValueType(self.scalar_type()));
//   if (e.fast()) {
//     return e.launch("abs", [](Elementwise& e) { at::cpu::abs_out(e.out(), e.input(0)); });
//   }
//
// Otherwise, when native() (FunctionalOperands) still holds, the caller runs
// the CPU functional kernel inline on the host views (the constructor has
// waited for the stream then) and returns adopt() of its result; when not,
// the op's default kernel.
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
    return twins_ != nullptr ? twins_->inputs[i] : operands_.input(i);
  }
  // Host view of the result (fast() only).
  at::Tensor& out() {
    return twins_ != nullptr ? twins_->out : operands_.output();
  }
  // See FunctionalOperands::adopt (native() and not fast() only).
  at::Tensor adopt(const at::Tensor& host_result) const {
    return operands_.adopt(host_result);
  }
  // Launches fn(*this) on the current stream and returns the device result
  // (fast() only).
  template <class Fn>
  at::Tensor launch(const char* op, Fn&& fn) {
    TORCH_INTERNAL_ASSERT(fast_, op, ": Elementwise::launch needs fast()");
    check_on_host_twins(op, fn);
    at::Tensor result = operands_.take_result();
    const c10::DeviceIndex device = operands_.device().index();
    scaffold::runtime::launch(device, op, [self = std::move(*this), fn = std::forward<Fn>(fn)]() mutable { fn(self); });
    return result;
  }

 private:
  // 0-dim host tensors of the operands' and the result's dtypes.
  struct HostTwins {
    std::array<at::Tensor, 3> inputs;
    at::Tensor out;
  };
  // The CPU kernel checks some arguments only when it runs (a dtype it has
  // no loop for: abs of bool; a condition that is not boolean), and launched
  // work would report those at the next synchronisation. CUDA's host code
  // raises them at the call, so before the first launch of `op` with these
  // dtypes (per thread) fn runs here on 0-dim twins -- elementwise ops have
  // no dims or shapes to get wrong on them -- and raises what it would raise
  // on the operands. Errors that depend on the data are left to the launched
  // work, as a device-side assert is.
  template <class Fn>
  void check_on_host_twins(const char* op, Fn& fn) {
    HostTwins twins;
    if (!make_host_twins_if_unchecked(op, twins)) {
      return;
    }
    twins_ = &twins;
    try {
      fn(*this);
    } catch (...) {
      twins_ = nullptr;
      throw;
    }
    twins_ = nullptr;
    remember_checked(op);
  }
  bool make_host_twins_if_unchecked(const char* op, HostTwins& twins) const;
  void remember_checked(const char* op) const;
  uint64_t dtype_signature() const;

  FunctionalOperands operands_;
  HostTwins* twins_ = nullptr;
  bool fast_ = false;
};

// An in-place op whose CPU kernel is not structured (abs_, masked_fill_),
// run inline on host views: self is the output, so there is nothing to
// allocate and no strides to choose; the CPU in-place kernel does every
// check, so it runs on the caller, after the constructor waited for the
// stream. (A structured in-place op is launched: StructuredInplace.)
// native() is true when self is a strided tensor of this backend and every
// other operand is on self's device or a CPU 0-dim tensor; otherwise the
// caller runs the op's default kernel. Operands in self's memory see the
// overlap as on the CPU (FunctionalOperands).
class InplaceElementwise {
 public:
  InplaceElementwise(const at::Tensor& self, TensorRefs others);

  bool native() const {
    return operands_.native();
  }
  // Host view of self (native() only).
  at::Tensor& self() {
    return operands_.output();
  }
  // Host view of the i-th of `others`, or the CPU scalar itself.
  const at::Tensor& input(size_t i) const {
    return operands_.input(i);
  }

 private:
  FunctionalOperands operands_;
};

} // namespace scaffold::runtime
