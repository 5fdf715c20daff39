// Matrix products in OpenCL C: one work item per output element, any
// strides (a transposed weight is read as it lies), accumulated in float for
// half types. Integer and complex products decline to the CPU. A starting point that is
// right for every layout; a tuned port tiles through local memory.
#include "opencl_ops.h"

#include <string>
#include <vector>

#include <ATen/native/Resize.h>
#include <c10/util/Exception.h>

#include "kernel_declined.h"
#include "opencl_launch.h"

namespace scaffold::opencl_ops {

namespace {

constexpr const char* kMatmulSource = R"CLC(
#pragma OPENCL FP_CONTRACT OFF
__kernel void matmul(__global char* out_base, ulong out_offset, __global const char* a_base, ulong a_offset,
                     __global const char* b_base, ulong b_offset, __global const char* c_base, ulong c_offset,
                     long m, long n, long k, long numel,
                     long8 out_strides, long8 a_strides, long8 b_strides, long8 c_strides, ACC_T alpha, ACC_T beta) {
  long i = get_global_id(0);
  if (i >= numel) return;
  long col = i % n;
  long row = (i / n) % m;
  long batch = i / (m * n);
  // Strides in bytes: (batch, row, column); for a, (batch, row, k); for b, (batch, k, column).
  long ao = (long)a_offset + batch * a_strides.s0 + row * a_strides.s1;
  long bo = (long)b_offset + batch * b_strides.s0 + col * b_strides.s2;
  ACC_T acc = 0;
  // A multiply, then an add, in k's order: the rounding of ATen's CPU kernel for small products
  // (FP_CONTRACT is off for this program, so the compiler fuses nothing).
  for (long p = 0; p < k; ++p) {
    acc += LOAD_A((__global const A_T*)(a_base + ao + p * a_strides.s2)) *
           LOAD_B((__global const B_T*)(b_base + bo + p * b_strides.s1));
  }
  ACC_T result = alpha * acc;
#if HAS_C
  // beta == 0 ignores c, NaN and all, as BLAS does.
  if (beta != 0) {
    long co = (long)c_offset + batch * c_strides.s0 + row * c_strides.s1 + col * c_strides.s2;
    result += beta * LOAD_C((__global const C_T*)(c_base + co));
  }
#endif
  long oo = (long)out_offset + batch * out_strides.s0 + row * out_strides.s1 + col * out_strides.s2;
  STORE_OUT((__global OUT_T*)(out_base + oo), result);
}
)CLC";

// (batch, row, column) byte strides of a matrix or batch of matrices.
std::vector<int64_t> strides3(const at::Tensor& t) {
  const int64_t e = static_cast<int64_t>(t.element_size());
  if (t.dim() == 2) {
    return {0, t.stride(0) * e, t.stride(1) * e};
  }
  return {t.stride(0) * e, t.stride(1) * e, t.stride(2) * e};
}

void check_operands(const char* op, const at::Tensor& a, const at::Tensor& b, const at::Tensor& out) {
  TORCH_CHECK(
      a.scalar_type() == b.scalar_type(), "expected m1 and m2 to have the same dtype, but got: ", a.scalar_type(),
      " != ", b.scalar_type());
  TORCH_CHECK(
      out.scalar_type() == a.scalar_type(), "Expected out tensor to have dtype ", a.scalar_type(), ", but got ",
      out.scalar_type(), " instead");
  if (!at::isFloatingType(a.scalar_type())) {
    runtime::decline_kernel(op, std::string("its OpenCL C covers floating types, not ") + c10::toString(a.scalar_type()));
  }
  check_dtype(op, a.scalar_type(), a.device().index());
}

// out = alpha * a @ b (+ beta * c), batched when a and b have 3 dimensions.
void matmul(const char* op, const at::Tensor& a, const at::Tensor& b, const at::Tensor* c, const c10::Scalar& beta,
            const c10::Scalar& alpha, at::Tensor& out) {
  const bool batched = a.dim() == 3;
  const int64_t batch = batched ? a.size(0) : 1;
  const int64_t m = a.size(-2);
  const int64_t k = a.size(-1);
  const int64_t n = b.size(-1);
  std::vector<int64_t> shape = batched ? std::vector<int64_t>{batch, m, n} : std::vector<int64_t>{m, n};
  at::native::resize_output(out, shape);
  if (out.numel() == 0) {
    return;
  }
  // A result written over an operand it still reads (sharing its storage) goes through a fresh
  // tensor.
  if (out.is_alias_of(a) || out.is_alias_of(b)) {
    at::Tensor fresh = at::empty(shape, out.options());
    matmul(op, a, b, c, beta, alpha, fresh);
    out.copy_(fresh);
    return;
  }
  const c10::DeviceIndex device = out.device().index();
  const at::ScalarType accumulate = compute_type(a.scalar_type());
  const char* acc = compute_type_name(accumulate);
  std::string source = program_prelude(device);
  source += std::string("#define ACC_T ") + acc + "\n";
  source += element_macros("A", a.scalar_type(), acc);
  source += element_macros("B", b.scalar_type(), acc);
  source += element_macros("C", c != nullptr ? c->scalar_type() : a.scalar_type(), acc);
  source += element_macros("OUT", out.scalar_type(), acc);
  source += std::string("#define HAS_C ") + (c != nullptr ? "1" : "0") + "\n";
  source += kMatmulSource;
  at::Tensor expanded_c;
  if (c != nullptr) {
    expanded_c = c->expand(shape);
  }
  Launch(device, source, "matmul")
      .tensor(out)
      .tensor(a)
      .tensor(b)
      .tensor(expanded_c)
      .i64(m)
      .i64(n)
      .i64(k)
      .i64(out.numel())
      .dims(strides3(out))
      .dims(strides3(a))
      .dims(strides3(b))
      .dims(c != nullptr ? strides3(expanded_c) : std::vector<int64_t>{0, 0, 0})
      .scalar(alpha, accumulate)
      .scalar(c != nullptr ? beta : c10::Scalar(0), accumulate)
      .run(out.numel());
}

} // namespace

at::Tensor& mm_out(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out) {
  TORCH_CHECK(self.dim() == 2, "self must be a matrix");
  TORCH_CHECK(mat2.dim() == 2, "mat2 must be a matrix");
  TORCH_CHECK(
      self.size(1) == mat2.size(0), "mat1 and mat2 shapes cannot be multiplied (", self.size(0), "x", self.size(1),
      " and ", mat2.size(0), "x", mat2.size(1), ")");
  check_operands("mm.out", self, mat2, out);
  matmul("mm.out", self, mat2, nullptr, 0, 1, out);
  return out;
}

at::Tensor& addmm_out(const at::Tensor& self, const at::Tensor& mat1, const at::Tensor& mat2, const at::Scalar& beta,
                      const at::Scalar& alpha, at::Tensor& out) {
  TORCH_CHECK(mat1.dim() == 2, "mat1 must be a matrix, got ", mat1.dim(), "-D tensor");
  TORCH_CHECK(mat2.dim() == 2, "mat2 must be a matrix, got ", mat2.dim(), "-D tensor");
  TORCH_CHECK(
      mat1.size(1) == mat2.size(0), "mat1 and mat2 shapes cannot be multiplied (", mat1.size(0), "x", mat1.size(1),
      " and ", mat2.size(0), "x", mat2.size(1), ")");
  TORCH_CHECK(
      self.scalar_type() == mat1.scalar_type(), "self and mat2 must have the same dtype, but got ",
      self.scalar_type(), " and ", mat1.scalar_type());
  check_operands("addmm.out", mat1, mat2, out);
  matmul("addmm.out", mat1, mat2, &self, beta, alpha, out);
  return out;
}

at::Tensor& bmm_out(const at::Tensor& self, const at::Tensor& mat2, at::Tensor& out) {
  TORCH_CHECK(self.dim() == 3, "batch1 must be a 3D tensor");
  TORCH_CHECK(mat2.dim() == 3, "batch2 must be a 3D tensor");
  TORCH_CHECK(
      self.size(0) == mat2.size(0), "Expected size for first two dimensions of batch2 tensor to be: [",
      self.size(0), ", ", self.size(2), "] but got: [", mat2.size(0), ", ", mat2.size(1), "].");
  TORCH_CHECK(
      self.size(2) == mat2.size(1), "Expected size for first two dimensions of batch2 tensor to be: [",
      self.size(0), ", ", self.size(2), "] but got: [", mat2.size(0), ", ", mat2.size(1), "].");
  check_operands("bmm.out", self, mat2, out);
  matmul("bmm.out", self, mat2, nullptr, 0, 1, out);
  return out;
}

} // namespace scaffold::opencl_ops
