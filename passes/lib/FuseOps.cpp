//===- FuseOps.cpp - TVM Relay's FuseOps over the training step -----------===//
//
// Relay's operator fusion (src/relay/transforms/fuse_ops.cc), written for
// the train dialect. Every op gets a pattern (FusionUtils.h tvmOpPattern);
// the block's ops form IndexedForwardGraph in block order (a topological
// order), each edge carrying the reader's pattern. The post-dominator tree
// gives each op the nearest op that every path from it reaches, and the
// combined pattern of the edges on the way. GraphPartitioner then walks
// the ops in order, in phases:
//
//   0  a contraction (out-element-wise-fusable) fuses with its
//      post-dominator when the edges to it are element-wise and every op
//      on the paths is element-wise or broadcast: its epilogue; element-wise
//      and broadcast ops fuse into a post-dominator reached through
//      injective or reduction edges;
//   1  injective ops too (after contractions have taken their epilogues);
//   2  injective ops into tuples (Relay's concatenate takes a tuple; dlc's
//      concat takes its operands, so there is nothing to do).
//
// Fusing commits every op on every path from the op to its post-dominator
// into the post-dominator's group, up to max-depth ops a group. Because a
// group ends at a post-dominator, it has one result read outside; an op
// whose result the step returns, or that reaches the step's end by two
// paths that never meet, fuses into nothing. In training, the activations
// that the backward pass reads again are such ops, which is why TVM fuses
// far less in a training step than in inference.
//
//===----------------------------------------------------------------------===//

#include "dlc/Transforms/FusionRewrite.h"
#include "dlc/Transforms/FusionUtils.h"
#include "dlc/Transforms/Passes.h"

#include "dlc/Dialect/Train/IR/TrainOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#define DEBUG_TYPE "dlc-fuse-ops"

namespace mlir::dlc {
#define GEN_PASS_DEF_FUSEOPSPASS
#include "dlc/Transforms/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;
using namespace mlir::dlc;

namespace {

constexpr llvm::StringLiteral kStrategy = "tvm";

/// IndexedForwardGraph: the block's ops in order, each with its readers.
struct GraphNode {
  Operation *op = nullptr;
  TvmPattern pattern = TvmPattern::kOpaque;
  /// Read by the block's terminator (a value the step returns).
  bool externRef = false;
  SmallVector<std::pair<unsigned, TvmPattern>> outputs; // reader, edge pattern
};

/// DominatorTree::PostDom's node.
struct DomNode {
  int parent = -1;
  int depth = 1;
  TvmPattern pattern = TvmPattern::kOpaque;
};

/// GraphPartitioner's union-find group.
struct Group {
  int parent = -1;
  TvmPattern pattern = TvmPattern::kOpaque;
  bool anchored = false; // holds an out-element-wise-fusable op
  int64_t numNodes = 1;
};

TvmPattern combine(TvmPattern a, TvmPattern b) { return a > b ? a : b; }

class Partitioner {
public:
  Partitioner(Block &block, int64_t maxDepth, bool explain, bool fuseEpilogues)
      : maxDepth(maxDepth), explain(explain), fuseEpilogues(fuseEpilogues) {
    buildGraph(block);
    buildPostDominators();
    groups.resize(nodes.size());
    for (auto [i, node] : llvm::enumerate(nodes)) {
      groups[i].pattern = node.pattern;
      groups[i].anchored = node.pattern == TvmPattern::kOutEWiseFusable;
    }
  }

  /// GraphPartitioner::Partition: the three phases, then each group's ops.
  SmallVector<SmallVector<Operation *>> partition() {
    for (int phase = 0; phase < 3; ++phase)
      runFuse(phase);
    DenseMap<int, unsigned> slot;
    SmallVector<SmallVector<Operation *>> result;
    for (auto [i, node] : llvm::enumerate(nodes)) {
      int root = findRoot(i);
      auto [it, added] = slot.try_emplace(root, result.size());
      if (added)
        result.emplace_back();
      result[it->second].push_back(node.op);
    }
    return result;
  }

private:
  void buildGraph(Block &block) {
    DenseMap<Operation *, unsigned> index;
    for (Operation &op : block.without_terminator()) {
      index[&op] = nodes.size();
      nodes.push_back({&op, tvmOpPattern(&op), false, {}});
    }
    for (GraphNode &node : nodes)
      for (Value result : node.op->getResults())
        for (OpOperand &use : result.getUses()) {
          Operation *reader = block.findAncestorOpInBlock(*use.getOwner());
          auto it = reader ? index.find(reader) : index.end();
          if (it == index.end())
            node.externRef = true; // the terminator, or outside the block
          else
            node.outputs.push_back({it->second, tvmEdgePattern(use)});
        }
  }

  int lca(int lhs, int rhs, TvmPattern &edgePattern) const {
    while (lhs != rhs) {
      if (lhs < 0 || rhs < 0)
        return -1;
      const DomNode &l = dom[lhs], &r = dom[rhs];
      if (l.depth < r.depth) {
        edgePattern = combine(edgePattern, r.pattern);
        rhs = r.parent;
      } else if (r.depth < l.depth) {
        edgePattern = combine(edgePattern, l.pattern);
        lhs = l.parent;
      } else {
        edgePattern = combine(edgePattern, combine(l.pattern, r.pattern));
        lhs = l.parent;
        rhs = r.parent;
      }
    }
    return lhs;
  }

  /// DominatorTree::PostDom: from the last op to the first, each op's parent
  /// is the least common ancestor of its readers.
  void buildPostDominators() {
    dom.resize(nodes.size());
    for (int i = static_cast<int>(nodes.size()) - 1; i >= 0; --i) {
      const GraphNode &node = nodes[i];
      DomNode &d = dom[i];
      if (node.externRef || node.outputs.empty()) {
        d = {-1, 1, TvmPattern::kOpaque};
        continue;
      }
      TvmPattern pattern = TvmPattern::kElemWise;
      int parent = node.outputs.front().first;
      pattern = combine(pattern, node.outputs.front().second);
      for (auto &[reader, edge] : llvm::drop_begin(node.outputs)) {
        parent = lca(parent, reader, pattern);
        pattern = combine(pattern, edge);
      }
      d = {parent, parent >= 0 ? dom[parent].depth + 1 : 1, pattern};
    }
  }

  int findRoot(int g) {
    while (groups[g].parent >= 0)
      g = groups[g].parent;
    return g;
  }

  /// Group::MergeFromTo.
  void mergeFromTo(int child, int parent) {
    child = findRoot(child);
    parent = findRoot(parent);
    if (child == parent)
      return;
    groups[parent].numNodes += groups[child].numNodes;
    groups[child].parent = parent;
    if (groups[child].anchored) {
      groups[parent].anchored = true;
      groups[parent].pattern = combine(groups[child].pattern, groups[parent].pattern);
    }
  }

  /// CheckPath: every op on every path from `src` to `sink` satisfies the
  /// group's condition; the first that does not is the reason.
  FusionDecision checkPath(unsigned src, unsigned sink, TvmPattern group) {
    visited.clear();
    for (auto &[reader, edge] : nodes[src].outputs)
      if (FusionDecision d = checkPathFrom(reader, sink, group); !d)
        return d;
    return FusionDecision::allow();
  }
  FusionDecision checkPathFrom(unsigned node, unsigned sink, TvmPattern group) {
    if (!visited.insert(node).second)
      return FusionDecision::allow();
    TvmPattern pattern = groups[findRoot(node)].pattern;
    if (FusionDecision d = tvmPathAllows(group, pattern, node == sink); !d)
      return FusionDecision::refuse(d.reason() + ": '" +
                                    nodes[node].op->getName().getStringRef() + "'");
    if (node == sink)
      return FusionDecision::allow();
    for (auto &[reader, edge] : nodes[node].outputs)
      if (FusionDecision d = checkPathFrom(reader, sink, group); !d)
        return d;
    return FusionDecision::allow();
  }

  /// CommitFuse: every op on the paths from `src` to `sink` joins the
  /// sink's group.
  void commitFuse(unsigned src, unsigned sink) {
    visited.clear();
    commitFuseFrom(src, sink, sink);
  }
  void commitFuseFrom(unsigned node, unsigned sink, unsigned target) {
    if (node == sink || !visited.insert(node).second)
      return;
    mergeFromTo(node, target);
    for (auto &[reader, edge] : nodes[node].outputs)
      commitFuseFrom(reader, sink, target);
  }

  /// CountFusedNodesWithNewChild.
  int64_t countFusedNodes(unsigned child, unsigned domParent) {
    visited.clear();
    return groups[findRoot(domParent)].numNodes + countUpToSink(child, domParent);
  }
  int64_t countUpToSink(unsigned node, unsigned sink) {
    if (node == sink || !visited.insert(node).second)
      return 0;
    int64_t sum = groups[node].numNodes;
    for (auto &[reader, edge] : nodes[node].outputs)
      sum += countUpToSink(reader, sink);
    return sum;
  }

  /// The last phase in which an op of this pattern tries to fuse: where a
  /// refusal is final and worth a remark.
  static int lastPhase(TvmPattern pattern) {
    return pattern == TvmPattern::kOutEWiseFusable ? 0 : 1;
  }

  void refuse(unsigned i, int phase, const Twine &reason) {
    if (!explain || phase != lastPhase(groups[i].pattern))
      return;
    nodes[i].op->emitRemark() << "not fused into its post-dominator (tvm fuse-ops): " << reason;
  }

  /// GraphPartitioner::RunFuse. As there, an op decides by its own group's
  /// pattern (a group's root carries the pattern of all it absorbed).
  void runFuse(int phase) {
    for (unsigned i = 0; i < nodes.size(); ++i) {
      TvmPattern pattern = groups[i].pattern;
      if (pattern == TvmPattern::kOpaque)
        continue;
      // Phase 2 fuses injective ops into tuples, which dlc does not have.
      if (phase == 2)
        continue;
      const DomNode &d = dom[i];
      if (d.parent < 0) {
        // A result of the step, or a value nothing reads, is no candidate.
        if (!nodes[i].externRef && !nodes[i].outputs.empty())
          refuse(i, phase, "its readers have no common post-dominator");
        continue;
      }
      unsigned parent = d.parent;
      if (findRoot(i) == findRoot(parent))
        continue;
      if (pattern == TvmPattern::kOutEWiseFusable && !fuseEpilogues)
        continue;
      TvmPattern dominator = groups[findRoot(parent)].pattern;
      FusionDecision decision = tvmMayFuseIntoPostDominator(pattern, d.pattern, dominator, phase);
      if (decision) {
        if (int64_t n = countFusedNodes(i, parent); n > maxDepth)
          decision = FusionDecision::refuse("the group would hold " + Twine(n) +
                                            " ops, more than max-depth " + Twine(maxDepth));
      }
      if (decision)
        decision = checkPath(i, parent, pattern);
      if (!decision) {
        refuse(i, phase,
               "'" + nodes[parent].op->getName().getStringRef() + "': " + decision.reason());
        continue;
      }
      commitFuse(i, parent);
    }
  }

  SmallVector<GraphNode> nodes;
  SmallVector<DomNode> dom;
  SmallVector<Group> groups;
  DenseSet<unsigned> visited;
  int64_t maxDepth;
  bool explain;
  bool fuseEpilogues;
};

::dlc::rt::FusionKind kindOf(ArrayRef<Operation *> group) {
  bool reduces = false;
  for (Operation *op : group) {
    TvmPattern p = tvmOpPattern(op);
    if (p == TvmPattern::kOutEWiseFusable)
      return ::dlc::rt::FusionKind::kOutput;
    reduces |= p == TvmPattern::kCommReduce;
  }
  return reduces ? ::dlc::rt::FusionKind::kInput : ::dlc::rt::FusionKind::kLoop;
}

struct FuseOpsPass final : mlir::dlc::impl::FuseOpsPassBase<FuseOpsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (maxDepth < 1) {
      getOperation()->emitError() << "dlc-fuse-ops: max-depth must be at least 1, got "
                                  << maxDepth;
      return signalPassFailure();
    }
    for (func::FuncOp func : functionsToFuse(getOperation()))
      for (Block &block : func.getBody()) {
        Partitioner partitioner(block, maxDepth, explain, fuseEpilogues);
        for (SmallVector<Operation *> &group : partitioner.partition()) {
          if (group.size() < 2)
            continue;
          // A post-dominator group ends at its post-dominator, which every
          // member reaches first: it can always run where its last op is.
          if (FusionDecision d = canFormGroup(group); !d) {
            group.back()->emitError() << "dlc-fuse-ops: a group cannot be formed: "
                                      << d.reason();
            return signalPassFailure();
          }
          createFusedGroup(group, kindOf(group), kStrategy);
          ++numGroups;
          numFusedOps += group.size();
        }
      }
  }
};

} // namespace
