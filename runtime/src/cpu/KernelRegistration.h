//===- KernelRegistration.h - CPU kernels by op family ----------*- C++ -*-===//
//
// Each Ops*.cpp adapts one family of reference kernels to the plan's calling
// convention (buffers and attributes) and registers them by op name.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_CPU_KERNELREGISTRATION_H
#define DLC_RUNTIME_CPU_KERNELREGISTRATION_H

#include "HostClones.h"
#include "dlc/runtime/cpu/CpuExecutor.h"
#include "dlc/runtime/Collective.h"
#include "dlc/runtime/Dropout.h"
#include "dlc/runtime/Parallel.h"
#include "dlc/runtime/Shape.h"

namespace dlc::rt::cpu {

void registerShapeKernels(KernelRegistry &registry);
void registerDenseKernels(KernelRegistry &registry);
void registerSpatialKernels(KernelRegistry &registry);
void registerCollectiveKernels(KernelRegistry &registry);
/// The fast backend's own versions of reference kernels (FastLoss.cpp).
void registerFastLossKernels(KernelRegistry &registry);
/// More of them (FastHost.h): the loss scale's status (FastLossScale.cpp),
/// layer norm (FastNorm.cpp), embedding (FastEmbedding.cpp), bilinear
/// resize (FastResize.cpp).
void registerFastLossScaleKernels(KernelRegistry &registry);
void registerFastNormKernels(KernelRegistry &registry);
void registerFastEmbeddingKernels(KernelRegistry &registry);
void registerFastResizeKernels(KernelRegistry &registry);

/// The registration of train.attention and its gradient: the reference
/// (OpsAttention.cpp) and the fast backend's blocked kernels
/// (FastAttention.cpp).
void registerAttentionKernels(KernelRegistry &registry);
void registerFastAttentionKernels(KernelRegistry &registry);

// The dropout keep decision (dropoutKeeps): dlc/runtime/Dropout.h.

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

/// An axis attribute, negative counting from the end.
inline int64_t axisOf(const KernelContext &c, const char *name, int64_t fallback,
                      int64_t rank) {
  int64_t axis = c.kernel().intAttr(name, fallback);
  return axis < 0 ? axis + rank : axis;
}

/// Splits a shape around `axis` into (outer, size, inner).
inline void splitAround(const std::vector<int64_t> &shape, int64_t axis, int64_t &outer,
                        int64_t &size, int64_t &inner) {
  outer = inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  size = shape[axis];
  for (size_t d = axis + 1; d < shape.size(); ++d)
    inner *= shape[d];
}

/// Integer indices or labels, int64 or int32.
inline int64_t indexAt(const TensorRef &t, int64_t i) {
  return t.dtype == DType::kI64 ? t.i64()[i] : static_cast<const int32_t *>(t.data)[i];
}

/// softmax_cross_entropy's operands around the class axis, and the label
/// that does not count.
struct CrossEntropyShape {
  int64_t outer, classes, inner, ignore;
  /// Elements from one position's classes to the next: `classes`, or the
  /// logits' row stride where the plan padded their rows (then inner is 1,
  /// RowStride.h).
  int64_t ld;
};

inline CrossEntropyShape crossEntropyShape(const KernelContext &c, const TensorRef &logits) {
  CrossEntropyShape s;
  splitAround(*logits.shape, axisOf(c, "class_axis", 1, logits.rank()), s.outer, s.classes,
              s.inner);
  s.ignore = c.kernel().intAttr("ignore_index", -100);
  s.ld = logits.rowStride > 0 ? logits.rowStride : s.classes;
  return s;
}

} // namespace dlc::rt::cpu

#endif // DLC_RUNTIME_CPU_KERNELREGISTRATION_H
