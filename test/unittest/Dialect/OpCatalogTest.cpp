//===- OpCatalogTest.cpp - every op has what docs/AddingAnOp.md asks --------===//
//
// An op of the train dialect needs four things (docs/AddingAnOp.md): its ODS
// entry with an op class, a gradient rule (forward ops), a reference kernel
// on the CPU, and, for the element-wise classes, an expression in the kernel
// generator. Its OpId comes from the ODS entry at build time. These tests
// walk every registered op, so a new op that lacks one of them fails here,
// by name.
//
//===----------------------------------------------------------------------===//

#include "../TestUtils.h"
#include "../Runtime/TestPlan.h"

#include "dlc/Dialect/Train/IR/TrainOps.h"
#include "dlc/runtime/cpu/CpuExecutor.h"
#include "dlc/runtime/codegen/KernelCodegen.h"

#include <gtest/gtest.h>

#include <set>

using namespace mlir;
using namespace mlir::dlc::train;
namespace rt = ::dlc::rt;

namespace {

/// The train ops, by mnemonic ("relu").
std::vector<std::pair<std::string, RegisteredOperationName>> trainOps(MLIRContext &context) {
  std::vector<std::pair<std::string, RegisteredOperationName>> ops;
  for (RegisteredOperationName name : context.getRegisteredOperations())
    if (name.getDialectNamespace() == "train")
      ops.push_back({name.stripDialect().str(), name});
  return ops;
}

/// Structural ops and values that never become plan kernels.
/// train.expand becomes train.broadcast_to once the batch is specialized.
const std::set<std::string> kNotKernels = {"fused", "yield", "constant", "reshape", "expand"};

/// Ops of the backward pass and the update: they have no gradient of their
/// own. The rest of the dialect is what a model is written in.
bool isStepOnly(const std::string &op, rt::OpClass c) {
  static const std::set<std::string> helpers = {"sum_to_shape", "broadcast_to",
                                                "loss_scale_status", "update_loss_scale"};
  return op.find("_backward") != std::string::npos ||
         c == rt::OpClass::kOptimizer || c == rt::OpClass::kCollective || helpers.count(op);
}

class OpCatalogTest : public ::testing::Test {
protected:
  OpCatalogTest() : context(dlc_test::makeContext()) {}
  std::unique_ptr<MLIRContext> context;
};

TEST_F(OpCatalogTest, EveryOpHasAClass) {
  for (auto &[op, name] : trainOps(*context)) {
    if (op == "fused" || op == "yield")
      continue;
    EXPECT_TRUE(getOpClass(name).has_value())
        << "train." << op << " has no Train_OpClass in its ODS entry";
  }
}

TEST_F(OpCatalogTest, EveryModelOpHasAGradientRule) {
  for (auto &[op, name] : trainOps(*context)) {
    std::optional<rt::OpClass> c = getOpClass(name);
    if (!c || kNotKernels.count(op) || isStepOnly(op, *c))
      continue;
    EXPECT_TRUE(name.hasInterface<DifferentiableOpInterface>())
        << "train." << op << " has no gradient rule (DifferentiableOpInterface)";
  }
}

/// The generated op list (dlc/runtime/OpList.inc) and the dialect agree:
/// every op with a class has an OpId of its name and class, and every OpId
/// is such an op. A stale list, or a generator that drops an op, fails here.
TEST_F(OpCatalogTest, OpIdsAreTheDialectsOps) {
  std::set<rt::OpId> seen;
  for (auto &[op, name] : trainOps(*context)) {
    std::optional<rt::OpClass> c = getOpClass(name);
    std::optional<rt::OpId> id = rt::parseOpId(op);
    if (!c) {
      EXPECT_FALSE(id.has_value()) << "train." << op << " has no class but an OpId";
      continue;
    }
    ASSERT_TRUE(id.has_value()) << "train." << op << " has no OpId (dlc/runtime/OpList.inc)";
    EXPECT_EQ(rt::opClassOf(*id), *c) << "train." << op;
    seen.insert(*id);
  }
  for (size_t i = 0; i < rt::kNumOps; ++i)
    EXPECT_TRUE(seen.count(static_cast<rt::OpId>(i)))
        << "OpId " << i << " ('" << rt::opName(static_cast<rt::OpId>(i))
        << "') is no registered train op";
}

TEST_F(OpCatalogTest, EveryOpHasAReferenceKernel) {
  const rt::cpu::KernelRegistry &kernels = rt::cpu::cpuKernels();
  for (auto &[op, name] : trainOps(*context)) {
    if (kNotKernels.count(op))
      continue;
    std::optional<rt::OpId> id = rt::parseOpId(op);
    ASSERT_TRUE(id.has_value()) << "train." << op << " has no OpId";
    EXPECT_TRUE(kernels.count(*id)) << "train." << op << " has no CPU reference kernel";
  }
  // And no kernel is registered for an op that never reaches a plan.
  for (const char *op : {"constant", "reshape", "expand"})
    EXPECT_FALSE(kernels.count(*rt::parseOpId(op))) << op;
}

/// An element-wise op on [4, 8] float tensors, alone in a launch: the
/// generator writes it with one or two operands, or has no expression.
TEST_F(OpCatalogTest, EveryElementwiseOpHasAGeneratorExpression) {
  for (auto &[op, name] : trainOps(*context)) {
    std::optional<rt::OpClass> c = getOpClass(name);
    if (!c || *c != rt::OpClass::kElementwise)
      continue;
    std::string why;
    bool generated = false;
    for (int operands : {1, 2}) {
      dlc_test::PlanBuilder p;
      std::vector<int32_t> in;
      for (int i = 0; i < operands; ++i)
        in.push_back(p.add("x" + std::to_string(i), rt::DType::kF32, {4, 8},
                           rt::BufferRole::kInput));
      int32_t out = p.add("y", rt::DType::kF32, {4, 8}, rt::BufferRole::kGradient);
      p.plan.kernels.push_back(dlc_test::makeKernel(op, in, {out}));
      rt::codegen::PlanKernels all = rt::codegen::generatePlanKernels(p.plan);
      generated |= all.kernels.size() == 1;
      if (!all.refused.empty())
        why = all.refused.front().second;
    }
    EXPECT_TRUE(generated) << "train." << op << " has no generator expression: " << why;
  }
}

} // namespace
