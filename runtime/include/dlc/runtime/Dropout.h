//===- Dropout.h - the dropout mask every backend draws ----------*- C++ -*-===//
//
// One definition of which elements a dropout keeps, for the reference and
// fast CPU kernels; the CUDA preludes (codegen/kernels/Prelude.cuh's
// dlc_keep, cuda/kernels/Common.cuh's dlc_hw_keep) spell the same
// integers, and the tests check them against these bit for bit.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_DROPOUT_H
#define DLC_RUNTIME_DROPOUT_H

#include "dlc/runtime/Collective.h"

#include <cstdint>

namespace dlc::rt {

/// The dropout keep decision: a counter-based hash of (seed, step, index)
/// (splitmix64 finalizers), so the backward pass and any replay of the step
/// regenerate the same mask without storing it. dropoutStream hashes
/// (seed, step) once per kernel; dropoutKeeps decides element `index`.
/// train.dropout and train.attention's dropout both draw through these.
inline uint64_t dropoutMix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
inline uint64_t dropoutStream(uint64_t seed, uint64_t step) {
  return dropoutMix(seed * kDropoutSeedMultiplier + step);
}
/// An element is kept where the top 53 bits of its hash, as a fraction of
/// 2^53, reach the rate: (h >> 11) * 2^-53 >= rate. That product is exact,
/// so the test is the integer one (h >> 11) >= ceil(rate * 2^53), this
/// threshold (0 keeps all, 2^53 none; a NaN rate keeps none, as the
/// comparison with NaN does). No conversion to double per element: under
/// half the time of a score row's mask on an AVX2 core (clang and gcc).
inline uint64_t dropoutThreshold(double rate) {
  constexpr double kTwo53 = 9007199254740992.0;
  if (!(rate > 0.0))
    return rate <= 0.0 ? 0 : uint64_t(1) << 53;
  if (!(rate < 1.0))
    return uint64_t(1) << 53;
  double scaled = rate * kTwo53; // exact: a power-of-two scaling
  uint64_t t = static_cast<uint64_t>(scaled);
  return static_cast<double>(t) < scaled ? t + 1 : t;
}
inline bool dropoutKeepsAbove(uint64_t stream, uint64_t index, uint64_t threshold) {
  return (dropoutMix(stream + index) >> 11) >= threshold;
}
inline bool dropoutKeeps(uint64_t stream, uint64_t index, double rate) {
  return dropoutKeepsAbove(stream, index, dropoutThreshold(rate));
}

} // namespace dlc::rt

#endif // DLC_RUNTIME_DROPOUT_H
