// Softmax and log-softmax, forward and backward, in OpenCL C: one work item
// per row along `dim` (any layout), which finds the row's maximum, sums the
// exponentials and writes the row.
#include "opencl_ops.h"

#include <array>
#include <string>
#include <vector>

#include <c10/core/WrapDimMinimal.h>
#include <ATen/native/Resize.h>
#include <c10/util/Exception.h>

#include "kernel_declined.h"
#include "opencl_launch.h"

namespace scaffold::opencl_ops {

namespace {

// The kernel's arguments, then the byte offsets of its row's first element in
// each operand, over the dimensions other than `dim` (last fastest).
constexpr const char* kRowOffsets = R"CLC(
#define SOFTMAX_KERNEL_BEGIN                                                                                   \
__kernel void softmax(__global char* out_base, ulong out_offset, __global const char* x_base, ulong x_offset, \
                      __global const char* y_base, ulong y_offset,                                             \
                      long8 outer_shape, long8 out_strides, long8 x_strides, long8 y_strides, int outer_ndim,  \
                      long rows, long size, long out_step, long x_step, long y_step) {                         \
  long row = get_global_id(0);                                                                                 \
  if (row >= rows) return;                                                                                     \
  ROW_OFFSETS(row)
#define ROW_OFFSETS(row)                                              \
  long sh[8], sx[8], sy[8], so[8];                                    \
  vstore8(outer_shape, 0, sh);                                        \
  vstore8(x_strides, 0, sx);                                          \
  vstore8(y_strides, 0, sy);                                          \
  vstore8(out_strides, 0, so);                                        \
  long xo = (long)x_offset, yo = (long)y_offset, oo = (long)out_offset; \
  long rest = row;                                                    \
  for (int d = outer_ndim - 1; d >= 0; --d) {                         \
    long index = rest % sh[d];                                        \
    rest /= sh[d];                                                    \
    xo += index * sx[d];                                              \
    yo += index * sy[d];                                              \
    oo += index * so[d];                                              \
  }
#define X(j) LOAD_X((__global const X_T*)(x_base + xo + (j) * x_step))
#define Y(j) LOAD_Y((__global const Y_T*)(y_base + yo + (j) * y_step))
#define OUT(j, v) STORE_OUT((__global OUT_T*)(out_base + oo + (j) * out_step), (v))
)CLC";

// x: the input; y unused.
constexpr const char* kForwardSource = R"CLC(
SOFTMAX_KERNEL_BEGIN
  ACC_T top = X(0);
  for (long j = 1; j < size; ++j) {
    ACC_T v = X(j);
    if (top == top && (v > top || v != v)) top = v;
  }
  ACC_T sum = 0;
  for (long j = 0; j < size; ++j) sum += exp(X(j) - top);
#if LOG
  ACC_T shift = top + log(sum);
  for (long j = 0; j < size; ++j) OUT(j, X(j) - shift);
#else
  for (long j = 0; j < size; ++j) OUT(j, exp(X(j) - top) / sum);
#endif
}
)CLC";

// x: the gradient of the output; y: the forward's output.
constexpr const char* kBackwardSource = R"CLC(
SOFTMAX_KERNEL_BEGIN
  ACC_T sum = 0;
#if LOG
  for (long j = 0; j < size; ++j) sum += X(j);
  for (long j = 0; j < size; ++j) OUT(j, X(j) - exp(Y(j)) * sum);
#else
  for (long j = 0; j < size; ++j) sum += X(j) * Y(j);
  for (long j = 0; j < size; ++j) OUT(j, Y(j) * (X(j) - sum));
#endif
}
)CLC";

struct RowLayout {
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  int64_t step = 0;
};

// `t`'s dimensions other than `dim` (shape, byte strides) and its byte step along `dim`.
RowLayout rows_of(const at::Tensor& t, int64_t dim) {
  RowLayout layout;
  const int64_t e = static_cast<int64_t>(t.element_size());
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (d == dim) {
      layout.step = t.stride(d) * e;
    } else {
      layout.shape.push_back(t.size(d));
      layout.strides.push_back(t.stride(d) * e);
    }
  }
  return layout;
}

void launch(const char* op, const char* body, bool log, const at::Tensor& x, const at::Tensor& y, int64_t dim,
            at::Tensor& out) {
  const c10::DeviceIndex device = out.device().index();
  const std::array<const at::Tensor*, 3> operands{&x, &y, &out};
  for (const at::Tensor* t : operands) {
    if (t->defined()) {
      if (!at::isFloatingType(t->scalar_type())) {
        runtime::decline_kernel(op, std::string("its OpenCL C covers floating types, not ") +
                                        c10::toString(t->scalar_type()));
      }
      check_dtype(op, t->scalar_type(), device);
    }
  }
  if (out.numel() == 0) {
    return;
  }
  // A 0-dimensional tensor is one row of one element.
  const bool scalar = x.dim() == 0;
  const RowLayout out_rows = rows_of(out, dim);
  const RowLayout x_rows = rows_of(x, dim);
  const RowLayout y_rows = y.defined() ? rows_of(y, dim) : RowLayout{std::vector<int64_t>(x_rows.shape.size(), 0),
                                                                     std::vector<int64_t>(x_rows.shape.size(), 0), 0};
  if (x_rows.shape.size() > static_cast<size_t>(kMaxDims)) {
    runtime::decline_kernel(op, "more than 9 dimensions");
  }
  const int64_t size = scalar ? 1 : x.size(dim);
  const int64_t rows = size == 0 ? 0 : x.numel() / size;
  // float, or double where any operand is.
  at::ScalarType accumulate = at::kFloat;
  for (const at::Tensor* t : operands) {
    if (t->defined() && t->scalar_type() == at::kDouble) {
      accumulate = at::kDouble;
    }
  }
  const char* acc = compute_type_name(accumulate);
  std::string source = program_prelude(device);
  source += std::string("#define ACC_T ") + acc + "\n";
  source += element_macros("X", x.scalar_type(), acc);
  source += element_macros("Y", y.defined() ? y.scalar_type() : x.scalar_type(), acc);
  source += element_macros("OUT", out.scalar_type(), acc);
  source += std::string("#define LOG ") + (log ? "1" : "0") + "\n";
  source += kRowOffsets;
  source += body;
  Launch(device, source, "softmax")
      .tensor(out)
      .tensor(x)
      .tensor(y)
      .dims(x_rows.shape)
      .dims(out_rows.strides)
      .dims(x_rows.strides)
      .dims(y_rows.strides)
      .i32(static_cast<int32_t>(x_rows.shape.size()))
      .i64(rows)
      .i64(size)
      .i64(out_rows.step)
      .i64(x_rows.step)
      .i64(y_rows.step)
      .run(rows);
}

at::Tensor& forward(const char* op, bool log, const at::Tensor& self, int64_t dim, bool half_to_float,
                    at::Tensor& out) {
  const int64_t wrapped = c10::maybe_wrap_dim(dim, self.dim());
  if (half_to_float) {
    TORCH_CHECK(
        self.scalar_type() == at::kHalf || self.scalar_type() == at::kBFloat16,
        "conversion is supported for Half and BFloat16 type only");
  }
  const at::ScalarType type = half_to_float ? at::kFloat : self.scalar_type();
  TORCH_CHECK(
      out.scalar_type() == type, "Expected out tensor to have dtype ", type, ", but got ", out.scalar_type(),
      " instead");
  at::native::resize_output(out, self.sizes());
  launch(op, kForwardSource, log, self, at::Tensor(), wrapped, out);
  return out;
}

at::Tensor& backward(const char* op, bool log, const at::Tensor& grad_output, const at::Tensor& output, int64_t dim,
                     at::ScalarType input_dtype, at::Tensor& grad_input) {
  const int64_t wrapped = c10::maybe_wrap_dim(dim, grad_output.dim());
  TORCH_CHECK(
      grad_input.scalar_type() == input_dtype, "Expected out tensor to have dtype ", input_dtype, ", but got ",
      grad_input.scalar_type(), " instead");
  at::native::resize_output(grad_input, grad_output.sizes());
  launch(op, kBackwardSource, log, grad_output, output, wrapped, grad_input);
  return grad_input;
}

} // namespace

at::Tensor& _softmax_out(const at::Tensor& self, int64_t dim, bool half_to_float, at::Tensor& out) {
  return forward("_softmax.out", false, self, dim, half_to_float, out);
}

at::Tensor& _log_softmax_out(const at::Tensor& self, int64_t dim, bool half_to_float, at::Tensor& out) {
  return forward("_log_softmax.out", true, self, dim, half_to_float, out);
}

at::Tensor& _softmax_backward_data_out(const at::Tensor& grad_output, const at::Tensor& output, int64_t dim,
                                       at::ScalarType input_dtype, at::Tensor& grad_input) {
  return backward("_softmax_backward_data.out", false, grad_output, output, dim, input_dtype, grad_input);
}

at::Tensor& _log_softmax_backward_data_out(const at::Tensor& grad_output, const at::Tensor& output, int64_t dim,
                                           at::ScalarType input_dtype, at::Tensor& out) {
  return backward("_log_softmax_backward_data.out", true, grad_output, output, dim, input_dtype, out);
}

} // namespace scaffold::opencl_ops
