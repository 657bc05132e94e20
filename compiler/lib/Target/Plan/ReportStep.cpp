//===- ReportStep.cpp - print what the training step lowers to ------------===//

#include "dlc/Target/Plan/Passes.h"
#include "dlc/Target/Plan/TrainToPlan.h"

#include "dlc/runtime/PlanSummary.h"

#include "llvm/Support/raw_ostream.h"

#define DEBUG_TYPE "dlc-report-step"

namespace mlir::dlc {
#define GEN_PASS_DEF_REPORTSTEPPASS
#include "dlc/Target/Plan/Passes.h.inc"
} // namespace mlir::dlc

using namespace mlir;

namespace {

struct ReportStepPass final
    : mlir::dlc::impl::ReportStepPassBase<ReportStepPass> {
  using Base::Base;

  void runOnOperation() override {
    mlir::dlc::PlanStats stats;
    FailureOr<::dlc::rt::Plan> plan =
        mlir::dlc::lowerToPlan(getOperation(), {"module"}, &stats);
    if (failed(plan))
      return signalPassFailure();
    ::dlc::rt::PlanSummary s = ::dlc::rt::summarizePlan(*plan);
    llvm::raw_ostream &os = llvm::outs();
    os << "// dlc-report-step: batch " << plan->batch << "\n"
       << "//   parameters:            " << s.parameters << "\n"
       << "//   forward MACs / sample: "
       << (plan->batch ? s.forwardMacs / plan->batch : 0) << "\n"
       << "//   training FLOPs / step: " << 2 * s.stepMacs << "\n"
       << "//   kernels / step:        " << s.launches << " (";
    llvm::interleaveComma(s.launchesByKind, os, [&](const auto &entry) {
      os << entry.first << " " << entry.second;
    });
    os << ")\n//   fused groups:          ";
    if (s.groupsByKind.empty())
      os << "none";
    llvm::interleaveComma(s.groupsByKind, os, [&](const auto &entry) {
      os << entry.first << " " << entry.second;
    });
    os << "\n//   bytes / step:          " << s.memoryBytes << "\n"
       << "//   arena:                 " << plan->arenaBytes << " bytes ("
       << stats.totalBufferBytes << " without reuse)\n";
    markAllAnalysesPreserved();
  }
};

} // namespace
