// Advanced indexing (x[index], x[index] = values) decided from metadata: when
// the result's sizes follow from the operands' sizes and dtypes alone, a
// kernel can allocate or check its output at the call and launch the CPU
// kernel, whose only remaining error is an index out of range -- reported at
// the next synchronisation, as CUDA's device-side assert is. A boolean mask's
// result depends on its data; such calls, and any call these rules are not
// sure of, run inline, where the CPU kernel raises PyTorch's own errors.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include <ATen/core/List.h>
#include <ATen/core/Tensor.h>
#include <c10/util/DimVector.h>

namespace scaffold::runtime {

// The sizes of self[indices], as ATen's advanced indexing computes them, when
// every defined index is an int64 or int32 tensor, the indices broadcast
// together, there are no more of them than self has dimensions, and no
// indexed dimension is empty; nullopt otherwise (and when no index is
// defined).
std::optional<c10::DimVector> index_result_sizes(
    const at::Tensor& self,
    const c10::List<std::optional<at::Tensor>>& indices);

// The operands of a launched indexing kernel (a HostKernelLaunch): the tensor
// it writes, the tensor it reads, then the indices, an undefined tensor for
// each absent one. Raises ATen's overlap error where the written tensor shares
// memory with another (the CPU kernel, on separate host views, cannot tell).
// index_list turns `count` of the launch's host views, from `first` on, back
// into the list the CPU kernel takes.
std::vector<at::Tensor> indexing_operands(
    const at::Tensor& written,
    const at::Tensor& read,
    const c10::List<std::optional<at::Tensor>>& indices);
c10::List<std::optional<at::Tensor>> index_list(const std::vector<at::Tensor>& views, size_t first, size_t count);

} // namespace scaffold::runtime
