//===- Stats.cpp - confidence intervals of dlc-bench's figures ------------===//

#include "Stats.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace dlc::bench {

namespace {

/// SplitMix64: the same draws on every platform and standard library (the
/// <random> distributions are not specified bit for bit).
class Draws {
public:
  explicit Draws(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, n), by the multiply-shift mapping.
  size_t below(size_t n) {
    return static_cast<size_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
  }

private:
  uint64_t state_;
};

/// The median of a resample of `values` drawn with replacement.
double resampledMedian(const std::vector<double> &values, Draws &draws,
                       std::vector<double> &scratch) {
  scratch.resize(values.size());
  for (double &x : scratch)
    x = values[draws.below(values.size())];
  return medianOf(scratch);
}

/// The q-quantile of sorted `values`, interpolated between neighbours.
double quantile(const std::vector<double> &sorted, double q) {
  double at = q * static_cast<double>(sorted.size() - 1);
  size_t below = static_cast<size_t>(std::floor(at));
  size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (at - below) * (sorted[above] - sorted[below]);
}

/// The interval of `statistics` around `estimate` at `level`.
Interval percentileInterval(double estimate, std::vector<double> statistics, double level) {
  std::sort(statistics.begin(), statistics.end());
  Interval interval;
  interval.estimate = estimate;
  interval.level = level;
  interval.low = quantile(statistics, (1 - level) / 2);
  interval.high = quantile(statistics, (1 + level) / 2);
  return interval;
}

} // namespace

double medianOf(std::vector<double> values) {
  if (values.empty())
    return 0;
  size_t n = values.size();
  std::nth_element(values.begin(), values.begin() + n / 2, values.end());
  double upper = values[n / 2];
  if (n % 2)
    return upper;
  double lower = *std::max_element(values.begin(), values.begin() + n / 2);
  return (lower + upper) / 2;
}

Interval bootstrapMedian(const std::vector<double> &values, double level, uint64_t seed,
                         int resamples) {
  double median = medianOf(values);
  if (values.size() < 2)
    return {median, median, median, level};
  Draws draws(seed);
  std::vector<double> medians(resamples), scratch;
  for (double &m : medians)
    m = resampledMedian(values, draws, scratch);
  return percentileInterval(median, std::move(medians), level);
}

Interval bootstrapRatio(const std::vector<double> &before, const std::vector<double> &after,
                        double level, uint64_t seed, int resamples) {
  double base = medianOf(before);
  double ratio = base > 0 ? medianOf(after) / base : NAN;
  if (!(base > 0) || after.empty())
    return {ratio, ratio, ratio, level};
  Draws draws(seed);
  std::vector<double> ratios(resamples), scratch;
  for (double &r : ratios) {
    double a = resampledMedian(before, draws, scratch);
    r = resampledMedian(after, draws, scratch) / a;
  }
  return percentileInterval(ratio, std::move(ratios), level);
}

Verdict verdictOf(const Interval &ratio) {
  if (ratio.low > 1)
    return Verdict::kFaster;
  if (ratio.high < 1)
    return Verdict::kSlower;
  return Verdict::kNoDifference;
}

std::string verdictName(Verdict verdict) {
  switch (verdict) {
  case Verdict::kFaster:
    return "faster";
  case Verdict::kSlower:
    return "slower";
  case Verdict::kNoDifference:
    break;
  }
  return "no significant difference";
}

std::string levelName(double level) {
  std::ostringstream os;
  os << std::round(level * 1000) / 10 << "%";
  return os.str();
}

std::string intervalMethod(double level) {
  std::ostringstream os;
  os << levelName(level)
     << " confidence intervals: percentile bootstrap of the median over the repeats' "
        "samples/s ("
     << kBootstrapResamples << " resamples, seed " << kBootstrapSeed
     << "); a speed-up is called only where the bootstrap interval of its ratio of "
        "medians excludes 1, else n.s. (no significant difference)";
  return os.str();
}

} // namespace dlc::bench
