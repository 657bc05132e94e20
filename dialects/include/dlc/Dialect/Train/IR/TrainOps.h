//===- TrainOps.h - train dialect ops ---------------------------*- C++ -*-===//

#ifndef DLC_DIALECT_TRAIN_IR_TRAINOPS_H
#define DLC_DIALECT_TRAIN_IR_TRAINOPS_H

#include "dlc/Dialect/Train/IR/TrainDialect.h"
#include "dlc/Dialect/Train/IR/TrainInterfaces.h"
#include "dlc/Dialect/Train/IR/TrainShapes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dlc/runtime/OpKinds.h"

#include <optional>

namespace mlir::dlc::train {

/// Train_OpClass<"X"> in ODS: the op's dlc::rt::OpClass.
template <::dlc::rt::OpClass C> struct OpClassIs {
  template <typename ConcreteOp> class Impl : public OpTrait::TraitBase<ConcreteOp, Impl> {
  public:
    static constexpr ::dlc::rt::OpClass opClass = C;
  };
};

/// Train_Activation in ODS.
template <typename ConcreteOp>
class Activation : public OpTrait::TraitBase<ConcreteOp, Activation> {};

/// The class ODS gives `op`; nullopt for train.fused, train.yield and ops of
/// other dialects.
std::optional<::dlc::rt::OpClass> getOpClass(OperationName name);
inline std::optional<::dlc::rt::OpClass> getOpClass(Operation *op) {
  return getOpClass(op->getName());
}

} // namespace mlir::dlc::train

#define GET_OP_CLASSES
#include "dlc/Dialect/Train/IR/TrainOps.h.inc"

#endif // DLC_DIALECT_TRAIN_IR_TRAINOPS_H
