// NumPy's broadcasting rule on shapes, without ATen's exception on a mismatch:
// for code that decides whether a fast path applies and leaves the error, if
// any, to the CPU kernel it falls back to.
#pragma once

#include <cstddef>
#include <cstdint>

#include <c10/util/ArrayRef.h>
#include <c10/util/DimVector.h>

namespace scaffold::runtime {

// Broadcasts `shape` with `sizes` in place (the rule of infer_size); false
// when they do not broadcast.
inline bool broadcast_into(c10::DimVector& shape, c10::IntArrayRef sizes) {
  if (shape.size() < sizes.size()) {
    shape.insert(shape.begin(), sizes.size() - shape.size(), 1);
  }
  const size_t offset = shape.size() - sizes.size();
  for (size_t i = 0; i < sizes.size(); ++i) {
    int64_t& s = shape[offset + i];
    if (s == sizes[i] || sizes[i] == 1) {
      continue;
    }
    if (s != 1) {
      return false;
    }
    s = sizes[i];
  }
  return true;
}

} // namespace scaffold::runtime
