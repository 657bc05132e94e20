//===- DropoutTest.cpp - the dropout mask's integer keep test -------------===//
//
// dropoutKeeps (Dropout.h) decides with integers what it decided with a
// double, (h >> 11) * 2^-53 >= rate: the mask of every step, and so every
// checked figure, is unchanged. The generated and hand-written CUDA
// kernels spell the same threshold; CodegenTest and HandKernelsTest check
// their masks against these on the host.
//
//===----------------------------------------------------------------------===//

#include "dlc/runtime/Dropout.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

using namespace dlc::rt;

namespace {

constexpr uint64_t kTwo53 = uint64_t(1) << 53;

/// The decision as a double: the top 53 bits as a fraction against the rate.
bool keepsByFraction(uint64_t top53, double rate) {
  return static_cast<double>(top53) * (1.0 / 9007199254740992.0) >= rate;
}

TEST(Dropout, TheIntegerThresholdKeepsWhatTheFractionKept) {
  std::vector<double> rates = {0.0,
                               -0.5,
                               std::numeric_limits<double>::denorm_min(),
                               1e-300,
                               1.0 / 9007199254740992.0,
                               0.1,
                               std::nextafter(0.1, 0.0),
                               std::nextafter(0.1, 1.0),
                               0.25,
                               1.0 / 3.0,
                               0.5,
                               0.9,
                               1.0 - 1.0 / 9007199254740992.0,
                               1.0,
                               1.5,
                               std::numeric_limits<double>::infinity(),
                               std::numeric_limits<double>::quiet_NaN()};
  std::mt19937_64 rng(3);
  for (double rate : rates) {
    uint64_t threshold = dropoutThreshold(rate);
    ASSERT_LE(threshold, kTwo53) << rate;
    // Both sides of the threshold, the ends, and random draws.
    std::vector<uint64_t> xs = {0, 1, kTwo53 - 1};
    for (uint64_t d : {uint64_t(0), uint64_t(1), uint64_t(2)}) {
      if (threshold >= d && threshold - d < kTwo53)
        xs.push_back(threshold - d);
      if (threshold + d < kTwo53)
        xs.push_back(threshold + d);
    }
    for (int i = 0; i < 100000; ++i)
      xs.push_back(rng() >> 11);
    for (uint64_t x : xs)
      ASSERT_EQ(x >= threshold, keepsByFraction(x, rate))
          << "rate " << rate << " (threshold " << threshold << "), top bits " << x;
  }
  EXPECT_EQ(dropoutThreshold(0.0), 0u);
  EXPECT_EQ(dropoutThreshold(1.0), kTwo53);
  EXPECT_EQ(dropoutThreshold(std::numeric_limits<double>::quiet_NaN()), kTwo53);
  // 0.1 is not a multiple of 2^-53: the threshold rounds it up.
  EXPECT_EQ(dropoutThreshold(0.1), static_cast<uint64_t>(std::ceil(0.1 * 9007199254740992.0)));
}

TEST(Dropout, AStepsMaskIsTheFractionsMask) {
  uint64_t stream = dropoutStream(42, 7);
  int64_t kept = 0;
  for (uint64_t i = 0; i < 200000; ++i) {
    bool keeps = dropoutKeeps(stream, i, 0.1);
    ASSERT_EQ(keeps, keepsByFraction(dropoutMix(stream + i) >> 11, 0.1)) << "element " << i;
    kept += keeps;
  }
  // And it is a dropout of rate 0.1: 180,000 kept expected, sd about 134.
  EXPECT_NEAR(static_cast<double>(kept), 180000.0, 1000.0);
}

} // namespace
