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

int64_t convOutputSize(int64_t in, int64_t kernel, int64_t stride, int64_t pad,
                       int64_t dilation) {
  return (in + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1;
}

int64_t poolOutputSize(int64_t in, int64_t kernel, int64_t stride, int64_t pad,
                       bool ceilMode) {
  int64_t span = in + 2 * pad - kernel + (ceilMode ? stride - 1 : 0);
  // span >= 0 whenever the window fits the padded input; floor division
  // keeps a negative span from rounding toward zero like C++ does.
  int64_t out =
      (span >= 0 ? span / stride : -((-span + stride - 1) / stride)) + 1;
  // A window starting in the right padding would see only padding.
  if (ceilMode && (out - 1) * stride >= in + pad)
    --out;
  return out;
}

} // namespace dlc::rt
