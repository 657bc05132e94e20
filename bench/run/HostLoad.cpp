//===- HostLoad.cpp - what else the host ran during a repeat --------------===//

#include "HostLoad.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/resource.h>
#include <unistd.h>

namespace dlc::bench {

namespace {

/// An interval shorter than this many clock ticks over all CPUs (0.2 s of
/// one CPU at 100 Hz) says nothing: the counters move in whole ticks.
constexpr uint64_t kMinJiffies = 20;

/// /proc/stat's first line: busy and total clock ticks over every CPU.
bool readCpuTicks(uint64_t &busy, uint64_t &total) {
  std::ifstream stat("/proc/stat");
  std::string line, cpu;
  if (!std::getline(stat, line))
    return false;
  std::istringstream fields(line);
  fields >> cpu;
  if (cpu != "cpu")
    return false;
  // user nice system idle iowait irq softirq steal (guest time is in user).
  uint64_t value[8] = {};
  for (uint64_t &v : value)
    if (!(fields >> v))
      return false;
  total = 0;
  for (uint64_t v : value)
    total += v;
  busy = total - value[3] - value[4];
  return true;
}

double selfCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_utime.tv_sec + usage.ru_stime.tv_sec +
         1e-6 * (usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
}

} // namespace

void HostLoadMeter::start() {
  ok_ = readCpuTicks(busy_, total_);
  self_ = selfCpuSeconds();
}

double HostLoadMeter::stop() {
  uint64_t busy = 0, total = 0;
  if (!ok_ || !readCpuTicks(busy, total) || total - total_ < kMinJiffies)
    return -1;
  double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  double self = (selfCpuSeconds() - self_) * ticks;
  double others = static_cast<double>(busy - busy_) - self;
  return std::clamp(100 * others / static_cast<double>(total - total_), 0.0, 100.0);
}

bool hostLoadRange(const std::vector<double> &percents, double &min, double &max) {
  bool any = false;
  for (double p : percents) {
    if (p < 0)
      continue;
    min = any ? std::min(min, p) : p;
    max = any ? std::max(max, p) : p;
    any = true;
  }
  return any;
}

bool hostLoadVaried(const std::vector<double> &percents) {
  double min = 0, max = 0;
  return hostLoadRange(percents, min, max) && max - min > kHostLoadChangePoints;
}

} // namespace dlc::bench
