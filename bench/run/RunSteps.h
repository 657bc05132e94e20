//===- RunSteps.h - the steps a timed run is made of ------------*- C++ -*-===//
//
// What the one-process run (RunPlan.cpp) and the data-parallel one
// (RunRanks.cpp) share: the buffers a repeat starts from and a run writes
// out (RunBuffers.cpp), and what watches the timed steps (RunMeters.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef DLC_BENCH_RUNSTEPS_H
#define DLC_BENCH_RUNSTEPS_H

#include "ProfileCheck.h"
#include "RunPlan.h"
#include "SweepProgress.h"

#include "dlc/runtime/Executor.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace dlc::rt::cuda {
class CudaExecutor;
} // namespace dlc::rt::cuda

namespace dlc::bench {

/// A run's error, its message ready to print.
inline rt::Status failure(const std::string &text) {
  return rt::Status(rt::StatusCode::kInvalidArgument, text);
}

//===----------------------------------------------------------------------===//
// Buffers in and out (RunBuffers.cpp)
//===----------------------------------------------------------------------===//

/// What every repeat starts from: parameters from the seed (or
/// --params-in), and a batch drawn from `dataSeed` (or read from
/// `inputsDir`, "" for none).
rt::Status prepareRepeat(rt::Executor &exec, const RunOptions &o, uint64_t dataSeed,
                         const std::string &inputsDir);

/// The gradients --dump-out writes, captured as the step runs.
struct GradientCapture {
  /// Each parameter's last gradient, unscaled.
  std::map<std::string, std::vector<float>> byParam;
  /// Under mixed precision an update reads a float copy of a half gradient,
  /// which a fused launch may keep in registers (the CUDA backend's
  /// horizontal update group never writes it): the half gradient, widened
  /// when its cast runs, by the cast's output.
  std::map<int32_t, std::vector<float>> widened;
  std::set<int32_t> updateGradients; // the updates' gradient operands
  /// --dump-relu: each ReLU kernel's output as it ran, as float32 in the
  /// stored order, by kernel index; a ReLU inside a fused group (its output
  /// may stay in registers) is left out.
  bool relu = false;
  std::map<size_t, std::vector<float>> reluOutputs;
};

/// After kernel `k`: if it is an optimizer update, keeps the gradient it
/// read (unscaled with the status the update read, under loss scaling) as
/// its parameter's, for --dump-out; if it casts a half gradient to the
/// float one an update reads, keeps the half one; under --dump-relu, keeps
/// a lone ReLU's output.
void captureGradient(const rt::Executor &exec, size_t k, GradientCapture &capture);

/// --dump-out: every parameter and state, the loss (`loss`, the mean over
/// the ranks), and each parameter's last gradient, in the declared order;
/// under --dump-relu, DIR/relu/<k>.npy for every ReLU output captured.
rt::Status writeDump(const rt::Executor &exec, const GradientCapture &captured,
                     const std::string &dir, float loss);

//===----------------------------------------------------------------------===//
// Watching the timed steps (RunMeters.cpp)
//===----------------------------------------------------------------------===//

/// CPU seconds this process has used (every thread, user and system).
double processCpuSeconds();

/// "0.4 s", "45 s", "3 min 05 s", "2 h 05 min".
std::string durationText(double seconds);

/// The share of the host's hardware threads the timed steps kept busy,
/// accumulated over the repeats.
struct HostBusy {
  double cpuSeconds = 0, wallSeconds = 0;
  void add(double cpu, double wall) { cpuSeconds += cpu, wallSeconds += wall; }
  double percent() const {
    unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    return wallSeconds > 0 ? 100.0 * cpuSeconds / (wallSeconds * cores) : -1;
  }
};

/// At least how long a step of `plan` on `ranks` ranks takes on the fast CPU
/// backend: its FLOPs at the rate a oneDNN matrix product reaches here
/// (dnnlGemmGflops); 0 on other backends, or without that rate.
double stepSecondsAtLeast(const rt::Plan &plan, const RunOptions &o, int64_t ranks);

/// Whether a run whose step takes at least `stepSeconds` says its phases:
/// rank 0, on a terminal, or on a pipe when that reaches
/// DLC_PROGRESS_AFTER_SECONDS (default 2: tests and small models stay
/// quiet).
bool runShowsPhases(double stepSeconds);

/// Says on stderr what a run is about to do, before anything slow
/// (compiling host kernels, allocating the ranks' memory): the ranks, the
/// backend, the batch and the steps, and on the fast CPU backend at least
/// how long a step takes and the whole run (stepSecondsAtLeast). Off the
/// CUDA backend, for a long run or several ranks, it also points at
/// --predict (RunOptions::pointToPredict), with the step it predicts on
/// kDefaultPredictGpu (predictedStepHint). Only when runShowsPhases.
void announceRun(const rt::Plan &plan, const RunOptions &o, int64_t ranks);

/// One line saying the run enters `phase` ("compiling the host kernels"),
/// when runShowsPhases.
void sayPhase(const RunOptions &o, double stepSeconds, const std::string &phase);

/// What a run is about to do, and how far it is: rank 0 only.
///   - On a terminal: one line rewritten in place as the steps run (the
///     repeat, warm-up or timed step, the time left at the pace so far).
///   - On a pipe or a log: nothing for a run whose first step takes under
///     DLC_PROGRESS_AFTER_SECONDS (default 2: tests, small models) and
///     whose estimate (stepSecondsAtLeast) does too; for a longer one, a
///     line as each repeat's warm-up and timed steps start (phase), the
///     first step's time and the run's estimate, then a line every 30
///     seconds.
/// The CPU backend can take hours over a large model; the estimate is how
/// its user knows to shorten the run.
class Progress {
public:
  /// `stepSeconds`: stepSecondsAtLeast, which decides whether a pipe is
  /// told the phases before the first step ends.
  Progress(const RunOptions &o, double stepSeconds);
  ~Progress() { finish(); }
  /// Clears the line, before the report or an error is printed.
  void finish();
  /// After step `step` (0-based) of `steps` of repeat `repeat`'s warm-up or
  /// timed loop.
  void stepDone(int64_t repeat, bool warmup, int64_t step, int64_t steps);
  /// A repeat starts: in a sweep's rounds, the turn's steps count from 0.
  void beginRepeat() { turnDone_ = 0; }
  /// Repeat `repeat`'s `steps` warm-up or timed steps start: a line on a
  /// pipe, for a long run.
  void phase(int64_t repeat, bool warmup, int64_t steps);

private:
  /// stepDone in a sweep's rounds: the turn and the whole sweep's progress.
  void sweepStepDone(bool warmup, int64_t step, int64_t steps);

  SweepProgress *sweep_;
  int64_t turnSteps_, turnDone_ = 0;
  bool rankZero_, terminal_;
  bool phases_; // a pipe that is told each phase
  std::string label_;
  int64_t repeats_, total_, done_ = 0;
  std::chrono::steady_clock::time_point start_, shown_;
};

/// --profile on the CPU backend: seconds and calls by op, between
/// consecutive kernel ends of the timed steps (the executor's observer).
struct OpProfile {
  std::map<std::string, std::pair<double, int64_t>> byOp;
  /// Seconds by plan kernel, for the report's per-launch profile.
  std::vector<double> byKernel;
  bool timing = false;
  std::chrono::steady_clock::time_point lastMark = std::chrono::steady_clock::now();

  /// Plan kernel `k`, an `op`, ended.
  void kernelEnded(size_t k, const std::string &op);
  void startTiming();
  /// The table, slowest op first, per step of `steps` timed steps.
  void print(int64_t steps, const std::string &whose) const;
};

/// --profile on the CUDA backend: device milliseconds per step by launch
/// kind and path, slowest first, then the ten slowest launches.
rt::Status printLaunchProfile(const rt::cuda::CudaExecutor &gpu, const ModelFigures &model);
/// One line on stderr when a library refused launches the plan routed to it
/// (they run on their fallback paths): how many, and the first with why.
void printRefusedAtRunTime(const rt::cuda::CudaExecutor &gpu);

/// The cost model's figures for the plan a --profile run ran (none without
/// --gpu; a calibration it cannot read: a warning, and none).
ModelFigures modelFiguresFor(const rt::Plan &plan, const RunOptions &o);

//===----------------------------------------------------------------------===//
// Data-parallel ranks (RunRanks.cpp)
//===----------------------------------------------------------------------===//

/// mpirun started `launched` processes for a plan of `ranks` ranks.
std::string processCountMessage(int launched, int64_t ranks);

/// A plan compiled for `ranks` data-parallel ranks, run and timed as one
/// (RunRanks.cpp says how).
rt::Status runDataParallel(const rt::Plan &plan, const RunOptions &o, Result &result,
                           int ranks);

} // namespace dlc::bench

#endif // DLC_BENCH_RUNSTEPS_H
