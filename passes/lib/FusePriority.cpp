//===- FusePriority.cpp - XLA's priority fusion on dlc's cost model -------===//
//
// XLA's PriorityFusion (xla/service/gpu/transforms/priority_fusion.cc), the
// fusion pass of XLA's GPU pipeline since 2024. Every fusible op starts as a
// group of its own; a group as producer has a priority, the time saved by
// fusing it into all its consumers (recomputed in each):
//
//   priority = t(producer) + sum_c t(c) - sum_c t(c + producer)
//
// (GpuPerformanceModel::EstimateRunTimesForPriorityFusion: each t holds a
// launch overhead; the producer's reads count once per consumer). t is
// dlc's cost model, perf::predictSeconds on a launch made of the group's
// bytes (what it reads from outside, once per value, and what it writes).
// The producer of highest priority is fused first; one whose priority is
// negative, or which some consumer may not take (FusionUtils.h), never. A
// fusion changes the consumers it merged into and the producers that now
// feed them: their priorities are recomputed before the next pick.
//
// A producer fused into several consumers is cloned into each, so a group
// only ever writes its root's results: no group reads another's result
// before it runs, and no fusion can close a cycle (canFormGroup checks it
// again before each group is built).
//
// Then, as XLA's pipeline runs MultiOutputFusion after it, producer-consumer
// multi-output fusion (option multi-output): a producer that priority fusion
// left alone, because some reader may not take it (in training, mostly the
// weight gradient's contraction reading a forward activation), joins one
// consumer group that also writes it out, where the model says the merged
// group is faster than the two (canFuseMultiOutput: canFormGroup refuses
// a merge that a reader in between would make a cycle). XLA's sibling
// multi-output fusion is left out.
//
//===----------------------------------------------------------------------===//

#include "dlc/Transforms/FusionRewrite.h"
#include "dlc/Transforms/FusionUtils.h"
#include "dlc/Transforms/Passes.h"

#include "dlc/Dialect/Train/IR/TrainOps.h"
#include "dlc/runtime/perf/CostModel.h"
#include "dlc/runtime/perf/Gpus.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

#include <set>

#define DEBUG_TYPE "dlc-fuse-priority"

namespace mlir::dlc {
#define GEN_PASS_DEF_FUSEPRIORITYPASS
#include "dlc/Transforms/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;
using namespace mlir::dlc;
namespace perf = ::dlc::rt::perf;

namespace {

constexpr llvm::StringLiteral kStrategy = "xla-priority";

/// Bytes of a value of static shape (0 otherwise): what a kernel reads or
/// writes of it once.
double valueBytes(Value v) { return static_cast<double>(tensorBytes(v)); }

/// A group being formed: its ops (a producer's clones among them) and the
/// op whose results it writes out.
struct Group {
  SmallVector<Operation *> ops;
  Operation *root = nullptr;
  bool alive = true;
  double priority = 0;
  /// Why it is not fused (empty while it may be).
  std::string refusal;
};

struct FusePriorityPass final : mlir::dlc::impl::FusePriorityPassBase<FusePriorityPass> {
  using Base::Base;

  perf::DeviceSpec device;
  perf::CostParams params;
  std::vector<Group> groups;
  DenseMap<Operation *, unsigned> groupOf;
  /// (priority, group): the producers that may fuse, highest last.
  std::set<std::pair<double, unsigned>> queue;

  void runOnOperation() override {
    const perf::GpuPeak *gpuEntry = perf::findKnownGpu(gpu);
    if (!gpuEntry) {
      std::string names;
      for (const perf::GpuPeak &g : perf::knownGpus())
        names += (names.empty() ? "" : ", ") + std::string(g.name);
      getOperation().emitError() << "dlc-fuse-priority: unknown GPU '" << gpu << "' ("
                                 << names << ")";
      return signalPassFailure();
    }
    device = perf::deviceSpecOf(*gpuEntry);
    if (!calibration.empty())
      if (::dlc::rt::Status s = perf::readCostParams(calibration, params); !s.isOk()) {
        getOperation().emitError() << "dlc-fuse-priority: " << s.message();
        return signalPassFailure();
      }
    for (func::FuncOp func : functionsToFuse(getOperation()))
      for (Block &block : func.getBody())
        fuseBlock(block);
  }

  /// Seconds the group `ops` takes as one launch, writing out the results of
  /// `writers` read outside `ops`: CostModel's roofline (planLaunchCosts'
  /// bytes and access pattern for a generated kernel).
  double seconds(ArrayRef<Operation *> ops, ArrayRef<Operation *> writers) const {
    perf::LaunchCost launch;
    launch.access = perf::Access::kStream;
    for (Operation *op : ops) {
      FusionClass c = classifyForFusion(op);
      if (c == FusionClass::kNormalization)
        launch.access = perf::Access::kNormalization;
      else if (c == FusionClass::kReduction && launch.access == perf::Access::kStream)
        launch.access = perf::Access::kReduction;
    }
    SmallVector<Value> inputs = groupInputs(ops);
    int64_t largest = 0;
    for (Value v : inputs)
      largest = std::max(largest, tensorElements(v));
    for (Value v : inputs) {
      launch.bytes += valueBytes(v);
      // A normalization reads its full-size inputs twice (statistics, map).
      bool reread = launch.access == perf::Access::kNormalization && tensorElements(v) == largest;
      launch.passBytes += valueBytes(v) * (reread ? 2 : 1);
    }
    for (Operation *op : writers)
      for (Value r : op->getResults())
        if (llvm::any_of(r.getUsers(),
                         [&](Operation *u) { return !llvm::is_contained(ops, u); })) {
          launch.bytes += valueBytes(r);
          launch.passBytes += valueBytes(r);
        }
    return perf::predictSeconds(launch, device, params, /*tf32=*/false);
  }

  /// The readers of group `g`'s results, by group; an op outside every group
  /// (a contraction, an optimizer update) stands as a group of its own, with
  /// index -1.
  SmallVector<std::pair<Operation *, int>> consumersOf(unsigned g) const {
    SmallVector<std::pair<Operation *, int>> consumers;
    for (Operation *user : groups[g].root->getUsers()) {
      auto it = groupOf.find(user);
      std::pair<Operation *, int> c =
          it == groupOf.end() ? std::make_pair(user, -1)
                              : std::make_pair(groups[it->second].root, int(it->second));
      if (!llvm::is_contained(consumers, c))
        consumers.push_back(c);
    }
    return consumers;
  }

  /// Sets group `g`'s priority or refusal and its place in the queue.
  void update(unsigned g) {
    Group &p = groups[g];
    queue.erase({p.priority, g});
    p.refusal.clear();
    if (!p.alive)
      return;
    SmallVector<std::pair<Operation *, int>> consumers = consumersOf(g);
    FusionDecision decision = canFuseIntoAllConsumers(p.ops, p.root, consumers.size());
    double unfused = seconds(p.ops, p.ops), fused = 0;
    for (auto [op, c] : consumers) {
      if (!decision)
        break;
      ArrayRef<Operation *> consumer = c < 0 ? ArrayRef<Operation *>(op) : groups[c].ops;
      decision = canFusePriorityPair(p.ops, consumer, maxOperands);
      if (!decision)
        break;
      SmallVector<Operation *> merged(consumer.begin(), consumer.end());
      merged.append(p.ops.begin(), p.ops.end());
      unfused += seconds(consumer, consumer);
      fused += seconds(merged, consumer);
    }
    if (!decision) {
      p.refusal = decision.reason();
      return;
    }
    p.priority = unfused - fused;
    if (p.priority < 0) {
      p.refusal = "fusing it into all its consumers is slower by the cost model on " +
                  device.name;
      return;
    }
    queue.insert({p.priority, g});
  }

  /// Fuses group `g` into every consumer, a clone of its ops in each;
  /// returns the groups whose priority changed.
  SetVector<unsigned> fuse(unsigned g) {
    Group &p = groups[g];
    llvm::sort(p.ops, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
    SetVector<unsigned> touched;
    for (auto [op, c] : consumersOf(g)) {
      IRMapping map;
      for (Operation *original : p.ops) {
        OpBuilder b(original);
        Operation *clone = b.clone(*original, map);
        groupOf[clone] = c;
        groups[c].ops.push_back(clone);
      }
      for (Operation *original : p.ops)
        for (Value r : original->getResults())
          r.replaceUsesWithIf(map.lookup(r), [&](OpOperand &use) {
            auto it = groupOf.find(use.getOwner());
            return it != groupOf.end() && it->second == unsigned(c);
          });
      touched.insert(c);
    }
    for (Operation *original : llvm::reverse(p.ops)) {
      groupOf.erase(original);
      original->erase();
    }
    p.ops.clear();
    p.alive = false;
    queue.erase({p.priority, g});
    // The consumers' costs changed, and with them the priorities of the
    // producers that feed them (the fused group's producers among them).
    SetVector<unsigned> affected;
    for (unsigned c : touched) {
      affected.insert(c);
      for (Operation *op : groups[c].ops)
        for (Value v : op->getOperands())
          if (auto it = groupOf.find(v.getDefiningOp()); it != groupOf.end() && it->second != c)
            affected.insert(it->second);
    }
    return affected;
  }

  /// XLA's producer-consumer multi-output fusion, after priority fusion:
  /// consumers from the block's end, each taking the producers it reads
  /// whose other readers kept them out of priority fusion, while the model
  /// says the merged group (writing both) is faster than the two.
  void fuseMultiOutput() {
    for (unsigned c = groups.size(); c-- > 0;) {
      for (bool merged = true; merged && groups[c].alive;) {
        merged = false;
        SetVector<unsigned> producers;
        for (Operation *op : groups[c].ops)
          for (Value v : op->getOperands())
            if (auto it = groupOf.find(v.getDefiningOp()); it != groupOf.end() && it->second != c)
              producers.insert(it->second);
        for (unsigned p : producers) {
          Group &producer = groups[p], &consumer = groups[c];
          if (!canFuseMultiOutput(producer.ops, consumer.ops, maxOperands))
            continue;
          SmallVector<Operation *> ops(producer.ops.begin(), producer.ops.end());
          ops.append(consumer.ops.begin(), consumer.ops.end());
          if (seconds(ops, ops) >= seconds(producer.ops, producer.ops) +
                                       seconds(consumer.ops, consumer.ops))
            continue;
          for (Operation *op : producer.ops)
            groupOf[op] = c;
          consumer.ops = std::move(ops);
          producer.ops.clear();
          producer.alive = false;
          ++numMultiOutput;
          merged = true;
          break;
        }
      }
    }
  }

  void fuseBlock(Block &block) {
    groups.clear();
    groupOf.clear();
    queue.clear();
    for (Operation &op : block.without_terminator())
      if (isPriorityFusible(&op)) {
        groupOf[&op] = groups.size();
        groups.push_back({{&op}, &op});
      }
    for (unsigned g = 0; g < groups.size(); ++g)
      update(g);
    while (!queue.empty()) {
      unsigned g = std::prev(queue.end())->second;
      for (unsigned a : fuse(g))
        update(a);
      ++numFusions;
    }
    if (multiOutput)
      fuseMultiOutput();
    for (Group &group : groups) {
      if (!group.alive)
        continue;
      if (explain && !group.refusal.empty() && !group.root->use_empty())
        group.root->emitRemark() << "not fused (" << kStrategy << "): " << group.refusal;
      if (group.ops.size() < 2)
        continue;
      llvm::sort(group.ops, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
      if (FusionDecision d = canFormGroup(group.ops); !d) {
        if (explain)
          group.root->emitRemark() << "not fused (" << kStrategy << "): " << d.reason();
        continue;
      }
      bool reduces = llvm::any_of(group.ops, [](Operation *op) {
        return classifyForFusion(op) != FusionClass::kElementwise;
      });
      numFusedOps += group.ops.size();
      ++numGroups;
      createFusedGroup(group.ops,
                       reduces ? ::dlc::rt::FusionKind::kInput : ::dlc::rt::FusionKind::kLoop,
                       kStrategy);
    }
  }
};

} // namespace
