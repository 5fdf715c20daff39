// Kernels of aten::convolution_overrideable for the foo backend.
// Created by scaffold-backend from yaml/foo.yaml; this file is yours. Regeneration updates
// the kernel signatures when PyTorch changes them and keeps every line you write.
#include "native/convolution_overrideable.h"

#include <c10/util/Exception.h>

#include "core_ops.h"

namespace foo {

at::Tensor convolution_overrideable(const at::Tensor & input, const at::Tensor & weight, const ::std::optional<at::Tensor> & bias, at::IntArrayRef stride, at::IntArrayRef padding, at::IntArrayRef dilation, bool transposed, at::IntArrayRef output_padding, int64_t groups) {
  return scaffold::runtime::convolution_overrideable(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups);
}

}  // namespace foo
