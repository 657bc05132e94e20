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

#define GET_OP_CLASSES
#include "dlc/Dialect/Train/IR/TrainOps.h.inc"

#endif // DLC_DIALECT_TRAIN_IR_TRAINOPS_H
