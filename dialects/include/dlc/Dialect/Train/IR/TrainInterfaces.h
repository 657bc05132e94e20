//===- TrainInterfaces.h - train dialect interfaces -------------*- C++ -*-===//

#ifndef DLC_DIALECT_TRAIN_IR_TRAININTERFACES_H
#define DLC_DIALECT_TRAIN_IR_TRAININTERFACES_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpDefinition.h"

#include "dlc/Dialect/Train/IR/TrainInterfaces.h.inc"

#endif // DLC_DIALECT_TRAIN_IR_TRAININTERFACES_H
