//===- TrainToPlanTest.cpp - lowering training steps to plans -------------===//

#include "../../TestUtils.h"

#include "dlc/Target/Plan/TrainToPlan.h"
#include "dlc/Transforms/Passes.h"
#include "dlc/runtime/Collective.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <set>

using namespace mlir;
namespace rt = ::dlc::rt;

namespace {

/// Compiles models/<name>.mlir at `batch` down to a plan; with `ranks`
/// above 1, averaging its gradients over them in buckets of `bucketMb`.
FailureOr<rt::Plan> compileModel(MLIRContext *context, const std::string &name,
                                 int64_t batch, mlir::dlc::PlanStats *stats,
                                 int64_t ranks = 1, double bucketMb = 25) {
  std::string path = std::string(DLC_SOURCE_DIR) + "/models/" + name + ".mlir";
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(path, context);
  if (!module)
    return failure();
  PassManager pm(context);
  pm.addPass(mlir::dlc::createSpecializeBatchPass({batch}));
  pm.addPass(mlir::dlc::createAutodiffPass());
  if (ranks > 1)
    pm.addPass(mlir::dlc::createDataParallelPass({ranks, bucketMb}));
  if (failed(pm.run(*module)))
    return failure();
  return mlir::dlc::lowerToPlan(*module, {name}, stats);
}

/// Fails the test if two buffers of different storage share bytes while
/// both are alive. A buffer is alive from its first to its last kernel;
/// arguments, constants and the loss for the whole step.
void expectNoLiveOverlap(const rt::Plan &plan) {
  size_t n = plan.buffers.size();
  std::vector<int64_t> first(n, -1), last(n, -1);
  for (size_t k = 0; k < plan.kernels.size(); ++k)
    for (const auto *ids : {&plan.kernels[k].inputs, &plan.kernels[k].outputs})
      for (int32_t id : *ids) {
        if (first[id] < 0)
          first[id] = k;
        last[id] = k;
      }
  for (size_t i = 0; i < n; ++i) {
    const rt::PlanBuffer &b = plan.buffers[i];
    if (b.role != rt::BufferRole::kTemporary && b.role != rt::BufferRole::kGradient &&
        b.role != rt::BufferRole::kUpdate) {
      first[i] = 0;
      last[i] = plan.kernels.size();
    }
  }
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i + 1; j < n; ++j) {
      const rt::PlanBuffer &a = plan.buffers[i], &b = plan.buffers[j];
      if (a.offset == b.offset && a.bytes == b.bytes)
        continue; // one storage: a view or an in-place update
      bool live = first[i] <= last[j] && first[j] <= last[i] && first[i] >= 0 &&
                  first[j] >= 0;
      bool share = a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes;
      EXPECT_FALSE(live && share && a.bytes && b.bytes)
          << a.name << " [" << a.offset << ", +" << a.bytes << ") and " << b.name
          << " [" << b.offset << ", +" << b.bytes << ") are live together";
    }
}

TEST(TrainToPlan, SmallConvNetReusesMemory) {
  auto context = dlc_test::makeContext();
  mlir::dlc::PlanStats stats;
  auto plan = compileModel(context.get(), "small_convnet", 8, &stats);
  ASSERT_TRUE(succeeded(plan));
  EXPECT_EQ(plan->batch, 8);
  EXPECT_TRUE(rt::validatePlan(*plan).isOk());
  expectNoLiveOverlap(*plan);
  // Liveness reuse: the arena is well below the sum of every buffer.
  EXPECT_LT(plan->arenaBytes * 10, stats.totalBufferBytes * 7)
      << plan->arenaBytes << " of " << stats.totalBufferBytes;
  EXPECT_GE(plan->arenaBytes, stats.lowerBoundBytes);
  std::set<rt::OpId> ops;
  for (const rt::PlanKernel &k : plan->kernels)
    ops.insert(k.id);
  for (rt::OpId op : {rt::OpId::kConv2d, rt::OpId::kBatchNorm, rt::OpId::kConv2dBackwardData,
                      rt::OpId::kConv2dBackwardFilter, rt::OpId::kBatchNormBackward,
                      rt::OpId::kMaxPool2dBackward, rt::OpId::kSgdUpdate})
    EXPECT_TRUE(ops.count(op)) << rt::opName(op);
  EXPECT_FALSE(ops.count(rt::OpId::kReshape)) << "reshapes are views, not kernels";
}

TEST(TrainToPlan, UpdatesAreWrittenInPlace) {
  auto context = dlc_test::makeContext();
  auto plan = compileModel(context.get(), "mlp", 4, nullptr);
  ASSERT_TRUE(succeeded(plan));
  for (const rt::PlanKernel &k : plan->kernels) {
    if (k.id != rt::OpId::kSgdUpdate)
      continue;
    // new_param shares the parameter's storage, the new momentum buffer the
    // old one's.
    EXPECT_EQ(plan->buffers[k.outputs[0]].offset, plan->buffers[k.inputs[0]].offset);
    EXPECT_EQ(plan->buffers[k.outputs[1]].offset, plan->buffers[k.inputs[2]].offset);
    EXPECT_EQ(plan->buffers[k.inputs[0]].role, rt::BufferRole::kParam);
    EXPECT_EQ(plan->buffers[k.inputs[2]].role, rt::BufferRole::kOptimizerState);
    EXPECT_EQ(std::get<double>(k.attrs.at("lr")), 0.1f);
  }
  int params = 0;
  for (const rt::PlanBuffer &b : plan->buffers)
    if (b.role == rt::BufferRole::kParam) {
      ++params;
      EXPECT_FALSE(b.init.empty()) << b.name;
    }
  EXPECT_EQ(params, 4);
}

TEST(TrainToPlan, EveryModelLowersAndRoundTripsThroughAFile) {
  auto context = dlc_test::makeContext();
  for (const char *model : {"mlp", "small_convnet", "tiny_transformer", "tiny_segnet"}) {
    auto plan = compileModel(context.get(), model, 2, nullptr);
    ASSERT_TRUE(succeeded(plan)) << model;
    expectNoLiveOverlap(*plan);
    auto back = rt::deserializePlan(rt::serializePlan(*plan), model);
    ASSERT_TRUE(back.isOk()) << back.status().toString();
    ASSERT_EQ(back->kernels.size(), plan->kernels.size());
    // Each kernel's op: the id the compiler wrote, the class beside it,
    // and the name the id gives back at load.
    for (size_t k = 0; k < plan->kernels.size(); ++k) {
      const rt::PlanKernel &before = plan->kernels[k], &after = back->kernels[k];
      EXPECT_EQ(after.id, before.id) << model << " #" << k;
      EXPECT_EQ(after.op, before.op) << model << " #" << k;
      EXPECT_EQ(after.op, rt::opName(after.id)) << model << " #" << k;
      EXPECT_EQ(after.opClass, rt::opClassOf(after.id)) << model << " #" << k << " " << after.op;
    }
  }
}

TEST(TrainToPlan, AllReducesKeepTheirBytesUntilTheirFirstReader) {
  // Many small buckets: each all-reduce may overlap the backward kernels
  // after it until the first that reads its result, so the planner must not
  // put anything else on its operands' bytes before then.
  auto context = dlc_test::makeContext();
  auto plan = compileModel(context.get(), "small_convnet", 4, nullptr, /*ranks=*/2,
                           /*bucketMb=*/0.002);
  ASSERT_TRUE(succeeded(plan));
  expectNoLiveOverlap(*plan);
  std::vector<int64_t> waitAt = rt::allReduceWaitPoints(*plan);
  int64_t reduces = 0, overlapped = 0;
  for (size_t k = 0; k < plan->kernels.size(); ++k) {
    if (plan->kernels[k].id != rt::OpId::kAllReduce)
      continue;
    ++reduces;
    std::set<int32_t> results(plan->kernels[k].outputs.begin(),
                              plan->kernels[k].outputs.end());
    int64_t reader = -1;
    for (size_t j = k + 1; j < plan->kernels.size() && reader < 0; ++j)
      for (int32_t id : plan->kernels[j].inputs)
        if (results.count(id))
          reader = static_cast<int64_t>(j);
    ASSERT_GT(reader, 0) << "all_reduce #" << k << " has no reader";
    // The bytes say the same as the ids: nothing in between touches them.
    EXPECT_EQ(waitAt[k], reader) << "all_reduce #" << k;
    overlapped += reader - static_cast<int64_t>(k) - 1;
  }
  EXPECT_GT(reduces, 3);
  // The first buckets (the last layers' gradients) overlap the rest of the
  // backward pass: tens of kernels, not none.
  EXPECT_GT(overlapped, 10 * reduces) << reduces << " all-reduces";
}

TEST(TrainToPlan, MissingTrainStepIsReported) {
  auto context = dlc_test::makeContext();
  auto module = parseSourceString<ModuleOp>("module {}", context.get());
  dlc_test::DiagnosticCollector diags(context.get());
  EXPECT_TRUE(failed(mlir::dlc::lowerToPlan(*module, {"empty"})));
  EXPECT_NE(diags.str().find("expects a func.func @train_step with a body (run dlc-autodiff)"),
            std::string::npos);
}

} // namespace
