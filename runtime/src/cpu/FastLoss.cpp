//===- FastLoss.cpp - the fast backend's cross-entropy ---------------------===//
//
// The reference computes softmax_cross_entropy in double on one thread and
// its gradient with two exponentials per logit (OpsDense.cpp): on BERT-base's
// 30,522-class head at batch 4 that was 311 ms of a 3.4 s CPU step. These
// compute each position's row in float on its own thread (one exponential
// per logit in the gradient, the host prelude's vectorizable e^x) and add the
// rows' losses in position order, so the result does not depend on the
// thread count.
//
//===----------------------------------------------------------------------===//

#include "FastHost.h"

#include "../codegen/kernels/HostMath.h"

#include <cmath>
#include <limits>
#include <vector>

namespace dlc::rt::cpu {

namespace {

/// Positions per thread share: a row is `classes` logits, often thousands.
constexpr int64_t kRowsGrain = 4;

/// The labels' range check, before any thread starts: the first bad label
/// in position order, as the reference reports it.
Status checkLabels(const KernelContext &c, const TensorRef &labels, const CrossEntropyShape &s,
                   int64_t &counted) {
  counted = 0;
  for (int64_t i = 0, n = labels.numElements(); i < n; ++i) {
    int64_t label = indexAt(labels, i);
    if (label == s.ignore)
      continue;
    if (label < 0 || label >= s.classes)
      return c.error("label " + std::to_string(label) + " is outside [0, " +
                     std::to_string(s.classes) + ") and not the ignore index");
    ++counted;
  }
  return Status::ok();
}

/// The largest of n contiguous logits, NaN if any is NaN (as PyTorch's max).
DLC_HOST_CLONES float rowMax(const float *row, int64_t n) {
  float lanes[kLanes];
  for (float &l : lanes)
    l = -std::numeric_limits<float>::infinity();
  int64_t k = 0;
  for (; k + kLanes <= n; k += kLanes)
    for (int64_t l = 0; l < kLanes; ++l) {
      float v = row[k + l];
      lanes[l] = (v != v || v > lanes[l]) ? v : lanes[l];
    }
  for (int64_t l = 0; k + l < n; ++l) {
    float v = row[k + l];
    lanes[l] = (v != v || v > lanes[l]) ? v : lanes[l];
  }
  float mx = lanes[0];
  for (float v : lanes)
    mx = (v != v || v > mx) ? v : mx;
  return mx;
}

/// e[k] = e^(row[k] - mx) for n contiguous logits, and their sum in double
/// (in kLanes partial sums, added in a fixed order).
DLC_HOST_CLONES double expAndSum(const float *row, int64_t n, float mx, float *e) {
  for (int64_t k = 0; k < n; ++k)
    e[k] = dlc_expf(row[k] - mx);
  double lanes[kLanes] = {};
  int64_t k = 0;
  for (; k + kLanes <= n; k += kLanes)
    for (int64_t l = 0; l < kLanes; ++l)
      lanes[l] += static_cast<double>(e[k + l]);
  for (int64_t l = 0; k + l < n; ++l)
    lanes[l] += static_cast<double>(e[k + l]);
  double sum = 0;
  for (double l : lanes)
    sum += l;
  return sum;
}

/// A position's logits as a contiguous row: in place when the classes are
/// the innermost dimension, else gathered into `scratch`.
const float *contiguousRow(const float *first, const CrossEntropyShape &s,
                           std::vector<float> &scratch) {
  if (s.inner == 1)
    return first;
  scratch.resize(static_cast<size_t>(s.classes));
  for (int64_t k = 0; k < s.classes; ++k)
    scratch[k] = first[k * s.inner];
  return scratch.data();
}

/// Where position `pos`'s first class lies, in a buffer whose positions
/// are `ld` elements apart (the classes, or a padded row's stride).
int64_t rowStart(const CrossEntropyShape &s, int64_t ld, int64_t pos) {
  return (pos / s.inner) * ld * s.inner + pos % s.inner;
}

Status softmaxCrossEntropy(const KernelContext &c) {
  const TensorRef &logits = c.in(0), &labels = c.in(1);
  CrossEntropyShape s = crossEntropyShape(c, logits);
  int64_t counted = 0;
  if (Status ok = checkLabels(c, labels, s, counted); !ok.isOk())
    return ok;
  const float *L = logits.f32();
  std::vector<double> loss(static_cast<size_t>(s.outer * s.inner), 0.0);
  parallelFor(0, s.outer * s.inner, [&](int64_t pos) {
    int64_t label = indexAt(labels, pos);
    if (label == s.ignore)
      return;
    thread_local std::vector<float> scratch, e;
    const float *row = contiguousRow(L + rowStart(s, s.ld, pos), s, scratch);
    e.resize(static_cast<size_t>(s.classes));
    float mx = rowMax(row, s.classes);
    double sum = expAndSum(row, s.classes, mx, e.data());
    loss[pos] = mx + std::log(sum) - row[label];
  }, kRowsGrain);
  double total = 0;
  for (double l : loss)
    total += l;
  // As the reference: 0 when every label is ignored.
  c.out(0).f32()[0] = counted ? static_cast<float>(total / counted) : 0.0f;
  return Status::ok();
}

Status softmaxCrossEntropyBackward(const KernelContext &c) {
  const TensorRef &logits = c.in(1), &labels = c.in(2);
  CrossEntropyShape s = crossEntropyShape(c, logits);
  int64_t counted = 0;
  if (Status ok = checkLabels(c, labels, s, counted); !ok.isOk())
    return ok;
  const float scale = counted ? c.in(0).f32()[0] / static_cast<float>(counted) : 0.0f;
  const float *L = logits.f32();
  float *D = c.out(0).f32();
  // The gradient's rows may be padded apart from the logits' (RowStride.h).
  const int64_t ldD = c.out(0).rowStride > 0 ? c.out(0).rowStride : s.classes;
  parallelFor(0, s.outer * s.inner, [&](int64_t pos) {
    float *grad = D + rowStart(s, ldD, pos);
    int64_t label = indexAt(labels, pos);
    if (label == s.ignore || counted == 0) {
      for (int64_t k = 0; k < s.classes; ++k)
        grad[k * s.inner] = 0;
      return;
    }
    thread_local std::vector<float> scratch, e;
    const float *row = contiguousRow(L + rowStart(s, s.ld, pos), s, scratch);
    // The exponentials go straight to the gradient when it is contiguous.
    e.resize(s.inner == 1 ? 0 : static_cast<size_t>(s.classes));
    float *out = s.inner == 1 ? grad : e.data();
    const float inv = static_cast<float>(1.0 / expAndSum(row, s.classes, rowMax(row, s.classes), out));
    for (int64_t k = 0; k < s.classes; ++k)
      out[k] = (out[k] * inv - (k == label ? 1.0f : 0.0f)) * scale;
    if (s.inner != 1)
      for (int64_t k = 0; k < s.classes; ++k)
        grad[k * s.inner] = out[k];
  }, kRowsGrain);
  return Status::ok();
}

} // namespace

void registerFastLossKernels(KernelRegistry &r) {
  r[OpId::kSoftmaxCrossEntropy] = softmaxCrossEntropy;
  r[OpId::kSoftmaxCrossEntropyBackward] = softmaxCrossEntropyBackward;
}

} // namespace dlc::rt::cpu
