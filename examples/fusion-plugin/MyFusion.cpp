//===- MyFusion.cpp - a fusion strategy from outside the tree -------------===//
//
// A pass plugin for dlc-opt and dlc-bench: one pass, `my-fuse-reduction-
// producers`, and the fusion strategy `my-fusion` built from it and dlc's
// own horizontal optimizer fusion, so that
//
//   dlc-bench models/mlp.mlir --load-pass-plugin=libMyFusion.so \
//       --fusion none,paddle,xla,my-fusion --compile-only
//
// sweeps it beside dlc's strategies, its ratios against `none`.
//
// The idea it tests: XLA's input fusion alone, without GEMM epilogues or
// loop fusion. Each reduction takes the chain of element-wise producers
// that feeds its input (in the backward pass, a bias gradient with the
// activation gradient before it: relu_backward -> sum_to_shape), so the
// gradient is reduced in the pass that computes it. PaddlePaddle's
// strategy leaves these apart; XLA's takes them inside its GEMM epilogues.
// docs/WritingAFusionPass.md walks through it.
//
//===----------------------------------------------------------------------===//

#include "dlc/Pipelines/Pipelines.h"
#include "dlc/Transforms/FusionRewrite.h"
#include "dlc/Transforms/FusionUtils.h"
#include "dlc/Transforms/Passes.h"

#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Tools/Plugins/PassPlugin.h"

using namespace mlir;
using namespace mlir::dlc;

namespace {

constexpr llvm::StringLiteral kStrategy = "my-fusion";

struct FuseReductionProducersPass final
    : PassWrapper<FuseReductionProducersPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FuseReductionProducersPass)

  FuseReductionProducersPass() = default;
  FuseReductionProducersPass(const FuseReductionProducersPass &other)
      : PassWrapper(other) {}

  StringRef getArgument() const final { return "my-fuse-reduction-producers"; }
  StringRef getDescription() const final {
    return "fuses each reduction with the chain of element-wise ops that feeds "
           "it (input fusion, without epilogues)";
  }
  void getDependentDialects(DialectRegistry &registry) const final {
    registry.insert<train::TrainDialect>();
  }

  Option<bool> explain{*this, "explain",
                       llvm::cl::desc("remark on every producer not fused, and why"),
                       llvm::cl::init(false)};
  Statistic numGroups{this, "groups", "Number of reductions fused with their producers"};

  /// A group runs where its last op is, so every other reader of a
  /// producer must come after the reduction. Autodiff puts a bias gradient
  /// after the weight gradient, which reads the same activation gradient:
  /// the reduction moves up to just after its producer (ops have value
  /// semantics, so this only changes when it runs).
  static void hoistToProducer(Operation *reduction) {
    Operation *producer = reduction->getOperand(0).getDefiningOp();
    if (!producer || producer->getBlock() != reduction->getBlock() ||
        classifyForFusion(producer) != FusionClass::kElementwise)
      return;
    for (Value operand : reduction->getOperands()) {
      Operation *def = operand.getDefiningOp();
      if (def && def != producer && def->getBlock() == producer->getBlock() &&
          !def->isBeforeInBlock(producer))
        return;
    }
    reduction->moveAfter(producer);
  }

  void runOnOperation() override {
    // Legality is dlc's (FusionUtils.h), shared with every strategy; this
    // pass chooses which groups to ask for.
    SmallVector<Operation *> reductions;
    getOperation().walk([&](Operation *op) {
      if (classifyForFusion(op) == FusionClass::kReduction)
        reductions.push_back(op);
    });
    GroupCandidates candidates(explain);
    for (Operation *reduction : reductions) {
      hoistToProducer(reduction);
      SmallVector<Operation *> group{reduction};
      // Up the chain through each op's first operand: an activation
      // gradient's is the incoming gradient.
      for (Operation *producer = reduction->getOperand(0).getDefiningOp(); producer;) {
        FusionDecision decision =
            classifyForFusion(producer) == FusionClass::kElementwise
                ? canFuseIntoGroup(producer, group)
                : FusionDecision::refuse("'" + producer->getName().getStringRef() +
                                         "' is not element-wise");
        if (!decision) {
          if (explain)
            reduction->emitRemark() << "stops before '" << producer->getName()
                                    << "': " << decision.reason();
          break;
        }
        group.insert(group.begin(), producer);
        producer = producer->getNumOperands() ? producer->getOperand(0).getDefiningOp()
                                              : nullptr;
      }
      if (group.size() > 1)
        candidates.consider(group, ::dlc::rt::FusionKind::kInput, FusionDecision::allow(),
                            reduction);
    }
    numGroups += candidates.createAll(kStrategy);
  }
};

/// `my-fusion`: this pass, then dlc's horizontal fusion of the optimizer
/// updates, credited to this strategy.
LogicalResult buildMyFusion(OpPassManager &pm, const FusionPipelineOptions &options,
                            std::string &error) {
  auto fuse = std::make_unique<FuseReductionProducersPass>();
  fuse->explain = options.explain;
  pm.addPass(std::move(fuse));
  FuseOptimizerUpdatesPassOptions updates;
  updates.strategy = kStrategy.str();
  pm.addPass(createFuseOptimizerUpdatesPass(updates));
  return success();
}

} // namespace

/// What dlc-opt and dlc-bench call after loading the library
/// (--load-pass-plugin): register the pass and the strategy.
extern "C" LLVM_ATTRIBUTE_WEAK ::mlir::PassPluginLibraryInfo mlirGetPassPluginInfo() {
  return {MLIR_PLUGIN_API_VERSION, "MyFusion", "0.1", [] {
            PassRegistration<FuseReductionProducersPass>();
            registerFusionStrategy(kStrategy,
                                   "each reduction with its element-wise producers, "
                                   "one kernel for the optimizer updates",
                                   buildMyFusion);
          }};
}
