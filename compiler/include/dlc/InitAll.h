//===- InitAll.h - register every dlc dialect and pass ----------*- C++ -*-===//

#ifndef DLC_INITALL_H
#define DLC_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::dlc {

/// Adds the dialects a model file or a compiled step may contain.
void registerAllDialects(DialectRegistry &registry);

/// Registers every dlc pass, and the upstream passes dlc pipelines use, for
/// --pass-pipeline and the command-line pass flags.
void registerAllPasses();

} // namespace mlir::dlc

#endif // DLC_INITALL_H
