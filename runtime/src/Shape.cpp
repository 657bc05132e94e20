//===- Shape.cpp - element counts and strides of a shape ------------------===//

#include "dlc/runtime/Shape.h"

namespace dlc::rt {

int64_t numElements(const std::vector<int64_t> &shape, size_t firstDim) {
  int64_t n = 1;
  for (size_t d = firstDim; d < shape.size(); ++d)
    n *= shape[d];
  return n;
}

std::vector<int64_t> rowMajorStrides(const std::vector<int64_t> &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

} // namespace dlc::rt
