//===- Initializers.h - parameter initialization and synthetic data -*- C++ -*-===//
//
// Backend-independent: values are produced on the host, in float32, and a
// backend copies them where it keeps its arena.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_INITIALIZERS_H
#define DLC_RUNTIME_INITIALIZERS_H

#include "dlc/runtime/Plan.h"

#include <cstdint>
#include <random>
#include <vector>

namespace dlc::rt {

/// PyTorch's fan computation: fan_in = shape[1] x receptive field,
/// fan_out = shape[0] x receptive field (a vector has fan_in = fan_out = size).
struct Fans {
  double in = 1, out = 1;
};
Fans computeFans(const std::vector<int64_t> &shape);

/// Draws the buffer's values from its `init` attributes (the formulas of
/// torch.nn.init). An unknown initializer or a missing key is an error
/// naming the buffer. Drawn in the declared order, returned in the stored
/// one (storagePermutation).
Status initializeValues(const PlanBuffer &buffer, std::mt19937_64 &rng,
                        std::vector<float> &values);

/// The exclusive upper bound of an integer input or label: the rows of the
/// embedding table it indexes or the classes of the loss it feeds; 0 when no
/// kernel tells.
int64_t integerRangeOf(const Plan &plan, int32_t bufferId);

} // namespace dlc::rt

#endif // DLC_RUNTIME_INITIALIZERS_H
