//===- StatsTest.cpp - dlc-bench's bootstrap confidence intervals ---------===//

#include "Stats.h"

#include <gtest/gtest.h>

#include <vector>

using namespace dlc::bench;

namespace {

/// Seven repeats around 100 samples/s, and the same deviations `scale`
/// times as large.
std::vector<double> series(double scale) {
  std::vector<double> values;
  for (double deviation : {0.0, 2.0, -2.0, 1.0, -1.0, 3.0, -3.0})
    values.push_back(100 + scale * deviation);
  return values;
}

TEST(StatsTest, MedianOfOddAndEvenCounts) {
  EXPECT_DOUBLE_EQ(medianOf({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(medianOf({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(medianOf({}), 0);
}

// The fixed seed makes the interval a function of the repeats alone: these
// numbers are what every report shows for this series.
TEST(StatsTest, MedianIntervalOfASyntheticSeries) {
  Interval ci = bootstrapMedian(series(1));
  EXPECT_DOUBLE_EQ(ci.estimate, 100);
  EXPECT_DOUBLE_EQ(ci.low, 98);
  EXPECT_DOUBLE_EQ(ci.high, 102);
  EXPECT_DOUBLE_EQ(ci.level, 0.95);
  // Again: the same draws.
  Interval again = bootstrapMedian(series(1));
  EXPECT_EQ(again.low, ci.low);
  EXPECT_EQ(again.high, ci.high);
}

TEST(StatsTest, WiderSpreadGivesAWiderInterval) {
  double previous = 0;
  for (double scale : {0.5, 1.0, 2.0, 4.0}) {
    Interval ci = bootstrapMedian(series(scale));
    EXPECT_TRUE(ci.contains(100)) << "scale " << scale;
    EXPECT_GT(ci.width(), previous) << "scale " << scale;
    previous = ci.width();
  }
}

TEST(StatsTest, HigherLevelGivesAWiderInterval) {
  std::vector<double> values = {91, 104, 99, 96, 108, 101, 95, 103, 99, 100, 97};
  EXPECT_LT(bootstrapMedian(values, 0.5).width(), bootstrapMedian(values, 0.95).width());
}

TEST(StatsTest, OneRepeatIsAPoint) {
  Interval ci = bootstrapMedian({42});
  EXPECT_DOUBLE_EQ(ci.low, 42);
  EXPECT_DOUBLE_EQ(ci.high, 42);
}

TEST(StatsTest, RatioOfTheSameSeriesIsNoDifference) {
  Interval ratio = bootstrapRatio(series(1), series(1));
  EXPECT_DOUBLE_EQ(ratio.estimate, 1);
  EXPECT_TRUE(ratio.contains(1));
  EXPECT_EQ(verdictOf(ratio), Verdict::kNoDifference);
  EXPECT_EQ(verdictName(verdictOf(ratio)), "no significant difference");
}

TEST(StatsTest, RatioOfSeparateSeries) {
  std::vector<double> faster;
  for (double x : series(1))
    faster.push_back(1.5 * x);
  Interval ratio = bootstrapRatio(series(1), faster);
  EXPECT_DOUBLE_EQ(ratio.estimate, 1.5);
  // The resampled medians of the two series, at the interval's ends.
  EXPECT_DOUBLE_EQ(ratio.low, 1.5 * 98 / 101);
  EXPECT_DOUBLE_EQ(ratio.high, 1.5 * 101 / 98);
  EXPECT_EQ(verdictOf(ratio), Verdict::kFaster);
  EXPECT_EQ(verdictOf(bootstrapRatio(faster, series(1))), Verdict::kSlower);
}

// Overlapping series whose medians differ by less than their noise: the
// ratio's interval straddles 1, so no speed-up is called.
TEST(StatsTest, NoisyOverlapIsNoDifference) {
  std::vector<double> a = {100, 92, 108, 97, 104}, b = {103, 95, 111, 99, 106};
  Interval ratio = bootstrapRatio(a, b);
  EXPECT_GT(ratio.estimate, 1);
  EXPECT_EQ(verdictOf(ratio), Verdict::kNoDifference);
}

TEST(StatsTest, MethodologyNamesTheLevel) {
  EXPECT_EQ(levelName(0.95), "95%");
  EXPECT_EQ(levelName(0.9), "90%");
  EXPECT_NE(intervalMethod(0.95).find("95% confidence intervals: percentile bootstrap"),
            std::string::npos);
}

} // namespace
