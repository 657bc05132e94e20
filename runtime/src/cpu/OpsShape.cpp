//===- OpsShape.cpp - data movement kernels of the CPU backend ------------===//
//
// transpose, concat, slice and its backward, broadcast_to and sum_to_shape:
// index arithmetic over row-major float32 buffers, parallel over output
// elements (each written by one thread), so results do not depend on the
// thread count.
//
//===----------------------------------------------------------------------===//

#include "KernelRegistration.h"

#include "dlc/runtime/Parallel.h"

#include <cstring>

namespace dlc::rt::cpu {

namespace {

Status transpose(const KernelContext &c) {
  std::vector<int64_t> perm = c.kernel().intsAttr("permutation", {});
  std::vector<int64_t> inStrides = rowMajorStrides(*c.in(0).shape), strides;
  for (int64_t p : perm)
    strides.push_back(inStrides[p]);
  const float *x = c.in(0).f32();
  float *y = c.out(0).f32();
  forEachMapped(*c.out(0).shape, strides, 0,
                [&](int64_t o, int64_t i) { y[o] = x[i]; });
  return Status::ok();
}

int64_t normalized(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

Status slice(const KernelContext &c) {
  const TensorRef &in = c.in(0);
  int64_t axis = normalized(c.kernel().intAttr("axis", 0), in.rank());
  std::vector<int64_t> strides = rowMajorStrides(*in.shape);
  int64_t offset = c.kernel().intAttr("start", 0) * strides[axis];
  strides[axis] *= c.kernel().intAttr("step", 1);
  const float *x = in.f32();
  float *y = c.out(0).f32();
  forEachMapped(*c.out(0).shape, strides, offset,
                [&](int64_t o, int64_t i) { y[o] = x[i]; });
  return Status::ok();
}

Status sliceBackward(const KernelContext &c) {
  const TensorRef &out = c.out(0);
  int64_t axis = normalized(c.kernel().intAttr("axis", 0), out.rank());
  std::memset(out.data, 0, out.numElements() * sizeof(float));
  std::vector<int64_t> strides = rowMajorStrides(*out.shape);
  int64_t offset = c.kernel().intAttr("start", 0) * strides[axis];
  strides[axis] *= c.kernel().intAttr("step", 1);
  // Scatter dy into the slice's positions; each dx element gets at most one.
  const float *dy = c.in(0).f32();
  float *dx = out.f32();
  forEachMapped(*c.in(0).shape, strides, offset,
                [&](int64_t o, int64_t i) { dx[i] = dy[o]; });
  return Status::ok();
}

Status concat(const KernelContext &c) {
  const TensorRef &out = c.out(0);
  int64_t axis = normalized(c.kernel().intAttr("axis", 0), out.rank());
  std::vector<int64_t> outStrides = rowMajorStrides(*out.shape);
  int64_t offset = 0;
  for (size_t k = 0; k < c.numInputs(); ++k) {
    const TensorRef &in = c.in(k);
    std::vector<int64_t> strides = outStrides;
    const float *x = in.f32();
    float *y = out.f32();
    forEachMapped(*in.shape, strides, offset * outStrides[axis],
                  [&](int64_t i, int64_t o) { y[o] = x[i]; });
    offset += in.dim(axis);
  }
  return Status::ok();
}

Status broadcastTo(const KernelContext &c) {
  std::vector<int64_t> strides = broadcastStrides(*c.in(0).shape, *c.out(0).shape);
  const float *x = c.in(0).f32();
  float *y = c.out(0).f32();
  forEachMapped(*c.out(0).shape, strides, 0,
                [&](int64_t o, int64_t i) { y[o] = x[i]; });
  return Status::ok();
}

/// Sums over broadcast dimensions: each output element adds its inputs in
/// index order, in one thread, so the sum is reproducible.
Status sumToShape(const KernelContext &c) {
  const std::vector<int64_t> &inShape = *c.in(0).shape, &outShape = *c.out(0).shape;
  size_t lead = inShape.size() - outShape.size();
  // Reduced dimensions of the input, with their input strides: rows
  // c.in(0).ld() elements apart where the plan padded them (RowStride.h).
  std::vector<int64_t> inStrides = rowMajorStrides(inShape);
  if (c.in(0).rowStride > 0 && inShape.back() > 0)
    for (size_t d = 0; d + 1 < inShape.size(); ++d)
      inStrides[d] = inStrides[d] / inShape.back() * c.in(0).rowStride;
  std::vector<int64_t> reducedSizes, reducedStrides, keptStrides(outShape.size());
  for (size_t d = 0; d < inShape.size(); ++d) {
    bool reduced = d < lead || (outShape[d - lead] == 1 && inShape[d] != 1);
    if (reduced) {
      reducedSizes.push_back(inShape[d]);
      reducedStrides.push_back(inStrides[d]);
    } else {
      keptStrides[d - lead] = inStrides[d];
    }
  }
  int64_t inner = numElements(reducedSizes);
  const float *x = c.in(0).f32();
  float *y = c.out(0).f32();
  forEachMapped(outShape, keptStrides, 0, [&](int64_t o, int64_t base) {
    double sum = 0;
    for (int64_t r = 0; r < inner; ++r) {
      int64_t rest = r, at = base;
      for (int64_t d = static_cast<int64_t>(reducedSizes.size()) - 1; d >= 0; --d) {
        at += (rest % reducedSizes[d]) * reducedStrides[d];
        rest /= reducedSizes[d];
      }
      sum += x[at];
    }
    y[o] = static_cast<float>(sum);
  });
  return Status::ok();
}

} // namespace

void registerShapeKernels(KernelRegistry &registry) {
  registry[OpId::kTranspose] = transpose;
  registry[OpId::kSlice] = slice;
  registry[OpId::kSliceBackward] = sliceBackward;
  registry[OpId::kConcat] = concat;
  registry[OpId::kBroadcastTo] = broadcastTo;
  registry[OpId::kSumToShape] = sumToShape;
}

} // namespace dlc::rt::cpu
