//===- FastHost.h - what the fast host kernels share ------------*- C++ -*-===//
//
// The fast backend's own kernels (Fast*.cpp) compute in float over
// contiguous rows, in loops GCC vectorizes, and give the same bytes for
// every thread count: work is cut into parts by the shape alone, each
// output is one part's, and sums across parts are added in part order.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_CPU_FASTHOST_H
#define DLC_RUNTIME_CPU_FASTHOST_H

#include "KernelRegistration.h"

#include <algorithm>
#include <cstdint>

namespace dlc::rt::cpu {

/// Floats a part of a row-parallel kernel covers at least: tens of
/// microseconds of streaming, against about one to wake a thread.
constexpr int64_t kPartElements = 1 << 14;

/// Rows of `width` elements a part takes: at least one, about kPartElements.
inline int64_t rowsPerPart(int64_t width) {
  return std::max<int64_t>(1, kPartElements / std::max<int64_t>(width, 1));
}

/// Independent partial sums a row sum keeps. GCC does not reorder a float
/// sum into vector lanes without -ffast-math; these lanes are that order,
/// written out, so it is the same in every build and on every thread.
constexpr int kLanes = 16;

/// term(0) + ... + term(n - 1) in float: element i goes to lane i % kLanes,
/// and the lanes are added pairwise at the end.
/// Inlined, so that a DLC_HOST_CLONES caller vectorizes it for its own ISA.
template <typename Term> [[gnu::always_inline]] inline float laneSum(int64_t n, Term term) {
  float lane[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int j = 0; j < kLanes; ++j)
      lane[j] += term(i + j);
  for (int j = 0; i + j < n; ++j)
    lane[j] += term(i + j);
  for (int width = kLanes / 2; width > 0; width /= 2)
    for (int j = 0; j < width; ++j)
      lane[j] += lane[j + width];
  return lane[0];
}

} // namespace dlc::rt::cpu

#endif // DLC_RUNTIME_CPU_FASTHOST_H
