//===- TrainDialect.h - train dialect ---------------------------*- C++ -*-===//
//
// The train dialect: tensor-level ops for describing models to train.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_DIALECT_TRAIN_IR_TRAINDIALECT_H
#define DLC_DIALECT_TRAIN_IR_TRAINDIALECT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Dialect.h"

#include "dlc/Dialect/Train/IR/TrainOpsDialect.h.inc"

#endif // DLC_DIALECT_TRAIN_IR_TRAINDIALECT_H
