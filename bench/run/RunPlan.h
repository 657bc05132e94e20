//===- RunPlan.h - run a compiled plan and measure it ------------*- C++ -*-===//
//
// The part of dlc-bench that needs no MLIR: a plan's counts, and the timed
// run on the CPU or CUDA backend (repeats of initialize, warm-up, timed
// steps; --dump-out, --profile, NVML). dlc-bench calls it after compiling;
// dlc-run calls it on a .plan file, on machines without MLIR (the GPU
// machine).
//
//===----------------------------------------------------------------------===//

#ifndef DLC_BENCH_RUNPLAN_H
#define DLC_BENCH_RUNPLAN_H

#include "Report.h"

#include "dlc/runtime/Plan.h"

#include <cstdint>
#include <string>

namespace dlc::bench {

struct RunOptions {
  std::string backend = "cpu"; // cpu, reference or cuda (CpuBackend.h)
  int64_t warmup = 20, steps = 100, repeats = 5;
  uint64_t seed = 0;
  std::string paramsIn, inputsIn, dumpOut; // directories, "" for none
  bool profile = false;
  bool noCudaGraph = false, tf32 = false; // --backend cuda
  /// --no-overlap: each all-reduce in its place, not alongside the rest of
  /// the backward pass.
  bool noOverlap = false;
  /// Starts the progress line on a terminal ("[2/6] resnet50 amp xla: "),
  /// "" for none.
  std::string progressLabel;
};

/// The plan's counts into `result` (parameters, MACs, kernels, bytes, fused
/// groups), and for the CUDA backend its device launches by path (decided
/// from the plan; no GPU needed).
void describePlan(const rt::Plan &plan, const std::string &backend, Result &result);

/// Runs the plan and fills `result`'s timings, losses and device facts. The
/// status's message is the whole error, ready to print.
rt::Status runPlan(const rt::Plan &plan, const RunOptions &o, Result &result);

} // namespace dlc::bench

#endif // DLC_BENCH_RUNPLAN_H
