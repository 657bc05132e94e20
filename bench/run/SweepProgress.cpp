//===- SweepProgress.cpp - how far a whole sweep is -----------------------===//

#include "SweepProgress.h"

#include "RunSteps.h"

#include "dlc/runtime/Collective.h"

#include <iomanip>
#include <iostream>
#include <numeric>
#include <sstream>
#include <unistd.h>

namespace dlc::bench {

SweepProgress::SweepProgress(std::vector<std::string> names, int64_t repeats)
    : names_(std::move(names)), repeats_(repeats), seconds_(names_.size()),
      left_(names_.size(), repeats),
      terminal_(rt::launchedRank() == 0 && isatty(STDERR_FILENO)) {}

void SweepProgress::begin(size_t config, int64_t round) {
  config_ = config;
  round_ = round;
  turnStart_ = std::chrono::steady_clock::now();
}

std::string SweepProgress::label() const {
  return "round " + std::to_string(round_ + 1) + "/" + std::to_string(repeats_) + ", [" +
         std::to_string(config_ + 1) + "/" + std::to_string(names_.size()) + "] " +
         names_[config_] + ": ";
}

double SweepProgress::turnSeconds(size_t config, double unknown) const {
  const std::vector<double> &own = seconds_[config];
  if (!own.empty())
    return std::accumulate(own.begin(), own.end(), 0.0) / own.size();
  double sum = 0;
  size_t turns = 0;
  for (const std::vector<double> &s : seconds_) {
    sum += std::accumulate(s.begin(), s.end(), 0.0);
    turns += s.size();
  }
  return turns ? sum / turns : unknown;
}

double SweepProgress::secondsLeft(double fraction, bool running) const {
  // Before any turn ended, the running one's pace stands for every turn.
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - turnStart_)
                       .count();
  double projected = running && fraction > 0 ? elapsed / fraction : 0;
  double left = 0;
  for (size_t c = 0; c < names_.size(); ++c)
    left += turnSeconds(c, projected) * static_cast<double>(left_[c]);
  if (!running)
    return left;
  // The running turn is still counted in left_: count what it has left.
  double own = seconds_[config_].empty() ? projected : turnSeconds(config_, projected);
  return std::max(0.0, left - turnSeconds(config_, projected) + own * (1 - fraction));
}

std::string SweepProgress::status(double fraction, bool running) const {
  int64_t total = repeats_ * static_cast<int64_t>(names_.size()), left = 0;
  for (int64_t l : left_)
    left += l;
  double done = (static_cast<double>(total - left) + fraction) / total;
  std::ostringstream os;
  os << "; sweep " << std::fixed << std::setprecision(0) << 100 * done << "%";
  double seconds = secondsLeft(fraction, running);
  if (seconds > 0)
    os << ", about " << durationText(seconds) << " left";
  return os.str();
}

void SweepProgress::end(double samplesPerSec) {
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - turnStart_).count();
  seconds_[config_].push_back(seconds);
  --left_[config_];
  if (terminal_ || rt::launchedRank() != 0)
    return;
  std::ostringstream os;
  os << "dlc: " << label() << std::fixed << std::setprecision(1) << samplesPerSec
     << " samples/s" << status(0, /*running=*/false) << "\n";
  std::cerr << os.str() << std::flush;
}

void SweepProgress::drop(size_t config) { left_[config] = 0; }

} // namespace dlc::bench
