//===- TestUtils.h - helpers for dlc's unit tests ---------------*- C++ -*-===//

#ifndef DLC_TEST_UNITTEST_TESTUTILS_H
#define DLC_TEST_UNITTEST_TESTUTILS_H

#include "dlc/InitAll.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"

#include <string>

namespace dlc_test {

/// A context with every dlc dialect loaded.
inline std::unique_ptr<mlir::MLIRContext> makeContext() {
  mlir::DialectRegistry registry;
  mlir::dlc::registerAllDialects(registry);
  auto context = std::make_unique<mlir::MLIRContext>(registry);
  context->loadAllAvailableDialects();
  return context;
}

/// Collects the text of every diagnostic emitted while it lives.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(mlir::MLIRContext *context)
      : handler(context, [this](mlir::Diagnostic &diag) {
          text += diag.str() + "\n";
          return mlir::success();
        }) {}
  const std::string &str() const { return text; }

private:
  std::string text;
  mlir::ScopedDiagnosticHandler handler;
};

} // namespace dlc_test

#endif // DLC_TEST_UNITTEST_TESTUTILS_H
