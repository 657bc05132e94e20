//===- TrainInterfaces.td - train dialect interfaces --------*- tablegen -*-===//

#ifndef DLC_DIALECT_TRAIN_IR_TRAININTERFACES_TD
#define DLC_DIALECT_TRAIN_IR_TRAININTERFACES_TD

include "mlir/IR/OpBase.td"

def Train_DifferentiableOpInterface : OpInterface<"DifferentiableOpInterface"> {
  let cppNamespace = "::mlir::dlc::train";
  let description = [{
    An op that emits its own backward ops. Autodiff walks the forward ops in
    reverse and asks each for the gradients of its operands given the
    gradients of its results; it never switches over op names, so a new op
    brings its own gradient rule by implementing this interface.
  }];
  let methods = [
    InterfaceMethod<[{
        Emits, at the builder's insertion point, ops computing the gradient of
        each operand from `resultGrads` (one per result; null where no
        gradient flows into that result). Fills `operandGrads` with one value
        per operand, null where the operand gets no gradient (integer
        labels, indices, running statistics). Fails with an error on the op
        when the rule is not supported for its attributes.
      }],
      "::llvm::LogicalResult", "emitGradients",
      (ins "::mlir::OpBuilder &":$builder,
           "::mlir::ArrayRef<::mlir::Value>":$resultGrads,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>,
  ];
}

#endif // DLC_DIALECT_TRAIN_IR_TRAININTERFACES_TD
