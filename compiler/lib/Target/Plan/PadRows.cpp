//===- PadRows.cpp - aligned rows for the plan's GEMM operands ------------===//
//
// cuBLASLt picks its fast kernels only when every matrix's leading dimension
// is a multiple of 16 bytes; GPT-2's LM head writes [8192, 50257] bf16
// logits, whose rows are 100,514 bytes apart, and its three GEMMs over them
// ran at 6.6, 4.5 and 4.3 ms on an H100 where the bf16 peak allows about
// 0.64 ms each (bench/results/h100-2026-11-26). The model is not changed:
// the plan stores the same values with a few unused elements after each row.
//
//===----------------------------------------------------------------------===//

#include "PadRows.h"

#include "dlc/runtime/RowStride.h"

#include <algorithm>
#include <map>
#include <numeric>

namespace rt = ::dlc::rt;

namespace mlir::dlc {

namespace {

constexpr int64_t kRowAlignmentBytes = 16;

/// Whether the buffer's rows break 16-byte alignment and it is big enough
/// for that to matter; the storage owner is checked for role and size.
bool misaligned(const rt::PlanBuffer &b) {
  return rt::isFloatType(b.dtype) && b.shape.size() >= 2 && b.shape.back() > 0 &&
         b.shape.back() * rt::dtypeBytes(b.dtype) % kRowAlignmentBytes != 0;
}

/// An element-wise op outside any group whose operands and result share
/// one shape: it can run over the padded rows as dense ones.
bool runsOverPadding(const rt::Plan &plan, const rt::PlanKernel &k) {
  if (k.opClass != rt::OpClass::kElementwise || k.fusionGroup() >= 0 || k.outputs.empty())
    return false;
  const std::vector<int64_t> &shape = plan.buffers[k.outputs[0]].shape;
  for (const std::vector<int32_t> *ids : {&k.inputs, &k.outputs})
    for (int32_t id : *ids)
      if (plan.buffers[id].shape != shape)
        return false;
  return true;
}

struct UnionFind {
  std::vector<int32_t> parent;
  explicit UnionFind(size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0); }
  int32_t find(int32_t x) {
    while (parent[x] != x)
      x = parent[x] = parent[parent[x]];
    return x;
  }
  void join(int32_t a, int32_t b) { parent[find(a)] = find(b); }
};

} // namespace

int64_t padRows(rt::Plan &plan, std::vector<int32_t> &storageOf) {
  const size_t n = plan.buffers.size();
  // Candidate storages: misaligned temporaries whose every view keeps
  // their last dimension.
  std::vector<bool> candidate(n, false), refused(n, false);
  for (size_t id = 0; id < n; ++id) {
    const rt::PlanBuffer &b = plan.buffers[id];
    if (storageOf[id] == static_cast<int32_t>(id))
      candidate[id] = b.role == rt::BufferRole::kTemporary && misaligned(b) &&
                      rt::storagePermutation(b).empty();
  }
  for (size_t id = 0; id < n; ++id) {
    int32_t owner = storageOf[id];
    if (owner != static_cast<int32_t>(id) && candidate[owner] &&
        (plan.buffers[id].shape.size() < 2 ||
         plan.buffers[id].shape.back() != plan.buffers[owner].shape.back()))
      refused[owner] = true;
  }
  // Storages an element-wise op links are padded together; any kernel that
  // takes no row stride refuses its storages' whole set.
  UnionFind sets(n);
  std::vector<size_t> overPadding;
  for (size_t k = 0; k < plan.kernels.size(); ++k) {
    const rt::PlanKernel &kernel = plan.kernels[k];
    bool elementwise = runsOverPadding(plan, kernel);
    int32_t first = -1;
    bool touches = false;
    for (const std::vector<int32_t> *ids : {&kernel.inputs, &kernel.outputs})
      for (int32_t id : *ids) {
        // A storage that is no candidate refuses any set it joins (below).
        int32_t storage = storageOf[id];
        if (candidate[storage]) {
          touches = true;
          if (!elementwise && !rt::rowStrideRefusal(plan, kernel, id).empty())
            refused[storage] = true;
        }
        if (elementwise) {
          if (first < 0)
            first = storage;
          sets.join(storage, first);
        }
      }
    if (elementwise && touches)
      overPadding.push_back(k);
  }
  // Each set: padded when no member is refused, to the multiple of 16 bytes
  // of its narrowest element (f32 and bf16 views of one row then agree).
  std::map<int32_t, bool> setRefused;
  std::map<int32_t, int64_t> narrowest, largest;
  for (size_t id = 0; id < n; ++id) {
    if (storageOf[id] != static_cast<int32_t>(id))
      continue;
    int32_t set = sets.find(static_cast<int32_t>(id));
    if (refused[id] || !candidate[id]) {
      setRefused[set] = true;
      continue;
    }
    int64_t bytes = rt::dtypeBytes(plan.buffers[id].dtype);
    auto [it, isNew] = narrowest.try_emplace(set, bytes);
    it->second = std::min(it->second, bytes);
    largest[set] = std::max(largest[set], plan.buffers[id].bytes);
  }
  auto paddedStride = [&](int32_t storage) -> int64_t {
    int32_t set = sets.find(storage);
    if (!candidate[storage] || setRefused[set] || largest[set] < kPadRowsMinBytes)
      return 0;
    int64_t multiple = kRowAlignmentBytes / narrowest[set];
    int64_t last = plan.buffers[storage].shape.back();
    return (last + multiple - 1) / multiple * multiple;
  };

  int64_t added = 0;
  for (size_t id = 0; id < n; ++id) {
    int64_t stride = paddedStride(storageOf[id]);
    if (stride == 0)
      continue;
    rt::PlanBuffer &b = plan.buffers[id];
    int64_t dense = b.bytes;
    b.init["row_stride"] = stride;
    b.bytes = rt::storageElements(b) * rt::dtypeBytes(b.dtype);
    if (storageOf[id] == static_cast<int32_t>(id))
      added += b.bytes - dense;
  }
  // The element-wise ops run over dense views of the padded rows.
  std::map<int32_t, int32_t> viewOf;
  for (size_t k : overPadding)
    for (std::vector<int32_t> *ids : {&plan.kernels[k].inputs, &plan.kernels[k].outputs})
      for (int32_t &id : *ids) {
        int64_t stride = rt::rowStride(plan.buffers[id]);
        if (stride == 0)
          continue;
        auto [it, isNew] = viewOf.try_emplace(id, static_cast<int32_t>(plan.buffers.size()));
        if (isNew) {
          rt::PlanBuffer view;
          view.name = plan.buffers[id].name + ".rows";
          view.dtype = plan.buffers[id].dtype;
          view.shape = plan.buffers[id].shape;
          view.shape.back() = stride;
          view.role = rt::BufferRole::kTemporary;
          view.bytes = plan.buffers[id].bytes;
          view.init["view_of"] = static_cast<int64_t>(id);
          storageOf.push_back(storageOf[id]);
          plan.buffers.push_back(std::move(view));
        }
        id = it->second;
      }
  return added;
}

} // namespace mlir::dlc
