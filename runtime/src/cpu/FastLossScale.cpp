//===- FastLossScale.cpp - the fast backend's loss-scale status ------------===//
//
// loss_scale_status looks for an inf or a NaN in every gradient of the step
// (BERT-base: 110M floats); the reference tests them one at a time on one
// thread. Here fixed chunks of the gradients are tested in parallel by
// their exponent bits, a branch-free loop GCC vectorizes; the answer, one
// bit, does not depend on the thread count.
//
//===----------------------------------------------------------------------===//

#include "FastHost.h"

#include <cstring>
#include <utility>
#include <vector>

namespace dlc::rt::cpu {

namespace {

/// Whether any of x[0, n) is an inf or a NaN: all exponent bits set.
DLC_HOST_CLONES bool anyNonFinite(const float *x, int64_t n) {
  constexpr uint32_t kExponent = 0x7f800000u;
  uint32_t found = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, x + i, sizeof(bits));
    found |= static_cast<uint32_t>((bits & kExponent) == kExponent);
  }
  return found != 0;
}

/// [1 / scale, 1 if any gradient (operands 1...) holds an inf or a NaN].
Status lossScaleStatus(const KernelContext &c) {
  // Each gradient in chunks of kPartElements; chunk j of the step is
  // (gradient, offset) = chunks[j].
  std::vector<std::pair<size_t, int64_t>> chunks;
  for (size_t g = 1; g < c.numInputs(); ++g)
    for (int64_t at = 0, n = c.in(g).numElements(); at < n; at += kPartElements)
      chunks.emplace_back(g, at);
  std::vector<unsigned char> overflow(chunks.size(), 0);
  parallelFor(0, static_cast<int64_t>(chunks.size()), [&](int64_t j) {
    const TensorRef &grad = c.in(chunks[j].first);
    const int64_t at = chunks[j].second;
    overflow[j] = anyNonFinite(grad.f32() + at, std::min(kPartElements, grad.numElements() - at));
  });
  bool any = false;
  for (unsigned char o : overflow)
    any |= o != 0;
  float scale = c.in(0).f32()[0];
  c.out(0).f32()[0] = 1.0f / scale;
  c.out(0).f32()[1] = any ? 1.0f : 0.0f;
  return Status::ok();
}

} // namespace

void registerFastLossScaleKernels(KernelRegistry &r) {
  r[OpId::kLossScaleStatus] = lossScaleStatus;
}

} // namespace dlc::rt::cpu
