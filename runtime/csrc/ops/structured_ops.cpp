#include "structured_ops.h"

#include <algorithm>
#include <utility>
#include <vector>

#include <ATen/core/DimVector.h>
#include <ATen/ops/empty.h>
#include <ATen/ops/zeros.h>
#include <c10/util/Exception.h>
#include <c10/util/accumulate.h>

#include "broadcast.h"
#include "memory_access.h"

namespace scaffold::runtime {
namespace {


// True when `t` has exactly the strides a fresh contiguous tensor of its
// shape gets (is_contiguous() alone ignores the strides of size-1
// dimensions, and those take part in TensorIterator's choice of output
// strides).
bool has_default_strides(const at::Tensor& t) {
  if (!t.is_contiguous()) {
    return false;
  }
  const c10::TensorImpl* impl = t.unsafeGetTensorImpl();
  const at::IntArrayRef sizes = impl->sizes();
  const at::IntArrayRef strides = impl->strides();
  int64_t expected = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    if (strides[i] != expected) {
      return false;
    }
    expected *= std::max<int64_t>(sizes[i], 1);
  }
  return true;
}

} // namespace

Elementwise::Elementwise(TensorRefs operands, at::ScalarType result_dtype)
    : operands_(operands) {
  if (!operands_.native()) {
    return;
  }
  at::DimVector shape;
  bool fast = true;
  for (const at::Tensor& t : operands) {
    if ((!is_cpu_scalar(t) && !has_default_strides(t)) || !broadcast_into(shape, t.sizes())) {
      fast = false;
      break;
    }
  }
  if (fast && c10::multiply_integers(shape) != 0) {
    operands_.make_output(shape, {}, at::TensorOptions().dtype(result_dtype));
    fast_ = true;
  } else {
    operands_.wait(); // the caller runs the CPU kernel inline
  }
}

namespace {
// (op, dtype signature) pairs whose host-twin check passed on this thread: a
// handful per op, so a linear scan is cheaper than hashing.
thread_local std::vector<std::pair<const char*, uint64_t>> checked_on_host_twins;
constexpr int64_t kOneElementSizes[] = {1};
const at::IntArrayRef kOneElement(kOneElementSizes);
const at::IntArrayRef kScalar;
} // namespace

uint64_t Elementwise::dtype_signature() const {
  // A byte per operand and one for the result: the dtype, whether it has
  // dims (type promotion treats 0-dim tensors apart) and whether it is a CPU
  // scalar; 0xff for an absent operand.
  uint64_t signature = static_cast<uint8_t>(operands_.result().scalar_type());
  for (size_t i = 0; i < 3; ++i) {
    const at::Tensor& t = operands_.input(i);
    const uint64_t byte = !t.defined()
        ? 0xffu
        : static_cast<uint64_t>(static_cast<uint8_t>(t.scalar_type()) & 0x3fu) |
            (t.dim() > 0 ? 0x40u : 0u) | (is_cpu_scalar(t) ? 0x80u : 0u);
    signature |= byte << (8 * (i + 1));
  }
  return signature;
}

bool Elementwise::make_host_twins_if_unchecked(const char* op, HostTwins& twins) const {
  const uint64_t signature = dtype_signature();
  for (const auto& [checked_op, checked_signature] : checked_on_host_twins) {
    if (checked_op == op && checked_signature == signature) {
      return false;
    }
  }
  bool any_dims = false;
  for (size_t i = 0; i < 3; ++i) {
    const at::Tensor& t = operands_.input(i);
    if (!t.defined() || is_cpu_scalar(t)) {
      twins.inputs[i] = t; // a CPU scalar is on the host already
      continue;
    }
    // One element, with dims when the operand has them: broadcasts with
    // anything, and promotes as the operand does.
    const bool dims = t.dim() > 0;
    any_dims = any_dims || dims;
    twins.inputs[i] = at::zeros(dims ? kOneElement : kScalar, at::TensorOptions().dtype(t.scalar_type()));
  }
  twins.out = at::empty(any_dims ? kOneElement : kScalar, at::TensorOptions().dtype(operands_.result().scalar_type()));
  return true;
}

void Elementwise::remember_checked(const char* op) const {
  checked_on_host_twins.emplace_back(op, dtype_signature());
}

InplaceElementwise::InplaceElementwise(const at::Tensor& self, TensorRefs others)
    : operands_(self, others) {
  if (operands_.native()) {
    operands_.wait(); // the caller runs the CPU kernel inline
  }
}

} // namespace scaffold::runtime
