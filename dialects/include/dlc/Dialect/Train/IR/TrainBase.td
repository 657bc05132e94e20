//===- TrainBase.td - train dialect definition --------------*- tablegen -*-===//
//
// The `train` dialect describes a model the way a framework user writes it:
// tensor-level ops with value semantics, from which the compiler derives the
// whole training step.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_DIALECT_TRAIN_IR_TRAINBASE_TD
#define DLC_DIALECT_TRAIN_IR_TRAINBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Train_Dialect : Dialect {
  let name = "train";
  let cppNamespace = "::mlir::dlc::train";
  let summary = "tensor-level ops for describing deep-learning models to train";
  let description = [{
    A model is a `func.func @forward` whose arguments are the model's inputs,
    labels, trainable parameters and non-trainable buffers (each marked with an
    argument attribute), and whose single result is the scalar loss. Ops have
    value semantics, infer their result types from operands and attributes,
    and carry the batch dimension as `?` until the driver specializes it.

    Argument attributes (see docs/ModelConventions.md):

    ```mlir
    func.func @forward(
        %x: tensor<?x3x32x32xf32> {train.input, train.name = "x"},
        %y: tensor<?xi64> {train.label, train.name = "labels"},
        %w: tensor<16x3x3x3xf32> {train.name = "conv1.weight",
            train.param = {init = "kaiming_normal", mode = "fan_out"}},
        %rm: tensor<16xf32> {train.buffer = {init = "zeros"},
            train.name = "bn1.running_mean"}) -> tensor<f32>
    ```
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
  let hasConstantMaterializer = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Argument attribute names of the model-file convention.
    static constexpr ::llvm::StringLiteral kInputAttr = "train.input";
    static constexpr ::llvm::StringLiteral kLabelAttr = "train.label";
    static constexpr ::llvm::StringLiteral kParamAttr = "train.param";
    static constexpr ::llvm::StringLiteral kBufferAttr = "train.buffer";
    /// The argument's name: the key of its .npy file when parameters and
    /// inputs are exchanged with other frameworks.
    static constexpr ::llvm::StringLiteral kNameAttr = "train.name";
    /// Optimizer state (momentum, Adam moments) that autodiff adds to
    /// @train_step, with its initializer.
    static constexpr ::llvm::StringLiteral kOptimizerStateAttr = "train.optimizer_state";
    /// Result attribute of @train_step: the index of the argument whose
    /// next-step value the result is.
    static constexpr ::llvm::StringLiteral kUpdateOfAttr = "train.update_of";
    /// The constant dlc-autodiff seeds the backward pass with (d loss /
    /// d loss = 1); loss scaling replaces it by the scale.
    static constexpr ::llvm::StringLiteral kSeedGradientAttr = "train.seed_gradient";
    /// Function attribute naming the model's default optimizer.
    static constexpr ::llvm::StringLiteral kOptimizerAttr = "train.optimizer";
  }];
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Train_FloatElement : AnyTypeOf<[F32, F16, BF16]>;
def Train_IntElement : AnyTypeOf<[I32, I64]>;
def Train_FloatTensor : RankedTensorOf<[F32, F16, BF16]>;
def Train_IntTensor : RankedTensorOf<[I32, I64]>;
def Train_AnyTensor : RankedTensorOf<[F32, F16, BF16, I32, I64]>;
def Train_ScalarF32Tensor : 0DTensorOf<[F32]>;
/// The memory order of a 4-d activation and of a convolution's filter:
/// "NCHW" with OIHW filters (PyTorch's, the models', the default) or "NHWC"
/// with OHWI filters (channels last, which cuDNN's tensor-core convolutions
/// and fused batch norm want in half precision). Shapes are always the
/// physical ones; dlc-convert-layout sets it.
def Train_LayoutAttr : DefaultValuedAttr<StrAttr, "\"NCHW\"">;
/// [1 / loss scale, 1.0 if a gradient overflowed]: see train.loss_scale_status.
def Train_LossScaleStatus : 1DTensorOf<[F32]>;

//===----------------------------------------------------------------------===//
// Op traits
//===----------------------------------------------------------------------===//

/// What the op computes (dlc::rt::OpClass in dlc/runtime/OpKinds.h, e.g.
/// "Elementwise"). Every op but train.fused and train.yield has one: fusion
/// legality, layout, the plan summary, code generation and launch routing
/// decide by it, and the lowering to the plan writes it into each kernel.
class Train_OpClass<string name>
    : ParamNativeOpTrait<"OpClassIs", "::dlc::rt::OpClass::k" # name> {
  let cppNamespace = "::mlir::dlc::train";
}

/// An activation or its gradient: what PaddlePaddle's element-wise +
/// activation fusion takes.
def Train_Activation : NativeOpTrait<"Activation"> {
  let cppNamespace = "::mlir::dlc::train";
}

//===----------------------------------------------------------------------===//
// Base op class
//===----------------------------------------------------------------------===//

class Train_Op<string mnemonic, list<Trait> traits = []>
    : Op<Train_Dialect, mnemonic, traits>;

#endif // DLC_DIALECT_TRAIN_IR_TRAINBASE_TD
