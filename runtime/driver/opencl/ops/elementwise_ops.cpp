// Elementwise ops in OpenCL C. TensorIterator computes what CUDA's kernels
// get: the broadcast shape, the common dtype, the output (allocated or
// resized) and coalesced strides. It does not cast on a device other than the
// CPU, so the device code loads each operand in its own dtype and computes in
// the common one's opmath type; a CPU scalar operand (x * 2, 2 / x) is passed
// by value.
#include "opencl_ops.h"

#include <initializer_list>
#include <string>

#include <ATen/TensorIterator.h>
#include <ATen/native/BinaryOps.h>
#include <c10/util/Exception.h>

#include "kernel_declined.h"
#include "opencl_launch.h"

namespace scaffold::opencl_ops {

namespace {

// One work item per element: its index is decomposed over the iterator's
// dimensions (dimension 0 fastest), each operand's byte offset accumulated
// from its strides.
constexpr const char* kElementwiseSource = R"CLC(
__kernel void elementwise(__global char* out_base, ulong out_offset,
                          __global const char* a_base, ulong a_offset,
                          __global const char* b_base, ulong b_offset,
                          long8 shape, long8 out_strides, long8 a_strides, long8 b_strides,
                          int ndim, long numel, COMPUTE_T s, COMPUTE_T a_value, COMPUTE_T b_value) {
  long i = get_global_id(0);
  if (i >= numel) return;
  long sh[8], so[8], sa[8], sb[8];
  vstore8(shape, 0, sh);
  vstore8(out_strides, 0, so);
  vstore8(a_strides, 0, sa);
  vstore8(b_strides, 0, sb);
  long o = (long)out_offset, ao = (long)a_offset, bo = (long)b_offset;
  long rest = i;
  for (int d = 0; d < ndim; ++d) {
    long index = rest % sh[d];
    rest /= sh[d];
    o += index * so[d];
    ao += index * sa[d];
    bo += index * sb[d];
  }
#if A_IS_VALUE
  COMPUTE_T a = a_value;
#else
  COMPUTE_T a = LOAD_A((__global const A_T*)(a_base + ao));
#endif
#if B_IS_VALUE
  COMPUTE_T b = b_value;
#else
  COMPUTE_T b = LOAD_B((__global const B_T*)(b_base + bo));
#endif
  COMPUTE_T result = OP(a, b, s);
  STORE_OUT((__global OUT_T*)(out_base + o), result);
}
)CLC";

// The operation as OpenCL C of a, b and s (the scalar argument: alpha, a
// threshold), in the compute type.
struct Operation {
  const char* integral;
  const char* floating;
};

// Launches `operation` over `iter` (one output; one or two inputs).
void launch(const char* op, at::TensorIteratorBase& iter, const Operation& operation, const c10::Scalar& s = 0) {
  const c10::DeviceIndex device = iter.device(0).index();
  const at::ScalarType common = iter.common_dtype();
  check_dtype(op, common, device);
  for (int i = 0; i < iter.ntensors(); ++i) {
    check_dtype(op, iter.dtype(i), device);
  }
  if (iter.ndim() > kMaxDims) {
    runtime::decline_kernel(op, "more than 8 dimensions after coalescing");
  }
  if (iter.numel() == 0) {
    return;
  }
  const char* compute = compute_type_name(common);
  const bool floating = at::isFloatingType(common);
  const bool binary = iter.ninputs() == 2;
  const bool a_is_value = iter.is_cpu_scalar(1);
  const bool b_is_value = !binary || iter.is_cpu_scalar(2);
  std::string source = program_prelude(device);
  source += std::string("#define COMPUTE_T ") + compute + "\n";
  source += element_macros("OUT", iter.dtype(0), compute);
  source += element_macros("A", iter.dtype(1), compute);
  source += element_macros("B", binary ? iter.dtype(2) : common, compute);
  source += std::string("#define A_IS_VALUE ") + (a_is_value ? "1" : "0") + "\n";
  source += std::string("#define B_IS_VALUE ") + (b_is_value ? "1" : "0") + "\n";
  source += std::string("#define OP(a, b, s) ") + (floating ? operation.floating : operation.integral) + "\n";
  source += kElementwiseSource;

  const auto shape = iter.shape();
  const auto strides_of = [&](int operand) {
    const auto strides = iter.strides(operand);
    return std::vector<int64_t>(strides.begin(), strides.end());
  };
  const auto value_of = [&](int operand) {
    return iter.is_cpu_scalar(operand) ? at::Tensor(iter.tensor_base(operand)).item() : c10::Scalar(0);
  };
  const at::ScalarType compute_dtype = compute_type(common);
  Launch kernel(device, source, "elementwise");
  kernel.pointer(iter.data_ptr(0));
  kernel.pointer(a_is_value ? nullptr : iter.data_ptr(1));
  kernel.pointer(b_is_value ? nullptr : iter.data_ptr(2));
  // The iterator's data pointers already include each operand's offset.
  kernel.dims(shape)
      .dims(strides_of(0))
      .dims(strides_of(1))
      .dims(binary ? strides_of(2) : std::vector<int64_t>(shape.size(), 0))
      .i32(static_cast<int32_t>(iter.ndim()))
      .i64(iter.numel())
      .scalar(s, compute_dtype)
      .scalar(value_of(1), compute_dtype)
      .scalar(binary ? value_of(2) : c10::Scalar(0), compute_dtype)
      .run(iter.numel());
}

} // namespace

namespace {

const Operation kAdd{"((a) + (s) * (b))", "((a) + (s) * (b))"};
const Operation kSub{"((a) - (s) * (b))", "((a) - (s) * (b))"};
const Operation kMul{"((a) * (b))", "((a) * (b))"};
const Operation kDiv{"((a) / (b))", "((a) / (b))"}; // true division: the iterator computes in a floating type
const Operation kNeg{"(-(a))", "(-(a))"};
const Operation kAbs{"((a) < 0 ? -(a) : (a))", "fabs(a)"};
// The floating-point functions: their iterators promote integers to float.
const Operation kExp{"", "exp(a)"};
const Operation kLog{"", "log(a)"};
const Operation kSqrt{"", "sqrt(a)"};
const Operation kTanh{"", "tanh(a)"};
const Operation kSigmoid{"", "((COMPUTE_T)1 / ((COMPUTE_T)1 + exp(-(a))))"};
// NaN stays NaN, as in ATen's relu (clamp_min).
const Operation kRelu{"((a) > 0 ? (a) : (COMPUTE_T)0)", "(((a) > 0 || (a) != (a)) ? (a) : (COMPUTE_T)0)"};
// a: the forward input, b: the gradient.
const Operation kThresholdBackward{"((a) <= (s) ? (COMPUTE_T)0 : (b))", "((a) <= (s) ? (COMPUTE_T)0 : (b))"};

// Complex operands decline before the iterator is built: their ops have rules of their own
// (abs of a complex tensor is real) that the iterator's checks would refuse.
void decline_complex(const char* op, std::initializer_list<const at::Tensor*> operands) {
  for (const at::Tensor* t : operands) {
    if (t->defined() && at::isComplexType(t->scalar_type())) {
      runtime::decline_kernel(op, std::string("its OpenCL C covers no ") + c10::toString(t->scalar_type()));
    }
  }
}

at::Tensor& binary(const char* op, const at::Tensor& self, const at::Tensor& other, at::Tensor& out,
                   const Operation& operation, const c10::Scalar& s = 0) {
  decline_complex(op, {&self, &other, &out});
  auto iter = at::TensorIterator::binary_op(out, self, other);
  launch(op, iter, operation, s);
  return out;
}

at::Tensor& unary(const char* op, const at::Tensor& self, at::Tensor& out, const Operation& operation) {
  decline_complex(op, {&self, &out});
  auto iter = at::TensorIterator::unary_op(out, self);
  launch(op, iter, operation);
  return out;
}

at::Tensor& unary_float(const char* op, const at::Tensor& self, at::Tensor& out, const Operation& operation) {
  decline_complex(op, {&self, &out});
  auto iter = at::TensorIterator::unary_float_op(out, self);
  launch(op, iter, operation);
  return out;
}

void check_not_bool(const char* op, const at::Tensor& self) {
  if (self.scalar_type() == at::kBool) {
    runtime::decline_kernel(op, "bool");
  }
}

} // namespace

at::Tensor& add_out(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha, at::Tensor& out) {
  decline_complex("add.out", {&self, &other, &out});
  auto iter = at::TensorIterator::binary_op(out, self, other);
  at::native::alpha_check(iter.common_dtype(), alpha);
  launch("add.out", iter, kAdd, alpha);
  return out;
}

at::Tensor& sub_out(const at::Tensor& self, const at::Tensor& other, const at::Scalar& alpha, at::Tensor& out) {
  at::native::sub_check(self, other);
  decline_complex("sub.out", {&self, &other, &out});
  auto iter = at::TensorIterator::binary_op(out, self, other);
  at::native::alpha_check(iter.common_dtype(), alpha);
  launch("sub.out", iter, kSub, alpha);
  return out;
}

at::Tensor& mul_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  return binary("mul.out", self, other, out, kMul);
}

at::Tensor& div_out(const at::Tensor& self, const at::Tensor& other, at::Tensor& out) {
  decline_complex("div.out", {&self, &other, &out});
  auto iter = at::TensorIterator::binary_float_op(out, self, other);
  launch("div.out", iter, kDiv);
  return out;
}

at::Tensor& neg_out(const at::Tensor& self, at::Tensor& out) {
  TORCH_CHECK(
      self.scalar_type() != at::kBool,
      "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use the "
      "`~` or `logical_not()` operator instead.");
  return unary("neg.out", self, out, kNeg);
}

at::Tensor& abs_out(const at::Tensor& self, at::Tensor& out) {
  return unary("abs.out", self, out, kAbs);
}

at::Tensor& exp_out(const at::Tensor& self, at::Tensor& out) {
  return unary_float("exp.out", self, out, kExp);
}

at::Tensor& log_out(const at::Tensor& self, at::Tensor& out) {
  return unary_float("log.out", self, out, kLog);
}

at::Tensor& sqrt_out(const at::Tensor& self, at::Tensor& out) {
  return unary_float("sqrt.out", self, out, kSqrt);
}

at::Tensor& tanh_out(const at::Tensor& self, at::Tensor& out) {
  return unary_float("tanh.out", self, out, kTanh);
}

at::Tensor& sigmoid_out(const at::Tensor& self, at::Tensor& out) {
  return unary_float("sigmoid.out", self, out, kSigmoid);
}

at::Tensor relu(const at::Tensor& self) {
  check_not_bool("relu", self);
  decline_complex("relu", {&self});
  at::Tensor out;
  auto iter = at::TensorIterator::unary_op(out, self);
  launch("relu", iter, kRelu);
  return iter.output();
}

at::Tensor& relu_(at::Tensor& self) {
  check_not_bool("relu_", self);
  return unary("relu_", self, self, kRelu);
}

at::Tensor& threshold_backward_out(const at::Tensor& grad_output, const at::Tensor& self, const at::Scalar& threshold,
                                   at::Tensor& grad_input) {
  return binary("threshold_backward.grad_input", self, grad_output, grad_input, kThresholdBackward, threshold);
}

} // namespace scaffold::opencl_ops
