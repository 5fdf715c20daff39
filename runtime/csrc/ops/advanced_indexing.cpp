#include "advanced_indexing.h"

#include <ATen/MemoryOverlap.h>
#include <c10/core/ScalarType.h>

#include "broadcast.h"

namespace scaffold::runtime {

std::optional<c10::DimVector> index_result_sizes(
    const at::Tensor& self,
    const c10::List<std::optional<at::Tensor>>& indices) {
  const int64_t dims = self.dim();
  if (static_cast<int64_t>(indices.size()) > dims) {
    return std::nullopt;
  }
  const auto defined = [&](int64_t dim) {
    if (dim >= static_cast<int64_t>(indices.size())) {
      return false;
    }
    const std::optional<at::Tensor> index = indices.get(static_cast<size_t>(dim));
    return index.has_value() && index->defined();
  };
  c10::DimVector index_sizes;
  int64_t first = -1;
  int64_t last = -1;
  bool adjacent = true; // ATen's hasContiguousSubspace
  for (int64_t dim = 0; dim < static_cast<int64_t>(indices.size()); ++dim) {
    if (!defined(dim)) {
      continue;
    }
    const at::Tensor index = *indices.get(static_cast<size_t>(dim));
    const at::ScalarType type = index.scalar_type();
    if ((type != at::kLong && type != at::kInt) || self.size(dim) == 0 || !broadcast_into(index_sizes, index.sizes())) {
      return std::nullopt;
    }
    adjacent = adjacent && (first < 0 || last == dim - 1);
    first = first < 0 ? dim : first;
    last = dim;
  }
  if (first < 0) {
    return std::nullopt;
  }
  // Adjacent indices replace the dimensions they index where they stand;
  // indices with a dimension between them put their result first.
  if (adjacent) {
    c10::DimVector sizes(self.sizes().begin(), self.sizes().begin() + first);
    sizes.append(index_sizes.begin(), index_sizes.end());
    sizes.append(self.sizes().begin() + last + 1, self.sizes().end());
    return sizes;
  }
  c10::DimVector sizes = index_sizes;
  for (int64_t dim = 0; dim < dims; ++dim) {
    if (!defined(dim)) {
      sizes.push_back(self.size(dim));
    }
  }
  return sizes;
}

std::vector<at::Tensor> indexing_operands(
    const at::Tensor& written,
    const at::Tensor& read,
    const c10::List<std::optional<at::Tensor>>& indices) {
  std::vector<at::Tensor> operands{written, read};
  operands.reserve(2 + indices.size());
  at::assert_no_overlap(written, read);
  for (size_t i = 0; i < indices.size(); ++i) {
    const std::optional<at::Tensor> index = indices.get(i);
    const bool defined = index.has_value() && index->defined();
    if (defined) {
      at::assert_no_overlap(written, *index);
    }
    operands.push_back(defined ? *index : at::Tensor());
  }
  return operands;
}

c10::List<std::optional<at::Tensor>> index_list(const std::vector<at::Tensor>& views, size_t first, size_t count) {
  c10::List<std::optional<at::Tensor>> list;
  list.reserve(count);
  for (size_t i = first; i < first + count; ++i) {
    list.push_back(views[i].defined() ? std::optional<at::Tensor>(views[i]) : std::nullopt);
  }
  return list;
}

} // namespace scaffold::runtime
