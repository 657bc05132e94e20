//===- TrainStepFuzz.cpp - libFuzzer target: model text to plan -----------===//
//
// Any text must end as a valid plan or as an error diagnostic, never a crash,
// a sanitizer report or a silent failure. Each input goes through what
// dlc-bench does with a model file: the parser and verifier, the training
// step pipeline (autodiff, precision, layout, data parallel, fusion), the
// lowering to a plan, and both kernel generators over that plan. The
// configuration (fusion, precision, ranks) is picked by the input's hash, so
// the plain models and dialect tests serve as seeds without a header and a
// mutation also moves an input to another configuration.
//
// Built only in a clang sanitizer build (scripts/sanitize.sh, docs/Fuzzing.md).
//
//===----------------------------------------------------------------------===//

#include "dlc/InitAll.h"
#include "dlc/Pipelines/Pipelines.h"
#include "dlc/Target/Plan/TrainToPlan.h"
#include "dlc/runtime/DiskCache.h"
#include "dlc/runtime/Plan.h"
#include "dlc/runtime/cpu/HostKernels.h"
#include "dlc/runtime/cuda/KernelDump.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

using namespace mlir;

namespace {

[[noreturn]] void fail(const char *what, const std::string &detail) {
  std::fprintf(stderr, "TrainStepFuzz: %s%s%s\n", what, detail.empty() ? "" : ": ",
               detail.c_str());
  std::abort();
}

const DialectRegistry &registry() {
  static const DialectRegistry *r = [] {
    auto *out = new DialectRegistry;
    mlir::dlc::registerAllDialects(*out);
    return out;
  }();
  return *r;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  const uint64_t pick = ::dlc::rt::fnv1a(text);
  static const char *const kFusions[] = {"none", "paddle", "xla"};
  static const char *const kPrecisions[] = {"fp32", "amp", "amp-bf16", "fp16"};

  MLIRContext context(registry(), MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);
  int errors = 0;
  ScopedDiagnosticHandler counter(&context, [&](Diagnostic &diag) {
    if (diag.getSeverity() == DiagnosticSeverity::Error)
      ++errors;
    return success();
  });

  // The lexer reads up to a NUL past the end, as files read through
  // llvm::MemoryBuffer (what dlc-bench and dlc-opt parse) have one.
  const std::string source(text);
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, &context, "fuzz");
  if (!module) {
    if (errors == 0)
      fail("the parser refused the input without an error", "");
    return 0;
  }

  PassManager pm(&context);
  mlir::dlc::TrainStepOptions options;
  options.batch = 2;
  options.fusion = kFusions[pick % 3];
  options.precision = kPrecisions[(pick / 3) % 4];
  options.ranks = 1 + (pick / 12) % 2;
  mlir::dlc::TrainStepError error;
  if (failed(mlir::dlc::buildTrainStepPipeline(pm, options, error)))
    fail("the fixed step options were refused", error.option + ": " + error.message);
  if (failed(pm.run(*module))) {
    if (errors == 0)
      fail("the step pipeline failed without an error", "");
    return 0;
  }

  FailureOr<::dlc::rt::Plan> plan = mlir::dlc::lowerToPlan(
      *module, {"fuzz", options.precision, options.fusion});
  if (failed(plan)) {
    if (errors == 0)
      fail("the lowering to a plan failed without an error", "");
    return 0;
  }
  // What the compiler hands the runtime must be what the runtime accepts.
  if (::dlc::rt::Status s = ::dlc::rt::validatePlan(*plan); !s.isOk())
    fail("the compiled plan does not validate", s.toString());
  auto reread = ::dlc::rt::deserializePlan(::dlc::rt::serializePlan(*plan), "fuzz");
  if (!reread.isOk())
    fail("the compiled plan does not read back", reread.status().toString());
  (void)::dlc::rt::cpu::planHostKernels(*plan);
  // A launch the CUDA generator cannot express is an error it reports.
  (void)::dlc::rt::cuda::generateDeviceKernels(*plan);
  return 0;
}
