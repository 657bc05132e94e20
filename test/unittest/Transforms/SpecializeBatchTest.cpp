//===- SpecializeBatchTest.cpp - batch specialization ---------------------===//

#include "../TestUtils.h"

#include "dlc/Dialect/Train/IR/TrainOps.h"
#include "dlc/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace {

/// An MLP whose activations are reshaped through -1 dimensions; the pair of
/// reshapes through rows of 20 only works for an even batch.
constexpr const char *kMlp = R"mlir(
func.func @forward(%x: tensor<?x16xf32> {train.input},
                   %y: tensor<?xi64> {train.label},
                   %w1: tensor<32x16xf32> {train.param = {init = "kaiming_uniform"}},
                   %b1: tensor<32xf32> {train.param = {init = "zeros"}},
                   %w2: tensor<10x8xf32> {train.param = {init = "kaiming_uniform"}})
    -> tensor<f32> {
  %h = train.linear %x, %w1, %b1 : tensor<?x16xf32>, tensor<32x16xf32>, tensor<32xf32>
  %r = train.relu %h : tensor<?x32xf32>
  %s = train.reshape %r {shape = array<i64: -1, 4, 8>} : tensor<?x32xf32>
  %m = train.reduce_sum %s {axes = array<i64: 1>} : tensor<?x4x8xf32>
  %l = train.linear %m, %w2 : tensor<?x8xf32>, tensor<10x8xf32>
  %t = train.reshape %l {shape = array<i64: -1, 20>} : tensor<?x10xf32>
  %u = train.reshape %t {shape = array<i64: -1, 10>} : tensor<?x20xf32>
  %loss = train.softmax_cross_entropy %u, %y : tensor<?x10xf32>, tensor<?xi64>
  return %loss : tensor<f32>
}
)mlir";

class SpecializeBatchTest : public ::testing::Test {
protected:
  SpecializeBatchTest() : context(dlc_test::makeContext()) {}

  OwningOpRef<ModuleOp> parse(const char *source) {
    auto module = parseSourceString<ModuleOp>(source, context.get());
    EXPECT_TRUE(module) << "test model does not parse";
    return module;
  }

  func::FuncOp forward(ModuleOp module) {
    return module.lookupSymbol<func::FuncOp>("forward");
  }

  std::unique_ptr<MLIRContext> context;
};

TEST_F(SpecializeBatchTest, EveryShapeBecomesStatic) {
  auto module = parse(kMlp);
  ASSERT_TRUE(module);
  auto result = mlir::dlc::specializeBatch(forward(*module), 4);
  ASSERT_TRUE(succeeded(result));
  EXPECT_EQ(result->numArgs, 2u); // %x and %y
  EXPECT_EQ(result->numOps, 8u);
  forward(*module).walk([&](Operation *op) {
    for (Type type : op->getResultTypes())
      EXPECT_TRUE(cast<ShapedType>(type).hasStaticShape())
          << op->getName().getStringRef().str();
  });
  // 4 samples of 10 logits regroup into 2 rows of 20.
  auto reshapes = llvm::to_vector(forward(*module).getOps<mlir::dlc::train::ReshapeOp>());
  ASSERT_EQ(reshapes.size(), 3u);
  EXPECT_EQ(cast<ShapedType>(reshapes[0].getType()).getShape(),
            ArrayRef<int64_t>({4, 4, 8}));
  EXPECT_EQ(cast<ShapedType>(reshapes[1].getType()).getShape(),
            ArrayRef<int64_t>({2, 20}));
  EXPECT_EQ(forward(*module).getArgumentTypes()[1],
            RankedTensorType::get({4}, IntegerType::get(context.get(), 64)));
  EXPECT_TRUE(succeeded(mlir::verify(*module)));
}

TEST_F(SpecializeBatchTest, BatchThatBreaksAReshapeIsReportedOnTheOp) {
  auto module = parse(kMlp);
  ASSERT_TRUE(module);
  dlc_test::DiagnosticCollector diags(context.get());
  // 3 samples of 10 logits do not regroup into rows of 20.
  EXPECT_TRUE(failed(mlir::dlc::specializeBatch(forward(*module), 3)));
  EXPECT_NE(diags.str().find("'train.reshape' op cannot reshape [3, 10] "
                             "(30 elements) to [-1, 20]"),
            std::string::npos)
      << diags.str();
}

TEST_F(SpecializeBatchTest, PassRunsThroughThePassManager) {
  auto module = parse(kMlp);
  ASSERT_TRUE(module);
  PassManager pm(context.get());
  pm.addPass(mlir::dlc::createSpecializeBatchPass({/*batchSize=*/8}));
  ASSERT_TRUE(succeeded(pm.run(*module)));
  EXPECT_EQ(forward(*module).getArgumentTypes()[0],
            RankedTensorType::get({8, 16}, Float32Type::get(context.get())));
}

TEST_F(SpecializeBatchTest, NonBatchDynamicDimensionIsRefused) {
  constexpr const char *source = R"mlir(
    func.func @f(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
      %r = train.relu %x : tensor<?x?xf32>
      return %r : tensor<?x?xf32>
    }
  )mlir";
  auto module = parse(source);
  ASSERT_TRUE(module);
  dlc_test::DiagnosticCollector diags(context.get());
  auto func = module->lookupSymbol<func::FuncOp>("f");
  EXPECT_TRUE(failed(mlir::dlc::specializeBatch(func, 2)));
  EXPECT_NE(diags.str().find("argument #0 has a dynamic dimension other than "
                             "the batch (0)"),
            std::string::npos)
      << diags.str();
}

TEST_F(SpecializeBatchTest, ZeroBatchIsRefused) {
  auto module = parse(kMlp);
  ASSERT_TRUE(module);
  dlc_test::DiagnosticCollector diags(context.get());
  EXPECT_TRUE(failed(mlir::dlc::specializeBatch(forward(*module), 0)));
  EXPECT_NE(diags.str().find("expects a batch size >= 1, got 0"),
            std::string::npos);
}

} // namespace
