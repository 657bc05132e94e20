//===- MemoryPlanner.h - offsets in one arena by liveness -------*- C++ -*-===//
//
// Every tensor of a training step lives in one device allocation, the arena.
// The planner gives each buffer an offset so that two buffers share bytes
// only when their lifetimes do not overlap. Persistent state (parameters,
// optimizer moments, inputs) lives for the whole step and is planned like
// any other buffer with the full range.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_RUNTIME_MEMORYPLANNER_H
#define DLC_RUNTIME_MEMORYPLANNER_H

#include "dlc/runtime/Status.h"

#include <cstdint>
#include <vector>

namespace dlc::rt {

/// Offsets are multiples of this: 256 bytes satisfies every vector load of
/// the CPU kernels and cuDNN / cuBLASLt's alignment requirements.
constexpr int64_t kArenaAlignment = 256;

/// One buffer to place: its size and the kernels (by index in step order)
/// that first and last touch it, inclusive.
struct BufferLifetime {
  int64_t bytes = 0;
  int64_t firstUse = 0;
  int64_t lastUse = 0;
};

struct MemoryPlan {
  /// Offset of each buffer, in the order given.
  std::vector<int64_t> offsets;
  /// Arena size: the end of the highest placed buffer.
  int64_t peakBytes = 0;
  /// Sum of every buffer's aligned size: the arena without any reuse.
  int64_t totalBytes = 0;
  /// The most bytes alive at one time: no plan can be smaller.
  int64_t lowerBoundBytes = 0;
};

/// Rounds up to kArenaAlignment.
int64_t alignArena(int64_t bytes);

/// Places every buffer, greedily by decreasing size, at the lowest offset
/// that overlaps no already placed buffer whose lifetime meets its own
/// (the "greedy by size" offset planner of TFLite). Deterministic: equal
/// sizes keep their given order. A negative size or an inverted lifetime
/// is an invalid argument.
StatusOr<MemoryPlan> planMemory(const std::vector<BufferLifetime> &buffers);

} // namespace dlc::rt

#endif // DLC_RUNTIME_MEMORYPLANNER_H
