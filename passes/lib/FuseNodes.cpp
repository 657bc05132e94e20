//===- FuseNodes.cpp - Inductor's scheduler fusion over the training step -===//
//
// TorchInductor's Scheduler.fuse_nodes (torch/_inductor/scheduler.py),
// written for the train dialect. Each op is a scheduler node
// (FusionUtils.h inductorNodeOf): pointwise, reduction (numel, rnumel),
// template (a GEMM or convolution that takes epilogues) or extern. Then, for
// up to `rounds` rounds, until a round fuses nothing:
//
//   get_possible_fusions  every pair of groups that touch one buffer (a
//                         value either reads or writes), each with the next
//                         64 groups of that buffer, that can_fuse accepts;
//   score_fusion          sorted by (not a template's epilogue and shares
//                         bytes, same reduction-ness and shares bytes,
//                         bytes shared, proximity in the schedule);
//   fuse                  in that order, each pair fused if can_fuse still
//                         accepts the groups the two nodes are now in.
//
// can_fuse is FusionUtils.h inductorCanFuse (extern nodes, at most one
// library call per group, templates, max-fusion-size, (numel, rnumel))
// plus what the schedule decides:
// a vertical pair's consumer reads the producer's buffers at the index
// they were written, no node outside the pair lies on a path between them
// (can_fuse_vertical's intermediate nodes), and a horizontal pair shares a
// read. Inductor then reorders its schedule; dlc keeps the step's order, so
// a group must also be able to run where its last op is (canFormGroup).
//
//===----------------------------------------------------------------------===//

#include "dlc/Transforms/FusionRewrite.h"
#include "dlc/Transforms/FusionUtils.h"
#include "dlc/Transforms/Passes.h"

#include "dlc/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/BitVector.h"

#include <tuple>

#define DEBUG_TYPE "dlc-fuse-nodes"

namespace mlir::dlc {
#define GEN_PASS_DEF_FUSENODESPASS
#include "dlc/Transforms/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;
using namespace mlir::dlc;

namespace {

constexpr llvm::StringLiteral kStrategy = "inductor";
/// config.max_fusion_buffer_group_pairwise_attempts: how many later users
/// of one buffer each user is paired with.
constexpr size_t kPairwiseAttempts = 64;

/// Whether `reader` reads `value` at the index it was written: a pointwise
/// op at its output's shape, or a reduction over all of it.
bool readsAtWrittenIndex(Operation *reader, Value value, const InductorNode &node) {
  auto shape = dyn_cast<ShapedType>(value.getType());
  if (!shape || !shape.hasStaticShape())
    return false;
  std::optional<::dlc::rt::OpClass> c = train::getOpClass(reader);
  if (node.kind == InductorNode::kReduction)
    return shape.getNumElements() == node.numel * node.rnumel;
  if (node.kind != InductorNode::kPointwise || !c ||
      *c == ::dlc::rt::OpClass::kDataMovement)
    return false;
  auto result = dyn_cast<ShapedType>(reader->getResult(0).getType());
  return result && result.hasRank() && result.getShape() == shape.getShape();
}

class Scheduler {
public:
  Scheduler(Block &block, int64_t maxFusionSize, bool epilogueFusion, bool explain)
      : maxFusionSize(maxFusionSize), explain(explain) {
    for (Operation &op : block.without_terminator()) {
      orderOf[&op] = ops.size();
      ops.push_back(&op);
      kinds.push_back(inductorNodeOf(&op, epilogueFusion));
    }
    // Each op's ancestors, in order (the block is topologically sorted).
    ancestors.assign(ops.size(), llvm::BitVector(ops.size()));
    for (auto [i, op] : llvm::enumerate(ops))
      for (Value operand : op->getOperands())
        if (auto it = orderOf.find(operand.getDefiningOp()); it != orderOf.end()) {
          ancestors[i] |= ancestors[it->second];
          ancestors[i].set(it->second);
        }
    for (size_t i = 0; i < ops.size(); ++i)
      groups.push_back({{i}, kinds[i], i, i});
    groupOf.resize(ops.size());
    for (size_t i = 0; i < ops.size(); ++i)
      groupOf[i] = i;
  }

  /// Scheduler.fuse_nodes; returns the groups of two ops or more.
  SmallVector<SmallVector<Operation *>> fuse(int64_t rounds) {
    for (int64_t round = 0; round < rounds; ++round)
      if (!fuseOnce())
        break;
    if (explain)
      possibleFusions(/*explainRefusals=*/true);
    SmallVector<SmallVector<Operation *>> result;
    for (Group &g : groups) {
      if (g.members.size() < 2)
        continue;
      llvm::sort(g.members);
      SmallVector<Operation *> members;
      for (size_t m : g.members)
        members.push_back(ops[m]);
      result.push_back(std::move(members));
    }
    return result;
  }

private:
  struct Group {
    SmallVector<size_t> members; // op indices
    InductorNode node;           // what the group is to the scheduler
    size_t minOrder, maxOrder;
  };

  /// The values a group reads or writes (used_buffer_names).
  SmallVector<Value> buffersOf(const Group &g) const {
    SmallVector<Value> buffers;
    for (size_t m : g.members) {
      for (Value v : ops[m]->getOperands())
        if (!llvm::is_contained(buffers, v))
          buffers.push_back(v);
      for (Value v : ops[m]->getResults())
        if (!llvm::is_contained(buffers, v))
          buffers.push_back(v);
    }
    return buffers;
  }

  bool writes(const Group &g, Value v) const {
    Operation *def = v.getDefiningOp();
    auto it = def ? orderOf.find(def) : orderOf.end();
    return it != orderOf.end() && llvm::is_contained(g.members, it->second);
  }

  /// Whether a member of `g` reads `v`.
  bool reads(const Group &g, Value v) const {
    return llvm::any_of(g.members, [&](size_t m) {
      return llvm::is_contained(ops[m]->getOperands(), v);
    });
  }

  llvm::BitVector membersOf(const Group &g) const {
    llvm::BitVector bits(ops.size());
    for (size_t m : g.members)
      bits.set(m);
    return bits;
  }

  /// Scheduler.can_fuse for two groups, `a` scheduled before `b`.
  FusionDecision canFuse(const Group &a, const Group &b) const {
    llvm::BitVector inA = membersOf(a), inB = membersOf(b);
    bool vertical = false, sameIndex = true, sharesBuffer = false;
    for (size_t m : b.members)
      for (Value v : ops[m]->getOperands()) {
        if (writes(a, v)) {
          vertical = true;
          sameIndex &= readsAtWrittenIndex(ops[m], v, kinds[m]);
        } else if (reads(a, v)) {
          sharesBuffer = true;
        }
      }
    int64_t size = a.members.size() + b.members.size();
    if (FusionDecision d = inductorCanFuse(a.node, b.node, vertical, sameIndex, sharesBuffer,
                                           size, maxFusionSize);
        !d)
      return d;
    // can_fuse_vertical: no node outside the pair between them.
    for (size_t m : b.members)
      for (Value v : ops[m]->getOperands()) {
        auto it = v.getDefiningOp() ? orderOf.find(v.getDefiningOp()) : orderOf.end();
        if (it == orderOf.end() || inA.test(it->second) || inB.test(it->second))
          continue;
        if (ancestors[it->second].anyCommon(inA))
          return FusionDecision::refuse(Twine("'") + ops[it->second]->getName().getStringRef() +
                                        "' lies between the two nodes");
      }
    if (llvm::any_of(a.members, [&](size_t m) { return ancestors[m].anyCommon(inB); }))
      return FusionDecision::refuse("the first node depends on the second");
    SmallVector<size_t> merged(a.members);
    merged.append(b.members.begin(), b.members.end());
    llvm::sort(merged);
    SmallVector<Operation *> mergedOps;
    for (size_t m : merged)
      mergedOps.push_back(ops[m]);
    return canFormGroup(mergedOps);
  }

  /// score_fusion: bigger is fused first.
  std::tuple<bool, bool, int64_t, int64_t> score(const Group &a, const Group &b) const {
    int64_t memory = 0;
    SmallVector<Value> bufA = buffersOf(a);
    for (Value v : buffersOf(b))
      if (llvm::is_contained(bufA, v))
        memory += tensorBytes(v);
    int64_t proximity =
        -std::max(std::abs(static_cast<int64_t>(a.minOrder) - static_cast<int64_t>(b.maxOrder)),
                  std::abs(static_cast<int64_t>(b.minOrder) - static_cast<int64_t>(a.maxOrder)));
    bool notTemplate = a.node.kind != InductorNode::kTemplate; // epilogue_fusion_first = False
    bool sameReduction =
        (a.node.kind == InductorNode::kReduction) == (b.node.kind == InductorNode::kReduction);
    return {notTemplate && memory > 0, sameReduction && memory > 0, memory, proximity};
  }

  /// get_possible_fusions, sorted by score_fusion, best first; with
  /// `explainRefusals`, a remark for every pair can_fuse refuses.
  SmallVector<std::pair<size_t, size_t>> possibleFusions(bool explainRefusals) {
    // get_possible_fusions: the live groups by buffer, in schedule order.
    SmallVector<size_t> live;
    for (size_t g = 0; g < groups.size(); ++g)
      if (!groups[g].members.empty())
        live.push_back(g);
    llvm::sort(live, [&](size_t x, size_t y) { return groups[x].minOrder < groups[y].minOrder; });
    llvm::MapVector<Value, SmallVector<size_t>> byBuffer;
    for (size_t g : live)
      for (Value v : buffersOf(groups[g]))
        byBuffer[v].push_back(g);
    std::set<std::pair<size_t, size_t>> seen;
    SmallVector<std::pair<size_t, size_t>> possible;
    for (auto &[buffer, users] : byBuffer)
      for (size_t i = 0; i < users.size(); ++i)
        for (size_t j = i + 1; j < users.size() && j <= i + kPairwiseAttempts; ++j) {
          size_t a = users[i], b = users[j];
          if (!seen.insert({a, b}).second)
            continue;
          FusionDecision d = canFuse(groups[a], groups[b]);
          if (d)
            possible.push_back({a, b});
          else if (explainRefusals)
            remark(groups[a], groups[b], d);
        }
    using Score = std::tuple<bool, bool, int64_t, int64_t>;
    SmallVector<std::pair<Score, size_t>> scored;
    for (auto [i, pair] : llvm::enumerate(possible))
      scored.push_back({score(groups[pair.first], groups[pair.second]), i});
    llvm::stable_sort(scored, [](auto &x, auto &y) { return x.first > y.first; });
    SmallVector<std::pair<size_t, size_t>> sorted;
    for (auto &[s, i] : scored)
      sorted.push_back(possible[i]);
    return sorted;
  }

  /// Scheduler.fuse_nodes_once; returns whether anything was fused.
  bool fuseOnce() {
    bool fused = false;
    for (auto [a, b] : possibleFusions(/*explainRefusals=*/false)) {
      // The groups the two nodes are in now.
      a = find(a);
      b = find(b);
      if (a == b)
        continue;
      if (groups[a].minOrder > groups[b].minOrder)
        std::swap(a, b);
      if (!canFuse(groups[a], groups[b]))
        continue;
      merge(a, b);
      fused = true;
    }
    return fused;
  }

  size_t find(size_t g) const {
    while (groupOf[g] != g)
      g = groupOf[g];
    return g;
  }

  void merge(size_t a, size_t b) {
    Group &into = groups[a], &from = groups[b];
    InductorNode node = into.node;
    if (from.node.kind == InductorNode::kReduction && node.kind == InductorNode::kPointwise)
      node = from.node;
    node.libraryCalls = into.node.libraryCalls + from.node.libraryCalls;
    into.node = node;
    into.members.append(from.members.begin(), from.members.end());
    into.minOrder = std::min(into.minOrder, from.minOrder);
    into.maxOrder = std::max(into.maxOrder, from.maxOrder);
    from.members.clear();
    groupOf[b] = a;
  }

  void remark(const Group &a, const Group &b, const FusionDecision &d) {
    if (!explain || a.node.kind == InductorNode::kExtern || b.node.kind == InductorNode::kExtern)
      return;
    Operation *at = ops[b.members.front()];
    Operation *with = ops[a.members.front()];
    std::string message = ("not fused with '" + with->getName().getStringRef() +
                           "' (inductor scheduler): " + d.reason())
                              .str();
    if (said.insert({at, message}).second)
      at->emitRemark() << message;
  }

  SmallVector<Operation *> ops;
  SmallVector<InductorNode> kinds;
  DenseMap<Operation *, size_t> orderOf;
  std::vector<llvm::BitVector> ancestors;
  SmallVector<Group> groups;
  SmallVector<size_t> groupOf;
  std::set<std::pair<Operation *, std::string>> said;
  int64_t maxFusionSize;
  bool explain;
};

::dlc::rt::FusionKind kindOf(ArrayRef<Operation *> group, bool epilogueFusion) {
  bool reduces = false;
  for (Operation *op : group) {
    InductorNode node = inductorNodeOf(op, epilogueFusion);
    if (node.kind == InductorNode::kTemplate)
      return ::dlc::rt::FusionKind::kOutput;
    reduces |= node.kind == InductorNode::kReduction;
  }
  return reduces ? ::dlc::rt::FusionKind::kInput : ::dlc::rt::FusionKind::kLoop;
}

struct FuseNodesPass final : mlir::dlc::impl::FuseNodesPassBase<FuseNodesPass> {
  using Base::Base;

  void runOnOperation() override {
    if (maxFusionSize < 1 || rounds < 1) {
      getOperation()->emitError() << "dlc-fuse-nodes: max-fusion-size and rounds must be at "
                                     "least 1, got "
                                  << maxFusionSize << " and " << rounds;
      return signalPassFailure();
    }
    for (func::FuncOp func : functionsToFuse(getOperation()))
      for (Block &block : func.getBody()) {
        Scheduler scheduler(block, maxFusionSize, epilogueFusion, explain);
        for (SmallVector<Operation *> &group : scheduler.fuse(rounds)) {
          createFusedGroup(group, kindOf(group, epilogueFusion), kStrategy);
          ++numGroups;
          numFusedOps += group.size();
        }
      }
  }
};

} // namespace
