//===- KernelRegistration.h - CPU kernels by op family ----------*- C++ -*-===//
//
// Each Ops*.cpp adapts one family of reference kernels to the plan's calling
// convention (buffers and attributes) and registers them by op name.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_CPU_KERNELREGISTRATION_H
#define DLC_RUNTIME_CPU_KERNELREGISTRATION_H

#include "dlc/runtime/cpu/CpuExecutor.h"
#include "dlc/runtime/Parallel.h"
#include "dlc/runtime/Shape.h"

namespace dlc::rt::cpu {

void registerShapeKernels(KernelRegistry &registry);
void registerDenseKernels(KernelRegistry &registry);
void registerSpatialKernels(KernelRegistry &registry);
void registerCollectiveKernels(KernelRegistry &registry);

/// Work below this many elements is not worth a thread.
constexpr int64_t kGrain = 1 << 14;

/// Calls body(outIndex, inIndex) for every output element, where the input
/// is read through `inStrides` (0 for a broadcast dimension) at the output
/// element's coordinates plus `inOffset`.
template <typename Body>
void forEachMapped(const std::vector<int64_t> &outShape,
                   const std::vector<int64_t> &inStrides, int64_t inOffset,
                   Body body) {
  int64_t rank = static_cast<int64_t>(outShape.size());
  int64_t count = numElements(outShape);
  parallelFor(0, count, [&](int64_t o) {
    int64_t rest = o, in = inOffset;
    for (int64_t d = rank - 1; d >= 0; --d) {
      in += (rest % outShape[d]) * inStrides[d];
      rest /= outShape[d];
    }
    body(o, in);
  }, kGrain);
}

/// Input strides aligned to a broadcast output shape: 0 where the input has
/// size 1 or lacks the dimension.
inline std::vector<int64_t> broadcastStrides(const std::vector<int64_t> &in,
                                      const std::vector<int64_t> &out) {
  std::vector<int64_t> strides(out.size(), 0);
  std::vector<int64_t> inStrides = rowMajorStrides(in);
  size_t lead = out.size() - in.size();
  for (size_t d = 0; d < in.size(); ++d)
    strides[lead + d] = in[d] == 1 ? 0 : inStrides[d];
  return strides;
}


} // namespace dlc::rt::cpu

#endif // DLC_RUNTIME_CPU_KERNELREGISTRATION_H
