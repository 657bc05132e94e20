//===- TrainOpsTest.cpp - building train ops through the C++ API ----------===//
//
// Passes build ops through the C++ API, not the parser: these tests check
// that the builders infer the same shapes a model file gets, and that an
// ill-shaped op built in C++ fails verification with the same message.
//
//===----------------------------------------------------------------------===//

#include "../TestUtils.h"

#include "dlc/Dialect/Train/IR/TrainOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Verifier.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::dlc::train;

namespace {

constexpr int64_t kDyn = ShapedType::kDynamic;

class TrainOpsTest : public ::testing::Test {
protected:
  TrainOpsTest()
      : context(dlc_test::makeContext()), builder(context.get()),
        loc(builder.getUnknownLoc()) {
    module = ModuleOp::create(loc);
    builder.setInsertionPointToEnd(module->getBody());
  }

  /// A function whose arguments have the given types, with the builder at
  /// the start of its body; returns the arguments.
  ValueRange makeFunc(TypeRange argTypes) {
    auto func = func::FuncOp::create(builder, loc, "f",
                                     builder.getFunctionType(argTypes, {}));
    Block *entry = func.addEntryBlock();
    builder.setInsertionPointToStart(entry);
    return entry->getArguments();
  }

  RankedTensorType f32(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, builder.getF32Type());
  }

  /// Builds `name` with explicit (possibly wrong) result types and returns
  /// what verification says about it.
  std::string verifyMessage(StringRef name, ValueRange operands,
                            ArrayRef<NamedAttribute> attrs, TypeRange results) {
    OperationState state(loc, name);
    state.addOperands(operands);
    state.addAttributes(attrs);
    state.addTypes(results);
    Operation *op = builder.create(state);
    dlc_test::DiagnosticCollector diags(context.get());
    bool ok = succeeded(mlir::verify(op));
    op->erase();
    return ok ? std::string("verified") : diags.str();
  }

  std::unique_ptr<MLIRContext> context;
  OpBuilder builder;
  Location loc;
  OwningOpRef<ModuleOp> module;
};

TEST_F(TrainOpsTest, Conv2dInfersStridedPaddedShape) {
  ValueRange args = makeFunc({f32({kDyn, 3, 224, 224}), f32({64, 3, 7, 7})});
  auto conv = Conv2dOp::create(
      builder, loc, ValueRange{args[0], args[1]},
      {builder.getNamedAttr("stride", builder.getDenseI64ArrayAttr({2, 2})),
       builder.getNamedAttr("padding", builder.getDenseI64ArrayAttr({3, 3}))});
  EXPECT_EQ(conv.getType(), f32({kDyn, 64, 112, 112}));
  EXPECT_TRUE(succeeded(mlir::verify(conv)));
}

TEST_F(TrainOpsTest, Conv2dDilationAndGroups) {
  // DeepLabV3+'s ASPP branch: 3x3, dilation 12, padding 12 keeps the size;
  // a depthwise filter has one input channel per group.
  ValueRange args = makeFunc({f32({2, 32, 64, 128}), f32({32, 1, 3, 3})});
  auto conv = Conv2dOp::create(
      builder, loc, ValueRange{args[0], args[1]},
      {builder.getNamedAttr("padding", builder.getDenseI64ArrayAttr({12, 12})),
       builder.getNamedAttr("dilation", builder.getDenseI64ArrayAttr({12, 12})),
       builder.getNamedAttr("groups", builder.getI64IntegerAttr(32))});
  EXPECT_EQ(conv.getType(), f32({2, 32, 64, 128}));
}

TEST_F(TrainOpsTest, Conv2dWithWrongResultTypeFailsVerification) {
  ValueRange args = makeFunc({f32({8, 3, 32, 32}), f32({16, 3, 3, 3})});
  std::string message =
      verifyMessage("train.conv2d", {args[0], args[1]}, {}, {f32({8, 16, 32, 32})});
  EXPECT_NE(message.find("inferred type(s) 'tensor<8x16x30x30xf32>' are "
                         "incompatible with return type(s)"),
            std::string::npos)
      << message;
}

TEST_F(TrainOpsTest, Conv2dGroupMismatchIsReported) {
  ValueRange args = makeFunc({f32({8, 6, 32, 32}), f32({16, 4, 3, 3})});
  std::string message = verifyMessage(
      "train.conv2d", {args[0], args[1]},
      {builder.getNamedAttr("groups", builder.getI64IntegerAttr(4))},
      {f32({8, 16, 30, 30})});
  EXPECT_NE(message.find("expects input channels (6) and output channels "
                         "(16) divisible by groups (4)"),
            std::string::npos)
      << message;
}

TEST_F(TrainOpsTest, MatmulBroadcastsBatchAndTransposes) {
  ValueRange args =
      makeFunc({f32({kDyn, 12, 128, 64}), f32({kDyn, 12, 128, 64}), f32({64, 32})});
  auto scores = MatmulOp::create(
      builder, loc, ValueRange{args[0], args[1]},
      {builder.getNamedAttr("transpose_rhs", builder.getBoolAttr(true))});
  EXPECT_EQ(scores.getType(), f32({kDyn, 12, 128, 128}));
  auto projected = MatmulOp::create(builder, loc, ValueRange{args[0], args[2]});
  EXPECT_EQ(projected.getType(), f32({kDyn, 12, 128, 32}));
}

TEST_F(TrainOpsTest, BroadcastingAddAndReduce) {
  ValueRange args = makeFunc({f32({kDyn, 128, 768}), f32({768})});
  auto sum = AddOp::create(builder, loc, args[0], args[1]);
  EXPECT_EQ(sum.getType(), f32({kDyn, 128, 768}));
  auto mean = ReduceMeanOp::create(
      builder, loc, ValueRange{sum},
      {builder.getNamedAttr("axes", builder.getDenseI64ArrayAttr({-1})),
       builder.getNamedAttr("keep_dims", builder.getBoolAttr(true))});
  EXPECT_EQ(mean.getType(), f32({kDyn, 128, 1}));
}

TEST_F(TrainOpsTest, CrossEntropyOverPixelsAndTokens) {
  auto i64 = [&](ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, builder.getI64Type());
  };
  ValueRange args = makeFunc({f32({kDyn, 19, 64, 128}), i64({kDyn, 64, 128}),
                              f32({kDyn, 16, 1000}), i64({kDyn, 16})});
  auto pixel = SoftmaxCrossEntropyOp::create(
      builder, loc, ValueRange{args[0], args[1]},
      {builder.getNamedAttr("ignore_index", builder.getI64IntegerAttr(255))});
  EXPECT_EQ(pixel.getType(), f32({}));
  auto token = SoftmaxCrossEntropyOp::create(
      builder, loc, ValueRange{args[2], args[3]},
      {builder.getNamedAttr("class_axis", builder.getI64IntegerAttr(2))});
  EXPECT_EQ(token.getType(), f32({}));
  std::string message = verifyMessage("train.softmax_cross_entropy",
                                      {args[2], args[3]}, {}, {f32({})});
  EXPECT_NE(message.find("expects labels of shape [?, 1000]"),
            std::string::npos)
      << message;
}

TEST_F(TrainOpsTest, BatchNormReturnsRunningStatistics) {
  ValueRange args = makeFunc({f32({kDyn, 64, 56, 56}), f32({64}), f32({64}),
                              f32({64}), f32({64})});
  auto bn = BatchNormOp::create(builder, loc, ValueRange(args));
  EXPECT_EQ(bn.getOutput().getType(), f32({kDyn, 64, 56, 56}));
  EXPECT_EQ(bn.getNewRunningMean().getType(), f32({64}));
  EXPECT_EQ(bn.getNewRunningVar().getType(), f32({64}));
  EXPECT_FLOAT_EQ(bn.getMomentum().convertToFloat(), 0.1f);
}

TEST_F(TrainOpsTest, ReshapeInfersMinusOne) {
  ValueRange args = makeFunc({f32({kDyn, 128, 768}), f32({4, 128, 768})});
  auto dynamic = ReshapeOp::create(
      builder, loc, ValueRange{args[0]},
      {builder.getNamedAttr("shape",
                            builder.getDenseI64ArrayAttr({-1, 128, 12, 64}))});
  EXPECT_EQ(dynamic.getType(), f32({kDyn, 128, 12, 64}));
  auto flat = ReshapeOp::create(
      builder, loc, ValueRange{args[1]},
      {builder.getNamedAttr("shape", builder.getDenseI64ArrayAttr({-1, 768}))});
  EXPECT_EQ(flat.getType(), f32({512, 768}));
}

TEST_F(TrainOpsTest, ConcatAndSliceAlongChannels) {
  ValueRange args = makeFunc({f32({kDyn, 256, 64, 128}), f32({kDyn, 48, 64, 128})});
  auto joined = ConcatOp::create(
      builder, loc, ValueRange{args[0], args[1]},
      {builder.getNamedAttr("axis", builder.getI64IntegerAttr(1))});
  EXPECT_EQ(joined.getType(), f32({kDyn, 304, 64, 128}));
  auto part = SliceOp::create(
      builder, loc, ValueRange{joined},
      {builder.getNamedAttr("axis", builder.getI64IntegerAttr(1)),
       builder.getNamedAttr("start", builder.getI64IntegerAttr(0)),
       builder.getNamedAttr("end", builder.getI64IntegerAttr(256)),
       builder.getNamedAttr("step", builder.getI64IntegerAttr(2))});
  EXPECT_EQ(part.getType(), f32({kDyn, 128, 64, 128}));
}

TEST_F(TrainOpsTest, CastChangesOnlyTheElementType) {
  ValueRange args = makeFunc({f32({kDyn, 768})});
  auto cast = CastOp::create(
      builder, loc, ValueRange{args[0]},
      {builder.getNamedAttr("to", TypeAttr::get(builder.getBF16Type()))});
  EXPECT_EQ(cast.getType(),
            RankedTensorType::get({kDyn, 768}, builder.getBF16Type()));
}

} // namespace
