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

} // namespace dlc::rt

#endif // DLC_RUNTIME_SHAPE_H
