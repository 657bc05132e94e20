//===- MemoryPlanner.cpp - offsets in one arena by liveness ---------------===//

#include "dlc/runtime/MemoryPlanner.h"

#include <algorithm>
#include <numeric>
#include <string>

namespace dlc::rt {

int64_t alignArena(int64_t bytes) {
  return (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
}

StatusOr<MemoryPlan> planMemory(const std::vector<BufferLifetime> &buffers) {
  for (size_t i = 0; i < buffers.size(); ++i) {
    const BufferLifetime &b = buffers[i];
    if (b.bytes < 0 || b.firstUse < 0 || b.lastUse < b.firstUse)
      return Status(StatusCode::kInvalidArgument,
                    "buffer #" + std::to_string(i) + " has size " +
                        std::to_string(b.bytes) + " and lifetime [" +
                        std::to_string(b.firstUse) + ", " +
                        std::to_string(b.lastUse) + "]");
  }

  MemoryPlan plan;
  plan.offsets.assign(buffers.size(), 0);
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return buffers[a].bytes > buffers[b].bytes;
  });

  // Placed buffers as (offset, end, index), kept sorted by offset so the
  // search for a gap is one pass.
  struct Placed {
    int64_t offset, end;
    size_t index;
  };
  std::vector<Placed> placed;
  for (size_t index : order) {
    const BufferLifetime &b = buffers[index];
    int64_t size = alignArena(b.bytes);
    plan.totalBytes += size;
    int64_t offset = 0;
    if (size > 0) {
      for (const Placed &p : placed) {
        const BufferLifetime &q = buffers[p.index];
        bool liveTogether = b.firstUse <= q.lastUse && q.firstUse <= b.lastUse;
        if (!liveTogether || p.end <= offset)
          continue;
        if (p.offset >= offset + size)
          break; // the gap before p fits
        offset = std::max(offset, p.end);
      }
    }
    plan.offsets[index] = offset;
    plan.peakBytes = std::max(plan.peakBytes, offset + size);
    Placed entry{offset, offset + size, index};
    placed.insert(std::upper_bound(placed.begin(), placed.end(), entry,
                                   [](const Placed &a, const Placed &b) {
                                     return a.offset < b.offset;
                                   }),
                  entry);
  }

  // The lower bound: the most aligned bytes alive during one kernel.
  int64_t steps = 0;
  for (const BufferLifetime &b : buffers)
    steps = std::max(steps, b.lastUse + 1);
  std::vector<int64_t> delta(steps + 1, 0);
  for (const BufferLifetime &b : buffers) {
    delta[b.firstUse] += alignArena(b.bytes);
    delta[b.lastUse + 1] -= alignArena(b.bytes);
  }
  int64_t live = 0;
  for (int64_t d : delta) {
    live += d;
    plan.lowerBoundBytes = std::max(plan.lowerBoundBytes, live);
  }
  return plan;
}

} // namespace dlc::rt
