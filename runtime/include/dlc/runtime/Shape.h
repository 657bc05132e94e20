//===- Shape.h - element counts and strides of a shape ----------*- C++ -*-===//
//
// The arithmetic every part of the runtime does on a buffer's dimensions,
// written once.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_SHAPE_H
#define DLC_RUNTIME_SHAPE_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace dlc::rt {

/// The elements of `shape` (1 for a scalar); from `firstDim` on, the
/// elements of one slice along the dimensions before it.
int64_t numElements(const std::vector<int64_t> &shape, size_t firstDim = 0);

/// Row-major (C order) strides of `shape`, in elements.
std::vector<int64_t> rowMajorStrides(const std::vector<int64_t> &shape);

/// Output extent of a convolution along one axis, PyTorch's floor formula:
/// (in + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1.
int64_t convOutputSize(int64_t in, int64_t kernel, int64_t stride, int64_t pad,
                       int64_t dilation);

/// Output extent of a pooling window along one axis, as PyTorch: floor or
/// ceil of (in + 2 * pad - kernel) / stride, plus one; in ceil mode a last
/// window that would start in the right padding is dropped.
int64_t poolOutputSize(int64_t in, int64_t kernel, int64_t stride, int64_t pad,
                       bool ceilMode);

} // namespace dlc::rt

#endif // DLC_RUNTIME_SHAPE_H
