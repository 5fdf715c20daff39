// The OpenCL driver's device kernels for the ops a new port writes first:
// elementwise arithmetic (broadcasting and type promotion as TensorIterator
// computes them), reductions, matrix products, softmax and an optimizer
// step, each in OpenCL C launched on the current stream (opencl_launch.h).
//
// A project made with `scaffold-backend init NAME --driver opencl` has kernel
// files for these ops that forward here in one line; the signatures are the
// generated kernel declarations. What the device code does not cover (complex
// dtypes, float64 without cl_khr_fp64, more than eight dimensions) declines
// to the copying fallback (kernel_declined.h), so every call stays correct.
#pragma once

#include <optional>

#include <ATen/core/Tensor.h>
#include <c10/core/Scalar.h>
#include <c10/core/ScalarType.h>
#include <c10/util/OptionalArrayRef.h>

namespace scaffold::opencl_ops {

// ---- Elementwise (elementwise_ops.cpp) ---------------------------------------
at::Tensor & add_out(const at::Tensor & self, const at::Tensor & other, const at::Scalar & alpha, at::Tensor & out);
at::Tensor & sub_out(const at::Tensor & self, const at::Tensor & other, const at::Scalar & alpha, at::Tensor & out);
at::Tensor & mul_out(const at::Tensor & self, const at::Tensor & other, at::Tensor & out);
at::Tensor & div_out(const at::Tensor & self, const at::Tensor & other, at::Tensor & out);
at::Tensor & neg_out(const at::Tensor & self, at::Tensor & out);
at::Tensor & abs_out(const at::Tensor & self, at::Tensor & out);
at::Tensor & exp_out(const at::Tensor & self, at::Tensor & out);
at::Tensor & log_out(const at::Tensor & self, at::Tensor & out);
at::Tensor & sqrt_out(const at::Tensor & self, at::Tensor & out);
at::Tensor & tanh_out(const at::Tensor & self, at::Tensor & out);
at::Tensor & sigmoid_out(const at::Tensor & self, at::Tensor & out);
at::Tensor relu(const at::Tensor & self);
at::Tensor & relu_(at::Tensor & self);
at::Tensor & threshold_backward_out(const at::Tensor & grad_output, const at::Tensor & self, const at::Scalar & threshold, at::Tensor & grad_input);

// ---- Reductions (reduction_ops.cpp) --------------------------------------------
at::Tensor & sum_out(const at::Tensor & self, at::OptionalIntArrayRef dim, bool keepdim, ::std::optional<at::ScalarType> dtype, at::Tensor & out);
at::Tensor & mean_out(const at::Tensor & self, at::OptionalIntArrayRef dim, bool keepdim, ::std::optional<at::ScalarType> dtype, at::Tensor & out);
at::Tensor & amax_out(const at::Tensor & self, at::IntArrayRef dim, bool keepdim, at::Tensor & out);

// ---- Matrix products (matmul_ops.cpp) -------------------------------------------
at::Tensor & mm_out(const at::Tensor & self, const at::Tensor & mat2, at::Tensor & out);
at::Tensor & addmm_out(const at::Tensor & self, const at::Tensor & mat1, const at::Tensor & mat2, const at::Scalar & beta, const at::Scalar & alpha, at::Tensor & out);
at::Tensor & bmm_out(const at::Tensor & self, const at::Tensor & mat2, at::Tensor & out);

// ---- Softmax (softmax_ops.cpp) ------------------------------------------------------
at::Tensor & _softmax_out(const at::Tensor & self, int64_t dim, bool half_to_float, at::Tensor & out);
at::Tensor & _log_softmax_out(const at::Tensor & self, int64_t dim, bool half_to_float, at::Tensor & out);
at::Tensor & _softmax_backward_data_out(const at::Tensor & grad_output, const at::Tensor & output, int64_t dim, at::ScalarType input_dtype, at::Tensor & grad_input);
at::Tensor & _log_softmax_backward_data_out(const at::Tensor & grad_output, const at::Tensor & output, int64_t dim, at::ScalarType input_dtype, at::Tensor & out);

// ---- Optimizer step (optimizer_ops.cpp) -------------------------------------------
// torch.optim.SGD(..., fused=True): one launch per parameter.
void _fused_sgd_(at::TensorList self, at::TensorList grads, at::TensorList momentum_buffer_list, double weight_decay, double momentum, double lr, double dampening, bool nesterov, bool maximize, bool is_first_step, const ::std::optional<at::Tensor> & grad_scale, const ::std::optional<at::Tensor> & found_inf);

} // namespace scaffold::opencl_ops
