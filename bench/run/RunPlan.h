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
#include <memory>
#include <string>

namespace dlc::bench {

class SweepProgress;

struct RunOptions {
  std::string backend = "cpu"; // cpu, reference or cuda (CpuBackend.h)
  int64_t warmup = 20, steps = 100, repeats = 5;
  uint64_t seed = 0;
  std::string paramsIn, inputsIn, dumpOut; // directories, "" for none
  /// --dump-relu: with dumpOut, each lone ReLU kernel's output of the last
  /// step too (DIR/relu/<k>.npy), so a checker reads which side of zero
  /// each value took (test/Import/import_step.py).
  bool dumpRelu = false;
  bool profile = false;
  /// --gpu: the GPU whose cost model --profile puts beside a CUDA run's
  /// measured launches (ProfileCheck.h); "" for none.
  std::string gpuName;
  /// --loss-every: the first repeat's loss every this many steps, warm-up
  /// and timed (Result::lossTrajectory); 0 for none.
  int64_t lossEvery = 0;
  bool noCudaGraph = false, tf32 = false; // --backend cuda
  /// --no-overlap: each all-reduce in its place, not alongside the rest of
  /// the backward pass.
  bool noOverlap = false;
  /// Whether a long run off the CUDA backend points at dlc-bench's
  /// --predict, with its prediction (announceRun).
  bool pointToPredict = false;
  /// Starts the progress line on a terminal ("[2/6] resnet50 amp xla: "),
  /// "" for none.
  std::string progressLabel;
  /// A sweep timed in rounds: its progress, which the steps report to
  /// instead of their own configuration's; null for none.
  SweepProgress *sweep = nullptr;
};

/// The plan's counts into `result` (parameters, MACs, kernels, bytes, fused
/// groups). The CUDA backend's figures (device launches, by path; decided
/// from the plan, no GPU needed) only where `gpuFigures` asks for them:
/// routing the plan for the GPU is no part of describing a CPU run.
void describePlan(const rt::Plan &plan, const std::string &backend, bool gpuFigures,
                  Result &result);

/// Runs the plan and fills `result`'s timings, losses and device facts. The
/// status's message is the whole error, ready to print.
rt::Status runPlan(const rt::Plan &plan, const RunOptions &o, Result &result);

/// A single-rank plan run one repeat at a time, so that a sweep can time
/// its configurations in rounds (ABCABC...): runPlan is start(), every
/// repeat, finish(). `plan`, `o` and `result` must outlive it.
class RepeatRun {
public:
  RepeatRun(const rt::Plan &plan, const RunOptions &o, Result &result);
  ~RepeatRun();
  /// Says what will run and readies the backend (the CPU backend's host
  /// kernels); the executor comes with the first repeat.
  rt::Status start();
  /// Repeat `repeat`: parameters and batch from the seed, warm-up, then the
  /// timed steps, into result.repeatResults.
  rt::Status runRepeat(int64_t repeat);
  /// Frees the executor and its memory until the next repeat, so that a
  /// sweep holds one configuration's at a time (kept under --profile on
  /// the CUDA backend, whose launch times live in the executor).
  void release();
  /// After the last repeat: the host's busy share, --profile's table,
  /// --dump-out's files.
  rt::Status finish();

private:
  struct State;
  rt::Status createExecutor();

  const rt::Plan &plan;
  const RunOptions &o;
  Result &result;
  std::unique_ptr<State> state;
};

} // namespace dlc::bench

#endif // DLC_BENCH_RUNPLAN_H
