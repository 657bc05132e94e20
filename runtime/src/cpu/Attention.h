//===- Attention.h - what the attention kernels share -----------*- C++ -*-===//
//
// train.attention's operands seen by the CPU kernels (OpsAttention.cpp, the
// reference; FastAttention.cpp, the blocked one): q [B..., Sq, D],
// k [B..., Sk, D], v [B..., Sk, Dv], the optional additive mask broadcast to
// the scores [B..., Sq, Sk], the causal rule of train.softmax and the
// dropout mask train.dropout draws for the scores' flat index.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_CPU_ATTENTION_H
#define DLC_RUNTIME_CPU_ATTENTION_H

#include "KernelRegistration.h"

#include <cmath>
#include <string>

namespace dlc::rt::cpu {

struct AttentionDims {
  int64_t batch = 1, sq = 0, sk = 0, d = 0, dv = 0;
  float scale = 1;
  bool causal = false;
  double rate = 0;
  /// dropoutStream(seed + the rank's offset, step).
  uint64_t stream = 0;
  const float *mask = nullptr;
  /// The mask's strides over the scores' dimensions (0 where it broadcasts).
  std::vector<int64_t> maskStrides;
  std::vector<int64_t> scores;

  /// The mask's offset for row `row` of the flat [B..., Sq] rows (key 0).
  int64_t maskRow(int64_t row) const {
    int64_t offset = 0;
    for (int64_t d = static_cast<int64_t>(scores.size()) - 2; d >= 0; --d) {
      offset += (row % scores[d]) * maskStrides[d];
      row /= scores[d];
    }
    return offset;
  }
  int64_t maskKeyStride() const { return maskStrides.back(); }
  /// Keys of query i visible under the causal rule: j < visibleKeys(i).
  int64_t visibleKeys(int64_t i) const {
    return causal ? std::min(sk, std::max<int64_t>(0, i + (sk - sq) + 1)) : sk;
  }
  /// The scores' flat index of (row, key): the dropout mask's counter.
  uint64_t scoreIndex(int64_t row, int64_t key) const {
    return static_cast<uint64_t>(row * sk + key);
  }
};

/// Reads the dims and attributes; `maskOperand` is where the mask is when
/// the kernel has one (3 forward, 6 backward). Fails with one line on a
/// rate outside [0, 1).
inline Status attentionDims(const KernelContext &c, size_t maskOperand, AttentionDims &a) {
  const TensorRef &q = c.in(0), &k = c.in(1), &v = c.in(2);
  a.sq = q.dim(-2);
  a.d = q.dim(-1);
  a.sk = k.dim(-2);
  a.dv = v.dim(-1);
  a.batch = q.numElements() / std::max<int64_t>(a.sq * a.d, 1);
  a.scale = static_cast<float>(c.kernel().floatAttr("scale", 1.0));
  a.causal = c.kernel().intAttr("causal", 0) != 0;
  a.rate = c.kernel().floatAttr("dropout_rate", 0.0);
  if (!(a.rate >= 0 && a.rate < 1))
    return c.error("dropout_rate must be in [0, 1), got " + std::to_string(a.rate));
  uint64_t seed = static_cast<uint64_t>(c.kernel().intAttr("seed", 0));
  a.stream = dropoutStream(seed + dropoutSeedOffset(c.rank()), static_cast<uint64_t>(c.step()));
  a.scores.assign(q.shape->begin(), q.shape->end() - 1);
  a.scores.push_back(a.sk);
  if (c.numInputs() > maskOperand) {
    const TensorRef &m = c.in(maskOperand);
    a.mask = m.f32();
    a.maskStrides = broadcastStrides(*m.shape, a.scores);
  } else {
    a.maskStrides.assign(a.scores.size(), 0);
  }
  return Status::ok();
}

} // namespace dlc::rt::cpu

#endif // DLC_RUNTIME_CPU_ATTENTION_H
