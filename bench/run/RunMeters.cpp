//===- RunMeters.cpp - what watches a timed run ---------------------------===//

#include "RunSteps.h"

#include "dlc/runtime/Collective.h"
#include "dlc/runtime/cuda/CudaExecutor.h"

#include <algorithm>
#include <iomanip>
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

namespace {
/// "45 s", "3 min 05 s", "2 h 05 min".
std::string durationText(double seconds) {
  auto whole = static_cast<int64_t>(seconds + 0.5);
  std::ostringstream os;
  os << std::setfill('0');
  if (whole < 60)
    os << whole << " s";
  else if (whole < 3600)
    os << whole / 60 << " min " << std::setw(2) << whole % 60 << " s";
  else
    os << whole / 3600 << " h " << std::setw(2) << (whole % 3600) / 60 << " min";
  return os.str();
}

} // namespace

Progress::Progress(const RunOptions &o)
    : enabled_(isatty(STDERR_FILENO) && rt::launchedRank() == 0), label_(o.progressLabel),
      repeats_(o.repeats), total_(o.repeats * (o.warmup + o.steps)),
      start_(std::chrono::steady_clock::now()), shown_(start_) {}

void Progress::finish() {
  if (enabled_ && done_)
    std::cerr << "\r\033[K" << std::flush;
  enabled_ = false;
}

void Progress::stepDone(int64_t repeat, bool warmup, int64_t step, int64_t steps) {
  if (!enabled_)
    return;
  ++done_;
  auto now = std::chrono::steady_clock::now();
  // The first step at once, the last, and in between four lines a second.
  if (now - shown_ < std::chrono::milliseconds(250) && done_ != 1 && done_ != total_)
    return;
  shown_ = now;
  double elapsed = std::chrono::duration<double>(now - start_).count();
  std::cerr << "\r\033[K" << label_ << "repeat " << repeat + 1 << "/" << repeats_ << ", "
            << (warmup ? "warm-up step " : "step ") << step + 1 << "/" << steps << ", "
            << durationText(elapsed / done_ * (total_ - done_)) << " left" << std::flush;
}

void OpProfile::kernelEnded(const std::string &op) {
  auto now = std::chrono::steady_clock::now();
  if (timing) {
    auto &entry = byOp[op];
    entry.first += std::chrono::duration<double>(now - lastMark).count();
    ++entry.second;
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

rt::Status printLaunchProfile(const rt::cuda::CudaExecutor &gpu) {
  auto ms = gpu.launchMsPerStep();
  if (!ms.isOk())
    return ms.status();
  const std::vector<rt::cuda::LaunchPath> &paths = gpu.launchPaths();
  std::map<std::string, std::pair<double, int64_t>> byKind;
  double total = 0;
  for (size_t i = 0; i < paths.size(); ++i) {
    // "launch #5 (elewise_act, group 2, ...)": the kind is the first word.
    const std::string &label = paths[i].label;
    size_t open = label.find('(') + 1;
    std::string kind = label.substr(open, label.find_first_of(",)", open) - open);
    auto &entry = byKind[kind + " [" + paths[i].path + "]"];
    entry.first += (*ms)[i];
    ++entry.second;
    total += (*ms)[i];
  }
  std::vector<std::pair<double, std::string>> rows;
  for (auto &[kind, entry] : byKind)
    rows.push_back({entry.first, kind});
  std::sort(rows.rbegin(), rows.rend());
  std::cerr << "device time by launch kind [path] over " << gpu.profiledSteps()
            << " profiled steps (CUDA events around each launch, no graph): " << std::fixed
            << std::setprecision(3) << total << " ms/step\n";
  for (auto &[value, kind] : rows)
    std::cerr << "  " << std::left << std::setw(44) << kind << std::right << std::setw(10)
              << std::setprecision(3) << value << " ms/step  " << std::setw(5)
              << std::setprecision(1) << (total > 0 ? 100 * value / total : 0.0) << "%  ("
              << byKind[kind].second << " launches)\n";
  std::vector<size_t> order(paths.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return (*ms)[a] > (*ms)[b]; });
  std::cerr << "slowest launches:\n";
  for (size_t i = 0; i < std::min<size_t>(10, order.size()); ++i)
    std::cerr << "  " << std::setw(9) << std::setprecision(3) << (*ms)[order[i]] << " ms  "
              << paths[order[i]].path << "  " << paths[order[i]].label << "\n";
  return rt::Status::ok();
}

} // namespace dlc::bench
