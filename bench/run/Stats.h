//===- Stats.h - confidence intervals of dlc-bench's figures ----*- C++ -*-===//
//
// A repeat's samples/s is one draw from a noisy host: a median over 3-10 of
// them says little without an interval. These are percentile-bootstrap
// intervals (Efron & Tibshirani, ch. 13) of the median over the repeats and
// of the ratio of two medians, drawn with a fixed generator and seed, so that
// the same repeats always give the same report.
//
//===----------------------------------------------------------------------===//

#ifndef DLC_BENCH_STATS_H
#define DLC_BENCH_STATS_H

#include <cstdint>
#include <string>
#include <vector>

namespace dlc::bench {

/// The default confidence level of every interval a report gives.
constexpr double kConfidenceLevel = 0.95;
/// Resamples per interval: enough that the 2.5% and 97.5% quantiles move by
/// under a percent of the interval between seeds; cheap for a few repeats.
constexpr int kBootstrapResamples = 10000;
/// Fixed, so that a report's intervals are reproducible from its repeats.
constexpr uint64_t kBootstrapSeed = 20;

/// The median of `values` (the mean of the middle two for an even count).
double medianOf(std::vector<double> values);

/// A figure and its confidence interval at `level` (0.95: 95%).
struct Interval {
  double estimate = 0, low = 0, high = 0, level = kConfidenceLevel;
  double width() const { return high - low; }
  bool contains(double x) const { return low <= x && x <= high; }
};

/// The median of `values` and its percentile-bootstrap interval: the
/// medians of `resamples` resamples with replacement, their (1-level)/2 and
/// (1+level)/2 quantiles. One value gives a point; none, all zero.
Interval bootstrapMedian(const std::vector<double> &values, double level = kConfidenceLevel,
                         uint64_t seed = kBootstrapSeed,
                         int resamples = kBootstrapResamples);

/// median(after) / median(before) and its percentile-bootstrap interval,
/// each series resampled on its own (the repeats of two configurations are
/// independent draws).
Interval bootstrapRatio(const std::vector<double> &before, const std::vector<double> &after,
                        double level = kConfidenceLevel, uint64_t seed = kBootstrapSeed,
                        int resamples = kBootstrapResamples);

/// What two configurations' repeats say about their difference.
enum class Verdict { kFaster, kSlower, kNoDifference };

/// kFaster / kSlower only where the ratio's interval (after over before,
/// higher is faster) lies wholly above / below 1.
Verdict verdictOf(const Interval &ratio);

/// "faster", "slower" or "no significant difference".
std::string verdictName(Verdict verdict);

/// "95%": the level as a percentage.
std::string levelName(double level);

/// The methodology of every interval, for a report's footer: "95%
/// confidence intervals: percentile bootstrap of the median over the
/// repeats (10000 resamples, seed 20); ...".
std::string intervalMethod(double level);

} // namespace dlc::bench

#endif // DLC_BENCH_STATS_H
