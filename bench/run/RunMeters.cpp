//===- RunMeters.cpp - what watches a timed run ---------------------------===//

#include "RunSteps.h"

#include "Predict.h"

#include "dlc/runtime/Collective.h"
#include "dlc/runtime/PlanSummary.h"
#include "dlc/runtime/cpu/Dnnl.h"
#include "dlc/runtime/cuda/CudaExecutor.h"

#include <algorithm>
#include <iomanip>
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <sys/resource.h>
#include <unistd.h>

namespace dlc::bench {

double processCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
         1e-6 * (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

std::string durationText(double seconds) {
  auto whole = static_cast<int64_t>(seconds + 0.5);
  std::ostringstream os;
  if (seconds < 9.95) {
    os << std::fixed << std::setprecision(1) << seconds << " s";
    return os.str();
  }
  os << std::setfill('0');
  if (whole < 60)
    os << whole << " s";
  else if (whole < 3600)
    os << whole / 60 << " min " << std::setw(2) << whole % 60 << " s";
  else
    os << whole / 3600 << " h " << std::setw(2) << (whole % 3600) / 60 << " min";
  return os.str();
}

/// DLC_PROGRESS_AFTER_SECONDS, else 2: the step time from which a pipe gets
/// what a run does and how far it is.
static double progressAfterSeconds() {
  const char *after = std::getenv("DLC_PROGRESS_AFTER_SECONDS");
  return after && *after ? std::atof(after) : 2.0;
}

double stepSecondsAtLeast(const rt::Plan &plan, const RunOptions &o, int64_t ranks) {
  if (o.backend != "cpu")
    return 0;
  double gflops = rt::cpu::dnnlGemmGflops();
  double flops = 2.0 * static_cast<double>(rt::summarizePlan(plan).stepMacs) * ranks;
  return gflops > 0 ? flops / (gflops * 1e9) : 0;
}

bool runShowsPhases(double stepSeconds) {
  return rt::launchedRank() == 0 &&
         (isatty(STDERR_FILENO) || stepSeconds >= progressAfterSeconds());
}

void announceRun(const rt::Plan &plan, const RunOptions &o, int64_t ranks) {
  if (rt::launchedRank() != 0)
    return;
  std::ostringstream what;
  what << "dlc: " << o.progressLabel << ranks << (ranks == 1 ? " rank" : " ranks") << " on the "
       << o.backend << " backend"
       << (ranks > 1 && o.backend != "cuda" ? " (threads sharing this machine's cores)" : "")
       << ", batch " << plan.batch << (ranks > 1 ? " each" : "") << "; " << o.warmup
       << " warm-up and " << o.repeats << " x " << o.steps << " timed steps";
  double step = stepSecondsAtLeast(plan, o, ranks);
  if (step > 0) {
    double gflops = rt::cpu::dnnlGemmGflops();
    double flops = 2.0 * static_cast<double>(rt::summarizePlan(plan).stepMacs) * ranks;
    what << "; a step at least " << durationText(step) << " (" << std::fixed
         << std::setprecision(flops >= 1e12 ? 2 : 1)
         << (flops >= 1e12 ? flops / 1e12 : flops / 1e9) << (flops >= 1e12 ? " TFLOP" : " GFLOP")
         << " at the " << std::setprecision(0) << gflops
         << " GFLOP/s of a oneDNN matrix product here), the run at least "
         << durationText(step * o.repeats * (o.warmup + o.steps));
  }
  if (!runShowsPhases(step))
    return;
  // A long CPU run, or one standing in for several GPUs: the GPU's answer
  // is seconds away.
  if (o.pointToPredict && o.backend != "cuda" &&
      (ranks > 1 || step >= progressAfterSeconds()))
    if (std::string hint = predictedStepHint(plan); !hint.empty())
      what << "; " << hint;
  // On a terminal, a sweep's progress line may be showing: clear it first.
  std::cerr << (isatty(STDERR_FILENO) ? "\r\033[K" : "") << what.str() << "\n" << std::flush;
}

void sayPhase(const RunOptions &o, double stepSeconds, const std::string &phase) {
  if (!runShowsPhases(stepSeconds))
    return;
  // A line of its own on a terminal too: an error before the first step
  // must not land on it.
  std::cerr << (isatty(STDERR_FILENO) ? "\r\033[K" : "") + ("dlc: " + o.progressLabel + phase) +
                   "\n"
            << std::flush;
}

Progress::Progress(const RunOptions &o, double stepSeconds)
    : sweep_(o.sweep), turnSteps_(o.warmup + o.steps), rankZero_(rt::launchedRank() == 0),
      terminal_(rankZero_ && isatty(STDERR_FILENO)),
      phases_(!terminal_ && runShowsPhases(stepSeconds)),
      label_(o.progressLabel), repeats_(o.repeats), total_(o.repeats * (o.warmup + o.steps)),
      start_(std::chrono::steady_clock::now()), shown_(start_) {}

void Progress::finish() {
  if (terminal_ && done_)
    std::cerr << "\r\033[K" << std::flush;
  terminal_ = rankZero_ = false;
}

void Progress::stepDone(int64_t repeat, bool warmup, int64_t step, int64_t steps) {
  if (!rankZero_)
    return;
  if (sweep_)
    return sweepStepDone(warmup, step, steps);
  ++done_;
  auto now = std::chrono::steady_clock::now();
  double elapsed = std::chrono::duration<double>(now - start_).count();
  double left = elapsed / done_ * (total_ - done_);
  if (!terminal_) {
    // A pipe: the long runs only, a line at the first step and every 30 s.
    if (done_ == 1) {
      if (elapsed < progressAfterSeconds() && !phases_) {
        rankZero_ = false; // a short run: nothing
        return;
      }
      phases_ = true;
      std::cerr << "dlc: " << label_ << "the first step took "
                << durationText(elapsed) << ", about " << durationText(left)
                << " to go\n" << std::flush;
      shown_ = now;
    } else if (now - shown_ >= std::chrono::seconds(30) && done_ != total_) {
      shown_ = now;
      std::cerr << "dlc: " << label_ << "repeat " << repeat + 1 << "/" << repeats_ << ", "
                << (warmup ? "warm-up step " : "step ") << step + 1 << "/" << steps << ", "
                << durationText(left) << " left\n" << std::flush;
    }
    return;
  }
  // The first step at once, the last, and in between four lines a second.
  if (now - shown_ < std::chrono::milliseconds(250) && done_ != 1 && done_ != total_)
    return;
  shown_ = now;
  std::cerr << "\r\033[K" << label_ << "repeat " << repeat + 1 << "/" << repeats_ << ", "
            << (warmup ? "warm-up step " : "step ") << step + 1 << "/" << steps << ", "
            << durationText(left) << " left" << std::flush;
}

void Progress::phase(int64_t repeat, bool warmup, int64_t steps) {
  // A sweep's rounds say each turn's end (SweepProgress); a terminal shows
  // the phase in its progress line.
  if (!rankZero_ || sweep_ || terminal_ || !phases_ || steps == 0)
    return;
  std::ostringstream os;
  os << "dlc: " << label_ << "repeat " << repeat + 1 << "/" << repeats_ << ", "
     << (warmup ? "warm-up" : "timed") << " steps 1-" << steps;
  if (done_ > 0) {
    double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    os << ", " << durationText(elapsed / done_ * (total_ - done_)) << " left";
  }
  std::cerr << os.str() + "\n" << std::flush;
}

void Progress::sweepStepDone(bool warmup, int64_t step, int64_t steps) {
  ++done_;
  double fraction = static_cast<double>(++turnDone_) / std::max<int64_t>(turnSteps_, 1);
  auto now = std::chrono::steady_clock::now();
  std::string where = std::string(warmup ? "warm-up step " : "step ") +
                      std::to_string(step + 1) + "/" + std::to_string(steps);
  if (!terminal_) {
    // A pipe: SweepProgress's line per turn, and every 30 s of a long one.
    if (now - shown_ >= std::chrono::seconds(30)) {
      shown_ = now;
      std::cerr << "dlc: " << sweep_->label() << where << sweep_->status(fraction) << "\n"
                << std::flush;
    }
    return;
  }
  if (now - shown_ < std::chrono::milliseconds(250) && turnDone_ != 1 &&
      turnDone_ != turnSteps_)
    return;
  shown_ = now;
  std::cerr << "\r\033[K" << sweep_->label() << where << sweep_->status(fraction)
            << std::flush;
}

void OpProfile::kernelEnded(size_t k, const std::string &op) {
  auto now = std::chrono::steady_clock::now();
  if (timing) {
    double seconds = std::chrono::duration<double>(now - lastMark).count();
    auto &entry = byOp[op];
    entry.first += seconds;
    ++entry.second;
    if (byKernel.size() <= k)
      byKernel.resize(k + 1);
    byKernel[k] += seconds;
  }
  lastMark = std::chrono::steady_clock::now();
}

void OpProfile::startTiming() {
  timing = true;
  lastMark = std::chrono::steady_clock::now();
}

void OpProfile::print(int64_t steps, const std::string &whose) const {
  std::vector<std::pair<double, std::string>> rows;
  double total = 0;
  for (auto &[op, entry] : byOp) {
    rows.push_back({entry.first, op});
    total += entry.first;
  }
  std::sort(rows.rbegin(), rows.rend());
  std::cerr << "time by kernel op" << whose << " over " << steps << " timed steps:\n";
  for (auto &[seconds, op] : rows)
    std::cerr << "  " << std::left << std::setw(34) << op << std::right << std::setw(10)
              << std::fixed << std::setprecision(3) << seconds * 1000 / steps
              << " ms/step  " << std::setw(5) << std::setprecision(1)
              << 100 * seconds / total << "%  (" << byOp.at(op).second / steps
              << " per step)\n";
}

rt::Status printLaunchProfile(const rt::cuda::CudaExecutor &gpu, const ModelFigures &model) {
  auto ms = gpu.launchMsPerStep();
  if (!ms.isOk())
    return ms.status();
  std::vector<std::string> labels, paths;
  for (const rt::cuda::LaunchPath &p : gpu.launchPaths()) {
    labels.push_back(p.label);
    paths.push_back(p.path);
  }
  writeLaunchProfile(std::cerr, labels, paths, *ms, gpu.profiledSteps(), model);
  return rt::Status::ok();
}

void printRefusedAtRunTime(const rt::cuda::CudaExecutor &gpu) {
  const std::vector<std::string> &refused = gpu.refusedAtRunTime();
  if (refused.empty())
    return;
  std::cerr << "cuda: " << refused.size() << (refused.size() == 1 ? " launch" : " launches")
            << " refused by their library at run time took the next path (first: "
            << refused.front() << ")\n";
}

ModelFigures modelFiguresFor(const rt::Plan &plan, const RunOptions &o) {
  ModelFigures model;
  if (rt::Status s = predictLaunches(plan, o.gpuName, o.tf32, model); !s.isOk()) {
    std::cerr << "cost model: not compared: " << s.message() << "\n";
    model = {};
  }
  return model;
}

} // namespace dlc::bench
