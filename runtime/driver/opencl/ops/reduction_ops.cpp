// Reductions in OpenCL C: one work item per output element, which walks the
// reduced elements in order (floating sums compensated, Kahan's way, so a long
// row keeps float's precision). A starting point that is right for every
// layout; a tuned port splits long rows across a work group.
#include "opencl_ops.h"

#include <bitset>
#include <string>
#include <vector>

#include <ATen/WrapDimUtilsMulti.h>
#include <ATen/native/Resize.h>
#include <c10/util/Exception.h>

#include "kernel_declined.h"
#include "opencl_launch.h"

namespace scaffold::opencl_ops {

namespace {

constexpr const char* kReduceSource = R"CLC(
__kernel void reduce(__global char* out_base, ulong out_offset, __global const char* in_base, ulong in_offset,
                     long8 kept_shape, long8 kept_in_strides, long8 kept_out_strides, int kept_ndim,
                     long8 reduced_shape, long8 reduced_strides, int reduced_ndim, long out_numel, long reduced_numel) {
  long i = get_global_id(0);
  if (i >= out_numel) return;
  long ks[8], kis[8], kos[8], rs[8], rst[8];
  vstore8(kept_shape, 0, ks);
  vstore8(kept_in_strides, 0, kis);
  vstore8(kept_out_strides, 0, kos);
  vstore8(reduced_shape, 0, rs);
  vstore8(reduced_strides, 0, rst);
  long o = (long)out_offset, base = (long)in_offset, rest = i;
  for (int d = kept_ndim - 1; d >= 0; --d) {
    long index = rest % ks[d];
    rest /= ks[d];
    o += index * kos[d];
    base += index * kis[d];
  }
  ACC_T acc = 0;
  ACC_T compensation = 0;
  for (long j = 0; j < reduced_numel; ++j) {
    long offset = base, r = j;
    for (int d = reduced_ndim - 1; d >= 0; --d) {
      long index = r % rs[d];
      r /= rs[d];
      offset += index * rst[d];
    }
    ACC_T v = LOAD_IN((__global const IN_T*)(in_base + offset));
    COMBINE(acc, compensation, v, j);
  }
  STORE_OUT((__global OUT_T*)(out_base + o), FINISH(acc, reduced_numel));
}
)CLC";

// Kahan's compensated sum; an infinite partial sum is not compensated (inf - inf).
constexpr const char* kFloatingSum =
    "{ ACC_T y_ = (v) - (c); ACC_T t_ = (acc) + y_; (c) = isfinite(t_) ? (t_ - (acc)) - y_ : (ACC_T)0; (acc) = t_; }";
constexpr const char* kIntegralSum = "{ (acc) += (v); }";
// The first element, then the larger one; a NaN wins and stays.
constexpr const char* kMax = "{ if ((j) == 0 || ((acc) == (acc) && ((v) > (acc) || (v) != (v)))) (acc) = (v); }";

struct Reduction {
  const char* combine;
  const char* finish;
};

void reduce(const char* op, const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim, at::Tensor& out,
            const Reduction& reduction, at::ScalarType accumulate) {
  const c10::DeviceIndex device = self.device().index();
  check_dtype(op, self.scalar_type(), device);
  check_dtype(op, out.scalar_type(), device);
  const int64_t ndim = self.dim();
  const at::IntArrayRef dims = dim.value_or(at::IntArrayRef{});
  std::bitset<at::dim_bitset_size> reduced = dims.empty() ? std::bitset<at::dim_bitset_size>().set()
                                                          : at::dim_list_to_bitset(dims, ndim);
  std::vector<int64_t> out_shape;
  for (int64_t d = 0; d < ndim; ++d) {
    if (!reduced[d]) {
      out_shape.push_back(self.size(d));
    } else if (keepdim) {
      out_shape.push_back(1);
    }
  }
  at::native::resize_output(out, out_shape);
  const int64_t element = static_cast<int64_t>(self.element_size());
  const int64_t out_element = static_cast<int64_t>(out.element_size());
  std::vector<int64_t> kept_shape, kept_in, kept_out, reduced_shape, reduced_strides;
  int64_t out_dim = 0;
  int64_t reduced_numel = 1;
  for (int64_t d = 0; d < ndim; ++d) {
    if (reduced[d]) {
      reduced_shape.push_back(self.size(d));
      reduced_strides.push_back(self.stride(d) * element);
      reduced_numel *= self.size(d);
      out_dim += keepdim ? 1 : 0;
    } else {
      kept_shape.push_back(self.size(d));
      kept_in.push_back(self.stride(d) * element);
      kept_out.push_back(out.stride(out_dim) * out_element);
      ++out_dim;
    }
  }
  if (kept_shape.size() > static_cast<size_t>(kMaxDims) || reduced_shape.size() > static_cast<size_t>(kMaxDims)) {
    runtime::decline_kernel(op, "more than 8 kept or reduced dimensions");
  }
  if (out.numel() == 0) {
    return;
  }
  const char* acc = compute_type_name(accumulate);
  std::string source = program_prelude(device);
  source += std::string("#define ACC_T ") + acc + "\n";
  source += element_macros("IN", self.scalar_type(), acc);
  source += element_macros("OUT", out.scalar_type(), acc);
  source += std::string("#define COMBINE(acc, c, v, j) ") + reduction.combine + "\n";
  source += std::string("#define FINISH(acc, n) ") + reduction.finish + "\n";
  source += kReduceSource;
  Launch(device, source, "reduce")
      .tensor(out)
      .tensor(self)
      .dims(kept_shape)
      .dims(kept_in)
      .dims(kept_out)
      .i32(static_cast<int32_t>(kept_shape.size()))
      .dims(reduced_shape)
      .dims(reduced_strides)
      .i32(static_cast<int32_t>(reduced_shape.size()))
      .i64(out.numel())
      .i64(reduced_numel)
      .run(out.numel());
}

// The dtype a reduction's result has: `dtype` when given (and then `out`
// must have it), else out's own.
at::ScalarType result_dtype(const char* op, std::optional<at::ScalarType> dtype, const at::Tensor& out) {
  if (dtype.has_value()) {
    TORCH_CHECK(
        out.scalar_type() == *dtype, op, ": Expected out tensor to have dtype ", *dtype, ", but got ",
        out.scalar_type(), " instead");
  }
  return out.scalar_type();
}

} // namespace

at::Tensor& sum_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                    std::optional<at::ScalarType> dtype, at::Tensor& out) {
  const at::ScalarType type = result_dtype("sum", dtype, out);
  const bool floating = at::isFloatingType(type);
  const Reduction sum{floating ? kFloatingSum : kIntegralSum, "(acc)"};
  reduce("sum.IntList_out", self, dim, keepdim, out, sum, floating ? compute_type(type) : at::kLong);
  return out;
}

at::Tensor& mean_out(const at::Tensor& self, at::OptionalIntArrayRef dim, bool keepdim,
                     std::optional<at::ScalarType> dtype, at::Tensor& out) {
  const at::ScalarType in_dtype = dtype.value_or(self.scalar_type());
  TORCH_CHECK(
      at::isFloatingType(in_dtype) || at::isComplexType(in_dtype), "mean(): could not infer output dtype. ",
      (dtype.has_value() ? "Optional" : "Input"), " dtype must be either a floating point or complex dtype. Got: ",
      in_dtype);
  const at::ScalarType type = result_dtype("mean", dtype, out);
  const Reduction mean{kFloatingSum, "((acc) / (ACC_T)(n))"};
  reduce("mean.out", self, dim, keepdim, out, mean, compute_type(type));
  return out;
}

at::Tensor& amax_out(const at::Tensor& self, at::IntArrayRef dim, bool keepdim, at::Tensor& out) {
  TORCH_CHECK(
      self.scalar_type() == out.scalar_type(), "Expected the dtype for input and out to match, but got ",
      self.scalar_type(), " for input's dtype and ", out.scalar_type(), " for out's dtype.");
  if (self.numel() == 0) {
    const auto reduced = at::dim_list_to_bitset(dim, self.dim());
    for (int64_t d = 0; d < self.dim(); ++d) {
      TORCH_CHECK_INDEX(
          !(dim.empty() || reduced[d]) || self.size(d) != 0, "amax(): Expected reduction dim ", d,
          " to have non-zero size.");
    }
  }
  const Reduction max{kMax, "(acc)"};
  reduce("amax.out", self, dim, keepdim, out, max, compute_type(self.scalar_type()));
  return out;
}

} // namespace scaffold::opencl_ops
